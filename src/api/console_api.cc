// The web console at "/" (console/, docs/console.md): its files, compiled
// into the binary, and signing in and out. Once signed in, the browser
// calls the same /v1 routes as everyone else with a session cookie instead
// of a bearer (SessionBearer below): the session's credential is
// authenticated afresh on each request, so the console has exactly the
// person's rights and every action is audited as them.
//
// What guards the cookie: it is HttpOnly, SameSite=Strict, Secure when the
// console is served over TLS (--advertise-url https://...), and ends
// (console/sessions.h). Writes must carry the session's CSRF token in
// X-CSRF-Token and an Origin that is the console's own; any cookie request
// that says it comes from another site (Origin, Sec-Fetch-Site) is refused.
#include "api/api_helpers.h"
#include "api/api_service.h"
#include "console/assets.h"
#include "causeway/crypto.h"
#include "net/http_client.h"

#include <spdlog/spdlog.h>

namespace causeway::api {

using nlohmann::json;

namespace {

// What the console's pages may do: load their own script, style and data,
// nothing inline, nothing from elsewhere, and not be framed.
constexpr const char* kContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

// The console's icon: a causeway's arches, in the console's blue.
constexpr const char* kIcon =
    "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 16 16\"><rect width=\"16\" height=\"16\" rx=\"3\" "
    "fill=\"#1f5fa8\"/><path d=\"M2 11h12M3 11V8a2 2 0 0 1 4 0v3M9 11V8a2 2 0 0 1 4 0v3\" stroke=\"#fff\" "
    "stroke-width=\"1.5\" fill=\"none\"/></svg>";

void AddPageHeaders(HttpResponse& r) {
  r.headers.emplace_back("Content-Security-Policy", kContentSecurityPolicy);
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("X-Frame-Options", "DENY");
  r.headers.emplace_back("Referrer-Policy", "no-referrer");
  r.headers.emplace_back("Cross-Origin-Opener-Policy", "same-origin");
}

HttpResponse Redirect(const std::string& location) {
  HttpResponse r;
  r.status = 302;
  r.content_type = "text/plain; charset=utf-8";
  r.headers.emplace_back("Location", location);
  r.headers.emplace_back("Cache-Control", "no-store");
  AddPageHeaders(r);
  return r;
}

bool Writes(const HttpRequest& req) { return req.method != "GET" && req.method != "HEAD"; }

// "scheme://host[:port]" of a URL, or "".
std::string OriginOf(std::string_view url) {
  size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return "";
  size_t end = url.find('/', scheme + 3);
  return std::string(url.substr(0, end));
}

}  // namespace

void ApiService::SetPublicUrl(std::string url) {
  MutexLock lock(public_url_mu_);
  public_url_ = std::move(url);
}

std::string ApiService::PublicUrl(const HttpRequest& req) const {
  {
    MutexLock lock(public_url_mu_);
    if (!public_url_.empty()) return OriginOf(public_url_);
  }
  return "http://" + req.Header("host");
}

bool ApiService::Secure() const {
  MutexLock lock(public_url_mu_);
  return public_url_.rfind("https://", 0) == 0;
}

Status ApiService::SameOrigin(const HttpRequest& req) const {
  std::string site = req.Header("sec-fetch-site");
  if (!site.empty() && site != "same-origin" && !(site == "none" && !Writes(req))) {
    return PermissionDenied("cross-origin request refused: the browser says it comes from another site (Sec-Fetch-Site: " +
                            site.substr(0, 40) + ")");
  }
  std::string origin = req.Header("origin");
  if (origin.empty()) {
    if (Writes(req)) return PermissionDenied("refused: a write from the console must carry its Origin header");
    return Status::Ok();
  }
  std::string scheme = Secure() ? "https://" : "http://";
  if (origin != PublicUrl(req) && origin != scheme + req.Header("host")) {
    return PermissionDenied("cross-origin request refused: " + origin.substr(0, 100) + " is not this console's origin");
  }
  return Status::Ok();
}

Result<std::string> ApiService::SessionBearer(HttpRequest& req) {
  std::string cookie = console::CookieValue(req.Header("cookie"), console::kSessionCookie);
  if (cookie.empty()) return std::string();
  RETURN_IF_ERROR(SameOrigin(req));
  auto session = sessions_.Find(cookie, wall_.Now());
  if (!session) return Unauthenticated("your console session has ended: sign in again");
  if (Writes(req) && !ConstantTimeEqual(req.Header("x-csrf-token"), session->csrf)) {
    return PermissionDenied("refused: a write from the console must carry the session's CSRF token (X-CSRF-Token)");
  }
  return session->bearer;
}

void ApiService::AddConsoleRoutes() {
  // The embedded files are named by the paths they are served at.
  auto page = [] {
    return Answer([](HttpRequest& req) -> Result<HttpResponse> {
      const console::Asset* asset = console::FindAsset(req.path);
      if (!asset) return NotFound("no console file " + req.path);
      HttpResponse r;
      r.content_type = std::string(asset->content_type);
      r.headers.emplace_back("ETag", std::string(asset->etag));
      r.headers.emplace_back("Cache-Control", "no-cache");
      r.headers.emplace_back("Vary", "Accept-Encoding");
      AddPageHeaders(r);
      if (req.Header("if-none-match") == asset->etag) {
        r.status = 304;
        return r;
      }
      if (req.Header("accept-encoding").find("gzip") != std::string::npos) {
        r.headers.emplace_back("Content-Encoding", "gzip");
        r.body = std::string(asset->gzip);
      } else {
        r.body = std::string(asset->body);
      }
      return r;
    });
  };
  Public("GET", "/", page());
  Public("GET", "/assets/{name}", page());
  // The console's icon (the page names it; browsers ask for this path
  // anyway when they are not told).
  Public("GET", "/favicon.ico", [](HttpRequest&, Reply reply) {
    HttpResponse r;
    r.content_type = "image/svg+xml";
    r.body = kIcon;
    r.headers.emplace_back("Cache-Control", "max-age=86400");
    AddPageHeaders(r);
    reply(std::move(r));
  });
  Public("GET", "/auth/session", Bind(&ApiService::ConsoleSession));
  Public("POST", "/auth/token", Bind(&ApiService::ConsoleTokenSignIn));
  Public("POST", "/auth/logout", Bind(&ApiService::ConsoleSignOut));
  Public("GET", "/auth/login", Bind(&ApiService::ConsoleLogin));
  Public("GET", "/auth/callback", Bind(&ApiService::ConsoleCallback));
}

Result<identity::Principal> ApiService::AuthenticateBearer(const std::string& bearer, const char* path) {
  HttpRequest probe;
  probe.method = "GET";
  probe.path = path;
  probe.headers["authorization"] = bearer;
  return Authorize(probe, "", false);
}

Status ApiService::AuditSession(const identity::Principal& who, const std::string& action, const std::string& method) {
  AuditEvent event;
  event.time = wall_.Now();
  event.actor = who.token_id;
  event.action = action;
  event.resource = who.IsPerson() ? "person/" + who.user : "token/" + who.token_id;
  event.details = {{"via", "console"}, {"method", method}};
  return queue_.Run([event](WriteTx& tx) {
    AuditEvent e = event;  // AppendAudit fills in its sequence and hashes
    return tx.AppendAudit(e);
  });
}

Result<HttpResponse> ApiService::StartSession(const identity::Principal& who, std::string bearer, const std::string& method,
                                              std::optional<Timestamp> expires, std::string location) {
  std::string name = who.IsPerson() ? who.user : who.name;
  console::NewSession made = sessions_.Create(std::move(bearer), name, wall_.Now(), expires);
  RETURN_IF_ERROR(AuditSession(who, "console.sign_in", method));
  auto max_age = std::chrono::duration_cast<std::chrono::seconds>(made.session.expires - made.session.created);
  HttpResponse r = location.empty()
                       ? JsonResponse(200, {{"signed_in", true}, {"name", name}, {"csrf", made.session.csrf},
                                            {"expires_at", FormatRfc3339(made.session.expires)}})
                       : Redirect(location);
  r.headers.emplace_back("Set-Cookie", console::SessionCookie(made.cookie, max_age, Secure()));
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

// GET /auth/session: who the cookie signs in, and the CSRF token for writes;
// {"signed_in": false} without a live session. "oidc": whether the estate
// has an IdP to sign in with.
Result<HttpResponse> ApiService::ConsoleSession(HttpRequest& req) {
  json out = {{"signed_in", false}, {"oidc", sign_in_ != nullptr}};
  std::string cookie = console::CookieValue(req.Header("cookie"), console::kSessionCookie);
  if (auto session = cookie.empty() ? std::nullopt : sessions_.Find(cookie, wall_.Now())) {
    // Still good? (revoked, expired, deactivated: signed out)
    if (auto who = AuthenticateBearer(session->bearer, "/auth/session"); who.ok()) {
      out.update({{"signed_in", true}, {"name", session->name}, {"kind", who->IsPerson() ? "person" : "token"},
                  {"csrf", session->csrf}, {"expires_at", FormatRfc3339(session->expires)}});
    } else {
      sessions_.Remove(cookie);
    }
  }
  HttpResponse r = JsonResponse(200, out);
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

// POST /auth/token {"token": "cw_..."}: a session for an API token (or an
// IdP token pasted as is), for bootstrap and for service accounts.
Result<HttpResponse> ApiService::ConsoleTokenSignIn(HttpRequest& req) {
  // A page elsewhere must not sign the browser in as someone else.
  RETURN_IF_ERROR(SameOrigin(req));
  if (ContentType(req) != "application/json") return InvalidArgument("expected a JSON body {\"token\": ...}");
  ASSIGN_OR_RETURN(auto body, JsonBody::Parse(req));
  ASSIGN_OR_RETURN(std::string token, body.RequiredString("token", "the API token to sign in with"));
  if (token.size() > 8192) return InvalidArgument("field \"token\" is too long to be a token");
  std::string bearer = "Bearer " + token;
  ASSIGN_OR_RETURN(identity::Principal who, AuthenticateBearer(bearer, "/auth/token"));
  return StartSession(who, std::move(bearer), "token", std::nullopt, "");
}

// POST /auth/logout: ends the session (CSRF and origin checked like any write).
Result<HttpResponse> ApiService::ConsoleSignOut(HttpRequest& req) {
  ASSIGN_OR_RETURN(std::string bearer, SessionBearer(req));
  if (bearer.empty()) return Unauthenticated("no console session to end");
  auto who = AuthenticateBearer(bearer, "/auth/logout");
  sessions_.Remove(console::CookieValue(req.Header("cookie"), console::kSessionCookie));
  if (who.ok()) RETURN_IF_ERROR(AuditSession(*who, "console.sign_out", "logout"));
  HttpResponse r = JsonResponse(200, {{"signed_in", false}});
  r.headers.emplace_back("Set-Cookie", console::SessionCookie("", std::chrono::seconds(0), Secure()));
  return r;
}

namespace {

// Where a failed sign-in (at `step`: begin, exchange, authorize, session)
// sends the browser: the sign-in page with one of a few fixed reasons,
// which the console words itself. The URL carries no text of ours or the
// IdP's, so a link cannot make the console's page say what its maker
// wants; the details go to the server's log.
std::string SignInFailed(const Status& why, std::string_view step) {
  spdlog::warn("console sign-in ({}): {}", step, why.ToString());
  if (why.code() == Code::kUnavailable || why.code() == Code::kDeadlineExceeded) return "/#/signin/idp-unreachable";
  if (step == "exchange") return "/#/signin/expired";    // unknown, used, late or refused code
  if (step == "authorize") return "/#/signin/not-allowed";  // not in the directory, or no roles
  return "/#/signin/failed";
}

}  // namespace

// GET /auth/login: to the IdP (authorization code with PKCE). The IdP's
// documents are read on the sign-in worker, off the server's threads.
void ApiService::ConsoleLogin(HttpRequest& req, Reply reply) {
  if (!sign_in_) return reply(ErrorResponse(NotFound("no identity provider: the estate has no identity.oidc; sign in with an API token")));
  std::string redirect_uri = PublicUrl(req) + "/auth/callback";
  bool posted = sign_in_worker_.Post([this, redirect_uri, reply] {
    auto url = sign_in_->Begin(redirect_uri, wall_.Now());
    if (!url.ok()) return reply(Redirect(SignInFailed(url.status(), "begin")));
    reply(Redirect(*url));
  });
  if (!posted) reply(ErrorResponse(Unavailable("too many sign-ins at once: try again in a moment")));
}

// GET /auth/callback?code=...&state=...: back from the IdP.
void ApiService::ConsoleCallback(HttpRequest& req, Reply reply) {
  if (!sign_in_) return reply(ErrorResponse(NotFound("no identity provider: the estate has no identity.oidc")));
  if (std::string error = req.Query("error"); !error.empty()) {
    spdlog::warn("console sign-in: the identity provider answered error={}", error.substr(0, 100));
    return reply(Redirect("/#/signin/idp-refused"));
  }
  bool posted = sign_in_worker_.Post([this, state = req.Query("state"), code = req.Query("code"), reply] {
    auto in = sign_in_->Finish(state, code, wall_.Now());
    if (!in.ok()) return reply(Redirect(SignInFailed(in.status(), "exchange")));
    std::string bearer = "Bearer " + in->id_token;
    auto who = AuthenticateBearer(bearer, "/auth/callback");
    if (!who.ok()) return reply(Redirect(SignInFailed(who.status(), "authorize")));
    auto session = StartSession(*who, std::move(bearer), "oidc", in->expires, "/#/jobs");
    if (!session.ok()) return reply(Redirect(SignInFailed(session.status(), "session")));
    reply(std::move(*session));
  });
  if (!posted) reply(ErrorResponse(Unavailable("too many sign-ins at once: try again in a moment")));
}

}  // namespace causeway::api
