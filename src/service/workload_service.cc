#include "service/workload_service.h"

namespace causeway {

namespace {

const Attempt* RunningAttempt(const JobDetail& job) {
  const Attempt* running = nullptr;
  for (const Attempt& a : job.attempts) {
    if (a.state == "running") running = &a;
  }
  return job.job.state == JobState::kRunning ? running : nullptr;
}

}  // namespace

Status WorkloadService::OwnerActive(const JobDetail& job) const {
  if (job.job.owner.empty()) return Status::Ok();
  // A person who left takes their work's credentials with them.
  ASSIGN_OR_RETURN(auto owner, directory_.FindDirectoryEntryByName("User", job.job.owner));
  if (owner && !owner->active) return PermissionDenied("the job's owner " + job.job.owner + " is deactivated");
  return Status::Ok();
}

Result<std::string> WorkloadService::Revoked(const JobDetail& job, std::optional<int> attempt) const {
  // What has ended is revoked; an attempt not recorded yet is one being
  // launched (its secrets are read with its token before it starts).
  if (IsTerminal(job.job.state)) return "job " + job.job.id + " has ended: its tokens died with it";
  if (attempt) {
    for (const Attempt& a : job.attempts) {
      if (a.number == *attempt && a.state != "running") {
        return "attempt " + std::to_string(*attempt) + " of job " + job.job.id + " has ended: its tokens died with it";
      }
    }
  }
  if (Status owner = OwnerActive(job); !owner.ok()) {
    if (owner.code() != Code::kPermissionDenied) return owner;
    return owner.message();
  }
  return std::string();
}

Result<identity::WorkloadToken> WorkloadService::Refresh(const JobDetail& job, const std::string& audience,
                                                          const std::string& actor) {
  if (!issuer_) return FailedPrecondition("workload identity is not configured");
  const Attempt* running = RunningAttempt(job);
  if (!running) return FailedPrecondition("job " + job.job.id + " has no running attempt: its tokens died with it");
  if (Status owner = OwnerActive(job); !owner.ok()) {
    return owner.code() == Code::kPermissionDenied ? owner.WithPrefix("its attempts get no new tokens") : owner;
  }
  const Timestamp now = clock_.Now();
  ASSIGN_OR_RETURN(identity::WorkloadToken minted,
                   issuer_->Mint(job.job, running->number, running->cluster, audience, now, running->started_at));
  AuditEvent e;
  e.time = now;
  e.actor = actor;
  e.action = "workload.token.issue";
  e.resource = "job/" + job.job.id;
  e.details = {{"attempt", running->number}, {"jti", minted.jti}, {"kid", minted.kid},
               {"audiences", minted.audiences}, {"expires_at", FormatRfc3339(minted.expires_at)}};
  RETURN_IF_ERROR(queue_.Run([e](WriteTx& tx) mutable -> Status { return tx.AppendAudit(e); }));
  return minted;
}

Status WorkloadService::RotateKeys(const std::string& actor) {
  if (!issuer_) return FailedPrecondition("workload identity is not configured");
  ASSIGN_OR_RETURN(WriteFn write, issuer_->RotateWrite(clock_.Now(), actor));
  return queue_.Run(write);
}

}  // namespace causeway
