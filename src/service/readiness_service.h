// Readiness (docs/readiness.md): reads what Causeway knows (the directory,
// break-glass grants, the audit chain's head, the latest jobs' provenance
// records) into a Snapshot, then evaluates every control per provider
// (readiness/evaluate.h). Reads only; no HTTP.
#pragma once

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "readiness/evaluate.h"
#include "service/audit_service.h"

namespace causeway {

class ReadinessService {
 public:
  // How many of the latest jobs the reproducibility evidence reads.
  static constexpr int kJobsRead = 1000;

  ReadinessService(const Store& store, const Estate& estate, const Clock& clock, const AuditService& audit)
      : store_(store), estate_(estate), clock_(clock), audit_(audit) {}

  Result<readiness::Snapshot> Gather() const;
  // Every control × provider, evaluated now.
  Result<readiness::Report> Report() const;

 private:
  const Store& store_;
  const Estate& estate_;
  const Clock& clock_;
  const AuditService& audit_;
};

}  // namespace causeway
