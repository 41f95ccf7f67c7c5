// SQLite implementation of Store: one writer connection (writes are
// serialized and group-committed by WriteBatch) and a pool of reader
// connections, which WAL lets run beside the writer.
#include <algorithm>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "causeway/mutex.h"
#include "causeway/store.h"
#include "store/audit_chain.h"
#include "store/billing_sql.h"
#include "store/records_json.h"
#include "store/schema.h"
#include "store/sqlite/sqlite_conn.h"

namespace causeway {
namespace {

using sqlite::Conn;
using sqlite::Stmt;

#define CW_STMT(var, conn, sql)                                \
  ASSIGN_OR_RETURN(sqlite3_stmt* var##_raw, (conn).Prepare(sql)); \
  Stmt var(var##_raw)

using schema::kMigrations;

static_assert(std::size(kMigrations) == kLatestSchemaVersion);

constexpr const char* kJobColumns =
    "id, name, team, owner, state, priority, spec_yaml, spec_json, submitted_by, created_at, updated_at, "
    "cluster, attempts, gpu_seconds, cost_micros, reason";

JobRecord ReadJob(const Stmt& s) {
  JobRecord j;
  j.id = s.Text(0);
  j.name = s.Text(1);
  j.team = s.Text(2);
  j.owner = s.Text(3);
  j.state = ParseJobState(s.Text(4)).value_or(JobState::kPending);
  j.priority = static_cast<int>(s.Int(5));
  j.spec_yaml = s.Text(6);
  j.spec_json = s.Text(7);
  j.submitted_by = s.Text(8);
  j.created_at = FromUnixMicros(s.Int(9));
  j.updated_at = FromUnixMicros(s.Int(10));
  j.cluster = s.Text(11);
  j.attempts = static_cast<int>(s.Int(12));
  j.gpu_seconds = s.Int(13);
  j.cost_micros = s.Int(14);
  j.reason = s.Text(15);
  return j;
}

BillingImport ReadBillingImport(const Stmt& s) {
  return BillingImport{s.Text(0), s.Text(1), s.Text(2), s.Text(3), s.Text(4),  s.Int(5),
                       s.Int(6),  s.Int(7),  s.Text(8), s.Text(9), s.Text(10), FromUnixMicros(s.Int(11))};
}

using schema::kAttemptColumnCount;
using schema::kAttemptColumns;

Attempt ReadAttempt(const Stmt& s) {
  Attempt a;
  a.job_id = s.Text(0);
  a.number = static_cast<int>(s.Int(1));
  a.cluster = s.Text(2);
  a.state = s.Text(3);
  a.started_at = FromUnixMicros(s.Int(4));
  if (auto v = s.OptInt(5)) a.ended_at = FromUnixMicros(*v);
  if (auto v = s.OptInt(6)) a.exit_code = static_cast<int>(*v);
  a.failure_class = s.Text(7);
  a.pool = s.Text(8);
  a.flavor = s.Text(9);
  a.gpus = s.Int(10);
  a.reserved = s.Int(11) != 0;
  a.borrowed = s.Int(12);
  a.price_micros = s.Int(13);
  a.gpu_seconds = s.Int(14);
  a.cost_micros = s.Int(15);
  a.placement = s.Text(16);
  a.backend_id = s.Text(17);
  a.resumed_from = s.Text(18);
  a.observed_gpu_seconds = s.Int(19);
  a.work_gpu_seconds = s.Int(20);
  return a;
}

TokenRecord ReadToken(const Stmt& s) {
  TokenRecord t;
  t.id = s.Text(0);
  t.name = s.Text(1);
  t.hash = s.Text(2);
  auto scopes = nlohmann::json::parse(s.Text(3), nullptr, false);
  if (scopes.is_array()) {
    for (const auto& v : scopes) {
      if (v.is_string()) t.scopes.push_back(v.get<std::string>());
    }
  }
  t.created_by = s.Text(4);
  t.created_at = FromUnixMicros(s.Int(5));
  if (auto v = s.OptInt(6)) t.expires_at = FromUnixMicros(*v);
  if (auto v = s.OptInt(7)) t.revoked_at = FromUnixMicros(*v);
  t.user = s.Text(8);
  t.creator = s.Text(9);
  t.grant = s.Text(10);
  return t;
}
constexpr const char* kTokenColumns =
    "id, name, hash, scopes, created_by, created_at, expires_at, revoked_at, user_name, creator, grant_id";

DirectoryEntry ReadDirectoryEntry(const Stmt& s) {
  DirectoryEntry d;
  d.kind = s.Text(0);
  d.id = s.Text(1);
  d.name = s.Text(2);
  d.external_id = s.Text(3);
  d.active = s.Int(4) != 0;
  d.resource = s.Text(5);
  d.version = s.Int(6);
  d.created_at = FromUnixMicros(s.Int(7));
  d.updated_at = FromUnixMicros(s.Int(8));
  return d;
}
BreakglassRecord ReadBreakglass(const Stmt& s) {
  BreakglassRecord b;
  b.id = s.Text(0);
  b.user = s.Text(1);
  b.role = s.Text(2);
  b.team = s.Text(3);
  b.reason = s.Text(4);
  b.requested_at = FromUnixMicros(s.Int(5));
  b.duration = Micros(s.Int(6));
  b.approved_by = s.Text(7);
  if (auto v = s.OptInt(8)) b.approved_at = FromUnixMicros(*v);
  if (auto v = s.OptInt(9)) b.expires_at = FromUnixMicros(*v);
  if (auto v = s.OptInt(10)) b.revoked_at = FromUnixMicros(*v);
  return b;
}

ImportedAuditEvent ReadImportedAudit(const Stmt& s) {
  ImportedAuditEvent e;
  e.id = s.Int(0);
  e.provider = s.Text(1);
  e.source = s.Text(2);
  e.source_id = s.Text(3);
  e.time_ms = s.Int(4);
  e.class_uid = static_cast<int>(s.Int(5));
  e.activity = s.Text(6);
  e.operation = s.Text(7);
  e.actor = s.Text(8);
  e.subject = s.Text(9);
  e.resource = s.Text(10);
  e.status_id = static_cast<int>(s.Int(11));
  e.event = s.Text(12);
  e.imported_at = FromUnixMicros(s.Int(13));
  return e;
}

// Runs a query built at run time (its shape varies, so it is not cached).
Result<std::vector<ImportedAuditEvent>> ReadImported(Conn& conn, const schema::SqlWithParams& q) {
  ASSIGN_OR_RETURN(sqlite3_stmt * raw, conn.PrepareOnce(q.sql));
  Stmt s(raw, /*owned=*/true);
  for (size_t i = 0; i < q.params.size(); ++i) {
    if (const auto* n = std::get_if<int64_t>(&q.params[i])) {
      s.Bind(static_cast<int>(i + 1), *n);
    } else {
      s.Bind(static_cast<int>(i + 1), std::get<std::string>(q.params[i]));
    }
  }
  std::vector<ImportedAuditEvent> out;
  Status st;
  while (s.Step(st)) out.push_back(ReadImportedAudit(s));
  RETURN_IF_ERROR(st);
  return out;
}

const std::string kSelectDirectoryEntry =
    std::string("SELECT ") + schema::kDirectoryColumns + " FROM directory WHERE kind = ?1 AND id = ?2";

AuditEvent ReadAudit(const Stmt& s) {
  AuditEvent e;
  e.seq = s.Int(0);
  e.time = FromUnixMicros(s.Int(1));
  e.actor = s.Text(2);
  e.action = s.Text(3);
  e.resource = s.Text(4);
  e.details = StoredDetails(s.Text(5));
  e.prev_hash = s.Text(6);
  e.hash = s.Text(7);
  return e;
}

// Runs `sql` with ?1 bound to `key` and returns the first row as read by
// `read`, or nullopt when there is none.
template <typename T>
Result<std::optional<T>> QueryOne(Conn& conn, const char* sql, std::string_view key, T (*read)(const Stmt&)) {
  CW_STMT(s, conn, sql);
  s.Bind(1, key);
  Status st;
  if (s.Step(st)) return std::optional<T>(read(s));
  RETURN_IF_ERROR(st);
  return std::optional<T>();
}

// Makes a group's membership rows exactly `members`.
Status PutMembers(Conn& conn, const std::string& group_id, const std::vector<std::string>& members) {
  {
    CW_STMT(del, conn, schema::kDeleteMembersSql);
    del.Bind(1, group_id);
    RETURN_IF_ERROR(del.Exec());
  }
  if (members.empty()) return Status::Ok();
  CW_STMT(ins, conn, schema::kInsertMembersSqlite);
  ins.Bind(1, group_id).Bind(2, nlohmann::json(members).dump());
  return ins.Exec();
}

// The membership rows of every group stored before directory_members existed.
Status FillMembers(Conn& conn) {
  std::vector<DirectoryEntry> groups;
  {
    CW_STMT(s, conn, schema::kGroupsStoredSql);
    Status st;
    while (s.Step(st)) {
      DirectoryEntry g;
      g.kind = "Group";
      g.id = s.Text(0);
      g.resource = s.Text(1);
      groups.push_back(std::move(g));
    }
    RETURN_IF_ERROR(st);
  }
  for (const DirectoryEntry& g : groups) RETURN_IF_ERROR(PutMembers(conn, g.id, GroupMemberIds(g)));
  return Status::Ok();
}

Result<std::optional<DirectoryEntry>> FindDirectoryEntryIn(Conn& conn, const std::string& kind,
                                                           const std::string& id) {
  CW_STMT(s, conn, kSelectDirectoryEntry.c_str());
  s.Bind(1, kind).Bind(2, id);
  Status st;
  if (s.Step(st)) return std::optional<DirectoryEntry>(ReadDirectoryEntry(s));
  RETURN_IF_ERROR(st);
  return std::optional<DirectoryEntry>();
}

const std::string kSelectJobById = std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?1";
const std::string kSelectTokenById = std::string("SELECT ") + kTokenColumns + " FROM api_tokens WHERE id = ?1";
const std::string kSelectTokenByHash = std::string("SELECT ") + kTokenColumns + " FROM api_tokens WHERE hash = ?1";

// The WriteTx handed to one unit of work inside a batch.
class SqliteWriteTx final : public WriteTx {
 public:
  SqliteWriteTx(Conn& conn, audit::ChainHead head) : conn_(conn), head_(std::move(head)) {}

  // Bookkeeping for the fail-closed rule, reset per unit.
  void BeginUnit() {
    unit_writes_ = 0;
    unit_audits_ = 0;
    unit_start_head_ = head_;
  }
  void UndoUnit() { head_ = unit_start_head_; }
  // The sequence numbers this unit's audit events took (one run of them).
  std::vector<int64_t> UnitSeqs() const {
    std::vector<int64_t> out;
    for (int64_t seq = unit_start_head_.seq + 1; seq <= head_.seq; ++seq) out.push_back(seq);
    return out;
  }
  bool UnitChangedStateWithoutAudit() const { return unit_writes_ > 0 && unit_audits_ == 0; }
  const audit::ChainHead& head() const { return head_; }

  Result<std::optional<JobRecord>> GetJob(const std::string& id) override {
    return QueryOne(conn_, kSelectJobById.c_str(), id, &ReadJob);
  }

  Status InsertJob(const JobRecord& j) override {
    CW_STMT(s, conn_,
            "INSERT INTO jobs (id, name, team, owner, state, priority, spec_yaml, spec_json, "
            "submitted_by, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    s.Bind(1, j.id).Bind(2, j.name).Bind(3, j.team).Bind(4, j.owner).Bind(5, JobStateName(j.state));
    s.Bind(6, j.priority).Bind(7, j.spec_yaml).Bind(8, j.spec_json).Bind(9, j.submitted_by);
    s.Bind(10, ToUnixMicros(j.created_at)).Bind(11, ToUnixMicros(j.updated_at));
    Status st = s.Exec();
    if (st.code() == Code::kAlreadyExists) return AlreadyExists("job " + j.id + " already exists");
    return Counted(std::move(st));
  }

  Status UpdateJobState(const std::string& id, JobState state, Timestamp at) override {
    CW_STMT(s, conn_, "UPDATE jobs SET state = ?2, updated_at = ?3 WHERE id = ?1");
    s.Bind(1, id).Bind(2, JobStateName(state)).Bind(3, ToUnixMicros(at));
    RETURN_IF_ERROR(s.Exec());
    if (sqlite3_changes(conn_.db()) == 0) return NotFound("job " + id + " not found");
    return Counted(Status::Ok());
  }

  Status UpdateJobOwner(const std::string& id, const std::string& owner, Timestamp at) override {
    CW_STMT(s, conn_, "UPDATE jobs SET owner = ?2, updated_at = ?3 WHERE id = ?1");
    s.Bind(1, id).Bind(2, owner).Bind(3, ToUnixMicros(at));
    RETURN_IF_ERROR(s.Exec());
    if (sqlite3_changes(conn_.db()) == 0) return NotFound("job " + id + " not found");
    return Counted(Status::Ok());
  }

  Status UpdateJobProgress(const JobRecord& j) override {
    CW_STMT(s, conn_,
            "UPDATE jobs SET state = ?2, cluster = ?3, attempts = ?4, gpu_seconds = ?5, cost_micros = ?6, "
            "reason = ?7, updated_at = ?8 WHERE id = ?1");
    s.Bind(1, j.id).Bind(2, JobStateName(j.state)).Bind(3, j.cluster).Bind(4, j.attempts).Bind(5, j.gpu_seconds);
    s.Bind(6, j.cost_micros).Bind(7, j.reason).Bind(8, ToUnixMicros(j.updated_at));
    RETURN_IF_ERROR(s.Exec());
    if (sqlite3_changes(conn_.db()) == 0) return NotFound("job " + j.id + " not found");
    return Counted(Status::Ok());
  }

  Status PutAttempt(const Attempt& a) override {
    CW_STMT(s, conn_,
            "INSERT OR REPLACE INTO attempts (job_id, number, cluster, state, started_at, ended_at, exit_code, "
            "failure_class, pool, flavor, gpus, reserved, borrowed, price_micros, gpu_seconds, cost_micros, placement, "
            "backend_id, resumed_from, observed_gpu_seconds, work_gpu_seconds) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21)");
    s.Bind(1, a.job_id).Bind(2, a.number).Bind(3, a.cluster).Bind(4, a.state).Bind(5, ToUnixMicros(a.started_at));
    s.Bind(6, a.ended_at ? std::optional<int64_t>(ToUnixMicros(*a.ended_at)) : std::nullopt);
    s.Bind(7, a.exit_code ? std::optional<int64_t>(*a.exit_code) : std::nullopt);
    s.Bind(8, a.failure_class).Bind(9, a.pool).Bind(10, a.flavor).Bind(11, a.gpus).Bind(12, a.reserved ? 1 : 0);
    s.Bind(13, a.borrowed).Bind(14, a.price_micros).Bind(15, a.gpu_seconds).Bind(16, a.cost_micros).Bind(17, a.placement);
    s.Bind(18, a.backend_id).Bind(19, a.resumed_from).Bind(20, a.observed_gpu_seconds).Bind(21, a.work_gpu_seconds);
    return Counted(s.Exec());
  }

  Status AddCheckpoint(Checkpoint& c) override {
    {
      CW_STMT(q, conn_, "SELECT COALESCE(MAX(seq), 0) + 1 FROM checkpoints WHERE job_id = ?1");
      q.Bind(1, c.job_id);
      Status st;
      if (!q.Step(st)) return st.ok() ? Internal("no next checkpoint seq") : st;
      c.seq = q.Int(0);
    }
    CW_STMT(s, conn_,
            "INSERT INTO checkpoints (job_id, seq, attempt, path, step, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
    s.Bind(1, c.job_id).Bind(2, c.seq).Bind(3, c.attempt).Bind(4, c.path).Bind(5, c.step).Bind(6, ToUnixMicros(c.created_at));
    return Counted(s.Exec());
  }

  Status AddJobEvent(const JobEvent& e) override {
    CW_STMT(s, conn_, "INSERT INTO job_events (job_id, time, type, message) VALUES (?1, ?2, ?3, ?4)");
    s.Bind(1, e.job_id).Bind(2, ToUnixMicros(e.time)).Bind(3, e.type).Bind(4, e.message);
    return Counted(s.Exec());
  }

  Result<std::optional<IdempotencyRecord>> ClaimIdempotency(const IdempotencyRecord& r) override {
    {
      CW_STMT(s, conn_,
              "SELECT scope, key, request_hash, job_id, created_at FROM idempotency_keys "
              "WHERE scope = ?1 AND key = ?2");
      s.Bind(1, r.scope).Bind(2, r.key);
      Status st;
      if (s.Step(st)) {
        return std::optional<IdempotencyRecord>(
            IdempotencyRecord{s.Text(0), s.Text(1), s.Text(2), s.Text(3), FromUnixMicros(s.Int(4))});
      }
      RETURN_IF_ERROR(st);
    }
    CW_STMT(s, conn_,
            "INSERT INTO idempotency_keys (scope, key, request_hash, job_id, created_at) "
            "VALUES (?1, ?2, ?3, ?4, ?5)");
    s.Bind(1, r.scope).Bind(2, r.key).Bind(3, r.request_hash).Bind(4, r.job_id);
    s.Bind(5, ToUnixMicros(r.created_at));
    RETURN_IF_ERROR(Counted(s.Exec()));
    return std::optional<IdempotencyRecord>();
  }

  Result<std::optional<TokenRecord>> GetToken(const std::string& id) override {
    return QueryOne(conn_, kSelectTokenById.c_str(), id, &ReadToken);
  }

  Status InsertToken(const TokenRecord& t) override {
    CW_STMT(s, conn_,
            "INSERT INTO api_tokens (id, name, hash, scopes, created_by, created_at, expires_at, revoked_at, user_name, "
            "creator, grant_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)");
    s.Bind(1, t.id).Bind(2, t.name).Bind(3, t.hash).Bind(4, nlohmann::json(t.scopes).dump());
    s.Bind(5, t.created_by).Bind(6, ToUnixMicros(t.created_at));
    s.Bind(7, t.expires_at ? std::optional<int64_t>(ToUnixMicros(*t.expires_at)) : std::nullopt);
    s.Bind(8, t.revoked_at ? std::optional<int64_t>(ToUnixMicros(*t.revoked_at)) : std::nullopt);
    s.Bind(9, t.user).Bind(10, t.creator).Bind(11, t.grant);
    return Counted(s.Exec());
  }

  Status SetTokenCreator(const std::string& id, const std::string& creator) override {
    CW_STMT(s, conn_, "UPDATE api_tokens SET creator = ?2 WHERE id = ?1");
    s.Bind(1, id).Bind(2, creator);
    RETURN_IF_ERROR(s.Exec());
    if (sqlite3_changes(conn_.db()) == 0) return NotFound("token " + id + " not found");
    return Counted(Status::Ok());
  }

  Status RevokeToken(const std::string& id, Timestamp at) override {
    CW_STMT(s, conn_, "UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, ?2) WHERE id = ?1");
    s.Bind(1, id).Bind(2, ToUnixMicros(at));
    RETURN_IF_ERROR(s.Exec());
    if (sqlite3_changes(conn_.db()) == 0) return NotFound("token " + id + " not found");
    return Counted(Status::Ok());
  }

  Status AppendAudit(AuditEvent& e) override {
    e.seq = head_.seq + 1;
    e.prev_hash = head_.hash;
    std::string details = audit::CanonicalDetails(e.details);
    e.hash = audit::ComputeHash(e);
    CW_STMT(s, conn_,
            "INSERT INTO audit_events (seq, time, actor, action, resource, details, prev_hash, hash) "
            "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)");
    s.Bind(1, e.seq).Bind(2, ToUnixMicros(e.time)).Bind(3, e.actor).Bind(4, e.action);
    s.Bind(5, e.resource).Bind(6, details).Bind(7, e.prev_hash).Bind(8, e.hash);
    // Fail closed: the unit, and the change it describes, is refused; a
    // client may retry once the audit trail can be written again.
    if (Status st = s.Exec(); !st.ok()) {
      return Unavailable("refused: the change's audit event could not be written (" + st.message() + ")");
    }
    head_ = audit::ChainHead{e.seq, e.hash};
    ++unit_audits_;
    return Status::Ok();
  }

  Status AppendChange(const Change& c) override {
    if (unit_audits_ == 0) return FailedPrecondition("a change is recorded after the audit event that describes it");
    CW_STMT(s, conn_, "INSERT INTO changes (seq, kind, job_id, path, at) VALUES (?1, ?2, ?3, ?4, ?5)");
    s.Bind(1, head_.seq).Bind(2, std::string(ChangeKindName(c.kind))).Bind(3, c.job_id).Bind(4, c.path);
    s.Bind(5, ToUnixMicros(c.at));
    return Counted(s.Exec());
  }

  Status PruneChanges(int64_t through_seq, Timestamp before) override {
    // Bookkeeping of the feed, not a change of state (each change is a copy
    // of what its audit event records): no audit event is asked for.
    CW_STMT(s, conn_, "DELETE FROM changes WHERE seq <= ?1 AND at < ?2");
    s.Bind(1, through_seq).Bind(2, ToUnixMicros(before));
    return s.Exec();
  }

  Status RecordLaunch(const std::string& job_id, int attempt, const std::string& cluster, Timestamp at) override {
    CW_STMT(s, conn_,
            "INSERT INTO launches (job_id, attempt, cluster, at) VALUES (?1, ?2, ?3, ?4) ON CONFLICT(job_id) DO UPDATE "
            "SET attempt = excluded.attempt, cluster = excluded.cluster, at = excluded.at");
    s.Bind(1, job_id).Bind(2, attempt).Bind(3, cluster).Bind(4, ToUnixMicros(at));
    return Counted(s.Exec());
  }

  Status InsertBillingImport(const BillingImport& b, const std::vector<BillingRollup>& rollups) override {
    {
      static const std::string sql = std::string("INSERT INTO billing_imports (") + schema::kBillingImportColumns +
                                     ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";
      CW_STMT(s, conn_, sql.c_str());
      s.Bind(1, b.id).Bind(2, b.provider).Bind(3, b.file).Bind(4, b.digest).Bind(5, b.focus_version).Bind(6, b.rows);
      s.Bind(7, b.skipped).Bind(8, b.issues).Bind(9, b.first_day).Bind(10, b.last_day).Bind(11, b.imported_by);
      s.Bind(12, ToUnixMicros(b.imported_at));
      if (Status st = s.Exec(); !st.ok()) {
        if (st.code() == Code::kAlreadyExists) return AlreadyExists("this file was imported before for " + b.provider);
        return st;
      }
    }
    // Many rows per statement: a bill has hundreds of thousands of rollups.
    constexpr size_t kRowsPerInsert = 32;
    constexpr int kColumns = schema::kBillingRollupColumnCount + 1;
    auto insert_sql = [](size_t rows) {
      std::string q = std::string("INSERT INTO billing_rollups (import_id, ") + schema::kBillingRollupColumns +
                      ") VALUES ";
      for (size_t r = 0; r < rows; ++r) {
        q += r == 0 ? "(" : ", (";
        for (int c = 1; c <= kColumns; ++c) q += "?" + std::string(c < kColumns ? ", " : ")");
      }
      return q;
    };
    static const std::string full_sql = insert_sql(kRowsPerInsert);
    auto bind = [&](Stmt& s, size_t from, size_t to) -> Status {
      int i = 1;
      for (size_t k = from; k < to; ++k) {
        const BillingRollup& r = rollups[k];
        s.BindStatic(i, b.id).BindStatic(i + 1, b.provider);
        i += 2;
        for (const std::string* t : r.KeyFields()) s.BindStatic(i++, *t);
        s.Bind(i++, r.rows);
        for (Picos v : r.Amounts()) {
          auto [nanos, frac] = schema::SplitPicos(v);
          s.Bind(i, nanos).Bind(i + 1, frac);
          i += 2;
        }
      }
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

  Result<std::optional<DirectoryEntry>> GetDirectoryEntry(const std::string& kind, const std::string& id) override {
    return FindDirectoryEntryIn(conn_, kind, id);
  }

  Status PutDirectoryEntry(const DirectoryEntry& d) override {
    static const std::string sql = std::string("INSERT INTO directory (") + schema::kDirectoryColumns +
                                   ", name_key) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
                                   "ON CONFLICT(kind, id) DO UPDATE SET name = excluded.name, "
                                   "name_key = excluded.name_key, external_id = excluded.external_id, "
                                   "active = excluded.active, resource = excluded.resource, "
                                   "version = excluded.version, updated_at = excluded.updated_at";
    CW_STMT(s, conn_, sql.c_str());
    s.Bind(1, d.kind).Bind(2, d.id).Bind(3, d.name).Bind(4, d.external_id).Bind(5, int64_t{d.active ? 1 : 0});
    s.Bind(6, d.resource).Bind(7, d.version);
    s.Bind(8, ToUnixMicros(d.created_at)).Bind(9, ToUnixMicros(d.updated_at)).Bind(10, schema::DirectoryNameKey(d.name));
    Status st = s.Exec();
    if (st.code() == Code::kAlreadyExists) {
      return AlreadyExists("another " + d.kind + " is already named \"" + d.name + "\"");
    }
    RETURN_IF_ERROR(st);
    if (d.kind == "Group") RETURN_IF_ERROR(PutMembers(conn_, d.id, GroupMemberIds(d)));
    return Counted(Status::Ok());
  }

  Status DeleteDirectoryEntry(const std::string& kind, const std::string& id) override {
    CW_STMT(s, conn_, "DELETE FROM directory WHERE kind = ?1 AND id = ?2");
    s.Bind(1, kind).Bind(2, id);
    RETURN_IF_ERROR(s.Exec());
    if (sqlite3_changes(conn_.db()) == 0) return NotFound(kind + " " + id + " not found");
    if (kind == "Group") RETURN_IF_ERROR(PutMembers(conn_, id, {}));
    return Counted(Status::Ok());
  }

  Status PutSigningKey(const SigningKeyRecord& k) override {
    CW_STMT(s, conn_,
            "INSERT INTO signing_keys (kid, alg, private_pem, created_at, superseded_at) VALUES (?1, ?2, ?3, ?4, ?5) "
            "ON CONFLICT(kid) DO UPDATE SET superseded_at = excluded.superseded_at");
    s.Bind(1, k.kid).Bind(2, k.alg).Bind(3, k.private_pem).Bind(4, ToUnixMicros(k.created_at));
    s.Bind(5, k.superseded_at ? std::optional<int64_t>(ToUnixMicros(*k.superseded_at)) : std::nullopt);
    return Counted(s.Exec());
  }

  Status PutBreakglass(const BreakglassRecord& b) override {
    static const std::string sql = std::string("INSERT OR REPLACE INTO breakglass (") + schema::kBreakglassColumns +
                                   ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
    CW_STMT(s, conn_, sql.c_str());
    auto opt = [](const std::optional<Timestamp>& t) {
      return t ? std::optional<int64_t>(ToUnixMicros(*t)) : std::nullopt;
    };
    s.Bind(1, b.id).Bind(2, b.user).Bind(3, b.role).Bind(4, b.team).Bind(5, b.reason);
    s.Bind(6, ToUnixMicros(b.requested_at)).Bind(7, static_cast<int64_t>(b.duration.count())).Bind(8, b.approved_by);
    s.Bind(9, opt(b.approved_at)).Bind(10, opt(b.expires_at)).Bind(11, opt(b.revoked_at));
    return Counted(s.Exec());
  }

  Result<std::optional<BreakglassRecord>> GetBreakglass(const std::string& id) override {
    static const std::string sql = std::string("SELECT ") + schema::kBreakglassColumns + " FROM breakglass WHERE id = ?1";
    return QueryOne(conn_, sql.c_str(), id, &ReadBreakglass);
  }

  Result<bool> InsertImportedAudit(ImportedAuditEvent& e) override {
    CW_STMT(s, conn_,
            "INSERT INTO imported_audit (provider, source, source_id, time_ms, class_uid, activity, operation, actor, "
            "subject, resource, status_id, event, imported_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
            "?12, ?13) ON CONFLICT (provider, source, source_id) DO NOTHING");
    s.BindStatic(1, e.provider).BindStatic(2, e.source).BindStatic(3, e.source_id).Bind(4, e.time_ms);
    s.Bind(5, e.class_uid).BindStatic(6, e.activity).BindStatic(7, e.operation).BindStatic(8, e.actor);
    s.BindStatic(9, e.subject).BindStatic(10, e.resource).Bind(11, e.status_id).BindStatic(12, e.event);
    s.Bind(13, ToUnixMicros(e.imported_at));
    RETURN_IF_ERROR(s.Exec());
    if (sqlite3_changes(conn_.db()) == 0) return false;
    e.id = sqlite3_last_insert_rowid(conn_.db());
    RETURN_IF_ERROR(Counted(Status::Ok()));
    return true;
  }

  Status CheckLease(const std::string& name, const std::string& holder, int64_t epoch) override {
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

 private:
  // Notes a successful state change for the fail-closed rule.
  Status Counted(Status st) {
    if (st.ok()) ++unit_writes_;
    return st;
  }

  Conn& conn_;
  audit::ChainHead head_;
  audit::ChainHead unit_start_head_;
  int unit_writes_ = 0;
  int unit_audits_ = 0;
};

class SqliteStore final : public Store {
 public:
  SqliteStore(std::string path, bool read_only) : path_(std::move(path)), read_only_(read_only) {}

  Status Open() EXCLUDES(writer_mu_) {
    if (!read_only_) {
      MutexLock lock(writer_mu_);  // no other thread has the store yet
      ASSIGN_OR_RETURN(writer_, Conn::Open(path_, false));
      // WAL lets readers run beside the writer; FULL makes every commit
      // durable (it survives power loss, not only a crash of this process).
      RETURN_IF_ERROR(writer_->ExecScript(
          "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA foreign_keys=ON; PRAGMA cache_size=-65536;"));
      RETURN_IF_ERROR(Migrate());
    }
    // Checks the file is readable and has our schema.
    ASSIGN_OR_RETURN(auto reader, Reader());
    ASSIGN_OR_RETURN(auto head, ReadHead(*reader.conn));
    (void)head;
    return Status::Ok();
  }

  std::vector<Committed> CommitBatch(const std::vector<const WriteFn*>& work) override {
    std::vector<Committed> results(work.size());
    if (read_only_) {
      for (auto& r : results) r.status = FailedPrecondition("the database is open read-only");
      return results;
    }
    MutexLock lock(writer_mu_);
    Status begin = writer_->ExecScript("BEGIN IMMEDIATE");
    if (!begin.ok()) {
      for (auto& r : results) r.status = begin;
      return results;
    }
    // Read under the write lock, not cached: other processes may share the
    // file, and each batch must extend the chain from the committed head.
    auto head = ReadHead(*writer_);
    if (!head.ok()) {
      (void)writer_->ExecScript("ROLLBACK");
      for (auto& r : results) r.status = head.status();
      return results;
    }
    SqliteWriteTx tx(*writer_, *head);
    for (size_t i = 0; i < work.size(); ++i) {
      Status st = writer_->ExecScript("SAVEPOINT unit");
      if (st.ok()) {
        tx.BeginUnit();
        st = (*work[i])(tx);
        if (st.ok() && tx.UnitChangedStateWithoutAudit()) {
          st = Internal("refused a state change that wrote no audit event");
        }
        if (!st.ok()) {
          tx.UndoUnit();
          Status undo = writer_->ExecScript("ROLLBACK TO unit");
          if (!undo.ok()) st = undo;
        }
        Status release = writer_->ExecScript("RELEASE unit");
        if (st.ok() && !release.ok()) st = release;
      }
      if (st.ok()) results[i].audit_seqs = tx.UnitSeqs();
      results[i].status = std::move(st);
    }
    Status commit = tx.head().seq == head->seq ? Status::Ok() : WriteHead(tx.head());
    if (commit.ok()) commit = writer_->ExecScript("COMMIT");
    if (!commit.ok()) {
      (void)writer_->ExecScript("ROLLBACK");
      for (auto& r : results) {
        if (r.status.ok()) r.status = commit.WithPrefix("commit failed");
        r.audit_seqs.clear();
      }
    }
    return results;
  }

  Result<std::optional<JobRecord>> GetJob(const std::string& id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    return QueryOne(*r.conn, kSelectJobById.c_str(), id, &ReadJob);
  }

  // One by one: a read here is a lookup in a local file, not a round trip.
  Result<std::vector<JobRecord>> GetJobs(const std::vector<std::string>& ids) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    std::vector<JobRecord> out;
    for (const std::string& id : ids) {
      ASSIGN_OR_RETURN(auto job, QueryOne(*r.conn, kSelectJobById.c_str(), id, &ReadJob));
      if (job) out.push_back(std::move(*job));
    }
    return out;
  }

  Result<std::vector<JobRecord>> ListJobs(const JobFilter& f) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql = std::string("SELECT ") + kJobColumns +
                                   " FROM jobs WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR team = ?2)"
                                   " AND (?3 IS NULL OR owner = ?3) AND (?4 IS NULL OR id < ?4)"
                                   " ORDER BY id DESC LIMIT ?5";
    CW_STMT(s, *r.conn, sql.c_str());
    if (f.state) s.Bind(1, JobStateName(*f.state));
    if (!f.team.empty()) s.Bind(2, f.team);
    if (!f.owner.empty()) s.Bind(3, f.owner);
    if (!f.before_id.empty()) s.Bind(4, f.before_id);
    s.Bind(5, f.limit);
    std::vector<JobRecord> out;
    Status st;
    while (s.Step(st)) out.push_back(ReadJob(s));
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<std::vector<JobEvent>> ListJobEvents(const std::string& job_id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, "SELECT id, job_id, time, type, message FROM job_events WHERE job_id = ?1 ORDER BY id");
    s.Bind(1, job_id);
    std::vector<JobEvent> out;
    Status st;
    while (s.Step(st)) out.push_back(JobEvent{s.Int(0), s.Text(1), FromUnixMicros(s.Int(2)), s.Text(3), s.Text(4)});
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<std::vector<Attempt>> ListAttempts(const std::string& job_id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql =
        std::string("SELECT ") + kAttemptColumns + " FROM attempts a WHERE job_id = ?1 ORDER BY number";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, job_id);
    std::vector<Attempt> out;
    Status st;
    while (s.Step(st)) out.push_back(ReadAttempt(s));
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<std::vector<MeteredAttempt>> ListAttemptsBetween(Timestamp from, Timestamp to) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql = std::string("SELECT ") + kAttemptColumns +
                                   ", j.team, j.owner, j.state FROM attempts a JOIN jobs j ON j.id = a.job_id "
                                   "WHERE a.started_at < ?2 AND (a.ended_at IS NULL OR a.ended_at > ?1) "
                                   "ORDER BY a.started_at, a.job_id, a.number";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, ToUnixMicros(from)).Bind(2, ToUnixMicros(to));
    std::vector<MeteredAttempt> out;
    Status st;
    while (s.Step(st)) {
      out.push_back(MeteredAttempt{ReadAttempt(s), s.Text(kAttemptColumnCount), s.Text(kAttemptColumnCount + 1),
                                   ParseJobState(s.Text(kAttemptColumnCount + 2)).value_or(JobState::kPending)});
    }
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<std::vector<Checkpoint>> ListCheckpoints(const std::string& job_id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn,
            "SELECT job_id, seq, attempt, path, step, created_at FROM checkpoints WHERE job_id = ?1 ORDER BY seq");
    s.Bind(1, job_id);
    std::vector<Checkpoint> out;
    Status st;
    while (s.Step(st)) out.push_back(Checkpoint{s.Text(0), s.Int(1), static_cast<int>(s.Int(2)), s.Text(3), s.OptInt(4),
                                                 FromUnixMicros(s.Int(5))});
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<std::optional<TokenRecord>> FindTokenByHash(const std::string& hash) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    return QueryOne(*r.conn, kSelectTokenByHash.c_str(), hash, &ReadToken);
  }

  Result<std::vector<ImportedAuditEvent>> SearchImportedAudit(const ImportedAuditQuery& query) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    schema::SqlWithParams q = schema::ImportedAuditSearch(query, [](int n) { return "?" + std::to_string(n); });
    return ReadImported(*r.conn, q);
  }

  Result<std::vector<ImportedAuditEvent>> ListImportedAuditSince(int64_t after_id, int limit) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    schema::SqlWithParams q{std::string("SELECT ") + schema::kImportedAuditColumns +
                                " FROM imported_audit WHERE id > ?1 ORDER BY id LIMIT ?2",
                            {after_id, int64_t{limit}}};
    return ReadImported(*r.conn, q);
  }

  Result<std::vector<ImportedSource>> ListImportedSources() const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn,
            "SELECT provider, source, count(*), max(time_ms), max(imported_at) FROM imported_audit "
            "GROUP BY provider, source ORDER BY provider, source");
    std::vector<ImportedSource> out;
    Status st;
    while (s.Step(st)) out.push_back(ImportedSource{s.Text(0), s.Text(1), s.Int(2), s.Int(3), FromUnixMicros(s.Int(4))});
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<std::vector<BreakglassRecord>> ListBreakglass(Timestamp since) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql = std::string("SELECT ") + schema::kBreakglassColumns +
                                   " FROM breakglass WHERE requested_at >= ?1 ORDER BY requested_at, id";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, ToUnixMicros(since));
    std::vector<BreakglassRecord> out;
    Status st;
    while (s.Step(st)) out.push_back(ReadBreakglass(s));
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<std::vector<SigningKeyRecord>> ListSigningKeys() const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn,
            "SELECT kid, alg, private_pem, created_at, superseded_at FROM signing_keys ORDER BY created_at, kid");
    std::vector<SigningKeyRecord> out;
    Status st;
    while (s.Step(st)) {
      SigningKeyRecord k{s.Text(0), s.Text(1), s.Text(2), FromUnixMicros(s.Int(3)), std::nullopt};
      if (auto v = s.OptInt(4)) k.superseded_at = FromUnixMicros(*v);
      out.push_back(std::move(k));
    }
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<std::vector<DirectoryEntry>> ListGroupsOf(const std::string& member_id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, schema::kGroupsOfSql.c_str());
    s.Bind(1, member_id);
    std::vector<DirectoryEntry> out;
    Status st;
    while (s.Step(st)) out.push_back(ReadDirectoryEntry(s));
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<std::vector<DirectoryEntry>> ListDirectory(const std::string& kind) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql =
        std::string("SELECT ") + schema::kDirectoryColumns + " FROM directory WHERE kind = ?1 ORDER BY id";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, kind);
    std::vector<DirectoryEntry> out;
    Status st;
    while (s.Step(st)) out.push_back(ReadDirectoryEntry(s));
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<std::optional<DirectoryEntry>> FindDirectoryEntry(const std::string& kind,
                                                           const std::string& id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    return FindDirectoryEntryIn(*r.conn, kind, id);
  }

