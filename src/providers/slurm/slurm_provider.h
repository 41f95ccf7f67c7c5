// The Slurm provider adapter: runs attempts as Slurm batch jobs through
// slurmrestd or the CLI tools (slurm_api.h). The job's setup and run become
// the batch script; GPUs become --gres=gpu:<type>:<n> on -N nodes; the
// launch environment (injected provider settings, CAUSEWAY_*) is passed;
// output goes to <output_dir>/<job id>-<attempt>.log.
//
// States are reconciled every Poll from the controller's job list, so
// nothing is missed across a restart of Causeway. A job the controller has
// forgotten (it keeps finished jobs for MinJobAge only) is looked up in
// accounting when the cluster has it; only a job neither knows is lost.
//
// A cluster that cannot be reached is marked down and asked again after a
// backoff (1 s, doubling, at most 60 s): meanwhile launches to it fail at
// once with kUnavailable (the job stays queued in Causeway and the router
// places work elsewhere), and its running attempts are left alone until it
// answers again. Not thread-safe: its owner serializes calls.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "causeway/estate.h"
#include "causeway/provider.h"
#include "providers/slurm/slurm_api.h"

namespace causeway::slurm {

// How a Slurm job state ends an attempt: nullopt while it is still pending or
// running. A CANCELLED job seen here was stopped by someone else (Causeway's
// own cancellations are untracked first), which is retried.
std::optional<AttemptOutcome> OutcomeOf(const JobInfo& job);

// The interfaces a cluster's settings ask for, in order of preference.
std::unique_ptr<SlurmApi> ApiFor(const SlurmSettings& settings);

class SlurmProvider final : public ProviderAdapter {
 public:
  SlurmProvider(const Estate& estate, const Provider& provider);

  const std::string& name() const override { return name_; }
  Result<std::string> Launch(const LaunchRequest& request, Timestamp now) override;
  Status Restore(const LaunchRequest& request, Timestamp started_at) override;
  Status Cancel(const std::string& job_id, int attempt) override;
  std::vector<ProviderEvent> Poll(Timestamp now) override;
  int ResolvePool(const std::string& cluster, const std::string& pool) const override;
  bool Fits(int pool, int gpus_per_node, int nodes) const override;
  int FreeGpus(int pool) const override;
  bool Healthy(int pool) const override;
  // Slurm queues jobs itself: an attempt is admitted until Slurm runs it.
  bool StartsOnLaunch() const override { return false; }
  std::vector<GpuSample> SampleUtilization(Timestamp) const override { return {}; }
  Result<std::string> ReadLog(const std::string& cluster, const std::string& job_id, int attempt, int64_t offset,
                              int64_t max) const override;

  // How much work, in multiples of a pool's GPUs, Causeway keeps in Slurm.
  static constexpr int kBacklogFactor = 2;

  // Where an attempt's output is written.
  static std::string LogPath(const SlurmSettings& s, const std::string& job_id, int attempt);

 private:
  struct Pool {
    int cluster = 0;
    std::string name;
    int gpus_per_node = 0;
    int capacity = 0;  // GPUs
    int used = 0;      // GPUs of attempts Causeway has in Slurm
  };
  struct ClusterState {
    std::string name;
    SlurmSettings settings;
    std::unique_ptr<SlurmApi> api;
    bool healthy = true;
    int failures = 0;       // in a row
    Timestamp next_try;     // while down: when to ask again
    std::string last_error;
  };
  struct Tracked {
    int cluster = 0;
    int pool = -1;
    int gpus = 0;
    int64_t slurm_id = 0;
    Timestamp started;
    bool seen_running = false;  // a kStarted event was reported
  };
  using Key = std::pair<std::string, int>;

  int ClusterIndex(const std::string& cluster) const;
  Status Track(const LaunchRequest& r, int64_t slurm_id, Timestamp started);
  // Records the outcome of a call to a cluster: a retryable failure marks
  // it down and sets its next try.
  void Note(ClusterState& c, const Status& st, Timestamp now);
  ProviderEvent Ended(const Key& key, const Tracked& t, const JobInfo& job, AttemptOutcome outcome, Timestamp now) const;

  std::string name_;
  std::vector<ClusterState> clusters_;
  std::vector<Pool> pools_;
  std::map<Key, Tracked> tracked_;
};

}  // namespace causeway::slurm
