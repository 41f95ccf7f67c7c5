// The records Causeway keeps: jobs, their events and attempts, API tokens,
// idempotency keys and audit events. Plain structs; the Store persists them.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/clock.h"
#include "causeway/details.h"

namespace causeway {

// Job lifecycle. Later capabilities add transitions; names are the API's.
enum class JobState { kPending, kAdmitted, kRunning, kSucceeded, kFailed, kCancelled };

std::string_view JobStateName(JobState s);
std::optional<JobState> ParseJobState(std::string_view name);
// Succeeded, failed and cancelled jobs never change state again.
bool IsTerminal(JobState s);

struct JobRecord {
  std::string id;  // "job_<ulid>"
  std::string name;
  std::string team;
  std::string owner;
  JobState state = JobState::kPending;
  int priority = 0;
  std::string spec_yaml;     // the spec exactly as submitted
  std::string spec_json;     // the validated, normalized spec
  std::string submitted_by;  // token id of the submitter
  Timestamp created_at;
  Timestamp updated_at;
  // Progress, kept up to date by the scheduler.
  std::string cluster;       // where the latest attempt ran
  int attempts = 0;
  int64_t gpu_seconds = 0;   // over every attempt
  int64_t cost_micros = 0;   // over every attempt, in the estate's currency
  std::string reason;        // why it is pending, or how it ended
  // The job's secrets (a JSON object of names to values), sealed under the
  // server's secrets key with the job's id bound in; "" when it has none.
  // Never shown: only the scheduler opens it, to hand the values to a launch.
  std::string sealed_secrets;
  // The pipeline this job is a step of (a task file of several documents),
  // or none: its id ("pl_<ulid>", "" for none) and name, this step's place
  // (0-based) among `steps`, and the job it runs after, which must succeed
  // first ("" for the first step).
  std::string pipeline;
  std::string pipeline_name;
  int step = 0;
  int steps = 0;
  std::string after;
  // A job group (a task file whose header says `execution: parallel`) uses
  // the same columns: `pipeline` is the group's id ("jg_<ulid>"), `step` the
  // task's place, `after` stays empty, and its tasks start together. An
  // auxiliary task is ended once the group's primary tasks have all ended,
  // `termination_delay_seconds` after they did when they all succeeded.
  bool job_group = false;
  bool auxiliary = false;
  int64_t termination_delay_seconds = 0;
};

struct JobEvent {
  int64_t id = 0;  // assigned by the store
  std::string job_id;
  Timestamp time;
  std::string type;  // "submitted", "cancelled", ...
  std::string message;
};

struct Attempt {
  std::string job_id;
  int number = 0;  // 1, 2, ...
  std::string cluster;
  std::string pool;
  std::string backend_id;  // the provider's id for it (Slurm job id, ...)
  std::string state;  // "running", or how it ended ("succeeded", "preempted", ...)
  Timestamp started_at;
  std::optional<Timestamp> ended_at;
  std::optional<int> exit_code;
  std::string failure_class;
  std::string flavor;
  int64_t gpus = 0;
  bool reserved = false;
  int64_t borrowed = 0;        // GPUs of quota borrowed from the cohort
  int64_t price_micros = 0;    // per GPU-hour
  int64_t gpu_seconds = 0;
  int64_t cost_micros = 0;
  std::string placement = "{}";  // the routing decision, JSON
  std::string resumed_from;      // the checkpoint it started from, if any
  // GPU telemetry, when the estate has any (filled in when the attempt
  // ends): GPU-seconds covered by samples, and the GPU-seconds of work in
  // them (utilization integrated over time). Goodput = work / gpu_seconds.
  int64_t observed_gpu_seconds = 0;
  int64_t work_gpu_seconds = 0;
  // What is known of where and on what it ran (provenance::AttemptFacts as
  // JSON): the pool's declared facts from its dispatch, and what the
  // backend's probe found on each node once it ended.
  std::string facts = "{}";
};

// A checkpoint a running job registered; the next attempt resumes from the
// latest one (CAUSEWAY_RESUME_FROM).
struct Checkpoint {
  std::string job_id;
  int64_t seq = 0;  // 1, 2, ... per job; assigned by the store
  int attempt = 0;
  std::string path;  // URI or path where the job wrote it
  std::optional<int64_t> step;
  Timestamp created_at;
  std::string digest;  // "sha256:<64 hex>" when the job gave one
};

// A fact a job added to its own record through its attempt credential (an
// experiment tracker's run id, hyperparameters, a metrics summary, an
// artifact's digest). `value` is JSON text, bounded when recorded.
struct JobFact {
  std::string job_id;
  int64_t seq = 0;  // 1, 2, ... per job; assigned by the store
  int attempt = 0;
  std::string name;
  std::string value;
  std::string recorded_by;  // the credential's id
  Timestamp recorded_at;
};

struct IdempotencyRecord {
  std::string scope;         // whose key: the token id
  std::string key;           // the client's Idempotency-Key
  std::string request_hash;  // SHA-256 of the request body
  std::string job_id;
  Timestamp created_at;
};

struct TokenRecord {
  std::string id;    // "tok_<ulid>"; public, names the token
  std::string name;  // what it is for, e.g. "ci-pipeline"
  std::string hash;  // SHA-256 of the secret; the secret itself is never stored
  std::vector<std::string> scopes;
  std::string created_by;
  Timestamp created_at;
  std::optional<Timestamp> expires_at;
  std::optional<Timestamp> revoked_at;
  // The person it acts for (a directory userName), "" for a service
  // account. Revoked when the person is deprovisioned.
  std::string user;
  // The person answerable for it: who created it (directly, or through a
  // token they created), "" when the system or a service account with no
  // such person did. Revoked when that person is deprovisioned, unless an
  // admin reassigned it (causeway token reassign).
  std::string creator;
  // The break-glass grant it was made under ("" for none): it works only
  // while that grant is active and is revoked with it.
  std::string grant;
};

// A user or a group of Causeway's directory, as an identity provider
// provisioned it through SCIM (src/identity/scim). `name` is the user's
// userName or the group's displayName, unique per kind ignoring ASCII case.
struct DirectoryEntry {
  std::string kind;  // "User" or "Group"
  std::string id;    // server-assigned, never reused
  std::string name;
  std::string external_id;  // the provisioning client's own id, if it sent one
  bool active = true;       // users only: false once deactivated
  std::string resource = "{}";  // the SCIM resource as stored (a JSON object
                                // as text), without id and meta
  int64_t version = 1;      // raised by each change; the resource's ETag
  Timestamp created_at;
  Timestamp updated_at;
};

// A key Causeway signs workload identity tokens with (identity/workload.h).
// The private key is kept in the database so every replica signs with the
// same keys; whoever can read the database can mint workload tokens.
// Keys whose kid starts with this sign the audit chain's checkpoints, with
// kProvenanceKeyPrefix provenance records; the others sign workload tokens.
// No kind is ever used for another.
inline constexpr std::string_view kAuditKeyPrefix = "audit-";
inline constexpr std::string_view kProvenanceKeyPrefix = "provenance-";
inline bool IsWorkloadKey(std::string_view kid) {
  return kid.rfind(kAuditKeyPrefix, 0) != 0 && kid.rfind(kProvenanceKeyPrefix, 0) != 0;
}

struct SigningKeyRecord {
  std::string kid;
  std::string alg;          // "ES256" or "RS256"
  std::string private_pem;  // PKCS#8; a secret
  Timestamp created_at;
  std::optional<Timestamp> superseded_at;  // when a newer key took over signing
};

// A time-boxed elevation: `role` (for `team`, or all teams) granted to a
// person who asked with a reason, active from approval (or the request,
// when no approver is needed) until `expires_at`.
struct BreakglassRecord {
  std::string id;
  std::string user;
  std::string role;
  std::string team;
  std::string reason;
  Timestamp requested_at;
  Micros duration{0};
  std::string approved_by;  // "" while waiting for an approver
  std::optional<Timestamp> approved_at;
  std::optional<Timestamp> expires_at;  // set on approval
  std::optional<Timestamp> revoked_at;

