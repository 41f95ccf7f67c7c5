// SQLite implementation of Store: one writer connection (writes are
// serialized and group-committed by WriteBatch) and a pool of reader
// connections, which WAL lets run beside the writer.
#include <algorithm>
#include <array>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "causeway/mutex.h"
#include "causeway/store.h"
#include "store/audit_chain.h"
#include "store/billing_sql.h"
#include "store/records_json.h"
#include "store/rows.h"
#include "store/schema.h"
#include "store/sqlite/sqlite_conn.h"
#include "store/sqlite/sqlite_queries.h"
#include "store/sqlite/sqlite_write_tx.h"

namespace causeway {
namespace {

using sqlite::Conn;
using sqlite::SqliteWriteTx;
using sqlite::Stmt;
using sqlite::ReadAll;
using sqlite::ReadFirst;
using sqlite::QueryOne;

using schema::kMigrations;

static_assert(std::size(kMigrations) == kLatestSchemaVersion);

using rows::kJobColumns;
using rows::kTokenColumns;
using rows::kAttemptColumns;

const std::string kScanAuditSql = std::string("SELECT ") + rows::kAuditColumns + " FROM audit_events ORDER BY seq";

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
    return QueryOne(*r.conn, sqlite::kSelectJobById, id, rows::ReadJob<Stmt>);
  }

