// Workload identity: OIDC discovery, JWKS, job tokens, key rotation.
// Built by ApiService with only the services below.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "causeway/clock.h"
#include "service/job_service.h"
#include "service/workload_service.h"

namespace causeway::api {

class WorkloadApi final : public Area {
 public:
  WorkloadApi(const Clock& wall, WorkloadService& workload, JobService& jobs)
      : wall_(wall), workload_(workload), jobs_(jobs) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  // Workload identity.
  Result<HttpResponse> OidcDiscovery(HttpRequest& req);
  Result<HttpResponse> Jwks(HttpRequest& req);
  Result<HttpResponse> RefreshWorkloadToken(HttpRequest& req);
  Result<HttpResponse> RotateSigningKeys(HttpRequest& req);
  Result<HttpResponse> ReviewAccess(HttpRequest& req);

  const Clock& wall_;
  WorkloadService& workload_;
  JobService& jobs_;
};

}  // namespace causeway::api
