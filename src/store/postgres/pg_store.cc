// PostgreSQL implementation of Store, for several Causeway replicas on one
// database. Any number of processes may write at once: each batch locks the
// audit chain's head row (SELECT ... FOR UPDATE) for its transaction, so the
// chain stays one line however many writers there are, and each replica
// still group-commits its own writes (CommitQueue). Connections are pooled;
// one the server dropped (a restart, a failover) is discarded and the
// request that found it fails with kUnavailable, so clients retry and the
// next request connects again.
#include <algorithm>
#include <array>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "causeway/mutex.h"
#include "causeway/store.h"
#include "causeway/text.h"
#include "store/audit_chain.h"
#include "store/billing_sql.h"
#include "store/postgres/pg_conn.h"
#include "store/postgres/pg_write_tx.h"
#include "store/records_json.h"
#include "store/rows.h"
#include "store/schema.h"

namespace causeway {
namespace {

using pg::BatchMode;
using pg::Conn;
using pg::PgWriteTx;
using pg::Uncommitted;
using pg::Params;
using pg::ReadAll;
using pg::ReadFirst;
using pg::Row;
using pg::Rows;

using schema::kMigrations;

// The database's clock, in Unix microseconds.
#define DB_NOW_US "(extract(epoch from clock_timestamp()) * 1000000)::bigint"


static_assert(std::size(kMigrations) == kLatestSchemaVersion);

// Any constant: the advisory lock replicas take to migrate one at a time.
constexpr int64_t kMigrationLock = 0x6361757365776179;  // "causeway"

using rows::kAuditColumns;
using rows::kJobColumns;
using rows::kTokenColumns;
using rows::MicrosOf;
using rows::kAttemptColumns;

Params ParamsOf(const rows::SqlWithParams& q) {
  Params p;
  for (const auto& v : q.params) {
    if (const auto* n = std::get_if<int64_t>(&v)) {
      p.Add(*n);
    } else {
      p.Add(std::get<std::string>(v));
    }
  }
  return p;
}

class PgStore final : public Store {
 public:
  PgStore(std::string url, bool read_only) : url_(std::move(url)), read_only_(read_only) {}

  Status Open() {
    ASSIGN_OR_RETURN(auto lease, Acquire());
    if (!read_only_) RETURN_IF_ERROR(Migrate(*lease.conn));
    ASSIGN_OR_RETURN(auto head, ReadHead(*lease.conn, false));
    (void)head;
    return Status::Ok();
  }

  std::vector<Committed> CommitBatch(const std::vector<const WriteFn*>& work) override {
    if (read_only_) return Failed(work.size(), FailedPrecondition("the database is open read-only"));
    auto lease = Acquire();
    if (!lease.ok()) return Failed(work.size(), lease.status());
    Conn& conn = *lease->conn;
    if (auto fast = RunFast(conn, work)) return *std::move(fast);
    (void)conn.ExecScript("ROLLBACK");
    return RunCareful(conn, work);
  }

  // The batch with every unit's writes held (BatchMode::kFast); nullopt when
  // it failed as a whole and must run carefully (the transaction is then
  // still open, failed, for the caller to roll back).
  static std::vector<Committed> Failed(size_t n, const Status& st) {
    std::vector<Committed> out(n);
    for (Committed& c : out) c.status = st;
    return out;
  }

  static std::optional<std::vector<Committed>> RunFast(Conn& conn, const std::vector<const WriteFn*>& work) {
    std::vector<Status> results(work.size());
    PgWriteTx tx(conn, BatchMode::kFast);
    for (size_t i = 0; i < work.size(); ++i) {
      tx.BeginUnit(i);
      Status st = (*work[i])(tx);
      if (st.ok() && tx.UnitChangedStateWithoutAudit()) st = Internal("refused a state change that wrote no audit event");
      if (!st.ok()) {
        if (conn.Broken()) return Failed(work.size(), st);
        if (!tx.UndoUnit().ok()) return std::nullopt;
      }
      results[i] = std::move(st);
    }
    Status commit = tx.Commit();
    if (commit.ok()) return tx.Results(std::move(results));
    // Lost connection, serialization failure, deadlock: retryable as a whole.
    if (conn.Broken() || commit.code() == Code::kUnavailable) {
      (void)conn.ExecScript("ROLLBACK");
      for (auto& r : results) {
        if (r.ok()) r = commit.WithPrefix("commit failed");
      }
      return Uncommitted(std::move(results));
    }
    return std::nullopt;
  }