  // One by one: a read here is a lookup in a local file, not a round trip.
  Result<std::vector<JobRecord>> GetJobs(const std::vector<std::string>& ids) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    std::vector<JobRecord> out;
    for (const std::string& id : ids) {
      ASSIGN_OR_RETURN(auto job, QueryOne(*r.conn, sqlite::kSelectJobById, id, rows::ReadJob<Stmt>));
      if (job) out.push_back(std::move(*job));
    }
    return out;
  }

  Result<std::vector<JobRecord>> ListJobs(const JobFilter& f) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    // ?7: a JSON array of cluster names; a job matches with an attempt on one.
    static const std::string sql = std::string("SELECT ") + kJobColumns +
                                   " FROM jobs WHERE (?1 IS NULL OR state = ?1) AND (?2 IS NULL OR team = ?2)"
                                   " AND (?3 IS NULL OR owner = ?3) AND (?4 IS NULL OR id < ?4)"
                                   " AND (?6 IS NULL OR pipeline = ?6)"
                                   " AND (?7 IS NULL OR EXISTS (SELECT 1 FROM attempts a WHERE a.job_id = jobs.id"
                                   " AND a.cluster IN (SELECT value FROM json_each(?7)))) ORDER BY id DESC LIMIT ?5";
    CW_STMT(s, *r.conn, sql.c_str());
    if (f.state) s.Bind(1, JobStateName(*f.state));
    if (!f.team.empty()) s.Bind(2, f.team);
    if (!f.owner.empty()) s.Bind(3, f.owner);
    if (!f.before_id.empty()) s.Bind(4, f.before_id);
    s.Bind(5, f.limit);
    if (!f.pipeline.empty()) s.Bind(6, f.pipeline);
    if (!f.clusters.empty()) s.Bind(7, nlohmann::json(f.clusters).dump());
    return ReadAll(s, rows::ReadJob<Stmt>);
  }

  Result<std::vector<JobEvent>> ListJobEvents(const std::string& job_id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql =
        std::string("SELECT ") + rows::kJobEventColumns + " FROM job_events WHERE job_id = ?1 ORDER BY id";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, job_id);
    return ReadAll(s, rows::ReadJobEvent<Stmt>);
  }

  Result<std::vector<Attempt>> ListAttempts(const std::string& job_id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql =
        std::string("SELECT ") + kAttemptColumns + " FROM attempts a WHERE job_id = ?1 ORDER BY number";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, job_id);
    return ReadAll(s, rows::ReadAttempt<Stmt>);
  }

  Result<std::vector<MeteredAttempt>> ListAttemptsBetween(Timestamp from, Timestamp to) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql = std::string("SELECT ") + kAttemptColumns +
                                   ", j.team, j.owner, j.state FROM attempts a JOIN jobs j ON j.id = a.job_id "
                                   "WHERE a.started_at < ?2 AND (a.ended_at IS NULL OR a.ended_at > ?1) "
                                   "ORDER BY a.started_at, a.job_id, a.number";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, ToUnixMicros(from)).Bind(2, ToUnixMicros(to));
    return ReadAll(s, rows::ReadMeteredAttempt<Stmt>);
  }

  Result<std::vector<Checkpoint>> ListCheckpoints(const std::string& job_id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql =
        std::string("SELECT ") + rows::kCheckpointColumns + " FROM checkpoints WHERE job_id = ?1 ORDER BY seq";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, job_id);
    return ReadAll(s, rows::ReadCheckpoint<Stmt>);
  }

  Result<std::vector<JobFact>> ListJobFacts(const std::string& job_id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql =
        std::string("SELECT ") + rows::kJobFactColumns + " FROM job_facts WHERE job_id = ?1 ORDER BY seq";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, job_id);
    return ReadAll(s, rows::ReadJobFact<Stmt>);
  }

  Result<std::vector<SealedRecord>> GetSealedRecords(const std::vector<std::string>& ids) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    std::vector<SealedRecord> out;
    for (const std::string& id : ids) {
      CW_STMT(s, *r.conn, "SELECT job_id, kid, sealed_at, envelope FROM provenance_records WHERE job_id = ?1");
      s.Bind(1, id);
      Status st;
      if (s.Step(st)) out.push_back(SealedRecord{s.Text(0), s.Text(1), FromUnixMicros(s.Int(2)), s.Text(3)});
      RETURN_IF_ERROR(st);
    }
    return out;
  }

  Result<std::vector<std::string>> ListUnsealedJobs(int limit) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, "SELECT id FROM jobs WHERE sealed = 0 AND state IN ('succeeded', 'failed', 'cancelled') "
                        "ORDER BY id LIMIT ?1");
    s.Bind(1, limit);
    std::vector<std::string> out;
    Status st;
    while (s.Step(st)) out.push_back(s.Text(0));
    RETURN_IF_ERROR(st);
    return out;
  }

  Result<AuditRange> GetAuditRange(const std::string& resource) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, "SELECT COALESCE(MIN(seq), 0), COALESCE(MAX(seq), 0), COUNT(*) FROM audit_events "
                        "WHERE resource = ?1");
    s.Bind(1, resource);
    Status st;
    if (!s.Step(st)) return st.ok() ? Internal("no audit range") : st;
    return AuditRange{s.Int(0), s.Int(1), s.Int(2)};
  }

  Result<std::optional<TokenRecord>> FindTokenByHash(const std::string& hash) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    return QueryOne(*r.conn, sqlite::kSelectTokenByHash, hash, rows::ReadToken<Stmt>);
  }

  Result<std::vector<ImportedAuditEvent>> SearchImportedAudit(const ImportedAuditQuery& query) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    rows::SqlWithParams q = rows::ImportedAuditSearch(query, [](int n) { return "?" + std::to_string(n); });
    return sqlite::ReadImported(*r.conn, q);
  }

  Result<std::vector<ImportedAuditEvent>> ListImportedAuditSince(int64_t after_id, int limit) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    rows::SqlWithParams q{std::string("SELECT ") + rows::kImportedAuditColumns +
                                " FROM imported_audit WHERE id > ?1 ORDER BY id LIMIT ?2",
                            {after_id, int64_t{limit}}};
    return sqlite::ReadImported(*r.conn, q);
  }

  Result<std::vector<ImportedSource>> ListImportedSources() const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, rows::kImportedSourcesSql);
    return ReadAll(s, rows::ReadImportedSource<Stmt>);
  }

  Result<std::vector<BreakglassRecord>> ListBreakglass(Timestamp since) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql = std::string("SELECT ") + rows::kBreakglassColumns +
                                   " FROM breakglass WHERE requested_at >= ?1 ORDER BY requested_at, id";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, ToUnixMicros(since));
    return ReadAll(s, rows::ReadBreakglass<Stmt>);
  }

  Result<std::vector<DatasetVersion>> ListDatasetVersions(const std::string& dataset) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, rows::kListDatasetVersionsSql.c_str());
    s.Bind(1, dataset);
    return ReadAll(s, rows::ReadDatasetVersion<Stmt>);
  }

  Result<std::optional<std::string>> GetDatasetManifest(const std::string& digest) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, schema::kDatasetManifestSql);
    s.Bind(1, digest);
    return ReadFirst(s, [](const Stmt& row) { return row.Text(0); });
  }

  Result<std::vector<DatasetReplica>> ListDatasetReplicas(const std::string& digest) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, rows::kListDatasetReplicasSql.c_str());
    s.Bind(1, digest);
    return ReadAll(s, rows::ReadDatasetReplica<Stmt>);
  }

  Result<std::vector<DataCharge>> ListDataCharges(const std::string& job_id, Timestamp from,
                                                  Timestamp to) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, rows::kListDataChargesSql.c_str());
    s.Bind(1, job_id).Bind(2, ToUnixMicros(from)).Bind(3, ToUnixMicros(to));
    return ReadAll(s, rows::ReadDataCharge<Stmt>);
  }

  Result<std::vector<SigningKeyRecord>> ListSigningKeys() const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql =
        std::string("SELECT ") + rows::kSigningKeyColumns + " FROM signing_keys ORDER BY created_at, kid";
    CW_STMT(s, *r.conn, sql.c_str());
    return ReadAll(s, rows::ReadSigningKey<Stmt>);
  }

  Result<std::vector<DirectoryEntry>> ListGroupsOf(const std::string& member_id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, rows::kGroupsOfSql.c_str());
    s.Bind(1, member_id);
    return ReadAll(s, rows::ReadDirectoryEntry<Stmt>);
  }

  Result<std::vector<DirectoryEntry>> ListDirectory(const std::string& kind) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql =
        std::string("SELECT ") + rows::kDirectoryColumns + " FROM directory WHERE kind = ?1 ORDER BY id";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, kind);
    return ReadAll(s, rows::ReadDirectoryEntry<Stmt>);
  }

  Result<std::optional<DirectoryEntry>> FindDirectoryEntry(const std::string& kind,
                                                           const std::string& id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    return sqlite::FindDirectoryEntryIn(*r.conn, kind, id);
  }

  Result<std::optional<DirectoryEntry>> FindDirectoryEntryByName(const std::string& kind,
                                                                 const std::string& name) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    CW_STMT(s, *r.conn, rows::kDirectoryByNameSql.c_str());
    s.Bind(1, kind).Bind(2, schema::DirectoryNameKey(name));
    return ReadFirst(s, rows::ReadDirectoryEntry<Stmt>);
  }

  Result<std::vector<TokenRecord>> ListTokens() const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql = std::string("SELECT ") + kTokenColumns + " FROM api_tokens ORDER BY id";
    CW_STMT(s, *r.conn, sql.c_str());
    return ReadAll(s, rows::ReadToken<Stmt>);
  }

  Result<std::vector<AuditEvent>> ListAudit(const AuditFilter& f) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    // One statement per order and kind of action filter, so that an index
    // (audit_by_action) serves a rare action.
    static const std::array<std::string, 6> sqls = [] {
      std::array<std::string, 6> out;
      for (int i = 0; i < 6; ++i) {
        out[static_cast<size_t>(i)] =
            std::string("SELECT ") + rows::kAuditColumns +
            " FROM audit_events WHERE seq > ?1 AND (?7 IS NULL OR seq < ?7) AND (?2 IS NULL OR actor = ?2)" +
            schema::AuditActionClause(i % 3, "?3", "?9", true) +
            " AND (?4 IS NULL OR resource = ?4) AND (?5 IS NULL OR time >= ?5) AND (?8 IS NULL OR time < ?8) ORDER BY seq" +
            (i >= 3 ? " DESC" : "") + " LIMIT ?6";
      }
      return out;
    }();
    const int kind = f.action.empty() ? 0 : f.action.back() == '.' ? 2 : 1;
    CW_STMT(s, *r.conn, sqls[static_cast<size_t>((f.newest_first ? 3 : 0) + kind)].c_str());
    s.Bind(1, f.after_seq);
    if (!f.actor.empty()) s.Bind(2, f.actor);
    if (kind > 0) s.Bind(3, f.action);
    if (kind == 2) s.Bind(9, schema::ActionRangeEnd(f.action));
    if (!f.resource.empty()) s.Bind(4, f.resource);
    if (f.since) s.Bind(5, ToUnixMicros(*f.since));
    s.Bind(6, f.limit);
    if (f.newest_first && f.before_seq > 0) s.Bind(7, f.before_seq);
    if (f.until) s.Bind(8, ToUnixMicros(*f.until));
    return ReadAll(s, rows::ReadAudit<Stmt>);
  }

  Result<std::vector<Change>> ListChanges(int64_t after_seq, int limit) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql =
        std::string("SELECT ") + rows::kChangeColumns + " FROM changes WHERE seq > ?1 ORDER BY seq LIMIT ?2";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, after_seq).Bind(2, limit);
    ASSIGN_OR_RETURN(auto changes, ReadAll(s, rows::ReadChange<Stmt>));
    std::vector<Change> out;
    for (auto& c : changes) {
      if (c) out.push_back(std::move(*c));  // else a newer replica's kind of news: not this build's to act on
    }
    return out;
  }

  Status ScanAudit(const std::function<bool(const AuditEvent&)>& fn) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    // One read transaction, so the scan sees one consistent chain.
    RETURN_IF_ERROR(r.conn->ExecScript("BEGIN"));
    Status st;
    {
      CW_STMT(s, *r.conn, kScanAuditSql.c_str());
      while (s.Step(st)) {
        if (!fn(rows::ReadAudit(s))) break;
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
      CW_STMT(s, *r.conn, kScanAuditSql.c_str());
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
    static const std::string sql = std::string("SELECT ") + rows::kLeaseColumns + " FROM leases WHERE name = ?1";
    ASSIGN_OR_RETURN(auto lease, QueryOne(*writer_, sql, name, rows::ReadLease<Stmt>));
    if (!lease) return Internal("lease " + name + " vanished");
    return *std::move(lease);
  }

  Result<int> LastLaunch(const std::string& job_id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql = "SELECT attempt FROM launches WHERE job_id = ?1";
    ASSIGN_OR_RETURN(auto attempt, QueryOne(*r.conn, sql, job_id, [](const Stmt& s) { return s.Int(0); }));
    return static_cast<int>(attempt.value_or(0));
  }

  Result<std::optional<BillingImport>> FindBillingImport(const std::string& digest) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql = std::string("SELECT ") + rows::kBillingImportColumns +
                                   " FROM billing_imports WHERE digest = ?1 ORDER BY imported_at, id LIMIT 1";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, digest);
    return ReadFirst(s, rows::ReadBillingImport<Stmt>);
  }

  Result<std::vector<BillingImport>> ListBillingImports() const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql =
        std::string("SELECT ") + rows::kBillingImportColumns + " FROM billing_imports ORDER BY imported_at, id";
    CW_STMT(s, *r.conn, sql.c_str());
    return ReadAll(s, rows::ReadBillingImport<Stmt>);
  }

  Result<std::vector<BillingRollup>> ListBillingRollups(const std::string& import_id) const override {
    ASSIGN_OR_RETURN(auto r, Reader());
    static const std::string sql = std::string("SELECT ") + schema::kBillingRollupColumns +
                                   " FROM billing_rollups WHERE import_id = ?1 ORDER BY rowid";
    CW_STMT(s, *r.conn, sql.c_str());
    s.Bind(1, import_id);
    return ReadAll(s, rows::ReadRollup<Stmt>);
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
