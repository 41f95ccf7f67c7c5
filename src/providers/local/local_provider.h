// The local executor: runs each attempt's setup and run as a process group on
// this machine, with the launch environment, CUDA_VISIBLE_DEVICES chosen from
// the pool's GPUs, and output in <output_dir>/<job id>-<attempt>.log. A small
// shell wrapper records the exit status in a file beside the log, so an
// attempt that outlives a restart of Causeway is still accounted for. Cancel
// kills the whole group, and so does Poll once an attempt has run past its
// time_limit (reported as a timeout). A held launch takes its GPUs at Launch and starts
// at Release, whose process id the next Poll reports (kHandedOver). For
// trying Causeway on a laptop, and a second real backend for tests; its
// outage drill kills what runs. Not
// thread-safe: its owner serializes calls.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "causeway/estate.h"
#include "causeway/provider.h"
#include "providers/capabilities.h"

namespace causeway::providers {
class Registry;
}

namespace causeway::local {

// Registers the "local" kind (providers/kinds.cc).
[[nodiscard]] Status Register(providers::Registry& registry);

class LocalProvider final : public ProviderAdapter, public providers::OutageDrill {
 public:
  LocalProvider(const Estate& estate, const Provider& provider);
  ~LocalProvider() override;  // leaves running attempts alone: they are re-adopted after a restart

  const std::string& name() const override { return name_; }
  Result<std::string> Launch(const LaunchRequest& request, Timestamp now) override;
  void Release(const RecordedLaunch& launch) override;
  Status Restore(const LaunchRequest& request, Timestamp started_at) override;
  Status Cancel(const std::string& job_id, int attempt) override;
  std::vector<ProviderEvent> Poll(Timestamp now) override;
  int ResolvePool(const std::string& cluster, const std::string& pool) const override;
  bool Fits(int pool, int gpus_per_node, int nodes) const override;
  int FreeGpus(int pool) const override;
  bool Healthy(int) const override { return !outage_; }
  std::vector<GpuSample> SampleUtilization(Timestamp) const override { return {}; }
  // The outage drill, for real: down kills every attempt's process group
  // here (each ends as a provider outage on the next Poll) and refuses new
  // launches until it is switched on again.
  void SetOutage(bool down, Timestamp now) override;
  Result<std::string> ReadLog(const std::string& cluster, const std::string& job_id, int attempt, int64_t offset,
                              int64_t max) const override;

 private:
  struct Pool {
    std::string cluster;
    std::string name;
    int gpus_per_node = 0;       // a CPU-only pool's CPUs (counted, not pinned)
    std::vector<bool> gpu_busy;  // one node: local work never spans machines
    bool cpu_only = false;       // its jobs see no GPU (CUDA_VISIBLE_DEVICES empty)
  };
  struct Running {
    int pool = -1;
    std::vector<int> gpus;
    pid_t pid = 0;  // 0 while held
    std::string exit_file;
    std::string log_file;
    std::optional<LaunchRequest> held;  // what Release starts
    Timestamp launched;                 // when Launch was asked (held launches)
    // The job's time_limit, on the real clock from when the process
    // started (a real process runs in real time whatever the scheduler's
    // clock says); past it, Poll kills the group and reports kTimeout.
    std::optional<Timestamp> deadline;
  };
  using Key = std::pair<std::string, int>;

  std::string Base(const std::string& cluster, const std::string& job_id, int attempt) const;
  // The GPU indices as CUDA_VISIBLE_DEVICES lists them: "0,1".
  static std::string Visible(const std::vector<int>& gpus);
  // "local:CLUSTER:PID:GPUS"; PID 0 for a held launch.
  static std::string BackendId(const std::string& cluster, pid_t pid, const std::vector<int>& gpus);
  static std::string PidFile(const Running& run);
  // Where the attempt's probe writes ("….facts", and ".N" per node).
  static std::string FactsFile(const Running& run);
  // Forks the attempt's process group; sets run.pid.
  Status Start(const LaunchRequest& request, Running& run);

  std::string name_;
  std::map<std::string, std::string> output_dirs_;  // cluster -> output dir
  std::vector<Pool> pools_;
  std::map<Key, Running> running_;
  std::vector<ProviderEvent> events_;  // from Release and SetOutage, for the next Poll
  bool outage_ = false;
};

}  // namespace causeway::local
