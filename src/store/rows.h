// Each record's row, declared once for both backends: its columns in
// order, each with its name and the member it holds (Col), from which the
// column list a SELECT names (Names), the reader of a result row (Read) and
// the values an INSERT binds (Write) are derived. The backends differ only
// in how they run the SQL; a test checks every declared column against both
// schemas (store_test.cc).
//
// A Row (SQLite's statement on its current row, a PostgreSQL result row)
// offers Text(col), Int(col) and OptInt(col) (nullopt for NULL). A Sink (a
// SQLite statement's binder, PostgreSQL's Params) offers Add() of text, of
// an integer and of an optional integer (NULL when empty), in order. Text
// passed as an lvalue is the record's own and outlives the statement; a
// temporary is copied.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <utility>
#include <vector>

#include "causeway/records.h"
#include "causeway/store.h"
#include "store/audit_chain.h"
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

// How a member of type T is stored: text or an integer (NULL for an empty
// optional); times as Unix microseconds, flags as 0 or 1.
template <typename T>
struct Stored;
template <>
struct Stored<std::string> {
  template <typename Row>
  static std::string Read(const Row& r, int i) { return r.Text(i); }
  template <typename Sink>
  static void Write(Sink& s, const std::string& v) { s.Add(v); }
};
template <>
struct Stored<int64_t> {
  template <typename Row>
  static int64_t Read(const Row& r, int i) { return r.Int(i); }
  template <typename Sink>
  static void Write(Sink& s, int64_t v) { s.Add(v); }
};
template <>
struct Stored<int> {
  template <typename Row>
  static int Read(const Row& r, int i) { return static_cast<int>(r.Int(i)); }
  template <typename Sink>
  static void Write(Sink& s, int v) { s.Add(int64_t{v}); }
};
template <>
struct Stored<bool> {
  template <typename Row>
  static bool Read(const Row& r, int i) { return r.Int(i) != 0; }
  template <typename Sink>
  static void Write(Sink& s, bool v) { s.Add(int64_t{v ? 1 : 0}); }
};
template <>
struct Stored<Timestamp> {
  template <typename Row>
  static Timestamp Read(const Row& r, int i) { return FromUnixMicros(r.Int(i)); }
  template <typename Sink>
  static void Write(Sink& s, Timestamp v) { s.Add(ToUnixMicros(v)); }
};
template <>
struct Stored<std::optional<Timestamp>> {
  template <typename Row>
  static std::optional<Timestamp> Read(const Row& r, int i) { return TimeOf(r.OptInt(i)); }
  template <typename Sink>
  static void Write(Sink& s, const std::optional<Timestamp>& v) { s.Add(MicrosOf(v)); }
};
template <>
struct Stored<std::optional<int64_t>> {
  template <typename Row>
  static std::optional<int64_t> Read(const Row& r, int i) { return r.OptInt(i); }
  template <typename Sink>
  static void Write(Sink& s, const std::optional<int64_t>& v) { s.Add(v); }
};
template <>
struct Stored<std::optional<int>> {
  template <typename Row>
  static std::optional<int> Read(const Row& r, int i) {
    auto v = r.OptInt(i);
    return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
  }
  template <typename Sink>
  static void Write(Sink& s, const std::optional<int>& v) { s.Add(v ? std::optional<int64_t>(*v) : std::nullopt); }
};
template <>
struct Stored<Micros> {
  template <typename Row>
  static Micros Read(const Row& r, int i) { return Micros(r.Int(i)); }
  template <typename Sink>
  static void Write(Sink& s, Micros v) { s.Add(static_cast<int64_t>(v.count())); }
};
template <>
struct Stored<JobState> {
  template <typename Row>
  static JobState Read(const Row& r, int i) { return ParseJobState(r.Text(i)).value_or(JobState::kPending); }
  template <typename Sink>
  static void Write(Sink& s, JobState v) { s.Add(std::string(JobStateName(v))); }
};
// A token's scopes (the only list stored in a column).
template <>
struct Stored<std::vector<std::string>> {
  template <typename Row>
  static std::vector<std::string> Read(const Row& r, int i) { return ScopesFromText(r.Text(i)); }
  template <typename Sink>
  static void Write(Sink& s, const std::vector<std::string>& v) { s.Add(ScopesText(v)); }
};

// An audit event's details: written as their canonical text (the text the
// event's hash covers, audit::CanonicalDetails), read back parsed.
template <>
struct Stored<Details> {
  template <typename Row>
  static Details Read(const Row& r, int i) { return StoredDetails(r.Text(i)); }
  template <typename Sink>
  static void Write(Sink& s, const Details& v) { s.Add(audit::CanonicalDetails(v)); }
};
// A change's kind by its name. A name this build does not know (a newer
// replica's) is not a kind: readers check KnownChangeKind first.
template <>
struct Stored<Change::Kind> {
  template <typename Row>
  static Change::Kind Read(const Row& r, int i) { return ParseChangeKind(r.Text(i)).value_or(Change::Kind::kSubmitted); }
  template <typename Sink>
  static void Write(Sink& s, Change::Kind v) { s.Add(std::string(ChangeKindName(v))); }
};

