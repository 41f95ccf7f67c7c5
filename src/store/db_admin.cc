#include "store/db_admin.h"

#include "causeway/clock.h"
#include "causeway/store.h"

namespace causeway {
namespace {

Result<DbReport> Report(const Store& store, const std::string& db) {
  DbReport r;
  r.db = DescribeDb(db);
  r.latest_version = kLatestSchemaVersion;
  ASSIGN_OR_RETURN(r.schema_version, store.SchemaVersion());
  audit::ChainVerifier verifier;
  // The trail may be growing (a server running on it): the head before the
  // scan and after it bound what the scan must find.
  ASSIGN_OR_RETURN(auto before, store.GetAuditHead());
  verifier.Begin(before);
  RETURN_IF_ERROR(store.ScanAudit([&](const AuditEvent& e) { return verifier.Add(e); }));
  ASSIGN_OR_RETURN(auto head, store.GetAuditHead());
  r.chain = verifier.Finish(head);
  JobFilter all;
  all.limit = 1000;
  for (;;) {
    ASSIGN_OR_RETURN(auto page, store.ListJobs(all));
    r.jobs += static_cast<int64_t>(page.size());
    if (static_cast<int>(page.size()) < all.limit) break;
    all.before_id = page.back().id;
  }
  return r;
}

}  // namespace

Result<DbReport> Migrate(const std::string& db) {
  ASSIGN_OR_RETURN(auto store, OpenStore(db, false));
  return Report(*store, db);
}

Result<DbReport> CheckDb(const std::string& db) {
  ASSIGN_OR_RETURN(auto store, OpenStore(db, true));
  return Report(*store, db);
}

Result<DbReport> CopyDb(const std::string& from, const std::string& to,
                        const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& what) {
    if (progress) progress(what);
  };
  ASSIGN_OR_RETURN(auto source, OpenStore(from, true));
  ASSIGN_OR_RETURN(auto target, OpenStore(to, false));
  ASSIGN_OR_RETURN(auto target_head, target->GetAuditHead());
  JobFilter probe;
  probe.limit = 1;
  ASSIGN_OR_RETURN(auto target_jobs, target->ListJobs(probe));
  if (target_head.seq != 0 || !target_jobs.empty()) {
    return FailedPrecondition("the target " + DescribeDb(to) + " is not empty: it holds jobs or audit events");
  }
  // The source must be intact: a broken chain is not copied into a new home.
  ASSIGN_OR_RETURN(DbReport before, Report(*source, from));
  if (!before.chain.ok) {
    return DataLoss("the source's audit chain is broken at seq " + std::to_string(before.chain.first_bad_seq) + ": " +
                    before.chain.reason);
  }

