#include "api/api_service.h"
#include "api/api_helpers.h"

#include <algorithm>
#include <charconv>
#include <chrono>

#include <spdlog/spdlog.h>

#include "audit/chain.h"
#include "causeway/input.h"
#include "service/checkpoint_service.h"
#include "identity/access.h"
#include "identity/scim/scim_schema.h"
#include "cost/showback.h"
#include "telemetry/samples.h"
#include "spec/spec_json.h"
#include "store/records_json.h"

namespace causeway::api {

using nlohmann::json;

HttpResponse ErrorResponse(const Status& status) {
  json details = json::object();
  if (!status.diagnostics().empty()) {
    json diags = json::array();
    for (const auto& d : status.diagnostics()) diags.push_back(ToJson(d));
    details["diagnostics"] = diags;
  }
  details["retryable"] = IsRetryable(status.code());
  json body = {{"error", {{"code", CodeName(status.code())}, {"message", status.message()}, {"details", details}}}};
  HttpResponse r;
  r.status = HttpStatus(status.code());
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  if (IsRetryable(status.code())) r.headers.emplace_back("Retry-After", "1");
  return r;
}

HttpResponse JsonResponse(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

Result<json> ParseJsonBody(const HttpRequest& req) {
  if (req.body.empty()) return InvalidArgument("the request body is empty: expected a JSON object");
  ASSIGN_OR_RETURN(json j, ParseUntrustedJson(req.body, "request body"));
  if (!j.is_object()) return InvalidArgument("the request body must be a JSON object");
  return j;
}

Result<JsonBody> JsonBody::Parse(const HttpRequest& req) {
  ASSIGN_OR_RETURN(json j, ParseJsonBody(req));
  return JsonBody(std::move(j));
}

const json& JsonBody::Raw(std::string_view field) const {
  static const json kNull;
  auto it = j_.find(field);
  return it == j_.end() ? kNull : *it;
}

Status JsonBody::Wrong(std::string_view field, std::string_view expected) const {
  std::string f(field);
  return InvalidArgument("field \"" + f + "\" must be " + std::string(expected),
                         {Diagnostic{"request body", 0, 0, f, "expected " + std::string(expected)}});
}

Result<std::string> JsonBody::String(std::string_view field, std::string fallback) const {
  const json& v = Raw(field);
  if (v.is_null()) return fallback;
  if (!v.is_string()) return Wrong(field, "a string");
  return v.get<std::string>();
}

Result<std::string> JsonBody::RequiredString(std::string_view field, std::string_view what) const {
  ASSIGN_OR_RETURN(std::string v, String(field));
  if (v.empty()) return Wrong(field, what);
  return v;
}

Result<std::vector<std::string>> JsonBody::Strings(std::string_view field) const {
  const json& v = Raw(field);
  std::vector<std::string> out;
  if (v.is_null()) return out;
  if (!v.is_array()) return Wrong(field, "a list of strings");
  for (const json& e : v) {
    if (!e.is_string()) return Wrong(field, "a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<std::optional<int64_t>> JsonBody::Int(std::string_view field, int64_t min, int64_t max) const {
  const json& v = Raw(field);
  if (v.is_null()) return std::optional<int64_t>();
  std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (!v.is_number_integer()) return Wrong(field, range);
  // Unsigned values past INT64_MAX are out of range, not wrapped.
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max)) return Wrong(field, range);
  int64_t n = v.get<int64_t>();
  if (n < min || n > max) return Wrong(field, range);
  return std::optional<int64_t>(n);
}

Result<std::optional<bool>> JsonBody::Bool(std::string_view field) const {
  const json& v = Raw(field);
  if (v.is_null()) return std::optional<bool>();
  if (!v.is_boolean()) return Wrong(field, "true or false");
  return std::optional<bool>(v.get<bool>());
}

// The integer query parameter `name`, nullopt when absent; kInvalidArgument
// outside [min, max], saying what `it` is.
Result<std::optional<int64_t>> QueryInt(const HttpRequest& req, const char* name, int64_t min, int64_t max,
                                        const char* it) {
  std::string s = req.Query(name);
  if (s.empty()) return std::optional<int64_t>();
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < min || v > max) {
    return InvalidArgument(std::string("invalid ") + name + " \"" + s + "\": expected " + it);
  }
  return std::optional<int64_t>(v);
}

Result<int> LimitParam(const HttpRequest& req) {
  ASSIGN_OR_RETURN(auto v, QueryInt(req, "limit", 1, 1000, "an integer from 1 to 1000"));
  return static_cast<int>(v.value_or(100));
}

Result<std::optional<Timestamp>> TimeParam(const HttpRequest& req, const char* name, Timestamp now) {
  std::string s = req.Query(name);
  if (s.empty()) return std::optional<Timestamp>();
  if (auto d = ParseDuration(s); d.ok()) return std::optional<Timestamp>(now - *d);
  if (auto t = ParseRfc3339(s); t.ok()) return std::optional<Timestamp>(*t);
  return InvalidArgument(std::string("invalid ") + name + " \"" + s + "\": expected a duration such as 30d or a timestamp");
}

std::string ContentType(const HttpRequest& req) {
  std::string ct = req.Header("content-type");
  auto semi = ct.find(';');
  if (semi != std::string::npos) ct.resize(semi);
  while (!ct.empty() && ct.back() == ' ') ct.pop_back();
  return ct;
}

json GrantsJson(const std::vector<identity::Grant>& grants) {
  json out = json::array();
  for (const identity::Grant& g : grants) {
    out.push_back({{"role", g.role}, {"team", g.team.empty() ? json() : json(g.team)}, {"group", g.group},
                   {"source", g.source}, {"scopes", g.scopes}});
  }
  return out;
}

namespace {
json WarningsJson(const std::vector<Diagnostic>& warnings) {
  json out = json::array();
  for (const auto& w : warnings) out.push_back(ToJson(w));
  return out;
}
}  // namespace

namespace {
JobHooks HooksFor(SchedulerService* scheduler) {
  if (!scheduler) return {};
  return JobHooks{[scheduler](const JobRecord& job, const JobSpec& spec) { scheduler->OnSubmitted(job, spec); },
                  [scheduler](const std::string& id) { scheduler->OnCancelled(id); },
                  [scheduler](const std::string& id, const std::string& path) { scheduler->OnCheckpoint(id, path); }};
}
}  // namespace

ApiService::ApiService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
                       SchedulerService* scheduler, const policy::Chain* policies)
    : store_(store),
      queue_(queue),
      estate_(estate),
      clock_(clock),
      scheduler_(scheduler),
      jobs_(store, queue, estate, clock, policies, HooksFor(scheduler)),
      tokens_(store, queue, clock),
      scim_(store, queue, clock),
      bindings_(store, queue, estate, clock, [this](const std::string& grant) { return breakglass_.IsActive(grant); }),
      people_svc_(store, queue, estate, clock, jobs_, [this] { return bindings_.Current(); },
                  [this](const std::string& id) { token_cache_.Forget(id); }),
      breakglass_(store, queue, estate, clock, [this](const std::string& id) { token_cache_.Forget(id); }),
      audit_(store, queue, clock),
      checkpoints_(store, queue, clock) {
  // A directory change that may change someone's access is carried through
  // at once: provider accounts follow, a deactivated person is deprovisioned.
  scim_.OnPeopleChanged([this](const std::vector<std::string>& users, const std::string& actor) {
    for (const std::string& user : users) {
      auto report = people_svc_.Sync(user, actor);
      if (!report.ok()) {
        spdlog::error("carrying a directory change through for {} failed: {}", user, report.status().ToString());
      } else if (!(*report)["ok"].get<bool>()) {
        spdlog::warn("carrying a directory change through for {}: some steps failed (audit seq {})", user,
                     (*report)["seq"].get<int64_t>());
      }
    }
  });
  if (estate_.identity.oidc) {
    oidc_ = std::make_unique<identity::OidcVerifier>(*estate_.identity.oidc);
    people_ = std::make_unique<identity::PeopleAuthenticator>(*oidc_, directory_, [this] { return bindings_.Current(); });
  }
  AddRoutes();
  AddScimRoutes();
}

