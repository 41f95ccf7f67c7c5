// Readiness (docs/readiness.md): reads what Causeway knows (the directory,
// break-glass grants, the audit chain's head, the latest jobs' provenance
// records) into a Snapshot, then evaluates every control per provider
// (readiness/evaluate.h). Reads only; no HTTP.
#pragma once

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "readiness/evaluate.h"
#include "service/acceptance_service.h"
#include "service/audit_service.h"
#include "store/commit_queue.h"
#include "service/feed_readers.h"

namespace causeway {

class ReadinessService {
 public:
  // How many of the latest jobs the reproducibility evidence reads.
  static constexpr int kJobsRead = 1000;

  ReadinessService(const Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
                   const AuditService& audit, const AcceptanceService& acceptance, const FeedReaders& feed_readers)
      : store_(store),
        queue_(queue),
        estate_(estate),
        clock_(clock),
        audit_(audit),
        acceptance_(acceptance),
        feed_readers_(feed_readers) {}

  Result<readiness::Snapshot> Gather() const;
  // Every control × provider, evaluated now.
  Result<readiness::Report> Report() const;
  // Evaluates now and records every control whose state at a provider
  // differs from the states the last readiness.change event recorded (all
  // of them the first time), as one readiness.change event on resource
  // "readiness" with the changes and the states now. How many changed;
  // nothing is written when none did.
  Result<int> RecordChanges(const std::string& actor);

 private:
  void ReadJobs(const std::vector<JobRecord>& jobs, readiness::Snapshot& s) const;
  std::string LeftZone(const JobRecord& j, const std::string& zone, const Cluster& ran_on) const;
  Status ReadSpend(readiness::Snapshot& s) const;

  const Store& store_;
  CommitQueue& queue_;
  const Estate& estate_;
  const Clock& clock_;
  const AuditService& audit_;
  const AcceptanceService& acceptance_;
  const FeedReaders& feed_readers_;
};

}  // namespace causeway
