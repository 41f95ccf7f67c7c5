// The Slurm provider adapter: runs attempts as Slurm batch jobs through
// slurmrestd or the CLI tools (slurm_api.h). The job's setup and run become
// the batch script; GPUs become --gres=gpu:<type>:<n> on -N nodes; the
// launch environment (injected provider settings, CAUSEWAY_*) is passed;
// output goes to <output_dir>/<job id>-<attempt>.log.
//
// Calls to a cluster never run on the caller's thread: each cluster has a
// worker (dispatch/worker.h) that makes them, so the scheduler, which calls
// this adapter under its lock, never waits on the network. Launch checks
// room, records the attempt and queues the submission, returning at once
// (the attempt is "admitted" until Slurm runs it); a held launch waits for
// Release before it is queued. A submission that fails comes back from Poll
// as an attempt that never launched, and the job is placed again. Cancel forgets the attempt at once and queues the scancel.
// Poll returns what the workers have learned and asks each busy cluster's
// worker to reconcile again.
//
// States are reconciled from the controller's job list, so nothing is
// missed across a restart of Causeway. A job the controller has forgotten
// (it keeps finished jobs for MinJobAge only) is looked up in accounting
// when the cluster has it; only a job neither knows is lost.
//
// A cluster that cannot be reached, or whose current call has hung for
// Options::hung_after (5 s), is unhealthy: launches to it fail at once with kUnavailable
// (the job stays queued in Causeway and the router places work elsewhere),
// queued submissions to it are failed without being sent, and its running
// attempts are left alone until it answers again. An unreachable one is
// asked again after a backoff (1 s, doubling, at most 60 s). Thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "causeway/estate.h"
#include "causeway/mutex.h"
#include "causeway/provider.h"
#include "dispatch/worker.h"
#include "providers/capabilities.h"
#include "providers/slurm/slurm_api.h"
#include "providers/slurm/slurm_settings.h"

namespace causeway::providers {
class Registry;
}

namespace causeway::slurm {

// How a Slurm job state ends an attempt: nullopt while it is still pending or
// running. A CANCELLED job seen here was stopped by someone else (Causeway's
// own cancellations are untracked first), which is retried.
std::optional<AttemptOutcome> OutcomeOf(const JobInfo& job);

// Registers the "slurm" kind (providers/kinds.cc): this adapter, and the
// accounting users of clusters with accounting (slurm_accounts.h).
[[nodiscard]] Status Register(providers::Registry& registry);

// The batch script of an attempt: SKYPILOT_NODE_IPS from the allocation,
// then one srun task per node, each running the setup and run with its own
// SKYPILOT_NODE_RANK (SkyPilot runs both on every node of a gang).
std::string BatchScript(const LaunchRequest& r);

// The interfaces a cluster's settings ask for, in order of preference.
std::unique_ptr<SlurmApi> ApiFor(const SlurmSettings& settings);

struct SlurmProviderOptions {
  // A cluster whose call has run this long without an answer takes no new
  // work until it answers (its calls' own deadlines are longer).
  std::chrono::milliseconds hung_after{5000};
  // Submissions waiting per cluster before launches to it are refused.
  size_t queued_calls = 256;
  // How a cluster is reached: ApiFor, or a test's fake.
  std::function<std::unique_ptr<SlurmApi>(const SlurmSettings&)> api = ApiFor;
  // Monotonic time for hangs and backoff: steady_clock's, or a test's.
  dispatch::SteadyNow now = dispatch::SteadyClockNow;
};

class SlurmProvider final : public ProviderAdapter, public providers::OutageDrill {
 public:
  using Options = SlurmProviderOptions;
  SlurmProvider(const Estate& estate, const Provider& provider, Options options = {});
  ~SlurmProvider() override;

  const std::string& name() const override { return name_; }
  Result<std::string> Launch(const LaunchRequest& request, Timestamp now) override;
  void Release(const RecordedLaunch& launch) override;
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
  // The outage drill on real Slurm (a recovery rehearsal): down, every
  // attempt here is cancelled in Slurm and ends as a provider outage, and
  // no cluster of the provider takes work until it is switched on again.
  void SetOutage(bool down, Timestamp now) override EXCLUDES(mu_);

  // Returns once no cluster's worker has a call queued or running (for
  // tests: what the workers learned is then in the next Poll).
  void WaitIdle();