  // The batch with each unit under its own savepoint (BatchMode::kCareful).
  static std::vector<Committed> RunCareful(Conn& conn, const std::vector<const WriteFn*>& work) {
    std::vector<Status> results(work.size());
    if (Status begin = conn.ExecScript("BEGIN; SAVEPOINT unit"); !begin.ok()) {
      (void)conn.ExecScript("ROLLBACK");
      return Failed(work.size(), begin);
    }
    PgWriteTx tx(conn, BatchMode::kCareful);
    for (size_t i = 0; i < work.size(); ++i) {
      tx.BeginUnit(i);
      Status st = (*work[i])(tx);
      if (st.ok() && tx.UnitChangedStateWithoutAudit()) st = Internal("refused a state change that wrote no audit event");
      // One round trip between units: the unit's held writes, then keep
      // them and mark the next unit's start; or undo the unit (the
      // savepoint stays).
      if (st.ok()) {
        std::string end = tx.TakeHeld() + "RELEASE SAVEPOINT unit; SAVEPOINT unit";
        st = conn.ExecScript(end.c_str());
      }
      if (!st.ok()) {
        (void)tx.UndoUnit();
        if (Status undo = conn.ExecScript("ROLLBACK TO SAVEPOINT unit"); !undo.ok()) {
          // The connection or the transaction is gone: nothing commits.
          (void)conn.ExecScript("ROLLBACK");
          results[i] = std::move(st);
          for (auto& r : results) {
            if (r.ok()) r = undo.WithPrefix("batch aborted");
          }
          return Uncommitted(std::move(results));
        }
      }
      results[i] = std::move(st);
    }
    Status commit = tx.Commit();
    if (commit.ok()) return tx.Results(std::move(results));
    (void)conn.ExecScript("ROLLBACK");
    for (auto& r : results) {
      if (r.ok()) r = commit.WithPrefix("commit failed");
    }
    return Uncommitted(std::move(results));
  }

  Result<std::optional<JobRecord>> GetJob(const std::string& id) const override {
    static const std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = $1";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(id)));
    return ReadFirst(r, rows::ReadJob<Row>);
  }

  Result<std::vector<JobRecord>> GetJobs(const std::vector<std::string>& ids) const override {
    if (ids.empty()) return std::vector<JobRecord>();
    static const std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ANY($1::text[])";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().AddArray(ids)));
    return ReadAll(r, rows::ReadJob<Row>);
  }

