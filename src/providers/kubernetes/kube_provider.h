// The Kubernetes provider adapter: runs attempts as batch/v1 Jobs
// (kube_objects.h says what each becomes), admitted by Kueue where the
// cluster runs it (local_queue), and learns what happens to them by
// watching, not polling: an Informer (kube_informer.h) per cluster keeps
// Causeway's Jobs and pods, Kueue's Workloads and the nodes in memory.
//
// Its calls block on the API server (each under a deadline), so the kind
// is registered without answers_at_once: the scheduler reaches it through
// a dispatch::OffLockAdapter, whose worker makes every call here. Poll only
// reads the informers' memory; the only calls it makes are for an attempt
// that ended (its pods, to say why; its node, for its facts) or one Kueue
// evicted (the Job is deleted, the attempt ends as preempted).
//
// States: a Job waiting for Kueue is "admitted" in Causeway, and Kueue's
// message is reported (kWaiting) for explain; it is started once pods run
// (kStarted); it ends as the Job's conditions say, refined from its pods
// (OOMKilled, a disruption of the node, an image that cannot be pulled,
// the exit code). A Job that was running and is suspended again, or whose
// Workload Kueue evicted, was preempted: it is deleted, and the job is
// placed again and resumes from its checkpoint. Causeway never resumes a
// Job behind Kueue's back.
//
// A launch retried (a restart between creating the Job and recording it)
// finds its Job by name and adopts it; a Job of that name that is not the
// attempt's is refused. Capacity: the pool's GPUs from its nodes (Ready
// nodes whose gpu_product_label names the pool's GPU type, allocatable
// gpu_resource), or the estate's declaration until the nodes are known;
// Causeway keeps up to twice that handed to the cluster, the rest waiting
// in Kueue. Free GPUs, which routing prefers, are also bounded by what the
// ClusterQueues behind Causeway's LocalQueues could still admit. Each
// Causeway queue's jobs go to its own LocalQueue (local_queues), or to
// local_queue; with priority_classes, Kueue ranks them by the job's
// priority (a job whose class the cluster lacks waits, and says why). A
// cluster whose watch has not heard from the API server for
// `unhealthy_after` takes no new work, nor does one with Kueue before
// Causeway knows its headroom. Thread-safe.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "causeway/estate.h"
#include "causeway/mutex.h"
#include "causeway/provider.h"
#include "providers/kubernetes/kube_api.h"
#include "providers/kubernetes/kube_informer.h"
#include "providers/kubernetes/kube_objects.h"
#include "providers/kubernetes/kube_settings.h"

namespace causeway::providers {
class Registry;
}

