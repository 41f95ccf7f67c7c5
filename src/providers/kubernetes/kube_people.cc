#include "providers/kubernetes/kube_people.h"

#include <spdlog/spdlog.h>

#include "causeway/crypto.h"
#include "causeway/json_input.h"
#include "net/http_client.h"

namespace causeway::kube {

using nlohmann::json;

namespace {

constexpr const char* kRbac = "/apis/rbac.authorization.k8s.io/v1";
constexpr const char* kManaged = "app.kubernetes.io/managed-by";
constexpr const char* kUserAnnotation = "causeway.dev/user";

// What each role may do inside a cluster: read (Jobs, their pods, events
// and services, Kueue's Workloads and queues), and their logs for every
// role but viewer; finance has nothing there. No role deletes a Job: a
// Job gone behind Causeway's back is taken for a preemption and placed
// again, so stopping work is a cancel through Causeway, audited there.
struct RoleAccess {
  const char* role;
  bool logs;
};
constexpr RoleAccess kRoles[] = {
    {"admin", true},      {"platform", true}, {"team-admin", true},
    {"researcher", true}, {"auditor", true},  {"viewer", false},
};

const RoleAccess* AccessOf(const std::string& role) {
  for (const RoleAccess& r : kRoles) {
    if (role == r.role) return &r;
  }
  return nullptr;
}

// A label value for a subject's name: its digest (a name may hold '@', ':'
// and more than 63 characters).
std::string PersonLabel(const std::string& user) { return Sha256Hex(user).substr(0, 40); }

std::string BindingName(const std::string& user, const std::string& role) {
  return "causeway-" + role + "-" + PersonLabel(user).substr(0, 16);
}

json Labels(const std::string& user, const std::string& role) {
  json labels = {{kManaged, "causeway"}, {"causeway-role", role}};
  if (!user.empty()) labels["causeway-person"] = PersonLabel(user);
  return labels;
}

// An account's role and namespace: "researcher@team-a" -> {researcher, team-a}.
Result<std::pair<std::string, std::string>> Split(const std::string& account) {
  size_t at = account.find('@');
  if (at == std::string::npos || !AccessOf(account.substr(0, at)) || at + 1 == account.size()) {
    return InvalidArgument("a Kubernetes account is ROLE@NAMESPACE or ROLE@*, not \"" + account + "\"");
  }
  return std::make_pair(account.substr(0, at), account.substr(at + 1));
}

}  // namespace

json KubeRoleRules(const std::string& role) {
  const RoleAccess* a = AccessOf(role);
  if (!a) return json::array();
  const json read = {"get", "list", "watch"};
  json core = {"pods", "events", "services"};
  if (a->logs) core.push_back("pods/log");
  return json::array({
      {{"apiGroups", {"batch"}}, {"resources", {"jobs"}}, {"verbs", read}},
      {{"apiGroups", {""}}, {"resources", core}, {"verbs", read}},
      {{"apiGroups", {"kueue.x-k8s.io"}}, {"resources", {"workloads", "localqueues"}}, {"verbs", read}},
  });
}

json ClusterRoleManifest(const std::string& role) {
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", "ClusterRole"},
          {"metadata", {{"name", "causeway:" + role}, {"labels", Labels("", role)}}},
          {"rules", KubeRoleRules(role)}};
}

