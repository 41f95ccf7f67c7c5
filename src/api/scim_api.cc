// The /scim/v2 routes (ScimApi): the SCIM 2.0 service provider that
// Okta and Microsoft Entra provision users and groups through. Every route
// needs a token with the scim:provision scope (a provisioning-only token);
// every failure, authentication included, has a SCIM error body.
#include <charconv>
#include "causeway/json_input.h"

#include "api/api_service.h"
#include "api/scim_api.h"
#include "identity/scim/scim_schema.h"

namespace causeway::api {

using nlohmann::json;
namespace scim = identity::scim;

namespace {

constexpr const char* kScimContentType = "application/scim+json";

HttpResponse ScimResponse(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.content_type = kScimContentType;
  if (!body.is_null()) r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

// Where resources are located, for meta.location: the address the client
// used, through a proxy that says it terminated TLS.
std::string BaseUrl(const HttpRequest& req) {
  std::string host = req.Header("host");
  for (char c : host) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']')) {
      host.clear();
      break;
    }
  }
  if (host.empty()) return "/scim/v2";
  return (req.Header("x-forwarded-proto") == "https" ? "https://" : "http://") + host + "/scim/v2";
}

Result<json> ScimBody(const HttpRequest& req) {
  if (req.body.empty()) return scim::Error(Code::kInvalidArgument, "invalidSyntax", "the request body is empty");
  auto parsed = ParseUntrustedJson(req.body, "request body");
  if (!parsed.ok()) return scim::Error(Code::kInvalidArgument, "invalidSyntax", parsed.status().message());
  json j = std::move(*parsed);
  if (!j.is_object()) return scim::Error(Code::kInvalidArgument, "invalidSyntax", "the request body must be a JSON object");
  return j;
}

Result<ScimListQuery> ListQueryOf(const HttpRequest& req) {
  ScimListQuery q;
  q.filter = req.Query("filter");
  q.attributes = req.Query("attributes");
  q.excluded_attributes = req.Query("excludedAttributes");
  for (auto [name, into] : {std::pair<const char*, int64_t*>{"startIndex", &q.start_index}, {"count", &q.count}}) {
    std::string v = req.Query(name);
    if (v.empty()) continue;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), *into);
    if (ec != std::errc() || ptr != v.data() + v.size()) {
      return scim::Error(Code::kInvalidArgument, "invalidValue", std::string(name) + " must be an integer, not \"" + v + "\"");
    }
  }
  return q;
}

}  // namespace

HttpResponse ScimErrorResponse(const Status& st) {
  HttpResponse r = ScimResponse(scim::HttpStatusOf(st), scim::ErrorBody(st));
  if (st.code() == Code::kUnauthenticated) r.headers.emplace_back("WWW-Authenticate", "Bearer");
  if (IsRetryable(st.code())) r.headers.emplace_back("Retry-After", "1");
  return r;
}

// The shell's answer to a SCIM path no route matches (ApiService::Dispatch).
void ApiService::ScimUnrouted(HttpRequest& req, const Router::Match& match, Reply reply) {
  // Authenticated first, like every SCIM route: an unknown caller learns
  // nothing about which paths exist.
  auto principal = Authorize(req, std::string(identity::kScopeScimProvision), false);
  if (!principal.ok()) return reply(ScimErrorResponse(principal.status()));
  if (match.outcome == Router::Outcome::kMethodNotAllowed) {
    // RFC 7644 §3.12: an error in SCIM's own body; 405 exists only at the HTTP layer.
    HttpResponse r = ScimResponse(405, {{"schemas", {"urn:ietf:params:scim:api:messages:2.0:Error"}},
                                        {"status", "405"},
                                        {"detail", req.method + " is not supported on " + req.path + "; allowed: " + match.allowed}});
    r.headers.emplace_back("Allow", match.allowed);
    return reply(std::move(r));
  }
  reply(ScimErrorResponse(NotFound("no SCIM endpoint at " + req.path)));
}

void ScimApi::ScimRoute(RouteTable& routes, const char* method, const char* pattern,
                           std::function<Result<json>(HttpRequest&, const std::string& base)> handler,
                           int success_status) {
  ScimRoute(routes, method, pattern, std::move(handler), [success_status](const HttpRequest&) { return success_status; });
}

