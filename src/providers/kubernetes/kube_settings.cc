#include "providers/kubernetes/kube_settings.h"

#include <algorithm>
#include <cctype>
#include <memory>
#include <utility>
#include <vector>

#include "causeway/job_spec.h"

namespace causeway::kube {
namespace {

// A DNS-1123 label (namespace, queue names): lower-case letters, digits
// and '-', starting and ending with a letter or digit, at most 63.
bool IsDnsLabel(const std::string& s) {
  if (s.empty() || s.size() > 63 || s.front() == '-' || s.back() == '-') return false;
  return std::all_of(s.begin(), s.end(),
                     [](unsigned char c) { return std::islower(c) || std::isdigit(c) || c == '-'; });
}

// A DNS-1123 subdomain (cluster-scoped names such as a
// WorkloadPriorityClass's): labels joined by '.', at most 253.
bool IsDnsSubdomain(const std::string& s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    if (!IsDnsLabel(s.substr(start, dot == std::string::npos ? std::string::npos : dot - start))) return false;
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}

// A resource or label name as Kubernetes qualifies them: an optional
// DNS-subdomain prefix and '/', then a name of letters, digits, '-', '_', '.'.
bool IsQualifiedName(const std::string& s) {
  if (s.empty() || s.size() > 316) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '/';
  });
}

std::shared_ptr<const KindSettings> Parse(SettingsReader& r) {
  if (!r.CheckKeys({"api_server", "ca_file", "token_file", "client_cert", "client_key", "kubeconfig", "context",
                    "namespace", "namespace_prefix", "gpu_resource", "gpu_product_label", "local_queue",
                    "local_queues", "priority_classes", "image", "manage_rbac", "rbac_user_prefix"})) {
    return nullptr;
  }
  auto s = std::make_shared<KubeSettings>();
  s->kubeconfig = r.String("kubeconfig", false);
  s->context = r.String("context", false);
  const bool direct = s->kubeconfig.empty();
  s->api_server = r.String("api_server", direct);
  s->ca_file = r.String("ca_file", direct);
  s->token_file = r.String("token_file", false);
  s->client_cert = r.String("client_cert", false);
  s->client_key = r.String("client_key", false);
  s->namespace_name = r.String("namespace", false);
  s->namespace_prefix = r.String("namespace_prefix", false);
  if (std::string v = r.String("gpu_resource", false); !v.empty()) s->gpu_resource = v;
  if (std::string v = r.String("gpu_product_label", false); !v.empty()) s->gpu_product_label = v;
  s->local_queue = r.String("local_queue", false);
  for (auto& [queue, lq] : r.StringMap("local_queues", "{nlp-gpu: nlp-lq}").value_or(
           std::vector<std::pair<std::string, std::string>>{})) {
    if (!IsDnsLabel(lq)) {
      r.Error("local_queues", "expected the LocalQueue of Causeway queue \"" + queue +
                                  "\" as a LocalQueue name: lower-case letters, digits and '-', at most 63");
    }
    s->local_queues.emplace(std::move(queue), std::move(lq));
  }
  for (auto& entry : r.StringMap("priority_classes", "{high: prod, critical: urgent}").value_or(
           std::vector<std::pair<std::string, std::string>>{})) {
    // Not a structured binding: a lambda may not capture one (clang).
    std::string& cls = entry.first;
    std::string& wpc = entry.second;
    if (std::none_of(std::begin(kPriorityClasses), std::end(kPriorityClasses),
                     [&](const PriorityClass& pc) { return pc.name == cls; })) {
      r.Error("priority_classes", "expected Causeway's priority classes (low, normal, high, critical) as keys, not \"" +
                                      cls + "\"");
    } else if (!IsDnsSubdomain(wpc)) {
      r.Error("priority_classes", "expected the WorkloadPriorityClass of priority " + cls +
                                      " as a name: lower-case letters, digits, '-' and '.'");
    }
    s->priority_classes.emplace(std::move(cls), std::move(wpc));
  }
  if (std::string v = r.String("image", false); !v.empty()) s->image = v;
  s->manage_rbac = r.Bool("manage_rbac").value_or(false);
  if (r.Has("rbac_user_prefix")) s->rbac_user_prefix = r.String("rbac_user_prefix", false);

  if (!direct) {
    for (const char* key : {"api_server", "ca_file", "token_file", "client_cert", "client_key"}) {
      if (r.Has(key)) r.Error(key, "kubeconfig says how to reach the cluster: leave out " + std::string(key));
    }
  } else {
    if (!s->api_server.empty() && s->api_server.rfind("https://", 0) != 0) {
      r.Error("api_server", "expected the API server's address as https://HOST:PORT");
    }
    const bool token = !s->token_file.empty();
    const bool cert = !s->client_cert.empty() || !s->client_key.empty();
    if (token == cert) {
      r.Error(token ? "token_file" : "", "expected exactly one credential: token_file, or client_cert with client_key");
    } else if (cert && (s->client_cert.empty() || s->client_key.empty())) {
      r.Error(s->client_cert.empty() ? "client_cert" : "client_key", "a client certificate needs both client_cert and client_key");
    }
  }
  if (r.Has("context") && direct) r.Error("context", "context names a context of kubeconfig, which is not set");
  if (s->namespace_name.empty() == s->namespace_prefix.empty()) {
    r.Error(s->namespace_name.empty() ? "" : "namespace_prefix",
            "expected one of namespace (one shared namespace) and namespace_prefix (one per team)");
  } else if (!s->namespace_name.empty() && !IsDnsLabel(s->namespace_name)) {
    r.Error("namespace", "expected a namespace name: lower-case letters, digits and '-', at most 63");
  } else if (!s->namespace_prefix.empty() && !IsDnsLabel(s->namespace_prefix + "x")) {
    r.Error("namespace_prefix", "expected the start of a namespace name: lower-case letters, digits and '-'");
  }
  if (!IsQualifiedName(s->gpu_resource)) r.Error("gpu_resource", "expected a resource name such as nvidia.com/gpu");
  if (!IsQualifiedName(s->gpu_product_label)) {
    r.Error("gpu_product_label", "expected a node label such as nvidia.com/gpu.product");
  }
  if (s->rbac_user_prefix.size() > 64 ||
      std::any_of(s->rbac_user_prefix.begin(), s->rbac_user_prefix.end(), [](unsigned char c) { return c < 0x21 || c > 0x7e; })) {
    r.Error("rbac_user_prefix", "expected at most 64 printable characters without spaces, such as oidc:");
  }
  if (!s->local_queue.empty() && !IsDnsLabel(s->local_queue)) {
    r.Error("local_queue", "expected a LocalQueue name: lower-case letters, digits and '-', at most 63");
  }
  if (!s->local_queues.empty() && s->local_queue.empty()) {
    // Every job must go to some LocalQueue, or Kueue would not see it.
    r.Error("local_queues", "local_queues needs local_queue, the LocalQueue of every other Causeway queue");
  }
  if (!s->priority_classes.empty() && s->local_queue.empty()) {
    r.Error("priority_classes", "priority_classes are Kueue's: they need local_queue");
  }
  return s;
}

}  // namespace

