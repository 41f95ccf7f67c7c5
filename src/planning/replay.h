// A replay: a trace's jobs submitted, at their times, to the production
// scheduler (scheduler::Engine: quotas, policy, routing, preemption,
// recovery, budgets) on a simulated copy of an estate, in virtual time. The
// simulated providers draw spot preemptions and node failures from each
// provider's `sim` rates with the replay's seed. Nothing here decides where
// or when a job runs; the replay only watches what the engine reports.
//
// Measured over the replay's span (the first submission to the last end):
//   wait        submission to the first attempt's start (jobs that started)
//   completion  submission to the successful end (completed jobs)
//   utilization allocated GPU-seconds over available GPU-seconds
//   goodput     the useful share of it: GPU-seconds of attempts that
//               succeeded, times the trace's useful share where it gives one
//   stranded    free GPUs no waiting job can use, while any job waits: a
//               pool's free GPUs on nodes with fewer free than the smallest
//               per-node count a waiting job that may use the pool asks for
//               (all of them when none may, or when no such job's gang finds
//               enough nodes) — fragmentation as "Beware of Fragmentation"
//               (ATC '23) measures it, at every scheduling step
//   reservations reserved GPU-seconds used, and the committed cost of what
//               went unused
//   cost        every attempt at its price, plus unused reservations
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/status.h"
#include "planning/trace.h"

namespace causeway::planning {

struct ReplayOptions {
  uint64_t seed = 1;
  Timestamp start = FromUnixMicros(1'767'225'600'000'000);  // the trace's time 0 (2026-01-01)
  // Jobs without a team, or of a team the estate has no queue for, run as
  // this team ("" leaves them so: the engine refuses them where queues are
  // configured, and they are counted as refused).
  std::string default_team;
  // Trace GPU type -> estate GPU type (`--gpu-type V100M32=A100-80GB`).
  std::map<std::string, std::string> gpu_types;
  // Every job may use any GPU type of the estate.
  bool any_gpu_type = false;
  // At most this many points in each time series.
  int series_points = 400;
  // For a history trace: replay the recorded run itself. Every attempt
  // the provider ended runs as long as it did and ends as it did, people's
  // cancellations happen when they did, and the scheduler decides at the
  // moments the live one did (the recorded starts), so the replay must make
  // the same decisions: RunResult::fidelity says whether it did.
  bool fidelity = false;
};

// How a replay of a recorded run compares with the record.
struct Fidelity {
  int64_t jobs = 0, attempts = 0;
  bool same_order = true;       // every job first started when it did
  bool same_placements = true;  // every attempt on the cluster and pool it had
  std::vector<std::string> differences;  // the first 20, in words
};

// What one group of jobs (all, a team, a GPU type, a zone) saw.
struct GroupStats {
  int64_t jobs = 0, completed = 0, failed = 0, cancelled = 0, never_started = 0;
  std::vector<int64_t> waits_s;  // per started job
  std::vector<int64_t> completion_s;  // per completed job
  // GPU type and zone groups have capacity; team groups do not.
  double available_gpu_s = 0, allocated_gpu_s = 0, goodput_gpu_s = 0, stranded_gpu_s = 0;
  int64_t preemptions = 0;
  int64_t node_failures = 0;  // attempts ended by a node or GPU fault
  double borrowed_gpu_s = 0;
  int64_t cost_micros = 0;  // attempts (and, for "all", unused reservations)
};

struct ReservationStats {
  std::string name, cluster, gpu_type;
  int64_t gpus = 0;
  double capacity_gpu_s = 0;  // GPUs times its time within the span
  double used_gpu_s = 0;
  int64_t committed_micros = 0, unused_micros = 0;
};

// Totals over time, `interval_s` per point (time-weighted means).
struct Series {
  int64_t interval_s = 60;
  int64_t available_gpus = 0;
  std::vector<float> allocated, stranded, pending;
};

struct RunResult {
  uint64_t seed = 0;
  int64_t span_s = 0;
  int64_t refused = 0;  // jobs the engine would not take
  std::map<std::string, int64_t> refusals;  // reason -> jobs (at most 20 reasons)
  // "all", "team:NAME", "gpu:TYPE", "zone:ZONE"
  std::map<std::string, GroupStats> groups;
  std::vector<ReservationStats> reservations;
  Series series;
  int64_t unused_reservation_micros = 0;
  uint64_t ticks = 0;
  std::optional<Fidelity> fidelity;  // ReplayOptions::fidelity
};

// Replays `trace` on `estate` (each provider simulated, whatever its kind).
// kInvalidArgument for options the estate cannot honour (an unknown
// default team).
Result<RunResult> Replay(const Estate& estate, const Trace& trace, const ReplayOptions& options);

// The p-th percentile (nearest rank) of `values` (sorted in place); 0 when
// empty. Every percentile planning reports is this one.
template <typename T>
T Percentile(std::vector<T>& values, double p) {
  if (values.empty()) return T{};
  std::sort(values.begin(), values.end());
  auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(values.size())));
  return values[std::min(values.size(), std::max<size_t>(rank, 1)) - 1];
}

}  // namespace causeway::planning