Result<identity::Principal> ApiService::Authorize(HttpRequest& req, const std::string& needed, bool job_credential) {
  std::string authorization = req.Header("authorization");
  identity::Principal principal;
  if (people_ && identity::IsJwtBearer(authorization)) {
    ASSIGN_OR_RETURN(principal, people_->Authenticate(store_, authorization, clock_.Now()));
  } else {
    ASSIGN_OR_RETURN(principal, token_cache_.Authenticate(store_, authorization, clock_.Now()));
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
  std::string needed(scope);
  router_.Add(method, pattern, [this, needed, job_credential, handler = std::move(handler)](HttpRequest& req, Reply reply) {
    auto principal = Authorize(req, needed, job_credential);
    if (!principal.ok()) {
      HttpResponse r = ErrorResponse(principal.status());
      if (principal.status().code() == Code::kUnauthenticated) r.headers.emplace_back("WWW-Authenticate", "Bearer");
      return reply(std::move(r));
    }
    req.principal = std::move(*principal);
    handler(req, std::move(reply));
  });
}

void ApiService::Public(const char* method, const char* pattern, Handler handler) {
  router_.Add(method, pattern, std::move(handler));
}

void ApiService::AddRoutes() {
  using namespace identity;
  auto bind = [this](void (ApiService::*fn)(HttpRequest&, Reply)) {
    return [this, fn](HttpRequest& req, Reply reply) { (this->*fn)(req, std::move(reply)); };
  };
  Public("GET", "/healthz", bind(&ApiService::Health));
  Route("GET", "/metrics", kScopeMetricsRead, bind(&ApiService::RenderMetrics));
  Route("GET", "/v1/whoami", "", bind(&ApiService::WhoAmI));
  Route("POST", "/v1/jobs", kScopeJobsWrite, bind(&ApiService::SubmitJob));
  Route("GET", "/v1/jobs", kScopeJobsRead, bind(&ApiService::ListJobs));
  Route("GET", "/v1/jobs/{id}", kScopeJobsRead, bind(&ApiService::GetJob), true);
  Route("POST", "/v1/jobs/{id}/cancel", kScopeJobsWrite, bind(&ApiService::CancelJob));
  Route("GET", "/v1/jobs/{id}/explain", kScopeJobsRead, bind(&ApiService::ExplainJob));
  Route("POST", "/v1/jobs/{id}/checkpoints", kScopeJobsWrite, bind(&ApiService::RegisterCheckpoint), true);
  Route("GET", "/v1/jobs/{id}/logs", kScopeJobsRead, bind(&ApiService::JobLogs));
  Route("GET", "/v1/jobs/{id}/checkpoints", kScopeJobsRead, bind(&ApiService::ListCheckpoints), true);
  Route("GET", "/v1/queues", kScopeJobsRead, bind(&ApiService::ListQueues));
  Route("POST", "/v1/providers/{name}/outage", kScopeProvidersWrite, bind(&ApiService::SetOutage));
  Route("GET", "/v1/clusters", kScopeClustersRead, bind(&ApiService::ListClusters));
  Route("GET", "/v1/cost/showback", kScopeCostRead, bind(&ApiService::CostShowback));
  Route("GET", "/v1/cost/bills", kScopeCostRead, bind(&ApiService::ListBills));
  Route("POST", "/v1/telemetry", kScopeTelemetryWrite, bind(&ApiService::PushTelemetry));
  Route("POST", "/v1/jobs/{id}/telemetry", kScopeTelemetryWrite, bind(&ApiService::PushTelemetry), true);
  Route("GET", "/v1/audit", kScopeAuditRead, bind(&ApiService::ListAudit));
  Route("GET", "/v1/audit/verify", kScopeAuditRead, bind(&ApiService::VerifyAudit));
  AddAuditRoutes();
  Route("POST", "/v1/tokens", kScopeAdmin, bind(&ApiService::CreateToken));
  Route("GET", "/v1/tokens", kScopeAdmin, bind(&ApiService::ListTokens));
  Route("POST", "/v1/tokens/{id}/revoke", kScopeAdmin, bind(&ApiService::RevokeToken));
  Route("POST", "/v1/tokens/{id}/rotate", kScopeAdmin, bind(&ApiService::RotateToken));
  Route("POST", "/v1/tokens/{id}/reassign", kScopeAdmin, bind(&ApiService::ReassignToken));
  // Workload identity: what clouds read to trust Causeway's job tokens is
  // public, as OpenID Connect requires; a running attempt refreshes its own.
  Public("GET", "/.well-known/openid-configuration", bind(&ApiService::OidcDiscovery));
  Public("GET", "/jwks", bind(&ApiService::Jwks));
  Route("POST", "/v1/jobs/{id}/workload-token", kScopeAdmin, bind(&ApiService::RefreshWorkloadToken), true);
  Route("POST", "/v1/identity/keys/rotate", kScopeAdmin, bind(&ApiService::RotateSigningKeys));
  // People: every credential one has, carrying the directory through, the
  // API's own way to cut someone off, and why someone may or may not act.
  Route("GET", "/v1/people/{user}/credentials", kScopeAuditRead, bind(&ApiService::Credentials));
  Route("POST", "/v1/people/{user}/sync", kScopeAdmin, bind(&ApiService::SyncPerson));
  Route("POST", "/v1/people/{user}/deactivate", kScopeAdmin, bind(&ApiService::DeactivatePerson));
  Route("GET", "/v1/access/explain", kScopeAuditRead, bind(&ApiService::ExplainAccess));
  Route("GET", "/v1/access/bindings", kScopeAuditRead, bind(&ApiService::ListBindings));
  Route("POST", "/v1/access/bindings", kScopeAdmin, bind(&ApiService::CreateBinding));
  Route("DELETE", "/v1/access/bindings/{id}", kScopeAdmin, bind(&ApiService::DeleteBinding));
  Route("POST", "/v1/access/bindings/{id}/confirm", kScopeAdmin, bind(&ApiService::ConfirmBinding));
  // Break-glass: anyone signed in may ask; approval and revocation are
  // checked by the service; the list is for auditors.
  Route("POST", "/v1/breakglass", "", bind(&ApiService::RequestBreakglass));
  Route("GET", "/v1/breakglass", kScopeAuditRead, bind(&ApiService::ListBreakglass));
  Route("POST", "/v1/breakglass/{id}/approve", "", bind(&ApiService::ApproveBreakglass));
  Route("POST", "/v1/breakglass/{id}/revoke", "", bind(&ApiService::RevokeBreakglass));
  Route("POST", "/v1/breakglass/{id}/credential", "", bind(&ApiService::BreakglassCredential));
}

void ApiService::Dispatch(HttpRequest& req, Reply reply) {
  auto start = std::chrono::steady_clock::now();
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
    (*match.handler)(req, observed);
  } catch (const std::exception& e) {
    // A handler bug must not take the server down; the reply guard in the
    // HTTP layer ignores a second reply if the handler had already answered.
    spdlog::error("handler threw route={} what={}", match.pattern, e.what());
    observed(ErrorResponse(Internal("unexpected error while handling the request")));
  }
}