  bool ActiveAt(Timestamp now) const { return expires_at && now < *expires_at && !revoked_at; }
};

// One version of a dataset: an immutable content manifest (every object's
// path, size and content hash) named by the SHA-256 of its canonical text
// (src/data/manifest.h). (dataset, version) and digest are each unique.
struct DatasetVersion {
  std::string dataset;
  std::string version;    // the label it was registered under, e.g. "2024-05"
  std::string digest;     // "sha256:<64 hex>"
  std::string source;     // where it was listed: "LOCATION:path", or "manifest"
  std::string hash_type;  // the objects' content hash: "md5", "sha256", ...
  int64_t objects = 0;
  int64_t bytes = 0;
  std::string registered_by;
  Timestamp registered_at;
};

inline constexpr std::string_view kReplicaStates[] = {"copying", "verified", "failed", "corrupt"};

// A copy of one dataset version in one storage location (the estate's
// data.locations). Only a `verified` replica counts for routing: its
// objects were listed and matched the manifest at `verified_at`.
struct DatasetReplica {
  std::string digest;    // the version's
  std::string location;  // a storage location's name
  std::string path;      // under the location's remote ("c4/2024-05")
  std::string state;     // one of kReplicaStates
  int64_t bytes_moved = 0;  // by every replication into it, summed
  std::string detail;       // why it failed or what did not match; "" when verified
  std::optional<Timestamp> verified_at;
  Timestamp updated_at;
  // Its storage is charged up to here (to the dataset's owner). Set when it
  // is first verified, and from then on moved only forward, by the day's
  // storage charge (DatasetWriter::AdvanceReplicaCharge): writing the
  // replica again never changes it.
  std::optional<Timestamp> charged_until;
};

// What moving or keeping data cost, charged to the team (and job) that
// caused it: a replication (to the dataset's owner, or the job that asked
// for it), a job reading a dataset from another region (to the job), a
// replica's storage for one UTC day (to the dataset's owner), at the
// estate's prices.
struct DataCharge {
  std::string id;    // "dch_<ulid>"
  Timestamp at;
  std::string kind;  // "replication", "remote-read" or "storage"
  std::string team;  // "" when nobody owns it
  std::string job_id;  // "" unless a job caused it
  std::string dataset, digest;
  std::string from_place, to_place;  // "provider/region"; storage: "" and where it is kept
  int64_t bytes = 0;                 // moved; storage: kept
  int64_t amount_micros = 0;  // in the estate's currency
};

// One imported billing file (FOCUS). `provider` is the estate's provider the
// bill is for; (provider, digest) is unique, so importing a file again
// changes nothing.
struct BillingImport {
  std::string id;  // "bill_" + 20 hex digits of SHA-256(provider, digest)
  std::string provider;
  std::string file;    // as given, for people; not used to match
  // SHA-256 of the bill's rollups in canonical form: the same charges
  // (re-exported, columns reordered, descriptions reworded) are the same
  // bill.
  std::string digest;
  std::string focus_version;
  int64_t rows = 0;     // rows imported
  int64_t skipped = 0;  // rows that could not be used
  int64_t issues = 0;   // departures from the specification, tolerated
  std::string first_day, last_day;  // charge days covered, YYYY-MM-DD
  std::string imported_by;
  Timestamp imported_at;
};

// Exact money or quantity in pico-units (1e-12) of a currency or unit;
// never floating point. Stored as two 64-bit columns (nanos, and the picos
// beyond them) so sums in SQL stay exact.
using Picos = __int128;

// Billed amounts of one import summed over the rows that share every key
// below, in pico-units of `currency`; gpu_hours sums ConsumedQuantity of
// the rows whose ConsumedUnit counts GPU hours, in pico-hours.
struct BillingRollup {
  std::string day;    // of ChargePeriodStart, UTC, YYYY-MM-DD
  std::string month;  // of BillingPeriodStart (else of the charge), YYYY-MM
  std::string provider_name, sub_account, region, resource_id, service_category, charge_category,
      pricing_category, commitment_status, currency;
  std::string team, owner, job_id, project;  // from the row's Tags
  int64_t rows = 0;
  Picos billed = 0, effective = 0, list = 0, contracted = 0, gpu_hours = 0;

