// When a job would likely start, where, and what it would cost: planning's
// run-ahead (planning/forecast.h) from a snapshot of the live scheduler,
// for a job not yet submitted (`causeway plan job`, POST /v1/plan/job) and
// for one that waits (explain, GET /v1/plan/jobs/{id}).
//
// A run-ahead is CPU work in proportion to the jobs held, off the
// scheduler's lock (only the snapshot is taken under it, and reused while
// the engine has not changed). At most kAtOnce run at the same time; more
// are refused (kResourceExhausted: ask again) rather than queued behind them.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "identity/tokens.h"
#include "planning/forecast.h"
#include "service/job_service.h"
#include "service/scheduler_service.h"

namespace causeway {

struct SubmissionPlan {
  CheckedSubmission checked;   // what submitting would make
  planning::Forecast forecast;  // one per job made, in step order
};

class PlanService {
 public:
  static constexpr int kAtOnce = 2;

  // `scheduler` may be null: nothing is scheduled, so nothing can be planned.
  PlanService(const Estate& estate, SchedulerService* scheduler, const JobService& jobs, const Clock& clock)
      : estate_(estate), scheduler_(scheduler), jobs_(jobs), clock_(clock) {}

  // `request` checked exactly as a submission by `who` (the same refusals),
  // then run ahead with the jobs it would make, written nowhere.
  Result<SubmissionPlan> PlanSubmission(const identity::Principal& who, SubmitRequest request);
  // A queued job's forecast, looking ahead for at most `budget` of wall
  // time (explain asks with less). kNotFound when the scheduler does not
  // hold it, kFailedPrecondition when it is running already.
  Result<planning::Forecast> PlanQueued(const std::string& job_id,
                                        std::chrono::milliseconds budget = planning::ForecastOptions{}.budget);

 private:
  // Runs one run-ahead within the kAtOnce limit.
  Result<planning::Forecast> Run(std::vector<scheduler::JobInput> candidates, const std::vector<std::string>& jobs,
                                 const planning::ForecastOptions& options = {});

  const Estate& estate_;
  SchedulerService* scheduler_;
  const JobService& jobs_;
  const Clock& clock_;
  std::atomic<int> running_{0};
};

}  // namespace causeway
