// When would a job likely start, where, and at what cost: the production
// scheduler (scheduler::Engine) run ahead in virtual time from a snapshot
// of the live one (Engine::Snapshot), on a simulated copy of the estate.
// Past its first steps it decides less often than attempts end (each step
// covers a share of the time already looked ahead); an attempt started at
// such a step starts when its nodes were freed, so no capacity idles
// between steps, and the start is known to within the step's window.
// What "likely" assumes, and so what it cannot know:
//   - every attempt, running or to come, runs its expected time: its spec's
//     `sim.duration` (1 h unless the spec says), cut at its `time_limit`;
//     a running attempt already past it ends at once;
//   - nothing fails and nothing is preempted by its backend (Causeway's
//     own preemption and reclaiming happen as they would);
//   - no other work arrives, and each cluster has the capacity the estate
//     gives it, less what Causeway runs there.
// So the answer is the scheduler's own decisions on that future, not a
// promise. `causeway plan job`, POST /v1/plan/job and explain use it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/status.h"
#include "scheduler/engine.h"

namespace causeway::planning {

struct ForecastOptions {
  // How far ahead it looks: a job that would not start by then is
  // reported as not starting.
  Micros horizon{std::chrono::hours(24 * 30)};
  // The first `exact_steps` scheduling steps are taken at each event (an
  // attempt's end); after that a step covers at least a `coarse_share` of
  // the time already looked ahead, so a run-ahead takes a bounded number
  // of steps and a start far off is known to within that share.
  int exact_steps = 16;
  double coarse_share = 1.0 / 8;
  // Wall time it may take (checked between steps): past it, it stops
  // where it got to, and a job not started by then "would not start
  // before" that moment. A plan is CPU work done for a caller; this bounds it.
  std::chrono::milliseconds budget{2000};
};

// One job's forecast.
struct JobForecast {
  std::string job;
  std::string queue;                 // "" when the estate has none
  int64_t position = 0, queued = 0;  // in its queue's admission order when the snapshot was taken (1 is next)
  bool starts = false;               // within the horizon
  Timestamp start;                   // when starts: when
  Micros precision{0};               // ...known to within this (the window of the step that started it)
  scheduler::Placement placement;    // when starts: where
  Micros run_for{0};                 // its expected run time
  int64_t cost_micros = 0;           // the expected cost of that attempt
  // When it does not start: why (the run-ahead's last word on it).
  std::string waiting;
};

struct Forecast {
  Timestamp as_of;         // where the run-ahead starts
  Timestamp horizon;       // where it stopped looking
  bool cut_short = false;  // the budget ran out before the horizon
  std::vector<JobForecast> jobs;  // in the order asked
  int64_t steps = 0;       // scheduling steps taken
  int64_t held = 0;        // jobs of the snapshot carried into the run-ahead
  int64_t not_carried = 0;  // ...and those it could not take (the estate changed under them)
};

// Runs `snapshot` ahead on `estate` (the estate the snapshot's engine
// ran) from `from` (the live clock's now; no earlier than the snapshot's
// time, which is taken when earlier), with `candidates` submitted then (jobs not yet
// submitted; a pipeline's steps and a job group's tasks as the server would
// hand them over), until each job of `jobs` (held by the snapshot or among
// the candidates) has started or the horizon is reached. kInvalidArgument
// for a candidate the scheduler refuses, kNotFound for a job neither holds.
Result<Forecast> RunAhead(const Estate& estate, const scheduler::EngineSnapshot& snapshot, Timestamp from,
                          std::vector<scheduler::JobInput> candidates, const std::vector<std::string>& jobs,
                          const ForecastOptions& options = {});

}  // namespace causeway::planning
