// The estate: every provider, cluster, GPU pool, price, reservation, team and
// dataset location Causeway may use. Platform engineers describe it in one
// YAML file (see examples/estate.yaml); adding a provider is adding entries.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/clock.h"
#include "causeway/money.h"
#include "causeway/resources.h"
#include "causeway/status.h"

namespace causeway {

struct Region {
  std::string name;  // provider's own region name, e.g. "eu-north1"
  std::string zone;  // residency zone, e.g. "eu", "us"
};

// What one provider kind reads from its own block of an estate entry
// (`sim:` on a provider, `slurm:` or `local:` on a cluster). Each kind
// defines its settings and parses them in its own folder
// (src/providers/<kind>/); the estate holds them opaque, and only that kind
// looks inside (SettingsAs).
class KindSettings {
 public:
  virtual ~KindSettings() = default;
  // The estate's queues the block names, each under its key (kubernetes'
  // local_queues): the estate parser refuses one that is no queue of the
  // estate, as it does every cross-reference.
  struct QueueRef {
    std::string key;
    std::string queue;
  };
  virtual std::vector<QueueRef> QueuesNamed() const { return {}; }
};

// The settings of type T that `entry` (a Provider or a Cluster) carries, or
// nullptr when it has none of that type.
template <typename T, typename Entry>
const T* SettingsAs(const Entry& entry) {
  return dynamic_cast<const T*>(entry.settings.get());
}

struct Provider {
  std::string name;  // "nebius", "coreweave", "gcp", ...
  std::string kind;  // a kind the estate was parsed with (EstateKinds)
  std::vector<Region> regions;
  std::shared_ptr<const KindSettings> settings;  // its kind's provider block, if any
};

inline constexpr std::string_view kInterconnects[] = {"infiniband", "roce", "ethernet", "nvlink", "none"};

// A pool of identical nodes. A CPU-only pool (no gpu_type in the file) has
// gpu_type kCpuType and counts its CPUs in gpus_per_node, so what counts
// GPUs elsewhere counts its CPUs (resources.h).
struct NodePool {
  std::string name;
  std::string gpu_type;  // normalized, e.g. "H200"; kCpuType for a CPU-only pool
  int gpus_per_node = 0;  // GPUs, or a CPU-only pool's CPUs
  int nodes = 0;
  std::string interconnect;  // one of kInterconnects
  std::optional<int> disk_gb;  // local disk per node for jobs, where declared
  std::optional<int> cpus;       // CPUs per node, where declared
  std::optional<int> memory_gb;  // memory per node, where declared
  // Software its nodes declare (`software: {driver: 550.54.15, cuda: "12.4",
  // image: registry/x@sha256:…}`), by name (one of kDeclaredSoftware): what
  // a job's requirements are matched against and what the simulated estate
  // reports as the facts of its attempts.
  std::map<std::string, std::string> software;

  bool cpu_only() const { return gpu_type == kCpuType; }
};

// What a cluster's backend does with the parts of a job spec that change
// what the job needs beyond its GPUs (`image_id`, `disk_size`, `cpus`,
// `memory`, `workdir`, `file_mounts`). The router sends a job only where every part it uses is
// honoured; each kind says what it honours (EstateKind::honours).
struct Honours {
  bool everything = false;     // the simulated estate: every part, in simulation
  bool git_workdir = false;    // workdir: {url, ref}, cloned before setup
  bool storage_paths = false;  // workdir and file_mounts from a path on the cluster's storage
  bool node_requests = false;  // cpus and memory asked of the backend too (Slurm: --cpus-per-task, --mem)
  // file_mounts from buckets (a storage location's url) copied with rclone
  // before setup, or mounted where the cluster has FUSE (Cluster::fuse).
  bool buckets = false;
  bool container_images = false;  // resources.image_id: each node runs the job in that image (Kubernetes)
  std::string backend;         // how reasons name it: "the local executor", "Slurm"
};

struct Cluster {
  std::string name;
  std::string provider;
  std::string region;
  std::string zone;  // residency zone, filled in from the provider's region
  std::vector<NodePool> node_pools;
  // Provider specifics injected into every job placed here, so researchers
  // never write them: NCCL/InfiniBand settings, storage paths, ...
  std::map<std::string, std::string> inject_envs;
  // Storage its nodes can reach, as URI or path prefixes (s3://ckpt-eu/,
  // /shared/ckpt): where a checkpoint written elsewhere must be for a job to
  // resume here. Unset: object stores (any scheme://) are reachable, local
  // paths only on the cluster that wrote them.
  std::optional<std::vector<std::string>> storage;
  // How to reach it, read by its provider's kind from its block (slurm:,
  // local:); null for kinds that need none.
  std::shared_ptr<const KindSettings> settings;
  Honours honours;  // from its provider's kind
  // Its nodes can mount buckets (rclone mount needs FUSE): `fuse: true` in
  // the estate. Without it, file_mounts MOUNT and MOUNT_CACHED are refused
  // here rather than pretended.
  bool fuse = false;
  // Glob patterns of the ResourceIds its provider's bills name its nodes
  // by (cw-h100-*): untagged charges on them can be allocated to the jobs
  // that ran here (`causeway cost showback --allocate`).
  std::vector<std::string> bill_resources;

