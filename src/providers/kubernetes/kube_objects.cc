#include "providers/kubernetes/kube_objects.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "causeway/clock.h"
#include "causeway/json_input.h"
#include "causeway/text.h"

namespace causeway::kube {

using nlohmann::json;

namespace {

constexpr size_t kMaxNameBytes = 52;  // leaves room for "-RANK" in a 63-byte host name

json OwnedBy(const LaunchRequest& r, const std::string& job_uid) {
  return json::array({{{"apiVersion", "batch/v1"},
                       {"kind", "Job"},
                       {"name", ObjectName(r.job_id, r.attempt)},
                       {"uid", job_uid},
                       {"controller", true},
                       {"blockOwnerDeletion", true}}});
}

json Metadata(const LaunchRequest& r, const std::string& ns) {
  json annotations = json::object();
  for (const auto& [k, v] : r.tags) {
    if (k.rfind("causeway-", 0) == 0) annotations["causeway.dev/" + k.substr(9)] = v;  // the exact values
  }
  return {{"name", ObjectName(r.job_id, r.attempt)}, {"namespace", ns}, {"labels", LabelsOf(r)},
          {"annotations", annotations}};
}

// Quotes `s` for bash: inside single quotes, a single quote as '\''.
std::string Quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

bool IsTrue(const json& condition) { return JsonString(condition, "status") == "True"; }

std::optional<Timestamp> TimeOf(const std::string& rfc3339) {
  if (rfc3339.empty()) return std::nullopt;
  auto t = ParseRfc3339(rfc3339);
  return t.ok() ? std::optional<Timestamp>(*t) : std::nullopt;
}

}  // namespace

std::string ObjectName(const std::string& job_id, int attempt) {
  std::string id;
  for (unsigned char c : job_id) id += std::isalnum(c) ? static_cast<char>(std::tolower(c)) : '-';
  std::string suffix = "-" + std::to_string(attempt);
  std::string name = "cw-" + id;
  if (name.size() + suffix.size() > kMaxNameBytes) name.resize(kMaxNameBytes - suffix.size());
  while (!name.empty() && name.back() == '-') name.pop_back();
  return name + suffix;
}

std::string LabelValue(const std::string& value) {
  std::string out;
  for (unsigned char c : value.substr(0, 63)) {
    out += std::isalnum(c) || c == '-' || c == '.' || c == '_' ? static_cast<char>(c) : '_';
  }
  while (!out.empty() && !std::isalnum(static_cast<unsigned char>(out.back()))) out.pop_back();
  size_t start = 0;
  while (start < out.size() && !std::isalnum(static_cast<unsigned char>(out[start]))) ++start;
  return out.substr(start);
}

namespace {

// A job's own label may be a pod label when its key is a plain name (no
// prefix: those are the cluster's, kueue.x-k8s.io/queue-name among them)
// that Causeway does not set itself.
bool PlainLabelKey(const std::string& k) {
  if (k.empty() || k.size() > 63 || !std::isalnum(static_cast<unsigned char>(k.front())) ||
      !std::isalnum(static_cast<unsigned char>(k.back()))) {
    return false;
  }
  return std::all_of(k.begin(), k.end(), [](unsigned char c) { return std::isalnum(c) || c == '-' || c == '_' || c == '.'; });
}

}  // namespace

json LabelsOf(const LaunchRequest& r) {
  json labels = {{"app.kubernetes.io/managed-by", "causeway"},
                 {"causeway-job", LabelValue(r.job_id)},
                 {"causeway-attempt", std::to_string(r.attempt)}};
  for (const auto& [k, v] : r.tags) {
    const bool ours = k.rfind("causeway-", 0) == 0;
    if (ours && (k == "causeway-job" || k == "causeway-attempt")) continue;
    if (!ours && !PlainLabelKey(k)) continue;
    if (std::string value = LabelValue(v); !value.empty() || v.empty()) labels[k] = value;
  }
  return labels;
}

std::string PodScript(const LaunchRequest& r, const std::string& ns) {
  const std::string name = ObjectName(r.job_id, r.attempt);
  std::string ips;
  for (int i = 0; i < r.num_nodes; ++i) {
    ips += (i ? "\n" : "") + name + "-" + std::to_string(i) + "." + name + "." + ns + ".svc";
  }
  std::string script = "set -e\nexport SKYPILOT_NODE_RANK=\"${JOB_COMPLETION_INDEX:-0}\"\n";
  if (r.num_nodes > 1) {
    script += "export SKYPILOT_NODE_IPS=" + Quoted(ips) + "\nexport MASTER_ADDR=" + Quoted(name + "-0." + name + "." + ns + ".svc") + "\n";
  } else {
    script += "SKYPILOT_NODE_IPS=\"$(hostname -i 2>/dev/null | cut -d' ' -f1)\"\n"
              "export SKYPILOT_NODE_IPS=\"${SKYPILOT_NODE_IPS:-127.0.0.1}\"\nexport MASTER_ADDR=\"$SKYPILOT_NODE_IPS\"\n";
  }
  script += "export SKYPILOT_NUM_NODES=" + std::to_string(r.num_nodes) + "\n";
  if (!r.setup.empty()) script += r.setup + "\n";
  script += r.run.empty() ? "true\n" : r.run + "\n";
  return script;
}

json JobManifest(const LaunchRequest& r, const KubeSettings& s, const std::string& ns, const std::string& local_queue) {
  const std::string name = ObjectName(r.job_id, r.attempt);
  json meta = Metadata(r, ns);
  if (!local_queue.empty()) {
    meta["labels"]["kueue.x-k8s.io/queue-name"] = local_queue;
    // Kueue ranks (and preempts) by the job's Causeway priority.
    if (std::string wpc = s.PriorityClassFor(r.priority); !wpc.empty()) {
      meta["labels"]["kueue.x-k8s.io/priority-class"] = wpc;
    }
  }
  json requests = json::object(), limits = json::object();
  if (r.gpus_per_node > 0) {
    requests[s.gpu_resource] = std::to_string(r.gpus_per_node);
    limits[s.gpu_resource] = std::to_string(r.gpus_per_node);
  }
  if (r.cpus_per_node) requests["cpu"] = std::to_string(*r.cpus_per_node);
  if (r.memory_mb_per_node) requests["memory"] = std::to_string(*r.memory_mb_per_node) + "Mi";
  json container = {{"name", "main"},
                    {"image", r.image.empty() ? s.image : r.image},
                    {"command", json::array({"/bin/bash", "-c", PodScript(r, ns)})},
                    {"envFrom", json::array({{{"secretRef", {{"name", name}}}}})},
                    {"resources", {{"requests", requests}, {"limits", limits}}}};
  json pod_spec = {{"restartPolicy", "Never"},
                   {"enableServiceLinks", false},
                   {"automountServiceAccountToken", false},
                   {"containers", json::array({container})}};
  if (r.num_nodes > 1) pod_spec["subdomain"] = name;
  json spec = {{"completionMode", "Indexed"},
               {"completions", r.num_nodes},
               {"parallelism", r.num_nodes},
               {"backoffLimit", 0},
               {"suspend", true},
               {"ttlSecondsAfterFinished", 86400},
               {"template", {{"metadata", {{"labels", LabelsOf(r)}, {"annotations", meta["annotations"]}}},
                             {"spec", pod_spec}}}};
  if (r.time_limit) {
    spec["activeDeadlineSeconds"] = std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(*r.time_limit).count());
  }
  return {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"metadata", meta}, {"spec", spec}};
}

