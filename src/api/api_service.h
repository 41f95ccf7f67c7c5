// The REST/JSON API: routes, authentication, authorization by scope, and one
// error shape for every failure:
//   {"error": {"code": "not_found", "message": "...", "details": {...}}}
// It only translates: each area's handlers (jobs_api.cc, cost_api.cc, ...)
// decode a request, call the services the composition root built
// (services.h), and encode the answer.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/api_helpers.h"
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

  // Each area adds its routes (in the file named after it).
  void AddRoutes();           // api_service.cc: health, metrics, and the areas below
  void AddJobRoutes();        // jobs_api.cc
  void AddPlanRoutes();       // plan_api.cc: when a job would likely start
  void AddClusterRoutes();    // clusters_api.cc: queues, clusters, provider outages
  void AddTelemetryRoutes();  // telemetry_api.cc
  void AddCostRoutes();       // cost_api.cc
  void AddAuditRoutes();      // audit_api.cc
  void AddProvenanceRoutes(); // provenance_api.cc
  void AddReadinessRoutes();  // readiness_api.cc
  void AddAcceptanceRoutes();  // acceptance_api.cc
  void AddDatasetRoutes();    // datasets_api.cc: the dataset registry, verification, replication
  void AddAccessRoutes();     // access_api.cc: tokens, whoami, bindings, access explained
  void AddPeopleRoutes();     // people_api.cc
  void AddBreakglassRoutes(); // breakglass_api.cc
  void AddWorkloadRoutes();   // workload_api.cc: OIDC discovery, JWKS, job tokens, key rotation
  void AddScimRoutes();       // scim_api.cc: the SCIM service provider, with SCIM's error bodies
  void AddConsoleRoutes();    // console_api.cc: the web console's files, signing in and out
  // A path under /scim/v2 no route matches, or a method its route lacks:
  // authenticated, then answered with a SCIM error (RFC 7644 §3.12).
  void ScimUnrouted(HttpRequest& req, const Router::Match& match, Reply reply);
  void ScimRoute(const char* method, const char* pattern,
                 std::function<Result<nlohmann::json>(HttpRequest&, const std::string& base)> handler,
                 int success_status = 200);
  // The same with the success status decided per request.
  void ScimRoute(const char* method, const char* pattern,
                 std::function<Result<nlohmann::json>(HttpRequest&, const std::string& base)> handler,
                 std::function<int(const HttpRequest&)> success);

  // Jobs. Submitting, cancelling and registering a checkpoint answer once
  // their commit is done.
  void SubmitJob(HttpRequest& req, Reply reply);
  void CancelJob(HttpRequest& req, Reply reply);
  void RegisterCheckpoint(HttpRequest& req, Reply reply);
  Result<HttpResponse> ListJobs(HttpRequest& req);
  Result<HttpResponse> GetJob(HttpRequest& req);
  Result<HttpResponse> ExplainJob(HttpRequest& req);
  Result<HttpResponse> JobLogs(HttpRequest& req);
  Result<HttpResponse> ListCheckpoints(HttpRequest& req);
  // Adds what `job`'s running attempt (the last of `attempts`) has cost so
  // far to its cost_micros, and to that attempt's in job["attempts"].
  Status AddRunningCost(const std::vector<Attempt>& attempts, nlohmann::json& job) const;
  // The job {id} if the caller may see it; kNotFound otherwise.
  Result<JobDetail> VisibleJob(HttpRequest& req);
  // A submission's body: the spec as YAML (application/yaml), or JSON with
  // `spec` (a YAML string or an object), `file`, `envs` and `secrets`.
  static Result<SubmitRequest> ReadSubmission(HttpRequest& req);

  // Planning: a job not yet submitted, and a queued one.
  Result<HttpResponse> PlanJob(HttpRequest& req);
  Result<HttpResponse> PlanQueuedJob(HttpRequest& req);
  Result<HttpResponse> PlanHistory(HttpRequest& req);
  // A queued job's forecast for explain: {"error": ...} when there is none.
  nlohmann::json ExpectedStart(const std::string& job_id);
  // The pipeline `job` is a step of (PipelineJson), with the steps `who`
  // may see (a step may be another team's) in order as `jobs`: what the
  // job and explain pages show.
  Result<nlohmann::json> PipelineOf(const identity::Principal& who, const JobRecord& job) const;

  // Queues, clusters, providers; telemetry.
  Result<HttpResponse> ListQueues(HttpRequest& req);
  Result<HttpResponse> ListQueuedJobs(HttpRequest& req);
  Result<HttpResponse> QueueHistory(HttpRequest& req);
  Result<HttpResponse> SetOutage(HttpRequest& req);
  Result<HttpResponse> ListClusters(HttpRequest& req);
  Result<HttpResponse> Capacity(HttpRequest& req);
  Result<HttpResponse> PushTelemetry(HttpRequest& req);

  // Datasets.
  Result<HttpResponse> ListDatasets(HttpRequest& req);
  Result<HttpResponse> DatasetVersions(HttpRequest& req);
  Result<HttpResponse> ShowDataset(HttpRequest& req);
  Result<HttpResponse> DatasetManifest(HttpRequest& req);
  Result<HttpResponse> RegisterDataset(HttpRequest& req);
  Result<HttpResponse> VerifyDataset(HttpRequest& req);
  Result<HttpResponse> ReplicateDataset(HttpRequest& req);
  Result<HttpResponse> GetReplication(HttpRequest& req);

  // Cost.
  Result<HttpResponse> CostShowback(HttpRequest& req);
  Result<HttpResponse> ListBills(HttpRequest& req);
  Result<HttpResponse> ImportBill(HttpRequest& req);
  Result<HttpResponse> ReconcileCost(HttpRequest& req);
  Result<HttpResponse> CostWaste(HttpRequest& req);
  Result<HttpResponse> ExportUsage(HttpRequest& req);

  // Audit.
  Result<HttpResponse> ListAudit(HttpRequest& req);
  Result<HttpResponse> VerifyAudit(HttpRequest& req);
  Result<HttpResponse> ReadAuditFeed(HttpRequest& req);
  Result<HttpResponse> ImportAuditLog(HttpRequest& req);
  Result<HttpResponse> CreateCheckpoint(HttpRequest& req);
  Result<HttpResponse> AuditKeys(HttpRequest& req);
  Result<HttpResponse> AuditCoverage(HttpRequest& req);
  Result<HttpResponse> SearchAudit(HttpRequest& req);
  Result<HttpResponse> AuditPerson(HttpRequest& req);
  Result<HttpResponse> ListIdentityLinks(HttpRequest& req);
  Result<HttpResponse> CreateIdentityLink(HttpRequest& req);
  Result<HttpResponse> DeleteIdentityLink(HttpRequest& req);

  // Tokens and access.
  Result<HttpResponse> CreateToken(HttpRequest& req);
  Result<HttpResponse> ListTokens(HttpRequest& req);
  Result<HttpResponse> RevokeToken(HttpRequest& req);
  Result<HttpResponse> RotateToken(HttpRequest& req);
  Result<HttpResponse> ReassignToken(HttpRequest& req);
  Result<HttpResponse> WhoAmI(HttpRequest& req);
  Result<HttpResponse> ExplainAccess(HttpRequest& req);
  Result<HttpResponse> ListBindings(HttpRequest& req);
  Result<HttpResponse> CreateBinding(HttpRequest& req);
  Result<HttpResponse> DeleteBinding(HttpRequest& req);
  Result<HttpResponse> ConfirmBinding(HttpRequest& req);

  // People.
  Result<HttpResponse> Credentials(HttpRequest& req);
  Result<HttpResponse> SyncPerson(HttpRequest& req);
  Result<HttpResponse> DeactivatePerson(HttpRequest& req);

  // Break-glass.
  Result<HttpResponse> RequestBreakglass(HttpRequest& req);
  Result<HttpResponse> ListBreakglass(HttpRequest& req);
  Result<HttpResponse> ApproveBreakglass(HttpRequest& req);
  Result<HttpResponse> RevokeBreakglass(HttpRequest& req);
  Result<HttpResponse> BreakglassCredential(HttpRequest& req);

  // Workload identity.
  Result<HttpResponse> OidcDiscovery(HttpRequest& req);
  Result<HttpResponse> Jwks(HttpRequest& req);
  Result<HttpResponse> RefreshWorkloadToken(HttpRequest& req);
  Result<HttpResponse> RotateSigningKeys(HttpRequest& req);

  // Provenance.
  Result<HttpResponse> JobProvenance(HttpRequest& req);
  Result<HttpResponse> ProvenanceKeys(HttpRequest& req);
  Result<HttpResponse> ExportProvenance(HttpRequest& req);
  Result<HttpResponse> RecordJobFacts(HttpRequest& req);
  Result<HttpResponse> RerunSpec(HttpRequest& req);

  // Readiness.
  Result<HttpResponse> Readiness(HttpRequest& req);
  Result<HttpResponse> ReadinessControls(HttpRequest& req);
  Result<HttpResponse> ReadinessOscal(HttpRequest& req);
  Result<HttpResponse> ReadinessQuestions(HttpRequest& req);
  Result<HttpResponse> RecordAcceptance(HttpRequest& req);
  Result<HttpResponse> AcceptanceRuns(HttpRequest& req);

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

  Store& store_;
  CommitQueue& queue_;
  const Estate& estate_;
  const Clock& clock_;
  const Clock& wall_;
  SchedulerService* scheduler_;
  ReaperService* reaper_ = nullptr;
  JobService& jobs_;
  TokenService& tokens_;
  ScimService& scim_;
  BindingService& bindings_;
  PeopleService& people_svc_;
  BreakglassService& breakglass_;
  AuditService& audit_;
  CheckpointService& checkpoints_;
  ProvenanceService& provenance_;
  ReadinessService& readiness_;
  PlanService& plans_;
  AcceptanceService& acceptance_;
  DatasetService& datasets_;
  FeedReaders& feed_readers_;
  WorkloadService& workload_;
  identity::TokenCache& token_cache_;
  identity::PersonDirectory& directory_;
  identity::PeopleAuthenticator* people_;  // null without an IdP
  Router router_;
  Metrics metrics_;
  std::atomic<uint64_t> jobs_submitted_{0};
  std::atomic<bool> plan_replaying_{false};  // PlanHistory runs one replay at a time
  console::SessionStore sessions_;
  std::unique_ptr<console::OidcSignIn> sign_in_;  // null without an IdP
  mutable Mutex public_url_mu_;
  std::string public_url_ GUARDED_BY(public_url_mu_);
  // The last verification of the whole trail and when it was made
  // (VerifyAudit). Only verifications take verify_mu_, and they hold it
  // while they read the chain, so that requests arriving meanwhile wait
  // for that one instead of each reading it again.
  Mutex verify_mu_;
  std::optional<std::pair<Timestamp, nlohmann::json>> verified_ GUARDED_BY(verify_mu_);
  // Sign-ins talk to the IdP here, off the HTTP server's threads; declared
  // last so it stops first.
  dispatch::Worker sign_in_worker_{"console sign-in", 16};
};

}  // namespace causeway::api
