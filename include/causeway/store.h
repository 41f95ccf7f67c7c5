// Durable state. One Store interface, with SQLite (embedded, the default) as
// the first implementation.
//
// Writes happen only inside WriteBatch: each unit of work gets a WriteTx and
// either all of its writes commit or none do. Every unit that changes state
// must append at least one audit event through the same WriteTx; a unit that
// does not is rolled back and fails with kInternal ("fail closed"). The audit
// chain therefore always describes exactly the committed state.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "causeway/records.h"
#include "causeway/status.h"

namespace causeway {

// The schema version this build writes; every backend migrates to it.
inline constexpr int kLatestSchemaVersion = 25;

// A named lease one process holds at a time: the scheduler's leadership
// among replicas. `epoch` grows each time the lease changes hands; it is the
// fencing token writes carry (WriteTx::CheckLease).
struct Lease {
  std::string name;
  std::string holder;
  int64_t epoch = 0;
  Timestamp expires_at;  // by the database's clock
};

// News every replica's scheduler must act on, whichever replica accepted
// it: the replication feed (the audit trail stays a record, not a bus). A
// change is numbered like the audit event its unit appended just before it,
// so the feed is in commit order and a cursor into it is an audit sequence
// number.
struct Change {
  enum class Kind { kSubmitted, kCancelled, kCheckpoint };
  int64_t seq = 0;
  Kind kind = Kind::kSubmitted;
  std::string job_id;
  std::string path;  // kCheckpoint: where it is
  Timestamp at;
};
inline std::string_view ChangeKindName(Change::Kind k) {
  switch (k) {
    case Change::Kind::kSubmitted: return "submitted";
    case Change::Kind::kCancelled: return "cancelled";
    case Change::Kind::kCheckpoint: return "checkpoint";
  }
  return "unknown";
}
// nullopt for a name this build does not know (a newer replica's).
inline std::optional<Change::Kind> ParseChangeKind(std::string_view name) {
  for (Change::Kind k : {Change::Kind::kSubmitted, Change::Kind::kCancelled, Change::Kind::kCheckpoint}) {
    if (ChangeKindName(k) == name) return k;
  }
  return std::nullopt;
}

// A finished job's provenance record as it was signed once, when sealed:
// the DSSE envelope as one line of JSON, and the id of the key that signed.
struct SealedRecord {
  std::string job_id;
  std::string kid;
  Timestamp sealed_at;
  std::string envelope;
};

// The store is cut into repositories, one per concern (jobs and attempts,
// tokens and keys, the directory, the audit trail, billing, break-glass,
// leases), so that code needing one concern depends on that one alone and
// a test fakes only it. Reads are the *Reader interfaces that Store
// implements; writes are the *Writer interfaces that WriteTx, the one
// transaction of a unit of work, implements: a unit writes through as many
// repositories as it needs and commits atomically with its audit events.
// Each record's row mapping is written once for every backend
// (src/store/rows.h).

class JobWriter {
 public:
  virtual Result<std::optional<JobRecord>> GetJob(const std::string& id) = 0;
  // kAlreadyExists if the id is taken.
  virtual Status InsertJob(const JobRecord& job) = 0;
  // kNotFound if there is no such job.
  virtual Status UpdateJobState(const std::string& id, JobState state, Timestamp at) = 0;
  // Gives the job to another person (its `owner`). kNotFound if absent.
  virtual Status UpdateJobOwner(const std::string& id, const std::string& owner, Timestamp at) = 0;
  // Writes the job's state and progress columns (state, cluster, attempts,
  // gpu_seconds, cost_micros, reason, updated_at). kNotFound if absent.
  virtual Status UpdateJobProgress(const JobRecord& job) = 0;
  virtual Status AddJobEvent(const JobEvent& event) = 0;
  // Inserts or replaces attempt (job_id, number).
  virtual Status PutAttempt(const Attempt& attempt) = 0;
  // Appends a checkpoint; assigns its seq.
  virtual Status AddCheckpoint(Checkpoint& checkpoint) = 0;
  // Appends a fact the job recorded; assigns its seq.
  virtual Status AddJobFact(JobFact& fact) = 0;
  // Stores a finished job's sealed provenance record and marks the job
  // sealed. A job sealed already keeps its first record (two replicas may
  // seal the same job at once; both records are valid, one is kept).
  virtual Status PutSealedRecord(const SealedRecord& record) = 0;