  int TotalGpus() const;  // GPUs only, without CPU-only pools
};

// Price per GPU-hour of one GPU type on one cluster.
struct Price {
  std::string cluster;
  std::string gpu_type;
  Money on_demand;
  std::optional<Money> spot;
};

// Capacity the company has committed to pay for, used or not.
struct Reservation {
  std::string name;
  std::string cluster;
  std::string gpu_type;
  int count = 0;  // GPUs
  Timestamp start;
  Timestamp end;
  Money price;  // committed price per GPU-hour
};

// A team's monthly spending limit: past soft_percent a warning, past the
// whole amount no new admissions until the next month.
struct Budget {
  Money monthly;
  int soft_percent = 80;
};

struct Team {
  std::string name;
  std::string description;
  std::optional<Budget> budget;
};

// Quota of one flavor in one queue, in GPUs. A flavor is a GPU type,
// "-spot" appended for spot capacity ("H100", "H100-spot").
struct FlavorQuota {
  std::string flavor;
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;  // unset: no limit within the cohort
  std::optional<int64_t> lending_limit;    // unset: all unused nominal may be lent
};

// A team's queue, on the Kueue ClusterQueue model.
struct QueueConfig {
  std::string name;
  std::string team;
  std::string cohort;  // "" for a queue that neither borrows nor lends
  int weight = 1;      // fair-sharing weight within the cohort
  bool strict_fifo = false;
  std::vector<FlavorQuota> quotas;
};

// One admission rule; which fields apply depends on `rule` (docs/policies.md).
struct PolicyConfig {
  std::string name;
  std::string rule;                    // one of kPolicyRules
  std::vector<std::string> labels;     // require-labels
  std::vector<std::string> teams;      // allowed-gpu-types, require-residency ("" = every team)
  std::vector<std::string> gpu_types;  // allowed-gpu-types
  std::string zone;                    // require-residency
  std::optional<int> max_gpus;         // max-job-size
  std::optional<Micros> max_duration;  // max-job-size
};
inline constexpr std::string_view kPolicyRules[] = {"require-labels", "pinned-image", "allowed-gpu-types",
                                                    "require-residency", "max-job-size"};

// An idle-reaper policy (docs/telemetry.md): an attempt with some GPU below
// `threshold_percent` for a whole, fully sampled `window` is warned, and
// cancelled `grace` later if still idle (action "cancel").
struct ReaperConfig {
  std::string name;
  std::string team;  // "" = every team
  int threshold_percent = 20;
  Micros window = Micros(30LL * 60 * 1000000);
  Micros grace = Micros(15LL * 60 * 1000000);
  std::string action = "cancel";  // or "warn"
  bool dry_run = false;
  Micros max_gap = Micros(2LL * 60 * 1000000);
  std::vector<std::string> exempt_labels;  // "key" or "key=value"
};

// Where GPU utilization is read from (docs/telemetry.md): a Prometheus
// server holding the DCGM exporter's series, polled every `interval`.
struct TelemetryConfig {
  std::string prometheus;  // http://HOST:PORT
  Micros interval = Micros(60LL * 1000000);
  std::string job_label = "causeway_job";
  std::string attempt_label = "causeway_attempt";
  std::string gpu_label = "gpu";
};

// Roles a group can be bound to (docs/identity.md).
inline constexpr std::string_view kRoleNames[] = {"admin",   "platform", "team-admin", "researcher",
                                                  "finance", "auditor",  "viewer"};

// `access:` entries: a role bound to an identity-provider group, for one
// team or (no team) for all.
struct AccessBinding {
  std::string group;
  std::string role;
  std::string team;
  std::string source;  // "access[2]", shown by `causeway access explain`
  // API bindings made under a break-glass grant: its id, and whether an
  // admin has confirmed the binding since (until then it is flagged).
  std::string breakglass;
  bool confirmed = true;
};

// People signing in with the company IdP's OpenID Connect tokens.
struct OidcConfig {
  std::string issuer;                  // https://corp.okta.com (its /.well-known/openid-configuration)
  std::vector<std::string> audiences;  // the client id(s) tokens must be issued for
  std::string username_claim = "email";
  std::string groups_claim = "groups";
  Micros leeway = Micros(60LL * 1000000);
  // Refuse people the SCIM directory does not know (when provisioning is on).
  bool require_provisioned = false;
};

// Causeway as an OIDC issuer of per-attempt workload tokens.
struct WorkloadIdentityConfig {
  std::string issuer;                  // the URL clouds fetch /.well-known/openid-configuration from
  std::vector<std::string> audiences;  // the token's aud: sts.amazonaws.com, a GCP pool, vault
  Micros lifetime = Micros(3600LL * 1000000);
  std::string alg = "ES256";  // ES256 or RS256
};

// What happens to a person's work when they lose access.
struct DeprovisionConfig {
  std::string queued = "cancel";  // cancel | keep | reassign
  std::string running = "stop";   // stop | finish
  std::string reassign_to;        // queued: reassign: the userName that takes the jobs over
};

// Time-boxed elevation (`causeway breakglass request`). Off unless the
// estate has an identity.breakglass section, which must name the roles and
// the groups whose members may ask.
struct BreakglassConfig {
  bool enabled = false;
  // 1: another person, an admin through their groups, must approve. 0 only
  // with self_approval: the requester activates their own grant (reported
  // by `causeway audit coverage`).
  int approvers = 1;
  bool self_approval = false;
  Micros max_duration = Micros(4LL * 3600 * 1000000);
  std::vector<std::string> roles;   // roles that may be asked for
  std::vector<std::string> groups;  // IdP groups whose members may ask
  std::string webhook;  // http(s) URL told of every request, approval, use and revocation
};

// A federation the company configured on a cloud's side to trust
// Causeway's workload tokens (identity.federations): a job that names it,
// or whose team has it by default, gets that cloud's short-lived
// credentials the way its SDKs look for them, and no static key.
struct CloudFederation {
  std::string name;
  std::string kind;      // aws, gcp, azure or kubernetes
  std::string audience;  // the token's aud: one of identity.workload.audiences
  std::vector<std::string> teams;  // the teams whose jobs may use it (empty: every team)
  bool by_default = false;         // given to those teams' jobs that name no identity
  // aws: the role assumed with the token (AssumeRoleWithWebIdentity), and
  // the STS endpoint where it is not AWS's own.
  std::string role_arn, sts_endpoint;
  // gcp: the workload identity pool provider is the audience; the service
  // account impersonated ("" : the federated identity itself).
  std::string service_account;
  std::string token_url = "https://sts.googleapis.com/v1/token";
  // azure: the app registration with the federated credential.
  std::string tenant_id, client_id;
  std::string authority_host;  // "" : the SDK's default (login.microsoftonline.com)
  // kubernetes: a cluster whose API server trusts Causeway's issuer
  // (--authentication-config); the job gets a kubeconfig that reads the
  // token from its file. `ca_file` is the API server's CA, a path on the
  // nodes where jobs run and on the server (the broker reads k8s:// with it).
  std::string api_server, ca_file;

