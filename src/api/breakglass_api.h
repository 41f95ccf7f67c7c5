// /v1/breakglass/...: time-boxed elevation, requested, approved, revoked.
// Built by ApiService with only the services below.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "causeway/clock.h"
#include "service/breakglass_service.h"

namespace causeway::api {

class BreakglassApi final : public Area {
 public:
  BreakglassApi(const Clock& wall, BreakglassService& breakglass)
      : wall_(wall), breakglass_(breakglass) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  // Break-glass.
  Result<HttpResponse> RequestBreakglass(HttpRequest& req);
  Result<HttpResponse> ListBreakglass(HttpRequest& req);
  Result<HttpResponse> ApproveBreakglass(HttpRequest& req);
  Result<HttpResponse> RevokeBreakglass(HttpRequest& req);
  Result<HttpResponse> BreakglassCredential(HttpRequest& req);

  const Clock& wall_;
  BreakglassService& breakglass_;
};

}  // namespace causeway::api
