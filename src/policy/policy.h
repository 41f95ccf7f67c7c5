// Admission policy: a chain of small named rules from the estate file, run on
// every submission before anything is queued. A rule either passes, mutates
// the spec (and says what it changed), or rejects with kPolicyViolation
// naming the rule, the field and how to fix it.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/estate.h"
#include "causeway/job_spec.h"
#include "causeway/status.h"

namespace causeway::policy {

class Rule {
 public:
  explicit Rule(PolicyConfig config) : config_(std::move(config)) {}
  virtual ~Rule() = default;
  const std::string& name() const { return config_.name; }

  // Passes, mutates `spec` (appending a sentence per change to `changes`), or
  // returns kPolicyViolation.
  virtual Status Apply(JobSpec& spec, std::vector<std::string>& changes) const = 0;

 protected:
  // Whether the rule covers `team` (an empty team list covers every team).
  bool Covers(const std::string& team) const;
  // kPolicyViolation: "policy NAME (RULE): PROBLEM; FIX", pointing at `field`.
  Status Reject(const std::string& field, const std::string& problem, const std::string& fix) const;

  PolicyConfig config_;
};

class Chain {
 public:
  // Builds the chain in the order the estate lists the policies.
  static std::unique_ptr<Chain> FromEstate(const Estate& estate);

  // Runs every rule in order, even after a rejection: the violation lists
  // every rule's problem (one diagnostic each).
  Status Apply(JobSpec& spec, std::vector<std::string>& changes) const;
  size_t size() const { return rules_.size(); }

 private:
  std::vector<std::unique_ptr<Rule>> rules_;
};

// Shell lines that prepare an attempt's workspace before its setup: each
// file mount linked from the cluster's storage to its target, or, from a
// bucket under one of `data`'s storage locations, copied there with rclone
// (mode COPY) or mounted (MOUNT, MOUNT_CACHED: rclone mount with FUSE,
// unmounted when the script ends) with the nodes' rclone config; then the
// workdir entered (a git workdir cloned into workdir-JOB-ATTEMPT first).
// "" when the job has neither. Values are quoted for bash.
//
// With `federations` (FederationsFor), first: each one's workload token,
// which the launch put in FederatedTokenVar, written to a file of its own
// in a 0700 folder and unset, and the variables each cloud's SDKs read set
// (AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_SESSION_NAME;
// GOOGLE_APPLICATION_CREDENTIALS, an external_account configuration whose
// credential source is the file; AZURE_FEDERATED_TOKEN_FILE, AZURE_CLIENT_ID,
// AZURE_TENANT_ID; KUBECONFIG, a kubeconfig whose user reads the file).
// A background loop asks Causeway for fresh tokens every
// `refresh_every` with the attempt's credential (refused once the attempt
// has ended); the loop is stopped and the folder removed when the script ends.
// Secrets the spec asks for as files (SecretRef::as_file) are written, from
// their variables, to 0600 files of another 0700 folder, each variable then
// holding its file's path; removed when the script ends.
std::string WorkspaceScript(const JobSpec& spec, const std::string& job_id, int attempt,
                            const DataConfig* data = nullptr,
                            const std::vector<const CloudFederation*>& federations = {},
                            Micros refresh_every = Micros(0));

// The federated identities an attempt of `spec` gets: those it names, or,
// naming none, its team's defaults (estate identity.federations), known
// and allowed, as submission checked.
std::vector<const CloudFederation*> FederationsFor(const JobSpec& spec, const IdentityConfig& identity);
// The variable an attempt's token for `f` reaches the workspace script in
// (CAUSEWAY_FEDERATED_TOKEN_AWS): written to its file there, then unset.
std::string FederatedTokenVar(const CloudFederation& f);

// Where a path a job writes is kept when it lies under one of its bucket
// file_mounts delivered with `mode` (as WorkspaceScript delivers them): the
// bucket URL it has and its rclone path under the storage location;
// nullopt otherwise. `path` is as the job sees it (under the mount's
// target) or the bucket URL itself.
struct MountedPath {
  const StorageLocation* location = nullptr;
  std::string url, remote;
};
std::optional<MountedPath> MountedBucketPath(const JobSpec& spec, const DataConfig& data, const std::string& path,
                                             std::string_view mode);

// The environment a job is launched with on `cluster`: the cluster's
// injected provider settings, then the job's own envs (which win), then
// Causeway's CAUSEWAY_* variables and SkyPilot's run-time variables (which
// always win): SKYPILOT_NUM_NODES, SKYPILOT_NUM_GPUS_PER_NODE (the chosen
// alternative's), SKYPILOT_TASK_ID, and for one node SKYPILOT_NODE_RANK 0
// and SKYPILOT_NODE_IPS 127.0.0.1; a backend that spans nodes sets those
// two per node (the Slurm provider from the allocation).
std::map<std::string, std::string> LaunchEnv(const JobSpec& spec, const Cluster& cluster, const std::string& job_id,
                                             int attempt, int gpus_per_node = 0);

}  // namespace causeway::policy