// One column: its name and the member of Record it holds.
template <typename Record, typename Member>
struct Col {
  const char* name;
  Member Record::*member;
};

// A record's row: its columns, in order.
template <typename Record, typename... Members>
class Row {
 public:
  constexpr explicit Row(Col<Record, Members>... cols) : cols_(cols...) {}
  static constexpr int kCount = sizeof...(Members);

  // "a, b, c", or with an alias "t.a, t.b, t.c".
  std::string Names(std::string_view alias = "") const {
    std::string out;
    std::apply([&](const auto&... c) { ((out += (out.empty() ? "" : ", ") + std::string(alias) +
                                                  (alias.empty() ? "" : ".") + c.name), ...); }, cols_);
    return out;
  }
  // The position of the column named `name` (kCount when there is none).
  constexpr int Index(std::string_view name) const {
    int at = 0, found = kCount;
    std::apply([&](const auto&... c) { ((found = found == kCount && name == c.name ? at : found, ++at), ...); },
               cols_);
    return found;
  }
  // The record from the result row's columns `first` to `first + kCount`.
  template <typename ResultRow>
  Record Read(const ResultRow& r, int first = 0) const {
    Record out{};
    int i = first;
    std::apply([&](const auto&... c) { ((ReadInto(r, i++, out.*(c.member))), ...); }, cols_);
    return out;
  }
  // Each column's value, in order.
  template <typename Sink>
  void Write(Sink& s, const Record& rec) const {
    std::apply([&](const auto&... c) { (Stored<std::decay_t<decltype(rec.*(c.member))>>::Write(s, rec.*(c.member)), ...); },
               cols_);
  }

 private:
  template <typename ResultRow, typename T>
  static void ReadInto(const ResultRow& r, int i, T& into) { into = Stored<T>::Read(r, i); }
  std::tuple<Col<Record, Members>...> cols_;
};

// --- jobs -----------------------------------------------------------------

namespace job {
inline constexpr Col<JobRecord, std::string> id{"id", &JobRecord::id}, name{"name", &JobRecord::name},
    team{"team", &JobRecord::team}, owner{"owner", &JobRecord::owner}, spec_yaml{"spec_yaml", &JobRecord::spec_yaml},
    spec_json{"spec_json", &JobRecord::spec_json}, submitted_by{"submitted_by", &JobRecord::submitted_by},
    cluster{"cluster", &JobRecord::cluster}, reason{"reason", &JobRecord::reason},
    sealed_secrets{"sealed_secrets", &JobRecord::sealed_secrets}, pipeline{"pipeline", &JobRecord::pipeline},
    pipeline_name{"pipeline_name", &JobRecord::pipeline_name}, after{"after_job", &JobRecord::after};
inline constexpr Col<JobRecord, JobState> state{"state", &JobRecord::state};
inline constexpr Col<JobRecord, int> priority{"priority", &JobRecord::priority}, attempts{"attempts", &JobRecord::attempts},
    step{"step", &JobRecord::step}, steps{"steps", &JobRecord::steps};
inline constexpr Col<JobRecord, Timestamp> created_at{"created_at", &JobRecord::created_at},
    updated_at{"updated_at", &JobRecord::updated_at};
inline constexpr Col<JobRecord, int64_t> gpu_seconds{"gpu_seconds", &JobRecord::gpu_seconds},
    cost_micros{"cost_micros", &JobRecord::cost_micros},
    termination_delay{"termination_delay_s", &JobRecord::termination_delay_seconds};
inline constexpr Col<JobRecord, bool> job_group{"job_group", &JobRecord::job_group},
    auxiliary{"auxiliary", &JobRecord::auxiliary};
}  // namespace job
inline constexpr Row kJobRow{job::id, job::name, job::team, job::owner, job::state, job::priority, job::spec_yaml,
                             job::spec_json, job::submitted_by, job::created_at, job::updated_at, job::cluster,
                             job::attempts, job::gpu_seconds, job::cost_micros, job::reason, job::sealed_secrets,
                             job::pipeline, job::pipeline_name, job::step, job::steps, job::after, job::job_group,
                             job::auxiliary, job::termination_delay};
// What a new job is inserted with (the progress columns start at their
// defaults).
inline constexpr Row kJobInsertRow{job::id, job::name, job::team, job::owner, job::state, job::priority,
                                   job::spec_yaml, job::spec_json, job::submitted_by, job::created_at,
                                   job::updated_at, job::sealed_secrets, job::pipeline, job::pipeline_name,
                                   job::step, job::steps, job::after, job::job_group, job::auxiliary,
                                   job::termination_delay};