json SecretManifest(const LaunchRequest& r, const std::string& ns, const std::string& job_uid) {
  json meta = Metadata(r, ns);
  meta["ownerReferences"] = OwnedBy(r, job_uid);
  json data = json::object();
  for (const auto& [k, v] : r.env) data[k] = v;
  return {{"apiVersion", "v1"}, {"kind", "Secret"}, {"metadata", meta}, {"type", "Opaque"}, {"stringData", data}};
}

json ServiceManifest(const LaunchRequest& r, const std::string& ns, const std::string& job_uid) {
  json meta = Metadata(r, ns);
  meta["ownerReferences"] = OwnedBy(r, job_uid);
  json spec = {{"clusterIP", "None"},
               {"publishNotReadyAddresses", true},
               {"selector", {{"batch.kubernetes.io/job-name", ObjectName(r.job_id, r.attempt)}}}};
  return {{"apiVersion", "v1"}, {"kind", "Service"}, {"metadata", meta}, {"spec", spec}};
}

JobView ViewOf(const json& job) {
  JobView v;
  const json& spec = JsonMember(job, "spec");
  const json& status = JsonMember(job, "status");
  const json& suspend = JsonMember(spec, "suspend");
  v.suspended = suspend.is_boolean() && suspend.get<bool>();
  v.start_time = TimeOf(JsonString(status, "startTime"));
  v.started = JsonInt(status, "active") > 0 || JsonInt(status, "succeeded") > 0 || JsonInt(status, "failed") > 0 ||
              JsonInt(status, "ready") > 0;
  for (const json& c : JsonArray(status, "conditions")) {
    if (!IsTrue(c)) continue;
    std::string type = JsonString(c, "type"), reason = JsonString(c, "reason"), message = JsonString(c, "message");
    if (type == "Complete") {
      v.outcome = AttemptOutcome::kSucceeded;
      v.reason = "the Job completed";
    } else if (type == "Failed") {
      v.outcome = reason == "DeadlineExceeded" ? AttemptOutcome::kTimeout : AttemptOutcome::kFailed;
      v.reason = "the Job failed: " + reason + (message.empty() ? "" : " (" + message + ")");
      v.exit_code = 1;
    }
  }
  return v;
}