  // Stores `record` unless its (scope, key) is stored already. Returns
  // nullopt when this unit claimed the key, or the record stored before (and
  // stores nothing).
  virtual Result<std::optional<IdempotencyRecord>> ClaimIdempotency(const IdempotencyRecord& record) = 0;

  // Records that attempt `attempt` of the job is about to be launched on
  // `cluster`, before it is: a scheduler that dies between launching and
  // recording the dispatch leaves this, and its successor does not launch
  // that attempt number again.
  virtual Status RecordLaunch(const std::string& job_id, int attempt, const std::string& cluster, Timestamp at) = 0;

 protected:
  ~JobWriter() = default;
};

class TokenWriter {
 public:
  virtual Result<std::optional<TokenRecord>> GetToken(const std::string& id) = 0;
  virtual Status InsertToken(const TokenRecord& token) = 0;
  // kNotFound if there is no such token; revoking twice keeps the first time.
  virtual Status RevokeToken(const std::string& id, Timestamp at) = 0;
  // Makes `creator` (a directory userName) answerable for the token: it is
  // revoked when that person is deprovisioned. kNotFound if there is none.
  virtual Status SetTokenCreator(const std::string& id, const std::string& creator) = 0;
  // Inserts or replaces signing key `key.kid`.
  virtual Status PutSigningKey(const SigningKeyRecord& key) = 0;

 protected:
  ~TokenWriter() = default;
};

class AuditWriter {
 public:
  // Appends `event` to the audit chain. Its seq, prev_hash and hash are
  // fixed when the batch commits; a backend that knows them at once sets
  // them on `event`, but only the commit's answer (Committed::audit_seqs)
  // says them on every backend.
  virtual Status AppendAudit(AuditEvent& event) = 0;
  // Records `change` for the other replicas, numbered like the audit event
  // this unit appended last (kFailedPrecondition when it has appended none).
  virtual Status AppendChange(const Change& change) = 0;
  // Deletes the changes numbered at or before `through_seq` that were
  // recorded before `before`: those the leader has followed and no new term
  // needs (a term starts from the database and follows the feed from the
  // audit head). The feed stays as long as what is still to be followed.
  virtual Status PruneChanges(int64_t through_seq, Timestamp before) = 0;
  // Stores an imported audit event and assigns its id; false (storing
  // nothing) when its (provider, source, source_id) is stored already.
  virtual Result<bool> InsertImportedAudit(ImportedAuditEvent& event) = 0;
  // The OCSF text stored for (provider, source, source_id); nullopt when
  // none is (an import tells a repeat from a conflicting event with it).
  virtual Result<std::optional<std::string>> ImportedAuditText(const std::string& provider, const std::string& source,
                                                               const std::string& source_id) = 0;
  // The OCSF texts of the newest events on `resource` (the column) from
  // (provider, source) at or before `through_ms`, newest first, at most
  // `limit`: the request that made an object a deletion names nobody in.
  virtual Result<std::vector<std::string>> ImportedAuditOn(const std::string& provider, const std::string& source,
                                                           const std::string& resource, int64_t through_ms,
                                                           int limit) = 0;