inline const std::string kJobColumns = kJobRow.Names();
inline const std::string kJobInsertColumns = kJobInsertRow.Names();
inline constexpr int kJobInsertColumnCount = kJobInsertRow.kCount;
template <typename Row>
JobRecord ReadJob(const Row& r) {
  return kJobRow.Read(r);
}
template <typename Sink>
void JobInsertValues(Sink& s, const JobRecord& j) {
  kJobInsertRow.Write(s, j);
}

namespace job_event {
inline constexpr Col<JobEvent, int64_t> id{"id", &JobEvent::id};
inline constexpr Col<JobEvent, std::string> job_id{"job_id", &JobEvent::job_id}, type{"type", &JobEvent::type},
    message{"message", &JobEvent::message};
inline constexpr Col<JobEvent, Timestamp> time{"time", &JobEvent::time};
}  // namespace job_event
inline constexpr Row kJobEventRow{job_event::id, job_event::job_id, job_event::time, job_event::type,
                                  job_event::message};
inline constexpr Row kJobEventInsertRow{job_event::job_id, job_event::time, job_event::type, job_event::message};
inline const std::string kJobEventColumns = kJobEventRow.Names();
inline const std::string kJobEventInsertColumns = kJobEventInsertRow.Names();
template <typename Row>
JobEvent ReadJobEvent(const Row& r) {
  return kJobEventRow.Read(r);
}
template <typename Sink>
void JobEventValues(Sink& s, const JobEvent& e) {
  kJobEventInsertRow.Write(s, e);
}

// Attempts: read with the alias `a` (kAttemptColumns), joined to their job.
inline constexpr Row kAttemptRow{
    Col<Attempt, std::string>{"job_id", &Attempt::job_id},
    Col<Attempt, int>{"number", &Attempt::number},
    Col<Attempt, std::string>{"cluster", &Attempt::cluster},
    Col<Attempt, std::string>{"state", &Attempt::state},
    Col<Attempt, Timestamp>{"started_at", &Attempt::started_at},
    Col<Attempt, std::optional<Timestamp>>{"ended_at", &Attempt::ended_at},
    Col<Attempt, std::optional<int>>{"exit_code", &Attempt::exit_code},
    Col<Attempt, std::string>{"failure_class", &Attempt::failure_class},
    Col<Attempt, std::string>{"pool", &Attempt::pool},
    Col<Attempt, std::string>{"flavor", &Attempt::flavor},
    Col<Attempt, int64_t>{"gpus", &Attempt::gpus},
    Col<Attempt, bool>{"reserved", &Attempt::reserved},
    Col<Attempt, int64_t>{"borrowed", &Attempt::borrowed},
    Col<Attempt, int64_t>{"price_micros", &Attempt::price_micros},
    Col<Attempt, int64_t>{"gpu_seconds", &Attempt::gpu_seconds},
    Col<Attempt, int64_t>{"cost_micros", &Attempt::cost_micros},
    Col<Attempt, std::string>{"placement", &Attempt::placement},
    Col<Attempt, std::string>{"backend_id", &Attempt::backend_id},
    Col<Attempt, std::string>{"resumed_from", &Attempt::resumed_from},
    Col<Attempt, int64_t>{"observed_gpu_seconds", &Attempt::observed_gpu_seconds},
    Col<Attempt, int64_t>{"work_gpu_seconds", &Attempt::work_gpu_seconds},
    Col<Attempt, std::string>{"facts", &Attempt::facts}};
inline const std::string kAttemptColumns = kAttemptRow.Names("a");
inline const std::string kAttemptInsertColumns = kAttemptRow.Names();
inline constexpr int kAttemptColumnCount = kAttemptRow.kCount;
template <typename Row>
Attempt ReadAttempt(const Row& r) {
  return kAttemptRow.Read(r);
}
template <typename Sink>
void AttemptValues(Sink& s, const Attempt& a) {
  kAttemptRow.Write(s, a);
}
// An attempt followed by its job's team, owner and state.
template <typename Row>
MeteredAttempt ReadMeteredAttempt(const Row& r) {
  return MeteredAttempt{ReadAttempt(r), r.Text(kAttemptColumnCount), r.Text(kAttemptColumnCount + 1),
                        ParseJobState(r.Text(kAttemptColumnCount + 2)).value_or(JobState::kPending)};
}

inline constexpr Row kCheckpointRow{Col<Checkpoint, std::string>{"job_id", &Checkpoint::job_id},
                                    Col<Checkpoint, int64_t>{"seq", &Checkpoint::seq},
                                    Col<Checkpoint, int>{"attempt", &Checkpoint::attempt},
                                    Col<Checkpoint, std::string>{"path", &Checkpoint::path},
                                    Col<Checkpoint, std::optional<int64_t>>{"step", &Checkpoint::step},
                                    Col<Checkpoint, Timestamp>{"created_at", &Checkpoint::created_at},
                                    Col<Checkpoint, std::string>{"digest", &Checkpoint::digest}};
