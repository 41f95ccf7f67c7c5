// Workload identity: the OpenID discovery document and JWKS clouds read to
// trust Causeway's job tokens (public, as OpenID Connect requires), an
// attempt refreshing its own token, and signing-key rotation.

#include "api/api_helpers.h"
#include "api/workload_api.h"
#include "api/jobs_api.h"

namespace causeway::api {

using nlohmann::json;

void WorkloadApi::AddRoutes(RouteTable& routes) {
  using namespace identity;
  // Workload identity: what clouds read to trust Causeway's job tokens is
  // public, as OpenID Connect requires; a running attempt refreshes its own.
  routes.Public("GET", "/.well-known/openid-configuration", Bind(this, &WorkloadApi::OidcDiscovery));
  routes.Public("GET", "/jwks", Bind(this, &WorkloadApi::Jwks));
  routes.Route("POST", "/v1/jobs/{id}/workload-token", kScopeAdmin, Bind(this, &WorkloadApi::RefreshWorkloadToken), true);
  routes.Route("POST", "/v1/identity/keys/rotate", kScopeAdmin, Bind(this, &WorkloadApi::RotateSigningKeys));
}

Result<HttpResponse> WorkloadApi::OidcDiscovery(HttpRequest&) {
  identity::WorkloadIssuer* issuer = workload_.issuer();
  if (!issuer) return NotFound("workload identity is not configured (estate identity.workload)");
  HttpResponse r = JsonResponse(200, issuer->Discovery());
  r.headers.emplace_back("Cache-Control", "public, max-age=300");
  return r;
}

Result<HttpResponse> WorkloadApi::Jwks(HttpRequest&) {
  identity::WorkloadIssuer* issuer = workload_.issuer();
  if (!issuer) return NotFound("workload identity is not configured (estate identity.workload)");
  ASSIGN_OR_RETURN(json jwks, issuer->Jwks(wall_.Now()));
  HttpResponse r = JsonResponse(200, jwks);
  r.headers.emplace_back("Cache-Control", "public, max-age=300");
  return r;
}

// POST /v1/jobs/{id}/workload-token {"audience": "..."}: a fresh token for
// the job's running attempt, asked for by that attempt (its credential) or
// an admin. Refused once the attempt has ended: tokens die with it. With
// `Accept: application/jwt`, the token alone (what a token file holds).
Result<HttpResponse> WorkloadApi::RefreshWorkloadToken(HttpRequest& req) {
  if (!workload_.issuer()) return FailedPrecondition("workload identity is not configured");
  std::string audience;
  if (!req.body.empty()) {
    ASSIGN_OR_RETURN(JsonBody body, JsonBody::Parse(req));
    ASSIGN_OR_RETURN(audience, body.String("audience"));
  }
  ASSIGN_OR_RETURN(JobDetail detail, VisibleJob(jobs_, req));
  ASSIGN_OR_RETURN(identity::WorkloadToken minted, workload_.Refresh(detail, audience, req.principal->token_id));
  if (req.Header("accept").find("application/jwt") != std::string::npos) {
    // The token alone, as a federation's token file holds it (RFC 7519's type).
    HttpResponse r;
    r.content_type = "application/jwt";
    r.body = minted.token;
    r.headers.emplace_back("Cache-Control", "no-store");
    return r;
  }
  return JsonResponse(200, {{"token", minted.token},
                            {"jti", minted.jti},
                            {"audiences", minted.audiences},
                            {"expires_at", FormatRfc3339(minted.expires_at)}});
}

Result<HttpResponse> WorkloadApi::RotateSigningKeys(HttpRequest& req) {
  RETURN_IF_ERROR(workload_.RotateKeys(req.principal->token_id));
  ASSIGN_OR_RETURN(json jwks, workload_.issuer()->Jwks(wall_.Now()));
  return JsonResponse(200, jwks);
}

}  // namespace causeway::api
