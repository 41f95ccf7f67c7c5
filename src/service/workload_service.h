// Workload identity for running attempts, behind the API's routes: a fresh
// token for a job's running attempt, recorded in the audit trail before it
// is handed out, and rotation of the signing keys. The issuer itself
// (identity/workload.h) keeps the keys and signs.
#pragma once

#include <optional>
#include <string>

#include "causeway/clock.h"
#include "causeway/records.h"
#include "causeway/store.h"
#include "causeway/status.h"
#include "identity/workload.h"
#include "service/job_service.h"
#include "store/commit_queue.h"

namespace causeway {

class WorkloadService {
 public:
  WorkloadService(const DirectoryReader& directory, CommitQueue& queue, const Clock& clock)
      : directory_(directory), queue_(queue), clock_(clock) {}

  // The issuer, when the estate configures workload identity (before the
  // first request). Without one every call is refused.
  void SetIssuer(identity::WorkloadIssuer* issuer) { issuer_ = issuer; }
  identity::WorkloadIssuer* issuer() const { return issuer_; }

  // A token for the running attempt of `job` for `audience` ("" for every
  // configured one), asked for by `actor`. kFailedPrecondition without an
  // issuer or when no attempt runs (tokens die with their attempt);
  // kPermissionDenied once the job's owner is deactivated in the directory
  // (work kept running under `deprovision.running: finish` gets no new
  // tokens: what it holds expires by itself); the
  // issue is in the audit trail before the token is returned, and a token
  // that cannot be recorded is not handed out (fail closed).
  Result<identity::WorkloadToken> Refresh(const JobDetail& job, const std::string& audience, const std::string& actor);

  // Whether a token of attempt `attempt` of `job` (nullopt: the token does
  // not say) is still good, for a third party that verified its signature
  // and asks before acting on it (an API server's authorization webhook):
  // "" when it is, else why not: the job has ended, that attempt has ended,
  // or its owner is deactivated. An attempt not recorded yet is being
  // launched (the broker reads its secrets with its token first). A signed
  // token cannot be called back; this is how its revocation reaches those
  // who ask.
  Result<std::string> Revoked(const JobDetail& job, std::optional<int> attempt) const;

  // Makes a new signing key; the old one stays published while tokens it
  // signed may live. Audited as `actor`.
  Status RotateKeys(const std::string& actor);

 private:
  // kPermissionDenied when the job's owner is deactivated in the directory.
  Status OwnerActive(const JobDetail& job) const;

  const DirectoryReader& directory_;
  CommitQueue& queue_;
  const Clock& clock_;
  identity::WorkloadIssuer* issuer_ = nullptr;
};

}  // namespace causeway
