#include "store/postgres/pg_write_tx.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "store/audit_chain.h"
#include "store/billing_sql.h"
#include "store/records_json.h"
#include "store/rows.h"
#include "store/schema.h"

namespace causeway::pg {
namespace {

constexpr size_t kRowsPerInsert = 500;

// Kept for the process's life where an Into points at it.
using rows::InsertHead;

// `values` (a rows:: writer) as Params.
template <typename Values, typename... Args>
Params ParamsFrom(Values values, const Args&... args) {
  Params p;
  values(p, args...);
  return p;
}

const std::string kSelectJobById = std::string("SELECT ") + rows::kJobColumns + " FROM jobs WHERE id = $1";
const std::string kSelectTokenById = std::string("SELECT ") + rows::kTokenColumns + " FROM api_tokens WHERE id = $1";

}  // namespace

std::vector<Committed> Uncommitted(std::vector<Status> statuses) {
  std::vector<Committed> out(statuses.size());
  for (size_t i = 0; i < statuses.size(); ++i) out[i].status = std::move(statuses[i]);
  return out;
}

void PgWriteTx::BeginUnit(size_t index) {
  unit_index_ = index;
  unit_mark_ = held_.size();
  unit_savepoint_ = false;
  unit_writes_ = 0;
  unit_audits_ = 0;
  unit_start_ = audit_.size();
  unit_changes_start_ = changes_.size();
  unit_claims_.clear();
  lease_at_unit_start_ = confirmed_lease_;
}

Status PgWriteTx::UndoUnit() {
  audit_.resize(unit_start_);
  audit_units_.resize(unit_start_);
  changes_.resize(unit_changes_start_);
  confirmed_lease_ = lease_at_unit_start_;
  bool claimed = !unit_claims_.empty();
  for (const std::string& k : unit_claims_) claimed_.erase(k);
  held_.Truncate(unit_mark_);
  if (mode_ == BatchMode::kCareful) return Status::Ok();
  if (claimed) return Internal("the unit failed after an unverified claim");
  if (unit_savepoint_) return conn_.ExecScript(("ROLLBACK TO SAVEPOINT " + SavepointName()).c_str());
  if (conn_.InFailedTransaction()) return Internal("the batch failed outside any one unit");
  return Status::Ok();
}

Status PgWriteTx::Commit() {
  if (!audit_.empty()) {
    held_.Statement("SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE");
    ASSIGN_OR_RETURN(Rows h, conn_.Script(held_.Take()));
    if (h.size() == 0) return DataLoss("the audit chain's head row is missing");
    audit::ChainHead head{h.Int(0, 0), h.Text(0, 1)};
    static const std::string audit_head = InsertHead("audit_events", rows::kAuditColumns);
    static const std::string audit_row = rows::Placeholders('$', rows::kAuditColumnCount);
    for (size_t from = 0; from < audit_.size(); from += kRowsPerInsert) {
      std::string insert = audit_head;
      size_t to = std::min(audit_.size(), from + kRowsPerInsert);
      for (size_t i = from; i < to; ++i) {
        AuditEvent& e = audit_[i];
        e.seq = head.seq + 1;
        e.prev_hash = head.hash;
        e.hash = audit::ComputeHash(e);
        head = audit::ChainHead{e.seq, e.hash};
        ASSIGN_OR_RETURN(std::string row,
                         conn_.Inline(audit_row, ParamsFrom(rows::AuditValues<Params>, e)));
        insert += i == from ? "" : ", ";
        insert += row;
      }
      held_.Statement(std::move(insert));
    }
    ASSIGN_OR_RETURN(std::string update, conn_.Inline("UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1",
                                                      Params().Add(head.seq).Add(head.hash)));
    held_.Statement(std::move(update));
    // Each change takes the number its audit event was just given.
    static const std::string change_head = InsertHead("changes", rows::kChangeColumns);
    static const std::string change_row = rows::Placeholders('$', rows::kChangeColumnCount);
    for (size_t from = 0; from < changes_.size(); from += kRowsPerInsert) {
      std::string insert = change_head;
      size_t to = std::min(changes_.size(), from + kRowsPerInsert);
      for (size_t i = from; i < to; ++i) {
        auto [c, event] = changes_[i];
        c.seq = audit_[event].seq;
        ASSIGN_OR_RETURN(std::string row, conn_.Inline(change_row, ParamsFrom(rows::ChangeValues<Params>, c)));
        insert += i == from ? "" : ", ";
        insert += row;
      }
      held_.Statement(std::move(insert));
    }
  }
  held_.Statement("COMMIT");
  // The units' own writes went in the first round trip; what fails here
  // is the audit trail (or the commit itself): fail closed, and say so.
  Status st = conn_.ExecScript(held_.Take().c_str());
  if (!st.ok() && !audit_.empty() && st.code() != Code::kUnavailable) {
    return Unavailable("refused: the change's audit events could not be written (" + st.message() + ")");
  }
  return st;
}

std::vector<Committed> PgWriteTx::Results(std::vector<Status> statuses) const {
  std::vector<Committed> out = Uncommitted(std::move(statuses));
  for (size_t i = 0; i < audit_.size(); ++i) {
    Committed& c = out[audit_units_[i]];
    if (c.status.ok()) c.audit_seqs.push_back(audit_[i].seq);
  }
  return out;
}

Result<std::optional<JobRecord>> PgWriteTx::GetJob(const std::string& id) {
  ASSIGN_OR_RETURN(Rows r, Read(kSelectJobById.c_str(), Params().Add(id)));
  return ReadFirst(r, rows::ReadJob<Row>);
}

Status PgWriteTx::InsertJob(const JobRecord& j) {
  static const std::string head = InsertHead("jobs", rows::kJobInsertColumns);
  static const Into into{head.c_str(), "", 0, true};
  static const std::string row = rows::Placeholders('$', rows::kJobInsertColumnCount);
  return Defer(into, row, ParamsFrom(rows::JobInsertValues<Params>, j));
}

Status PgWriteTx::UpdateJobState(const std::string& id, JobState state, Timestamp at) {
  return WriteOne("UPDATE jobs SET state = $2, updated_at = $3 WHERE id = $1",
                  Params().Add(id).Add(JobStateName(state)).Add(ToUnixMicros(at)), "job " + id);
}

Status PgWriteTx::UpdateJobOwner(const std::string& id, const std::string& owner, Timestamp at) {
  return WriteOne("UPDATE jobs SET owner = $2, updated_at = $3 WHERE id = $1",
                  Params().Add(id).Add(owner).Add(ToUnixMicros(at)), "job " + id);
}

Status PgWriteTx::UpdateJobProgress(const JobRecord& j) {
  return WriteOne("UPDATE jobs SET state = $2, cluster = $3, attempts = $4, gpu_seconds = $5, "
                  "cost_micros = $6, reason = $7, updated_at = $8 WHERE id = $1",
                  Params().Add(j.id).Add(JobStateName(j.state)).Add(j.cluster).Add(j.attempts).Add(j.gpu_seconds)
                      .Add(j.cost_micros).Add(j.reason).Add(ToUnixMicros(j.updated_at)),
                  "job " + j.id);
}

Status PgWriteTx::PutAttempt(const Attempt& a) {
  static const std::string head = InsertHead("attempts", rows::kAttemptInsertColumns);
  static const Into into{
      head.c_str(),
      " ON CONFLICT (job_id, number) DO UPDATE SET cluster = EXCLUDED.cluster, state = EXCLUDED.state, "
      "started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at, exit_code = EXCLUDED.exit_code, "
      "failure_class = EXCLUDED.failure_class, pool = EXCLUDED.pool, flavor = EXCLUDED.flavor, gpus = EXCLUDED.gpus, "
      "reserved = EXCLUDED.reserved, borrowed = EXCLUDED.borrowed, price_micros = EXCLUDED.price_micros, "
      "gpu_seconds = EXCLUDED.gpu_seconds, cost_micros = EXCLUDED.cost_micros, placement = EXCLUDED.placement, "
      "backend_id = EXCLUDED.backend_id, resumed_from = EXCLUDED.resumed_from, "
      "observed_gpu_seconds = EXCLUDED.observed_gpu_seconds, work_gpu_seconds = EXCLUDED.work_gpu_seconds, "
      "facts = EXCLUDED.facts",
      1, false};
  static const std::string row = rows::Placeholders('$', rows::kAttemptColumnCount);
  return Defer(into, row, ParamsFrom(rows::AttemptValues<Params>, a));
}

Status PgWriteTx::AddCheckpoint(Checkpoint& c) {
  // The number is the job's next, taken in the same statement.
  ASSIGN_OR_RETURN(Rows r, Write("INSERT INTO checkpoints (job_id, seq, attempt, path, step, created_at, digest) "
                                 "SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, $6 FROM checkpoints "
                                 "WHERE job_id = $1 RETURNING seq",
                                 Params().Add(c.job_id).Add(c.attempt).Add(c.path).Add(c.step)
                                     .Add(ToUnixMicros(c.created_at)).Add(c.digest)));
  if (r.size() != 1) return Internal("no checkpoint seq assigned");
  c.seq = r.Int(0, 0);
  return Status::Ok();
}

Status PgWriteTx::AddJobFact(JobFact& f) {
  ASSIGN_OR_RETURN(Rows r, Write("INSERT INTO job_facts (job_id, seq, attempt, name, value, recorded_by, recorded_at) "
                                 "SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5, $6 FROM job_facts "
                                 "WHERE job_id = $1 RETURNING seq",
                                 Params().Add(f.job_id).Add(f.attempt).Add(f.name).Add(f.value).Add(f.recorded_by)
                                     .Add(ToUnixMicros(f.recorded_at))));
  if (r.size() != 1) return Internal("no job fact seq assigned");
  f.seq = r.Int(0, 0);
  return Status::Ok();
}

Status PgWriteTx::PutSealedRecord(const SealedRecord& r) {
  RETURN_IF_ERROR(Write("INSERT INTO provenance_records (job_id, kid, sealed_at, envelope) VALUES ($1, $2, $3, $4) "
                        "ON CONFLICT (job_id) DO NOTHING",
                        Params().Add(r.job_id).Add(r.kid).Add(ToUnixMicros(r.sealed_at)).Add(r.envelope))
                      .status());
  return Write("UPDATE jobs SET sealed = 1 WHERE id = $1", Params().Add(r.job_id)).status();
}

Status PgWriteTx::AddJobEvent(const JobEvent& e) {
  static const std::string head = InsertHead("job_events", rows::kJobEventInsertColumns);
  static const Into into{head.c_str(), "", 1, true};
  static const std::string row = rows::Placeholders('$', 4);
  return Defer(into, row, ParamsFrom(rows::JobEventValues<Params>, e));
}

// Fast: claimed optimistically, without asking; a key stored before makes
// the INSERT fail, the batch fail as a whole, and the careful run that
// follows asks first. The batch's own claims are remembered, so a key
// claimed twice in one batch is answered without the database.
Result<std::optional<IdempotencyRecord>> PgWriteTx::ClaimIdempotency(const IdempotencyRecord& rec) {
  std::string id = rec.scope + '\n' + rec.key;
  if (auto it = claimed_.find(id); it != claimed_.end()) return std::optional<IdempotencyRecord>(it->second);
  if (mode_ == BatchMode::kCareful) {
    static const std::string sql = std::string("SELECT ") + rows::kIdempotencyColumns +
                                   " FROM idempotency_keys WHERE scope = $1 AND key = $2";
    ASSIGN_OR_RETURN(Rows r, Read(sql.c_str(), Params().Add(rec.scope).Add(rec.key)));
    if (auto stored = ReadFirst(r, rows::ReadIdempotency<Row>)) return stored;
  }
  static const std::string head = InsertHead("idempotency_keys", rows::kIdempotencyColumns);
  static const Into into{head.c_str(), "", 1, true};
  static const std::string row = rows::Placeholders('$', 5);
  RETURN_IF_ERROR(Defer(into, row, ParamsFrom(rows::IdempotencyValues<Params>, rec)));
  claimed_.emplace(id, rec);
  unit_claims_.push_back(std::move(id));
  return std::optional<IdempotencyRecord>();
}

Status PgWriteTx::RecordLaunch(const std::string& job_id, int attempt, const std::string& cluster, Timestamp at) {
  static const std::string head = InsertHead("launches", rows::kLaunchColumns);
  static const Into into{head.c_str(),
                         " ON CONFLICT (job_id) DO UPDATE SET attempt = EXCLUDED.attempt, "
                         "cluster = EXCLUDED.cluster, at = EXCLUDED.at",
                         1, false};
  static const std::string row = rows::Placeholders('$', 4);
  return Defer(into, row, Params().Add(job_id).Add(attempt).Add(cluster).Add(ToUnixMicros(at)));
}

Result<std::optional<TokenRecord>> PgWriteTx::GetToken(const std::string& id) {
  ASSIGN_OR_RETURN(Rows r, Read(kSelectTokenById.c_str(), Params().Add(id)));
  return ReadFirst(r, rows::ReadToken<Row>);
}

Status PgWriteTx::InsertToken(const TokenRecord& t) {
  static const std::string head = InsertHead("api_tokens", rows::kTokenColumns);
  static const Into into{head.c_str(), "", 0, true};
  static const std::string row = rows::Placeholders('$', rows::kTokenColumnCount);
  return Defer(into, row, ParamsFrom(rows::TokenValues<Params>, t));
}

Status PgWriteTx::SetTokenCreator(const std::string& id, const std::string& creator) {
  return WriteOne("UPDATE api_tokens SET creator = $2 WHERE id = $1", Params().Add(id).Add(creator), "token " + id);
}

Status PgWriteTx::RevokeToken(const std::string& id, Timestamp at) {
  return WriteOne("UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1",
                  Params().Add(id).Add(ToUnixMicros(at)), "token " + id);
}

Status PgWriteTx::PutSigningKey(const SigningKeyRecord& k) {
  static const std::string sql = InsertHead("signing_keys", rows::kSigningKeyColumns) + rows::Placeholders('$', 5) +
                                 " ON CONFLICT (kid) DO UPDATE SET superseded_at = EXCLUDED.superseded_at";
  return Write(sql.c_str(), ParamsFrom(rows::SigningKeyValues<Params>, k)).status();
}

// Deferred: seq, prev_hash and hash are assigned when the batch commits, in
// the order appended.
Status PgWriteTx::AppendAudit(AuditEvent& e) {
  audit_.push_back(e);
  audit_units_.push_back(unit_index_);
  ++unit_audits_;
  return Status::Ok();
}

Status PgWriteTx::AppendChange(const Change& c) {
  if (unit_audits_ == 0) return FailedPrecondition("a change is recorded after the audit event that describes it");
  changes_.emplace_back(c, audit_.size() - 1);  // numbered at commit, with its event
  return Status::Ok();
}

Status PgWriteTx::PruneChanges(int64_t through_seq, Timestamp before) {
  // Bookkeeping of the feed, not a change of state (each change is a copy
  // of what its audit event records): no audit event is asked for. Its
  // unit's savepoint goes first, as for any write.
  RETURN_IF_ERROR(Flush(true));
  return conn_.Exec("DELETE FROM changes WHERE seq <= $1 AND at < $2",
                    Params().Add(through_seq).Add(ToUnixMicros(before)))
      .status();
}

Result<bool> PgWriteTx::InsertImportedAudit(ImportedAuditEvent& e) {
  static const std::string sql = InsertHead("imported_audit", rows::kImportedAuditInsertColumns) +
                                 rows::Placeholders('$', rows::kImportedAuditInsertColumnCount) +
                                 " ON CONFLICT (provider, source, source_id) DO NOTHING RETURNING id";
  ASSIGN_OR_RETURN(Rows r, Write(sql.c_str(), ParamsFrom(rows::ImportedAuditValues<Params>, e)));
  if (r.size() == 0) return false;
  e.id = r.Int(0, 0);
  return true;
}

Result<std::optional<std::string>> PgWriteTx::ImportedAuditText(const std::string& provider, const std::string& source,
                                                                const std::string& source_id) {
  ASSIGN_OR_RETURN(Rows r, Read("SELECT event FROM imported_audit WHERE provider = $1 AND source = $2 AND source_id = $3",
                                Params().Add(provider).Add(source).Add(source_id)));
  if (r.size() == 0) return std::optional<std::string>();
  return std::optional<std::string>(r.Text(0, 0));
}

Result<std::vector<std::string>> PgWriteTx::ImportedAuditOn(const std::string& provider, const std::string& source,
                                                            const std::string& resource, int64_t through_ms, int limit) {
  ASSIGN_OR_RETURN(Rows r, Read("SELECT event FROM imported_audit WHERE provider = $1 AND source = $2 AND resource = $3 "
                                "AND time_ms <= $4 ORDER BY time_ms DESC, id DESC LIMIT $5",
                                Params().Add(provider).Add(source).Add(resource).Add(through_ms).Add(static_cast<int64_t>(limit))));
  std::vector<std::string> out;
  for (int i = 0; i < r.size(); ++i) out.push_back(r.Text(i, 0));
  return out;
}

Status PgWriteTx::InsertBillingImport(const BillingImport& b, const std::vector<BillingRollup>& rollups) {
  static const std::string sql = InsertHead("billing_imports", rows::kBillingImportColumns) +
                                 rows::Placeholders('$', rows::kBillingImportColumnCount);
  auto inserted = Write(sql.c_str(), ParamsFrom(rows::BillingImportValues<Params>, b));
  if (!inserted.ok()) {
    if (inserted.status().code() == Code::kAlreadyExists) {
      return AlreadyExists("this file was imported before for " + b.provider);
    }
    return inserted.status();
  }
  constexpr int kColumns = rows::kRollupInsertColumnCount;
  static const std::string head =
      InsertHead("billing_rollups", std::string("import_id, ") + schema::kBillingRollupColumns);
  for (size_t from = 0; from < rollups.size(); from += kRowsPerInsert) {
    std::string q = head;
    Params params;
    size_t to = std::min(rollups.size(), from + kRowsPerInsert);
    for (size_t i = from; i < to; ++i) {
      q += i == from ? "" : ", ";
      q += rows::Placeholders('$', kColumns, params.size() + 1);
      rows::RollupValues(params, b, rollups[i]);
    }
    RETURN_IF_ERROR(conn_.ExecOnce(q, params).status());
  }
  return Status::Ok();
}

Status PgWriteTx::CheckLease(const std::string& name, const std::string& holder, int64_t epoch) {
  // Once confirmed, the row stays locked until the batch commits: no need
  // to ask again for the next unit.
  std::string key = name + "\n" + holder + "\n" + std::to_string(epoch);
  if (key == confirmed_lease_) return Status::Ok();
  // FOR SHARE: a takeover (an UPDATE of this row) waits for this batch.
  ASSIGN_OR_RETURN(Rows r, Read("SELECT holder, epoch FROM leases WHERE name = $1 FOR SHARE", Params().Add(name)));
  if (r.size() == 0) return FailedPrecondition("nobody holds the " + name + " lease");
  if (r.Text(0, 0) != holder || r.Int(0, 1) != epoch) {
    return FailedPrecondition("the " + name + " lease moved to " + r.Text(0, 0) + " (epoch " +
                              std::to_string(r.Int(0, 1)) + "); epoch " + std::to_string(epoch) + " is stale");
  }
  confirmed_lease_ = key;
  return Status::Ok();
}

Result<std::optional<DirectoryEntry>> PgWriteTx::GetDirectoryEntry(const std::string& kind, const std::string& id) {
  static const std::string sql =
      std::string("SELECT ") + rows::kDirectoryColumns + " FROM directory WHERE kind = $1 AND id = $2 FOR UPDATE";
  ASSIGN_OR_RETURN(Rows r, Read(sql.c_str(), Params().Add(kind).Add(id)));
  return ReadFirst(r, rows::ReadDirectoryEntry<Row>);
}

// Sent at once (not held): a name another entry has is reported as this
// unit's, with a message that names it.
Status PgWriteTx::PutDirectoryEntry(const DirectoryEntry& d) {
  static const std::string sql =
      InsertHead("directory", std::string(rows::kDirectoryColumns) + ", name_key") +
      rows::Placeholders('$', rows::kDirectoryInsertColumnCount) +
      " ON CONFLICT (kind, id) DO UPDATE SET name = EXCLUDED.name, name_key = EXCLUDED.name_key, "
      "external_id = EXCLUDED.external_id, active = EXCLUDED.active, resource = EXCLUDED.resource, "
      "version = EXCLUDED.version, updated_at = EXCLUDED.updated_at";
  auto written = Write(sql.c_str(), ParamsFrom(rows::DirectoryValues<Params>, d));
  if (written.status().code() == Code::kAlreadyExists) {
    return AlreadyExists("another " + d.kind + " is already named \"" + d.name + "\"");
  }
  RETURN_IF_ERROR(written.status());
  if (d.kind != "Group") return Status::Ok();
  RETURN_IF_ERROR(Write(schema::kDeleteMembersSql, Params().Add(d.id)).status());
  return Write(schema::kInsertMembersPostgres, Params().Add(d.id).Add(nlohmann::json(GroupMemberIds(d)).dump()))
      .status();
}

Status PgWriteTx::DeleteDirectoryEntry(const std::string& kind, const std::string& id) {
  RETURN_IF_ERROR(WriteOne("DELETE FROM directory WHERE kind = $1 AND id = $2", Params().Add(kind).Add(id),
                           kind + " " + id));
  if (kind == "Group") RETURN_IF_ERROR(Write(schema::kDeleteMembersSql, Params().Add(id)).status());
  return Status::Ok();
}

Status PgWriteTx::PutBreakglass(const BreakglassRecord& b) {
  static const std::string sql = InsertHead("breakglass", rows::kBreakglassColumns) +
                                 rows::Placeholders('$', rows::kBreakglassColumnCount) +
                                 " ON CONFLICT (id) DO UPDATE SET approved_by = EXCLUDED.approved_by, "
                                 "approved_at = EXCLUDED.approved_at, expires_at = EXCLUDED.expires_at, "
                                 "revoked_at = EXCLUDED.revoked_at";
  return Write(sql.c_str(), ParamsFrom(rows::BreakglassValues<Params>, b)).status();
}

Status PgWriteTx::InsertDatasetVersion(const DatasetVersion& v, const std::string& manifest) {
  ASSIGN_OR_RETURN(Rows taken, Read(schema::kDatasetVersionTakenSql, Params().Add(v.dataset).Add(v.version).Add(v.digest)));
  auto clash = [&](const std::string& digest) {
    return AlreadyExists("dataset " + v.dataset + " has version " + v.version + " or these contents (" + digest +
                         ") already");
  };
  if (taken.size() > 0) return clash(Row(taken, 0).Text(0));
  auto inserted = Write(rows::kInsertDatasetVersionSql.c_str(),
                        ParamsFrom(rows::DatasetVersionValues<Params>, v, manifest));
  if (inserted.status().code() == Code::kAlreadyExists) return clash(v.digest);
  return inserted.status();
}

Status PgWriteTx::PutDatasetReplica(const DatasetReplica& d) {
  return Write(rows::kPutDatasetReplicaSql.c_str(), ParamsFrom(rows::DatasetReplicaValues<Params>, d)).status();
}

Result<bool> PgWriteTx::AdvanceReplicaCharge(const std::string& digest, const std::string& location, Timestamp from,
                                            Timestamp to) {
  ASSIGN_OR_RETURN(Rows r, Write(schema::kAdvanceReplicaChargeSql,
                                 Params().Add(ToUnixMicros(to)).Add(digest).Add(location).Add(ToUnixMicros(from))));
  return r.size() > 0;
}

Status PgWriteTx::InsertDataCharge(const DataCharge& c) {
  return Write(rows::kInsertDataChargeSql.c_str(), ParamsFrom(rows::DataChargeValues<Params>, c)).status();
}

Result<std::optional<BreakglassRecord>> PgWriteTx::GetBreakglass(const std::string& id) {
  static const std::string sql =
      std::string("SELECT ") + rows::kBreakglassColumns + " FROM breakglass WHERE id = $1 FOR UPDATE";
  ASSIGN_OR_RETURN(Rows r, Read(sql.c_str(), Params().Add(id)));
  return ReadFirst(r, rows::ReadBreakglass<Row>);
}

Status PgWriteTx::Defer(const Into& into, const std::string& row, const Params& params) {
  ASSIGN_OR_RETURN(std::string text, conn_.Inline(row, params));
  held_.Row(into, std::move(text));
  ++unit_writes_;
  return Status::Ok();
}

Result<Rows> PgWriteTx::Read(const char* sql, const Params& params) {
  RETURN_IF_ERROR(Flush(false));
  return conn_.Exec(sql, params);
}

Result<Rows> PgWriteTx::Write(const char* sql, const Params& params) {
  RETURN_IF_ERROR(Flush(true));
  ASSIGN_OR_RETURN(Rows r, conn_.Exec(sql, params));
  ++unit_writes_;
  return r;
}

Status PgWriteTx::WriteOne(const char* sql, const Params& params, const std::string& what) {
  ASSIGN_OR_RETURN(Rows r, Write(sql, params));
  if (r.Affected() == 0) return NotFound(what + " not found");
  return Status::Ok();
}

Status PgWriteTx::Flush(bool unit_writes) {
  if (mode_ == BatchMode::kFast && !unit_savepoint_ && (unit_writes || held_.size() > unit_mark_)) {
    held_.StatementAt(unit_mark_, "SAVEPOINT " + SavepointName());
    unit_savepoint_ = true;
  }
  unit_mark_ = 0;
  if (held_.empty()) return Status::Ok();
  return conn_.ExecScript(held_.Take().c_str());
}

}  // namespace causeway::pg
