#include "api/api_service.h"
#include "api/api_helpers.h"

#include <chrono>

#include <spdlog/spdlog.h>

#include "api/access_api.h"
#include "api/acceptance_api.h"
#include "api/audit_api.h"
#include "api/breakglass_api.h"
#include "api/clusters_api.h"
#include "api/cost_api.h"
#include "api/datasets_api.h"
#include "api/jobs_api.h"
#include "api/people_api.h"
#include "api/plan_api.h"
#include "api/provenance_api.h"
#include "api/readiness_api.h"
#include "api/scim_api.h"
#include "api/services_api.h"
#include "api/telemetry_api.h"
#include "api/workload_api.h"
#include "identity/access.h"

namespace causeway::api {

using nlohmann::json;

ApiService::ApiService(Services& services, Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
                       const Clock& wall, SchedulerService* scheduler)
    : store_(store),
      queue_(queue),
      wall_(wall),
      bindings_(services.bindings),
      breakglass_(services.breakglass),
      token_cache_(services.token_cache),
      directory_(services.directory),
      people_(services.people_tokens.get()) {
  if (services.oidc) {
    const auto& audiences = services.oidc->config().audiences;
    sign_in_ = std::make_unique<console::OidcSignIn>(audiences.empty() ? "causeway" : audiences.front(), *services.oidc,
                                                     net::Network());
  }
  // Each area gets the services it uses, and nothing else.
  Services& s = services;
  areas_.push_back(std::make_unique<AuditApi>(store, estate, wall, s.bindings, s.breakglass, s.audit, s.checkpoints,
                                              s.feed_readers));
  areas_.push_back(std::make_unique<ProvenanceApi>(store, estate, s.provenance, s.jobs));
  areas_.push_back(std::make_unique<ReadinessApi>(estate, s.readiness));
  areas_.push_back(std::make_unique<AcceptanceApi>(estate, s.acceptance));
  areas_.push_back(std::make_unique<DatasetsApi>(estate, s.datasets));
  areas_.push_back(std::make_unique<CostApi>(store, estate, clock));
  areas_.push_back(std::make_unique<JobsApi>(store, estate, clock, scheduler, s.jobs, s.datasets, s.plans, jobs_submitted_));
  areas_.push_back(std::make_unique<PlanApi>(store, estate, clock, s.plans, s.jobs));
  areas_.push_back(std::make_unique<ClustersApi>(store, estate, clock, scheduler, reaper_));
  areas_.push_back(std::make_unique<TelemetryApi>(store, clock, reaper_));
  areas_.push_back(std::make_unique<AccessApi>(store, s.tokens, s.bindings, s.people, s.token_cache));
  areas_.push_back(std::make_unique<PeopleApi>(s.scim, s.people));
  areas_.push_back(std::make_unique<BreakglassApi>(wall, s.breakglass));
  areas_.push_back(std::make_unique<WorkloadApi>(wall, s.workload, s.jobs));
  areas_.push_back(std::make_unique<ScimApi>(s.scim));
  areas_.push_back(std::make_unique<ServicesApi>(s.serving));
  AddRoutes();
  AddConsoleRoutes();
}

Result<identity::Principal> ApiService::Authorize(HttpRequest& req, const std::string& needed, bool job_credential) {
  std::string authorization = req.Header("authorization");
  // The console's session cookie stands for a bearer (console_api.cc).
  if (authorization.empty()) {
    ASSIGN_OR_RETURN(authorization, SessionBearer(req));
  }
  identity::Principal principal;
  if (people_ && identity::IsJwtBearer(authorization)) {
    ASSIGN_OR_RETURN(principal, people_->Authenticate(store_, authorization, wall_.Now()));
  } else {
    ASSIGN_OR_RETURN(principal, token_cache_.Authenticate(store_, authorization, wall_.Now()));
    if (principal.IsPerson()) {
      // A grant's own credential keeps only the granted role, so none of
      // the person's bindings; the directory still decides whether they
      // may act at all.
      auto bindings = identity::IsBreakglassCredential(principal.token_id) ? std::vector<identity::Binding>{}
                                                                           : bindings_.Current();
      ASSIGN_OR_RETURN(principal, identity::PersonToken(directory_, store_, principal, bindings));
    }
    // A token made under a break-glass grant works only while it lasts.
    RETURN_IF_ERROR(breakglass_.Resolve(principal));
  }
  if (!needed.empty() && !principal.Has(needed) && !(job_credential && principal.IsJob(req.params["id"]))) {
    return PermissionDenied((principal.IsPerson() ? principal.user + "'s roles do not grant" : "token " + principal.token_id + " lacks") +
                            " the \"" + needed + "\" scope needed for " + req.method + " " + req.path);
  }
  // Fail closed: a break-glass request that cannot be recorded is refused.
  if (!principal.grant.empty()) {
    RETURN_IF_ERROR(breakglass_.RecordUse(principal, req.method, req.path)
                        .WithPrefix("refused: this break-glass use could not be recorded"));
  }
  return principal;
}

void ApiService::Route(const char* method, const char* pattern, std::string_view scope, Handler handler,
                       bool job_credential) {
  router_.Add(method, pattern, std::move(handler), Access{false, std::string(scope), job_credential, false});
}

std::optional<HttpResponse> ApiService::Refusal(HttpRequest& req, const Access& access) {
  if (access.open || req.principal) return std::nullopt;
  auto principal = Authorize(req, access.scope, access.job_credential);
  if (!principal.ok()) {
    if (access.scim) return ScimErrorResponse(principal.status());
    HttpResponse r = ErrorResponse(principal.status());
    if (principal.status().code() == Code::kUnauthenticated) r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
  }
  req.principal = std::move(*principal);
  return std::nullopt;
}

std::optional<HttpResponse> ApiService::AdmitHead(HttpRequest& req) {
  auto start = std::chrono::steady_clock::now();
  Router::Match match = router_.Find(req);
  // Unrouted requests are answered once read, as before (a SCIM path
  // authenticates there); their body is bounded like any other.
  if (match.outcome != Router::Outcome::kFound) return std::nullopt;
  auto refused = Refusal(req, *match.access);
  if (refused) {
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    metrics_.ObserveRequest(req.method, match.pattern, refused->status, secs);
  }
  return refused;
}

Handler ApiService::Bind(Answering fn) {
  return Answer([this, fn](HttpRequest& req) { return (this->*fn)(req); });
}

Handler ApiService::Bind(Replying fn) {
  return [this, fn](HttpRequest& req, Reply reply) { (this->*fn)(req, std::move(reply)); };
}

void ApiService::Public(const char* method, const char* pattern, Handler handler) {
  router_.Add(method, pattern, std::move(handler));
}

void ApiService::AddRoutes() {
  using namespace identity;
  Public("GET", "/healthz", Bind(&ApiService::Health));
  Route("GET", "/metrics", kScopeMetricsRead, Bind(&ApiService::RenderMetrics));
  RouteTable routes(router_);
  for (const auto& area : areas_) area->AddRoutes(routes);
}

void ApiService::Dispatch(HttpRequest& req, Reply reply) {
  auto start = std::chrono::steady_clock::now();
  // HEAD is GET without the body (RFC 9110 section 9.3.2), on every route
  // that answers GET.
  const bool head = req.method == "HEAD";
  if (head) {
    req.method = "GET";
    reply = [reply = std::move(reply)](HttpResponse r) {
      r.body.clear();
      reply(std::move(r));
    };
  }
  Router::Match match = router_.Find(req);
  std::string pattern = match.outcome == Router::Outcome::kNoSuchPath ? "unmatched" : match.pattern;
  Reply observed = [this, start, method = req.method, pattern, reply = std::move(reply)](HttpResponse r) {
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    metrics_.ObserveRequest(method, pattern, r.status, secs);
    // Server-side failures are logged with the route pattern, never the
    // path, query or headers (they can carry ids and tokens).
    if (r.status >= 500) spdlog::error("request failed method={} route={} status={} body={}", method, pattern, r.status, r.body);
    reply(std::move(r));
  };
  bool scim = req.path == "/scim/v2" || req.path.rfind("/scim/v2/", 0) == 0;
  if (scim && match.outcome != Router::Outcome::kFound) return ScimUnrouted(req, match, observed);
  if (match.outcome == Router::Outcome::kNoSuchPath) {
    return observed(ErrorResponse(NotFound("no route for " + req.path)));
  }
  if (match.outcome == Router::Outcome::kMethodNotAllowed) {
    // Not a Status code: 405 exists only at the HTTP layer.
    HttpResponse r;
    r.status = 405;
    r.body = json{{"error", {{"code", "method_not_allowed"},
                             {"message", req.method + " is not allowed on " + req.path},
                             {"details", {{"allowed", match.allowed}}}}}}.dump();
    r.headers.emplace_back("Allow", match.allowed);
    return observed(std::move(r));
  }
  try {
    if (auto refused = Refusal(req, *match.access)) return observed(std::move(*refused));
    (*match.handler)(req, observed);
  } catch (const std::exception& e) {
    // A handler bug must not take the server down; the reply guard in the
    // HTTP layer ignores a second reply if the handler had already answered.
    spdlog::error("handler threw route={} what={}", match.pattern, e.what());
    observed(ErrorResponse(Internal("unexpected error while handling the request")));
  }
}

Result<HttpResponse> ApiService::Health(HttpRequest&) {
  auto head = store_.GetAuditHead();
  if (!head.ok()) return Unavailable("database unavailable: " + head.status().message());
  return JsonResponse(200, {{"status", "ok"}});
}

Result<HttpResponse> ApiService::RenderMetrics(HttpRequest&) {
  HttpResponse r;
  r.content_type = "text/plain; version=0.0.4";
  metrics_.Render(r.body);
  AppendMetric(r.body, "causeway_jobs_submitted_total", "counter", "Jobs accepted by this server.",
               static_cast<double>(jobs_submitted_.load()));
  AppendMetric(r.body, "causeway_store_commits_total", "counter", "Durable group commits.",
               static_cast<double>(queue_.batches()));
  AppendMetric(r.body, "causeway_store_committed_writes_total", "counter", "Units of work committed.",
               static_cast<double>(queue_.units()));
  if (reaper_) {
    AppendMetric(r.body, "causeway_telemetry_prometheus_samples_total", "counter",
                 "GPU samples read from the estate's Prometheus.", static_cast<double>(reaper_->prometheus_samples()));
    AppendMetric(r.body, "causeway_telemetry_prometheus_errors_total", "counter",
                 "Failed reads of the estate's Prometheus.", static_cast<double>(reaper_->prometheus_errors()));
    AppendMetric(r.body, "causeway_telemetry_points", "gauge", "GPU utilization points held in memory.",
                 static_cast<double>(reaper_->points()));
    AppendMetric(r.body, "causeway_telemetry_series", "gauge", "GPU utilization series held in memory.",
                 static_cast<double>(reaper_->series()));
  }
  if (connection_stats) {
    ConnectionStats c = connection_stats();
    AppendMetric(r.body, "causeway_http_connections", "gauge", "Open HTTP connections.", static_cast<double>(c.open));
    AppendMetric(r.body, "causeway_http_connection_cap", "gauge",
                 "The most HTTP connections kept open (from the open-file limit).", static_cast<double>(c.cap));
    AppendMetric(r.body, "causeway_http_connections_refused_total", "counter",
                 "Connections closed at once: over the cap with every connection busy.", static_cast<double>(c.refused));
    AppendMetric(r.body, "causeway_http_connections_evicted_total", "counter",
                 "Idle or slow connections closed to make room for new ones.", static_cast<double>(c.evicted));
    AppendMetric(r.body, "causeway_http_connections_timed_out_total", "counter",
                 "Connections closed for sending a request too slowly or idling too long.",
                 static_cast<double>(c.timed_out));
    AppendMetric(r.body, "causeway_http_accept_errors_total", "counter",
                 "Failed accepts (such as running out of file descriptors).", static_cast<double>(c.accept_errors));
  }
  return r;
}

}  // namespace causeway::api
