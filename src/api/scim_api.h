// /scim/v2: the SCIM 2.0 service provider.
// Built by ApiService with only the services below.
#pragma once

#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "service/scim_service.h"

namespace causeway::api {

class ScimApi final : public Area {
 public:
  ScimApi(ScimService& scim)
      : scim_(scim) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  // A SCIM route: `handler` answers with the resource (or nothing), every
  // failure in SCIM's error body; `success` picks the status per request.
  void ScimRoute(RouteTable& routes, const char* method, const char* pattern,
                 std::function<Result<nlohmann::json>(HttpRequest&, const std::string& base)> handler,
                 std::function<int(const HttpRequest&)> success);
  void ScimRoute(RouteTable& routes, const char* method, const char* pattern,
                 std::function<Result<nlohmann::json>(HttpRequest&, const std::string& base)> handler,
                 int success_status = 200);

  ScimService& scim_;
};

}  // namespace causeway::api