 protected:
  ~AuditWriter() = default;
};

class DirectoryWriter {
 public:
  // The directory entry (kind, id), locked until the batch commits so that a
  // read-modify-write of it is not interleaved with another replica's.
  virtual Result<std::optional<DirectoryEntry>> GetDirectoryEntry(const std::string& kind, const std::string& id) = 0;
  // Inserts or replaces entry (kind, id), and a group's membership rows.
  // kAlreadyExists when another entry of the kind has the same name
  // ignoring ASCII case.
  virtual Status PutDirectoryEntry(const DirectoryEntry& entry) = 0;
  // kNotFound if there is no such entry.
  virtual Status DeleteDirectoryEntry(const std::string& kind, const std::string& id) = 0;

 protected:
  ~DirectoryWriter() = default;
};

class BillingWriter {
 public:
  // Stores an imported bill and its rollups. kAlreadyExists when the same
  // file (provider, digest) was imported before.
  virtual Status InsertBillingImport(const BillingImport& import, const std::vector<BillingRollup>& rollups) = 0;

 protected:
  ~BillingWriter() = default;
};

class BreakglassWriter {
 public:
  // Inserts or replaces break-glass grant `grant.id`.
  virtual Status PutBreakglass(const BreakglassRecord& grant) = 0;
  // The grant, locked until the batch commits.
  virtual Result<std::optional<BreakglassRecord>> GetBreakglass(const std::string& id) = 0;

 protected:
  ~BreakglassWriter() = default;
};

class DatasetWriter {
 public:
  // Stores a new version and its manifest's canonical text. kAlreadyExists
  // when the dataset has that version label already, or the same digest
  // under another label (a version is registered once).
  virtual Status InsertDatasetVersion(const DatasetVersion& version, const std::string& manifest) = 0;
  // Inserts or replaces replica (digest, location), all but its
  // charged_until, which is written only where it had none.
  virtual Status PutDatasetReplica(const DatasetReplica& replica) = 0;
  // Moves the replica's charged_until from `from` to `to`; false (nothing
  // written) when it is not at `from`: another writer charged that period.
  virtual Result<bool> AdvanceReplicaCharge(const std::string& digest, const std::string& location, Timestamp from,
                                            Timestamp to) = 0;
  // Records what moving data cost; kAlreadyExists when the id is taken.
  virtual Status InsertDataCharge(const DataCharge& charge) = 0;

 protected:
  ~DatasetWriter() = default;
};

class LeaseWriter {
 public:
  // kFailedPrecondition unless `holder` holds lease `name` at `epoch`. The
  // lease cannot change hands until this unit's batch commits, so a unit
  // that checks first writes only while its holder leads.
  virtual Status CheckLease(const std::string& name, const std::string& holder, int64_t epoch) = 0;

