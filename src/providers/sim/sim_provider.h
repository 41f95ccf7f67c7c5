// A simulated GPU cloud: node pools with per-node GPU allocation, gang
// placement, attempts that run for their `sim.duration`, spot preemptions and
// node failures drawn from the provider's rates with a fixed seed, idle and
// busy utilization, and outages switched on and off. Runs on whatever time it
// is given, so it serves the server (scaled real time) and tests and
// planning (virtual time) alike. Not thread-safe: its owner serializes calls.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "causeway/estate.h"
#include "causeway/provider.h"
#include "providers/capabilities.h"
#include "providers/sim/sim_settings.h"

namespace causeway::providers {
class Registry;
}

namespace causeway::sim {

// Registers the "sim" kind (providers/kinds.cc); CAUSEWAY_SIM_DISPATCH_LOG,
// when set, names each adapter's dispatch log.
[[nodiscard]] Status Register(providers::Registry& registry);

// How long an attempt runs when nothing cuts it short: its `sim.duration`,
// cut at its `time_limit` (a timeout).
inline Micros ExpectedRun(const SimHint& sim, const std::optional<Micros>& time_limit) {
  return time_limit && *time_limit < sim.duration ? *time_limit : sim.duration;
}

class SimProvider final : public ProviderAdapter, public providers::OutageDrill {
 public:
  // Simulates every cluster of `provider` in `estate`. The same seed and the
  // same calls give the same events.
  SimProvider(const Estate& estate, const Provider& provider, uint64_t seed);

  const std::string& name() const override { return name_; }
  Result<std::string> Launch(const LaunchRequest& request, Timestamp now) override;
  Status Restore(const LaunchRequest& request, Timestamp started_at) override;
  Status Cancel(const std::string& job_id, int attempt) override;
  // The simulated run starts at Launch, held or not; Release only marks the
  // moment a real backend would have received it (the dispatch log).
  void Release(const RecordedLaunch& launch) override;
  std::vector<ProviderEvent> Poll(Timestamp now) override;
  int ResolvePool(const std::string& cluster, const std::string& pool) const override;
  bool Fits(int pool, int gpus_per_node, int nodes) const override;
  int FreeGpus(int pool) const override;
  bool Healthy(int) const override { return !outage_; }
  bool RunsCommands() const override { return false; }
  std::vector<GpuSample> SampleUtilization(Timestamp now) const override;
  Result<std::string> ReadLog(const std::string&, const std::string& job_id, int, int64_t, int64_t) const override {
    return NotFound("job " + job_id + " ran on the simulated estate, which runs no programs and keeps no output");
  }

  // Appends "JOB ATTEMPT" to `path` for every launch (not re-adoptions)
  // when a real backend would receive it: at Launch, or at Release for a
  // held launch (one cancelled first is never written). One write each, so
  // several processes can share the file: a check that no attempt is ever
  // dispatched twice across replicas.
  void SetDispatchLog(std::string path) { dispatch_log_ = std::move(path); }

  // The nodes of pool `pool` (a ResolvePool handle) with at least
  // `at_least` GPUs free, and the free GPUs on them: {nodes, gpus}. For
  // planning's measure of stranded GPUs.
  std::pair<int, int> FreeOn(int pool, int at_least) const;

  // Replays of a recorded run (planning): attempt `attempt` of `job_id`
  // runs `run_for` and ends as `outcome` with `exit_code`, whatever the
  // provider's rates would draw.
  void Script(const std::string& job_id, int attempt, Micros run_for, AttemptOutcome outcome, int exit_code) {
    scripts_[{job_id, attempt}] = {run_for, outcome, exit_code};
  }

  // Draws no spot preemption or node failure from here on: every attempt
  // runs its expected time (planning's run-ahead, planning/forecast.h).
  void ExpectedTimesOnly() { behaviour_.spot_preemption_per_hour = behaviour_.node_failure_per_hour = 0; }

  // For a driver that decides less often than attempts end (planning's
  // coarse steps): an attempt launched at `now` starts when its nodes were
  // last freed, no earlier than `floor` (the first end the step took in),
  // so capacity freed within the step is not left idle until it. Unset
  // (the default): attempts start when launched.
  void BackdateLaunchesTo(std::optional<Timestamp> floor) { backdate_floor_ = floor; }
  // When the attempt started on this provider, while it runs.
  std::optional<Timestamp> StartedAt(const std::string& job_id, int attempt) const;

  // When the next running attempt ends, if any: lets virtual-time drivers
  // (planning, benchmarks) jump straight to the next event.
  std::optional<Timestamp> NextEventTime();

  // Takes the provider down (every running attempt ends with
  // kProviderOutage at `now`) or brings it back.
  void SetOutage(bool down, Timestamp now) override;

 private:
  // Free GPUs per node, with nodes bucketed by free count for O(1) fits.
  struct Pool {
    int gpus_per_node = 0;  // GPUs, or a CPU-only pool's CPUs
    bool cpu_only = false;
    std::vector<int> free;                  // per node
    std::vector<std::vector<int>> buckets;  // free count -> nodes
    std::vector<int> pos;                   // node -> index in its bucket
    std::vector<int64_t> freed_at;          // per node: when GPUs on it were last freed (unix micros), once any were
    int free_total = 0;
    void Move(int node, int new_free);
  };
  struct Running {
    LaunchRequest request;
    std::vector<int> nodes;
    bool cpu_only = false;  // on a CPU-only pool: no GPU to sample
    Timestamp started;
    Timestamp ends;
    AttemptOutcome outcome;
    std::string reason;
    int exit_code = 0;
  };
  using Key = std::pair<std::string, int>;  // job id, attempt

  Pool* FindPool(const std::string& cluster, const std::string& pool);
  static bool Fits(const Pool& p, int gpus_per_node, int nodes);
  Status Place(const LaunchRequest& request, Timestamp started, Timestamp now);
  void FreeRoom(const Running& r);  // gives back what the attempt held

  std::string name_;
  SimBehaviour behaviour_;
  uint64_t seed_;
  bool outage_ = false;
  std::map<std::string, std::map<std::string, Pool>> pools_;  // cluster -> pool name -> state
  std::vector<Pool*> handles_;                                // ResolvePool's handles
  std::map<Key, Running> running_;
  // (end time, key), earliest first; entries for cancelled attempts are skipped.
  std::priority_queue<std::pair<int64_t, Key>, std::vector<std::pair<int64_t, Key>>, std::greater<>> ends_;
  std::vector<ProviderEvent> outage_events_;
  std::string dispatch_log_;
  std::optional<Timestamp> backdate_floor_;  // BackdateLaunchesTo
  std::set<Key> held_;  // held launches not yet released, while dispatch_log_ is set
  struct Fate {
    Micros run_for{0};
    AttemptOutcome outcome = AttemptOutcome::kSucceeded;
    int exit_code = 0;
  };
  std::map<Key, Fate> scripts_;
  // A scripted attempt's run time and end in place of the drawn ones.
  void ApplyScript(const Key& key, Micros& run_for, Running& run) const;
  void LogDispatch(const std::string& job_id, int attempt) const;
};

}  // namespace causeway::sim
