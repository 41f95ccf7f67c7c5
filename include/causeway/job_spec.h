// The job spec: a SkyPilot-compatible task file plus Causeway's own fields.
//
//   name: train-llama
//   resources:
//     accelerators: H200:8          # or h200, {H100: 8}, [H100:8, A100-80GB:8]
//     infra: nebius/eu-north1       # or cloud: + region:
//     use_spot: false
//     image_id: registry.example.com/train@sha256:…
//     labels: {owner: alice@corp.com, team: nlp}
//   num_nodes: 2
//   envs: {EPOCHS: 3, HF_HOME: null}   # null: give it with --env
//   secrets: {HF_TOKEN: null}          # given with --secret, kept sealed
//   setup: pip install -r requirements.txt
//   run: torchrun train.py
//   datasets: [{name: c4, version: "2024-05"}]
//   checkpoint: {path: /ckpt/llama, interval: 30m}
//   residency: eu
//   priority: high
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/clock.h"
#include "causeway/resources.h"
#include "causeway/status.h"

namespace causeway {

struct DatasetRef {
  std::string name;
  std::string version;  // at least one of version and digest is set
  std::string digest;   // "sha256:<64 hex>"
  // "on-demand": where the job is placed and no verified copy is, one is
  // made (replicated) and the job waits for it; "" : the job runs only
  // where a copy is, or reads remotely with allow_remote_data.
  std::string replicate;
};

struct CheckpointSpec {
  std::string path;
  Micros interval{0};  // 0: the job decides when to checkpoint
};

// One entry of `file_mounts`, in any of SkyPilot's forms: a target path
// mapped to a source (a path or a bucket URL), or to a storage object
// (`{name, source, store, mode, persistent, config}`).
struct FileMount {
  std::string target;  // path inside the job
  std::string source;  // local path or bucket URL; "" for a bucket named by `name` alone
  std::vector<std::string> more_sources;  // `source: [a, b, …]`: every one after the first
  std::string name;    // a bucket's name (SkyPilot Storage); "" when not given
  std::string store;   // s3, gcs, azure, r2, ibm, oci, nebius, volume; "" when not given
  std::string mode;    // "", "MOUNT", "COPY", "MOUNT_CACHED" (upper-cased)
  std::optional<bool> persistent;
  bool object = false;  // written as a storage object ({source, mode, ...}), not `target: source`