void ClassifyFromPods(const json& pods, JobView& view) {
  for (const json& pod : JsonArray(pods, "items")) {
    const std::string pod_name = JsonString(JsonMember(pod, "metadata"), "name");
    const json& status = JsonMember(pod, "status");
    for (const json& c : JsonArray(status, "conditions")) {
      if (JsonString(c, "type") == "DisruptionTarget" && IsTrue(c)) {
        view.outcome = AttemptOutcome::kNodeFailure;
        view.reason = "pod " + pod_name + " was disrupted: " + JsonString(c, "reason") + " (" + JsonString(c, "message") + ")";
        return;
      }
    }
    std::string pod_reason = JsonString(status, "reason");
    if (pod_reason == "NodeLost" || pod_reason == "UnexpectedAdmissionError") {
      view.outcome = AttemptOutcome::kNodeFailure;
      view.reason = "pod " + pod_name + ": " + pod_reason + " (" + JsonString(status, "message") + ")";
      return;
    }
    for (const json& cs : JsonArray(status, "containerStatuses")) {
      const json& state = JsonMember(cs, "state");
      const json& waiting = JsonMember(state, "waiting");
      std::string waiting_reason = JsonString(waiting, "reason");
      if (waiting_reason == "ErrImagePull" || waiting_reason == "ImagePullBackOff" ||
          waiting_reason == "InvalidImageName") {
        view.outcome = AttemptOutcome::kFailed;
        view.exit_code = 1;
        view.reason = "the image " + JsonString(cs, "image") + " cannot be pulled (" + waiting_reason + ": " +
                      JsonString(waiting, "message") + ")";
        return;
      }
      const json& terminated = JsonMember(state, "terminated");
      if (terminated.is_null()) continue;
      int64_t code = JsonInt(terminated, "exitCode");
      std::string reason = JsonString(terminated, "reason");
      if (reason == "OOMKilled") {
        view.outcome = AttemptOutcome::kFailed;
        view.exit_code = code == 0 ? 137 : static_cast<int>(code);
        view.reason = "pod " + pod_name + " ran out of memory (OOMKilled)";
        return;
      }
      if (code != 0 && view.outcome == AttemptOutcome::kFailed) {
        view.exit_code = static_cast<int>(code);
        view.reason = "pod " + pod_name + " exited with code " + std::to_string(code) +
                      (reason.empty() ? "" : " (" + reason + ")");
      }
    }
  }
}

namespace {

const json* ConditionOf(const json& workload, std::string_view type) {
  for (const json& c : JsonArray(JsonMember(workload, "status"), "conditions")) {
    if (JsonString(c, "type") == type) return &c;
  }
  return nullptr;
}

}  // namespace

std::string WaitingReason(const json& workload) {
  const json* reserved = ConditionOf(workload, "QuotaReserved");
  if (reserved && !IsTrue(*reserved)) return JsonString(*reserved, "message");
  const json* admitted = ConditionOf(workload, "Admitted");
  if (!reserved && admitted && !IsTrue(*admitted)) return JsonString(*admitted, "message");
  return "";
}

std::string EvictionReason(const json& workload) {
  const json* evicted = ConditionOf(workload, "Evicted");
  if (!evicted || !IsTrue(*evicted)) return "";
  return "evicted by Kueue: " + JsonString(*evicted, "reason") + " (" + JsonString(*evicted, "message") + ")";
}