void ScimApi::ScimRoute(RouteTable& routes, const char* method, const char* pattern,
                           std::function<Result<json>(HttpRequest&, const std::string& base)> handler,
                           std::function<int(const HttpRequest&)> success) {
  routes.Scim(method, pattern, identity::kScopeScimProvision, [handler = std::move(handler), success = std::move(success)](HttpRequest& req, Reply reply) {
    std::string base = BaseUrl(req);
    const int success_status = success(req);
    auto result = handler(req, base);
    if (!result.ok()) return reply(ScimErrorResponse(result.status()));
    HttpResponse r = ScimResponse(success_status, success_status == 204 ? json() : *result);
    if (result->is_object() && result->contains("meta") && (*result)["meta"].contains("version")) {
      r.headers.emplace_back("ETag", (*result)["meta"]["version"].get<std::string>());
      if (success_status == 201) r.headers.emplace_back("Location", (*result)["meta"].value("location", ""));
    }
    reply(std::move(r));
  });
}

void ScimApi::AddRoutes(RouteTable& routes) {
  ScimRoute(routes, "GET", "/scim/v2/ServiceProviderConfig",
            [](HttpRequest&, const std::string& base) -> Result<json> { return scim::ServiceProviderConfig(base); });
  ScimRoute(routes, "GET", "/scim/v2/Schemas",
            [](HttpRequest&, const std::string& base) -> Result<json> { return scim::SchemasDocument(base); });
  ScimRoute(routes, "GET", "/scim/v2/Schemas/{id}", [](HttpRequest& req, const std::string& base) -> Result<json> {
    const scim::Schema* s = scim::FindSchema(req.params["id"]);
    if (!s) return scim::Error(Code::kNotFound, "", "no schema " + req.params["id"]);
    return scim::SchemaDocument(*s, base);
  });
  ScimRoute(routes, "GET", "/scim/v2/ResourceTypes",
            [](HttpRequest&, const std::string& base) -> Result<json> { return scim::ResourceTypesDocument(base); });
  ScimRoute(routes, "GET", "/scim/v2/ResourceTypes/{id}", [](HttpRequest& req, const std::string& base) -> Result<json> {
    for (const scim::ResourceType* t : {&scim::UserType(), &scim::GroupType()}) {
      if (t->name == req.params["id"]) return scim::ResourceTypeDocument(*t, base);
    }
    return scim::Error(Code::kNotFound, "", "no resource type " + req.params["id"]);
  });

  for (const scim::ResourceType* type : {&scim::UserType(), &scim::GroupType()}) {
    std::string collection = "/scim/v2" + type->endpoint;
    std::string one = collection + "/{id}";
    auto caller = [](HttpRequest& req, const std::string& base) { return ScimCaller{req.principal->token_id, base}; };
    ScimRoute(routes, "GET", collection.c_str(), [this, type](HttpRequest& req, const std::string& base) -> Result<json> {
      ASSIGN_OR_RETURN(ScimListQuery q, ListQueryOf(req));
      return scim_.List(*type, q, base);
    });
    ScimRoute(routes, 
        "POST", collection.c_str(),
        [this, type, caller](HttpRequest& req, const std::string& base) -> Result<json> {
          ASSIGN_OR_RETURN(json body, ScimBody(req));
          return scim_.Create(*type, body, caller(req, base));
        },
        201);
    ScimRoute(routes, "GET", one.c_str(), [this, type](HttpRequest& req, const std::string& base) -> Result<json> {
      ASSIGN_OR_RETURN(ScimListQuery q, ListQueryOf(req));
      return scim_.Get(*type, req.params["id"], base, q);
    });
    ScimRoute(routes, "PUT", one.c_str(), [this, type, caller](HttpRequest& req, const std::string& base) -> Result<json> {
      ASSIGN_OR_RETURN(json body, ScimBody(req));
      return scim_.Replace(*type, req.params["id"], body, req.Header("if-match"), caller(req, base));
    });
    // A group's PATCH answers 204 unless the caller asks for attributes
    // (RFC 7644 section 3.5.2): Microsoft advises against sending every
    // member of a large group back on each change. A user's answers 200
    // with the user.
    const bool group = type == &scim::GroupType();
    ScimRoute(routes, 
        "PATCH", one.c_str(),
        [this, type, caller](HttpRequest& req, const std::string& base) -> Result<json> {
          ASSIGN_OR_RETURN(json body, ScimBody(req));
          return scim_.Patch(*type, req.params["id"], body, req.Header("if-match"), caller(req, base));
        },
        [group](const HttpRequest& req) {
          return group && req.Query("attributes").empty() && req.Query("excludedAttributes").empty() ? 204 : 200;
        });
    ScimRoute(routes, 
        "DELETE", one.c_str(),
        [this, type, caller](HttpRequest& req, const std::string& base) -> Result<json> {
          RETURN_IF_ERROR(scim_.Delete(*type, req.params["id"], req.Header("if-match"), caller(req, base)));
          return json();
        },
        204);
  }
}

}  // namespace causeway::api