std::string KubeSettings::NamespaceFor(const std::string& team) const {
  if (!namespace_name.empty()) return namespace_name;
  std::string ns = namespace_prefix;
  for (unsigned char c : team) ns += std::isalnum(c) ? static_cast<char>(std::tolower(c)) : '-';
  if (ns.size() > 63) ns.resize(63);
  while (!ns.empty() && ns.back() == '-') ns.pop_back();
  return ns;
}

const std::string& KubeSettings::LocalQueueFor(const std::string& queue) const {
  auto it = local_queues.find(queue);
  return it == local_queues.end() ? local_queue : it->second;
}

std::vector<KindSettings::QueueRef> KubeSettings::QueuesNamed() const {
  std::vector<QueueRef> out;
  for (const auto& entry : local_queues) out.push_back({"local_queues", entry.first});
  return out;
}

std::string KubeSettings::PriorityClassFor(int priority) const {
  const PriorityClass* best = nullptr;
  for (const PriorityClass& pc : kPriorityClasses) {
    if (pc.value <= priority && priority_classes.count(std::string(pc.name)) && (!best || pc.value > best->value)) {
      best = &pc;
    }
  }
  return best ? priority_classes.at(std::string(best->name)) : std::string();
}

EstateKind EstateKindOf() {
  EstateKind k;
  k.name = "kubernetes";
  k.cluster_key = "kubernetes";
  k.parse_cluster = Parse;
  // A git workdir is cloned by the pod itself (the workspace script runs
  // before setup, in the job's image).
  k.honours.node_requests = k.honours.container_images = k.honours.git_workdir = true;
  k.honours.backend = "Kubernetes";
  k.cluster_block_required =
      "a cluster of a kubernetes provider needs kubernetes: {api_server, ca_file, token_file (or client_cert and "
      "client_key), namespace or namespace_prefix} (or kubeconfig instead of the first three)";
  return k;
}

}  // namespace causeway::kube
