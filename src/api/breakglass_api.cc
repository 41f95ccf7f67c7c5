// /v1/breakglass/...: time-boxed emergency access, asked for by anyone
// signed in, approved and revoked as the service decides, listed for auditors.

#include "api/api_helpers.h"
#include "api/breakglass_api.h"
#include "store/records_json.h"

namespace causeway::api {

using nlohmann::json;

void BreakglassApi::AddRoutes(RouteTable& routes) {
  using namespace identity;
  // Break-glass: anyone signed in may ask; approval and revocation are
  // checked by the service; the list is for auditors.
  routes.Route("POST", "/v1/breakglass", "", Bind(this, &BreakglassApi::RequestBreakglass));
  routes.Route("GET", "/v1/breakglass", kScopeAuditRead, Bind(this, &BreakglassApi::ListBreakglass));
  routes.Route("POST", "/v1/breakglass/{id}/approve", "", Bind(this, &BreakglassApi::ApproveBreakglass));
  routes.Route("POST", "/v1/breakglass/{id}/revoke", "", Bind(this, &BreakglassApi::RevokeBreakglass));
  routes.Route("POST", "/v1/breakglass/{id}/credential", "", Bind(this, &BreakglassApi::BreakglassCredential));
}

Result<HttpResponse> BreakglassApi::RequestBreakglass(HttpRequest& req) {
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return body.status();
  auto issued = [&]() -> Result<BreakglassService::Issued> {
    ASSIGN_OR_RETURN(std::string role, body->String("role"));  // the service says which roles are offered
    ASSIGN_OR_RETURN(std::string team, body->String("team"));
    ASSIGN_OR_RETURN(std::string reason, body->String("reason"));
    ASSIGN_OR_RETURN(std::string duration_text, body->String("duration", "1h"));
    auto duration = ParseDuration(duration_text);
    if (!duration.ok()) return duration.status().WithPrefix("field \"duration\"");
    return breakglass_.Request(*req.principal, role, team, reason, *duration);
  }();
  if (!issued.ok()) return issued.status();
  json out = {{"breakglass", DetailsOf(issued->grant)}};
  out["breakglass"]["state"] = StateOf(issued->grant, wall_.Now());
  if (issued->credential) {
    out["credential"] = {{"token", ToJson(issued->credential->record)}, {"secret", issued->credential->secret}};
  }
  return JsonResponse(201, out);
}

Result<HttpResponse> BreakglassApi::BreakglassCredential(HttpRequest& req) {
  auto minted = breakglass_.IssueCredential(*req.principal, req.params["id"]);
  if (!minted.ok()) return minted.status();
  return JsonResponse(201, {{"token", ToJson(minted->record)}, {"secret", minted->secret}});
}

Result<HttpResponse> BreakglassApi::ListBreakglass(HttpRequest& req) {
  auto list = breakglass_.List();
  if (!list.ok()) return list.status();
  auto created = breakglass_.Created(*list);
  if (!created.ok()) return created.status();
  json items = json::array();
  const Timestamp now = wall_.Now();
  for (const auto& b : *list) {
    json j = DetailsOf(b);
    j["state"] = StateOf(b, now);
    j["can_approve"] = MayApprove(*req.principal, b, now);
    const GrantArtifacts& made = (*created)[b.id];
    json bindings = json::array();
    for (const GrantArtifacts::Binding& d : made.bindings) {
      bindings.push_back({{"id", d.id}, {"group", d.group}, {"role", d.role}, {"team", d.team}, {"confirmed", d.confirmed}});
    }
    j["created"] = {{"tokens", made.tokens}, {"bindings", bindings}, {"links", made.links}};
    items.push_back(std::move(j));
  }
  return JsonResponse(200, {{"breakglass", items}});
}

Result<HttpResponse> BreakglassApi::ApproveBreakglass(HttpRequest& req) {
  auto grant = breakglass_.Approve(*req.principal, req.params["id"]);
  if (!grant.ok()) return grant.status();
  json j = DetailsOf(*grant);
  j["state"] = StateOf(*grant, wall_.Now());
  return JsonResponse(200, {{"breakglass", j}});
}

Result<HttpResponse> BreakglassApi::RevokeBreakglass(HttpRequest& req) {
  auto grant = breakglass_.Revoke(*req.principal, req.params["id"]);
  if (!grant.ok()) return grant.status();
  json j = DetailsOf(*grant);
  j["state"] = StateOf(*grant, wall_.Now());
  return JsonResponse(200, {{"breakglass", j}});
}

}  // namespace causeway::api