  // The key's fields and the amounts, each in the order the stores keep
  // them (and the rollup key is built in): one list for every reader and
  // writer.
  std::array<std::string*, 15> KeyFields() {
    return {&day, &month, &provider_name, &sub_account, &region, &resource_id, &service_category, &charge_category,
            &pricing_category, &commitment_status, &currency, &team, &owner, &job_id, &project};
  }
  std::array<const std::string*, 15> KeyFields() const {
    auto f = const_cast<BillingRollup*>(this)->KeyFields();
    std::array<const std::string*, 15> out;
    std::copy(f.begin(), f.end(), out.begin());
    return out;
  }
  std::array<Picos*, 5> Amounts() { return {&billed, &effective, &list, &contracted, &gpu_hours}; }
  std::array<Picos, 5> Amounts() const { return {billed, effective, list, contracted, gpu_hours}; }
};

// A provider's audit event normalized to OCSF, as stored: one per
// (provider, source, source_id), so importing overlapping files stores each
// event once. The columns beside the event are what searches use.
struct ImportedAuditEvent {
  int64_t id = 0;  // assigned on insert, ascending in import order
  std::string provider;   // the estate's provider ("aws", "coreweave", ...)
  std::string source;     // the log's kind: k8s, cloudtrail, gcp, azure, okta, slurm
  std::string source_id;  // the source's own event id
  int64_t time_ms = 0;    // when it happened, Unix milliseconds (UTC)
  int class_uid = 0;
  std::string activity;   // create, read, update, delete, start, logon, logoff, enable, disable, other
  std::string operation;  // the source's name for it (api.operation)
  std::string actor;      // the acting identity, lower case: an email, user name or role session
  std::string subject;    // the account acted on, lower case ("" when none)
  std::string resource;   // the first resource's uid or name
  int status_id = 0;
  std::string event;      // the OCSF JSON
  Timestamp imported_at;
};

// What `audit search` asks of the stored imported events, oldest first.
struct ImportedAuditQuery {
  // Actor or subject is one of these (lower case), each at its provider
  // ("" = at any provider); empty: anyone.
  std::vector<std::pair<std::string, std::string>> identities;
  std::string provider;                 // "" = every provider
  std::string action;                   // an activity (delete) or an operation, ignoring case; "" = any
  int64_t since_ms = 0, until_ms = 0;   // [since, until); 0 = unbounded
  // Cursor: only events after (after_time_ms, after_id); newest first,
  // only events before it.
  int64_t after_time_ms = 0, after_id = 0;
  bool newest_first = false;
  int limit = 100;
};

// What has been imported from one log source of one provider.
struct ImportedSource {
  std::string provider, source;
  int64_t events = 0;
  int64_t newest_event_ms = 0;
  Timestamp last_import;
};

// One control-plane change. seq, prev_hash and hash are assigned by the store
// when the event is appended, in the same transaction as the change.
struct AuditEvent {
  int64_t seq = 0;
  Timestamp time;
  std::string actor;     // token id or "system"
  std::string action;    // "job.submit", "token.create", ...
  std::string resource;  // "job/job_01…", "token/tok_01…"
  Details details;
  std::string prev_hash;
  std::string hash;
};

namespace audit {

// The prev_hash of the first event.
inline const std::string kGenesisHash(64, '0');

// The newest event as last committed, kept beside the chain so that deleting
// events from the end is detected too.
struct ChainHead {
  int64_t seq = 0;
  std::string hash = kGenesisHash;
};

// One stored event as its columns, `details` as the canonical JSON text it
// was stored as (unparsed): what verification reads, a million a second.
// The views are valid only during the callback that receives it.
struct RawAuditEvent {
  int64_t seq = 0;
  int64_t time_us = 0;
  std::string_view actor, action, resource, details, prev_hash, hash;
};

}  // namespace audit
}  // namespace causeway