 protected:
  ~LeaseWriter() = default;
};

// The one transaction of a unit of work: every repository's writes.
class WriteTx : public JobWriter,
                public TokenWriter,
                public AuditWriter,
                public DirectoryWriter,
                public BillingWriter,
                public BreakglassWriter,
                public DatasetWriter,
                public LeaseWriter {
 public:
  virtual ~WriteTx() = default;
};

using WriteFn = std::function<Status(WriteTx&)>;

// What became of one unit of a batch.
struct Committed {
  Status status;
  // The sequence numbers the unit's audit events were given, in the order
  // it appended them; empty unless status is OK.
  std::vector<int64_t> audit_seqs;
};

struct JobFilter {
  std::optional<JobState> state;
  std::string team;
  std::string owner;
  std::string pipeline;   // only the steps of this pipeline
  std::string before_id;  // cursor: only jobs with a smaller (older) id
  // Only jobs with an attempt on one of these clusters (a provider's, say);
  // empty: no such filter.
  std::vector<std::string> clusters;
  int limit = 100;
};

struct AuditRange {
  int64_t first = 0, last = 0, count = 0;
};

struct AuditFilter {
  std::string actor;
  std::string action;     // exact, or a prefix ending in '.', e.g. "job."
  std::string resource;   // exact
  int64_t after_seq = 0;  // cursor: only events with a larger seq
  // Newest first (the latest `limit` events); then before_seq, when set, is
  // the cursor: only events with a smaller seq.
  bool newest_first = false;
  int64_t before_seq = 0;
  std::optional<Timestamp> since;
  std::optional<Timestamp> until;  // only events before it
  int limit = 100;
};

// What billed amounts can be grouped by (`causeway cost showback --by`).
enum class BillingDim {
  kTeam, kOwner, kProject, kJob, kProvider, kProviderName, kDay, kMonth, kServiceCategory, kChargeCategory,
  kPricingCategory, kResource, kSubAccount, kRegion, kCommitmentStatus,
};
inline constexpr std::pair<BillingDim, std::string_view> kBillingDims[] = {
    {BillingDim::kTeam, "team"}, {BillingDim::kOwner, "owner"}, {BillingDim::kProject, "project"},
    {BillingDim::kJob, "job"}, {BillingDim::kProvider, "provider"}, {BillingDim::kProviderName, "provider-name"},
    {BillingDim::kDay, "day"}, {BillingDim::kMonth, "month"}, {BillingDim::kServiceCategory, "service-category"},
    {BillingDim::kChargeCategory, "charge-category"}, {BillingDim::kPricingCategory, "pricing-category"},
    {BillingDim::kResource, "resource"}, {BillingDim::kSubAccount, "sub-account"}, {BillingDim::kRegion, "region"},
    {BillingDim::kCommitmentStatus, "commitment-status"},
};

// Billed amounts over charge days [from_day, to_day) (YYYY-MM-DD; empty: no
// bound), grouped by `group_by` and always by currency.
struct BillingQuery {
  std::vector<BillingDim> group_by;
  std::string from_day, to_day;
  std::string provider;  // "" = every provider
};

struct BillingTotal {
  std::vector<std::string> keys;  // one per group_by dimension
  std::string currency;
  int64_t rows = 0;
  Picos billed = 0, effective = 0, list = 0, contracted = 0, gpu_hours = 0;

  std::array<Picos*, 5> Amounts() { return {&billed, &effective, &list, &contracted, &gpu_hours}; }
  std::array<Picos, 5> Amounts() const { return {billed, effective, list, contracted, gpu_hours}; }
};

// An attempt with its job's attribution, for metering reports.
struct MeteredAttempt {
  Attempt attempt;
  std::string team, owner;
  JobState job_state = JobState::kPending;
};

class JobReader {
 public:
  virtual Result<std::optional<JobRecord>> GetJob(const std::string& id) const = 0;
  // Those of `ids` that exist, in any order: one read for many jobs.
  virtual Result<std::vector<JobRecord>> GetJobs(const std::vector<std::string>& ids) const = 0;
  // Newest first.
  virtual Result<std::vector<JobRecord>> ListJobs(const JobFilter& filter) const = 0;
  virtual Result<std::vector<JobEvent>> ListJobEvents(const std::string& job_id) const = 0;
  virtual Result<std::vector<Attempt>> ListAttempts(const std::string& job_id) const = 0;
  // Every attempt that ran during [from, to) (one still running has no end),
  // oldest first.
  virtual Result<std::vector<MeteredAttempt>> ListAttemptsBetween(Timestamp from, Timestamp to) const = 0;
  // Oldest first.
  virtual Result<std::vector<Checkpoint>> ListCheckpoints(const std::string& job_id) const = 0;
  // Oldest first.
  virtual Result<std::vector<JobFact>> ListJobFacts(const std::string& job_id) const = 0;
  // The sealed provenance records of those of `ids` that have one, in any
  // order: one read for a page of jobs.
  virtual Result<std::vector<SealedRecord>> GetSealedRecords(const std::vector<std::string>& ids) const = 0;
  // Up to `limit` ids of finished jobs not sealed yet, oldest first.
  virtual Result<std::vector<std::string>> ListUnsealedJobs(int limit) const = 0;
  // The highest attempt number ever set out to launch for the job (0: none).
  virtual Result<int> LastLaunch(const std::string& job_id) const = 0;