  // Whether the source is a path (not a bucket URL or a bucket by name).
  bool FromPath() const { return !source.empty() && source.find("://") == std::string::npos; }
  // How a bucket is delivered, as SkyPilot defaults it: `target: s3://…`
  // is copied, a storage object is mounted unless its mode says otherwise.
  std::string Mode() const { return !mode.empty() ? mode : object ? "MOUNT" : "COPY"; }
};

// `workdir`: a directory (SkyPilot syncs it from the submitter's machine) or
// a git repository at a ref.
struct Workdir {
  std::string path;     // `workdir: PATH`
  std::string git_url;  // `workdir: {url, ref}`
  std::string git_ref;  // branch, tag or commit; "" for the default branch
  bool empty() const { return path.empty() && git_url.empty(); }
};

// Named priority classes and the integer each stands for (higher runs first).
// A spec may also give an integer from 0 to 1000 directly.
struct PriorityClass {
  std::string_view name;
  int value;
};
inline constexpr PriorityClass kPriorityClasses[] = {
    {"low", 10}, {"normal", 50}, {"high", 100}, {"critical", 1000}};
inline constexpr int kDefaultPriority = 50;

// Failure classes a job's recovery policy may name (see src/recovery).
inline constexpr std::string_view kFailureClassNames[] = {
    "preemption", "node_fault", "out_of_memory", "timeout", "storage_full",
    "data_path",  "provider_outage", "user_error"};

// `recovery: {max_restarts: 3, on: [preemption, node_fault], backoff: 1m}`;
// unset fields keep Causeway's defaults.
struct RecoverySpec {
  std::optional<int> max_restarts;
  std::optional<std::vector<std::string>> on;  // failure class names
  std::optional<Micros> backoff;
};

// How a job behaves on the simulated estate (ignored by real backends).
struct SimHint {
  Micros duration{std::chrono::hours(1)};  // run time in (simulated) time
  int utilization_percent = 85;            // mean GPU utilization; 0 = an idle job
  int exit_code = 0;                       // non-zero: the program fails at the end
};

// `resources.cpus` / `resources.memory` per node: a number, or SkyPilot's
// "N+" (at least N). A GPU job takes GPUs, not CPUs or memory, so for it
// both forms mean "nodes with at least N". A CPU-only job takes N CPUs
// (rounded up) of a CPU-only node; memory is only checked against the node's.
// The form given is kept for display.
struct NodeAmount {
  double value = 0;     // CPUs, or GB of memory
  bool or_more = false;  // written "N+"
  std::string ToString() const;  // "4", "4+", "0.5", "32+"
};

// A reference to a secret in a store the estate declares
// (identity.secret_stores), written as a `secrets:` value:
//   aws-sm://NAME[#KEY]                  AWS Secrets Manager: the secret's
//                                        string, or KEY of its JSON object
//   k8s://CLUSTER/NAMESPACE/NAME#KEY     a key of a Kubernetes Secret
// or as {from: REFERENCE, as: file} to get it as a file whose path is the
// variable's value. The reference is not secret: it is kept in the spec.
struct SecretRef {
  std::string reference;  // as written
  std::string scheme;     // aws-sm or k8s
  std::string cluster, ns;  // k8s only
  std::string name, key;    // key "" : the whole secret
  bool as_file = false;
  // What a store's team patterns match: NAME, or NAMESPACE/NAME for k8s.
  std::string Path() const { return scheme == "k8s" ? ns + "/" + name : name; }
};

// Whether a `secrets:` value is written as a reference (starts with one of
// the schemes above) rather than being a secret value.
bool LooksLikeSecretRef(std::string_view value);
// The reference `text`, or kInvalidArgument saying what is expected.
Result<SecretRef> ParseSecretRef(std::string_view text);

struct JobSpec {
  std::string name;
  Accelerators accelerators;  // empty for a CPU-only job
  std::string cloud;          // provider, from `infra` or `cloud`
  std::string region;         // from `infra` or `region`
  std::string zone;           // third part of `infra`, if any
  bool use_spot = false;
  std::optional<int> disk_size_gb;
  std::optional<NodeAmount> cpus;       // resources.cpus, per node
  std::optional<NodeAmount> memory_gb;  // resources.memory, per node
  std::string image_id;
  // Software the nodes must declare (Causeway's own `resources.cuda`,
  // `resources.driver`): a version requirement (">=12.4", "12.4", "==12.4",
  // "<13"), matched against what each pool declares.
  std::string cuda;
  std::string driver;
  std::map<std::string, std::string> labels;  // resources.labels and labels, merged
  std::string owner;                          // labels.owner
  std::string team;                           // labels.team
  int num_nodes = 1;
  std::map<std::string, std::string> envs;
  // Federated cloud identities by name (the estate's identity.federations);
  // none named: the team's defaults.
  std::vector<std::string> identities;
  // Names of the job's secrets (`secrets:` and --secret), sorted. Their
  // values are never part of the spec (ParsedJobSpec::secret_values).
  std::vector<std::string> secrets;
  // Those of them that name a secret in the company's manager instead of
  // giving one (`secrets: {DB_PASSWORD: aws-sm://prod/db#password}`): read
  // for each attempt by the broker (secrets/broker.h), by name.
  std::map<std::string, SecretRef> secret_refs;
  std::vector<FileMount> file_mounts;
  Workdir workdir;
  std::string setup;
  std::string run;
  std::vector<DatasetRef> datasets;
  std::optional<CheckpointSpec> checkpoint;
  std::string residency;      // e.g. "eu"; empty when the job may run anywhere
  std::string priority_class; // the name given, or "" when an integer was given
  int priority = kDefaultPriority;
  std::optional<Micros> time_limit;  // wall-clock limit per attempt, like Slurm's --time
  bool allow_remote_data = false;    // may run away from its datasets' replicas
  RecoverySpec recovery;
  SimHint sim;
  std::vector<std::string> ignored_fields;  // SkyPilot fields kept but not used
  // Accelerator names SkyPilot's catalogue does not know (a typo, or a type
  // of the estate's own): the estate decides; offline validation refuses.
  std::vector<std::string> unknown_accelerators;