  // How much work, in multiples of a pool's GPUs, Causeway keeps in Slurm.
  static constexpr int kBacklogFactor = 2;

  // Where an attempt's output is written.
  static std::string LogPath(const SlurmSettings& s, const std::string& job_id, int attempt);
  // Where its probe writes ("….facts", and ".N" per node).
  static std::string FactsPath(const SlurmSettings& s, const std::string& job_id, int attempt);

 private:
  struct Pool {
    int cluster = 0;
    std::string name;
    int gpus_per_node = 0;  // GPUs, or a CPU-only pool's CPUs
    int capacity = 0;       // GPUs (CPUs)
    int used = 0;           // GPUs (CPUs) of attempts Causeway has in Slurm
    bool cpu_only = false;  // its jobs ask Slurm for CPUs and no GPU gres
  };
  struct ClusterState {
    std::string name;
    SlurmSettings settings;
    std::unique_ptr<SlurmApi> api;  // used on the worker's thread only
    std::unique_ptr<dispatch::Worker> worker;
    dispatch::Backoff backoff{std::chrono::seconds(1), std::chrono::seconds(60)};
    std::string last_error;
    bool reconciling = false;  // a reconcile is queued or running
  };
  struct Tracked {
    int cluster = 0;
    int pool = -1;
    int gpus = 0;
    int64_t slurm_id = 0;  // 0: not known yet (submission in flight, or restored by name)
    bool submitting = false;
    Timestamp started;
    bool seen_running = false;  // a kStarted event was reported
  };
  using Key = std::pair<std::string, int>;
  // A held launch: what Release sends.
  struct Held {
    int cluster = 0;
    SubmitRequest request;
    Timestamp at;
  };
  // What a reconcile still has to ask accounting about.
  struct Unseen {
    Key key;
    int64_t slurm_id = 0;
    bool requeued = false;
  };

  static std::string JobName(const std::string& job_id, int attempt);
  // The attempt's backend id: "slurm:CLUSTER:ID", ID the Slurm job id (or,
  // until Slurm has given one, the job's name).
  static std::string BackendId(const std::string& cluster, const std::string& id);
  int ClusterIndex(const std::string& cluster) const;
  Status Track(const LaunchRequest& r, int64_t slurm_id, Timestamp started) REQUIRES(mu_);
  void Untrack(std::map<Key, Tracked>::iterator it) REQUIRES(mu_);
  // Records the outcome of a call to a cluster: a retryable failure marks
  // it down and sets its next try.
  void Note(ClusterState& c, const Status& st) REQUIRES(mu_);
  // Why the cluster takes no work now, or "" when it does.
  std::string Unavailability(const ClusterState& c) const REQUIRES(mu_);
  // Why a cluster takes no more calls: its queue is full.
  std::string QueueFull(const ClusterState& c) const;
  // A launch that never reached Slurm: the job is placed again.
  static ProviderEvent NotLaunched(const Key& key, Timestamp at, std::string reason);
  // An attempt's end as Slurm reports it (the caller reads the output's tail).
  static ProviderEvent Ended(const Key& key, const JobInfo& job, AttemptOutcome outcome, Timestamp now);
  // Worker tasks: on the cluster's worker, taking mu_ around (never during)
  // each call to the cluster.
  void Submit(int cluster, Key key, SubmitRequest request, Timestamp at) EXCLUDES(mu_);
  void Reconcile(int cluster, Timestamp now) EXCLUDES(mu_);
  void CancelByName(int cluster, std::string name) EXCLUDES(mu_);

  std::string name_;
  Options options_;
  mutable Mutex mu_;
  // Fixed once made, but for the fields mu_ guards: each cluster's health
  // (backoff, last_error) and reconciling, each pool's used.
  std::vector<ClusterState> clusters_;
  std::vector<Pool> pools_;
  std::map<Key, Tracked> tracked_ GUARDED_BY(mu_);
  std::map<Key, Held> held_ GUARDED_BY(mu_);  // tracked, not yet released
  std::vector<ProviderEvent> events_ GUARDED_BY(mu_);  // learned since the last Poll
  bool drill_down_ GUARDED_BY(mu_) = false;             // taken down by the outage drill
};

}  // namespace causeway::slurm