namespace causeway::kube {

// Registers the "kubernetes" kind (providers/kinds.cc).
[[nodiscard]] Status Register(providers::Registry& registry);

struct KubeProviderOptions {
  std::chrono::milliseconds unhealthy_after{15'000};
  std::chrono::milliseconds call_timeout{10'000};
  int watch_seconds = 3;
};

class KubeProvider final : public ProviderAdapter {
 public:
  using Options = KubeProviderOptions;
  KubeProvider(const Estate& estate, const Provider& provider, Options options = {});
  ~KubeProvider() override;

  const std::string& name() const override { return name_; }
  Result<std::string> Launch(const LaunchRequest& request, Timestamp now) override;
  void Release(const RecordedLaunch& launch) override;
  Status Restore(const LaunchRequest& request, Timestamp started_at) override;
  Status Cancel(const std::string& job_id, int attempt) override;
  std::vector<ProviderEvent> Poll(Timestamp now) override;
  bool StartsOnLaunch() const override { return false; }
  int ResolvePool(const std::string& cluster, const std::string& pool) const override;
  bool Fits(int pool, int gpus_per_node, int nodes) const override;
  int FreeGpus(int pool) const override;
  bool Healthy(int pool) const override;
  Result<std::string> ReadLog(const std::string& cluster, const std::string& job_id, int attempt, int64_t offset,
                              int64_t max) const override;
  std::vector<GpuSample> SampleUtilization(Timestamp) const override { return {}; }

  static constexpr int kBacklogFactor = 2;

 private:
  struct Cluster {
    std::string name;
    KubeSettings settings;
    Result<Endpoint> endpoint = Status(Code::kInternal, "not read");
    std::unique_ptr<KubeApi> api;  // calls from the dispatcher's worker
    std::unique_ptr<Informer> jobs, pods, workloads, nodes;
    // With Kueue: its LocalQueues, ClusterQueues and ResourceFlavors, for
    // the quota headroom.
    std::unique_ptr<Informer> local_queues, cluster_queues, flavors;
    // With priority_classes: Kueue's WorkloadPriorityClasses, by name.
    std::unique_ptr<Informer> priority_classes;
  };
  struct Pool {
    int cluster = 0;
    std::string name;
    std::string gpu_type;
    int gpus_per_node = 0;
    int declared = 0;  // GPUs the estate declares
    // Guarded by mu_: GPUs of attempts Causeway has handed to the cluster,
    // the pool's GPUs as its nodes last said, and what Kueue could still
    // admit of them (-1: no Kueue, or not known yet). Poll counts the last two.
    int used = 0;
    int capacity = 0;
    int headroom = -1;
  };
  struct Tracked {
    int cluster = 0;
    int pool = -1;
    int gpus = 0;
    std::string ns, name;
    LaunchRequest request;  // held: what Release sends
    Timestamp at;           // when it was launched
    bool held = false;
    bool sent = false;          // the Job was created (or found)
    bool seen = false;          // the informer has shown the Job
    bool restored = false;      // re-adopted after a restart (Restore)
    bool started = false;       // kStarted was reported
    std::string waiting;        // the last kWaiting reason reported
  };
  using Key = std::pair<std::string, int>;

  int ClusterIndex(const std::string& cluster) const;
  // The pool's GPUs from its cluster's nodes, or what the estate declares
  // while they are not known. Visits every node: Poll calls it, once.
  int CountCapacity(const Pool& p) const;
  // What Kueue could still admit of each pool's GPUs (KueueHeadroom over
  // the LocalQueues Causeway's jobs go to), or -1 without Kueue or while
  // its objects are not known; each cluster's queues read once. Poll calls it.
  std::vector<int> CountHeadroom() const;
  // The LocalQueue an attempt goes to: its team's Causeway queue's.
  const std::string& LocalQueueOf(const Cluster& c, const LaunchRequest& r) const;
  // Why Kueue makes no Workload for `job`: the WorkloadPriorityClass its
  // label names is not in the cluster (Kueue says so only in its own log),
  // or "".
  static std::string MissingPriorityClass(const Cluster& c, const nlohmann::json& job);
  // Creates (or finds) the attempt's Job, then its Secret and Service, then
  // resumes it where no Kueue admits it. Blocking.
  Status Send(const Cluster& c, const LaunchRequest& r, const std::string& ns) const;
  // What the informers of a cluster show of Causeway's Jobs, by
  // "namespace/job name": their pods (rank 0 first) and Kueue Workloads.
  struct Seen {
    std::map<std::string, std::vector<nlohmann::json>> pods;
    std::map<std::string, nlohmann::json> workloads;
  };
  Seen SeenOn(const Cluster& c) const;
  // What an attempt that ended leaves behind: why (its pods), and its facts.
  void Finish(const Cluster& c, const std::vector<nlohmann::json>& pods, JobView& view, ProviderEvent& ev) const;
  static std::string BackendId(const std::string& cluster, const std::string& ns, const std::string& name);

  std::string name_;
  Options options_;
  std::vector<Cluster> clusters_;  // fixed once made
  std::vector<Pool> pools_;        // fixed but for `used`, `capacity` and `headroom`
  std::map<std::string, std::string> queue_of_team_;  // the estate's queues, fixed
  mutable Mutex mu_;
  std::map<Key, Tracked> tracked_ GUARDED_BY(mu_);
  std::vector<ProviderEvent> events_ GUARDED_BY(mu_);  // from Release, for the next Poll
};

}  // namespace causeway::kube