  // Total GPUs for the first alternative across all nodes (0 for CPU-only).
  int TotalGpus() const {
    return accelerators.empty() ? 0 : accelerators.alternatives.front().count * num_nodes;
  }
  // What the job asks of a pool: its accelerators, or for a CPU-only job one
  // alternative of kCpuType whose count is the CPUs it takes of each node
  // (resources.cpus rounded up, kDefaultCpusPerNode when not set), with the
  // job's own infra, use_spot and image_id. Routing and admission read this.
  Accelerators Demand() const;
  bool cpu_only() const { return accelerators.empty(); }
};

struct ParsedJobSpec {
  JobSpec spec;
  std::vector<Diagnostic> warnings;  // ignored fields and other non-fatal notes
  // Secret values the file itself gives (SkyPilot allows it), by name.
  std::map<std::string, std::string> secret_values;
  bool secrets_in_file = false;  // some of them were given by the file itself
  // Variables the file leaves null (`envs: {HF_TOKEN: null}`, and likewise
  // `secrets`), which must be given at submission, each with where it is.
  std::map<std::string, Diagnostic> unset_envs, unset_secrets;
  // file_mounts and workdir as written, when they name variables ($VAR or
  // ${VAR}): SkyPilot fills them with the job's envs and secrets, those
  // given at submission included, so ApplySpecInputs fills them again.
  std::optional<std::vector<FileMount>> file_mount_templates;
  std::optional<Workdir> workdir_template;
};

// SkyPilot's substitution of variables into file_mounts and workdir
// (sky/task.py): each $NAME or ${NAME} whose NAME is in `vars` is replaced
// by its value; any other is left as written.
std::string FillVariables(std::string_view text, const std::map<std::string, std::string>& vars);
// The variable names `text` refers to, as FillVariables finds them.
std::vector<std::string> VariablesIn(std::string_view text);

// Values given at submission (`--env`, `--env-file`, `--secret`), which
// override the file's.
struct SpecInputs {
  std::map<std::string, std::string> envs;
  std::map<std::string, std::string> secrets;
};
// Limits on what SpecInputs and a file's `secrets` may carry.
inline constexpr size_t kMaxSpecInputs = 256;          // variables of each kind
inline constexpr size_t kMaxSpecInputBytes = 32 << 10;  // one value
// Every secret value of a job together: they are stored (sealed) with it.
inline constexpr size_t kMaxSecretBytes = 64 << 10;

// Applies `inputs` to `parsed` (as SkyPilot does: an input wins over the
// file; an empty string is a value, null is not) and checks that every
// variable the file leaves null now has one. kInvalidArgument listing every
// problem otherwise: a variable still unset, a bad name, a name that is both
// an env and a secret, a value over the limits. No diagnostic ever holds a
// value. `file` names the spec in diagnostics about inputs.
Status ApplySpecInputs(ParsedJobSpec& parsed, const SpecInputs& inputs, const std::string& file);

// Parses and validates a job spec. `file` names the input in diagnostics.
// On failure returns kInvalidArgument whose diagnostics list every problem
// with its line, column, field and what would be accepted.
Result<ParsedJobSpec> ParseJobSpec(std::string_view yaml_text, const std::string& file);

// A task file: one job spec, or several documents separated by "---", each
// a step (a task) with resources of its own, as SkyPilot reads them:
//  - a pipeline: each step runs once the step before it succeeded. A first
//    document holding only `name` (and `execution: serial`) names it;
//  - a job group: a first document with `execution: parallel`. Its tasks
//    (each named, names unique) start together, all or none. Tasks named in
//    the header's `primary_tasks` are primary, the others auxiliary (none
//    are when it is absent or empty); once every primary task has ended,
//    the auxiliary ones are ended too, after `termination_delay` (seconds,
//    or "30s", "5m", "1h", or a map of task names and `default` to those)
//    when every primary task succeeded, at once otherwise.
struct TaskFile {
  struct Step {
    std::string yaml;  // the step's own document, as written
    ParsedJobSpec parsed;
    bool auxiliary = false;              // job groups only
    int64_t termination_delay_seconds = 0;  // job groups, auxiliary tasks only
  };
  bool pipeline = false;   // several documents (or a header)
  bool job_group = false;  // ...whose header says `execution: parallel`
  std::string name;        // from the header ("" when none)
  std::vector<Step> steps;
};
inline constexpr size_t kMaxPipelineSteps = 32;

// Parses a task file. Positions in diagnostics are those of the whole
// file; every step's problems are reported at once.
Result<TaskFile> ParseTaskFile(std::string_view yaml_text, const std::string& file);

// `yaml_text` (a spec ParseJobSpec accepted) with every value of its
// `secrets` block replaced by null, re-written as YAML (its comments and
// layout are not kept): what is stored of a file that gives secret values.
std::string WithoutSecretValues(std::string_view yaml_text);

// Reads `path` and parses it; a missing or unreadable file is kNotFound.
Result<ParsedJobSpec> LoadJobSpecFile(const std::string& path);

// Reads a whole file into a string; kNotFound when it cannot be read.
Result<std::string> ReadFile(const std::string& path);

}  // namespace causeway