json BindingManifest(const std::string& user, const std::string& role, const std::string& ns) {
  json meta = {{"name", BindingName(user, role)},
               {"labels", Labels(user, role)},
               {"annotations", {{kUserAnnotation, user}}}};
  if (ns != "*") meta["namespace"] = ns;
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", ns == "*" ? "ClusterRoleBinding" : "RoleBinding"},
          {"metadata", meta},
          {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "ClusterRole"}, {"name", "causeway:" + role}}},
          {"subjects", json::array({{{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", "User"}, {"name", user}}})}};
}

KubePeople::KubePeople(std::string cluster, const KubeSettings& settings, Endpoint endpoint,
                       std::chrono::milliseconds timeout)
    : cluster_(std::move(cluster)), settings_(settings), api_(std::move(endpoint), timeout) {}

std::string KubePeople::NameOf(const std::string& user) const {
  if (user.empty() || user.size() > 253) return "";
  for (unsigned char c : user) {
    if (c < 0x21 || c == 0x7f) return "";
  }
  return settings_.rbac_user_prefix + user;
}

std::set<std::string> KubePeople::AccountsFor(const std::vector<providers::PersonGrant>& grants) const {
  std::set<std::string> out;
  for (const providers::PersonGrant& g : grants) {
    if (!AccessOf(g.role)) continue;
    out.insert(g.role + "@" + (g.team.empty() ? "*" : settings_.NamespaceFor(g.team)));
  }
  return out;
}

std::string KubePeople::BindingPath(const std::string& user, const std::string& role, const std::string& ns) {
  const std::string name = BindingName(user, role);
  return ns == "*" ? std::string(kRbac) + "/clusterrolebindings/" + name
                   : std::string(kRbac) + "/namespaces/" + ns + "/rolebindings/" + name;
}

Result<std::vector<std::string>> KubePeople::UserAccounts(const std::string& user) {
  const std::string selector =
      net::UrlEncode(std::string(kManaged) + "=causeway,causeway-person=" + PersonLabel(user));
  std::vector<std::string> out;
  for (const char* kind : {"rolebindings", "clusterrolebindings"}) {
    ASSIGN_OR_RETURN(json list, api_.Get(std::string(kRbac) + "/" + kind + "?labelSelector=" + selector));
    for (const json& b : JsonArray(list, "items")) {
      const json& meta = JsonMember(b, "metadata");
      // The digest is a label; the name itself is what must match.
      if (JsonString(JsonMember(meta, "annotations"), kUserAnnotation) != user) continue;
      const std::string role = JsonString(JsonMember(meta, "labels"), "causeway-role");
      if (!AccessOf(role)) continue;
      const std::string ns = JsonString(meta, "namespace");
      out.push_back(role + "@" + (ns.empty() ? "*" : ns));
    }
  }
  return out;
}

Status KubePeople::EnsureUser(const std::string& user, const std::string& account) {
  ASSIGN_OR_RETURN(auto where, Split(account));
  const auto& [role, ns] = where;
  // The role's rules as this build has them: made, or brought up to date.
  const std::string role_path = std::string(kRbac) + "/clusterroles/causeway:" + role;
  auto made = api_.Create(std::string(kRbac) + "/clusterroles", ClusterRoleManifest(role));
  if (!made.ok() && made.status().code() == Code::kAlreadyExists) {
    made = api_.MergePatch(role_path, {{"rules", KubeRoleRules(role)}});
  }
  if (!made.ok()) return made.status();
  const std::string collection = ns == "*" ? std::string(kRbac) + "/clusterrolebindings"
                                           : std::string(kRbac) + "/namespaces/" + ns + "/rolebindings";
  auto bound = api_.Create(collection, BindingManifest(user, role, ns));
  if (bound.ok()) return Status::Ok();
  if (bound.status().code() == Code::kNotFound) {
    return NotFound("namespace " + ns + " does not exist on " + cluster_ + ": " + bound.status().message());
  }
  if (bound.status().code() != Code::kAlreadyExists) return bound.status();
  // One of that name is there: it must be this person's.
  ASSIGN_OR_RETURN(json existing, api_.Get(BindingPath(user, role, ns)));
  if (JsonString(JsonMember(JsonMember(existing, "metadata"), "annotations"), kUserAnnotation) != user) {
    return AlreadyExists("binding " + BindingName(user, role) + " on " + cluster_ + " belongs to someone else");
  }
  return Status::Ok();
}

Status KubePeople::RemoveAssociation(const std::string& user, const std::string& account) {
  ASSIGN_OR_RETURN(auto where, Split(account));
  Status st = api_.Delete(BindingPath(user, where.first, where.second));
  return st.code() == Code::kNotFound ? Status::Ok() : st;
}

Status KubePeople::RemoveUser(const std::string& user) {
  ASSIGN_OR_RETURN(auto accounts, UserAccounts(user));
  for (const std::string& a : accounts) RETURN_IF_ERROR(RemoveAssociation(user, a));
  return Status::Ok();
}

std::vector<std::unique_ptr<providers::PeopleAccounts>> KubePeople::ForProvider(const Estate& estate,
                                                                              const Provider& provider) {
  std::vector<std::unique_ptr<providers::PeopleAccounts>> out;
  for (const Cluster& c : estate.clusters) {
    const KubeSettings* settings = SettingsAs<KubeSettings>(c);
    if (c.provider != provider.name || !settings || !settings->manage_rbac) continue;
    auto endpoint = EndpointOf(*settings);
    if (!endpoint.ok()) {
      spdlog::error("kubernetes cluster {}: people's bindings cannot be kept: {}", c.name,
                    endpoint.status().ToString());
      continue;
    }
    out.push_back(std::make_unique<KubePeople>(c.name, *settings, std::move(*endpoint)));
  }
  return out;
}

}  // namespace causeway::kube