inline const std::string kCheckpointColumns = kCheckpointRow.Names();
template <typename Row>
Checkpoint ReadCheckpoint(const Row& r) {
  return kCheckpointRow.Read(r);
}
template <typename Sink>
void CheckpointValues(Sink& s, const Checkpoint& c) {
  kCheckpointRow.Write(s, c);
}

inline constexpr Row kJobFactRow{Col<JobFact, std::string>{"job_id", &JobFact::job_id},
                                 Col<JobFact, int64_t>{"seq", &JobFact::seq},
                                 Col<JobFact, int>{"attempt", &JobFact::attempt},
                                 Col<JobFact, std::string>{"name", &JobFact::name},
                                 Col<JobFact, std::string>{"value", &JobFact::value},
                                 Col<JobFact, std::string>{"recorded_by", &JobFact::recorded_by},
                                 Col<JobFact, Timestamp>{"recorded_at", &JobFact::recorded_at}};
inline const std::string kJobFactColumns = kJobFactRow.Names();
template <typename Row>
JobFact ReadJobFact(const Row& r) {
  return kJobFactRow.Read(r);
}

inline constexpr Row kIdempotencyRow{Col<IdempotencyRecord, std::string>{"scope", &IdempotencyRecord::scope},
                                     Col<IdempotencyRecord, std::string>{"key", &IdempotencyRecord::key},
                                     Col<IdempotencyRecord, std::string>{"request_hash", &IdempotencyRecord::request_hash},
                                     Col<IdempotencyRecord, std::string>{"job_id", &IdempotencyRecord::job_id},
                                     Col<IdempotencyRecord, Timestamp>{"created_at", &IdempotencyRecord::created_at}};
inline const std::string kIdempotencyColumns = kIdempotencyRow.Names();
template <typename Row>
IdempotencyRecord ReadIdempotency(const Row& r) {
  return kIdempotencyRow.Read(r);
}
template <typename Sink>
void IdempotencyValues(Sink& s, const IdempotencyRecord& r) {
  kIdempotencyRow.Write(s, r);
}

inline constexpr const char* kLaunchColumns = "job_id, attempt, cluster, at";

// --- tokens and keys --------------------------------------------------------

inline constexpr Row kTokenRow{Col<TokenRecord, std::string>{"id", &TokenRecord::id},
                               Col<TokenRecord, std::string>{"name", &TokenRecord::name},
                               Col<TokenRecord, std::string>{"hash", &TokenRecord::hash},
                               Col<TokenRecord, std::vector<std::string>>{"scopes", &TokenRecord::scopes},
                               Col<TokenRecord, std::string>{"created_by", &TokenRecord::created_by},
                               Col<TokenRecord, Timestamp>{"created_at", &TokenRecord::created_at},
                               Col<TokenRecord, std::optional<Timestamp>>{"expires_at", &TokenRecord::expires_at},
                               Col<TokenRecord, std::optional<Timestamp>>{"revoked_at", &TokenRecord::revoked_at},
                               Col<TokenRecord, std::string>{"user_name", &TokenRecord::user},
                               Col<TokenRecord, std::string>{"creator", &TokenRecord::creator},
                               Col<TokenRecord, std::string>{"grant_id", &TokenRecord::grant}};
inline const std::string kTokenColumns = kTokenRow.Names();
inline constexpr int kTokenColumnCount = kTokenRow.kCount;
template <typename Row>
TokenRecord ReadToken(const Row& r) {
  return kTokenRow.Read(r);
}
template <typename Sink>
void TokenValues(Sink& s, const TokenRecord& t) {
  kTokenRow.Write(s, t);
}

inline constexpr Row kSigningKeyRow{
    Col<SigningKeyRecord, std::string>{"kid", &SigningKeyRecord::kid},
    Col<SigningKeyRecord, std::string>{"alg", &SigningKeyRecord::alg},
    Col<SigningKeyRecord, std::string>{"private_pem", &SigningKeyRecord::private_pem},
    Col<SigningKeyRecord, Timestamp>{"created_at", &SigningKeyRecord::created_at},
    Col<SigningKeyRecord, std::optional<Timestamp>>{"superseded_at", &SigningKeyRecord::superseded_at}};
inline const std::string kSigningKeyColumns = kSigningKeyRow.Names();
template <typename Row>
SigningKeyRecord ReadSigningKey(const Row& r) {
  return kSigningKeyRow.Read(r);
}
template <typename Sink>
void SigningKeyValues(Sink& s, const SigningKeyRecord& k) {
  kSigningKeyRow.Write(s, k);
}