void ApiService::SubmitJob(HttpRequest& req, Reply reply) {
  SubmitRequest sr;
  sr.idempotency_key = req.Header("idempotency-key");
  std::string ct = ContentType(req);
  if (ct == "application/yaml" || ct == "application/x-yaml" || ct == "text/yaml" || ct == "text/x-yaml") {
    sr.spec_yaml = std::move(req.body);
    if (std::string f = req.Query("file"); !f.empty()) sr.file = f;
  } else if (ct.empty() || ct == "application/json") {
    auto body = JsonBody::Parse(req);
    if (!body.ok()) return reply(ErrorResponse(body.status()));
    auto file = body->String("file");
    if (!file.ok()) return reply(ErrorResponse(file.status()));
    const json& spec = body->Raw("spec");
    if (spec.is_string()) {
      sr.spec_yaml = spec.get<std::string>();
    } else if (spec.is_object()) {
      sr.spec_yaml = spec.dump();  // JSON is YAML: the same parser reports positions
    } else {
      return reply(ErrorResponse(InvalidArgument(
          "field \"spec\" is missing: expected the job spec as a YAML string or a JSON object",
          {Diagnostic{"request body", 0, 0, "spec", "expected a string or an object"}})));
    }
    if (!file->empty()) sr.file = *file;
  } else {
    return reply(ErrorResponse(InvalidArgument("unsupported Content-Type \"" + ct +
                                               "\": expected application/json or application/yaml")));
  }
  jobs_.Submit(*req.principal, std::move(sr), [this, reply](Result<SubmitResult> r) {
    if (!r.ok()) return reply(ErrorResponse(r.status()));
    if (r->created) jobs_submitted_.fetch_add(1);
    HttpResponse resp = JsonResponse(r->created ? 201 : 200,
                                     {{"job", ToJson(r->job)}, {"created", r->created}, {"warnings", WarningsJson(r->warnings)}});
    resp.headers.emplace_back("Location", "/v1/jobs/" + r->job.id);
    if (!r->created) resp.headers.emplace_back("Idempotent-Replayed", "true");
    reply(std::move(resp));
  });
}

