// How to reach a Kubernetes cluster and how Causeway's jobs run there: the
// `kubernetes:` block of a cluster whose provider is of kind kubernetes.
//
//   kubernetes:
//     api_server: https://10.0.0.1:6443   # or kubeconfig: FILE (+ context: NAME)
//     ca_file: /etc/causeway/k8s-ca.crt   # the API server's CA
//     token_file: /var/run/causeway/k8s-token   # or client_cert + client_key
//     namespace: causeway                 # one shared namespace, or
//     namespace_prefix: team-             # one per team: PREFIX + team
//     gpu_resource: nvidia.com/gpu        # amd.com/gpu
//     gpu_product_label: nvidia.com/gpu.product
//     local_queue: team-queue             # Kueue's LocalQueue: Kueue admits
//     local_queues: {nlp-gpu: nlp-lq}     # per Causeway queue; others: local_queue
//     priority_classes: {high: prod, critical: urgent}  # Kueue's WorkloadPriorityClasses
//     image: ubuntu:22.04                 # for jobs that name no image_id
//     manage_rbac: true                   # people's roles as RBAC bindings
//     rbac_user_prefix: "oidc:"           # as the OIDC authenticator names users
//
// A credential is never written inline: a token is read from its file at
// each call (so a rotated token is picked up), a certificate from its.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "causeway/estate.h"

namespace causeway::kube {

struct KubeSettings final : KindSettings {
  std::string api_server;  // https://host:port
  std::string ca_file;
  std::string token_file;
  std::string client_cert, client_key;
  std::string kubeconfig, context;  // read at start instead of the four above
  std::string namespace_name;       // shared namespace
  std::string namespace_prefix;     // per-team namespaces
  std::string gpu_resource = "nvidia.com/gpu";
  std::string gpu_product_label = "nvidia.com/gpu.product";
  std::string local_queue;  // "" : the cluster runs no Kueue for Causeway's jobs
  // The LocalQueue of a Causeway queue (by its name) where it is not
  // local_queue; set only with local_queue.
  std::map<std::string, std::string> local_queues;
  // Kueue's WorkloadPriorityClass for Causeway's priority classes (by
  // name: low, normal, high, critical); set only with local_queue.
  std::map<std::string, std::string> priority_classes;
  std::string image = "ubuntu:22.04";
  // Whether Causeway keeps people's RBAC bindings here (kube_people.h), and
  // the prefix the cluster's authenticator puts before a userName
  // (kube-apiserver's --oidc-username-prefix).
  bool manage_rbac = false;
  std::string rbac_user_prefix = "oidc:";

  // The namespace a team's jobs run in.
  std::string NamespaceFor(const std::string& team) const;
  // Whether Kueue admits Causeway's Jobs here (Causeway never starts them).
  bool UsesKueue() const { return !local_queue.empty(); }
  // The LocalQueue a job of Causeway queue `queue` ("" for none) goes to;
  // "" without Kueue.
  const std::string& LocalQueueFor(const std::string& queue) const;
  // The WorkloadPriorityClass of a job of priority `priority`: that of the
  // highest Causeway class at or below it that priority_classes names
  // (an integer priority of 75 takes normal's), or "" (Kueue's default).
  std::string PriorityClassFor(int priority) const;
  // local_queues' keys: each must be a queue of the estate.
  std::vector<QueueRef> QueuesNamed() const override;
};

// The estate's view of the kubernetes kind: its cluster block and how it is read.
EstateKind EstateKindOf();

}  // namespace causeway::kube