// --- directory and break-glass ----------------------------------------------

// Reading: kDirectoryColumns. Writing adds the name's key.
inline constexpr Row kDirectoryRow{Col<DirectoryEntry, std::string>{"kind", &DirectoryEntry::kind},
                                   Col<DirectoryEntry, std::string>{"id", &DirectoryEntry::id},
                                   Col<DirectoryEntry, std::string>{"name", &DirectoryEntry::name},
                                   Col<DirectoryEntry, std::string>{"external_id", &DirectoryEntry::external_id},
                                   Col<DirectoryEntry, bool>{"active", &DirectoryEntry::active},
                                   Col<DirectoryEntry, std::string>{"resource", &DirectoryEntry::resource},
                                   Col<DirectoryEntry, int64_t>{"version", &DirectoryEntry::version},
                                   Col<DirectoryEntry, Timestamp>{"created_at", &DirectoryEntry::created_at},
                                   Col<DirectoryEntry, Timestamp>{"updated_at", &DirectoryEntry::updated_at}};
inline constexpr int kDirectoryInsertColumnCount = kDirectoryRow.kCount + 1;
template <typename Row>
DirectoryEntry ReadDirectoryEntry(const Row& r) {
  return kDirectoryRow.Read(r);
}
template <typename Sink>
void DirectoryValues(Sink& s, const DirectoryEntry& d) {
  kDirectoryRow.Write(s, d);
  s.Add(schema::DirectoryNameKey(d.name));
}

inline constexpr Row kBreakglassRow{
    Col<BreakglassRecord, std::string>{"id", &BreakglassRecord::id},
    Col<BreakglassRecord, std::string>{"user_name", &BreakglassRecord::user},
    Col<BreakglassRecord, std::string>{"role", &BreakglassRecord::role},
    Col<BreakglassRecord, std::string>{"team", &BreakglassRecord::team},
    Col<BreakglassRecord, std::string>{"reason", &BreakglassRecord::reason},
    Col<BreakglassRecord, Timestamp>{"requested_at", &BreakglassRecord::requested_at},
    Col<BreakglassRecord, Micros>{"duration", &BreakglassRecord::duration},
    Col<BreakglassRecord, std::string>{"approved_by", &BreakglassRecord::approved_by},
    Col<BreakglassRecord, std::optional<Timestamp>>{"approved_at", &BreakglassRecord::approved_at},
    Col<BreakglassRecord, std::optional<Timestamp>>{"expires_at", &BreakglassRecord::expires_at},
    Col<BreakglassRecord, std::optional<Timestamp>>{"revoked_at", &BreakglassRecord::revoked_at}};
inline const std::string kBreakglassColumns = kBreakglassRow.Names();
inline constexpr int kBreakglassColumnCount = kBreakglassRow.kCount;
template <typename Row>
BreakglassRecord ReadBreakglass(const Row& r) {
  return kBreakglassRow.Read(r);
}
template <typename Sink>
void BreakglassValues(Sink& s, const BreakglassRecord& b) {
  kBreakglassRow.Write(s, b);
}

// --- datasets -------------------------------------------------------------

inline constexpr Row kDatasetVersionRow{
    Col<DatasetVersion, std::string>{"dataset", &DatasetVersion::dataset},
    Col<DatasetVersion, std::string>{"version", &DatasetVersion::version},
    Col<DatasetVersion, std::string>{"digest", &DatasetVersion::digest},
    Col<DatasetVersion, std::string>{"source", &DatasetVersion::source},
    Col<DatasetVersion, std::string>{"hash_type", &DatasetVersion::hash_type},
    Col<DatasetVersion, int64_t>{"objects", &DatasetVersion::objects},
    Col<DatasetVersion, int64_t>{"bytes", &DatasetVersion::bytes},
    Col<DatasetVersion, std::string>{"registered_by", &DatasetVersion::registered_by},
    Col<DatasetVersion, Timestamp>{"registered_at", &DatasetVersion::registered_at}};
template <typename Row>
DatasetVersion ReadDatasetVersion(const Row& r) {
  return kDatasetVersionRow.Read(r);
}
// The version's columns, then the manifest.
template <typename Sink>
void DatasetVersionValues(Sink& s, const DatasetVersion& v, const std::string& manifest) {
  kDatasetVersionRow.Write(s, v);
  s.Add(manifest);
}
inline constexpr Row kDatasetReplicaRow{
    Col<DatasetReplica, std::string>{"digest", &DatasetReplica::digest},
    Col<DatasetReplica, std::string>{"location", &DatasetReplica::location},
    Col<DatasetReplica, std::string>{"path", &DatasetReplica::path},
    Col<DatasetReplica, std::string>{"state", &DatasetReplica::state},
    Col<DatasetReplica, int64_t>{"bytes_moved", &DatasetReplica::bytes_moved},
    Col<DatasetReplica, std::string>{"detail", &DatasetReplica::detail},
    Col<DatasetReplica, std::optional<Timestamp>>{"verified_at", &DatasetReplica::verified_at},
    Col<DatasetReplica, Timestamp>{"updated_at", &DatasetReplica::updated_at},
    Col<DatasetReplica, std::optional<Timestamp>>{"charged_until", &DatasetReplica::charged_until}};
