// /v1/tokens, /v1/whoami and /v1/access/...: API tokens, who the caller
// is, group-to-role bindings and why someone may or may not act.

#include "api/api_helpers.h"
#include "api/access_api.h"
#include "service/reports_json.h"
#include "identity/access.h"
#include "identity/oidc.h"
#include "store/records_json.h"

namespace causeway::api {

using nlohmann::json;

namespace {
json BindingJson(const identity::Binding& b) {
  json j = {{"group", b.group}, {"role", b.role}, {"team", b.team.empty() ? json() : json(b.team)}, {"source", b.source}};
  if (!b.breakglass.empty()) {
    j["breakglass"] = b.breakglass;
    j["confirmed"] = b.confirmed;
  }
  return j;
}
}  // namespace

void AccessApi::AddRoutes(RouteTable& routes) {
  using namespace identity;
  routes.Route("GET", "/v1/whoami", "", Bind(this, &AccessApi::WhoAmI));
  routes.Route("POST", "/v1/tokens", kScopeAdmin, Bind(this, &AccessApi::CreateToken));
  routes.Route("GET", "/v1/tokens", kScopeAdmin, Bind(this, &AccessApi::ListTokens));
  routes.Route("POST", "/v1/tokens/{id}/revoke", kScopeAdmin, Bind(this, &AccessApi::RevokeToken));
  routes.Route("POST", "/v1/tokens/{id}/rotate", kScopeAdmin, Bind(this, &AccessApi::RotateToken));
  routes.Route("POST", "/v1/tokens/{id}/reassign", kScopeAdmin, Bind(this, &AccessApi::ReassignToken));
  routes.Route("GET", "/v1/access/explain", kScopeAuditRead, Bind(this, &AccessApi::ExplainAccess));
  routes.Route("GET", "/v1/access/bindings", kScopeAuditRead, Bind(this, &AccessApi::ListBindings));
  routes.Route("POST", "/v1/access/bindings", kScopeAdmin, Bind(this, &AccessApi::CreateBinding));
  routes.Route("DELETE", "/v1/access/bindings/{id}", kScopeAdmin, Bind(this, &AccessApi::DeleteBinding));
  routes.Route("POST", "/v1/access/bindings/{id}/confirm", kScopeAdmin, Bind(this, &AccessApi::ConfirmBinding));
}

Result<HttpResponse> AccessApi::CreateToken(HttpRequest& req) {
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return body.status();
  auto minted = [&]() -> Result<identity::MintedToken> {
    ASSIGN_OR_RETURN(std::string name, body->String("name"));
    ASSIGN_OR_RETURN(std::vector<std::string> scopes, body->Strings("scopes"));
    ASSIGN_OR_RETURN(std::string ttl_text, body->String("ttl"));
    ASSIGN_OR_RETURN(std::string user, body->String("user"));
    Micros ttl{0};
    if (!ttl_text.empty()) {
      auto parsed = ParseDuration(ttl_text);
      if (!parsed.ok()) return parsed.status().WithPrefix("field \"ttl\"");
      ttl = *parsed;
    }
    return tokens_.Create(*req.principal, name, scopes, ttl, user);
  }();
  if (!minted.ok()) return minted.status();
  return JsonResponse(201, {{"token", ToJson(minted->record)}, {"secret", minted->secret}});
}

Result<HttpResponse> AccessApi::ListTokens(HttpRequest&) {
  auto tokens = tokens_.List();
  if (!tokens.ok()) return tokens.status();
  json items = json::array();
  for (const auto& t : *tokens) items.push_back(ToJson(t));
  return JsonResponse(200, {{"tokens", items}});
}

Result<HttpResponse> AccessApi::RevokeToken(HttpRequest& req) {
  auto revoked = tokens_.Revoke(*req.principal, req.params["id"]);
  if (!revoked.ok()) return revoked.status();
  token_cache_.Forget(revoked->id);
  return JsonResponse(200, {{"token", ToJson(*revoked)}});
}

Result<HttpResponse> AccessApi::RotateToken(HttpRequest& req) {
  auto minted = tokens_.Rotate(*req.principal, req.params["id"]);
  if (!minted.ok()) return minted.status();
  token_cache_.Forget(req.params["id"]);
  return JsonResponse(201, {{"token", ToJson(minted->record)}, {"secret", minted->secret}, {"revoked", req.params["id"]}});
}

Result<HttpResponse> AccessApi::ReassignToken(HttpRequest& req) {
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return body.status();
  auto to = body->RequiredString("to", "the userName of the person who answers for the token from now on");
  if (!to.ok()) return to.status();
  auto token = tokens_.Reassign(*req.principal, req.params["id"], *to);
  if (!token.ok()) return token.status();
  return JsonResponse(200, {{"token", ToJson(*token)}});
}

Result<HttpResponse> AccessApi::WhoAmI(HttpRequest& req) {
  const auto& p = *req.principal;
  json out = {{"token_id", p.token_id}, {"name", p.name}, {"scopes", p.scopes}};
  if (p.IsPerson()) {
    out["user"] = p.user;
    out["user_id"] = p.user_id;
    out["groups"] = p.groups;
    out["grants"] = GrantsJson(p.grants);
  }
  return JsonResponse(200, out);
}

// GET /v1/access/explain?user=U&action=A&team=T: the bindings that allow
// or deny; the user's groups come from the directory, or from groups=a,b.
Result<HttpResponse> AccessApi::ExplainAccess(HttpRequest& req) {
  std::string user = req.Query("user"), action = req.Query("action");
  if (user.empty() || action.empty()) {
    return InvalidArgument("user and action are required, e.g. user=alice@corp.example&action=submit&team=nlp");
  }
  auto person = identity::ReadPerson(store_, user);
  if (!person.ok()) return person.status();
  bool provisioned = person->has_value();
  bool active = !provisioned || (*person)->user.active;
  std::vector<std::string> groups = provisioned ? (*person)->groups : std::vector<std::string>{};
  if (!provisioned) {
    std::string given = req.Query("groups");
    for (size_t start = 0; start < given.size();) {
      size_t comma = given.find(',', start);
      if (comma == std::string::npos) comma = given.size();
      if (comma > start) groups.push_back(given.substr(start, comma - start));
      start = comma + 1;
    }
  }
  auto explained = identity::Explain(bindings_.Current(), groups, action, req.Query("team"));
  if (!explained.ok()) return explained.status();
  json reasons = json::array();
  for (const auto& r : explained->reasons) {
    reasons.push_back({{"source", r.source}, {"group", r.group}, {"role", r.role},
                       {"team", r.team.empty() ? json() : json(r.team)}, {"member", r.member},
                       {"confers", r.confers}, {"in_scope", r.in_scope}, {"allows", r.allows()}});
  }
  bool allowed = explained->allowed && active;
  std::string why = !active ? user + " is deactivated in the directory"
                    : allowed ? "allowed by the bindings marked allows"
                              : "no binding allows it: nothing is granted but through a group";
  return JsonResponse(200, {{"user", user}, {"provisioned", provisioned}, {"active", active}, {"groups", groups},
                           {"action", action}, {"scope", explained->scope},
                           {"team", req.Query("team").empty() ? json() : json(req.Query("team"))},
                           {"allowed", allowed}, {"why", why}, {"bindings", reasons}});
}

Result<HttpResponse> AccessApi::ListBindings(HttpRequest&) {
  json items = json::array();
  for (const auto& b : bindings_.All()) items.push_back(BindingJson(b));
  return JsonResponse(200, {{"bindings", items}});
}

Result<HttpResponse> AccessApi::CreateBinding(HttpRequest& req) {
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return body.status();
  auto made = [&]() -> Result<identity::Binding> {
    ASSIGN_OR_RETURN(std::string group, body->String("group"));
    ASSIGN_OR_RETURN(std::string role, body->String("role"));
    ASSIGN_OR_RETURN(std::string team, body->String("team"));
    return bindings_.Create(group, role, team, *req.principal);
  }();
  if (!made.ok()) return made.status();
  // The group's members' provider accounts follow their new role.
  json synced = json::array();
  if (auto r = people_svc_.SyncGroup(made->group, req.principal->token_id); r.ok()) synced = ToJson(*r);
  return JsonResponse(201, {{"binding", BindingJson(*made)}, {"synced", synced}});
}

Result<HttpResponse> AccessApi::ConfirmBinding(HttpRequest& req) {
  auto confirmed = bindings_.Confirm(req.params["id"], *req.principal);
  if (!confirmed.ok()) return confirmed.status();
  return JsonResponse(200, {{"binding", BindingJson(*confirmed)}});
}

Result<HttpResponse> AccessApi::DeleteBinding(HttpRequest& req) {
  auto gone = bindings_.Delete(req.params["id"], req.principal->token_id);
  if (!gone.ok()) return gone.status();
  json synced = json::array();
  if (auto r = people_svc_.SyncGroup(gone->group, req.principal->token_id); r.ok()) synced = ToJson(*r);
  return JsonResponse(200, {{"deleted", BindingJson(*gone)}, {"synced", synced}});
}

}  // namespace causeway::api
