// The WriteTx the SQLite store hands to each unit of a batch. The batch
// holds SQLite's write lock (BEGIN IMMEDIATE) throughout, so the chain's
// head read at its start stays the head, and each audit event is chained
// and written as it is appended.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "causeway/store.h"
#include "store/audit_chain.h"
#include "store/sqlite/sqlite_conn.h"

namespace causeway::sqlite {

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
  std::vector<int64_t> UnitSeqs() const;
  bool UnitChangedStateWithoutAudit() const { return unit_writes_ > 0 && unit_audits_ == 0; }
  const audit::ChainHead& head() const { return head_; }

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
  Result<std::optional<IdempotencyRecord>> ClaimIdempotency(const IdempotencyRecord& r) override;
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
  // Notes a successful state change for the fail-closed rule.
  Status Counted(Status st) {
    if (st.ok()) ++unit_writes_;
    return st;
  }
  // An UPDATE or DELETE of one thing: kNotFound (`what` not found) when it
  // touched no row.
  Status Touched(Status st, const std::string& what);

  Conn& conn_;
  audit::ChainHead head_;
  audit::ChainHead unit_start_head_;
  int unit_writes_ = 0;
  int unit_audits_ = 0;
};

}  // namespace causeway::sqlite
