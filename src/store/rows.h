// Each record's row, written once for both backends: the columns a SELECT
// names, how a result row becomes the record (Read*), and the values an
// INSERT binds, in the order of its column list (*Values). The backends
// differ only in how they run the SQL.
//
// A Row (SQLite's statement on its current row, a PostgreSQL result row)
// offers Text(col), Int(col) and OptInt(col) (nullopt for NULL). A Sink (a
// SQLite statement's binder, PostgreSQL's Params) offers Add() of text, of
// an integer and of an optional integer (NULL when empty), in order. Text
// passed as an lvalue is the record's own and outlives the statement; a
// temporary is copied.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "causeway/records.h"
#include "causeway/store.h"
#include "store/billing_sql.h"
#include "store/records_json.h"
#include "store/schema.h"

namespace causeway::rows {

// "(?1, ?2, ...)" (SQLite) or "($1, $2, ...)" (PostgreSQL): `n` parameters
// numbered from `first`.
inline std::string Placeholders(char style, int n, int first = 1) {
  std::string out = "(";
  for (int i = 0; i < n; ++i) {
    if (i > 0) out += ", ";
    out += style;
    out += std::to_string(first + i);
  }
  return out + ")";
}

// "INSERT INTO table (columns) VALUES ": what every backend's insert of a
// row starts with.
inline std::string InsertHead(const char* table, const std::string& columns) {
  return std::string("INSERT INTO ") + table + " (" + columns + ") VALUES ";
}

inline std::optional<int64_t> MicrosOf(const std::optional<Timestamp>& t) {
  return t ? std::optional<int64_t>(ToUnixMicros(*t)) : std::nullopt;
}
inline std::optional<Timestamp> TimeOf(std::optional<int64_t> micros) {
  return micros ? std::optional<Timestamp>(FromUnixMicros(*micros)) : std::nullopt;
}

// A token's scopes as stored: a JSON array of strings. Reading keeps the
// strings of whatever array is there and drops anything else.
std::string ScopesText(const std::vector<std::string>& scopes);
std::vector<std::string> ScopesFromText(std::string_view text);

// --- jobs -----------------------------------------------------------------

inline constexpr const char* kJobColumns =
    "id, name, team, owner, state, priority, spec_yaml, spec_json, submitted_by, created_at, updated_at, "
    "cluster, attempts, gpu_seconds, cost_micros, reason, sealed_secrets, pipeline, pipeline_name, step, steps, "
    "after_job, job_group, auxiliary, termination_delay_s";
// What a new job is inserted with (the progress columns start at their
// defaults).
inline constexpr const char* kJobInsertColumns =
    "id, name, team, owner, state, priority, spec_yaml, spec_json, submitted_by, created_at, updated_at, "
    "sealed_secrets, pipeline, pipeline_name, step, steps, after_job, job_group, auxiliary, termination_delay_s";
inline constexpr int kJobInsertColumnCount = 20;

template <typename Row>
JobRecord ReadJob(const Row& r) {
  JobRecord j;
  j.id = r.Text(0);
  j.name = r.Text(1);
  j.team = r.Text(2);
  j.owner = r.Text(3);
  j.state = ParseJobState(r.Text(4)).value_or(JobState::kPending);
  j.priority = static_cast<int>(r.Int(5));
  j.spec_yaml = r.Text(6);
  j.spec_json = r.Text(7);
  j.submitted_by = r.Text(8);
  j.created_at = FromUnixMicros(r.Int(9));
  j.updated_at = FromUnixMicros(r.Int(10));
  j.cluster = r.Text(11);
  j.attempts = static_cast<int>(r.Int(12));
  j.gpu_seconds = r.Int(13);
  j.cost_micros = r.Int(14);
  j.reason = r.Text(15);
  j.sealed_secrets = r.Text(16);
  j.pipeline = r.Text(17);
  j.pipeline_name = r.Text(18);
  j.step = static_cast<int>(r.Int(19));
  j.steps = static_cast<int>(r.Int(20));
  j.after = r.Text(21);
  j.job_group = r.Int(22) != 0;
  j.auxiliary = r.Int(23) != 0;
  j.termination_delay_seconds = r.Int(24);
  return j;
}
template <typename Sink>
void JobInsertValues(Sink& s, const JobRecord& j) {
  s.Add(j.id).Add(j.name).Add(j.team).Add(j.owner).Add(std::string(JobStateName(j.state)));
  s.Add(int64_t{j.priority}).Add(j.spec_yaml).Add(j.spec_json).Add(j.submitted_by);
  s.Add(ToUnixMicros(j.created_at)).Add(ToUnixMicros(j.updated_at)).Add(j.sealed_secrets);
  s.Add(j.pipeline).Add(j.pipeline_name).Add(int64_t{j.step}).Add(int64_t{j.steps}).Add(j.after);
  s.Add(int64_t{j.job_group ? 1 : 0}).Add(int64_t{j.auxiliary ? 1 : 0}).Add(j.termination_delay_seconds);
}

inline constexpr const char* kJobEventColumns = "id, job_id, time, type, message";
inline constexpr const char* kJobEventInsertColumns = "job_id, time, type, message";
template <typename Row>
JobEvent ReadJobEvent(const Row& r) {
  return JobEvent{r.Int(0), r.Text(1), FromUnixMicros(r.Int(2)), r.Text(3), r.Text(4)};
}
template <typename Sink>
void JobEventValues(Sink& s, const JobEvent& e) {
  s.Add(e.job_id).Add(ToUnixMicros(e.time)).Add(e.type).Add(e.message);
}

// Attempts: schema::kAttemptColumns (alias `a`) for reading.
inline constexpr const char* kAttemptInsertColumns =
    "job_id, number, cluster, state, started_at, ended_at, exit_code, failure_class, pool, flavor, gpus, reserved, "
    "borrowed, price_micros, gpu_seconds, cost_micros, placement, backend_id, resumed_from, observed_gpu_seconds, "
    "work_gpu_seconds, facts";
using schema::kAttemptColumnCount;
using schema::kAttemptColumns;
template <typename Row>
Attempt ReadAttempt(const Row& r) {
  Attempt a;
  a.job_id = r.Text(0);
  a.number = static_cast<int>(r.Int(1));
  a.cluster = r.Text(2);
  a.state = r.Text(3);
  a.started_at = FromUnixMicros(r.Int(4));
  a.ended_at = TimeOf(r.OptInt(5));
  if (auto v = r.OptInt(6)) a.exit_code = static_cast<int>(*v);
  a.failure_class = r.Text(7);
  a.pool = r.Text(8);
  a.flavor = r.Text(9);
  a.gpus = r.Int(10);
  a.reserved = r.Int(11) != 0;
  a.borrowed = r.Int(12);
  a.price_micros = r.Int(13);
  a.gpu_seconds = r.Int(14);
  a.cost_micros = r.Int(15);
  a.placement = r.Text(16);
  a.backend_id = r.Text(17);
  a.resumed_from = r.Text(18);
  a.observed_gpu_seconds = r.Int(19);
  a.work_gpu_seconds = r.Int(20);
  a.facts = r.Text(21);
  return a;
}
template <typename Sink>
void AttemptValues(Sink& s, const Attempt& a) {
  s.Add(a.job_id).Add(int64_t{a.number}).Add(a.cluster).Add(a.state).Add(ToUnixMicros(a.started_at));
  s.Add(MicrosOf(a.ended_at)).Add(a.exit_code ? std::optional<int64_t>(*a.exit_code) : std::nullopt);
  s.Add(a.failure_class).Add(a.pool).Add(a.flavor).Add(int64_t{a.gpus}).Add(int64_t{a.reserved ? 1 : 0});
  s.Add(int64_t{a.borrowed}).Add(int64_t{a.price_micros}).Add(int64_t{a.gpu_seconds}).Add(int64_t{a.cost_micros});
  s.Add(a.placement).Add(a.backend_id).Add(a.resumed_from).Add(int64_t{a.observed_gpu_seconds});
  s.Add(int64_t{a.work_gpu_seconds}).Add(a.facts);
}
// An attempt followed by its job's team, owner and state.
template <typename Row>
MeteredAttempt ReadMeteredAttempt(const Row& r) {
  return MeteredAttempt{ReadAttempt(r), r.Text(kAttemptColumnCount), r.Text(kAttemptColumnCount + 1),
                        ParseJobState(r.Text(kAttemptColumnCount + 2)).value_or(JobState::kPending)};
}

inline constexpr const char* kCheckpointColumns = "job_id, seq, attempt, path, step, created_at, digest";
template <typename Row>
Checkpoint ReadCheckpoint(const Row& r) {
  return Checkpoint{r.Text(0),        r.Int(1), static_cast<int>(r.Int(2)), r.Text(3), r.OptInt(4),
                    FromUnixMicros(r.Int(5)), r.Text(6)};
}
template <typename Sink>
void CheckpointValues(Sink& s, const Checkpoint& c) {
  s.Add(c.job_id).Add(int64_t{c.seq}).Add(int64_t{c.attempt}).Add(c.path).Add(c.step).Add(ToUnixMicros(c.created_at));
  s.Add(c.digest);
}

inline constexpr const char* kJobFactColumns = "job_id, seq, attempt, name, value, recorded_by, recorded_at";
template <typename Row>
JobFact ReadJobFact(const Row& r) {
  return JobFact{r.Text(0), r.Int(1), static_cast<int>(r.Int(2)), r.Text(3), r.Text(4), r.Text(5),
                 FromUnixMicros(r.Int(6))};
}

inline constexpr const char* kIdempotencyColumns = "scope, key, request_hash, job_id, created_at";
template <typename Row>
IdempotencyRecord ReadIdempotency(const Row& r) {
  return IdempotencyRecord{r.Text(0), r.Text(1), r.Text(2), r.Text(3), FromUnixMicros(r.Int(4))};
}
template <typename Sink>
void IdempotencyValues(Sink& s, const IdempotencyRecord& r) {
  s.Add(r.scope).Add(r.key).Add(r.request_hash).Add(r.job_id).Add(ToUnixMicros(r.created_at));
}

inline constexpr const char* kLaunchColumns = "job_id, attempt, cluster, at";

// --- tokens and keys --------------------------------------------------------

inline constexpr const char* kTokenColumns =
    "id, name, hash, scopes, created_by, created_at, expires_at, revoked_at, user_name, creator, grant_id";
inline constexpr int kTokenColumnCount = 11;
template <typename Row>
TokenRecord ReadToken(const Row& r) {
  TokenRecord t;
  t.id = r.Text(0);
  t.name = r.Text(1);
  t.hash = r.Text(2);
  t.scopes = ScopesFromText(r.Text(3));
  t.created_by = r.Text(4);
  t.created_at = FromUnixMicros(r.Int(5));
  t.expires_at = TimeOf(r.OptInt(6));
  t.revoked_at = TimeOf(r.OptInt(7));
  t.user = r.Text(8);
  t.creator = r.Text(9);
  t.grant = r.Text(10);
  return t;
}
template <typename Sink>
void TokenValues(Sink& s, const TokenRecord& t) {
  s.Add(t.id).Add(t.name).Add(t.hash).Add(ScopesText(t.scopes)).Add(t.created_by).Add(ToUnixMicros(t.created_at));
  s.Add(MicrosOf(t.expires_at)).Add(MicrosOf(t.revoked_at)).Add(t.user).Add(t.creator).Add(t.grant);
}

inline constexpr const char* kSigningKeyColumns = "kid, alg, private_pem, created_at, superseded_at";
template <typename Row>
SigningKeyRecord ReadSigningKey(const Row& r) {
  return SigningKeyRecord{r.Text(0), r.Text(1), r.Text(2), FromUnixMicros(r.Int(3)), TimeOf(r.OptInt(4))};
}
template <typename Sink>
void SigningKeyValues(Sink& s, const SigningKeyRecord& k) {
  s.Add(k.kid).Add(k.alg).Add(k.private_pem).Add(ToUnixMicros(k.created_at)).Add(MicrosOf(k.superseded_at));
}

// --- directory and break-glass ----------------------------------------------

// Reading: schema::kDirectoryColumns. Writing adds the name's key.
inline constexpr int kDirectoryInsertColumnCount = 10;
template <typename Row>
DirectoryEntry ReadDirectoryEntry(const Row& r) {
  DirectoryEntry d;
  d.kind = r.Text(0);
  d.id = r.Text(1);
  d.name = r.Text(2);
  d.external_id = r.Text(3);
  d.active = r.Int(4) != 0;
  d.resource = r.Text(5);
  d.version = r.Int(6);
  d.created_at = FromUnixMicros(r.Int(7));
  d.updated_at = FromUnixMicros(r.Int(8));
  return d;
}
template <typename Sink>
void DirectoryValues(Sink& s, const DirectoryEntry& d) {
  s.Add(d.kind).Add(d.id).Add(d.name).Add(d.external_id).Add(int64_t{d.active ? 1 : 0}).Add(d.resource);
  s.Add(int64_t{d.version}).Add(ToUnixMicros(d.created_at)).Add(ToUnixMicros(d.updated_at));
  s.Add(schema::DirectoryNameKey(d.name));
}

using schema::kBreakglassColumns;
inline constexpr int kBreakglassColumnCount = 11;
template <typename Row>
BreakglassRecord ReadBreakglass(const Row& r) {
  BreakglassRecord b;
  b.id = r.Text(0);
  b.user = r.Text(1);
  b.role = r.Text(2);
  b.team = r.Text(3);
  b.reason = r.Text(4);
  b.requested_at = FromUnixMicros(r.Int(5));
  b.duration = Micros(r.Int(6));
  b.approved_by = r.Text(7);
  b.approved_at = TimeOf(r.OptInt(8));
  b.expires_at = TimeOf(r.OptInt(9));
  b.revoked_at = TimeOf(r.OptInt(10));
  return b;
}
template <typename Sink>
void BreakglassValues(Sink& s, const BreakglassRecord& b) {
  s.Add(b.id).Add(b.user).Add(b.role).Add(b.team).Add(b.reason).Add(ToUnixMicros(b.requested_at));
  s.Add(static_cast<int64_t>(b.duration.count())).Add(b.approved_by);
  s.Add(MicrosOf(b.approved_at)).Add(MicrosOf(b.expires_at)).Add(MicrosOf(b.revoked_at));
}

// --- datasets -------------------------------------------------------------

template <typename Row>
DatasetVersion ReadDatasetVersion(const Row& r) {
  DatasetVersion v;
  v.dataset = r.Text(0);
  v.version = r.Text(1);
  v.digest = r.Text(2);
  v.source = r.Text(3);
  v.hash_type = r.Text(4);
  v.objects = r.Int(5);
  v.bytes = r.Int(6);
  v.registered_by = r.Text(7);
  v.registered_at = FromUnixMicros(r.Int(8));
  return v;
}
// The version's columns, then the manifest ($10).
template <typename Sink>
void DatasetVersionValues(Sink& s, const DatasetVersion& v, const std::string& manifest) {
  s.Add(v.dataset).Add(v.version).Add(v.digest).Add(v.source).Add(v.hash_type).Add(v.objects).Add(v.bytes);
  s.Add(v.registered_by).Add(ToUnixMicros(v.registered_at)).Add(manifest);
}
template <typename Row>
DatasetReplica ReadDatasetReplica(const Row& r) {
  DatasetReplica d;
  d.digest = r.Text(0);
  d.location = r.Text(1);
  d.path = r.Text(2);
  d.state = r.Text(3);
  d.bytes_moved = r.Int(4);
  d.detail = r.Text(5);
  d.verified_at = TimeOf(r.OptInt(6));
  d.updated_at = FromUnixMicros(r.Int(7));
  d.charged_until = TimeOf(r.OptInt(8));
  return d;
}
template <typename Sink>
void DatasetReplicaValues(Sink& s, const DatasetReplica& d) {
  s.Add(d.digest).Add(d.location).Add(d.path).Add(d.state).Add(d.bytes_moved).Add(d.detail);
  s.Add(MicrosOf(d.verified_at)).Add(ToUnixMicros(d.updated_at)).Add(MicrosOf(d.charged_until));
}

template <typename Row>
DataCharge ReadDataCharge(const Row& r) {
  DataCharge c;
  c.id = r.Text(0);
  c.at = FromUnixMicros(r.Int(1));
  c.kind = r.Text(2);
  c.team = r.Text(3);
  c.job_id = r.Text(4);
  c.dataset = r.Text(5);
  c.digest = r.Text(6);
  c.from_place = r.Text(7);
  c.to_place = r.Text(8);
  c.bytes = r.Int(9);
  c.amount_micros = r.Int(10);
  return c;
}
template <typename Sink>
void DataChargeValues(Sink& s, const DataCharge& c) {
  s.Add(c.id).Add(ToUnixMicros(c.at)).Add(c.kind).Add(c.team).Add(c.job_id).Add(c.dataset).Add(c.digest);
  s.Add(c.from_place).Add(c.to_place).Add(c.bytes).Add(c.amount_micros);
}

// --- audit ----------------------------------------------------------------

inline constexpr const char* kAuditColumns = "seq, time, actor, action, resource, details, prev_hash, hash";
template <typename Row>
AuditEvent ReadAudit(const Row& r) {
  AuditEvent e;
  e.seq = r.Int(0);
  e.time = FromUnixMicros(r.Int(1));
  e.actor = r.Text(2);
  e.action = r.Text(3);
  e.resource = r.Text(4);
  e.details = StoredDetails(r.Text(5));
  e.prev_hash = r.Text(6);
  e.hash = r.Text(7);
  return e;
}
// `details` is the event's canonical details (audit::CanonicalDetails), the
// text its hash covers.
template <typename Sink>
void AuditValues(Sink& s, const AuditEvent& e, const std::string& details) {
  s.Add(int64_t{e.seq}).Add(ToUnixMicros(e.time)).Add(e.actor).Add(e.action).Add(e.resource).Add(details);
  s.Add(e.prev_hash).Add(e.hash);
}

inline constexpr const char* kChangeColumns = "seq, kind, job_id, path, at";
// nullopt for a kind of news this build does not know (a newer replica's).
template <typename Row>
std::optional<Change> ReadChange(const Row& r) {
  auto kind = ParseChangeKind(r.Text(1));
  if (!kind) return std::nullopt;
  return Change{r.Int(0), *kind, r.Text(2), r.Text(3), FromUnixMicros(r.Int(4))};
}
// `seq`: the number of the audit event that describes the change.
template <typename Sink>
void ChangeValues(Sink& s, int64_t seq, const Change& c) {
  s.Add(seq).Add(std::string(ChangeKindName(c.kind))).Add(c.job_id).Add(c.path).Add(ToUnixMicros(c.at));
}

// Reading: schema::kImportedAuditColumns (with the id). Writing: without.
inline constexpr const char* kImportedAuditInsertColumns =
    "provider, source, source_id, time_ms, class_uid, activity, operation, actor, subject, resource, "
    "status_id, event, imported_at";
inline constexpr int kImportedAuditInsertColumnCount = 13;
template <typename Row>
ImportedAuditEvent ReadImportedAudit(const Row& r) {
  ImportedAuditEvent e;
  e.id = r.Int(0);
  e.provider = r.Text(1);
  e.source = r.Text(2);
  e.source_id = r.Text(3);
  e.time_ms = r.Int(4);
  e.class_uid = static_cast<int>(r.Int(5));
  e.activity = r.Text(6);
  e.operation = r.Text(7);
  e.actor = r.Text(8);
  e.subject = r.Text(9);
  e.resource = r.Text(10);
  e.status_id = static_cast<int>(r.Int(11));
  e.event = r.Text(12);
  e.imported_at = FromUnixMicros(r.Int(13));
  return e;
}
template <typename Sink>
void ImportedAuditValues(Sink& s, const ImportedAuditEvent& e) {
  s.Add(e.provider).Add(e.source).Add(e.source_id).Add(int64_t{e.time_ms}).Add(int64_t{e.class_uid});
  s.Add(e.activity).Add(e.operation).Add(e.actor).Add(e.subject).Add(e.resource).Add(int64_t{e.status_id});
  s.Add(e.event).Add(ToUnixMicros(e.imported_at));
}

inline constexpr const char* kImportedSourcesSql =
    "SELECT provider, source, count(*), max(time_ms), max(imported_at) FROM imported_audit "
    "GROUP BY provider, source ORDER BY provider, source";
template <typename Row>
ImportedSource ReadImportedSource(const Row& r) {
  return ImportedSource{r.Text(0), r.Text(1), r.Int(2), r.Int(3), FromUnixMicros(r.Int(4))};
}

// --- leases -----------------------------------------------------------------

inline constexpr const char* kLeaseColumns = "name, holder, epoch, expires_at";
template <typename Row>
Lease ReadLease(const Row& r) {
  return Lease{r.Text(0), r.Text(1), r.Int(2), FromUnixMicros(r.Int(3))};
}

// --- billing ----------------------------------------------------------------

using schema::kBillingImportColumnCount;
using schema::kBillingImportColumns;
template <typename Row>
BillingImport ReadBillingImport(const Row& r) {
  return BillingImport{r.Text(0), r.Text(1), r.Text(2), r.Text(3), r.Text(4),  r.Int(5),
                       r.Int(6),  r.Int(7),  r.Text(8), r.Text(9), r.Text(10), FromUnixMicros(r.Int(11))};
}
template <typename Sink>
void BillingImportValues(Sink& s, const BillingImport& b) {
  s.Add(b.id).Add(b.provider).Add(b.file).Add(b.digest).Add(b.focus_version).Add(int64_t{b.rows});
  s.Add(int64_t{b.skipped}).Add(int64_t{b.issues}).Add(b.first_day).Add(b.last_day).Add(b.imported_by);
  s.Add(ToUnixMicros(b.imported_at));
}

// A rollup row: the import's id, then schema::kBillingRollupColumns (the
// provider first, each amount as two integers).
inline constexpr int kRollupInsertColumnCount = schema::kBillingRollupColumnCount + 1;
template <typename Sink>
void RollupValues(Sink& s, const BillingImport& b, const BillingRollup& r) {
  s.Add(b.id).Add(b.provider);
  for (const std::string* t : r.KeyFields()) s.Add(*t);
  s.Add(int64_t{r.rows});
  for (Picos v : r.Amounts()) {
    auto [nanos, frac] = schema::SplitPicos(v);
    s.Add(int64_t{nanos}).Add(int64_t{frac});
  }
}
// Reads schema::kBillingRollupColumns (column 0, the provider, is the
// import's and is skipped).
template <typename Row>
BillingRollup ReadRollup(const Row& r) {
  BillingRollup b;
  int i = 1;
  for (std::string* t : b.KeyFields()) *t = r.Text(i++);
  b.rows = r.Int(i++);
  for (Picos* v : b.Amounts()) {
    *v = schema::JoinPicos(r.Int(i), r.Int(i + 1));
    i += 2;
  }
  return b;
}

}  // namespace causeway::rows
