// /v1/jobs/...: submission, listing, cancellation, explanation, logs and
// checkpoints; a job is visible to whoever may read its team.
// Built by ApiService with only the services below.
#pragma once

#include <atomic>
#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "service/dataset_service.h"
#include "service/job_service.h"
#include "service/plan_service.h"
#include "service/scheduler_service.h"

namespace causeway::api {

// The job {id} of `req` if its caller may see it; kNotFound otherwise (another
// team's job is not even confirmed to exist).
Result<JobDetail> VisibleJob(JobService& jobs, HttpRequest& req);
// A submission's body: the spec as YAML (application/yaml), or JSON with
// `spec` (a YAML string or an object), `file`, `envs` and `secrets`.
Result<SubmitRequest> ReadSubmission(HttpRequest& req);

class JobsApi final : public Area {
 public:
  JobsApi(Store& store, const Estate& estate, const Clock& clock, SchedulerService* scheduler, JobService& jobs,
          DatasetService& datasets, PlanService& plans, std::atomic<uint64_t>& jobs_submitted)
      : store_(store), estate_(estate), clock_(clock), scheduler_(scheduler), jobs_(jobs), datasets_(datasets),
        plans_(plans), jobs_submitted_(jobs_submitted) {}
  void AddRoutes(RouteTable& routes) override;

 private:
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
  // The pipeline `job` is a step of (PipelineJson), with the steps `who`
  // may see (a step may be another team's) in order as `jobs`: what the
  // job and explain pages show.
  Result<nlohmann::json> PipelineOf(const identity::Principal& who, const JobRecord& job) const;

  Store& store_;
  const Estate& estate_;
  const Clock& clock_;
  SchedulerService* scheduler_;
  JobService& jobs_;
  DatasetService& datasets_;
  PlanService& plans_;
  std::atomic<uint64_t>& jobs_submitted_;
};

}  // namespace causeway::api