 protected:
  ~JobReader() = default;
};

class TokenReader {
 public:
  // The token whose secret hashes to `hash`, whether or not it is still valid.
  virtual Result<std::optional<TokenRecord>> FindTokenByHash(const std::string& hash) const = 0;
  virtual Result<std::vector<TokenRecord>> ListTokens() const = 0;
  // Every workload signing key, oldest first.
  virtual Result<std::vector<SigningKeyRecord>> ListSigningKeys() const = 0;

 protected:
  ~TokenReader() = default;
};

class DirectoryReader {
 public:
  // Every directory entry of `kind`, ordered by id.
  virtual Result<std::vector<DirectoryEntry>> ListDirectory(const std::string& kind) const = 0;
  // The groups whose members include the user or group `member_id`, ordered
  // by id: an index lookup, not a scan of every group.
  virtual Result<std::vector<DirectoryEntry>> ListGroupsOf(const std::string& member_id) const = 0;
  virtual Result<std::optional<DirectoryEntry>> FindDirectoryEntry(const std::string& kind,
                                                                   const std::string& id) const = 0;
  // The entry of `kind` named `name`, ignoring ASCII case as the names'
  // uniqueness does: an index lookup.
  virtual Result<std::optional<DirectoryEntry>> FindDirectoryEntryByName(const std::string& kind,
                                                                         const std::string& name) const = 0;

 protected:
  ~DirectoryReader() = default;
};

class AuditReader {
 public:
  // Oldest first.
  virtual Result<std::vector<AuditEvent>> ListAudit(const AuditFilter& filter) const = 0;
  // Up to `limit` changes numbered after `after_seq`, oldest first.
  virtual Result<std::vector<Change>> ListChanges(int64_t after_seq, int limit) const = 0;
  // Imported audit events matching `query`, oldest first.
  virtual Result<std::vector<ImportedAuditEvent>> SearchImportedAudit(const ImportedAuditQuery& query) const = 0;
  // Imported events after `after_id` in import order (for export), at most `limit`.
  virtual Result<std::vector<ImportedAuditEvent>> ListImportedAuditSince(int64_t after_id, int limit) const = 0;
  // What each (provider, source) has had imported.
  virtual Result<std::vector<ImportedSource>> ListImportedSources() const = 0;
  // Calls `fn` for every audit event in stored order until it returns false.
  virtual Status ScanAudit(const std::function<bool(const AuditEvent&)>& fn) const = 0;
  // The same, as stored columns (verification's fast path). By default
  // through ScanAudit, `details` re-serialized canonically.
  virtual Status ScanAuditRaw(const std::function<bool(const audit::RawAuditEvent&)>& fn) const;
  virtual Result<audit::ChainHead> GetAuditHead() const = 0;
  // The sequence numbers of the first and last audit events about
  // `resource` (exact), and how many there are; {0, 0, 0} when none. An
  // index lookup.
  virtual Result<AuditRange> GetAuditRange(const std::string& resource) const = 0;

 protected:
  ~AuditReader() = default;
};

class BillingReader {
 public:
  // The bill with these charges, whatever provider it was imported for:
  // the same rows are one bill under any name.
  virtual Result<std::optional<BillingImport>> FindBillingImport(const std::string& digest) const = 0;
  // Oldest first.
  virtual Result<std::vector<BillingImport>> ListBillingImports() const = 0;
  virtual Result<std::vector<BillingRollup>> ListBillingRollups(const std::string& import_id) const = 0;
  // Sorted by the keys.
  virtual Result<std::vector<BillingTotal>> QueryBilling(const BillingQuery& query) const = 0;

 protected:
  ~BillingReader() = default;
};

class BreakglassReader {
 public:
  // Break-glass grants requested since `since`, oldest first.
  virtual Result<std::vector<BreakglassRecord>> ListBreakglass(Timestamp since) const = 0;