  Result<std::vector<JobRecord>> ListJobs(const JobFilter& f) const override {
    static const std::string sql = std::string("SELECT ") + kJobColumns +
                                   " FROM jobs WHERE ($1::text IS NULL OR state = $1) "
                                   "AND ($2::text IS NULL OR team = $2) AND ($3::text IS NULL OR owner = $3) "
                                   "AND ($4::text IS NULL OR id < $4) AND ($6::text IS NULL OR pipeline = $6) "
                                   "AND ($7::text[] IS NULL OR EXISTS (SELECT 1 FROM attempts a "
                                   "WHERE a.job_id = jobs.id AND a.cluster = ANY($7::text[]))) "
                                   "ORDER BY id DESC LIMIT $5";
    Params p;
    p.OrNull(f.state ? JobStateName(*f.state) : "").OrNull(f.team).OrNull(f.owner).OrNull(f.before_id).Add(f.limit)
        .OrNull(f.pipeline);
    if (f.clusters.empty()) p.Null(); else p.AddArray(f.clusters);
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), p));
    return ReadAll(r, rows::ReadJob<Row>);
  }

  Result<std::vector<JobEvent>> ListJobEvents(const std::string& job_id) const override {
    static const std::string sql =
        std::string("SELECT ") + rows::kJobEventColumns + " FROM job_events WHERE job_id = $1 ORDER BY id";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(job_id)));
    return ReadAll(r, rows::ReadJobEvent<Row>);
  }

  Result<std::vector<Attempt>> ListAttempts(const std::string& job_id) const override {
    static const std::string sql =
        std::string("SELECT ") + kAttemptColumns + " FROM attempts a WHERE job_id = $1 ORDER BY number";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(job_id)));
    return ReadAll(r, rows::ReadAttempt<Row>);
  }

  Result<std::vector<MeteredAttempt>> ListAttemptsBetween(Timestamp from, Timestamp to) const override {
    static const std::string sql = std::string("SELECT ") + kAttemptColumns +
                                   ", j.team, j.owner, j.state FROM attempts a JOIN jobs j ON j.id = a.job_id "
                                   "WHERE a.started_at < $2 AND (a.ended_at IS NULL OR a.ended_at > $1) "
                                   "ORDER BY a.started_at, a.job_id, a.number";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(ToUnixMicros(from)).Add(ToUnixMicros(to))));
    return ReadAll(r, rows::ReadMeteredAttempt<Row>);
  }

  Result<std::vector<Checkpoint>> ListCheckpoints(const std::string& job_id) const override {
    static const std::string sql =
        std::string("SELECT ") + rows::kCheckpointColumns + " FROM checkpoints WHERE job_id = $1 ORDER BY seq";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(job_id)));
    return ReadAll(r, rows::ReadCheckpoint<Row>);
  }

  Result<std::vector<JobFact>> ListJobFacts(const std::string& job_id) const override {
    static const std::string sql =
        std::string("SELECT ") + rows::kJobFactColumns + " FROM job_facts WHERE job_id = $1 ORDER BY seq";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(job_id)));
    return ReadAll(r, rows::ReadJobFact<Row>);
  }

  Result<std::vector<SealedRecord>> GetSealedRecords(const std::vector<std::string>& ids) const override {
    if (ids.empty()) return std::vector<SealedRecord>();
    ASSIGN_OR_RETURN(Rows r, Query("SELECT job_id, kid, sealed_at, envelope FROM provenance_records "
                                   "WHERE job_id = ANY($1::text[])",
                                   Params().AddArray(ids)));
    std::vector<SealedRecord> out;
    for (int i = 0; i < r.size(); ++i) {
      out.push_back(SealedRecord{r.Text(i, 0), r.Text(i, 1), FromUnixMicros(r.Int(i, 2)), r.Text(i, 3)});
    }
    return out;
  }

  Result<std::vector<std::string>> ListUnsealedJobs(int limit) const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT id FROM jobs WHERE sealed = 0 AND state IN ('succeeded', 'failed', "
                                   "'cancelled') ORDER BY id LIMIT $1",
                                   Params().Add(limit)));
    std::vector<std::string> out;
    for (int i = 0; i < r.size(); ++i) out.push_back(r.Text(i, 0));
    return out;
  }

  Result<AuditRange> GetAuditRange(const std::string& resource) const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT COALESCE(MIN(seq), 0), COALESCE(MAX(seq), 0), COUNT(*) FROM audit_events "
                                   "WHERE resource = $1",
                                   Params().Add(resource)));
    if (r.size() != 1) return Internal("no audit range");
    return AuditRange{r.Int(0, 0), r.Int(0, 1), r.Int(0, 2)};
  }

  Result<std::optional<TokenRecord>> FindTokenByHash(const std::string& hash) const override {
    static const std::string sql = std::string("SELECT ") + kTokenColumns + " FROM api_tokens WHERE hash = $1";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(hash)));
    return ReadFirst(r, rows::ReadToken<Row>);
  }

  Result<std::vector<ImportedAuditEvent>> SearchImportedAudit(const ImportedAuditQuery& query) const override {
    rows::SqlWithParams q = rows::ImportedAuditSearch(query, [](int n) { return "$" + std::to_string(n); });
    ASSIGN_OR_RETURN(auto lease, Acquire());
    ASSIGN_OR_RETURN(Rows r, lease.conn->ExecOnce(q.sql, ParamsOf(q)));  // its shape varies: not prepared
    return ReadAll(r, rows::ReadImportedAudit<Row>);
  }

  Result<std::vector<ImportedAuditEvent>> ListImportedAuditSince(int64_t after_id, int limit) const override {
    static const std::string sql = std::string("SELECT ") + rows::kImportedAuditColumns +
                                   " FROM imported_audit WHERE id > $1 ORDER BY id LIMIT $2";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(after_id).Add(int64_t{limit})));
    return ReadAll(r, rows::ReadImportedAudit<Row>);
  }

  Result<std::vector<ImportedSource>> ListImportedSources() const override {
    ASSIGN_OR_RETURN(Rows r, Query(rows::kImportedSourcesSql));
    return ReadAll(r, rows::ReadImportedSource<Row>);
  }

  Result<std::vector<BreakglassRecord>> ListBreakglass(Timestamp since) const override {
    static const std::string sql = std::string("SELECT ") + rows::kBreakglassColumns +
                                   " FROM breakglass WHERE requested_at >= $1 ORDER BY requested_at, id";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(ToUnixMicros(since))));
    return ReadAll(r, rows::ReadBreakglass<Row>);
  }

  Result<std::vector<DatasetVersion>> ListDatasetVersions(const std::string& dataset) const override {
    ASSIGN_OR_RETURN(Rows r, Query(rows::kListDatasetVersionsSql.c_str(), Params().Add(dataset)));
    return ReadAll(r, rows::ReadDatasetVersion<Row>);
  }

  Result<std::optional<std::string>> GetDatasetManifest(const std::string& digest) const override {
    ASSIGN_OR_RETURN(Rows r, Query(schema::kDatasetManifestSql, Params().Add(digest)));
    return ReadFirst(r, [](const Row& row) { return row.Text(0); });
  }

  Result<std::vector<DatasetReplica>> ListDatasetReplicas(const std::string& digest) const override {
    ASSIGN_OR_RETURN(Rows r, Query(rows::kListDatasetReplicasSql.c_str(), Params().Add(digest)));
    return ReadAll(r, rows::ReadDatasetReplica<Row>);
  }

  Result<std::vector<DataCharge>> ListDataCharges(const std::string& job_id, Timestamp from,
                                                  Timestamp to) const override {
    ASSIGN_OR_RETURN(Rows r, Query(rows::kListDataChargesSql.c_str(),
                                   Params().Add(job_id).Add(ToUnixMicros(from)).Add(ToUnixMicros(to))));
    return ReadAll(r, rows::ReadDataCharge<Row>);
  }

  Result<std::vector<SigningKeyRecord>> ListSigningKeys() const override {
    static const std::string sql =
        std::string("SELECT ") + rows::kSigningKeyColumns + " FROM signing_keys ORDER BY created_at, kid";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str()));
    return ReadAll(r, rows::ReadSigningKey<Row>);
  }

  Result<std::vector<DirectoryEntry>> ListGroupsOf(const std::string& member_id) const override {
    ASSIGN_OR_RETURN(Rows r, Query(rows::kGroupsOfSql.c_str(), Params().Add(member_id)));
    return ReadAll(r, rows::ReadDirectoryEntry<Row>);
  }

  Result<std::vector<DirectoryEntry>> ListDirectory(const std::string& kind) const override {
    static const std::string sql =
        std::string("SELECT ") + rows::kDirectoryColumns + " FROM directory WHERE kind = $1 ORDER BY id";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(kind)));
    return ReadAll(r, rows::ReadDirectoryEntry<Row>);
  }

  Result<std::optional<DirectoryEntry>> FindDirectoryEntry(const std::string& kind,
                                                           const std::string& id) const override {
    static const std::string sql =
        std::string("SELECT ") + rows::kDirectoryColumns + " FROM directory WHERE kind = $1 AND id = $2";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(kind).Add(id)));
    return ReadFirst(r, rows::ReadDirectoryEntry<Row>);
  }

  Result<std::optional<DirectoryEntry>> FindDirectoryEntryByName(const std::string& kind,
                                                                 const std::string& name) const override {
    ASSIGN_OR_RETURN(Rows r,
                     Query(rows::kDirectoryByNameSql.c_str(), Params().Add(kind).Add(schema::DirectoryNameKey(name))));
    return ReadFirst(r, rows::ReadDirectoryEntry<Row>);
  }

  Result<std::vector<TokenRecord>> ListTokens() const override {
    static const std::string sql = std::string("SELECT ") + kTokenColumns + " FROM api_tokens ORDER BY id";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str()));
    return ReadAll(r, rows::ReadToken<Row>);
  }

  Result<std::vector<AuditEvent>> ListAudit(const AuditFilter& f) const override {
    // One statement per order and kind of action filter, so that an index
    // (audit_by_action) serves a rare action.
    static const std::array<std::string, 6> sqls = [] {
      std::array<std::string, 6> out;
      for (int i = 0; i < 6; ++i) {
        out[static_cast<size_t>(i)] =
            std::string("SELECT ") + kAuditColumns + " FROM audit_events WHERE seq > $1 "
            "AND ($7::bigint IS NULL OR seq < $7) AND ($2::text IS NULL OR actor = $2)" +
            schema::AuditActionClause(i % 3, "$3::text", "$9::text", false) +
            " AND ($4::text IS NULL OR resource = $4) AND ($5::bigint IS NULL OR time >= $5) "
            "AND ($8::bigint IS NULL OR time < $8) ORDER BY seq" + (i >= 3 ? " DESC" : "") + " LIMIT $6";
      }
      return out;
    }();
    const int kind = f.action.empty() ? 0 : f.action.back() == '.' ? 2 : 1;
    Params p;
    p.Add(f.after_seq).OrNull(f.actor).OrNull(f.action).OrNull(f.resource).Add(MicrosOf(f.since)).Add(f.limit);
    if (f.newest_first && f.before_seq > 0) p.Add(f.before_seq); else p.Null();
    p.Add(MicrosOf(f.until));
    if (kind == 2) p.Add(schema::ActionRangeEnd(f.action)); else p.Null();
    ASSIGN_OR_RETURN(Rows r, Query(sqls[static_cast<size_t>((f.newest_first ? 3 : 0) + kind)].c_str(), p));
    return ReadAll(r, rows::ReadAudit<Row>);
  }

  Result<std::vector<Change>> ListChanges(int64_t after_seq, int limit) const override {
    static const std::string sql =
        std::string("SELECT ") + rows::kChangeColumns + " FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(after_seq).Add(limit)));
    std::vector<Change> out;
    for (auto& c : ReadAll(r, rows::ReadChange<Row>)) {
      if (c) out.push_back(std::move(*c));  // else a newer replica's kind of news: not this build's to act on
    }
    return out;
  }

  Status ScanAudit(const std::function<bool(const AuditEvent&)>& fn) const override {
    auto lease = Acquire();
    if (!lease.ok()) return lease.status();
    Conn& conn = *lease->conn;
    // One snapshot for the whole scan, read page by page.
    RETURN_IF_ERROR(conn.ExecScript("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"));
    Status st = Status::Ok();
    int64_t after = 0;
    for (bool more = true; more && st.ok();) {
      static const std::string sql =
          std::string("SELECT ") + kAuditColumns + " FROM audit_events WHERE seq > $1 ORDER BY seq LIMIT 5000";
      auto r = conn.Exec(sql.c_str(), Params().Add(after));
      if (!r.ok()) {
        st = r.status();
        break;
      }
      more = r->size() == 5000;
      for (int i = 0; i < r->size(); ++i) {
        AuditEvent e = rows::ReadAudit(Row(*r, i));
        after = e.seq;
        if (!fn(e)) {
          more = false;
          break;
        }
      }
    }
    (void)conn.ExecScript("COMMIT");
    return st;
  }

  Result<audit::ChainHead> GetAuditHead() const override {
    auto lease = Acquire();
    if (!lease.ok()) return lease.status();
    return ReadHead(*lease->conn, false);
  }

  Result<Lease> AcquireLease(const std::string& name, const std::string& holder, Micros ttl) override {
    if (read_only_) return FailedPrecondition("the database is open read-only");
    static const std::string take =
        std::string("INSERT INTO leases (") + rows::kLeaseColumns + ") VALUES ($1, $2, 1, " DB_NOW_US " + $3) "
        "ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at, "
        "epoch = CASE WHEN leases.holder = EXCLUDED.holder THEN leases.epoch ELSE leases.epoch + 1 END "
        "WHERE leases.holder = EXCLUDED.holder OR leases.expires_at < " DB_NOW_US " RETURNING " +
        rows::kLeaseColumns;
    static const std::string read = std::string("SELECT ") + rows::kLeaseColumns + " FROM leases WHERE name = $1";
    ASSIGN_OR_RETURN(Rows r,
                     Query(take.c_str(), Params().Add(name).Add(holder).Add(static_cast<int64_t>(ttl.count()))));
    if (r.size() == 0) {  // someone else holds it
      ASSIGN_OR_RETURN(r, Query(read.c_str(), Params().Add(name)));
    }
    auto lease = ReadFirst(r, rows::ReadLease<Row>);
    if (!lease) return Internal("lease " + name + " vanished");
    return *std::move(lease);
  }

  Result<int> LastLaunch(const std::string& job_id) const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT attempt FROM launches WHERE job_id = $1", Params().Add(job_id)));
    return r.size() == 0 ? 0 : static_cast<int>(r.Int(0, 0));
  }

  Result<std::optional<BillingImport>> FindBillingImport(const std::string& digest) const override {
    static const std::string sql = std::string("SELECT ") + rows::kBillingImportColumns +
                                   " FROM billing_imports WHERE digest = $1 ORDER BY imported_at, id LIMIT 1";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(digest)));
    return ReadFirst(r, rows::ReadBillingImport<Row>);
  }

  Result<std::vector<BillingImport>> ListBillingImports() const override {
    static const std::string sql =
        std::string("SELECT ") + rows::kBillingImportColumns + " FROM billing_imports ORDER BY imported_at, id";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str()));
    return ReadAll(r, rows::ReadBillingImport<Row>);
  }

  Result<std::vector<BillingRollup>> ListBillingRollups(const std::string& import_id) const override {
    static const std::string sql = std::string("SELECT ") + schema::kBillingRollupColumns +
                                   " FROM billing_rollups WHERE import_id = $1 ORDER BY ctid";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(import_id)));
    return ReadAll(r, rows::ReadRollup<Row>);
  }

  Result<std::vector<BillingTotal>> QueryBilling(const BillingQuery& q) const override {
    ASSIGN_OR_RETURN(auto lease, Acquire());
    ASSIGN_OR_RETURN(Rows r, lease.conn->ExecOnce(schema::BillingQuerySql(q),
                                                  Params().Add(q.from_day).Add(q.to_day).Add(q.provider)));
    std::vector<BillingTotal> out;
    const int n = static_cast<int>(q.group_by.size());
    for (int row = 0; row < r.size(); ++row) {
      BillingTotal t;
      for (int i = 0; i < n; ++i) t.keys.push_back(r.Text(row, i));
      t.currency = r.Text(row, n);
      int i = n + 1;
      // SUM of bigint is numeric in PostgreSQL: read back as text.
      auto sum = [&](int col) -> Result<int64_t> {
        std::optional<int64_t> parsed = ParseInt(r.Text(row, col));
        if (!parsed) return InvalidArgument("summing bills: a total does not fit in 64 bits");
        return *parsed;
      };
      ASSIGN_OR_RETURN(t.rows, sum(i++));
      for (Picos* v : {&t.billed, &t.effective, &t.list, &t.contracted, &t.gpu_hours}) {
        ASSIGN_OR_RETURN(int64_t nanos, sum(i));
        ASSIGN_OR_RETURN(int64_t frac, sum(i + 1));
        *v = schema::JoinPicos(nanos, frac);
        i += 2;
      }
      out.push_back(std::move(t));
    }
    return out;
  }

  Result<int> SchemaVersion() const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"));
    return static_cast<int>(r.Int(0, 0));
  }

 private:
  // A pooled connection, returned on destruction unless it broke.
  struct Pooled {
    const PgStore* store;
    std::unique_ptr<Conn> conn;
    Pooled(const PgStore* s, std::unique_ptr<Conn> c) : store(s), conn(std::move(c)) {}
    Pooled(Pooled&&) = default;
    ~Pooled() {
      if (!conn || conn->Broken()) return;
      MutexLock lock(store->pool_mu_);
      if (store->pool_.size() < kMaxIdle) store->pool_.push_back(std::move(conn));
    }
  };
  static constexpr size_t kMaxIdle = 16;

  Result<Pooled> Acquire() const {
    {
      MutexLock lock(pool_mu_);
      if (!pool_.empty()) {
        auto c = std::move(pool_.back());
        pool_.pop_back();
        return Pooled(this, std::move(c));
      }
    }
    ASSIGN_OR_RETURN(auto c, Conn::Open(url_));
    return Pooled(this, std::move(c));
  }

  Result<Rows> Query(const char* sql, const Params& params = {}) const {
    ASSIGN_OR_RETURN(auto lease, Acquire());
    return lease.conn->Exec(sql, params);
  }

  static Result<audit::ChainHead> ReadHead(Conn& conn, bool lock) {
    auto r = conn.Exec(lock ? "SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE"
                            : "SELECT seq, hash FROM audit_head WHERE id = 1");
    if (!r.ok()) return r.status().WithPrefix("not a Causeway database, or its schema is missing");
    if (r->size() == 0) return DataLoss("the audit chain's head row is missing");
    return audit::ChainHead{r->Int(0, 0), r->Text(0, 1)};
  }

  // The membership rows of every group stored before directory_members
  // existed.
  static Status FillMembers(Conn& conn) {
    ASSIGN_OR_RETURN(Rows groups, conn.Exec(schema::kGroupsStoredSql));
    for (int i = 0; i < groups.size(); ++i) {
      DirectoryEntry g;
      g.kind = "Group";
      g.id = groups.Text(i, 0);
      g.resource = groups.Text(i, 1);
      RETURN_IF_ERROR(conn.Exec(schema::kInsertMembersPostgres,
                                Params().Add(g.id).Add(nlohmann::json(GroupMemberIds(g)).dump())).status());
    }
    return Status::Ok();
  }

  // Every migration not yet applied, in one transaction under an advisory
  // lock, so replicas starting together migrate once.
  static Status Migrate(Conn& conn) {
    RETURN_IF_ERROR(conn.ExecScript("BEGIN"));
    auto fail = [&](Status st) {
      (void)conn.ExecScript("ROLLBACK");
      return st;
    };
    if (auto r = conn.Exec("SELECT pg_advisory_xact_lock($1)", Params().Add(kMigrationLock)); !r.ok()) {
      return fail(r.status());
    }
    if (Status st = conn.ExecScript("CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, "
                                    "applied_at BIGINT NOT NULL)");
        !st.ok()) {
      return fail(st);
    }
    auto applied = conn.Exec("SELECT version FROM schema_migrations");
    if (!applied.ok()) return fail(applied.status());
    std::vector<bool> done(std::size(kMigrations) + 1, false);
    for (int i = 0; i < applied->size(); ++i) {
      int64_t v = applied->Int(i, 0);
      if (v > static_cast<int64_t>(std::size(kMigrations))) {
        return fail(FailedPrecondition("the database has schema version " + std::to_string(v) +
                                       ", newer than this causeway (" + std::to_string(std::size(kMigrations)) + ")"));
      }
      if (v >= 1) done[static_cast<size_t>(v)] = true;
    }
    for (size_t v = 1; v <= std::size(kMigrations); ++v) {
      if (done[v]) continue;
      std::string ddl = schema::ForPostgres(kMigrations[v - 1]);
      // SQLite starts without a head row; here the batches lock it, so it
      // must exist from the start: the genesis hash, as an empty chain.
      if (v == 1) ddl += "INSERT INTO audit_head (id, seq, hash) VALUES (1, 0, repeat('0', 64));";
      Status st = conn.ExecScript(ddl.c_str());
      if (st.ok() && static_cast<int>(v) == schema::kMembershipsVersion) st = FillMembers(conn);
      if (!st.ok()) return fail(st.WithPrefix("migration " + std::to_string(v) + " failed"));
      auto ins = conn.Exec("INSERT INTO schema_migrations (version, applied_at) VALUES ($1, "
                           "(extract(epoch from now()))::bigint)",
                           Params().Add(static_cast<int64_t>(v)));
      if (!ins.ok()) return fail(ins.status());
    }
    return conn.ExecScript("COMMIT");
  }

  std::string url_;
  bool read_only_;
  mutable Mutex pool_mu_;
  mutable std::vector<std::unique_ptr<Conn>> pool_ GUARDED_BY(pool_mu_);  // idle connections
};

}  // namespace

Result<std::unique_ptr<Store>> OpenPostgresStore(const std::string& url, const PostgresOptions& options) {
  auto store = std::make_unique<PgStore>(url, options.read_only);
  RETURN_IF_ERROR(store->Open());
  return std::unique_ptr<Store>(std::move(store));
}

}  // namespace causeway
