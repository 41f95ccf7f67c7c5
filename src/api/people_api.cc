// /v1/people/...: every credential one person has, carrying the directory
// through to providers, and the API's own way to cut someone off.
#include "api/api_helpers.h"
#include "api/people_api.h"
#include "service/reports_json.h"

namespace causeway::api {

using nlohmann::json;

void PeopleApi::AddRoutes(RouteTable& routes) {
  using namespace identity;
  routes.Route("GET", "/v1/people/{user}/credentials", kScopeAuditRead, Bind(this, &PeopleApi::Credentials));
  routes.Route("GET", "/v1/jobs/{id}/credentials", kScopeAuditRead, Bind(this, &PeopleApi::JobCredentials));
  routes.Route("POST", "/v1/people/{user}/sync", kScopeAdmin, Bind(this, &PeopleApi::SyncPerson));
  routes.Route("POST", "/v1/people/{user}/deactivate", kScopeAdmin, Bind(this, &PeopleApi::DeactivatePerson));
}

Result<HttpResponse> PeopleApi::Credentials(HttpRequest& req) {
  auto report = people_svc_.Credentials(req.params["user"]);
  if (!report.ok()) return report.status();
  return JsonResponse(200, ToJson(*report));
}

// One job's: what its attempts hold that a cloud or store still accepts.
Result<HttpResponse> PeopleApi::JobCredentials(HttpRequest& req) {
  auto report = people_svc_.JobCredentials(req.params["id"]);
  if (!report.ok()) return report.status();
  json out = ToJson(*report);
  out.erase("directory");
  out.erase("provider_accounts");
  out["job"] = req.params["id"];
  return JsonResponse(200, out);
}

Result<HttpResponse> PeopleApi::SyncPerson(HttpRequest& req) {
  auto report = people_svc_.Sync(req.params["user"], req.principal->token_id);
  if (!report.ok()) return report.status();
  return JsonResponse(200, ToJson(*report));
}

// Deactivates the person in the directory (as the IdP's SCIM client would)
// and reports the deprovisioning that follows.
Result<HttpResponse> PeopleApi::DeactivatePerson(HttpRequest& req) {
  const std::string user = req.params["user"];
  // Carried through here, not by the directory's hook: the report is this
  // request's answer.
  RETURN_IF_ERROR(scim_.Deactivate(user, ScimCaller{req.principal->token_id, "", false}));
  ASSIGN_OR_RETURN(SyncReport report, people_svc_.Sync(user, req.principal->token_id));
  return JsonResponse(200, ToJson(report));
}

}  // namespace causeway::api
