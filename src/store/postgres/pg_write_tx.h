// The WriteTx the PostgreSQL store hands to each unit of a batch, and how a
// batch runs on one connection.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "causeway/store.h"
#include "store/postgres/held_writes.h"
#include "store/postgres/pg_conn.h"

namespace causeway::pg {

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
std::vector<Committed> Uncommitted(std::vector<Status> statuses);

class PgWriteTx final : public WriteTx {
 public:
  PgWriteTx(Conn& conn, BatchMode mode) : conn_(conn), mode_(mode) {
    // Fast: the transaction opens with the first round trip.
    if (mode_ == BatchMode::kFast) held_.Statement("BEGIN");
  }

  // The held writes as one script, forgotten here.
  std::string TakeHeld() { return held_.Take(); }

  void BeginUnit(size_t index);
  bool UnitChangedStateWithoutAudit() const { return unit_writes_ > 0 && unit_audits_ == 0; }

  // Forgets the unit's held writes and audit events. Careful: the caller
  // rolls back to the unit's savepoint. Fast: rolls back to the unit's
  // savepoint if it took one (which also releases the row locks it took).
  // An error when only a careful run can tell the unit's true outcome: the
  // transaction failed before this unit's writes, or the unit failed after
  // an optimistic claim (with the key taken it may have gone another way).
  Status UndoUnit();

  // Ends the batch: the held writes, the batch's audit events chained onto
  // the head, COMMIT. The head row is locked (SELECT ... FOR UPDATE) in the
  // first of the two round trips, so writers of every replica queue only
  // for this last step and the commit, and the chain stays one line.
  Status Commit();

  // After Commit: each unit's statuses with the sequence numbers its audit
  // events were given (Commit numbers them as it chains them).
  std::vector<Committed> Results(std::vector<Status> statuses) const;

  Result<std::optional<JobRecord>> GetJob(const std::string& id) override;
  Status InsertJob(const JobRecord& j) override;
  Status UpdateJobState(const std::string& id, JobState state, Timestamp at) override;
  Status UpdateJobOwner(const std::string& id, const std::string& owner, Timestamp at) override;
  Status UpdateJobProgress(const JobRecord& j) override;
  Status PutAttempt(const Attempt& a) override;
  Status AddCheckpoint(Checkpoint& c) override;
  Status AddJobFact(JobFact& f) override;
  Status PutSealedRecord(const SealedRecord& r) override;
  Status AddJobEvent(const JobEvent& e) override;
  Result<std::optional<IdempotencyRecord>> ClaimIdempotency(const IdempotencyRecord& rec) override;
  Status RecordLaunch(const std::string& job_id, int attempt, const std::string& cluster, Timestamp at) override;

  Result<std::optional<TokenRecord>> GetToken(const std::string& id) override;
  Status InsertToken(const TokenRecord& t) override;
  Status SetTokenCreator(const std::string& id, const std::string& creator) override;
  Status RevokeToken(const std::string& id, Timestamp at) override;
  Status PutSigningKey(const SigningKeyRecord& k) override;

  Status AppendAudit(AuditEvent& e) override;
  Status AppendChange(const Change& c) override;
  Status PruneChanges(int64_t through_seq, Timestamp before) override;
  Result<bool> InsertImportedAudit(ImportedAuditEvent& e) override;
  Result<std::optional<std::string>> ImportedAuditText(const std::string& provider, const std::string& source,
                                                       const std::string& source_id) override;
  Result<std::vector<std::string>> ImportedAuditOn(const std::string& provider, const std::string& source,
                                                   const std::string& resource, int64_t through_ms, int limit) override;

  Status InsertBillingImport(const BillingImport& b, const std::vector<BillingRollup>& rollups) override;

  Result<std::optional<DirectoryEntry>> GetDirectoryEntry(const std::string& kind, const std::string& id) override;
  Status PutDirectoryEntry(const DirectoryEntry& d) override;
  Status DeleteDirectoryEntry(const std::string& kind, const std::string& id) override;

  Status PutBreakglass(const BreakglassRecord& b) override;
  Result<std::optional<BreakglassRecord>> GetBreakglass(const std::string& id) override;

  Status InsertDatasetVersion(const DatasetVersion& version, const std::string& manifest) override;
  Status PutDatasetReplica(const DatasetReplica& replica) override;
  Result<bool> AdvanceReplicaCharge(const std::string& digest, const std::string& location, Timestamp from,
                                    Timestamp to) override;
  Status InsertDataCharge(const DataCharge& charge) override;

  Status CheckLease(const std::string& name, const std::string& holder, int64_t epoch) override;

 private:
  // Holds a row for `into`; `row` is "($1, $2, ...)".
  Status Defer(const Into& into, const std::string& row, const Params& params);
  // A read: first the held writes, so the unit reads what it wrote.
  Result<Rows> Read(const char* sql, const Params& params = {});
  // A write whose answer the unit needs now.
  Result<Rows> Write(const char* sql, const Params& params);
  // An UPDATE or DELETE of one thing: kNotFound (`what` not found) when it
  // touched no row.
  Status WriteOne(const char* sql, const Params& params, const std::string& what);
  // Sends the held writes. Fast: once the unit's own writes are about to
  // reach the server, its savepoint goes first, where its writes begin.
  Status Flush(bool unit_writes);
  std::string SavepointName() const { return "u" + std::to_string(unit_index_); }

  Conn& conn_;
  const BatchMode mode_;
  std::vector<AuditEvent> audit_;                   // this batch's, in order
  std::vector<size_t> audit_units_;                 // the unit that appended each of audit_
  std::vector<std::pair<Change, size_t>> changes_;  // this batch's, each with its event's index in audit_
  size_t unit_changes_start_ = 0;
  std::string confirmed_lease_;  // locked FOR SHARE in this transaction
  HeldWrites held_;
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

}  // namespace causeway::pg