  bool AllowsTeam(const std::string& team) const;
};

// A secrets manager the company keeps (identity.secret_stores), which
// jobs' `secrets:` references name: the broker reads from it for each
// attempt with that attempt's own federated identity, never a key of
// Causeway's. The cloud's policy on the role decides in the end; this says
// what Causeway lets each team ask for, checked at submission.
struct SecretStore {
  std::string name;
  // aws-secrets-manager (aws-sm:// references), or kubernetes
  // (k8s://CLUSTER/NAMESPACE/NAME#KEY: a Secret read from the API server of
  // its identity, a federation of kind kubernetes).
  std::string kind = "aws-secrets-manager";
  std::string identity;  // the federation it is read through (kind aws, or kubernetes)
  std::string region;    // aws
  std::string endpoint;  // aws; "" : https://secretsmanager.REGION.amazonaws.com
  std::string cluster;   // kubernetes: the CLUSTER of its references ("" : the store's name)
  // What each team may read: secret names (for kubernetes NAMESPACE/NAME),
  // or prefixes ending in '*'.
  std::map<std::string, std::vector<std::string>> teams;

  bool Grants(const std::string& team, const std::string& secret) const;
  std::string Endpoint() const;
};

struct IdentityConfig {
  std::optional<OidcConfig> oidc;
  std::optional<WorkloadIdentityConfig> workload;
  std::vector<CloudFederation> federations;
  std::vector<SecretStore> secret_stores;
  DeprovisionConfig deprovision;
  BreakglassConfig breakglass;

