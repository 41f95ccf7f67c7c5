#include "providers/kubernetes/kube_provider.h"

#include <algorithm>
#include <cctype>

#include <spdlog/spdlog.h>

#include "causeway/json_input.h"
#include "causeway/text.h"
#include "providers/kubernetes/kube_objects.h"
#include "providers/kubernetes/kube_people.h"
#include "providers/registry.h"

namespace causeway::kube {

using nlohmann::json;

Status Register(providers::Registry& registry) {
  providers::Kind kind;
  kind.adapter = [](const providers::Context& c) -> std::unique_ptr<ProviderAdapter> {
    return std::make_unique<KubeProvider>(c.estate, c.provider);
  };
  // Its calls wait on the API server: the scheduler reaches it through a
  // dispatch::OffLockAdapter.
  kind.answers_at_once = false;
  kind.people_accounts = [](const providers::Context& c) { return KubePeople::ForProvider(c.estate, c.provider); };
  kind.estate = EstateKindOf();
  return registry.Register("kubernetes", std::move(kind));
}

namespace {

// What is kept of each watched object: only what the adapter reads.
json Pick(const json& from, std::initializer_list<const char*> keys) {
  json out = json::object();
  for (const char* k : keys) {
    if (const json& v = JsonMember(from, k); !v.is_null()) out[k] = v;
  }
  return out;
}

json KeepJob(const json& job) {
  return {{"metadata", Pick(JsonMember(job, "metadata"), {"name", "namespace", "uid", "labels"})},
          {"spec", Pick(JsonMember(job, "spec"), {"suspend"})},
          {"status", JsonMember(job, "status")}};
}

json KeepPod(const json& pod) {
  json status = Pick(JsonMember(pod, "status"), {"phase", "reason", "message", "conditions", "startTime"});
  json containers = json::array();
  for (const json& cs : JsonArray(JsonMember(pod, "status"), "containerStatuses")) {
    containers.push_back(Pick(cs, {"name", "image", "imageID", "state"}));
  }
  status["containerStatuses"] = std::move(containers);
  return {{"metadata", Pick(JsonMember(pod, "metadata"), {"name", "namespace", "labels"})},
          {"spec", Pick(JsonMember(pod, "spec"), {"nodeName"})},
          {"status", std::move(status)}};
}

json KeepWorkload(const json& w) {
  return {{"metadata", Pick(JsonMember(w, "metadata"), {"name", "namespace", "ownerReferences"})},
          {"status", Pick(JsonMember(w, "status"), {"conditions"})}};
}

json KeepNode(const json& node) {
  json conditions = json::array();
  for (const json& c : JsonArray(JsonMember(node, "status"), "conditions")) {
    if (JsonString(c, "type") == "Ready") conditions.push_back(Pick(c, {"type", "status"}));
  }
  json status = Pick(JsonMember(node, "status"), {"allocatable", "nodeInfo"});
  status["conditions"] = std::move(conditions);
  return {{"metadata", Pick(JsonMember(node, "metadata"), {"name", "labels"})}, {"status", std::move(status)}};
}

bool NodeReady(const json& node) {
  for (const json& c : JsonArray(JsonMember(node, "status"), "conditions")) {
    if (JsonString(c, "type") == "Ready") return JsonString(c, "status") == "True";
  }
  return false;
}

json KeepName(const json& o) { return {{"metadata", Pick(JsonMember(o, "metadata"), {"name"})}}; }

json KeepLocalQueue(const json& q) {
  return {{"metadata", Pick(JsonMember(q, "metadata"), {"name", "namespace"})},
          {"spec", Pick(JsonMember(q, "spec"), {"clusterQueue"})}};
}

json KeepClusterQueue(const json& q) {
  return {{"metadata", Pick(JsonMember(q, "metadata"), {"name"})},
          {"spec", Pick(JsonMember(q, "spec"), {"resourceGroups"})},
          {"status", Pick(JsonMember(q, "status"), {"flavorsReservation"})}};
}

json KeepFlavor(const json& f) {
  return {{"metadata", Pick(JsonMember(f, "metadata"), {"name"})},
          {"spec", Pick(JsonMember(f, "spec"), {"nodeLabels"})}};
}

constexpr char kKueueApi[] = "/apis/kueue.x-k8s.io/v1beta2";

std::string JobPath(const std::string& ns, const std::string& name = "") {
  return "/apis/batch/v1/namespaces/" + ns + "/jobs" + (name.empty() ? "" : "/" + name);
}

}  // namespace

KubeProvider::KubeProvider(const Estate& estate, const Provider& provider, Options options)
    : name_(provider.name), options_(options) {
  for (const auto& c : estate.clusters) {
    const KubeSettings* settings = SettingsAs<KubeSettings>(c);
    if (c.provider != provider.name || !settings) continue;
    int index = static_cast<int>(clusters_.size());
    Cluster cluster;
    cluster.name = c.name;
    cluster.settings = *settings;
    cluster.endpoint = EndpointOf(*settings);
    if (!cluster.endpoint.ok()) {
      spdlog::error("kubernetes cluster {}: {}", c.name, cluster.endpoint.status().message());
    } else {
      const Endpoint& e = *cluster.endpoint;
      cluster.api = std::make_unique<KubeApi>(e, options_.call_timeout);
      const std::string scope =
          settings->namespace_name.empty() ? "" : "/namespaces/" + settings->namespace_name;
      const std::string managed = "app.kubernetes.io/managed-by=causeway";
      cluster.jobs = std::make_unique<Informer>(
          e, Informer::Options{"/apis/batch/v1" + scope + "/jobs", managed, KeepJob, 50'000, options_.watch_seconds});
      cluster.pods = std::make_unique<Informer>(
          e, Informer::Options{"/api/v1" + scope + "/pods", managed, KeepPod, 100'000, options_.watch_seconds});
      cluster.nodes = std::make_unique<Informer>(
          e, Informer::Options{"/api/v1/nodes", "", KeepNode, 50'000, options_.watch_seconds});
      if (settings->UsesKueue()) {
        const std::string kueue = kKueueApi;
        cluster.workloads = std::make_unique<Informer>(
            e, Informer::Options{kueue + scope + "/workloads", "", KeepWorkload, 100'000, options_.watch_seconds});
        cluster.local_queues = std::make_unique<Informer>(
            e, Informer::Options{kueue + scope + "/localqueues", "", KeepLocalQueue, 10'000, options_.watch_seconds});
        cluster.cluster_queues = std::make_unique<Informer>(
            e, Informer::Options{kueue + "/clusterqueues", "", KeepClusterQueue, 10'000, options_.watch_seconds});
        cluster.flavors = std::make_unique<Informer>(
            e, Informer::Options{kueue + "/resourceflavors", "", KeepFlavor, 10'000, options_.watch_seconds});
        if (!settings->priority_classes.empty()) {
          cluster.priority_classes = std::make_unique<Informer>(
              e, Informer::Options{kueue + "/workloadpriorityclasses", "", KeepName, 10'000, options_.watch_seconds});
        }
      }
    }
    clusters_.push_back(std::move(cluster));
    for (const auto& p : c.node_pools) {
      int declared = p.gpus_per_node * p.nodes;
      pools_.push_back(Pool{index, p.name, p.gpu_type, p.gpus_per_node, declared, 0, declared, -1});
    }
  }
  for (const QueueConfig& q : estate.queues) queue_of_team_.emplace(q.team, q.name);  // the first, as QueueForTeam
}

KubeProvider::~KubeProvider() = default;

std::string KubeProvider::BackendId(const std::string& cluster, const std::string& ns, const std::string& name) {
  return "k8s:" + cluster + ":" + ns + "/" + name;
}

int KubeProvider::ClusterIndex(const std::string& cluster) const {
  for (size_t i = 0; i < clusters_.size(); ++i) {
    if (clusters_[i].name == cluster) return static_cast<int>(i);
  }
  return -1;
}

int KubeProvider::ResolvePool(const std::string& cluster, const std::string& pool) const {
  for (size_t i = 0; i < pools_.size(); ++i) {
    if (clusters_[static_cast<size_t>(pools_[i].cluster)].name == cluster && pools_[i].name == pool) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

int KubeProvider::CountCapacity(const Pool& p) const {
  const Cluster& c = clusters_[static_cast<size_t>(p.cluster)];
  if (!c.nodes || !c.nodes->synced()) return p.declared;
  // The pool's GPUs: Ready nodes whose product label names its GPU type.
  const std::string type = AsciiLower(p.gpu_type);
  int64_t gpus = 0;
  c.nodes->Visit([&](const std::string&, const json& node) {
    std::string product = AsciiLower(JsonString(JsonMember(JsonMember(node, "metadata"), "labels"), c.settings.gpu_product_label));
    if (product.empty() || product.find(type) == std::string::npos || !NodeReady(node)) return;
    gpus += WholeQuantity(JsonMember(JsonMember(JsonMember(node, "status"), "allocatable"), c.settings.gpu_resource));
  });
  return static_cast<int>(std::min<int64_t>(gpus, 1 << 24));
}

std::vector<int> KubeProvider::CountHeadroom() const {
  std::vector<int> out(pools_.size(), -1);
  for (size_t ci = 0; ci < clusters_.size(); ++ci) {
    const Cluster& c = clusters_[ci];
    // Known once each has been listed; a watch interrupted since keeps what it last saw.
    if (!c.local_queues || c.local_queues->lists() == 0 || c.cluster_queues->lists() == 0 || c.flavors->lists() == 0) {
      continue;
    }
    // The LocalQueues Causeway's jobs go to, in Causeway's namespaces.
    std::vector<json> ours;
    c.local_queues->Visit([&](const std::string&, const json& q) {
      const json& meta = JsonMember(q, "metadata");
      const std::string name = JsonString(meta, "name"), ns = JsonString(meta, "namespace");
      bool used = name == c.settings.local_queue;
      for (const auto& [queue, lq] : c.settings.local_queues) used |= name == lq;
      bool in_scope = c.settings.namespace_name.empty() ? ns.rfind(c.settings.namespace_prefix, 0) == 0
                                                        : ns == c.settings.namespace_name;
      if (used && in_scope) ours.push_back(q);
    });
    const auto cluster_queues = c.cluster_queues->Snapshot();
    const auto flavors = c.flavors->Snapshot();
    for (size_t i = 0; i < pools_.size(); ++i) {
      if (pools_[i].cluster != static_cast<int>(ci)) continue;
      int64_t headroom = KueueHeadroom(ours, cluster_queues, flavors, c.settings, pools_[i].gpu_type);
      out[i] = static_cast<int>(std::min<int64_t>(headroom, 1 << 24));
    }
  }
  return out;
}

const std::string& KubeProvider::LocalQueueOf(const Cluster& c, const LaunchRequest& r) const {
  static const std::string kNone;
  auto team = r.tags.find("causeway-team");
  auto queue = team == r.tags.end() ? queue_of_team_.end() : queue_of_team_.find(team->second);
  return c.settings.LocalQueueFor(queue == queue_of_team_.end() ? kNone : queue->second);
}

std::string KubeProvider::MissingPriorityClass(const Cluster& c, const json& job) {
  const std::string wpc = JsonString(JsonMember(JsonMember(job, "metadata"), "labels"), "kueue.x-k8s.io/priority-class");
  if (wpc.empty() || !c.priority_classes || c.priority_classes->lists() == 0 || !c.priority_classes->Find(wpc).is_null()) {
    return "";
  }
  return "no Workload for the Job: the cluster has no WorkloadPriorityClass " + wpc +
         " (the estate's priority_classes); it waits until one is made";
}

bool KubeProvider::Healthy(int pool) const {
  if (pool < 0 || pool >= static_cast<int>(pools_.size())) return false;
  const Pool& p = pools_[static_cast<size_t>(pool)];
  const Cluster& c = clusters_[static_cast<size_t>(p.cluster)];
  if (!c.jobs || !c.jobs->synced()) return false;
  if (c.settings.UsesKueue()) {
    // Work goes to a cluster with Kueue once Causeway knows what Kueue could admit there.
    MutexLock lock(mu_);
    if (p.headroom < 0) return false;
  }
  return std::chrono::steady_clock::now() - c.jobs->last_heard() < options_.unhealthy_after;
}

bool KubeProvider::Fits(int pool, int gpus_per_node, int nodes) const {
  if (pool < 0 || pool >= static_cast<int>(pools_.size())) return false;
  const Pool& p = pools_[static_cast<size_t>(pool)];
  MutexLock lock(mu_);
  // Kueue (or the cluster's scheduler) places the gang; Causeway keeps up
  // to one more pool's worth handed to the cluster, waiting there.
  return gpus_per_node <= p.gpus_per_node && nodes * gpus_per_node <= p.capacity &&
         kBacklogFactor * p.capacity - p.used >= gpus_per_node * nodes;
}

int KubeProvider::FreeGpus(int pool) const {
  if (pool < 0 || pool >= static_cast<int>(pools_.size())) return 0;
  const Pool& p = pools_[static_cast<size_t>(pool)];
  MutexLock lock(mu_);
  int free = p.capacity - p.used;
  if (p.headroom >= 0) free = std::min(free, p.headroom);
  return std::max(0, free);
}

Status KubeProvider::Send(const Cluster& c, const LaunchRequest& r, const std::string& ns) const {
  if (!c.api) return Unavailable("cluster " + c.name + ": " + c.endpoint.status().message());
  const std::string name = ObjectName(r.job_id, r.attempt);
  auto created = c.api->Create(JobPath(ns), JobManifest(r, c.settings, ns, LocalQueueOf(c, r)));
  json job;
  if (created.ok()) {
    job = std::move(*created);
  } else if (created.status().code() == Code::kAlreadyExists) {
    // A launch retried: the Job made before is this attempt's, or refused.
    ASSIGN_OR_RETURN(job, c.api->Get(JobPath(ns, name)));
    const json& labels = JsonMember(JsonMember(job, "metadata"), "labels");
    if (JsonString(labels, "causeway-job") != LabelValue(r.job_id) ||
        JsonString(labels, "causeway-attempt") != std::to_string(r.attempt)) {
      return FailedPrecondition("a Job named " + ns + "/" + name + " exists on " + c.name +
                                " and is not attempt " + std::to_string(r.attempt) + " of " + r.job_id);
    }
  } else {
    return created.status();
  }
  const std::string uid = JsonString(JsonMember(job, "metadata"), "uid");
  auto secret = c.api->Create("/api/v1/namespaces/" + ns + "/secrets", SecretManifest(r, ns, uid));
  if (!secret.ok() && secret.status().code() == Code::kAlreadyExists) {
    // The environment of this launch (a retried launch minted new tokens).
    secret = c.api->MergePatch("/api/v1/namespaces/" + ns + "/secrets/" + name,
                               {{"stringData", SecretManifest(r, ns, uid)["stringData"]}});
  }
  if (!secret.ok()) return secret.status();
  if (r.num_nodes > 1) {
    auto service = c.api->Create("/api/v1/namespaces/" + ns + "/services", ServiceManifest(r, ns, uid));
    if (!service.ok() && service.status().code() != Code::kAlreadyExists) return service.status();
  }
  // Without Kueue the Job is Causeway's to start; with it, Kueue's alone.
  if (!c.settings.UsesKueue()) {
    auto resumed = c.api->MergePatch(JobPath(ns, name), {{"spec", {{"suspend", false}}}});
    if (!resumed.ok()) return resumed.status();
  }
  return Status::Ok();
}

Result<std::string> KubeProvider::Launch(const LaunchRequest& r, Timestamp now) {
  int index = ClusterIndex(r.cluster);
  if (index < 0) return NotFound("provider " + name_ + " has no cluster " + r.cluster);
  int pool = ResolvePool(r.cluster, r.pool);
  if (pool < 0) return NotFound("provider " + name_ + " has no pool " + r.cluster + "/" + r.pool);
  const Cluster& c = clusters_[static_cast<size_t>(index)];
  if (!Healthy(pool)) {
    return Unavailable("cluster " + r.cluster + " is not answering" +
                       (c.jobs && !c.jobs->last_error().empty() ? " (" + c.jobs->last_error() + ")" : ""));
  }
  if (!Fits(pool, r.gpus_per_node, r.num_nodes)) {
    return ResourceExhausted("no room for " + std::to_string(r.num_nodes) + " x " + std::to_string(r.gpus_per_node) +
                             " GPUs on " + r.cluster);
  }
  auto team = r.tags.find("causeway-team");
  Tracked t;
  t.cluster = index;
  t.pool = pool;
  t.gpus = r.gpus_per_node * r.num_nodes;
  t.ns = c.settings.NamespaceFor(team == r.tags.end() ? "" : team->second);
  t.name = ObjectName(r.job_id, r.attempt);
  t.held = r.held;
  t.at = now;
  if (r.held) t.request = r;
  const std::string id = BackendId(c.name, t.ns, t.name);
  Key key{r.job_id, r.attempt};
  {
    MutexLock lock(mu_);
    pools_[static_cast<size_t>(pool)].used += t.gpus;
    tracked_[key] = t;
  }
  if (!r.held) {
    Status st = Send(c, r, t.ns);
    MutexLock lock(mu_);
    auto it = tracked_.find(key);
    if (!st.ok()) {
      if (it != tracked_.end()) {
        pools_[static_cast<size_t>(pool)].used -= it->second.gpus;
        tracked_.erase(it);
      }
      return st;
    }
    if (it != tracked_.end()) it->second.sent = true;
  }
  return id;
}

void KubeProvider::Release(const RecordedLaunch& launch) {
  Key key{launch.job_id(), launch.attempt()};
  LaunchRequest r;
  std::string ns;
  int cluster = 0;
  {
    MutexLock lock(mu_);
    auto it = tracked_.find(key);
    if (it == tracked_.end() || !it->second.held) return;  // cancelled meanwhile, or never held
    it->second.held = false;
    r = std::move(it->second.request);
    it->second.request = LaunchRequest{};
    ns = it->second.ns;
    cluster = it->second.cluster;
  }
  for (const auto& [k, v] : launch.env()) r.env.emplace(k, v);
  Status st = Send(clusters_[static_cast<size_t>(cluster)], r, ns);
  MutexLock lock(mu_);
  auto it = tracked_.find(key);
  if (it == tracked_.end()) return;  // cancelled while it was sent: Cancel deleted what was made
  if (st.ok()) {
    it->second.sent = true;
    return;
  }
  ProviderEvent ev;
  ev.job_id = key.first;
  ev.attempt = key.second;
  ev.kind = ProviderEvent::Kind::kNotLaunched;
  ev.time = it->second.at;
  ev.outcome = AttemptOutcome::kProviderOutage;
  ev.reason = "creating the Job on " + clusters_[static_cast<size_t>(cluster)].name + " failed: " + st.message();
  events_.push_back(std::move(ev));
  pools_[static_cast<size_t>(it->second.pool)].used -= it->second.gpus;
  tracked_.erase(it);
}

Status KubeProvider::Restore(const LaunchRequest& r, Timestamp) {
  int index = ClusterIndex(r.cluster);
  if (index < 0) return NotFound("provider " + name_ + " has no cluster " + r.cluster);
  int pool = ResolvePool(r.cluster, r.pool);
  if (pool < 0) return NotFound("provider " + name_ + " has no pool " + r.cluster + "/" + r.pool);
  Tracked t;
  t.cluster = index;
  t.pool = pool;
  t.gpus = r.gpus_per_node * r.num_nodes;
  t.name = ObjectName(r.job_id, r.attempt);
  t.sent = t.restored = true;
  // "k8s:CLUSTER:NAMESPACE/NAME", as Launch named it; without it (the
  // launch was not recorded as handed over) Poll looks the Job up by name.
  std::string prefix = "k8s:" + r.cluster + ":";
  if (r.backend_id.rfind(prefix, 0) == 0 && r.backend_id.find('/', prefix.size()) != std::string::npos) {
    std::string rest = r.backend_id.substr(prefix.size());
    t.ns = rest.substr(0, rest.find('/'));
  }
  MutexLock lock(mu_);
  pools_[static_cast<size_t>(pool)].used += t.gpus;
  tracked_[{r.job_id, r.attempt}] = t;
  return Status::Ok();
}

Status KubeProvider::Cancel(const std::string& job_id, int attempt) {
  Tracked t;
  {
    MutexLock lock(mu_);
    auto it = tracked_.find({job_id, attempt});
    if (it == tracked_.end()) return NotFound("attempt " + std::to_string(attempt) + " of " + job_id + " is not running");
    t = std::move(it->second);
    pools_[static_cast<size_t>(t.pool)].used -= t.gpus;
    tracked_.erase(it);
  }
  const Cluster& c = clusters_[static_cast<size_t>(t.cluster)];
  if (!c.api) return Status::Ok();
  // The Job's pods, Secret and Service go with it (background propagation).
  Status st = c.api->Delete(JobPath(t.ns, t.name));
  if (!st.ok() && st.code() != Code::kNotFound) {
    spdlog::warn("kubernetes {}: deleting Job {}/{} failed: {}", c.name, t.ns, t.name, st.message());
  }
  return Status::Ok();
}

void KubeProvider::Finish(const Cluster& c, const std::vector<json>& pods, JobView& view, ProviderEvent& ev) const {
  if (view.outcome != AttemptOutcome::kSucceeded) ClassifyFromPods({{"items", pods}}, view);
  // Where it ran, rank 0 first.
  for (const json& pod : pods) {
    std::string node_name = JsonString(JsonMember(pod, "spec"), "nodeName");
    json node = c.nodes && !node_name.empty() ? c.nodes->Find(node_name) : json();
    if (node.is_null()) continue;
    std::string image_id;
    for (const json& cs : JsonArray(JsonMember(pod, "status"), "containerStatuses")) {
      if (JsonString(cs, "name") == "main") image_id = JsonString(cs, "imageID");
    }
    if (ev.node_facts.size() < 256) ev.node_facts.push_back(NodeFacts(node, c.settings, image_id));
  }
}

KubeProvider::Seen KubeProvider::SeenOn(const Cluster& c) const {
  Seen seen;
  if (c.pods) {
    c.pods->Visit([&](const std::string&, const json& pod) {
      const json& meta = JsonMember(pod, "metadata");
      std::string job = JsonString(JsonMember(meta, "labels"), "batch.kubernetes.io/job-name");
      if (!job.empty()) seen.pods[JsonString(meta, "namespace") + "/" + job].push_back(pod);
    });
    auto rank = [](const json& pod) {
      return JsonString(JsonMember(JsonMember(pod, "metadata"), "labels"), "batch.kubernetes.io/job-completion-index");
    };
    for (auto& [job, pods] : seen.pods) {
      std::sort(pods.begin(), pods.end(), [&](const json& a, const json& b) {
        return rank(a).size() != rank(b).size() ? rank(a).size() < rank(b).size() : rank(a) < rank(b);
      });
    }
  }
  if (c.workloads) {
    c.workloads->Visit([&](const std::string&, const json& w) {
      const json& meta = JsonMember(w, "metadata");
      for (const json& o : JsonArray(meta, "ownerReferences")) {
        if (JsonString(o, "kind") == "Job") seen.workloads[JsonString(meta, "namespace") + "/" + JsonString(o, "name")] = w;
      }
    });
  }
  return seen;
}

std::vector<ProviderEvent> KubeProvider::Poll(Timestamp now) {
  std::vector<int> capacity;
  for (const Pool& p : pools_) capacity.push_back(CountCapacity(p));
  const std::vector<int> headroom = CountHeadroom();
  // What each cluster with attempts of Causeway's shows of their pods and
  // Workloads, gathered once (not once per attempt).
  std::vector<bool> busy(clusters_.size(), false);
  {
    MutexLock lock(mu_);
    for (const auto& [key, t] : tracked_) busy[static_cast<size_t>(t.cluster)] = true;
  }
  std::vector<Seen> seen(clusters_.size());
  for (size_t i = 0; i < clusters_.size(); ++i) {
    if (busy[i]) seen[i] = SeenOn(clusters_[i]);
  }
  static const std::vector<json> kNoPods;
  std::vector<ProviderEvent> out;
  std::vector<std::pair<int, std::string>> deletes;  // cluster, Job path: made after the lock
  {
    MutexLock lock(mu_);
    for (size_t i = 0; i < pools_.size(); ++i) {
      pools_[i].capacity = capacity[i];
      pools_[i].headroom = headroom[i];
    }
    out = std::move(events_);
    events_.clear();
    for (auto it = tracked_.begin(); it != tracked_.end();) {
      Tracked& t = it->second;
      const Cluster& c = clusters_[static_cast<size_t>(t.cluster)];
      if (!t.sent || !c.jobs) {
        ++it;
        continue;
      }
      ProviderEvent ev;
      ev.job_id = it->first.first;
      ev.attempt = it->first.second;
      ev.time = now;
      if (t.ns.empty()) {  // restored without its namespace: found by name
        c.jobs->Visit([&](const std::string& key, const json& job) {
          const json& labels = JsonMember(JsonMember(job, "metadata"), "labels");
          if (key.size() > t.name.size() && key.compare(key.size() - t.name.size(), t.name.size(), t.name) == 0 &&
              key[key.size() - t.name.size() - 1] == '/' && JsonString(labels, "causeway-job") == LabelValue(ev.job_id)) {
            t.ns = key.substr(0, key.size() - t.name.size() - 1);
          }
        });
      }
      json job = t.ns.empty() ? json() : c.jobs->Find(t.ns + "/" + t.name);
      if (job.is_null() && t.restored && !t.seen && c.jobs->synced()) {
        // Restored, but the cluster never had it: never launched.
        ev.kind = ProviderEvent::Kind::kNotLaunched;
        ev.outcome = AttemptOutcome::kProviderOutage;
        ev.reason = "the Job " + t.name + " is not on " + c.name + ": the launch never reached it";
        out.push_back(std::move(ev));
        pools_[static_cast<size_t>(t.pool)].used -= t.gpus;
        it = tracked_.erase(it);
        continue;
      }
      if (job.is_null()) {
        if (t.seen && c.jobs->synced()) {  // gone without Causeway deleting it
          ev.outcome = AttemptOutcome::kPreempted;
          ev.exit_code = -1;
          ev.reason = "the Job " + t.ns + "/" + t.name + " was deleted outside Causeway";
          out.push_back(std::move(ev));
          pools_[static_cast<size_t>(t.pool)].used -= t.gpus;
          it = tracked_.erase(it);
          continue;
        }
        ++it;
        continue;
      }
      t.seen = true;
      JobView view = ViewOf(job);
      const Seen& there = seen[static_cast<size_t>(t.cluster)];
      const std::string key = t.ns + "/" + t.name;
      auto w = there.workloads.find(key);
      const json workload = w == there.workloads.end() ? json() : w->second;
      auto p = there.pods.find(key);
      const std::vector<json>& pods = p == there.pods.end() ? kNoPods : p->second;
      if (!view.outcome) {
        std::string evicted = EvictionReason(workload);
        if (t.started && (view.suspended || !evicted.empty())) {
          // Kueue took the room back: this attempt is over; the job is
          // placed again and resumes from its checkpoint.
          view.outcome = AttemptOutcome::kPreempted;
          view.reason = evicted.empty() ? "the Job was suspended again (evicted by Kueue)" : evicted;
          view.exit_code = -1;
          deletes.emplace_back(t.cluster, JobPath(t.ns, t.name));
        } else {
          JobView pods_view;
          pods_view.outcome = AttemptOutcome::kFailed;
          ClassifyFromPods({{"items", pods}}, pods_view);
          if (pods_view.reason.find("cannot be pulled") != std::string::npos) {
            // The image never comes: the user's to fix, not a wait.
            view = pods_view;
            deletes.emplace_back(t.cluster, JobPath(t.ns, t.name));
          }
        }
      }
      if (!view.outcome) {
        if (!t.started && view.started && !view.suspended) {
          t.started = true;
          ev.kind = ProviderEvent::Kind::kStarted;
          ev.time = view.start_time.value_or(now);
          ev.backend_id = BackendId(c.name, t.ns, t.name);
          out.push_back(std::move(ev));
        } else if (!t.started) {
          std::string waiting = WaitingReason(workload);
          if (workload.is_null()) waiting = MissingPriorityClass(c, job);
          if (!waiting.empty() && waiting != t.waiting) {
            t.waiting = waiting;
            ev.kind = ProviderEvent::Kind::kWaiting;
            ev.reason = "Kueue: " + waiting;
            out.push_back(std::move(ev));
          }
        }
        ++it;
        continue;
      }
      ev.kind = ProviderEvent::Kind::kEnded;
      ev.started = view.start_time;
      Finish(c, pods, view, ev);
      ev.outcome = *view.outcome;
      ev.exit_code = view.exit_code;
      ev.reason = view.reason;
      out.push_back(std::move(ev));
      pools_[static_cast<size_t>(t.pool)].used -= t.gpus;
      it = tracked_.erase(it);
    }
  }
  for (const auto& [cluster, path] : deletes) {
    const Cluster& c = clusters_[static_cast<size_t>(cluster)];
    if (Status st = c.api->Delete(path); !st.ok() && st.code() != Code::kNotFound) {
      spdlog::warn("kubernetes {}: deleting {} failed: {}", c.name, path, st.message());
    }
  }
  return out;
}

Result<std::string> KubeProvider::ReadLog(const std::string& cluster, const std::string& job_id, int attempt,
                                          int64_t offset, int64_t max) const {
  int index = ClusterIndex(cluster);
  if (index < 0) return NotFound("provider " + name_ + " has no cluster " + cluster);
  const Cluster& c = clusters_[static_cast<size_t>(index)];
  if (!c.api || !c.pods) return Unavailable("cluster " + cluster + " cannot be reached");
  const std::string name = ObjectName(job_id, attempt);
  std::string pod_name, ns;
  c.pods->Visit([&](const std::string&, const json& pod) {
    const json& meta = JsonMember(pod, "metadata");
    const json& labels = JsonMember(meta, "labels");
    if (JsonString(labels, "batch.kubernetes.io/job-name") == name &&
        JsonString(labels, "batch.kubernetes.io/job-completion-index") == "0") {
      pod_name = JsonString(meta, "name");
      ns = JsonString(meta, "namespace");
    }
  });
  if (pod_name.empty()) return NotFound("no pod of " + job_id + " attempt " + std::to_string(attempt) + " on " + cluster);
  // The API server reads the log from the node's kubelet (a node without
  // one, as KWOK's, has none to give). It has no byte offset: the first
  // offset + max bytes are asked for and the start cut.
  int64_t want = std::min<int64_t>(offset + max, 8 << 20);
  auto log = c.api->GetText("/api/v1/namespaces/" + ns + "/pods/" + pod_name + "/log?container=main&limitBytes=" +
                                std::to_string(want),
                            static_cast<size_t>(want) + 1024);
  if (!log.ok()) return log.status().WithPrefix("the log of pod " + ns + "/" + pod_name);
  if (static_cast<int64_t>(log->size()) <= offset) return std::string();
  return log->substr(static_cast<size_t>(offset), static_cast<size_t>(max));
}

}  // namespace causeway::kube