template <typename Row>
DatasetReplica ReadDatasetReplica(const Row& r) {
  return kDatasetReplicaRow.Read(r);
}
template <typename Sink>
void DatasetReplicaValues(Sink& s, const DatasetReplica& d) {
  kDatasetReplicaRow.Write(s, d);
}

inline constexpr Row kDataChargeRow{Col<DataCharge, std::string>{"id", &DataCharge::id},
                                    Col<DataCharge, Timestamp>{"at", &DataCharge::at},
                                    Col<DataCharge, std::string>{"kind", &DataCharge::kind},
                                    Col<DataCharge, std::string>{"team", &DataCharge::team},
                                    Col<DataCharge, std::string>{"job_id", &DataCharge::job_id},
                                    Col<DataCharge, std::string>{"dataset", &DataCharge::dataset},
                                    Col<DataCharge, std::string>{"digest", &DataCharge::digest},
                                    Col<DataCharge, std::string>{"from_place", &DataCharge::from_place},
                                    Col<DataCharge, std::string>{"to_place", &DataCharge::to_place},
                                    Col<DataCharge, int64_t>{"bytes", &DataCharge::bytes},
                                    Col<DataCharge, int64_t>{"amount_micros", &DataCharge::amount_micros}};
template <typename Row>
DataCharge ReadDataCharge(const Row& r) {
  return kDataChargeRow.Read(r);
}
template <typename Sink>
void DataChargeValues(Sink& s, const DataCharge& c) {
  kDataChargeRow.Write(s, c);
}

// --- audit ----------------------------------------------------------------

// The trail's own events (details as their canonical text, Stored<Details>).
inline constexpr Row kAuditRow{Col<AuditEvent, int64_t>{"seq", &AuditEvent::seq},
                               Col<AuditEvent, Timestamp>{"time", &AuditEvent::time},
                               Col<AuditEvent, std::string>{"actor", &AuditEvent::actor},
                               Col<AuditEvent, std::string>{"action", &AuditEvent::action},
                               Col<AuditEvent, std::string>{"resource", &AuditEvent::resource},
                               Col<AuditEvent, Details>{"details", &AuditEvent::details},
                               Col<AuditEvent, std::string>{"prev_hash", &AuditEvent::prev_hash},
                               Col<AuditEvent, std::string>{"hash", &AuditEvent::hash}};
inline const std::string kAuditColumns = kAuditRow.Names();
inline constexpr int kAuditColumnCount = kAuditRow.kCount;
template <typename Row>
AuditEvent ReadAudit(const Row& r) {
  return kAuditRow.Read(r);
}
template <typename Sink>
void AuditValues(Sink& s, const AuditEvent& e) {
  kAuditRow.Write(s, e);
}

// The feed of changes: `seq` is the number of the audit event that
// describes the change.
inline constexpr Row kChangeRow{Col<Change, int64_t>{"seq", &Change::seq}, Col<Change, Change::Kind>{"kind", &Change::kind},
                                Col<Change, std::string>{"job_id", &Change::job_id},
                                Col<Change, std::string>{"path", &Change::path}, Col<Change, Timestamp>{"at", &Change::at}};
inline const std::string kChangeColumns = kChangeRow.Names();
inline constexpr int kChangeColumnCount = kChangeRow.kCount;
// nullopt for a kind of news this build does not know (a newer replica's).
template <typename Row>
std::optional<Change> ReadChange(const Row& r) {
  if (!ParseChangeKind(r.Text(kChangeRow.Index("kind")))) return std::nullopt;
  return kChangeRow.Read(r);
}
// `c.seq` must already be its audit event's number. The text is bound
// from `c`, which outlives the statement.
template <typename Sink>
void ChangeValues(Sink& s, const Change& c) {
  kChangeRow.Write(s, c);
}