void ApiService::ListJobs(HttpRequest& req, Reply reply) {
  JobFilter f;
  if (std::string s = req.Query("state"); !s.empty()) {
    f.state = ParseJobState(s);
    if (!f.state) {
      return reply(ErrorResponse(InvalidArgument(
          "unknown state \"" + s + "\": expected pending, admitted, running, succeeded, failed or cancelled")));
    }
  }
  f.team = req.Query("team");
  f.owner = req.Query("owner");
  // Someone who may read only some teams' jobs lists one of those teams.
  if (std::vector<std::string> teams = req.principal->TeamsFor(identity::kScopeJobsRead); !teams.empty()) {
    std::string list;
    for (const auto& t : teams) list += (list.empty() ? "" : ", ") + t;
    if (f.team.empty() && teams.size() == 1) f.team = teams[0];
    if (f.team.empty()) return reply(ErrorResponse(InvalidArgument("name a team (team=...): you may list " + list)));
    if (std::find(teams.begin(), teams.end(), f.team) == teams.end()) {
      return reply(ErrorResponse(PermissionDenied("you may list the jobs of " + list + ", not " + f.team)));
    }
  }
  f.before_id = req.Query("cursor");
  auto limit = LimitParam(req);
  if (!limit.ok()) return reply(ErrorResponse(limit.status()));
  f.limit = *limit + 1;  // one more, to know whether there is a next page
  auto jobs = jobs_.List(f);
  if (!jobs.ok()) return reply(ErrorResponse(jobs.status()));
  json items = json::array();
  json next = nullptr;
  for (size_t i = 0; i < jobs->size(); ++i) {
    if (static_cast<int>(i) == *limit) {
      next = (*jobs)[i - 1].id;
      break;
    }
    items.push_back(ToJson((*jobs)[i]));
  }
  reply(JsonResponse(200, {{"jobs", items}, {"next_cursor", next}}));
}

Result<JobDetail> ApiService::VisibleJob(HttpRequest& req) {
  ASSIGN_OR_RETURN(JobDetail detail, jobs_.Get(req.params["id"]));
  RETURN_IF_ERROR(MayRead(*req.principal, detail.job));
  return detail;
}

void ApiService::GetJob(HttpRequest& req, Reply reply) {
  auto detail = VisibleJob(req);
  if (!detail.ok()) return reply(ErrorResponse(detail.status()));
  json j = ToJson(detail->job);
  j["spec_yaml"] = detail->job.spec_yaml;
  j["attempts"] = json::array();
  for (const auto& a : detail->attempts) j["attempts"].push_back(ToJson(a));
  j["events"] = json::array();
  for (const auto& e : detail->events) j["events"].push_back(ToJson(e));
  reply(JsonResponse(200, j));
}

void ApiService::CancelJob(HttpRequest& req, Reply reply) {
  std::string reason;
  if (!req.body.empty()) {
    auto read = JsonBody::Parse(req);
    auto body = read.ok() ? read->String("reason") : Result<std::string>(read.status());
    if (!body.ok()) return reply(ErrorResponse(body.status()));
    reason = std::move(*body);
  }
  jobs_.Cancel(*req.principal, req.params["id"], reason, [reply](Result<JobRecord> r) {
    if (!r.ok()) return reply(ErrorResponse(r.status()));
    reply(JsonResponse(200, {{"job", ToJson(*r)}}));
  });
}

void ApiService::ExplainJob(HttpRequest& req, Reply reply) {
  auto detail = VisibleJob(req);
  if (!detail.ok()) return reply(ErrorResponse(detail.status()));
  json live = scheduler_ ? scheduler_->Explain(detail->job.id) : json();
  json out = {{"job", detail->job.id},
              {"name", detail->job.name},
              {"team", detail->job.team},
              {"state", JobStateName(detail->job.state)},
              {"reason", detail->job.reason}};
  if (!live.is_null()) out["scheduler"] = live;
  json attempts = json::array();
  for (const auto& a : detail->attempts) attempts.push_back(ToJson(a));
  out["attempts"] = attempts;
  reply(JsonResponse(200, out));
}

void ApiService::RegisterCheckpoint(HttpRequest& req, Reply reply) {
  auto visible = VisibleJob(req);
  if (!visible.ok()) return reply(ErrorResponse(visible.status()));
  if (!req.principal->IsJob(visible->job.id) &&
      !req.principal->AllowsTeam(identity::kScopeJobsWrite, visible->job.team)) {
    return reply(ErrorResponse(PermissionDenied(req.principal->token_id + " may not write to team " +
                                                visible->job.team + "'s jobs")));
  }
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return reply(ErrorResponse(body.status()));
  auto path = body->RequiredString("path", "where the checkpoint was written");
  if (!path.ok()) return reply(ErrorResponse(path.status()));
  auto step = body->Int("step", 0, INT64_MAX);
  if (!step.ok()) return reply(ErrorResponse(step.status()));
  jobs_.RegisterCheckpoint(*req.principal, req.params["id"], *path, *step,
                           [reply](Result<Checkpoint> r) {
                             if (!r.ok()) return reply(ErrorResponse(r.status()));
                             reply(JsonResponse(201, {{"checkpoint", ToJson(*r)}}));
                           });
}