  const CloudFederation* FindFederation(const std::string& name) const;
  // The store of `scheme`'s kind (aws-sm, or k8s for `cluster`) that lets
  // `team` read `secret` (k8s: NAMESPACE/NAME); nullptr when none does.
  const SecretStore* StoreFor(const std::string& scheme, const std::string& cluster, const std::string& team,
                              const std::string& secret) const;
};

struct Dataset {
  std::string name;
  std::vector<std::string> replicas;  // "provider/region" where a copy lives
  std::string owner;      // the team its replicas' storage is charged to ("" : none)
  // The residency zone it must stay in ("" : none): never replicated to a
  // location outside it, read only by jobs that run in it.
  std::string residency;
};

// Object storage Causeway keeps dataset replicas in, reached through
// rclone: `remote` is an rclone remote and path ("nebius-eu:datasets"),
// whose credentials live in rclone's own config file (DataConfig), never
// in the estate.
struct StorageLocation {
  std::string name;
  std::string provider;
  std::string region;
  std::string zone;  // residency zone, filled in from the provider's region
  std::string remote;
  std::string url;  // the same storage as people name it (s3://bucket), "" when not given
  std::optional<Money> storage_per_gb_month;  // what a GB kept here costs a month
  std::string Location() const { return provider + "/" + region; }  // "provider/region"
  // What keeping `bytes` here for `kept` costs: GB of 10^9 bytes, a month
  // of 730 hours (as providers prorate), to the micro; nullopt without a
  // storage price.
  std::optional<Money> StorageCost(int64_t bytes, Micros kept) const;
  // The rclone path of `url`, a URL under this location's `url`
  // ("s3://b/c4" under "s3://b" with remote "eu:b" is "eu:b/c4").
  std::string RemoteOf(std::string_view url) const;
};

// What moving a GB costs from one place to another. `from` and `to` are
// "provider/region", "provider" or "*"; the most specific match wins, and
// within one provider and region moving is free unless a price says not.
struct TransferPrice {
  std::string from, to;
  Money per_gb;
  std::string kind;  // egress, inter-region, interconnect (for people)
};

// Datasets' storage and how to move data (`data:` in the estate).
struct DataConfig {
  std::string rclone = "rclone";  // the program, looked up on PATH unless a path
  std::string rclone_config;      // rclone.conf holding the remotes ("" : rclone's own default)
  // rclone.conf as the clusters' nodes read it, for file_mounts from
  // buckets: a path on their storage, with credentials that may only read
  // (jobs can read it). "" : buckets are not delivered to nodes.
  std::string node_rclone_config;
  std::vector<StorageLocation> locations;
  std::vector<TransferPrice> transfer_prices;