  int64_t jobs = 0, events = 0;
  Status copied = target->Write([&](WriteTx& tx) -> Status {
    JobFilter page;
    page.limit = 500;
    for (;;) {
      ASSIGN_OR_RETURN(auto list, source->ListJobs(page));
      for (const JobRecord& job : list) {
        RETURN_IF_ERROR(tx.InsertJob(job));
        RETURN_IF_ERROR(tx.UpdateJobProgress(job));
        ASSIGN_OR_RETURN(auto job_events, source->ListJobEvents(job.id));
        for (const auto& e : job_events) RETURN_IF_ERROR(tx.AddJobEvent(e));
        ASSIGN_OR_RETURN(auto attempts, source->ListAttempts(job.id));
        for (const auto& a : attempts) RETURN_IF_ERROR(tx.PutAttempt(a));
        ASSIGN_OR_RETURN(auto checkpoints, source->ListCheckpoints(job.id));
        for (Checkpoint c : checkpoints) RETURN_IF_ERROR(tx.AddCheckpoint(c));
        ASSIGN_OR_RETURN(auto facts, source->ListJobFacts(job.id));
        for (JobFact f : facts) RETURN_IF_ERROR(tx.AddJobFact(f));
        ASSIGN_OR_RETURN(auto sealed, source->GetSealedRecords({job.id}));
        for (const SealedRecord& r : sealed) RETURN_IF_ERROR(tx.PutSealedRecord(r));
        ++jobs;
      }
      if (static_cast<int>(list.size()) < page.limit) break;
      page.before_id = list.back().id;
    }
    say("copied " + std::to_string(jobs) + " jobs");
    ASSIGN_OR_RETURN(auto tokens, source->ListTokens());
    for (const auto& t : tokens) RETURN_IF_ERROR(tx.InsertToken(t));
    say("copied " + std::to_string(tokens.size()) + " tokens");
    size_t entries = 0;
    for (const char* kind : {"User", "Group", "Binding", "IdentityLink"}) {
      ASSIGN_OR_RETURN(auto directory, source->ListDirectory(kind));
      for (const DirectoryEntry& d : directory) RETURN_IF_ERROR(tx.PutDirectoryEntry(d));
      entries += directory.size();
    }
    say("copied " + std::to_string(entries) + " directory users and groups");
    ASSIGN_OR_RETURN(auto keys, source->ListSigningKeys());
    for (const SigningKeyRecord& k : keys) RETURN_IF_ERROR(tx.PutSigningKey(k));
    ASSIGN_OR_RETURN(auto grants, source->ListBreakglass(Timestamp{}));
    for (const BreakglassRecord& b : grants) RETURN_IF_ERROR(tx.PutBreakglass(b));
    ASSIGN_OR_RETURN(auto bills, source->ListBillingImports());
    for (const BillingImport& b : bills) {
      ASSIGN_OR_RETURN(auto rollups, source->ListBillingRollups(b.id));
      RETURN_IF_ERROR(tx.InsertBillingImport(b, rollups));
    }
    say("copied " + std::to_string(bills.size()) + " imported bills");
    int64_t imported = 0;
    for (int64_t after = 0;;) {
      ASSIGN_OR_RETURN(auto page, source->ListImportedAuditSince(after, 1000));
      for (ImportedAuditEvent e : page) {
        after = e.id;
        ASSIGN_OR_RETURN(bool stored, tx.InsertImportedAudit(e));
        imported += stored ? 1 : 0;
      }
      if (page.size() < 1000) break;
    }
    say("copied " + std::to_string(imported) + " imported provider audit events");
    // Appended in order onto the empty chain, each event is re-linked to
    // the same predecessor and so must hash to exactly its original: checked
    // below, against the source's head.
    Status scan_error = Status::Ok();
    Status scanned = source->ScanAudit([&](const AuditEvent& original) {
      AuditEvent e = original;
      scan_error = tx.AppendAudit(e);
      ++events;
      return scan_error.ok();
    });
    RETURN_IF_ERROR(scanned);
    RETURN_IF_ERROR(scan_error);
    say("copied " + std::to_string(events) + " audit events, chain intact");
    AuditEvent mark;
    mark.time = RealClock().Now();
    mark.actor = "causeway db copy";
    mark.action = "db.copy";
    mark.resource = "database";
    mark.details = {{"from", DescribeDb(from)}, {"jobs", jobs}, {"events", events},
                    {"bills", static_cast<int64_t>(bills.size())}};
    return tx.AppendAudit(mark);
  });
  RETURN_IF_ERROR(copied);
  ASSIGN_OR_RETURN(auto source_head, source->GetAuditHead());
  if (source_head.seq > 0) {
    AuditFilter at;
    at.after_seq = source_head.seq - 1;
    at.limit = 1;
    ASSIGN_OR_RETURN(auto carried, target->ListAudit(at));
    if (carried.empty() || carried[0].hash != source_head.hash) {
      return DataLoss("the copied chain does not end where the source's does (seq " + std::to_string(source_head.seq) +
                      "): the copy is not faithful");
    }
  }
  return Report(*target, to);
}

}  // namespace causeway