void ApiService::JobLogs(HttpRequest& req, Reply reply) {
  if (!scheduler_) return reply(ErrorResponse(FailedPrecondition("this server runs no scheduler")));
  auto detail = VisibleJob(req);
  if (!detail.ok()) return reply(ErrorResponse(detail.status()));
  if (detail->attempts.empty()) return reply(ErrorResponse(NotFound("job " + detail->job.id + " has not started yet")));
  auto number = QueryInt(req, "attempt", 1, INT32_MAX, "an attempt number (1, 2, ...)");
  auto offset = QueryInt(req, "offset", 0, INT64_MAX, "a byte offset");
  if (!number.ok()) return reply(ErrorResponse(number.status()));
  if (!offset.ok()) return reply(ErrorResponse(offset.status()));
  const Attempt* attempt = &detail->attempts.back();
  if (*number) {
    auto it = std::find_if(detail->attempts.begin(), detail->attempts.end(),
                           [&](const Attempt& a) { return a.number == **number; });
    if (it == detail->attempts.end()) {
      return reply(ErrorResponse(NotFound("job " + detail->job.id + " has no attempt " + std::to_string(**number))));
    }
    attempt = &*it;
  }
  constexpr int64_t kMax = 1 << 20;
  int64_t from = offset->value_or(0);
  auto text = scheduler_->ReadLog(attempt->cluster, detail->job.id, attempt->number, from, kMax);
  if (!text.ok()) return reply(ErrorResponse(text.status()));
  HttpResponse r;
  r.content_type = "text/plain; charset=utf-8";
  r.headers.emplace_back("X-Causeway-Attempt", std::to_string(attempt->number));
  r.headers.emplace_back("X-Causeway-Attempt-State", attempt->state);
  r.headers.emplace_back("X-Causeway-Next-Offset", std::to_string(from + static_cast<int64_t>(text->size())));
  r.body = std::move(*text);
  reply(std::move(r));
}

void ApiService::ListCheckpoints(HttpRequest& req, Reply reply) {
  if (auto visible = VisibleJob(req); !visible.ok()) return reply(ErrorResponse(visible.status()));
  auto list = jobs_.Checkpoints(req.params["id"]);
  if (!list.ok()) return reply(ErrorResponse(list.status()));
  json items = json::array();
  for (const auto& c : *list) items.push_back(ToJson(c));
  reply(JsonResponse(200, {{"checkpoints", items}}));
}

void ApiService::ListQueues(HttpRequest&, Reply reply) {
  if (!scheduler_) return reply(ErrorResponse(FailedPrecondition("this server runs no scheduler")));
  auto queues = scheduler_->Queues();
  if (!queues.ok()) return reply(ErrorResponse(queues.status()));
  reply(JsonResponse(200, {{"queues", *queues}}));
}

void ApiService::SetOutage(HttpRequest& req, Reply reply) {
  if (!scheduler_) return reply(ErrorResponse(FailedPrecondition("this server runs no scheduler")));
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return reply(ErrorResponse(body.status()));
  auto down_field = body->Bool("down");
  if (!down_field.ok()) return reply(ErrorResponse(down_field.status()));
  if (!*down_field) return reply(ErrorResponse(InvalidArgument("field \"down\" must be true or false")));
  bool down = **down_field;
  Status st = scheduler_->SetOutage(req.params["name"], down, req.principal->token_id);
  if (!st.ok()) return reply(ErrorResponse(st));
  reply(JsonResponse(200, {{"provider", req.params["name"]}, {"down", down}}));
}

void ApiService::ListClusters(HttpRequest&, Reply reply) {
  json items = json::array();
  for (const auto& c : estate_.clusters) items.push_back(ToJson(c, estate_));
  reply(JsonResponse(200, {{"clusters", items}}));
}

namespace {
// Cost reports and bills span every team: a cost:read limited to some teams
// is not enough for them.
Status CheckCostForEveryTeam(const identity::Principal& who) {
  std::vector<std::string> teams = who.TeamsFor(identity::kScopeCostRead);
  if (teams.empty()) return Status::Ok();
  return PermissionDenied("cost reports cover every team; " + who.user +
                          "'s cost role is bound to team " + teams.front() + " only");
}
}  // namespace

// GET /v1/cost/showback?by=team,month&period=2026-11&provider=P&share=none
void ApiService::CostShowback(HttpRequest& req, Reply reply) {
  if (Status st = CheckCostForEveryTeam(*req.principal); !st.ok()) return reply(ErrorResponse(st));
  cost::ShowbackRequest r;
  if (!req.Query("by").empty()) r.by = req.Query("by");
  r.period = req.Query("period");
  r.provider = req.Query("provider");
  if (!req.Query("share").empty()) r.share = req.Query("share");
  std::string source = req.Query("source");
  if (source == "metered") {
    auto metered = cost::RunMeteredShowback(store_, estate_, r, clock_.Now());
    if (!metered.ok()) return reply(ErrorResponse(metered.status()));
    return reply(JsonResponse(200, cost::ToJson(*metered)));
  }
  if (source != "" && source != "bills") {
    return reply(ErrorResponse(InvalidArgument("source: expected bills or metered, not \"" + source + "\"")));
  }
  std::string allocate = req.Query("allocate");
  if (allocate != "" && allocate != "true" && allocate != "false") {
    return reply(ErrorResponse(InvalidArgument("allocate: expected true or false, not \"" + allocate + "\"")));
  }
  r.allocate = allocate == "true";
  auto showback = cost::RunShowback(store_, r, estate_, clock_.Now());
  if (!showback.ok()) return reply(ErrorResponse(showback.status()));
  reply(JsonResponse(200, cost::ToJson(*showback)));
}

