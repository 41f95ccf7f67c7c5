// The REST/JSON API: routes, authentication, authorization by scope, and one
// error shape for every failure:
//   {"error": {"code": "not_found", "message": "...", "details": {...}}}
// It only translates: each area (jobs_api.h, cost_api.h, ...: area.h) is
// built here with the services it uses, of those the composition root built
// (services.h); its handlers decode a request, call them, and encode the
// answer. This class is the shell: routing, authentication and
// authorization from the headers, metrics, and the console's sessions.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "api/api_helpers.h"
#include "api/area.h"
#include "api/http_types.h"
#include "api/metrics.h"
#include "api/router.h"
#include "api/services.h"
#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/mutex.h"
#include "causeway/store.h"
#include "console/oidc_sign_in.h"
#include "console/sessions.h"
#include "dispatch/worker.h"
#include "service/reaper_service.h"

namespace causeway::api {

class ApiService {
 public:
  // `services` outlives this; `scheduler` may be null: jobs are then only
  // recorded. `clock` is the scheduler's (simulated time may run fast);
  // `wall` the real one, for what people and other systems read as a date:
  // credentials' expiry, the audit trail's searches, signing keys.
  ApiService(Services& services, Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
             const Clock& wall, SchedulerService* scheduler = nullptr);

  // Where pushed GPU samples go; without it (no reaper policies) pushes are
  // refused.
  void SetReaper(ReaperService* reaper) { reaper_ = reaper; }

  // Handles one request; calls `reply` exactly once.
  void Dispatch(HttpRequest& req, Reply reply);
  // Decides from the request line and headers alone, before any body is
  // read, whether the caller may use the route: the refusal to send, or
  // nullopt to read on (with req.principal set for an authenticated route,
  // so Dispatch does not authenticate again).
  std::optional<HttpResponse> AdmitHead(HttpRequest& req);

  // What the HTTP server did with connections, shown in /metrics; set by
  // the owner of the HTTP server.
  std::function<ConnectionStats()> connection_stats;

  // Where people reach this server (--advertise-url, else the address it
  // is bound to): the console's origin, its IdP redirect, and whether its
  // cookie is Secure (https).
  void SetPublicUrl(std::string url) EXCLUDES(public_url_mu_);

 private:
  // A handler that answers at once, and one that answers later (when the
  // commit it waits for is done).
  using Answering = Result<HttpResponse> (ApiService::*)(HttpRequest&);
  using Replying = void (ApiService::*)(HttpRequest&, Reply);
  Handler Bind(Answering fn);
  Handler Bind(Replying fn);

  // An authenticated route needing `scope` ("" means any valid token). With
  // `job_credential`, the credential of an attempt of job {id} is enough too.
  void Route(const char* method, const char* pattern, std::string_view scope, Handler handler,
             bool job_credential = false);
  void Public(const char* method, const char* pattern, Handler handler);
  // The principal of `req` if its token allows `needed` ("" for any valid
  // token); kUnauthenticated or kPermissionDenied otherwise.
  Result<identity::Principal> Authorize(HttpRequest& req, const std::string& needed, bool job_credential);
  // The answer refusing `req` under `access` (nullopt when allowed, with
  // req.principal set); a request already authenticated is not asked again.
  std::optional<HttpResponse> Refusal(HttpRequest& req, const Access& access);

  // The shell's own routes (health, metrics), then each area's (its file
  // *_api.cc, its class *_api.h).
  void AddRoutes();
  void AddConsoleRoutes();    // console_api.cc: the web console's files, signing in and out
  // A path under /scim/v2 no route matches, or a method its route lacks:
  // authenticated, then answered with a SCIM error (RFC 7644 §3.12).
  void ScimUnrouted(HttpRequest& req, const Router::Match& match, Reply reply);

  Result<HttpResponse> Health(HttpRequest& req);
  Result<HttpResponse> RenderMetrics(HttpRequest& req);

  // The web console's sessions (console_api.cc).
  Result<HttpResponse> ConsoleSession(HttpRequest& req);
  Result<HttpResponse> ConsoleTokenSignIn(HttpRequest& req);
  Result<HttpResponse> ConsoleSignOut(HttpRequest& req);
  void ConsoleLogin(HttpRequest& req, Reply reply);
  void ConsoleCallback(HttpRequest& req, Reply reply);
  // The credential of the request's session cookie, checked for origin and
  // (on writes) CSRF; "" when the request has no session cookie.
  Result<std::string> SessionBearer(HttpRequest& req);
  // kPermissionDenied for a request another site's page made.
  Status SameOrigin(const HttpRequest& req) const;
  std::string PublicUrl(const HttpRequest& req) const EXCLUDES(public_url_mu_);
  bool Secure() const EXCLUDES(public_url_mu_);
  Result<identity::Principal> AuthenticateBearer(const std::string& bearer, const char* path);
  Status AuditSession(const identity::Principal& who, const std::string& action, const std::string& method);
  // A new session for `who`: its cookie, and either the JSON answer
  // (`location` empty) or a redirect there.
  Result<HttpResponse> StartSession(const identity::Principal& who, std::string bearer, const std::string& method,
                                    std::optional<Timestamp> expires, std::string location);

  // What authenticating and the shell's own routes use; each area holds
  // what it uses itself.
  Store& store_;
  CommitQueue& queue_;
  const Clock& wall_;
  ReaperService* reaper_ = nullptr;
  BindingService& bindings_;
  BreakglassService& breakglass_;
  identity::TokenCache& token_cache_;
  identity::PersonDirectory& directory_;
  identity::PeopleAuthenticator* people_;  // null without an IdP
  Router router_;
  Metrics metrics_;
  std::atomic<uint64_t> jobs_submitted_{0};  // counted by the jobs area
  std::vector<std::unique_ptr<Area>> areas_;
  console::SessionStore sessions_;
  std::unique_ptr<console::OidcSignIn> sign_in_;  // null without an IdP
  mutable Mutex public_url_mu_;
  std::string public_url_ GUARDED_BY(public_url_mu_);
  // Sign-ins talk to the IdP here, off the HTTP server's threads; declared
  // last so it stops first.
  dispatch::Worker sign_in_worker_{"console sign-in", 16};
};

}  // namespace causeway::api
