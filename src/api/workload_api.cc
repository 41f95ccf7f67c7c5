// Workload identity: the OpenID discovery document and JWKS clouds read to
// trust Causeway's job tokens (public, as OpenID Connect requires), an
// attempt refreshing its own token, signing-key rotation, and the review a
// Kubernetes API server asks for before acting on a verified job token.

#include <charconv>

#include "api/api_helpers.h"
#include "api/jobs_api.h"
#include "api/workload_api.h"

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
  routes.Route("POST", "/v1/k8s/subjectaccessreview", kScopeJobsRead, Bind(this, &WorkloadApi::ReviewAccess));
}

// POST /v1/k8s/subjectaccessreview: a Kubernetes API server's authorization
// webhook (authorization.k8s.io/v1 SubjectAccessReview), asked about the
// users its JWT authenticator made of Causeway's workload tokens. It only
// ever denies (the token's job or attempt has ended, or its owner is
// deactivated) or has no opinion, leaving the decision to RBAC: this is
// how a token the API server verified, and cannot call back, is revoked.
// The user names the job (`...job:<id>`, whatever the prefix); the
// attempt, where the authenticator maps it, is extra["causeway.io/attempt"].
Result<HttpResponse> WorkloadApi::ReviewAccess(HttpRequest& req) {
  ASSIGN_OR_RETURN(json review, ParseJsonBody(req));
  if (!review.is_object() || !review.contains("spec") || !review["spec"].is_object() ||
      !review["spec"].value("user", json()).is_string()) {
    return InvalidArgument("expected a SubjectAccessReview with spec.user");
  }
  const json& spec = review["spec"];
  const std::string user = spec["user"].get<std::string>();
  json answer = {{"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"status", {{"allowed", false}}}};
  const size_t at = user.rfind("job:");
  if (at == std::string::npos) return JsonResponse(200, answer);  // not a job's: no opinion
  const std::string job_id = user.substr(at + 4);
  std::optional<int> attempt;
  if (const json& extra = spec.value("extra", json::object()); extra.is_object() && extra.contains("causeway.io/attempt")) {
    const json& values = extra["causeway.io/attempt"];
    int n = 0;
    if (!values.is_array() || values.size() != 1 || !values[0].is_string() ||
        std::from_chars(values[0].get_ref<const std::string&>().data(),
                        values[0].get_ref<const std::string&>().data() + values[0].get_ref<const std::string&>().size(), n)
                .ec != std::errc()) {
      return InvalidArgument("extra[\"causeway.io/attempt\"]: expected one attempt number");
    }
    attempt = n;
  }
  std::string why;
  if (auto detail = jobs_.Get(job_id); detail.ok()) {
    ASSIGN_OR_RETURN(why, workload_.Revoked(*detail, attempt));
  } else if (detail.status().code() == Code::kNotFound) {
    why = "no job " + job_id;
  } else {
    return detail.status();
  }
  if (!why.empty()) answer["status"] = {{"allowed", false}, {"denied", true}, {"reason", "causeway: " + why}};
  return JsonResponse(200, answer);
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
