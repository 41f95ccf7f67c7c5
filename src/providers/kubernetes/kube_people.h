// People's access inside a Kubernetes cluster: Causeway's role bindings
// carried into the cluster's RBAC, for clusters whose block says
// manage_rbac: true (the PeopleAccounts capability of the kubernetes kind).
//
// Each Causeway role that means something inside a cluster has a
// ClusterRole Causeway keeps, causeway:ROLE (KubeRoleRules says what it
// allows; finance has none). A person's role for one team is a RoleBinding
// in that team's namespace; a role for every team is a ClusterRoleBinding.
// The subject is the User the cluster's authenticator names the person:
// rbac_user_prefix + the directory userName (kube-apiserver's
// --oidc-username-claim=email with --oidc-username-prefix). Accounts are
// written ROLE@NAMESPACE, or ROLE@* for a ClusterRoleBinding.
//
// Submitting and stopping stay Causeway's: no role may create, change or
// delete Jobs in the cluster, so quota, policy and the audit trail cannot
// be gone around (and a Job deleted behind Causeway's back would be taken
// for a preemption and placed again).
//
// Every binding carries the labels app.kubernetes.io/managed-by=causeway and
// causeway-person (a digest of the subject's name, which a label value cannot
// hold) and the exact name as an annotation: only those are ever read or
// removed. Every call is under the deadline given.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/estate.h"
#include "providers/capabilities.h"
#include "providers/kubernetes/kube_api.h"
#include "providers/kubernetes/kube_settings.h"

namespace causeway::kube {

// The rules of causeway:ROLE; an empty array for a role with none.
nlohmann::json KubeRoleRules(const std::string& role);
// The objects, built alone so that they can be checked without a cluster.
nlohmann::json ClusterRoleManifest(const std::string& role);
// A RoleBinding in `ns`, or a ClusterRoleBinding when `ns` is "*".
nlohmann::json BindingManifest(const std::string& user, const std::string& role, const std::string& ns);

class KubePeople final : public providers::PeopleAccounts {
 public:
  KubePeople(std::string cluster, const KubeSettings& settings, Endpoint endpoint,
             std::chrono::milliseconds timeout = std::chrono::milliseconds(10'000));

  const std::string& cluster() const override { return cluster_; }
  std::string Noun() const override { return "Kubernetes user"; }
  std::string NameOf(const std::string& user) const override;
  std::set<std::string> AccountsFor(const std::vector<providers::PersonGrant>& grants) const override;
  Result<std::vector<std::string>> UserAccounts(const std::string& user) override;
  Status EnsureUser(const std::string& user, const std::string& account) override;
  Status RemoveAssociation(const std::string& user, const std::string& account) override;
  Status RemoveUser(const std::string& user) override;

  // One for each cluster of `provider` with manage_rbac; a cluster whose
  // endpoint cannot be read is left out, with the reason logged.
  static std::vector<std::unique_ptr<providers::PeopleAccounts>> ForProvider(const Estate& estate,
                                                                             const Provider& provider);

 private:
  // The path of the binding of `user` to `role` in `ns` ("*": cluster-wide).
  static std::string BindingPath(const std::string& user, const std::string& role, const std::string& ns);

  std::string cluster_;
  KubeSettings settings_;
  KubeApi api_;
};

}  // namespace causeway::kube
