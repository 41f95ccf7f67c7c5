// A store whose database can be made to fail, for tests of what services
// do when it does: it forwards every call to a real store and, while a
// failure is set, answers every read, or every unit of every commit, with
// it instead (as a database that went away or lost its disk would), with
// nothing written. Thread-safe: the commit queue's thread calls it too.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "causeway/store.h"

namespace causeway::testing {

class FaultyStore final : public Store {
 public:
  explicit FaultyStore(Store& real) : real_(real) {}

  void FailReads(Status st) {
    std::lock_guard<std::mutex> lock(mu_);
    read_failure_ = std::move(st);
  }
  void FailCommits(Status st) {
    std::lock_guard<std::mutex> lock(mu_);
    commit_failure_ = std::move(st);
  }
  // The database is back.
  void Heal() {
    std::lock_guard<std::mutex> lock(mu_);
    read_failure_ = Status::Ok();
    commit_failure_ = Status::Ok();
  }
  // Commits refused while failing.
  int refused_commits() const {
    std::lock_guard<std::mutex> lock(mu_);
    return refused_commits_;
  }

  std::vector<Committed> CommitBatch(const std::vector<const WriteFn*>& work) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!commit_failure_.ok()) {
        ++refused_commits_;
        std::vector<Committed> out(work.size());
        for (Committed& c : out) c.status = commit_failure_;
        return out;
      }
    }
    return real_.CommitBatch(work);
  }
  Result<int> SchemaVersion() const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.SchemaVersion();
  }
  Result<Lease> AcquireLease(const std::string& name, const std::string& holder, Micros ttl) override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.AcquireLease(name, holder, ttl);
  }

  Result<std::optional<JobRecord>> GetJob(const std::string& id) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.GetJob(id);
  }
  Result<std::vector<JobRecord>> GetJobs(const std::vector<std::string>& ids) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.GetJobs(ids);
  }
  Result<std::vector<JobRecord>> ListJobs(const JobFilter& filter) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListJobs(filter);
  }
  Result<std::vector<JobEvent>> ListJobEvents(const std::string& job_id) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListJobEvents(job_id);
  }
  Result<std::vector<Attempt>> ListAttempts(const std::string& job_id) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListAttempts(job_id);
  }
  Result<std::vector<MeteredAttempt>> ListAttemptsBetween(Timestamp from, Timestamp to) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListAttemptsBetween(from, to);
  }
  Result<std::vector<Checkpoint>> ListCheckpoints(const std::string& job_id) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListCheckpoints(job_id);
  }
  Result<std::vector<JobFact>> ListJobFacts(const std::string& job_id) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListJobFacts(job_id);
  }
  Result<std::vector<SealedRecord>> GetSealedRecords(const std::vector<std::string>& ids) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.GetSealedRecords(ids);
  }
  Result<std::vector<std::string>> ListUnsealedJobs(int limit) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListUnsealedJobs(limit);
  }
  Result<int> LastLaunch(const std::string& job_id) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.LastLaunch(job_id);
  }
  Result<std::optional<TokenRecord>> FindTokenByHash(const std::string& hash) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.FindTokenByHash(hash);
  }
  Result<std::vector<TokenRecord>> ListTokens() const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListTokens();
  }
  Result<std::vector<SigningKeyRecord>> ListSigningKeys() const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListSigningKeys();
  }
  Result<std::vector<DirectoryEntry>> ListDirectory(const std::string& kind) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListDirectory(kind);
  }
  Result<std::vector<DirectoryEntry>> ListGroupsOf(const std::string& member_id) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListGroupsOf(member_id);
  }
  Result<std::optional<DirectoryEntry>> FindDirectoryEntry(const std::string& kind, const std::string& id) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.FindDirectoryEntry(kind, id);
  }
  Result<std::optional<DirectoryEntry>> FindDirectoryEntryByName(const std::string& kind, const std::string& name) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.FindDirectoryEntryByName(kind, name);
  }
  Result<std::vector<AuditEvent>> ListAudit(const AuditFilter& filter) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListAudit(filter);
  }
  Result<std::vector<Change>> ListChanges(int64_t after_seq, int limit) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListChanges(after_seq, limit);
  }
  Result<std::vector<ImportedAuditEvent>> SearchImportedAudit(const ImportedAuditQuery& query) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.SearchImportedAudit(query);
  }
  Result<std::vector<ImportedAuditEvent>> ListImportedAuditSince(int64_t after_id, int limit) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListImportedAuditSince(after_id, limit);
  }
  Result<std::vector<ImportedSource>> ListImportedSources() const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListImportedSources();
  }
  Status ScanAudit(const std::function<bool(const AuditEvent&)>& fn) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ScanAudit(fn);
  }
  Status ScanAuditRaw(const std::function<bool(const audit::RawAuditEvent&)>& fn) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ScanAuditRaw(fn);
  }
  Result<audit::ChainHead> GetAuditHead() const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.GetAuditHead();
  }
  Result<AuditRange> GetAuditRange(const std::string& resource) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.GetAuditRange(resource);
  }
  Result<std::optional<BillingImport>> FindBillingImport(const std::string& digest) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.FindBillingImport(digest);
  }
  Result<std::vector<BillingImport>> ListBillingImports() const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListBillingImports();
  }
  Result<std::vector<BillingRollup>> ListBillingRollups(const std::string& import_id) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListBillingRollups(import_id);
  }
  Result<std::vector<BillingTotal>> QueryBilling(const BillingQuery& query) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.QueryBilling(query);
  }
  Result<std::vector<BreakglassRecord>> ListBreakglass(Timestamp since) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListBreakglass(since);
  }
  Result<std::vector<DatasetVersion>> ListDatasetVersions(const std::string& dataset) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListDatasetVersions(dataset);
  }
  Result<std::optional<std::string>> GetDatasetManifest(const std::string& digest) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.GetDatasetManifest(digest);
  }
  Result<std::vector<DatasetReplica>> ListDatasetReplicas(const std::string& digest) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListDatasetReplicas(digest);
  }
  Result<std::vector<DataCharge>> ListDataCharges(const std::string& job_id, Timestamp from,
                                                  Timestamp to) const override {
    if (Status st = ReadFailure(); !st.ok()) return st;
    return real_.ListDataCharges(job_id, from, to);
  }

 private:
  Status ReadFailure() const {
    std::lock_guard<std::mutex> lock(mu_);
    return read_failure_;
  }

  Store& real_;
  mutable std::mutex mu_;
  Status read_failure_;
  Status commit_failure_;
  int refused_commits_ = 0;
};

}  // namespace causeway::testing
