// What an attempt becomes in a Kubernetes cluster, and what the cluster's
// objects say about it: pure functions, no calls.
//
// An attempt is a batch/v1 Job named ObjectName(job, attempt) in its team's
// namespace: an Indexed Job of num_nodes pods (completions = parallelism),
// never restarted by Kubernetes (backoffLimit 0: Causeway retries), created
// suspended; Kueue admits it (its queue-name label) or, without Kueue,
// Causeway resumes it once its Secret exists. The Secret holds the whole
// launch environment (CAUSEWAY_TOKEN, the workload token, the job's envs)
// and is owned by the Job, so it goes with it; nothing of it is in the pod
// spec. A gang of more than one node has a headless Service of the same
// name, owned by the Job, through which pods find each other
// (NAME-RANK.NAME.NAMESPACE.svc).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/provider.h"
#include "providers/kubernetes/kube_settings.h"

namespace causeway::kube {

// "cw-" and the job id in lower case with '_' as '-', then "-ATTEMPT": a
// DNS label short enough for the pods' host names.
std::string ObjectName(const std::string& job_id, int attempt);

// A label value: at most 63 of [A-Za-z0-9._-], beginning and ending with a
// letter or digit; anything else becomes '_' ("alice@corp.com" reads
// "alice_corp.com"). Annotations carry the exact value.
std::string LabelValue(const std::string& value);

// The labels every object of an attempt has (causeway-job, causeway-attempt,
// the request's tags), for selecting them.
nlohmann::json LabelsOf(const LaunchRequest& r);

// The Job, without its owner references (it owns the rest), queued for
// Kueue's LocalQueue `local_queue` ("" for none: created suspended all the
// same, and resumed by Causeway), with Kueue the WorkloadPriorityClass of
// its priority (s.PriorityClassFor) where the estate maps one.
nlohmann::json JobManifest(const LaunchRequest& r, const KubeSettings& s, const std::string& ns,
                           const std::string& local_queue);
// The Secret with the launch environment, owned by the Job (its uid).
nlohmann::json SecretManifest(const LaunchRequest& r, const std::string& ns, const std::string& job_uid);
// The headless Service of a gang, owned by the Job.
nlohmann::json ServiceManifest(const LaunchRequest& r, const std::string& ns, const std::string& job_uid);
// What each pod runs: its rank and its gang's addresses as SkyPilot sets
// them (SKYPILOT_NODE_RANK from the Job's completion index,
// SKYPILOT_NODE_IPS one per line, head first, MASTER_ADDR the head), then
// setup and run.
std::string PodScript(const LaunchRequest& r, const std::string& ns);

// What a Job (and, once it failed, its pods) says of its attempt.
struct JobView {
  bool started = false;    // it has run (pods active or finished)
  bool suspended = false;  // spec.suspend: waiting for Kueue, or evicted by it
  std::optional<AttemptOutcome> outcome;
  std::string reason;  // what Kubernetes said
  int exit_code = 0;
  std::optional<Timestamp> start_time;
};
JobView ViewOf(const nlohmann::json& job);

// Refines a failed Job's outcome from its pods: OOMKilled (out of memory),
// DisruptionTarget (the node went away: a node fault), image pull errors
// (the image, named), a container's exit code.
void ClassifyFromPods(const nlohmann::json& pods, JobView& view);

// Why a Job waits in the cluster, from its Kueue Workload ("" when it does
// not): Kueue's own message, e.g. "couldn't assign flavors to pod set
// main: insufficient unused quota for nvidia.com/gpu in flavor h100, 8
// more needed".
std::string WaitingReason(const nlohmann::json& workload);
// Whether Kueue evicted the Workload (preempted by other work, or its
// admission checks withdrawn): the reason, or "".
std::string EvictionReason(const nlohmann::json& workload);

// Facts of a node, as the probe writes them (provenance/probe.h): name,
// kernel, OS, container runtime, GPU product, driver and CUDA (NVIDIA GPU
// feature discovery's labels, where present), and the image the runtime
// resolved for the pod.
std::string NodeFacts(const nlohmann::json& node, const KubeSettings& s, const std::string& image_id);

// A count of whole things (GPUs) as Kubernetes writes a quantity: "8" or
// 8; 0 for anything else (a fraction, a suffix, more than nine digits).
int64_t WholeQuantity(const nlohmann::json& v);

// What Kueue could still admit of GPU type `gpu_type` for Causeway's jobs:
// over the ClusterQueues behind `local_queues` (LocalQueue objects: those
// Causeway's jobs go to; each ClusterQueue counted once), their nominal
// quota of s.gpu_resource less what they have reserved, in each flavor
// whose ResourceFlavor's s.gpu_product_label node label names the type,
// or carries no such label. `cluster_queues` and `flavors` are by name.
// Borrowing within a cohort is not counted: the headroom is what the
// queues hold of their own. Never negative.
int64_t KueueHeadroom(const std::vector<nlohmann::json>& local_queues,
                      const std::map<std::string, nlohmann::json>& cluster_queues,
                      const std::map<std::string, nlohmann::json>& flavors, const KubeSettings& s,
                      const std::string& gpu_type);

}  // namespace causeway::kube