  Result<std::optional<DirectoryEntry>> FindDirectoryEntryByName(const std::string& kind,
                                                                 const std::string& name) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, schema::kDirectoryByNameSql.c_str());
    s.Bind(1, kind).Bind(2, schema::DirectoryNameKey(name));
    Status st;
    if (s.Step(st)) return std::optional<DirectoryEntry>(ReadDirectoryEntry(s));
    RETURN_IF_ERROR(st);
    return std::optional<DirectoryEntry>();
  }

  Result<std::vector<TokenRecord>> ListTokens() const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql = std::string("SELECT ") + kTokenColumns + " FROM api_tokens ORDER BY id";
    CW_STMT(s, *r.conn, sql.c_str());
    std::vector<TokenRecord> out;
    Status st;
    while (s.Step(st)) out.push_back(ReadToken(s));
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<std::vector<AuditEvent>> ListAudit(const AuditFilter& f) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn,
            "SELECT seq, time, actor, action, resource, details, prev_hash, hash FROM audit_events "
            "WHERE seq > ?1 AND (?2 IS NULL OR actor = ?2) "
            "AND (?3 IS NULL OR action = ?3 OR (substr(?3, -1) = '.' AND substr(action, 1, length(?3)) = ?3)) "
            "AND (?4 IS NULL OR resource = ?4) AND (?5 IS NULL OR time >= ?5) ORDER BY seq LIMIT ?6");
    s.Bind(1, f.after_seq);
    if (!f.actor.empty()) s.Bind(2, f.actor);
    if (!f.action.empty()) s.Bind(3, f.action);
    if (!f.resource.empty()) s.Bind(4, f.resource);
    if (f.since) s.Bind(5, ToUnixMicros(*f.since));
    s.Bind(6, f.limit);
    std::vector<AuditEvent> out;
    Status st;
    while (s.Step(st)) out.push_back(ReadAudit(s));
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<std::vector<Change>> ListChanges(int64_t after_seq, int limit) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, "SELECT seq, kind, job_id, path, at FROM changes WHERE seq > ?1 ORDER BY seq LIMIT ?2");
    s.Bind(1, after_seq).Bind(2, limit);
    std::vector<Change> out;
    Status st;
    while (s.Step(st)) {
      auto kind = ParseChangeKind(s.Text(1));
      if (!kind) continue;  // a newer replica's kind of news: not this build's to act on
      out.push_back(Change{s.Int(0), *kind, s.Text(2), s.Text(3), FromUnixMicros(s.Int(4))});
    }
    RETURN_IF_ERROR(st);
    return out;
  }

  Status ScanAudit(const std::function<bool(const AuditEvent&)>& fn) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    // One read transaction, so the scan sees one consistent chain.
    RETURN_IF_ERROR(r.conn->ExecScript("BEGIN"));
    Status st;
    {
      CW_STMT(s, *r.conn,
              "SELECT seq, time, actor, action, resource, details, prev_hash, hash FROM audit_events ORDER BY seq");
      while (s.Step(st)) {
        if (!fn(ReadAudit(s))) break;
      }
    }
    (void)r.conn->ExecScript("COMMIT");
    return st;
  }

  Status ScanAuditRaw(const std::function<bool(const audit::RawAuditEvent&)>& fn) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    RETURN_IF_ERROR(r.conn->ExecScript("BEGIN"));
    Status st;
    {
      CW_STMT(s, *r.conn,
              "SELECT seq, time, actor, action, resource, details, prev_hash, hash FROM audit_events ORDER BY seq");
      while (s.Step(st)) {
        // Views into SQLite's row: no copies, valid until the next step.
        if (!fn(audit::RawAuditEvent{s.Int(0), s.Int(1), s.View(2), s.View(3), s.View(4), s.View(5), s.View(6),
                                     s.View(7)})) {
          break;
        }
      }
    }
    (void)r.conn->ExecScript("COMMIT");
    return st;
  }

  Result<audit::ChainHead> GetAuditHead() const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    return ReadHead(*r.conn);
  }

  Result<Lease> AcquireLease(const std::string& name, const std::string& holder, Micros ttl) override {
    if (read_only_) return FailedPrecondition("the database is open read-only");
    MutexLock lock(writer_mu_);
    int64_t now = ToUnixMicros(RealClock().Now());
    {
      CW_STMT(up, *writer_,
              "INSERT INTO leases (name, holder, epoch, expires_at) VALUES (?1, ?2, 1, ?3) "
              "ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at, "
              "epoch = CASE WHEN leases.holder = excluded.holder THEN leases.epoch ELSE leases.epoch + 1 END "
              "WHERE leases.holder = excluded.holder OR leases.expires_at < ?4");
      up.Bind(1, name).Bind(2, holder).Bind(3, now + ttl.count()).Bind(4, now);
      RETURN_IF_ERROR(up.Exec());
    }
    CW_STMT(s, *writer_, "SELECT name, holder, epoch, expires_at FROM leases WHERE name = ?1");
    s.Bind(1, name);
    Status st;
    if (!s.Step(st)) return st.ok() ? Internal("lease " + name + " vanished") : st;
    return Lease{s.Text(0), s.Text(1), s.Int(2), FromUnixMicros(s.Int(3))};
  }

  Result<int> LastLaunch(const std::string& job_id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, "SELECT attempt FROM launches WHERE job_id = ?1");
    s.Bind(1, job_id);
    Status st;
    if (s.Step(st)) return static_cast<int>(s.Int(0));
    RETURN_IF_ERROR(st);
    return 0;
  }

  Result<std::optional<BillingImport>> FindBillingImport(const std::string& provider,
                                                         const std::string& digest) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql = std::string("SELECT ") + schema::kBillingImportColumns +
                                   " FROM billing_imports WHERE provider = ?1 AND digest = ?2";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, provider).Bind(2, digest);
    Status st;
    if (s.Step(st)) return std::optional<BillingImport>(ReadBillingImport(s));
    RETURN_IF_ERROR(st);
    return std::optional<BillingImport>();
  }

  Result<std::vector<BillingImport>> ListBillingImports() const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql =
        std::string("SELECT ") + schema::kBillingImportColumns + " FROM billing_imports ORDER BY imported_at, id";
    CW_STMT(s, *r.conn, sql.c_str());
    std::vector<BillingImport> out;
    Status st;
    while (s.Step(st)) out.push_back(ReadBillingImport(s));
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<std::vector<BillingRollup>> ListBillingRollups(const std::string& import_id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql = std::string("SELECT ") + schema::kBillingRollupColumns +
                                   " FROM billing_rollups WHERE import_id = ?1 ORDER BY rowid";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, import_id);
    std::vector<BillingRollup> out;
    Status st;
    while (s.Step(st)) {
      BillingRollup b;
      int i = 1;  // column 0 is the import's provider
      for (std::string* t : b.KeyFields()) *t = s.Text(i++);
      b.rows = s.Int(i++);
      for (Picos* v : b.Amounts()) {
        *v = schema::JoinPicos(s.Int(i), s.Int(i + 1));
        i += 2;
      }
      out.push_back(std::move(b));
    }
    RETURN_IF_ERROR(st);
    return out;
  }

  // Summed here rather than by GROUP BY: a pass over the rows into a hash
  // table instead of SQLite's sort, and sums in 128 bits (SQLite's SUM of
  // 64-bit integers stops at an overflow).
  Result<std::vector<BillingTotal>> QueryBilling(const BillingQuery& q) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    ASSIGN_OR_RETURN(sqlite3_stmt * raw, r.conn->PrepareOnce(schema::BillingRowsSql(q)));
    Stmt s(raw, true);
    s.Bind(1, q.from_day).Bind(2, q.to_day).Bind(3, q.provider);
    std::vector<BillingTotal> out;
    std::unordered_map<std::string, size_t> index;  // keys and currency, joined by \x1f
    std::string key;
    Status st;
    const int n = static_cast<int>(q.group_by.size());
    while (s.Step(st)) {
      key.clear();
      for (int i = 0; i <= n; ++i) {
        key += s.View(i);
        key += '\x1f';
      }
      auto [it, added] = index.try_emplace(key, out.size());
      if (added) {
        BillingTotal t;
        for (int i = 0; i < n; ++i) t.keys.emplace_back(s.View(i));
        t.currency = s.View(n);
        out.push_back(std::move(t));
      }
      BillingTotal& t = out[it->second];
      int i = n + 1;
      t.rows += s.Int(i++);
      for (Picos* v : t.Amounts()) {
        *v += schema::JoinPicos(s.Int(i), s.Int(i + 1));
        i += 2;
      }
    }
    RETURN_IF_ERROR(st.WithPrefix("summing bills"));
    std::sort(out.begin(), out.end(), [](const BillingTotal& a, const BillingTotal& b) {
      return std::tie(a.keys, a.currency) < std::tie(b.keys, b.currency);
    });
    return out;
  }

  Result<int> SchemaVersion() const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, "SELECT COALESCE(MAX(version), 0) FROM schema_migrations");
    Status st;
    if (s.Step(st)) return static_cast<int>(s.Int(0));
    RETURN_IF_ERROR(st);
    return 0;
  }

 private:
  // A reader connection borrowed from the pool, returned on destruction.
  struct ReaderLease {
    const SqliteStore* store;
    std::unique_ptr<Conn> conn;
    ReaderLease(const SqliteStore* s, std::unique_ptr<Conn> c) : store(s), conn(std::move(c)) {}
    ReaderLease(ReaderLease&&) = default;
    ~ReaderLease() {
      if (conn) {
        MutexLock lock(store->readers_mu_);
        store->readers_.push_back(std::move(conn));
      }
    }
  };

  Result<ReaderLease> Reader() const {
    {
      MutexLock lock(readers_mu_);
      if (!readers_.empty()) {
        auto c = std::move(readers_.back());
        readers_.pop_back();
        return ReaderLease(this, std::move(c));
      }
    }
    ASSIGN_OR_RETURN(auto c, Conn::Open(path_, true));
    return ReaderLease(this, std::move(c));
  }

  static Result<audit::ChainHead> ReadHead(Conn& conn) {
    CW_STMT(s, conn, "SELECT seq, hash FROM audit_head WHERE id = 1");
    Status st;
    if (s.Step(st)) return audit::ChainHead{s.Int(0), s.Text(1)};
    RETURN_IF_ERROR(st.WithPrefix("not a Causeway database, or its schema is missing"));
    return audit::ChainHead{};
  }

  Status WriteHead(const audit::ChainHead& head) REQUIRES(writer_mu_) {
    CW_STMT(s, *writer_, "INSERT INTO audit_head (id, seq, hash) VALUES (1, ?1, ?2) "
                         "ON CONFLICT(id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash");
    s.Bind(1, head.seq).Bind(2, head.hash);
    return s.Exec();
  }

  Status Migrate() REQUIRES(writer_mu_) {
    RETURN_IF_ERROR(writer_->ExecScript(
        "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)"));
    const int target = static_cast<int>(std::size(kMigrations));
    for (int v = 1; v <= target; ++v) {
      RETURN_IF_ERROR(writer_->ExecScript("BEGIN IMMEDIATE"));
      Status st;
      bool applied = false;
      {
        CW_STMT(q, *writer_, "SELECT 1 FROM schema_migrations WHERE version = ?1");
        q.Bind(1, v);
        applied = q.Step(st);
      }
      if (st.ok() && !applied) {
        st = writer_->ExecScript(kMigrations[v - 1]);
        if (st.ok() && v == schema::kMembershipsVersion) st = FillMembers(*writer_);
        if (st.ok()) {
          CW_STMT(ins, *writer_, "INSERT INTO schema_migrations (version, applied_at) VALUES (?1, strftime('%s','now'))");
          ins.Bind(1, v);
          st = ins.Exec();
        }
      }
      if (!st.ok()) {
        (void)writer_->ExecScript("ROLLBACK");
        return st.WithPrefix("migration " + std::to_string(v) + " failed");
      }
      RETURN_IF_ERROR(writer_->ExecScript("COMMIT"));
    }
    return Status::Ok();
  }

  std::string path_;
  bool read_only_;
  Mutex writer_mu_;
  std::unique_ptr<Conn> writer_ GUARDED_BY(writer_mu_);
  mutable Mutex readers_mu_;
  mutable std::vector<std::unique_ptr<Conn>> readers_ GUARDED_BY(readers_mu_);
};

}  // namespace

Result<std::unique_ptr<Store>> OpenSqliteStore(const std::string& path, const SqliteOptions& options) {
  auto store = std::make_unique<SqliteStore>(path, options.read_only);
  RETURN_IF_ERROR(store->Open());
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace causeway
