// /v1/people/...: a person's credentials, sync and deactivation.
// Built by ApiService with only the services below.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "service/people_service.h"
#include "service/scim_service.h"

namespace causeway::api {

class PeopleApi final : public Area {
 public:
  PeopleApi(ScimService& scim, PeopleService& people_svc)
      : scim_(scim), people_svc_(people_svc) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  // People.
  Result<HttpResponse> Credentials(HttpRequest& req);
  Result<HttpResponse> JobCredentials(HttpRequest& req);
  Result<HttpResponse> SyncPerson(HttpRequest& req);
  Result<HttpResponse> DeactivatePerson(HttpRequest& req);

  ScimService& scim_;
  PeopleService& people_svc_;
};

}  // namespace causeway::api
