// /v1/plan/...: when a job would likely start, where and at what cost
// (service/plan_service.h). A plan is a read: it needs jobs:read, and a
// job not yet submitted is checked as its submission would be (the same
// team rights), so a plan says nothing a person could not learn by
// submitting.
#include "api/api_helpers.h"
#include "api/plan_api.h"
#include "api/jobs_api.h"
#include "causeway/money.h"
#include "planning/changes.h"
#include "planning/history.h"
#include "planning/plan.h"
#include "planning/report.h"
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

void PlanApi::AddRoutes(RouteTable& routes) {
  using namespace identity;
  routes.Route("POST", "/v1/plan/job", kScopeJobsRead, Bind(this, &PlanApi::PlanJob));
  routes.Route("GET", "/v1/plan/jobs/{id}", kScopeJobsRead, Bind(this, &PlanApi::PlanQueuedJob));
  // Every team's history, compared in cost and capacity: finance's and
  // platform's question, so cost:read.
  routes.Route("POST", "/v1/plan/history", kScopeCostRead, Bind(this, &PlanApi::PlanHistory));
}

// POST /v1/plan/history {since, seeds, add_reservation[], remove_cluster[],
// price[]}: the ledger's jobs submitted in the window replayed through the
// scheduler on the estate as it is and, when changes are given, on the
// estate with them (planning/plan.h), as `causeway plan trace
// --from-history` reports it, with the headline rows as the table shows
// them. One replay at a time (a second is refused, not queued); at most
// 200,000 jobs, 5 seeds and 20 changes.
Result<HttpResponse> PlanApi::PlanHistory(HttpRequest& req) {
  ASSIGN_OR_RETURN(JsonBody body, JsonBody::Parse(req));
  ASSIGN_OR_RETURN(std::string since, body.String("since", "30d"));
  auto window = ParseDuration(since);
  if (!window.ok() || *window <= Micros(0) || *window > std::chrono::hours(24 * 400)) {
    return InvalidArgument("field \"since\": expected a duration from 1s to 400d, e.g. 30d, not \"" + since + "\"");
  }
  ASSIGN_OR_RETURN(auto seeds, body.Int("seeds", 1, 5));
  planning::PlanRequest plan;
  plan.seeds = static_cast<int>(seeds.value_or(1));
  using K = planning::EstateChange::Kind;
  for (auto [kind, field] : {std::pair{K::kAddReservation, "add_reservation"}, {K::kRemoveCluster, "remove_cluster"},
                             {K::kPrice, "price"}}) {
    ASSIGN_OR_RETURN(std::vector<std::string> texts, body.Strings(field));
    for (const std::string& text : texts) {
      if (plan.changes.size() >= 20) return InvalidArgument("at most 20 changes in one plan");
      auto change = planning::ParseChange(kind, text);
      if (!change.ok()) return change.status().WithPrefix(std::string("field \"") + field + "\"");
      plan.changes.push_back(std::move(*change));
    }
  }
  bool idle = false;
  if (!plan_replaying_.compare_exchange_strong(idle, true)) {
    return Unavailable("another plan is being replayed; ask again when it is done");
  }
  struct Done {
    std::atomic<bool>& flag;
    ~Done() { flag = false; }
  } done{plan_replaying_};
  // The server's clock (it may run ahead of the wall's under --sim-speed).
  const Timestamp origin = clock_.Now() - *window;
  planning::TraceLimits limits;
  limits.max_jobs = 200'000;
  ASSIGN_OR_RETURN(planning::Trace trace, planning::ReadHistory(store_, origin, Timestamp::max(), limits));
  plan.estates.push_back({"the estate as it is", estate_});
  plan.options.start = origin;
  ASSIGN_OR_RETURN(json report, planning::PlanTrace(trace, std::move(plan)));
  report["headline_rows"] = planning::HeadlineRows(report);
  return JsonResponse(200, report);
}

Result<HttpResponse> PlanApi::PlanJob(HttpRequest& req) {
  ASSIGN_OR_RETURN(SubmitRequest sr, ReadSubmission(req));
  ASSIGN_OR_RETURN(SubmissionPlan plan, plans_.PlanSubmission(*req.principal, std::move(sr)));
  json body = ForecastJson(plan.forecast, estate_.currency);
  // What the jobs would be called; their ids are the plan's own, never used.
  for (size_t i = 0; i < plan.checked.jobs.size() && i < body["jobs"].size(); ++i) {
    body["jobs"][i]["name"] = plan.checked.jobs[i].name;
    body["jobs"][i]["team"] = plan.checked.jobs[i].team;
    // The zone the job would be bound to once policies applied (null: none).
    const std::string& zone = i < plan.checked.specs.size() ? plan.checked.specs[i].residency : "";
    body["jobs"][i]["residency"] = zone.empty() ? json() : json(zone);
  }
  json warnings = json::array();
  for (const auto& w : plan.checked.warnings) warnings.push_back(ToJson(w));
  body["warnings"] = std::move(warnings);
  return JsonResponse(200, body);
}

Result<HttpResponse> PlanApi::PlanQueuedJob(HttpRequest& req) {
  ASSIGN_OR_RETURN(JobDetail detail, VisibleJob(jobs_, req));
  if (detail.job.state != JobState::kPending) {
    return FailedPrecondition("job " + detail.job.id + " is " + std::string(JobStateName(detail.job.state)) +
                              ": only a pending job has a start to forecast");
  }
  ASSIGN_OR_RETURN(planning::Forecast f, plans_.PlanQueued(detail.job.id));
  return JsonResponse(200, ForecastJson(f, estate_.currency));
}

json ExpectedStart(PlanService& plans, const Estate& estate, const std::string& job_id) {
  // Explain answers at once: its forecast looks ahead for 300 ms at most.
  auto f = plans.PlanQueued(job_id, std::chrono::milliseconds(300));
  if (!f.ok()) return {{"error", {{"code", std::string(CodeName(f.status().code()))}, {"message", f.status().message()}}}};
  json out = ForecastJson(*f, estate.currency);
  json job = out["jobs"].empty() ? json::object() : out["jobs"][0];
  job["as_of"] = out["as_of"];
  return job;
}

}  // namespace causeway::api