  const StorageLocation* FindLocation(std::string_view name) const;
  // The location whose `url` is `url` or a prefix of it ("s3://b" holds
  // "s3://b/c4"), or null.
  const StorageLocation* LocationOfUrl(std::string_view url) const;
  // The price of moving a GB from `from` to `to` ("provider/region" each):
  // zero within a region unless priced, nullopt when nothing prices it.
  std::optional<Money> TransferPerGb(const std::string& from, const std::string& to, const std::string& currency) const;
  // What moving `bytes` from `from` to `to` costs (per GB of 10^9 bytes,
  // rounded to the micro); nullopt when nothing prices it.
  std::optional<Money> TransferCost(const std::string& from, const std::string& to, int64_t bytes,
                                    const std::string& currency) const;
};

// The log sources `causeway audit import` reads, by their --source names.
inline constexpr std::string_view kAuditSourceNames[] = {"k8s", "cloudtrail", "gcp", "azure", "okta", "slurm"};

// What the audit trail should cover, checked by `causeway audit coverage`
// against what it does: buckets whose data-plane (object-level) access is
// not logged, log sources not imported lately, retention below policy.
struct AuditBucket {
  std::string provider;
  std::string name;
  // The bucket's own setting; unset: the organisation's (data_logging
  // below), which usually covers only buckets made after it was turned on.
  std::optional<bool> data_logging;
  std::optional<Timestamp> created;
  std::string holds;  // what is in it: checkpoints, training-data, ...
};
struct AuditLogSource {
  std::string provider;
  std::string source;  // one of kAuditSourceNames
  Micros max_gap = std::chrono::hours(24);  // longest expected between imports
  std::optional<Micros> retention;          // how long the provider keeps the log
};
// A provider's organisation-wide data-plane logging, on since `since`.
struct OrgDataLogging {
  std::string provider;
  Timestamp since;
};
struct AuditCoverageConfig {
  std::optional<Micros> retention;  // the policy's minimum for every log source
  std::vector<OrgDataLogging> data_logging;
  std::vector<AuditBucket> buckets;
  std::vector<AuditLogSource> log_sources;
};

// Readiness (docs/readiness.md): who owns each control, and per provider
// its service model, who is responsible for each control and what the
// provider itself declares.
inline constexpr std::string_view kServiceModels[] = {"infrastructure", "self-managed-slurm",
                                                      "self-managed-kubernetes", "managed-kubernetes",
                                                      "managed-inference"};
inline constexpr std::string_view kResponsibleParties[] = {"provider", "platform", "model-team", "partner"};

// A control's owner: a person (a directory userName) or a group (its
// displayName) from the directory.
struct ControlOwner {
  std::string name;
  bool group = false;
};

// Something a provider says of itself (a certification, its regions,
// subprocessors, where its support staff are): recorded with its source and
// date, never mistaken for evidence Causeway measured.
struct ProviderDeclaration {
  std::string kind;       // certification, region, subprocessor, support-location, escalation, other
  std::string statement;  // "ISO/IEC 27001:2022 certified"
  std::string source;     // where it was read: a URL or a contract clause
  Timestamp date;         // when it was read
  std::vector<std::string> controls;  // the control ids it speaks to
};

struct ProviderReadiness {
  std::string provider;
  std::string service_model;                        // one of kServiceModels
  std::map<std::string, std::string> responsible;   // control id -> one of kResponsibleParties
  std::map<std::string, ControlOwner> owners;       // control id -> owner here, over the estate-wide one
  std::map<std::string, std::string> not_applicable;  // control id -> why
  std::vector<ProviderDeclaration> declarations;
};

// A control the estate adds, or its text over a built-in one's.
struct ControlDeclaration {
  std::string id;
  std::string title;
  std::string description;
  std::vector<std::string> nist;
};

struct ReadinessConfig {
  std::map<std::string, ControlOwner> owners;  // control id -> owner for every provider
  std::vector<ProviderReadiness> providers;
  std::vector<ControlDeclaration> controls;
  std::optional<Micros> recovery_objective;  // how soon work must resume elsewhere after an outage

  const ProviderReadiness* FindProvider(std::string_view name) const;
};

struct Estate {
  std::string currency = "USD";
  std::vector<Provider> providers;
  std::vector<Cluster> clusters;
  std::vector<Price> prices;
  std::vector<Reservation> reservations;
  std::vector<Team> teams;
  std::vector<Dataset> datasets;
  DataConfig data;
  std::vector<QueueConfig> queues;
  std::vector<PolicyConfig> policies;
  std::vector<ReaperConfig> reaper;
  std::optional<TelemetryConfig> telemetry;
  std::vector<AccessBinding> access;
  IdentityConfig identity;
  AuditCoverageConfig audit;
  ReadinessConfig readiness;

