// The Slurm provider adapter: runs attempts as Slurm batch jobs through
// slurmrestd. The job's setup and run become the batch script; GPUs become
// --gres=gpu:<type>:<n> on -N nodes; the launch environment (injected
// provider settings, CAUSEWAY_*) is passed; output goes to
// <output_dir>/<job id>-<attempt>.log. States are reconciled every Poll from
// the controller's job list, so nothing is missed across a restart of
// Causeway; while slurmrestd or the controller is unreachable the provider
// reports itself unhealthy, launches fail with kUnavailable (the job stays
// queued and is retried), and running attempts are left alone until it
// answers again. Not thread-safe: its owner serializes calls.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "causeway/estate.h"
#include "causeway/provider.h"
#include "providers/slurm/slurm_client.h"

namespace causeway::slurm {

// How a Slurm job state ends an attempt: nullopt while it is still pending or
// running. `cancelled_by_us` tells a cancellation Causeway asked for apart
// from one by someone else (scancel, scontrol), which is retried.
std::optional<AttemptOutcome> OutcomeOf(const JobInfo& job);

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
  bool Healthy() const override { return healthy_; }
  std::vector<GpuSample> SampleUtilization(Timestamp) const override { return {}; }
  Result<std::string> ReadLog(const std::string& cluster, const std::string& job_id, int attempt, int64_t offset,
                              int64_t max) const override;

  // How much work, in multiples of a pool's GPUs, Causeway keeps in Slurm.
  static constexpr int kBacklogFactor = 2;

  // Where an attempt's output is written.
  static std::string LogPath(const SlurmSettings& s, const std::string& job_id, int attempt);

 private:
  struct Pool {
    std::string cluster;
    std::string name;
    int gpus_per_node = 0;
    int capacity = 0;  // GPUs
    int used = 0;      // GPUs of attempts Causeway has in Slurm
  };
  struct Tracked {
    std::string cluster;
    int pool = -1;
    int gpus = 0;
    int64_t slurm_id = 0;
    Timestamp started;
  };
  using Key = std::pair<std::string, int>;

  SlurmClient& ClientFor(const std::string& cluster);
  Status Track(const LaunchRequest& r, int64_t slurm_id, Timestamp started);

  std::string name_;
  std::map<std::string, SlurmSettings> settings_;                  // cluster -> settings
  std::map<std::string, std::unique_ptr<SlurmClient>> clients_;    // cluster -> client
  std::vector<Pool> pools_;
  std::map<Key, Tracked> tracked_;
  bool healthy_ = true;
};

}  // namespace causeway::slurm