 protected:
  ~BreakglassReader() = default;
};

class DatasetReader {
 public:
  // The versions of `dataset` ("" : of every dataset), oldest first.
  virtual Result<std::vector<DatasetVersion>> ListDatasetVersions(const std::string& dataset) const = 0;
  // The canonical text of the manifest with `digest`, or nullopt.
  virtual Result<std::optional<std::string>> GetDatasetManifest(const std::string& digest) const = 0;
  // The replicas of the version with `digest` ("" : of every version),
  // ordered by digest and location.
  virtual Result<std::vector<DatasetReplica>> ListDatasetReplicas(const std::string& digest) const = 0;
  // The data charges of `job_id` ("" : of every job and none) made in
  // [from, to), oldest first.
  virtual Result<std::vector<DataCharge>> ListDataCharges(const std::string& job_id, Timestamp from,
                                                          Timestamp to) const = 0;

 protected:
  ~DatasetReader() = default;
};

// A database: every repository's reads, and units of work committed in
// batches.
class Store : public JobReader,
              public TokenReader,
              public DirectoryReader,
              public AuditReader,
              public BillingReader,
              public BreakglassReader,
              public DatasetReader {
 public:
  virtual ~Store() = default;

  // Runs every unit in `work` in one transaction with one durable commit (a
  // group commit). Each unit is atomic on its own: a unit that returns an
  // error has its writes undone while the others still commit. Returns one
  // status per unit, after the commit is durable; if the commit itself fails,
  // every unit reports that failure and nothing is written. With each
  // status come the sequence numbers the unit's audit events were given.
  //
  // A unit may run more than once (a backend may try a batch optimistically,
  // then again unit by unit): it must take its inputs from what it captured
  // and the WriteTx only, and each run must overwrite any output it leaves.
  virtual std::vector<Committed> CommitBatch(const std::vector<const WriteFn*>& work) = 0;

  // CommitBatch's statuses only.
  std::vector<Status> WriteBatch(const std::vector<const WriteFn*>& work) {
    std::vector<Status> out;
    for (Committed& c : CommitBatch(work)) out.push_back(std::move(c.status));
    return out;
  }
  // One unit in its own transaction.
  Status Write(const WriteFn& fn) { return WriteBatch({&fn}).front(); }

  // The schema version the database is at (the last migration applied).
  virtual Result<int> SchemaVersion() const = 0;

  // Takes lease `name` for `holder` until `ttl` from now when it is free or
  // expired, or extends it when `holder` has it; returns the lease as it
  // stands afterwards (someone else's when it could not be taken). Expiry
  // is judged by the database's clock where it has one (PostgreSQL), so
  // replicas need not agree on the time.
  virtual Result<Lease> AcquireLease(const std::string& name, const std::string& holder, Micros ttl) = 0;
};

struct SqliteOptions {
  // Open an existing database without writing to it (no migrations).
  bool read_only = false;
};

// Opens (creating if needed) the SQLite database at `path` in WAL mode and
// brings its schema up to date.
Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path, const SqliteOptions& options = {});

struct PostgresOptions {
  // Connect without migrating or writing.
  bool read_only = false;
};

// Connects to the PostgreSQL database at `url` (postgresql://USER:PASS@HOST:
// PORT/DB?sslmode=...; libpq's PG* environment variables fill in the rest)
// and brings its schema up to date, once even when replicas start together.
// kUnavailable when the server cannot be reached.
Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url, const PostgresOptions& options = {});

// Whether `db` names a PostgreSQL database (postgresql:// or postgres://)
// rather than a SQLite file (a path, optionally written sqlite:PATH).
bool IsPostgresUrl(const std::string& db);
// Opens either kind; `read_only` as in the options above.
Result<std::unique_ptr<Store>> OpenStore(const std::string& db, bool read_only = false);
// `db` fit for messages and logs: any password hidden.
std::string DescribeDb(const std::string& db);

}  // namespace causeway
