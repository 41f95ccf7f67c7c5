// /v1/services/...: services run by the server (docs/services.md). Replicas
// are jobs, so the jobs' scopes govern: reading needs jobs:read for the
// service's team, bringing one up jobs:write (as submitting its replicas
// would), taking one down jobs:write for one's own or jobs:manage.
// Built by ApiService with only the service below (set by the server before
// it takes requests; null: this server runs no services, and every route
// answers 503).
#pragma once

#include <memory>

#include "api/area.h"
#include "service/serving_service.h"

namespace causeway::api {

class ServicesApi final : public Area {
 public:
  explicit ServicesApi(const std::unique_ptr<ServingService>& serving) : serving_(serving) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  Result<HttpResponse> Up(HttpRequest& req);
  Result<HttpResponse> List(HttpRequest& req);
  Result<HttpResponse> Show(HttpRequest& req);
  Result<HttpResponse> Update(HttpRequest& req);
  Result<HttpResponse> Down(HttpRequest& req);
  Status Running() const;

  const std::unique_ptr<ServingService>& serving_;
};

}  // namespace causeway::api