  const Provider* FindProvider(std::string_view name) const;
  const Cluster* FindCluster(std::string_view name) const;
  const Team* FindTeam(std::string_view name) const;
  const Price* FindPrice(std::string_view cluster, std::string_view gpu_type) const;
  const Dataset* FindDataset(std::string_view name) const;
  // The queue a team's jobs go to, or null.
  const QueueConfig* QueueForTeam(std::string_view team) const;
};

// One block of an estate entry that a provider kind reads (the `slurm:` of
// a cluster, say), handed to the kind's parser by the estate parser. Every
// problem reported through it carries the file, line, column and field.
class SettingsReader {
 public:
  virtual ~SettingsReader() = default;
  // Checks that the block is a mapping with unique keys, all from `keys`
  // (an unknown key is reported with a "did you mean"). False only when the
  // block is not a mapping; nothing else should be read then.
  virtual bool CheckKeys(const std::vector<std::string_view>& keys) = 0;
  virtual bool Has(std::string_view key) const = 0;
  // The string under `key`; "" when absent (reported when `required`) or
  // not a string (reported).
  virtual std::string String(std::string_view key, bool required) = 0;
  // The boolean under `key`; nullopt when absent or not a boolean (reported).
  virtual std::optional<bool> Bool(std::string_view key) = 0;
  // The decimal number under `key`; nullopt when absent, or when it is not
  // a number (reported as `expected`, e.g. "expected a rate such as 0.05").
  virtual std::optional<double> Number(std::string_view key, std::string_view expected) = 0;
  // The strings of the list under `key`; nullopt when absent. A value that
  // is not a non-empty list is reported with `example`, and so is every item
  // that is not a string (left out).
  virtual std::optional<std::vector<std::string>> Strings(std::string_view key, std::string_view example) = 0;
  // The string pairs of the mapping under `key`, in the file's order;
  // nullopt when absent. A value that is not a non-empty mapping is reported
  // with `example`, and so is every key or value that is not a string, and
  // every key given twice (left out).
  virtual std::optional<std::vector<std::pair<std::string, std::string>>> StringMap(std::string_view key,
                                                                                   std::string_view example) = 0;
  // Reports a problem at `key` of the block ("" for the block itself), or at
  // item `index` of the list under `key`.
  virtual void Error(std::string_view key, std::string message) = 0;
  virtual void ItemError(std::string_view key, size_t index, std::string message) = 0;
};

using KindSettingsParser = std::function<std::shared_ptr<const KindSettings>(SettingsReader&)>;

// What the estate parser knows of one provider kind: its name, and the
// blocks its entries may carry. A kind without blocks (sim without `sim:`)
// sets only its name.
struct EstateKind {
  std::string name;
  std::string provider_key;  // block on a provider of this kind ("" for none)
  KindSettingsParser parse_provider;
  std::string cluster_key;   // block on a cluster of a provider of this kind
  KindSettingsParser parse_cluster;
  // When set, a cluster of this kind must have its block; the error says
  // this (e.g. "a cluster of a local provider needs local: {output_dir}").
  std::string cluster_block_required;
  // What its clusters' backend does with a job's image, disk, workdir and
  // file mounts (copied onto each cluster).
  Honours honours;
};
using EstateKinds = std::vector<EstateKind>;

// Parses and validates an estate. Cross-references (a cluster's provider and
// region, a price's cluster and GPU type, ...) are checked too; every problem
// is reported with file, line, column and field. A provider's kind must be
// one of `kinds`, and its entries' kind blocks are read by that kind. The
// build's own kinds are providers::BuiltInKinds(); providers/registry.h
// offers ParseEstate and LoadEstateFile with them.
Result<Estate> ParseEstate(std::string_view yaml_text, const std::string& file, const EstateKinds& kinds);
Result<Estate> LoadEstateFile(const std::string& path, const EstateKinds& kinds);

// The estate compiled into the binary (examples/estate.yaml): simulated
// providers, used when no --estate is given.
std::string_view DefaultEstateYaml();

}  // namespace causeway

namespace causeway {

struct JobSpec;

// Checks that a job could run somewhere in `estate`: its GPU types, provider,
// region, residency zone, team and datasets exist. Diagnostics name the
// field; every problem is reported. An alternative the estate cannot serve
// is an error only when no alternative can be served; otherwise its gaps
// are appended to `warnings` (when given).
Status CheckJobAgainstEstate(const JobSpec& spec, const Estate& estate, const std::string& file,
                             std::vector<Diagnostic>* warnings = nullptr);

}  // namespace causeway
