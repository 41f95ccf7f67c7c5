// The REST/JSON API: routes, authentication, authorization by scope, and one
// error shape for every failure:
//   {"error": {"code": "not_found", "message": "...", "details": {...}}}
#pragma once

#include <atomic>
#include <string>

#include "api/http_types.h"
#include "api/metrics.h"
#include "api/router.h"
#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "identity/oidc.h"
#include "identity/token_cache.h"
#include "identity/workload.h"
#include "service/job_service.h"
#include "service/reaper_service.h"
#include "service/scheduler_service.h"
#include "service/audit_service.h"
#include "service/binding_service.h"
#include "service/checkpoint_service.h"
#include "service/breakglass_service.h"
#include "service/people_service.h"
#include "service/scim_service.h"
#include "service/token_service.h"
#include "store/commit_queue.h"

namespace causeway::api {

class ApiService {
 public:
  // `scheduler` and `policies` may be null: jobs are then only recorded.
  ApiService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
             SchedulerService* scheduler = nullptr, const policy::Chain* policies = nullptr);

  // Causeway's workload identity issuer: publishes its discovery document
  // and JWKS, refreshes attempts' tokens. Null when not configured.
  void SetWorkloadIssuer(identity::WorkloadIssuer* issuer) { workload_ = issuer; }

  // Where pushed GPU samples go; without it (no reaper policies) pushes are
  // refused.
  void SetReaper(ReaperService* reaper) { reaper_ = reaper; }

  // Signs the audit chain's head (see CheckpointService); the server calls
  // it every --audit-checkpoint-interval.
  Result<std::optional<AuditEvent>> CheckpointAudit() { return checkpoints_.Checkpoint("causeway"); }

  // Handles one request; calls `reply` exactly once.
  void Dispatch(HttpRequest& req, Reply reply);

  // What the HTTP server did with connections, shown in /metrics; set by
  // the owner of the HTTP server.
  std::function<ConnectionStats()> connection_stats;

 private:
  // Adds a route that needs a token with `scope` ("" means any valid token).
  // An authenticated route needing `scope`. With `job_credential`, the
  // credential of an attempt of job {id} is enough too.
  void Route(const char* method, const char* pattern, std::string_view scope, Handler handler,
             bool job_credential = false);
  void Public(const char* method, const char* pattern, Handler handler);
  // The principal of `req` if its token allows `needed` ("" for any valid
  // token); kUnauthenticated or kPermissionDenied otherwise.
  Result<identity::Principal> Authorize(HttpRequest& req, const std::string& needed, bool job_credential);
  void AddRoutes();
  // /scim/v2/...: the SCIM service provider (api/scim_api.cc), with SCIM's
  // error bodies for every failure, authentication included.
  void AddScimRoutes();
  // /v1/audit/... beyond the chain itself (api/audit_api.cc).
  void AddAuditRoutes();
  void ScimRoute(const char* method, const char* pattern,
                 std::function<Result<nlohmann::json>(HttpRequest&, const std::string& base)> handler,
                 int success_status = 200);

  // The job {id} if the caller may see it; kNotFound otherwise.
  Result<JobDetail> VisibleJob(HttpRequest& req);

  void SubmitJob(HttpRequest& req, Reply reply);
  void ListJobs(HttpRequest& req, Reply reply);
  void GetJob(HttpRequest& req, Reply reply);
  void CancelJob(HttpRequest& req, Reply reply);
  void ExplainJob(HttpRequest& req, Reply reply);
  void RegisterCheckpoint(HttpRequest& req, Reply reply);
  void JobLogs(HttpRequest& req, Reply reply);
  void ListCheckpoints(HttpRequest& req, Reply reply);
  void ListQueues(HttpRequest& req, Reply reply);
  void SetOutage(HttpRequest& req, Reply reply);
  void ListClusters(HttpRequest& req, Reply reply);
  void CostShowback(HttpRequest& req, Reply reply);
  void PushTelemetry(HttpRequest& req, Reply reply);
  void ListBills(HttpRequest& req, Reply reply);
  void ListAudit(HttpRequest& req, Reply reply);
  void VerifyAudit(HttpRequest& req, Reply reply);
  void CreateToken(HttpRequest& req, Reply reply);
  void ListTokens(HttpRequest& req, Reply reply);
  void RevokeToken(HttpRequest& req, Reply reply);
  void RotateToken(HttpRequest& req, Reply reply);
  void WhoAmI(HttpRequest& req, Reply reply);
  void Credentials(HttpRequest& req, Reply reply);
  void ListBindings(HttpRequest& req, Reply reply);
  void CreateBinding(HttpRequest& req, Reply reply);
  void DeleteBinding(HttpRequest& req, Reply reply);
  void RequestBreakglass(HttpRequest& req, Reply reply);
  void ListBreakglass(HttpRequest& req, Reply reply);
  void ApproveBreakglass(HttpRequest& req, Reply reply);
  void RevokeBreakglass(HttpRequest& req, Reply reply);
  void BreakglassCredential(HttpRequest& req, Reply reply);
  void ConfirmBinding(HttpRequest& req, Reply reply);
  void ReassignToken(HttpRequest& req, Reply reply);
  void SyncPerson(HttpRequest& req, Reply reply);
  void DeactivatePerson(HttpRequest& req, Reply reply);
  void ExplainAccess(HttpRequest& req, Reply reply);
  void OidcDiscovery(HttpRequest& req, Reply reply);
  void Jwks(HttpRequest& req, Reply reply);
  void RefreshWorkloadToken(HttpRequest& req, Reply reply);
  void RotateSigningKeys(HttpRequest& req, Reply reply);
  void ImportAuditLog(HttpRequest& req, Reply reply);
  void CreateCheckpoint(HttpRequest& req, Reply reply);
  void AuditKeys(HttpRequest& req, Reply reply);
  void AuditCoverage(HttpRequest& req, Reply reply);
  void SearchAudit(HttpRequest& req, Reply reply);
  void AuditPerson(HttpRequest& req, Reply reply);
  void ListIdentityLinks(HttpRequest& req, Reply reply);
  void CreateIdentityLink(HttpRequest& req, Reply reply);
  void DeleteIdentityLink(HttpRequest& req, Reply reply);
  void Health(HttpRequest& req, Reply reply);
  void RenderMetrics(HttpRequest& req, Reply reply);

  Store& store_;
  ReaperService* reaper_ = nullptr;
  identity::WorkloadIssuer* workload_ = nullptr;
  CommitQueue& queue_;
  const Estate& estate_;
  const Clock& clock_;
  SchedulerService* scheduler_;
  JobService jobs_;
  TokenService tokens_;
  ScimService scim_;
  BindingService bindings_;
  PeopleService people_svc_;
  BreakglassService breakglass_;
  AuditService audit_;
  CheckpointService checkpoints_;
  identity::TokenCache token_cache_;
  identity::PersonDirectory directory_;
  // People signing in with the IdP's tokens, when the estate configures it.
  std::unique_ptr<identity::OidcVerifier> oidc_;
  std::unique_ptr<identity::PeopleAuthenticator> people_;
  Router router_;
  Metrics metrics_;
  std::atomic<uint64_t> jobs_submitted_{0};
};

// The JSON error response for `status`.
HttpResponse ErrorResponse(const Status& status);

}  // namespace causeway::api