std::string NodeFacts(const json& node, const KubeSettings& s, const std::string& image_id) {
  const json& meta = JsonMember(node, "metadata");
  const json& labels = JsonMember(meta, "labels");
  const json& info = JsonMember(JsonMember(node, "status"), "nodeInfo");
  std::string out;
  auto fact = [&](const std::string& name, const std::string& value, const std::string& why) {
    out += (value.empty() ? "-" : "+") + name + "\t" + (value.empty() ? why : value) + "\n";
  };
  fact("node", JsonString(meta, "name"), "the node has no name");
  fact("kernel", JsonString(info, "kernelVersion"), "the node reports no kernel (status.nodeInfo)");
  fact("os", JsonString(info, "osImage"), "the node reports no OS image (status.nodeInfo)");
  fact("container_runtime", JsonString(info, "containerRuntimeVersion"), "the node reports no container runtime");
  fact("image", image_id, "the runtime reported no image id for the pod (status.containerStatuses[].imageID)");
  const std::string gfd = "no NVIDIA GPU feature discovery labels on the node";
  std::string product = JsonString(labels, s.gpu_product_label);
  std::string driver = JsonString(labels, "nvidia.com/cuda.driver-version.full");
  if (driver.empty() && !JsonString(labels, "nvidia.com/cuda.driver.major").empty()) {
    driver = JsonString(labels, "nvidia.com/cuda.driver.major") + "." + JsonString(labels, "nvidia.com/cuda.driver.minor") +
             "." + JsonString(labels, "nvidia.com/cuda.driver.rev");
  }
  std::string cuda = JsonString(labels, "nvidia.com/cuda.runtime-version.full");
  if (cuda.empty() && !JsonString(labels, "nvidia.com/cuda.runtime.major").empty()) {
    cuda = JsonString(labels, "nvidia.com/cuda.runtime.major") + "." + JsonString(labels, "nvidia.com/cuda.runtime.minor");
  }
  fact("driver", driver, gfd + " (nvidia.com/cuda.driver-version.full)");
  fact("cuda", cuda, gfd + " (nvidia.com/cuda.runtime-version.full)");
  fact("gpu_product", product, "the node has no " + s.gpu_product_label + " label");
  const json& allocatable = JsonMember(JsonMember(node, "status"), "allocatable");
  const int64_t gpus = WholeQuantity(JsonMember(allocatable, s.gpu_resource));
  std::string memory = JsonString(labels, "nvidia.com/gpu.memory");
  for (int64_t i = 0; i < std::min<int64_t>(gpus, 64); ++i) {
    out += "+gpu\t" + std::to_string(i) + ", " + (product.empty() ? "unknown" : product) + ", , " + driver + ", " + memory + "\n";
  }
  if (gpus == 0) out += "-gpu\tthe node declares no " + s.gpu_resource + "\n";
  return out;
}

int64_t WholeQuantity(const json& v) {
  if (v.is_number_integer()) return std::max<int64_t>(0, v.get<int64_t>());
  if (!v.is_string()) return 0;
  const std::string& s = v.get_ref<const std::string&>();
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return 0;
  }
  return std::stoll(s);
}

int64_t KueueHeadroom(const std::vector<json>& local_queues, const std::map<std::string, json>& cluster_queues,
                      const std::map<std::string, json>& flavors, const KubeSettings& s, const std::string& gpu_type) {
  const std::string type = AsciiLower(gpu_type);
  auto of_type = [&](const std::string& flavor) {
    auto f = flavors.find(flavor);
    if (f == flavors.end()) return false;  // Kueue admits nothing in a flavor that does not exist
    const json& labels = JsonMember(JsonMember(f->second, "spec"), "nodeLabels");
    if (!labels.is_object() || !labels.contains(s.gpu_product_label)) return true;
    return AsciiLower(JsonString(labels, s.gpu_product_label)).find(type) != std::string::npos;
  };
  // What a ClusterQueue's status says it has reserved of the GPU resource in a flavor.
  auto reserved = [&](const json& cq, const std::string& flavor) -> int64_t {
    for (const json& f : JsonArray(JsonMember(cq, "status"), "flavorsReservation")) {
      if (JsonString(f, "name") != flavor) continue;
      for (const json& r : JsonArray(f, "resources")) {
        if (JsonString(r, "name") == s.gpu_resource) return WholeQuantity(JsonMember(r, "total"));
      }
    }
    return 0;
  };
  std::set<std::string> counted;
  int64_t headroom = 0;
  for (const json& lq : local_queues) {
    const std::string name = JsonString(JsonMember(lq, "spec"), "clusterQueue");
    auto cq = cluster_queues.find(name);
    if (cq == cluster_queues.end() || !counted.insert(name).second) continue;
    for (const json& group : JsonArray(JsonMember(cq->second, "spec"), "resourceGroups")) {
      for (const json& flavor : JsonArray(group, "flavors")) {
        const std::string fname = JsonString(flavor, "name");
        if (!of_type(fname)) continue;
        for (const json& r : JsonArray(flavor, "resources")) {
          if (JsonString(r, "name") != s.gpu_resource) continue;
          headroom += std::max<int64_t>(0, WholeQuantity(JsonMember(r, "nominalQuota")) - reserved(cq->second, fname));
        }
      }
    }
  }
  return headroom;
}

}  // namespace causeway::kube
