// /v1/plan/...: when a job would likely start, where and at what cost
// (service/plan_service.h). A plan is a read: it needs jobs:read, and a
// job not yet submitted is checked as its submission would be (the same
// team rights), so a plan says nothing a person could not learn by
// submitting.
#include "api/api_helpers.h"
#include "api/api_service.h"
#include "causeway/money.h"
#include "scheduler/explain_json.h"
#include "spec/spec_json.h"
#include "store/records_json.h"

namespace causeway::api {

using nlohmann::json;

namespace {

int64_t Seconds(Micros d) { return std::chrono::duration_cast<std::chrono::seconds>(d).count(); }

json ForecastJson(const planning::Forecast& f, const std::string& currency) {
  json jobs = json::array();
  for (const planning::JobForecast& j : f.jobs) {
    json o = {{"job", j.job}, {"starts", j.starts}, {"expected_run_seconds", Seconds(j.run_for)}};
    if (!j.queue.empty()) o["queue"] = j.queue;
    if (j.position > 0) o["position"] = {{"position", j.position}, {"queued", j.queued}};
    if (j.starts) {
      o["start"] = FormatRfc3339(j.start);
      o["start_in_seconds"] = Seconds(j.start - f.as_of);
      o["precision_seconds"] = Seconds(j.precision);
      o["placement"] = scheduler::ToJson(j.placement);
      o["expected_cost"] = {{"amount", Money(j.cost_micros, currency).AmountString()}, {"currency", currency}};
    } else {
      o["waiting"] = j.waiting;
    }
    jobs.push_back(std::move(o));
  }
  return {{"as_of", FormatRfc3339(f.as_of)},
          {"horizon", FormatRfc3339(f.horizon)},
          {"steps", f.steps},
          {"cut_short", f.cut_short},
          {"jobs_held", f.held},
          {"jobs", std::move(jobs)},
          {"assumes",
           "every attempt runs its expected time (sim.duration, cut at time_limit), nothing fails or is preempted by "
           "its backend, and no other work arrives"}};
}

}  // namespace

void ApiService::AddPlanRoutes() {
  using namespace identity;
  Route("POST", "/v1/plan/job", kScopeJobsRead, Bind(&ApiService::PlanJob));
  Route("GET", "/v1/plan/jobs/{id}", kScopeJobsRead, Bind(&ApiService::PlanQueuedJob));
}

Result<HttpResponse> ApiService::PlanJob(HttpRequest& req) {
  ASSIGN_OR_RETURN(SubmitRequest sr, ReadSubmission(req));
  ASSIGN_OR_RETURN(SubmissionPlan plan, plans_.PlanSubmission(*req.principal, std::move(sr)));
  json body = ForecastJson(plan.forecast, estate_.currency);
  // What the jobs would be called; their ids are the plan's own, never used.
  for (size_t i = 0; i < plan.checked.jobs.size() && i < body["jobs"].size(); ++i) {
    body["jobs"][i]["name"] = plan.checked.jobs[i].name;
    body["jobs"][i]["team"] = plan.checked.jobs[i].team;
  }
  json warnings = json::array();
  for (const auto& w : plan.checked.warnings) warnings.push_back(ToJson(w));
  body["warnings"] = std::move(warnings);
  return JsonResponse(200, body);
}

Result<HttpResponse> ApiService::PlanQueuedJob(HttpRequest& req) {
  ASSIGN_OR_RETURN(JobDetail detail, VisibleJob(req));
  if (detail.job.state != JobState::kPending) {
    return FailedPrecondition("job " + detail.job.id + " is " + std::string(JobStateName(detail.job.state)) +
                              ": only a pending job has a start to forecast");
  }
  ASSIGN_OR_RETURN(planning::Forecast f, plans_.PlanQueued(detail.job.id));
  return JsonResponse(200, ForecastJson(f, estate_.currency));
}

json ApiService::ExpectedStart(const std::string& job_id) {
  // Explain answers at once: its forecast looks ahead for 300 ms at most.
  auto f = plans_.PlanQueued(job_id, std::chrono::milliseconds(300));
  if (!f.ok()) return {{"error", {{"code", std::string(CodeName(f.status().code()))}, {"message", f.status().message()}}}};
  json out = ForecastJson(*f, estate_.currency);
  json job = out["jobs"].empty() ? json::object() : out["jobs"][0];
  job["as_of"] = out["as_of"];
  return job;
}

}  // namespace causeway::api
