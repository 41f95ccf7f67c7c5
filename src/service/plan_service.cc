#include "service/plan_service.h"

namespace causeway {
namespace {

// The jobs of a submission as the scheduler would be handed them: a
// pipeline's steps each after the one before, a job group's tasks (none
// started yet) as the scheduler reads a group.
std::vector<scheduler::JobInput> InputsOf(const CheckedSubmission& checked) {
  std::vector<SchedulerService::GroupTask> tasks;
  for (const JobRecord& job : checked.jobs) tasks.push_back({job.id, job.state, 0, job.auxiliary});
  std::vector<scheduler::JobInput> out;
  for (size_t i = 0; i < checked.jobs.size(); ++i) {
    const JobRecord& job = checked.jobs[i];
    scheduler::JobInput in{job.id, checked.specs[i], job.created_at};
    in.after = job.after;
    if (job.job_group) SchedulerService::GroupInput(job, &tasks, in);
    out.push_back(std::move(in));
  }
  return out;
}

}  // namespace

Result<SubmissionPlan> PlanService::PlanSubmission(const identity::Principal& who, SubmitRequest request) {
  SubmissionPlan plan;
  ASSIGN_OR_RETURN(plan.checked, jobs_.Check(who, std::move(request)));
  std::vector<std::string> ids;
  for (const JobRecord& job : plan.checked.jobs) ids.push_back(job.id);
  ASSIGN_OR_RETURN(plan.forecast, Run(InputsOf(plan.checked), ids));
  return plan;
}

Result<planning::Forecast> PlanService::PlanQueued(const std::string& job_id, std::chrono::milliseconds budget) {
  planning::ForecastOptions options;
  options.budget = budget;
  return Run({}, {job_id}, options);
}

Result<planning::Forecast> PlanService::Run(std::vector<scheduler::JobInput> candidates,
                                            const std::vector<std::string>& jobs,
                                            const planning::ForecastOptions& options) {
  if (!scheduler_) return FailedPrecondition("this server runs no scheduler, so nothing can be planned");
  struct Slot {
    std::atomic<int>& n;
    ~Slot() { n.fetch_sub(1); }
  } slot{running_};
  if (running_.fetch_add(1) >= kAtOnce) {
    return ResourceExhausted("the server is already running " + std::to_string(kAtOnce) + " plans; ask again shortly");
  }
  ASSIGN_OR_RETURN(auto snapshot, scheduler_->Snapshot());
  return planning::RunAhead(estate_, *snapshot, clock_.Now(), std::move(candidates), jobs, options);
}

}  // namespace causeway