// POST /v1/telemetry: Prometheus text exposition, series matched to jobs by
// their causeway_job label. POST /v1/jobs/{id}/telemetry?attempt=N
// [&format=nvidia-smi]: one job's samples (exposition or nvidia-smi CSV),
// which its own attempt credential may send.
void ApiService::PushTelemetry(HttpRequest& req, Reply reply) {
  if (!reaper_) {
    return reply(ErrorResponse(FailedPrecondition("the estate has no reaper policies: samples would not be kept")));
  }
  const std::string job = req.params["id"];
  auto attempt = QueryInt(req, "attempt", 1, 1000000, "an attempt number");
  if (!attempt.ok()) return reply(ErrorResponse(attempt.status()));
  std::string format = req.Query("format").empty() ? "exposition" : req.Query("format");
  Result<std::vector<GpuSample>> samples = std::vector<GpuSample>{};
  if (format == "nvidia-smi") {
    if (job.empty()) return reply(ErrorResponse(InvalidArgument("nvidia-smi output is pushed to /v1/jobs/{id}/telemetry")));
    samples = telemetry::ParseNvidiaSmiCsv(req.body, job, static_cast<int>(attempt->value_or(1)));
  } else if (format == "exposition") {
    samples = telemetry::ParseExposition(req.body, telemetry::SeriesFormat{}, clock_.Now());
    if (samples.ok() && !job.empty()) {
      // Under a job's path every series is that job's.
      for (GpuSample& s : *samples) {
        s.job_id = job;
        if (*attempt) s.attempt = static_cast<int>(**attempt);
      }
    }
  } else {
    return reply(ErrorResponse(InvalidArgument("format \"" + format + "\": expected exposition or nvidia-smi")));
  }
  if (!samples.ok()) return reply(ErrorResponse(samples.status()));
  size_t sent = samples->size();
  auto pushed = reaper_->Push(store_, std::move(*samples), clock_.Now());
  if (!pushed.ok()) return reply(ErrorResponse(pushed.status()));
  if (!job.empty() && sent > 0 && pushed->unknown_attempt == sent) {
    return reply(ErrorResponse(FailedPrecondition("job " + job + " has no running attempt" +
                                                  (*attempt ? " " + std::to_string(**attempt) : std::string()) +
                                                  ": its samples are not kept")));
  }
  reply(JsonResponse(202, {{"accepted", pushed->accepted},
                           {"rejected", {{"unknown_attempt", pushed->unknown_attempt},
                                         {"outside_window", pushed->outside_window},
                                         {"gpu_out_of_range", pushed->gpu_out_of_range},
                                         {"stale", pushed->stale},
                                         {"over_limit", pushed->over_limit}}}}));
}

void ApiService::ListBills(HttpRequest& req, Reply reply) {
  if (Status st = CheckCostForEveryTeam(*req.principal); !st.ok()) return reply(ErrorResponse(st));
  auto bills = store_.ListBillingImports();
  if (!bills.ok()) return reply(ErrorResponse(bills.status()));
  json items = json::array();
  for (const auto& b : *bills) items.push_back(cost::ToJson(b));
  reply(JsonResponse(200, {{"bills", items}}));
}

void ApiService::ListAudit(HttpRequest& req, Reply reply) {
  AuditFilter f;
  f.actor = req.Query("actor");
  f.action = req.Query("action");
  f.resource = req.Query("resource");
  auto cursor = QueryInt(req, "cursor", 0, INT64_MAX, "a sequence number");
  if (!cursor.ok()) return reply(ErrorResponse(cursor.status()));
  f.after_seq = cursor->value_or(0);
  auto since = TimeParam(req, "since", clock_.Now());
  if (!since.ok()) return reply(ErrorResponse(since.status()));
  f.since = *since;
  auto limit = LimitParam(req);
  if (!limit.ok()) return reply(ErrorResponse(limit.status()));
  f.limit = *limit;
  auto events = store_.ListAudit(f);
  if (!events.ok()) return reply(ErrorResponse(events.status()));
  json items = json::array();
  for (const auto& e : *events) items.push_back(ToJson(e));
  json next = static_cast<int>(events->size()) == *limit ? json(std::to_string(events->back().seq)) : json();
  reply(JsonResponse(200, {{"events", items}, {"next_cursor", next}}));
}

void ApiService::VerifyAudit(HttpRequest&, Reply reply) {
  auto report = VerifyTrail(store_);
  if (!report.ok()) return reply(ErrorResponse(report.status()));
  reply(JsonResponse(200, ToJson(*report)));
}

void ApiService::CreateToken(HttpRequest& req, Reply reply) {
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return reply(ErrorResponse(body.status()));
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
  if (!minted.ok()) return reply(ErrorResponse(minted.status()));
  reply(JsonResponse(201, {{"token", ToJson(minted->record)}, {"secret", minted->secret}}));
}

void ApiService::ListTokens(HttpRequest&, Reply reply) {
  auto tokens = tokens_.List();
  if (!tokens.ok()) return reply(ErrorResponse(tokens.status()));
  json items = json::array();
  for (const auto& t : *tokens) items.push_back(ToJson(t));
  reply(JsonResponse(200, {{"tokens", items}}));
}

void ApiService::RevokeToken(HttpRequest& req, Reply reply) {
  auto revoked = tokens_.Revoke(*req.principal, req.params["id"]);
  if (!revoked.ok()) return reply(ErrorResponse(revoked.status()));
  token_cache_.Forget(revoked->id);
  reply(JsonResponse(200, {{"token", ToJson(*revoked)}}));
}

void ApiService::RotateToken(HttpRequest& req, Reply reply) {
  auto minted = tokens_.Rotate(*req.principal, req.params["id"]);
  if (!minted.ok()) return reply(ErrorResponse(minted.status()));
  token_cache_.Forget(req.params["id"]);
  reply(JsonResponse(201, {{"token", ToJson(minted->record)}, {"secret", minted->secret}, {"revoked", req.params["id"]}}));
}

void ApiService::ReassignToken(HttpRequest& req, Reply reply) {
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return reply(ErrorResponse(body.status()));
  auto to = body->RequiredString("to", "the userName of the person who answers for the token from now on");
  if (!to.ok()) return reply(ErrorResponse(to.status()));
  auto token = tokens_.Reassign(*req.principal, req.params["id"], *to);
  if (!token.ok()) return reply(ErrorResponse(token.status()));
  reply(JsonResponse(200, {{"token", ToJson(*token)}}));
}