// Imported events: read with their id (kImportedAuditColumns), inserted
// without it (the store assigns it).
namespace imported {
inline constexpr Col<ImportedAuditEvent, int64_t> id{"id", &ImportedAuditEvent::id},
    time_ms{"time_ms", &ImportedAuditEvent::time_ms};
inline constexpr Col<ImportedAuditEvent, std::string> provider{"provider", &ImportedAuditEvent::provider},
    source{"source", &ImportedAuditEvent::source}, source_id{"source_id", &ImportedAuditEvent::source_id},
    activity{"activity", &ImportedAuditEvent::activity}, operation{"operation", &ImportedAuditEvent::operation},
    actor{"actor", &ImportedAuditEvent::actor}, subject{"subject", &ImportedAuditEvent::subject},
    resource{"resource", &ImportedAuditEvent::resource}, event{"event", &ImportedAuditEvent::event};
inline constexpr Col<ImportedAuditEvent, int> class_uid{"class_uid", &ImportedAuditEvent::class_uid},
    status_id{"status_id", &ImportedAuditEvent::status_id};
inline constexpr Col<ImportedAuditEvent, Timestamp> imported_at{"imported_at", &ImportedAuditEvent::imported_at};
}  // namespace imported
inline constexpr Row kImportedAuditRow{imported::id,       imported::provider, imported::source,   imported::source_id,
                                       imported::time_ms,  imported::class_uid, imported::activity, imported::operation,
                                       imported::actor,    imported::subject,  imported::resource, imported::status_id,
                                       imported::event,    imported::imported_at};
inline constexpr Row kImportedAuditInsertRow{imported::provider,  imported::source,   imported::source_id,
                                             imported::time_ms,   imported::class_uid, imported::activity,
                                             imported::operation, imported::actor,    imported::subject,
                                             imported::resource,  imported::status_id, imported::event,
                                             imported::imported_at};
inline const std::string kImportedAuditInsertColumns = kImportedAuditInsertRow.Names();
inline constexpr int kImportedAuditInsertColumnCount = kImportedAuditInsertRow.kCount;
template <typename Row>
ImportedAuditEvent ReadImportedAudit(const Row& r) {
  return kImportedAuditRow.Read(r);
}
template <typename Sink>
void ImportedAuditValues(Sink& s, const ImportedAuditEvent& e) {
  kImportedAuditInsertRow.Write(s, e);
}


// --- statements built from the rows ----------------------------------------

// The statements below number their parameters $N, which SQLite reads as
// PostgreSQL does.
inline const std::string kListDatasetVersionsSql =
    "SELECT " + kDatasetVersionRow.Names() +
    " FROM dataset_versions WHERE ($1 = '' OR dataset = $1) ORDER BY registered_at, dataset, version";
inline const std::string kListDatasetReplicasSql =
    "SELECT " + kDatasetReplicaRow.Names() +
    " FROM dataset_replicas WHERE ($1 = '' OR digest = $1) ORDER BY digest, location";
inline const std::string kInsertDatasetVersionSql =
    InsertHead("dataset_versions", kDatasetVersionRow.Names() + ", manifest") +
    Placeholders('$', kDatasetVersionRow.kCount + 1);
// A replica written again keeps when its storage was charged until.
inline const std::string kPutDatasetReplicaSql =
    InsertHead("dataset_replicas", kDatasetReplicaRow.Names()) + Placeholders('$', kDatasetReplicaRow.kCount) +
    " ON CONFLICT (digest, location) DO UPDATE SET path = excluded.path, state = excluded.state, "
    "bytes_moved = excluded.bytes_moved, detail = excluded.detail, verified_at = excluded.verified_at, "
    "updated_at = excluded.updated_at, charged_until = COALESCE(dataset_replicas.charged_until, excluded.charged_until)";
inline const std::string kInsertDataChargeSql =
    InsertHead("data_charges", kDataChargeRow.Names()) + Placeholders('$', kDataChargeRow.kCount);
// $1 job ("" : every one), $2 from, $3 to.
inline const std::string kListDataChargesSql =
    "SELECT " + kDataChargeRow.Names() +
    " FROM data_charges WHERE ($1 = '' OR job_id = $1) AND at >= $2 AND at < $3 ORDER BY at, id";

// A directory entry's columns, in the order both stores read them.
inline const std::string kDirectoryColumns = kDirectoryRow.Names();
// The groups holding member $1, ordered by id (through the membership index).
inline const std::string kGroupsOfSql = "SELECT " + kDirectoryColumns +
                                        " FROM directory WHERE kind = 'Group' AND id IN "
                                        "(SELECT group_id FROM directory_members WHERE member_id = $1) ORDER BY id";
// The directory entry of a kind ($1) by its name's key ($2).
inline const std::string kDirectoryByNameSql =
    "SELECT " + kDirectoryColumns + " FROM directory WHERE kind = $1 AND name_key = $2";

// An imported audit event's columns, in the order both stores read them.
inline const std::string kImportedAuditColumns = kImportedAuditRow.Names();

