// PostgreSQL implementation of Store, for several Causeway replicas on one
// database. Any number of processes may write at once: each batch locks the
// audit chain's head row (SELECT ... FOR UPDATE) for its transaction, so the
// chain stays one line however many writers there are, and each replica
// still group-commits its own writes (CommitQueue). Connections are pooled;
// one the server dropped (a restart, a failover) is discarded and the
// request that found it fails with kUnavailable, so clients retry and the
// next request connects again.
#include <algorithm>
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
#include "store/postgres/held_writes.h"
#include "store/postgres/pg_conn.h"
#include "store/records_json.h"
#include "store/schema.h"

namespace causeway {
namespace {

using pg::Conn;
using pg::Params;
using pg::Rows;

using schema::kMigrations;

// The database's clock, in Unix microseconds.
#define DB_NOW_US "(extract(epoch from clock_timestamp()) * 1000000)::bigint"


static_assert(std::size(kMigrations) == kLatestSchemaVersion);

// Any constant: the advisory lock replicas take to migrate one at a time.
constexpr int64_t kMigrationLock = 0x6361757365776179;  // "causeway"

#define JOB_COLUMNS                                                                                       \
  "id, name, team, owner, state, priority, spec_yaml, spec_json, submitted_by, created_at, updated_at, " \
  "cluster, attempts, gpu_seconds, cost_micros, reason"
#define TOKEN_COLUMNS "id, name, hash, scopes, created_by, created_at, expires_at, revoked_at, user_name, creator, grant_id"
#define AUDIT_COLUMNS "seq, time, actor, action, resource, details, prev_hash, hash"

JobRecord ReadJob(const Rows& r, int i) {
  JobRecord j;
  j.id = r.Text(i, 0);
  j.name = r.Text(i, 1);
  j.team = r.Text(i, 2);
  j.owner = r.Text(i, 3);
  j.state = ParseJobState(r.Text(i, 4)).value_or(JobState::kPending);
  j.priority = static_cast<int>(r.Int(i, 5));
  j.spec_yaml = r.Text(i, 6);
  j.spec_json = r.Text(i, 7);
  j.submitted_by = r.Text(i, 8);
  j.created_at = FromUnixMicros(r.Int(i, 9));
  j.updated_at = FromUnixMicros(r.Int(i, 10));
  j.cluster = r.Text(i, 11);
  j.attempts = static_cast<int>(r.Int(i, 12));
  j.gpu_seconds = r.Int(i, 13);
  j.cost_micros = r.Int(i, 14);
  j.reason = r.Text(i, 15);
  return j;
}

using schema::kAttemptColumnCount;
using schema::kAttemptColumns;

Attempt ReadAttempt(const Rows& r, int i) {
  Attempt a;
  a.job_id = r.Text(i, 0);
  a.number = static_cast<int>(r.Int(i, 1));
  a.cluster = r.Text(i, 2);
  a.state = r.Text(i, 3);
  a.started_at = FromUnixMicros(r.Int(i, 4));
  if (auto v = r.OptInt(i, 5)) a.ended_at = FromUnixMicros(*v);
  if (auto v = r.OptInt(i, 6)) a.exit_code = static_cast<int>(*v);
  a.failure_class = r.Text(i, 7);
  a.pool = r.Text(i, 8);
  a.flavor = r.Text(i, 9);
  a.gpus = r.Int(i, 10);
  a.reserved = r.Int(i, 11) != 0;
  a.borrowed = r.Int(i, 12);
  a.price_micros = r.Int(i, 13);
  a.gpu_seconds = r.Int(i, 14);
  a.cost_micros = r.Int(i, 15);
  a.placement = r.Text(i, 16);
  a.backend_id = r.Text(i, 17);
  a.resumed_from = r.Text(i, 18);
  a.observed_gpu_seconds = r.Int(i, 19);
  a.work_gpu_seconds = r.Int(i, 20);
  return a;
}

BillingImport ReadBillingImport(const Rows& r, int i) {
  return BillingImport{r.Text(i, 0), r.Text(i, 1), r.Text(i, 2), r.Text(i, 3), r.Text(i, 4),  r.Int(i, 5),
                       r.Int(i, 6),  r.Int(i, 7),  r.Text(i, 8), r.Text(i, 9), r.Text(i, 10), FromUnixMicros(r.Int(i, 11))};
}

TokenRecord ReadToken(const Rows& r, int i) {
  TokenRecord t;
  t.id = r.Text(i, 0);
  t.name = r.Text(i, 1);
  t.hash = r.Text(i, 2);
  auto scopes = nlohmann::json::parse(r.Text(i, 3), nullptr, false);
  if (scopes.is_array()) {
    for (const auto& v : scopes) {
      if (v.is_string()) t.scopes.push_back(v.get<std::string>());
    }
  }
  t.created_by = r.Text(i, 4);
  t.created_at = FromUnixMicros(r.Int(i, 5));
  if (auto v = r.OptInt(i, 6)) t.expires_at = FromUnixMicros(*v);
  if (auto v = r.OptInt(i, 7)) t.revoked_at = FromUnixMicros(*v);
  t.user = r.Text(i, 8);
  t.creator = r.Text(i, 9);
  t.grant = r.Text(i, 10);
  return t;
}

DirectoryEntry ReadDirectoryEntry(const Rows& r, int i) {
  DirectoryEntry d;
  d.kind = r.Text(i, 0);
  d.id = r.Text(i, 1);
  d.name = r.Text(i, 2);
  d.external_id = r.Text(i, 3);
  d.active = r.Int(i, 4) != 0;
  d.resource = r.Text(i, 5);
  d.version = r.Int(i, 6);
  d.created_at = FromUnixMicros(r.Int(i, 7));
  d.updated_at = FromUnixMicros(r.Int(i, 8));
  return d;
}

BreakglassRecord ReadBreakglass(const Rows& r, int i) {
  BreakglassRecord b;
  b.id = r.Text(i, 0);
  b.user = r.Text(i, 1);
  b.role = r.Text(i, 2);
  b.team = r.Text(i, 3);
  b.reason = r.Text(i, 4);
  b.requested_at = FromUnixMicros(r.Int(i, 5));
  b.duration = Micros(r.Int(i, 6));
  b.approved_by = r.Text(i, 7);
  if (auto v = r.OptInt(i, 8)) b.approved_at = FromUnixMicros(*v);
  if (auto v = r.OptInt(i, 9)) b.expires_at = FromUnixMicros(*v);
  if (auto v = r.OptInt(i, 10)) b.revoked_at = FromUnixMicros(*v);
  return b;
}

ImportedAuditEvent ReadImportedAudit(const Rows& r, int i) {
  ImportedAuditEvent e;
  e.id = r.Int(i, 0);
  e.provider = r.Text(i, 1);
  e.source = r.Text(i, 2);
  e.source_id = r.Text(i, 3);
  e.time_ms = r.Int(i, 4);
  e.class_uid = static_cast<int>(r.Int(i, 5));
  e.activity = r.Text(i, 6);
  e.operation = r.Text(i, 7);
  e.actor = r.Text(i, 8);
  e.subject = r.Text(i, 9);
  e.resource = r.Text(i, 10);
  e.status_id = static_cast<int>(r.Int(i, 11));
  e.event = r.Text(i, 12);
  e.imported_at = FromUnixMicros(r.Int(i, 13));
  return e;
}

Params ParamsOf(const schema::SqlWithParams& q) {
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

AuditEvent ReadAudit(const Rows& r, int i) {
  AuditEvent e;
  e.seq = r.Int(i, 0);
  e.time = FromUnixMicros(r.Int(i, 1));
  e.actor = r.Text(i, 2);
  e.action = r.Text(i, 3);
  e.resource = r.Text(i, 4);
  e.details = StoredDetails(r.Text(i, 5));
  e.prev_hash = r.Text(i, 6);
  e.hash = r.Text(i, 7);
  return e;
}

template <typename T>
std::vector<T> ReadAll(const Rows& r, T (*read)(const Rows&, int)) {
  std::vector<T> out;
  out.reserve(static_cast<size_t>(r.size()));
  for (int i = 0; i < r.size(); ++i) out.push_back(read(r, i));
  return out;
}

template <typename T>
std::optional<T> ReadFirst(const Rows& r, T (*read)(const Rows&, int)) {
  if (r.size() == 0) return std::nullopt;
  return read(r, 0);
}

std::optional<int64_t> MicrosOf(const std::optional<Timestamp>& t) {
  return t ? std::optional<int64_t>(ToUnixMicros(*t)) : std::nullopt;
}

// How a batch runs. kFast, tried first: every unit's writes are held and
// sent together, so a batch costs two round trips plus one per read; a unit
// takes a savepoint only when its own writes reach the server before it ends
// (a read after a write, a write whose answer it needs). kCareful: each unit
// under its own savepoint, a round trip per unit. A batch that fails as a
// whole while fast (a key another transaction took, a statement that fails
// where no savepoint marks whose it was) is rolled back and run carefully,
// so that one unit's failure stays its own.
enum class BatchMode { kFast, kCareful };

// Units' statuses, without sequence numbers (nothing was committed).
std::vector<Committed> Uncommitted(std::vector<Status> statuses) {
  std::vector<Committed> out(statuses.size());
  for (size_t i = 0; i < statuses.size(); ++i) out[i].status = std::move(statuses[i]);
  return out;
}

// The WriteTx handed to each unit of work of one batch.
class PgWriteTx final : public WriteTx {
 public:
  PgWriteTx(Conn& conn, BatchMode mode) : conn_(conn), mode_(mode) {
    // Fast: the transaction opens with the first round trip.
    if (mode_ == BatchMode::kFast) held_.Statement("BEGIN");
  }

  // The held writes as one script, forgotten here.
  std::string TakeHeld() { return held_.Take(); }

  void BeginUnit(size_t index) {
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
  bool UnitChangedStateWithoutAudit() const { return unit_writes_ > 0 && unit_audits_ == 0; }

  // Forgets the unit's held writes and audit events. Careful: the caller
  // rolls back to the unit's savepoint. Fast: rolls back to the unit's
  // savepoint if it took one (which also releases the row locks it took).
  // An error when only a careful run can tell the unit's true outcome: the
  // transaction failed before this unit's writes, or the unit failed after
  // an optimistic claim (with the key taken it may have gone another way).
  Status UndoUnit() {
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

  // Ends the batch: the held writes, the batch's audit events chained onto
  // the head, COMMIT. The head row is locked (SELECT ... FOR UPDATE) in the
  // first of the two round trips, so writers of every replica queue only
  // for this last step and the commit, and the chain stays one line.
  Status Commit() {
    if (!audit_.empty()) {
      held_.Statement("SELECT seq, hash FROM audit_head WHERE id = 1 FOR UPDATE");
      ASSIGN_OR_RETURN(Rows h, conn_.Script(held_.Take()));
      if (h.size() == 0) return DataLoss("the audit chain's head row is missing");
      audit::ChainHead head{h.Int(0, 0), h.Text(0, 1)};
      constexpr size_t kRowsPerInsert = 500;
      for (size_t from = 0; from < audit_.size(); from += kRowsPerInsert) {
        std::string insert = "INSERT INTO audit_events (" AUDIT_COLUMNS ") VALUES ";
        size_t to = std::min(audit_.size(), from + kRowsPerInsert);
        for (size_t i = from; i < to; ++i) {
          AuditEvent& e = audit_[i];
          e.seq = head.seq + 1;
          e.prev_hash = head.hash;
          e.hash = audit::ComputeHash(e);
          head = audit::ChainHead{e.seq, e.hash};
          ASSIGN_OR_RETURN(std::string row,
                           conn_.Inline("($1, $2, $3, $4, $5, $6, $7, $8)",
                                        Params().Add(e.seq).Add(ToUnixMicros(e.time)).Add(e.actor).Add(e.action)
                                            .Add(e.resource).Add(audit::CanonicalDetails(e.details))
                                            .Add(e.prev_hash).Add(e.hash)));
          insert += i == from ? "" : ", ";
          insert += row;
        }
        held_.Statement(std::move(insert));
      }
      ASSIGN_OR_RETURN(std::string update, conn_.Inline("UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1",
                                                        Params().Add(head.seq).Add(head.hash)));
      held_.Statement(std::move(update));
      // Each change takes the number its audit event was just given.
      for (size_t from = 0; from < changes_.size(); from += kRowsPerInsert) {
        std::string insert = "INSERT INTO changes (seq, kind, job_id, path, at) VALUES ";
        size_t to = std::min(changes_.size(), from + kRowsPerInsert);
        for (size_t i = from; i < to; ++i) {
          const auto& [c, event] = changes_[i];
          ASSIGN_OR_RETURN(std::string row,
                           conn_.Inline("($1, $2, $3, $4, $5)",
                                        Params().Add(audit_[event].seq).Add(std::string(ChangeKindName(c.kind)))
                                            .Add(c.job_id).Add(c.path).Add(ToUnixMicros(c.at))));
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

  // After Commit: each unit's statuses with the sequence numbers its audit
  // events were given (Commit numbers them as it chains them).
  std::vector<Committed> Results(std::vector<Status> statuses) const {
    std::vector<Committed> out = Uncommitted(std::move(statuses));
    for (size_t i = 0; i < audit_.size(); ++i) {
      Committed& c = out[audit_units_[i]];
      if (c.status.ok()) c.audit_seqs.push_back(audit_[i].seq);
    }
    return out;
  }

  Result<std::optional<JobRecord>> GetJob(const std::string& id) override {
    ASSIGN_OR_RETURN(Rows r, Read("SELECT " JOB_COLUMNS " FROM jobs WHERE id = $1", Params().Add(id)));
    return ReadFirst(r, &ReadJob);
  }

  Status InsertJob(const JobRecord& j) override {
    static constexpr pg::Into kJobs{"INSERT INTO jobs (id, name, team, owner, state, priority, spec_yaml, spec_json, "
                                    "submitted_by, created_at, updated_at) VALUES ",
                                    "", 0, true};
    return Defer(
        kJobs, "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
        Params().Add(j.id).Add(j.name).Add(j.team).Add(j.owner).Add(JobStateName(j.state)).Add(j.priority)
            .Add(j.spec_yaml).Add(j.spec_json).Add(j.submitted_by).Add(ToUnixMicros(j.created_at))
            .Add(ToUnixMicros(j.updated_at)));
  }

  Status UpdateJobState(const std::string& id, JobState state, Timestamp at) override {
    ASSIGN_OR_RETURN(Rows r, Write("UPDATE jobs SET state = $2, updated_at = $3 WHERE id = $1",
                                        Params().Add(id).Add(JobStateName(state)).Add(ToUnixMicros(at))));
    if (r.Affected() == 0) return NotFound("job " + id + " not found");
    return Status::Ok();
  }

  Status UpdateJobOwner(const std::string& id, const std::string& owner, Timestamp at) override {
    ASSIGN_OR_RETURN(Rows r, Write("UPDATE jobs SET owner = $2, updated_at = $3 WHERE id = $1",
                                   Params().Add(id).Add(owner).Add(ToUnixMicros(at))));
    if (r.Affected() == 0) return NotFound("job " + id + " not found");
    return Status::Ok();
  }

  Status UpdateJobProgress(const JobRecord& j) override {
    ASSIGN_OR_RETURN(Rows r, Write("UPDATE jobs SET state = $2, cluster = $3, attempts = $4, gpu_seconds = $5, "
                                        "cost_micros = $6, reason = $7, updated_at = $8 WHERE id = $1",
                                        Params().Add(j.id).Add(JobStateName(j.state)).Add(j.cluster).Add(j.attempts)
                                            .Add(j.gpu_seconds).Add(j.cost_micros).Add(j.reason)
                                            .Add(ToUnixMicros(j.updated_at))));
    if (r.Affected() == 0) return NotFound("job " + j.id + " not found");
    return Status::Ok();
  }

  Status PutAttempt(const Attempt& a) override {
    static constexpr pg::Into kAttempts{
        "INSERT INTO attempts (job_id, number, cluster, state, started_at, ended_at, exit_code, failure_class, pool, "
        "flavor, gpus, reserved, borrowed, price_micros, gpu_seconds, cost_micros, placement, backend_id, resumed_from, "
        "observed_gpu_seconds, work_gpu_seconds) VALUES ",
        " ON CONFLICT (job_id, number) DO UPDATE SET cluster = EXCLUDED.cluster, state = EXCLUDED.state, "
        "started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at, exit_code = EXCLUDED.exit_code, "
        "failure_class = EXCLUDED.failure_class, pool = EXCLUDED.pool, flavor = EXCLUDED.flavor, gpus = EXCLUDED.gpus, "
        "reserved = EXCLUDED.reserved, borrowed = EXCLUDED.borrowed, price_micros = EXCLUDED.price_micros, "
        "gpu_seconds = EXCLUDED.gpu_seconds, cost_micros = EXCLUDED.cost_micros, placement = EXCLUDED.placement, "
        "backend_id = EXCLUDED.backend_id, resumed_from = EXCLUDED.resumed_from, "
        "observed_gpu_seconds = EXCLUDED.observed_gpu_seconds, work_gpu_seconds = EXCLUDED.work_gpu_seconds",
        1, false};
    return Defer(
        kAttempts, "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)",
        Params().Add(a.job_id).Add(a.number).Add(a.cluster).Add(a.state).Add(ToUnixMicros(a.started_at))
            .Add(MicrosOf(a.ended_at)).Add(a.exit_code ? std::optional<int64_t>(*a.exit_code) : std::nullopt)
            .Add(a.failure_class).Add(a.pool).Add(a.flavor).Add(a.gpus).Add(a.reserved ? 1 : 0).Add(a.borrowed)
            .Add(a.price_micros).Add(a.gpu_seconds).Add(a.cost_micros).Add(a.placement).Add(a.backend_id)
            .Add(a.resumed_from).Add(a.observed_gpu_seconds).Add(a.work_gpu_seconds));
  }

  Status AddCheckpoint(Checkpoint& c) override {
    ASSIGN_OR_RETURN(Rows r, Write("INSERT INTO checkpoints (job_id, seq, attempt, path, step, created_at) "
                                        "SELECT $1, COALESCE(MAX(seq), 0) + 1, $2, $3, $4, $5 FROM checkpoints "
                                        "WHERE job_id = $1 RETURNING seq",
                                        Params().Add(c.job_id).Add(c.attempt).Add(c.path).Add(c.step)
                                            .Add(ToUnixMicros(c.created_at))));
    if (r.size() != 1) return Internal("no checkpoint seq assigned");
    c.seq = r.Int(0, 0);
    return Status::Ok();
  }

  Status AddJobEvent(const JobEvent& e) override {
    static constexpr pg::Into kJobEvents{"INSERT INTO job_events (job_id, time, type, message) VALUES ", "", 1, true};
    return Defer(kJobEvents, "($1, $2, $3, $4)",
                 Params().Add(e.job_id).Add(ToUnixMicros(e.time)).Add(e.type).Add(e.message));
  }

  // Fast: claimed optimistically, without asking; a key stored before
  // makes the INSERT fail, the batch fail as a whole, and the careful run
  // that follows asks first. The batch's own claims are remembered, so a
  // key claimed twice in one batch is answered without the database.
  Result<std::optional<IdempotencyRecord>> ClaimIdempotency(const IdempotencyRecord& rec) override {
    std::string id = rec.scope + '\n' + rec.key;
    if (auto it = claimed_.find(id); it != claimed_.end()) return std::optional<IdempotencyRecord>(it->second);
    if (mode_ == BatchMode::kCareful) {
      ASSIGN_OR_RETURN(Rows r, Read("SELECT scope, key, request_hash, job_id, created_at FROM idempotency_keys "
                                    "WHERE scope = $1 AND key = $2",
                                    Params().Add(rec.scope).Add(rec.key)));
      if (r.size() > 0) {
        return std::optional<IdempotencyRecord>(
            IdempotencyRecord{r.Text(0, 0), r.Text(0, 1), r.Text(0, 2), r.Text(0, 3), FromUnixMicros(r.Int(0, 4))});
      }
    }
    static constexpr pg::Into kKeys{"INSERT INTO idempotency_keys (scope, key, request_hash, job_id, created_at) "
                                    "VALUES ",
                                    "", 1, true};
    RETURN_IF_ERROR(Defer(kKeys, "($1, $2, $3, $4, $5)",
                          Params().Add(rec.scope).Add(rec.key).Add(rec.request_hash).Add(rec.job_id)
                              .Add(ToUnixMicros(rec.created_at))));
    claimed_.emplace(id, rec);
    unit_claims_.push_back(std::move(id));
    return std::optional<IdempotencyRecord>();
  }

  Result<std::optional<TokenRecord>> GetToken(const std::string& id) override {
    ASSIGN_OR_RETURN(Rows r, Read("SELECT " TOKEN_COLUMNS " FROM api_tokens WHERE id = $1", Params().Add(id)));
    return ReadFirst(r, &ReadToken);
  }

  Status InsertToken(const TokenRecord& t) override {
    static constexpr pg::Into kTokens{"INSERT INTO api_tokens (" TOKEN_COLUMNS ") VALUES ", "", 0, true};
    return Defer(kTokens, "($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                        Params().Add(t.id).Add(t.name).Add(t.hash).Add(nlohmann::json(t.scopes).dump())
                            .Add(t.created_by).Add(ToUnixMicros(t.created_at)).Add(MicrosOf(t.expires_at))
                            .Add(MicrosOf(t.revoked_at)).Add(t.user).Add(t.creator).Add(t.grant));
  }

  Status SetTokenCreator(const std::string& id, const std::string& creator) override {
    ASSIGN_OR_RETURN(Rows r, Write("UPDATE api_tokens SET creator = $2 WHERE id = $1", Params().Add(id).Add(creator)));
    if (r.Affected() == 0) return NotFound("token " + id + " not found");
    return Status::Ok();
  }

  Status RevokeToken(const std::string& id, Timestamp at) override {
    ASSIGN_OR_RETURN(Rows r, Write("UPDATE api_tokens SET revoked_at = COALESCE(revoked_at, $2) WHERE id = $1",
                                        Params().Add(id).Add(ToUnixMicros(at))));
    if (r.Affected() == 0) return NotFound("token " + id + " not found");
    return Status::Ok();
  }

  // Deferred: seq, prev_hash and hash are assigned when the batch commits
  // (AppendChain), in the order appended.
  Status AppendAudit(AuditEvent& e) override {
    audit_.push_back(e);
    audit_units_.push_back(unit_index_);
    ++unit_audits_;
    return Status::Ok();
  }

  Status AppendChange(const Change& c) override {
    if (unit_audits_ == 0) return FailedPrecondition("a change is recorded after the audit event that describes it");
    changes_.emplace_back(c, audit_.size() - 1);  // numbered at commit, with its event
    return Status::Ok();
  }

  Status PruneChanges(int64_t through_seq, Timestamp before) override {
    // Bookkeeping of the feed, not a change of state (each change is a copy
    // of what its audit event records): no audit event is asked for. Its
    // unit's savepoint goes first, as for any write.
    RETURN_IF_ERROR(Flush(true));
    return conn_.Exec("DELETE FROM changes WHERE seq <= $1 AND at < $2",
                      Params().Add(through_seq).Add(ToUnixMicros(before)))
        .status();
  }

  Status RecordLaunch(const std::string& job_id, int attempt, const std::string& cluster, Timestamp at) override {
    static constexpr pg::Into kLaunches{"INSERT INTO launches (job_id, attempt, cluster, at) VALUES ",
                                        " ON CONFLICT (job_id) DO UPDATE SET attempt = EXCLUDED.attempt, "
                                        "cluster = EXCLUDED.cluster, at = EXCLUDED.at",
                                        1, false};
    return Defer(kLaunches, "($1, $2, $3, $4)",
                 Params().Add(job_id).Add(attempt).Add(cluster).Add(ToUnixMicros(at)));
  }

  Status InsertBillingImport(const BillingImport& b, const std::vector<BillingRollup>& rollups) override {
    static const std::string sql = std::string("INSERT INTO billing_imports (") + schema::kBillingImportColumns +
                                   ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)";
    auto inserted = Write(sql.c_str(), Params().Add(b.id).Add(b.provider).Add(b.file).Add(b.digest).Add(b.focus_version)
                                          .Add(b.rows).Add(b.skipped).Add(b.issues).Add(b.first_day).Add(b.last_day)
                                          .Add(b.imported_by).Add(ToUnixMicros(b.imported_at)));
    if (!inserted.ok()) {
      if (inserted.status().code() == Code::kAlreadyExists) {
        return AlreadyExists("this file was imported before for " + b.provider);
      }
      return inserted.status();
    }
    constexpr size_t kRowsPerInsert = 500;
    constexpr int kColumns = schema::kBillingRollupColumnCount + 1;
    for (size_t from = 0; from < rollups.size(); from += kRowsPerInsert) {
      std::string q = std::string("INSERT INTO billing_rollups (import_id, ") + schema::kBillingRollupColumns + ") VALUES ";
      Params params;
      size_t to = std::min(rollups.size(), from + kRowsPerInsert);
      for (size_t i = from; i < to; ++i) {
        const BillingRollup& r = rollups[i];
        int n = params.size();
        q += i == from ? "(" : ", (";
        for (int k = 1; k <= kColumns; ++k) q += "$" + std::to_string(n + k) + (k < kColumns ? ", " : ")");
        params.Add(b.id).Add(b.provider);
        for (const std::string* t : r.KeyFields()) params.Add(*t);
        params.Add(r.rows);
        for (Picos v : r.Amounts()) {
          auto [nanos, frac] = schema::SplitPicos(v);
          params.Add(nanos).Add(frac);
        }
      }
      RETURN_IF_ERROR(conn_.ExecOnce(q, params).status());
    }
    return Status::Ok();
  }

  Status CheckLease(const std::string& name, const std::string& holder, int64_t epoch) override {
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

  Result<std::optional<DirectoryEntry>> GetDirectoryEntry(const std::string& kind, const std::string& id) override {
    static const std::string sql = std::string("SELECT ") + schema::kDirectoryColumns +
                                   " FROM directory WHERE kind = $1 AND id = $2 FOR UPDATE";
    ASSIGN_OR_RETURN(Rows r, Read(sql.c_str(), Params().Add(kind).Add(id)));
    return ReadFirst(r, &ReadDirectoryEntry);
  }

  // Sent at once (not held): a name another entry has is reported as this
  // unit's, with a message that names it.
  Status PutDirectoryEntry(const DirectoryEntry& d) override {
    static const std::string sql = std::string("INSERT INTO directory (") + schema::kDirectoryColumns +
                                   ", name_key) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) "
                                   "ON CONFLICT (kind, id) DO UPDATE SET name = EXCLUDED.name, "
                                   "name_key = EXCLUDED.name_key, external_id = EXCLUDED.external_id, "
                                   "active = EXCLUDED.active, resource = EXCLUDED.resource, "
                                   "version = EXCLUDED.version, updated_at = EXCLUDED.updated_at";
    auto written = Write(sql.c_str(), Params().Add(d.kind).Add(d.id).Add(d.name).Add(d.external_id)
                                          .Add(int64_t{d.active ? 1 : 0})
                                          .Add(d.resource)
                                          .Add(d.version).Add(ToUnixMicros(d.created_at)).Add(ToUnixMicros(d.updated_at))
                                          .Add(schema::DirectoryNameKey(d.name)));
    if (written.status().code() == Code::kAlreadyExists) {
      return AlreadyExists("another " + d.kind + " is already named \"" + d.name + "\"");
    }
    RETURN_IF_ERROR(written.status());
    if (d.kind != "Group") return Status::Ok();
    RETURN_IF_ERROR(Write(schema::kDeleteMembersSql, Params().Add(d.id)).status());
    return Write(schema::kInsertMembersPostgres, Params().Add(d.id).Add(nlohmann::json(GroupMemberIds(d)).dump()))
        .status();
  }

  Status PutSigningKey(const SigningKeyRecord& k) override {
    ASSIGN_OR_RETURN(Rows r, Write("INSERT INTO signing_keys (kid, alg, private_pem, created_at, superseded_at) "
                                   "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (kid) DO UPDATE SET "
                                   "superseded_at = EXCLUDED.superseded_at",
                                   Params().Add(k.kid).Add(k.alg).Add(k.private_pem).Add(ToUnixMicros(k.created_at))
                                       .Add(MicrosOf(k.superseded_at))));
    (void)r;
    return Status::Ok();
  }

  Status PutBreakglass(const BreakglassRecord& b) override {
    static const std::string sql = std::string("INSERT INTO breakglass (") + schema::kBreakglassColumns +
                                   ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (id) DO UPDATE SET "
                                   "approved_by = EXCLUDED.approved_by, approved_at = EXCLUDED.approved_at, "
                                   "expires_at = EXCLUDED.expires_at, revoked_at = EXCLUDED.revoked_at";
    ASSIGN_OR_RETURN(Rows r, Write(sql.c_str(), Params().Add(b.id).Add(b.user).Add(b.role).Add(b.team).Add(b.reason)
                                                    .Add(ToUnixMicros(b.requested_at))
                                                    .Add(static_cast<int64_t>(b.duration.count())).Add(b.approved_by)
                                                    .Add(MicrosOf(b.approved_at)).Add(MicrosOf(b.expires_at))
                                                    .Add(MicrosOf(b.revoked_at))));
    (void)r;
    return Status::Ok();
  }

  Result<std::optional<BreakglassRecord>> GetBreakglass(const std::string& id) override {
    static const std::string sql =
        std::string("SELECT ") + schema::kBreakglassColumns + " FROM breakglass WHERE id = $1 FOR UPDATE";
    ASSIGN_OR_RETURN(Rows r, Read(sql.c_str(), Params().Add(id)));
    return ReadFirst(r, &ReadBreakglass);
  }

  Result<bool> InsertImportedAudit(ImportedAuditEvent& e) override {
    ASSIGN_OR_RETURN(Rows r, Write("INSERT INTO imported_audit (provider, source, source_id, time_ms, class_uid, "
                                   "activity, operation, actor, subject, resource, status_id, event, imported_at) "
                                   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) "
                                   "ON CONFLICT (provider, source, source_id) DO NOTHING RETURNING id",
                                   Params().Add(e.provider).Add(e.source).Add(e.source_id).Add(e.time_ms)
                                       .Add(e.class_uid).Add(e.activity).Add(e.operation).Add(e.actor)
                                       .Add(e.subject).Add(e.resource).Add(e.status_id).Add(e.event)
                                       .Add(ToUnixMicros(e.imported_at))));
    if (r.size() == 0) return false;
    e.id = r.Int(0, 0);
    return true;
  }

  Status DeleteDirectoryEntry(const std::string& kind, const std::string& id) override {
    ASSIGN_OR_RETURN(Rows r, Write("DELETE FROM directory WHERE kind = $1 AND id = $2", Params().Add(kind).Add(id)));
    if (r.Affected() == 0) return NotFound(kind + " " + id + " not found");
    if (kind == "Group") RETURN_IF_ERROR(Write(schema::kDeleteMembersSql, Params().Add(id)).status());
    return Status::Ok();
  }

 private:
  // Holds a row for `into`; `row` is "($1, $2, ...)".
  Status Defer(const pg::Into& into, const char* row, const Params& params) {
    ASSIGN_OR_RETURN(std::string text, conn_.Inline(row, params));
    held_.Row(into, std::move(text));
    ++unit_writes_;
    return Status::Ok();
  }
  // A read: first the held writes, so the unit reads what it wrote.
  Result<Rows> Read(const char* sql, const Params& params = {}) {
    RETURN_IF_ERROR(Flush(false));
    return conn_.Exec(sql, params);
  }
  // A write whose answer the unit needs now.
  Result<Rows> Write(const char* sql, const Params& params) {
    RETURN_IF_ERROR(Flush(true));
    ASSIGN_OR_RETURN(Rows r, conn_.Exec(sql, params));
    ++unit_writes_;
    return r;
  }
  // Sends the held writes. Fast: once the unit's own writes are about to
  // reach the server, its savepoint goes first, where its writes begin.
  Status Flush(bool unit_writes) {
    if (mode_ == BatchMode::kFast && !unit_savepoint_ && (unit_writes || held_.size() > unit_mark_)) {
      held_.StatementAt(unit_mark_, "SAVEPOINT " + SavepointName());
      unit_savepoint_ = true;
    }
    unit_mark_ = 0;
    if (held_.empty()) return Status::Ok();
    return conn_.ExecScript(held_.Take().c_str());
  }
  std::string SavepointName() const { return "u" + std::to_string(unit_index_); }

  Conn& conn_;
  const BatchMode mode_;
  std::vector<AuditEvent> audit_;  // this batch's, in order
  std::vector<size_t> audit_units_;  // the unit that appended each of audit_
  std::vector<std::pair<Change, size_t>> changes_;  // this batch's, each with its event's index in audit_
  size_t unit_changes_start_ = 0;
  std::string confirmed_lease_;    // locked FOR SHARE in this transaction
  pg::HeldWrites held_;
  // Idempotency keys this batch claimed ("scope\nkey"), and this unit's.
  std::unordered_map<std::string, IdempotencyRecord> claimed_;
  std::vector<std::string> unit_claims_;
  std::string lease_at_unit_start_;
  size_t unit_index_ = 0;
  size_t unit_mark_ = 0;  // where the unit's held writes begin in held_
  bool unit_savepoint_ = false;
  size_t unit_start_ = 0;
  int unit_writes_ = 0;
  int unit_audits_ = 0;
};

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
    ASSIGN_OR_RETURN(Rows r, Query("SELECT " JOB_COLUMNS " FROM jobs WHERE id = $1", Params().Add(id)));
    return ReadFirst(r, &ReadJob);
  }

  Result<std::vector<JobRecord>> GetJobs(const std::vector<std::string>& ids) const override {
    if (ids.empty()) return std::vector<JobRecord>();
    ASSIGN_OR_RETURN(Rows r, Query("SELECT " JOB_COLUMNS " FROM jobs WHERE id = ANY($1::text[])",
                                   Params().AddArray(ids)));
    return ReadAll(r, &ReadJob);
  }

  Result<std::vector<JobRecord>> ListJobs(const JobFilter& f) const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT " JOB_COLUMNS " FROM jobs WHERE ($1::text IS NULL OR state = $1) "
                                   "AND ($2::text IS NULL OR team = $2) AND ($3::text IS NULL OR owner = $3) "
                                   "AND ($4::text IS NULL OR id < $4) ORDER BY id DESC LIMIT $5",
                                   Params().OrNull(f.state ? JobStateName(*f.state) : "").OrNull(f.team)
                                       .OrNull(f.owner).OrNull(f.before_id).Add(f.limit)));
    return ReadAll(r, &ReadJob);
  }

  Result<std::vector<JobEvent>> ListJobEvents(const std::string& job_id) const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT id, job_id, time, type, message FROM job_events WHERE job_id = $1 "
                                   "ORDER BY id",
                                   Params().Add(job_id)));
    std::vector<JobEvent> out;
    for (int i = 0; i < r.size(); ++i) {
      out.push_back(JobEvent{r.Int(i, 0), r.Text(i, 1), FromUnixMicros(r.Int(i, 2)), r.Text(i, 3), r.Text(i, 4)});
    }
    return out;
  }