void ApiService::WhoAmI(HttpRequest& req, Reply reply) {
  const auto& p = *req.principal;
  json out = {{"token_id", p.token_id}, {"name", p.name}, {"scopes", p.scopes}};
  if (p.IsPerson()) {
    out["user"] = p.user;
    out["user_id"] = p.user_id;
    out["groups"] = p.groups;
    out["grants"] = GrantsJson(p.grants);
  }
  reply(JsonResponse(200, out));
}

void ApiService::Credentials(HttpRequest& req, Reply reply) {
  auto report = people_svc_.Credentials(req.params["user"]);
  if (!report.ok()) return reply(ErrorResponse(report.status()));
  reply(JsonResponse(200, *report));
}

void ApiService::SyncPerson(HttpRequest& req, Reply reply) {
  auto report = people_svc_.Sync(req.params["user"], req.principal->token_id);
  if (!report.ok()) return reply(ErrorResponse(report.status()));
  reply(JsonResponse(200, *report));
}

// Deactivates the person in the directory (as the IdP's SCIM client would)
// and reports the deprovisioning that follows.
void ApiService::DeactivatePerson(HttpRequest& req, Reply reply) {
  const std::string user = req.params["user"];
  auto users = store_.ListDirectory("User");
  if (!users.ok()) return reply(ErrorResponse(users.status()));
  std::string id;
  for (const DirectoryEntry& u : *users) {
    if (identity::scim::EqualsIgnoreCase(u.name, user)) id = u.id;
  }
  if (id.empty()) return reply(ErrorResponse(NotFound("no user " + user + " in the directory")));
  json patch = {{"schemas", {identity::scim::kPatchOp}},
                {"Operations", {{{"op", "replace"}, {"path", "active"}, {"value", false}}}}};
  // Carried through here, not by the hook: the report is this request's answer.
  auto patched =
      scim_.Patch(identity::scim::UserType(), id, patch, "", ScimCaller{req.principal->token_id, "", false});
  if (!patched.ok()) return reply(ErrorResponse(patched.status()));
  auto report = people_svc_.Sync(user, req.principal->token_id);
  if (!report.ok()) return reply(ErrorResponse(report.status()));
  reply(JsonResponse(200, *report));
}

// GET /v1/access/explain?user=U&action=A&team=T: the bindings that allow
// or deny; the user's groups come from the directory, or from groups=a,b.
void ApiService::ExplainAccess(HttpRequest& req, Reply reply) {
  std::string user = req.Query("user"), action = req.Query("action");
  if (user.empty() || action.empty()) {
    return reply(ErrorResponse(InvalidArgument("user and action are required, e.g. user=alice@corp.example&action=submit&team=nlp")));
  }
  auto person = identity::ReadPerson(store_, user);
  if (!person.ok()) return reply(ErrorResponse(person.status()));
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
  if (!explained.ok()) return reply(ErrorResponse(explained.status()));
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
  reply(JsonResponse(200, {{"user", user}, {"provisioned", provisioned}, {"active", active}, {"groups", groups},
                           {"action", action}, {"scope", explained->scope},
                           {"team", req.Query("team").empty() ? json() : json(req.Query("team"))},
                           {"allowed", allowed}, {"why", why}, {"bindings", reasons}}));
}

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

void ApiService::ListBindings(HttpRequest&, Reply reply) {
  json items = json::array();
  for (const auto& b : bindings_.All()) items.push_back(BindingJson(b));
  reply(JsonResponse(200, {{"bindings", items}}));
}

void ApiService::CreateBinding(HttpRequest& req, Reply reply) {
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return reply(ErrorResponse(body.status()));
  auto made = [&]() -> Result<identity::Binding> {
    ASSIGN_OR_RETURN(std::string group, body->String("group"));
    ASSIGN_OR_RETURN(std::string role, body->String("role"));
    ASSIGN_OR_RETURN(std::string team, body->String("team"));
    return bindings_.Create(group, role, team, *req.principal);
  }();
  if (!made.ok()) return reply(ErrorResponse(made.status()));
  // The group's members' provider accounts follow their new role.
  json synced = json::array();
  if (auto r = people_svc_.SyncGroup(made->group, req.principal->token_id); r.ok()) synced = *r;
  reply(JsonResponse(201, {{"binding", BindingJson(*made)}, {"synced", synced}}));
}

void ApiService::ConfirmBinding(HttpRequest& req, Reply reply) {
  auto confirmed = bindings_.Confirm(req.params["id"], *req.principal);
  if (!confirmed.ok()) return reply(ErrorResponse(confirmed.status()));
  reply(JsonResponse(200, {{"binding", BindingJson(*confirmed)}}));
}

void ApiService::DeleteBinding(HttpRequest& req, Reply reply) {
  auto gone = bindings_.Delete(req.params["id"], req.principal->token_id);
  if (!gone.ok()) return reply(ErrorResponse(gone.status()));
  json synced = json::array();
  if (auto r = people_svc_.SyncGroup(gone->group, req.principal->token_id); r.ok()) synced = *r;
  reply(JsonResponse(200, {{"deleted", BindingJson(*gone)}, {"synced", synced}}));
}

void ApiService::RequestBreakglass(HttpRequest& req, Reply reply) {
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return reply(ErrorResponse(body.status()));
  auto issued = [&]() -> Result<BreakglassService::Issued> {
    ASSIGN_OR_RETURN(std::string role, body->String("role"));  // the service says which roles are offered
    ASSIGN_OR_RETURN(std::string team, body->String("team"));
    ASSIGN_OR_RETURN(std::string reason, body->String("reason"));
    ASSIGN_OR_RETURN(std::string duration_text, body->String("duration", "1h"));
    auto duration = ParseDuration(duration_text);
    if (!duration.ok()) return duration.status().WithPrefix("field \"duration\"");
    return breakglass_.Request(*req.principal, role, team, reason, *duration);
  }();
  if (!issued.ok()) return reply(ErrorResponse(issued.status()));
  json out = {{"breakglass", ToJson(issued->grant)}};
  if (issued->credential) {
    out["credential"] = {{"token", ToJson(issued->credential->record)}, {"secret", issued->credential->secret}};
  }
  reply(JsonResponse(201, out));
}

