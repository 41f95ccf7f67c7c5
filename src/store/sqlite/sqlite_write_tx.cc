#include "store/sqlite/sqlite_write_tx.h"

#include "store/billing_sql.h"
#include "store/records_json.h"
#include "store/rows.h"
#include "store/sqlite/sqlite_queries.h"

namespace causeway::sqlite {
namespace {

// "INSERT INTO table (columns) VALUES (?1, ..., ?n)" and what follows.
std::string Insert(const char* table, const std::string& columns, int n, const char* rest = "") {
  return rows::InsertHead(table, columns) + rows::Placeholders('?', n) + rest;
}

}  // namespace

std::vector<int64_t> SqliteWriteTx::UnitSeqs() const {
  std::vector<int64_t> out;
  for (int64_t seq = unit_start_head_.seq + 1; seq <= head_.seq; ++seq) out.push_back(seq);
  return out;
}

Status SqliteWriteTx::Touched(Status st, const std::string& what) {
  RETURN_IF_ERROR(st);
  if (sqlite3_changes(conn_.db()) == 0) return NotFound(what + " not found");
  return Counted(Status::Ok());
}

Result<std::optional<JobRecord>> SqliteWriteTx::GetJob(const std::string& id) {
  return QueryOne(conn_, kSelectJobById, id, rows::ReadJob<Stmt>);
}

Status SqliteWriteTx::InsertJob(const JobRecord& j) {
  static const std::string sql = Insert("jobs", rows::kJobInsertColumns, rows::kJobInsertColumnCount);
  CW_STMT(s, conn_, sql.c_str());
  Binder b(s);
  rows::JobInsertValues(b, j);
  Status st = s.Exec();
  if (st.code() == Code::kAlreadyExists) return AlreadyExists("job " + j.id + " already exists");
  return Counted(std::move(st));
}

Status SqliteWriteTx::UpdateJobState(const std::string& id, JobState state, Timestamp at) {
  CW_STMT(s, conn_, "UPDATE jobs SET state = ?2, updated_at = ?3 WHERE id = ?1");
  s.Bind(1, id).Bind(2, JobStateName(state)).Bind(3, ToUnixMicros(at));
  return Touched(s.Exec(), "job " + id);
}

Status SqliteWriteTx::UpdateJobOwner(const std::string& id, const std::string& owner, Timestamp at) {
  CW_STMT(s, conn_, "UPDATE jobs SET owner = ?2, updated_at = ?3 WHERE id = ?1");
  s.Bind(1, id).Bind(2, owner).Bind(3, ToUnixMicros(at));
  return Touched(s.Exec(), "job " + id);
}

Status SqliteWriteTx::UpdateJobProgress(const JobRecord& j) {
  CW_STMT(s, conn_,
          "UPDATE jobs SET state = ?2, cluster = ?3, attempts = ?4, gpu_seconds = ?5, cost_micros = ?6, "
          "reason = ?7, updated_at = ?8 WHERE id = ?1");
  s.Bind(1, j.id).Bind(2, JobStateName(j.state)).Bind(3, j.cluster).Bind(4, j.attempts).Bind(5, j.gpu_seconds);
  s.Bind(6, j.cost_micros).Bind(7, j.reason).Bind(8, ToUnixMicros(j.updated_at));
  return Touched(s.Exec(), "job " + j.id);
}

Status SqliteWriteTx::PutAttempt(const Attempt& a) {
  static const std::string sql =
      "INSERT OR REPLACE" + Insert("attempts", rows::kAttemptInsertColumns, rows::kAttemptColumnCount).substr(6);
  CW_STMT(s, conn_, sql.c_str());
  Binder b(s);
  rows::AttemptValues(b, a);
  return Counted(s.Exec());
}

Status SqliteWriteTx::AddCheckpoint(Checkpoint& c) {
  {
    CW_STMT(q, conn_, "SELECT COALESCE(MAX(seq), 0) + 1 FROM checkpoints WHERE job_id = ?1");
    q.Bind(1, c.job_id);
    Status st;
    if (!q.Step(st)) return st.ok() ? Internal("no next checkpoint seq") : st;
    c.seq = q.Int(0);
  }
  static const std::string sql = Insert("checkpoints", rows::kCheckpointColumns, 7);
  CW_STMT(s, conn_, sql.c_str());
  Binder b(s);
  rows::CheckpointValues(b, c);
  return Counted(s.Exec());
}

Status SqliteWriteTx::AddJobFact(JobFact& f) {
  CW_STMT(s, conn_,
          "INSERT INTO job_facts (job_id, seq, attempt, name, value, recorded_by, recorded_at) "
          "SELECT ?1, COALESCE(MAX(seq), 0) + 1, ?2, ?3, ?4, ?5, ?6 FROM job_facts WHERE job_id = ?1 RETURNING seq");
  s.Bind(1, f.job_id).Bind(2, f.attempt).Bind(3, f.name).Bind(4, f.value).Bind(5, f.recorded_by);
  s.Bind(6, ToUnixMicros(f.recorded_at));
  Status st;
  if (!s.Step(st)) return st.ok() ? Internal("no job fact seq assigned") : st;
  f.seq = s.Int(0);
  return Status::Ok();
}

Status SqliteWriteTx::PutSealedRecord(const SealedRecord& r) {
  {
    CW_STMT(s, conn_, "INSERT INTO provenance_records (job_id, kid, sealed_at, envelope) VALUES (?1, ?2, ?3, ?4) "
                      "ON CONFLICT (job_id) DO NOTHING");
    s.Bind(1, r.job_id).Bind(2, r.kid).Bind(3, ToUnixMicros(r.sealed_at)).Bind(4, r.envelope);
    RETURN_IF_ERROR(s.Exec());
  }
  CW_STMT(s, conn_, "UPDATE jobs SET sealed = 1 WHERE id = ?1");
  s.Bind(1, r.job_id);
  return Counted(s.Exec());
}

Status SqliteWriteTx::AddJobEvent(const JobEvent& e) {
  static const std::string sql = Insert("job_events", rows::kJobEventInsertColumns, 4);
  CW_STMT(s, conn_, sql.c_str());
  Binder b(s);
  rows::JobEventValues(b, e);
  return Counted(s.Exec());
}

Result<std::optional<IdempotencyRecord>> SqliteWriteTx::ClaimIdempotency(const IdempotencyRecord& r) {
  {
    static const std::string sql = std::string("SELECT ") + rows::kIdempotencyColumns +
                                   " FROM idempotency_keys WHERE scope = ?1 AND key = ?2";
    CW_STMT(s, conn_, sql.c_str());
    s.Bind(1, r.scope).Bind(2, r.key);
    ASSIGN_OR_RETURN(auto stored, ReadFirst(s, rows::ReadIdempotency<Stmt>));
    if (stored) return stored;
  }
  static const std::string sql = Insert("idempotency_keys", rows::kIdempotencyColumns, 5);
  CW_STMT(s, conn_, sql.c_str());
  Binder b(s);
  rows::IdempotencyValues(b, r);
  RETURN_IF_ERROR(Counted(s.Exec()));
  return std::optional<IdempotencyRecord>();
}

Status SqliteWriteTx::RecordLaunch(const std::string& job_id, int attempt, const std::string& cluster, Timestamp at) {
  static const std::string sql = Insert("launches", rows::kLaunchColumns, 4,
                                        " ON CONFLICT(job_id) DO UPDATE SET attempt = excluded.attempt, "
                                        "cluster = excluded.cluster, at = excluded.at");
  CW_STMT(s, conn_, sql.c_str());
  s.Bind(1, job_id).Bind(2, attempt).Bind(3, cluster).Bind(4, ToUnixMicros(at));
  return Counted(s.Exec());
}

Result<std::optional<TokenRecord>> SqliteWriteTx::GetToken(const std::string& id) {
  return QueryOne(conn_, kSelectTokenById, id, rows::ReadToken<Stmt>);
}

Status SqliteWriteTx::InsertToken(const TokenRecord& t) {
  static const std::string sql = Insert("api_tokens", rows::kTokenColumns, rows::kTokenColumnCount);
  CW_STMT(s, conn_, sql.c_str());
  Binder b(s);
  rows::TokenValues(b, t);
  return Counted(s.Exec());
}

Status SqliteWriteTx::SetTokenCreator(const std::string& id, const std::string& creator) {
  CW_STMT(s, conn_, "UPDATE api_tokens SET creator = ?2 WHERE id = ?1");
  s.Bind(1, id).Bind(2, creator);
  return Touched(s.Exec(), "token " + id);
}

Status SqliteWriteTx::RevokeToken(const std::string& id, Timestamp at) {
  CW_STMT(s, conn_, "UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1");
  s.Bind(1, id).Bind(2, ToUnixMicros(at));
  return Touched(s.Exec(), "token " + id);
}

Status SqliteWriteTx::PutSigningKey(const SigningKeyRecord& k) {
  static const std::string sql = Insert("signing_keys", rows::kSigningKeyColumns, 5,
                                        " ON CONFLICT(kid) DO UPDATE SET superseded_at = excluded.superseded_at");
  CW_STMT(s, conn_, sql.c_str());
  Binder b(s);
  rows::SigningKeyValues(b, k);
  return Counted(s.Exec());
}

Status SqliteWriteTx::AppendAudit(AuditEvent& e) {
  e.seq = head_.seq + 1;
  e.prev_hash = head_.hash;
  e.hash = audit::ComputeHash(e);
  static const std::string sql = Insert("audit_events", rows::kAuditColumns, rows::kAuditColumnCount);
  CW_STMT(s, conn_, sql.c_str());
  Binder b(s);
  rows::AuditValues(b, e);
  // Fail closed: the unit, and the change it describes, is refused; a
  // client may retry once the audit trail can be written again.
  if (Status st = s.Exec(); !st.ok()) {
    return Unavailable("refused: the change's audit event could not be written (" + st.message() + ")");
  }
  head_ = audit::ChainHead{e.seq, e.hash};
  ++unit_audits_;
  return Status::Ok();
}

Status SqliteWriteTx::AppendChange(const Change& c) {
  if (unit_audits_ == 0) return FailedPrecondition("a change is recorded after the audit event that describes it");
  Change numbered = c;  // bound by reference: lives past the statement's run
  numbered.seq = head_.seq;
  static const std::string sql = Insert("changes", rows::kChangeColumns, rows::kChangeColumnCount);
  CW_STMT(s, conn_, sql.c_str());
  Binder b(s);
  rows::ChangeValues(b, numbered);
  return Counted(s.Exec());
}

Status SqliteWriteTx::PruneChanges(int64_t through_seq, Timestamp before) {
  // Bookkeeping of the feed, not a change of state (each change is a copy
  // of what its audit event records): no audit event is asked for.
  CW_STMT(s, conn_, "DELETE FROM changes WHERE seq <= ?1 AND at < ?2");
  s.Bind(1, through_seq).Bind(2, ToUnixMicros(before));
  return s.Exec();
}

Result<bool> SqliteWriteTx::InsertImportedAudit(ImportedAuditEvent& e) {
  static const std::string sql =
      Insert("imported_audit", rows::kImportedAuditInsertColumns, rows::kImportedAuditInsertColumnCount,
             " ON CONFLICT (provider, source, source_id) DO NOTHING");
  CW_STMT(s, conn_, sql.c_str());
  Binder b(s);
  rows::ImportedAuditValues(b, e);
  RETURN_IF_ERROR(s.Exec());
  if (sqlite3_changes(conn_.db()) == 0) return false;
  e.id = sqlite3_last_insert_rowid(conn_.db());
  RETURN_IF_ERROR(Counted(Status::Ok()));
  return true;
}

Result<std::optional<std::string>> SqliteWriteTx::ImportedAuditText(const std::string& provider,
                                                                    const std::string& source,
                                                                    const std::string& source_id) {
  CW_STMT(q, conn_, "SELECT event FROM imported_audit WHERE provider = ?1 AND source = ?2 AND source_id = ?3");
  q.Bind(1, provider).Bind(2, source).Bind(3, source_id);
  Status st;
  if (q.Step(st)) return std::optional<std::string>(q.Text(0));
  RETURN_IF_ERROR(st);
  return std::optional<std::string>();
}

Result<std::vector<std::string>> SqliteWriteTx::ImportedAuditOn(const std::string& provider, const std::string& source,
                                                                const std::string& resource, int64_t through_ms,
                                                                int limit) {
  CW_STMT(q, conn_,
          "SELECT event FROM imported_audit WHERE provider = ?1 AND source = ?2 AND resource = ?3 AND time_ms <= ?4 "
          "ORDER BY time_ms DESC, id DESC LIMIT ?5");
  q.Bind(1, provider).Bind(2, source).Bind(3, resource).Bind(4, through_ms).Bind(5, static_cast<int64_t>(limit));
  std::vector<std::string> out;
  Status st;
  while (q.Step(st)) out.push_back(q.Text(0));
  RETURN_IF_ERROR(st);
  return out;
}

Status SqliteWriteTx::InsertBillingImport(const BillingImport& b, const std::vector<BillingRollup>& rollups) {
  {
    static const std::string sql =
        Insert("billing_imports", rows::kBillingImportColumns, rows::kBillingImportColumnCount);
    CW_STMT(s, conn_, sql.c_str());
    Binder values(s);
    rows::BillingImportValues(values, b);
    if (Status st = s.Exec(); !st.ok()) {
      if (st.code() == Code::kAlreadyExists) return AlreadyExists("this file was imported before for " + b.provider);
      return st;
    }
  }
  // Many rows per statement: a bill has hundreds of thousands of rollups.
  constexpr size_t kRowsPerInsert = 32;
  constexpr int kColumns = rows::kRollupInsertColumnCount;
  auto insert_sql = [](size_t n) {
    std::string q = std::string("INSERT INTO billing_rollups (import_id, ") + schema::kBillingRollupColumns +
                    ") VALUES ";
    for (size_t r = 0; r < n; ++r) {
      q += r == 0 ? "" : ", ";
      q += rows::Placeholders('?', kColumns, static_cast<int>(r) * kColumns + 1);
    }
    return q;
  };
  static const std::string full_sql = insert_sql(kRowsPerInsert);
  auto bind = [&](Stmt& s, size_t from, size_t to) -> Status {
    Binder values(s);
    for (size_t k = from; k < to; ++k) rows::RollupValues(values, b, rollups[k]);
    return s.Exec();
  };
  size_t from = 0;
  {
    CW_STMT(s, conn_, full_sql.c_str());
    for (; from + kRowsPerInsert <= rollups.size(); from += kRowsPerInsert) {
      RETURN_IF_ERROR(bind(s, from, from + kRowsPerInsert));
      sqlite3_reset(s_raw);
    }
  }
  if (from < rollups.size()) {
    ASSIGN_OR_RETURN(sqlite3_stmt * raw, conn_.PrepareOnce(insert_sql(rollups.size() - from)));
    Stmt s(raw, true);
    RETURN_IF_ERROR(bind(s, from, rollups.size()));
  }
  return Counted(Status::Ok());
}

Result<std::optional<DirectoryEntry>> SqliteWriteTx::GetDirectoryEntry(const std::string& kind,
                                                                        const std::string& id) {
  return FindDirectoryEntryIn(conn_, kind, id);
}

Status SqliteWriteTx::PutDirectoryEntry(const DirectoryEntry& d) {
  static const std::string sql =
      Insert("directory", (std::string(rows::kDirectoryColumns) + ", name_key").c_str(),
             rows::kDirectoryInsertColumnCount,
             " ON CONFLICT(kind, id) DO UPDATE SET name = excluded.name, name_key = excluded.name_key, "
             "external_id = excluded.external_id, active = excluded.active, resource = excluded.resource, "
             "version = excluded.version, updated_at = excluded.updated_at");
  CW_STMT(s, conn_, sql.c_str());
  Binder b(s);
  rows::DirectoryValues(b, d);
  Status st = s.Exec();
  if (st.code() == Code::kAlreadyExists) {
    return AlreadyExists("another " + d.kind + " is already named \"" + d.name + "\"");
  }
  RETURN_IF_ERROR(st);
  if (d.kind == "Group") RETURN_IF_ERROR(PutMembers(conn_, d.id, GroupMemberIds(d)));
  return Counted(Status::Ok());
}

Status SqliteWriteTx::DeleteDirectoryEntry(const std::string& kind, const std::string& id) {
  CW_STMT(s, conn_, "DELETE FROM directory WHERE kind = ?1 AND id = ?2");
  s.Bind(1, kind).Bind(2, id);
  RETURN_IF_ERROR(Touched(s.Exec(), kind + " " + id));
  if (kind == "Group") RETURN_IF_ERROR(PutMembers(conn_, id, {}));
  return Status::Ok();
}

Status SqliteWriteTx::PutBreakglass(const BreakglassRecord& g) {
  static const std::string sql =
      "INSERT OR REPLACE" + Insert("breakglass", rows::kBreakglassColumns, rows::kBreakglassColumnCount).substr(6);
  CW_STMT(s, conn_, sql.c_str());
  Binder b(s);
  rows::BreakglassValues(b, g);
  return Counted(s.Exec());
}

Result<std::optional<BreakglassRecord>> SqliteWriteTx::GetBreakglass(const std::string& id) {
  return QueryOne(conn_, kSelectBreakglassById, id, rows::ReadBreakglass<Stmt>);
}

Status SqliteWriteTx::InsertDatasetVersion(const DatasetVersion& v, const std::string& manifest) {
  {
    CW_STMT(q, conn_, schema::kDatasetVersionTakenSql);
    q.Bind(1, v.dataset).Bind(2, v.version).Bind(3, v.digest);
    Status st;
    if (q.Step(st)) {
      return AlreadyExists("dataset " + v.dataset + " has version " + v.version + " or these contents (" + q.Text(0) +
                           ") already");
    }
    RETURN_IF_ERROR(st);
  }
  CW_STMT(s, conn_, rows::kInsertDatasetVersionSql.c_str());
  Binder b(s);
  rows::DatasetVersionValues(b, v, manifest);
  return Counted(s.Exec());
}

Status SqliteWriteTx::PutDatasetReplica(const DatasetReplica& d) {
  CW_STMT(s, conn_, rows::kPutDatasetReplicaSql.c_str());
  Binder b(s);
  rows::DatasetReplicaValues(b, d);
  return Counted(s.Exec());
}

Result<bool> SqliteWriteTx::AdvanceReplicaCharge(const std::string& digest, const std::string& location,
                                                Timestamp from, Timestamp to) {
  CW_STMT(s, conn_, schema::kAdvanceReplicaChargeSql);
  s.Bind(1, ToUnixMicros(to)).Bind(2, digest).Bind(3, location).Bind(4, ToUnixMicros(from));
  Status st;
  bool moved = s.Step(st);
  RETURN_IF_ERROR(st);
  if (moved) ++unit_writes_;
  return moved;
}

Status SqliteWriteTx::InsertDataCharge(const DataCharge& c) {
  CW_STMT(s, conn_, rows::kInsertDataChargeSql.c_str());
  Binder b(s);
  rows::DataChargeValues(b, c);
  return Counted(s.Exec());
}

Status SqliteWriteTx::CheckLease(const std::string& name, const std::string& holder, int64_t epoch) {
  // The batch holds SQLite's write lock, so nobody can take the lease
  // before it commits.
  CW_STMT(s, conn_, "SELECT holder, epoch FROM leases WHERE name = ?1");
  s.Bind(1, name);
  Status st;
  if (!s.Step(st)) {
    RETURN_IF_ERROR(st);
    return FailedPrecondition("nobody holds the " + name + " lease");
  }
  if (s.Text(0) != holder || s.Int(1) != epoch) {
    return FailedPrecondition("the " + name + " lease moved to " + s.Text(0) + " (epoch " + std::to_string(s.Int(1)) +
                              "); epoch " + std::to_string(epoch) + " is stale");
  }
  return Status::Ok();
}

}  // namespace causeway::sqlite