// The search of imported audit events as SQL, with its parameters in order
// (each an integer or text); `placeholder(n)` spells the n-th parameter
// (?n for SQLite, $n for PostgreSQL). Oldest first, after the cursor.
struct SqlWithParams {
  std::string sql;
  std::vector<std::variant<int64_t, std::string>> params;
};
template <typename Placeholder>
SqlWithParams ImportedAuditSearch(const ImportedAuditQuery& q, Placeholder placeholder) {
  SqlWithParams out;
  out.sql = std::string("SELECT ") + kImportedAuditColumns + " FROM imported_audit WHERE 1 = 1";
  auto param = [&](std::variant<int64_t, std::string> v) {
    out.params.push_back(std::move(v));
    return placeholder(static_cast<int>(out.params.size()));
  };
  if (!q.identities.empty()) {
    std::vector<std::pair<std::string, std::string>> by_provider;  // provider, IN list
    for (const auto& [provider_name, id] : q.identities) {
      const std::string& provider = provider_name;  // a lambda may not capture a structured binding (clang 14)
      auto it = std::find_if(by_provider.begin(), by_provider.end(), [&](const auto& g) { return g.first == provider; });
      if (it == by_provider.end()) it = by_provider.insert(by_provider.end(), {provider, ""});
      it->second += (it->second.empty() ? "" : ", ") + param(id);
    }
    std::string any;
    for (const auto& [provider, in] : by_provider) {
      std::string match = "(actor IN (" + in + ") OR subject IN (" + in + "))";
      if (!provider.empty()) match = "(provider = " + param(provider) + " AND " + match + ")";
      any += (any.empty() ? "" : " OR ") + match;
    }
    out.sql += " AND (" + any + ")";
  }
  if (!q.provider.empty()) out.sql += " AND provider = " + param(q.provider);
  if (!q.action.empty()) {
    std::string a = AsciiLower(q.action);
    out.sql += " AND (activity = " + param(a) + " OR lower(operation) = " + param(a) + ")";
  }
  if (q.since_ms > 0) out.sql += " AND time_ms >= " + param(q.since_ms);
  if (q.until_ms > 0) out.sql += " AND time_ms < " + param(q.until_ms);
  // The cursor: past it in the order asked for.
  const char* past = q.newest_first ? " < " : " > ";
  if (q.after_time_ms > 0 || q.after_id > 0) {
    std::string t = param(q.after_time_ms);
    out.sql += " AND (time_ms" + std::string(past) + t + " OR (time_ms = " + t + " AND id" + past + param(q.after_id) + "))";
  }
  out.sql += q.newest_first ? " ORDER BY time_ms DESC, id DESC" : " ORDER BY time_ms, id";
  out.sql += " LIMIT " + param(int64_t{q.limit});
  return out;
}


inline constexpr const char* kImportedSourcesSql =
    "SELECT provider, source, count(*), max(time_ms), max(imported_at) FROM imported_audit "
    "GROUP BY provider, source ORDER BY provider, source";
template <typename Row>
ImportedSource ReadImportedSource(const Row& r) {
  return ImportedSource{r.Text(0), r.Text(1), r.Int(2), r.Int(3), FromUnixMicros(r.Int(4))};
}

// --- leases -----------------------------------------------------------------

inline constexpr Row kLeaseRow{Col<Lease, std::string>{"name", &Lease::name},
                               Col<Lease, std::string>{"holder", &Lease::holder},
                               Col<Lease, int64_t>{"epoch", &Lease::epoch},
                               Col<Lease, Timestamp>{"expires_at", &Lease::expires_at}};
inline const std::string kLeaseColumns = kLeaseRow.Names();
template <typename Row>
Lease ReadLease(const Row& r) {
  return kLeaseRow.Read(r);
}

// --- billing ----------------------------------------------------------------

inline constexpr Row kBillingImportRow{Col<BillingImport, std::string>{"id", &BillingImport::id},
                                       Col<BillingImport, std::string>{"provider", &BillingImport::provider},
                                       Col<BillingImport, std::string>{"file", &BillingImport::file},
                                       Col<BillingImport, std::string>{"digest", &BillingImport::digest},
                                       Col<BillingImport, std::string>{"focus_version", &BillingImport::focus_version},
                                       Col<BillingImport, int64_t>{"row_count", &BillingImport::rows},
                                       Col<BillingImport, int64_t>{"skipped", &BillingImport::skipped},
                                       Col<BillingImport, int64_t>{"issues", &BillingImport::issues},
                                       Col<BillingImport, std::string>{"first_day", &BillingImport::first_day},
                                       Col<BillingImport, std::string>{"last_day", &BillingImport::last_day},
                                       Col<BillingImport, std::string>{"imported_by", &BillingImport::imported_by},
                                       Col<BillingImport, Timestamp>{"imported_at", &BillingImport::imported_at}};
inline const std::string kBillingImportColumns = kBillingImportRow.Names();
inline constexpr int kBillingImportColumnCount = kBillingImportRow.kCount;
template <typename Row>
BillingImport ReadBillingImport(const Row& r) {
  return kBillingImportRow.Read(r);
}
template <typename Sink>
void BillingImportValues(Sink& s, const BillingImport& b) {
  kBillingImportRow.Write(s, b);
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