void ApiService::BreakglassCredential(HttpRequest& req, Reply reply) {
  auto minted = breakglass_.IssueCredential(*req.principal, req.params["id"]);
  if (!minted.ok()) return reply(ErrorResponse(minted.status()));
  reply(JsonResponse(201, {{"token", ToJson(minted->record)}, {"secret", minted->secret}}));
}

void ApiService::ListBreakglass(HttpRequest&, Reply reply) {
  auto list = breakglass_.List();
  if (!list.ok()) return reply(ErrorResponse(list.status()));
  auto created = breakglass_.Created(*list);
  if (!created.ok()) return reply(ErrorResponse(created.status()));
  json items = json::array();
  for (const auto& b : *list) {
    json j = ToJson(b);
    j["created"] = (*created)[b.id];
    items.push_back(std::move(j));
  }
  reply(JsonResponse(200, {{"breakglass", items}}));
}

void ApiService::ApproveBreakglass(HttpRequest& req, Reply reply) {
  auto grant = breakglass_.Approve(*req.principal, req.params["id"]);
  if (!grant.ok()) return reply(ErrorResponse(grant.status()));
  reply(JsonResponse(200, {{"breakglass", ToJson(*grant)}}));
}

void ApiService::RevokeBreakglass(HttpRequest& req, Reply reply) {
  auto grant = breakglass_.Revoke(*req.principal, req.params["id"]);
  if (!grant.ok()) return reply(ErrorResponse(grant.status()));
  reply(JsonResponse(200, {{"breakglass", ToJson(*grant)}}));
}

void ApiService::OidcDiscovery(HttpRequest&, Reply reply) {
  if (!workload_) return reply(ErrorResponse(NotFound("workload identity is not configured (estate identity.workload)")));
  HttpResponse r = JsonResponse(200, workload_->Discovery());
  r.headers.emplace_back("Cache-Control", "public, max-age=300");
  reply(std::move(r));
}

void ApiService::Jwks(HttpRequest&, Reply reply) {
  if (!workload_) return reply(ErrorResponse(NotFound("workload identity is not configured (estate identity.workload)")));
  auto jwks = workload_->Jwks(clock_.Now());
  if (!jwks.ok()) return reply(ErrorResponse(jwks.status()));
  HttpResponse r = JsonResponse(200, *jwks);
  r.headers.emplace_back("Cache-Control", "public, max-age=300");
  reply(std::move(r));
}

// POST /v1/jobs/{id}/workload-token {"audience": "..."}: a fresh token for
// the job's running attempt, asked for by that attempt (its credential) or
// an admin. Refused once the attempt has ended: tokens die with it.
void ApiService::RefreshWorkloadToken(HttpRequest& req, Reply reply) {
  if (!workload_) return reply(ErrorResponse(FailedPrecondition("workload identity is not configured")));
  std::string audience;
  if (!req.body.empty()) {
    auto read = JsonBody::Parse(req);
    auto field = read.ok() ? read->String("audience") : Result<std::string>(read.status());
    if (!field.ok()) return reply(ErrorResponse(field.status()));
    audience = std::move(*field);
  }
  auto detail = VisibleJob(req);
  if (!detail.ok()) return reply(ErrorResponse(detail.status()));
  const Attempt* running = nullptr;
  for (const Attempt& a : detail->attempts) {
    if (a.state == "running") running = &a;
  }
  if (detail->job.state != JobState::kRunning || !running) {
    return reply(ErrorResponse(FailedPrecondition("job " + detail->job.id + " has no running attempt: its tokens died with it")));
  }
  Timestamp now = clock_.Now();
  auto minted = workload_->Mint(detail->job, running->number, running->cluster, audience, now);
  if (!minted.ok()) return reply(ErrorResponse(minted.status()));
  AuditEvent e;
  e.time = now;
  e.actor = req.principal->token_id;
  e.action = "workload.token.issue";
  e.resource = "job/" + detail->job.id;
  e.details = {{"attempt", running->number}, {"jti", minted->jti}, {"kid", minted->kid},
               {"audiences", minted->audiences}, {"expires_at", FormatRfc3339(minted->expires_at)}};
  Status st = queue_.Run([e](WriteTx& tx) mutable -> Status { return tx.AppendAudit(e); });
  if (!st.ok()) return reply(ErrorResponse(st));  // fail closed: an unrecorded token is not handed out
  reply(JsonResponse(200, {{"token", minted->token},
                           {"jti", minted->jti},
                           {"audiences", minted->audiences},
                           {"expires_at", FormatRfc3339(minted->expires_at)}}));
}

void ApiService::RotateSigningKeys(HttpRequest& req, Reply reply) {
  if (!workload_) return reply(ErrorResponse(FailedPrecondition("workload identity is not configured")));
  auto write = workload_->RotateWrite(clock_.Now(), req.principal->token_id);
  if (!write.ok()) return reply(ErrorResponse(write.status()));
  if (Status st = queue_.Run(*write); !st.ok()) return reply(ErrorResponse(st));
  auto jwks = workload_->Jwks(clock_.Now());
  if (!jwks.ok()) return reply(ErrorResponse(jwks.status()));
  reply(JsonResponse(200, *jwks));
}

void ApiService::Health(HttpRequest&, Reply reply) {
  auto head = store_.GetAuditHead();
  if (!head.ok()) return reply(ErrorResponse(Unavailable("database unavailable: " + head.status().message())));
  reply(JsonResponse(200, {{"status", "ok"}}));
}

void ApiService::RenderMetrics(HttpRequest&, Reply reply) {
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
  reply(std::move(r));
}

}  // namespace causeway::api