  Result<std::vector<Attempt>> ListAttempts(const std::string& job_id) const override {
    static const std::string sql =
        std::string("SELECT ") + kAttemptColumns + " FROM attempts a WHERE job_id = $1 ORDER BY number";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(job_id)));
    return ReadAll(r, &ReadAttempt);
  }

  Result<std::vector<MeteredAttempt>> ListAttemptsBetween(Timestamp from, Timestamp to) const override {
    static const std::string sql = std::string("SELECT ") + kAttemptColumns +
                                   ", j.team, j.owner, j.state FROM attempts a JOIN jobs j ON j.id = a.job_id "
                                   "WHERE a.started_at < $2 AND (a.ended_at IS NULL OR a.ended_at > $1) "
                                   "ORDER BY a.started_at, a.job_id, a.number";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(ToUnixMicros(from)).Add(ToUnixMicros(to))));
    std::vector<MeteredAttempt> out;
    for (int i = 0; i < r.size(); ++i) {
      out.push_back(MeteredAttempt{ReadAttempt(r, i), r.Text(i, kAttemptColumnCount),
                                   r.Text(i, kAttemptColumnCount + 1),
                                   ParseJobState(r.Text(i, kAttemptColumnCount + 2)).value_or(JobState::kPending)});
    }
    return out;
  }

  Result<std::vector<Checkpoint>> ListCheckpoints(const std::string& job_id) const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT job_id, seq, attempt, path, step, created_at FROM checkpoints "
                                   "WHERE job_id = $1 ORDER BY seq",
                                   Params().Add(job_id)));
    std::vector<Checkpoint> out;
    for (int i = 0; i < r.size(); ++i) {
      out.push_back(Checkpoint{r.Text(i, 0), r.Int(i, 1), static_cast<int>(r.Int(i, 2)), r.Text(i, 3), r.OptInt(i, 4),
                               FromUnixMicros(r.Int(i, 5))});
    }
    return out;
  }

  Result<std::optional<TokenRecord>> FindTokenByHash(const std::string& hash) const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT " TOKEN_COLUMNS " FROM api_tokens WHERE hash = $1", Params().Add(hash)));
    return ReadFirst(r, &ReadToken);
  }

  Result<std::vector<ImportedAuditEvent>> SearchImportedAudit(const ImportedAuditQuery& query) const override {
    schema::SqlWithParams q = schema::ImportedAuditSearch(query, [](int n) { return "$" + std::to_string(n); });
    ASSIGN_OR_RETURN(auto lease, Acquire());
    ASSIGN_OR_RETURN(Rows r, lease.conn->ExecOnce(q.sql, ParamsOf(q)));  // its shape varies: not prepared
    return ReadAll(r, &ReadImportedAudit);
  }

  Result<std::vector<ImportedAuditEvent>> ListImportedAuditSince(int64_t after_id, int limit) const override {
    static const std::string sql = std::string("SELECT ") + schema::kImportedAuditColumns +
                                   " FROM imported_audit WHERE id > $1 ORDER BY id LIMIT $2";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(after_id).Add(int64_t{limit})));
    return ReadAll(r, &ReadImportedAudit);
  }

  Result<std::vector<ImportedSource>> ListImportedSources() const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT provider, source, count(*), max(time_ms), max(imported_at) FROM imported_audit "
                                   "GROUP BY provider, source ORDER BY provider, source"));
    std::vector<ImportedSource> out;
    for (int i = 0; i < r.size(); ++i) {
      out.push_back(ImportedSource{r.Text(i, 0), r.Text(i, 1), r.Int(i, 2), r.Int(i, 3), FromUnixMicros(r.Int(i, 4))});
    }
    return out;
  }

  Result<std::vector<BreakglassRecord>> ListBreakglass(Timestamp since) const override {
    static const std::string sql = std::string("SELECT ") + schema::kBreakglassColumns +
                                   " FROM breakglass WHERE requested_at >= $1 ORDER BY requested_at, id";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(ToUnixMicros(since))));
    return ReadAll(r, &ReadBreakglass);
  }

  Result<std::vector<SigningKeyRecord>> ListSigningKeys() const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT kid, alg, private_pem, created_at, superseded_at FROM signing_keys "
                                   "ORDER BY created_at, kid"));
    std::vector<SigningKeyRecord> out;
    for (int i = 0; i < r.size(); ++i) {
      SigningKeyRecord k{r.Text(i, 0), r.Text(i, 1), r.Text(i, 2), FromUnixMicros(r.Int(i, 3)), std::nullopt};
      if (auto v = r.OptInt(i, 4)) k.superseded_at = FromUnixMicros(*v);
      out.push_back(std::move(k));
    }
    return out;
  }

  Result<std::vector<DirectoryEntry>> ListGroupsOf(const std::string& member_id) const override {
    ASSIGN_OR_RETURN(Rows r, Query(schema::kGroupsOfSql.c_str(), Params().Add(member_id)));
    return ReadAll(r, &ReadDirectoryEntry);
  }

  Result<std::vector<DirectoryEntry>> ListDirectory(const std::string& kind) const override {
    static const std::string sql =
        std::string("SELECT ") + schema::kDirectoryColumns + " FROM directory WHERE kind = $1 ORDER BY id";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(kind)));
    return ReadAll(r, &ReadDirectoryEntry);
  }

  Result<std::optional<DirectoryEntry>> FindDirectoryEntry(const std::string& kind,
                                                           const std::string& id) const override {
    static const std::string sql =
        std::string("SELECT ") + schema::kDirectoryColumns + " FROM directory WHERE kind = $1 AND id = $2";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(kind).Add(id)));
    return ReadFirst(r, &ReadDirectoryEntry);
  }

  Result<std::optional<DirectoryEntry>> FindDirectoryEntryByName(const std::string& kind,
                                                                 const std::string& name) const override {
    ASSIGN_OR_RETURN(Rows r,
                     Query(schema::kDirectoryByNameSql.c_str(), Params().Add(kind).Add(schema::DirectoryNameKey(name))));
    return ReadFirst(r, &ReadDirectoryEntry);
  }

  Result<std::vector<TokenRecord>> ListTokens() const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT " TOKEN_COLUMNS " FROM api_tokens ORDER BY id"));
    return ReadAll(r, &ReadToken);
  }

  Result<std::vector<AuditEvent>> ListAudit(const AuditFilter& f) const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT " AUDIT_COLUMNS " FROM audit_events WHERE seq > $1 "
                                   "AND ($2::text IS NULL OR actor = $2) "
                                   "AND ($3::text IS NULL OR action = $3 OR (right($3, 1) = '.' AND "
                                   "left(action, length($3)) = $3)) "
                                   "AND ($4::text IS NULL OR resource = $4) AND ($5::bigint IS NULL OR time >= $5) "
                                   "ORDER BY seq LIMIT $6",
                                   Params().Add(f.after_seq).OrNull(f.actor).OrNull(f.action).OrNull(f.resource)
                                       .Add(MicrosOf(f.since)).Add(f.limit)));
    return ReadAll(r, &ReadAudit);
  }

  Result<std::vector<Change>> ListChanges(int64_t after_seq, int limit) const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT seq, kind, job_id, path, at FROM changes WHERE seq > $1 ORDER BY seq LIMIT $2",
                                   Params().Add(after_seq).Add(limit)));
    std::vector<Change> out;
    for (int i = 0; i < r.size(); ++i) {
      auto kind = ParseChangeKind(r.Text(i, 1));
      if (!kind) continue;  // a newer replica's kind of news: not this build's to act on
      out.push_back(Change{r.Int(i, 0), *kind, r.Text(i, 2), r.Text(i, 3), FromUnixMicros(r.Int(i, 4))});
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
      auto r = conn.Exec("SELECT " AUDIT_COLUMNS " FROM audit_events WHERE seq > $1 ORDER BY seq LIMIT 5000",
                         Params().Add(after));
      if (!r.ok()) {
        st = r.status();
        break;
      }
      more = r->size() == 5000;
      for (int i = 0; i < r->size(); ++i) {
        AuditEvent e = ReadAudit(*r, i);
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
    ASSIGN_OR_RETURN(Rows r,
                     Query("INSERT INTO leases (name, holder, epoch, expires_at) VALUES ($1, $2, 1, " DB_NOW_US " + $3) "
                           "ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at, "
                           "epoch = CASE WHEN leases.holder = EXCLUDED.holder THEN leases.epoch ELSE leases.epoch + 1 END "
                           "WHERE leases.holder = EXCLUDED.holder OR leases.expires_at < " DB_NOW_US " "
                           "RETURNING name, holder, epoch, expires_at",
                           Params().Add(name).Add(holder).Add(static_cast<int64_t>(ttl.count()))));
    if (r.size() == 0) {  // someone else holds it
      ASSIGN_OR_RETURN(r, Query("SELECT name, holder, epoch, expires_at FROM leases WHERE name = $1", Params().Add(name)));
      if (r.size() == 0) return Internal("lease " + name + " vanished");
    }
    return Lease{r.Text(0, 0), r.Text(0, 1), r.Int(0, 2), FromUnixMicros(r.Int(0, 3))};
  }

  Result<int> LastLaunch(const std::string& job_id) const override {
    ASSIGN_OR_RETURN(Rows r, Query("SELECT attempt FROM launches WHERE job_id = $1", Params().Add(job_id)));
    return r.size() == 0 ? 0 : static_cast<int>(r.Int(0, 0));
  }

  Result<std::optional<BillingImport>> FindBillingImport(const std::string& provider,
                                                         const std::string& digest) const override {
    static const std::string sql = std::string("SELECT ") + schema::kBillingImportColumns +
                                   " FROM billing_imports WHERE provider = $1 AND digest = $2";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(provider).Add(digest)));
    return ReadFirst(r, &ReadBillingImport);
  }

  Result<std::vector<BillingImport>> ListBillingImports() const override {
    static const std::string sql =
        std::string("SELECT ") + schema::kBillingImportColumns + " FROM billing_imports ORDER BY imported_at, id";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str()));
    return ReadAll(r, &ReadBillingImport);
  }

  Result<std::vector<BillingRollup>> ListBillingRollups(const std::string& import_id) const override {
    static const std::string sql = std::string("SELECT ") + schema::kBillingRollupColumns +
                                   " FROM billing_rollups WHERE import_id = $1 ORDER BY ctid";
    ASSIGN_OR_RETURN(Rows r, Query(sql.c_str(), Params().Add(import_id)));
    std::vector<BillingRollup> out;
    for (int row = 0; row < r.size(); ++row) {
      BillingRollup b;
      int i = 1;  // column 0 is the import's provider
      for (std::string* t : b.KeyFields()) *t = r.Text(row, i++);
      b.rows = r.Int(row, i++);
      for (Picos* v : b.Amounts()) {
        *v = schema::JoinPicos(r.Int(row, i), r.Int(row, i + 1));
        i += 2;
      }
      out.push_back(std::move(b));
    }
    return out;
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
