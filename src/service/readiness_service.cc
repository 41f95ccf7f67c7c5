#include "service/readiness_service.h"

namespace causeway {

Result<readiness::Snapshot> ReadinessService::Gather() const {
  readiness::Snapshot s;
  s.at = clock_.Now();
  ASSIGN_OR_RETURN(auto users, store_.ListDirectory("User"));
  for (const DirectoryEntry& u : users) {
    if (u.active) s.active_users.insert(u.name);
  }
  ASSIGN_OR_RETURN(auto groups, store_.ListDirectory("Group"));
  for (const DirectoryEntry& g : groups) s.groups.insert(g.name);
  ASSIGN_OR_RETURN(auto grants, store_.ListBreakglass(s.at - std::chrono::hours(24 * 90)));
  for (const BreakglassRecord& b : grants) {
    ++s.breakglass_grants;
    s.breakglass_self_approved += !b.approved_by.empty() && b.approved_by == b.user ? 1 : 0;
  }
  ASSIGN_OR_RETURN(auto head, store_.GetAuditHead());
  s.audit_head_seq = head.seq;
  ASSIGN_OR_RETURN(CoverageReport coverage, audit_.Coverage(estate_.audit, s.at));
  for (const auto& b : coverage.buckets) s.buckets.push_back({b.provider, b.name, b.state, b.why});
  JobFilter latest;
  latest.limit = kJobsRead;
  ASSIGN_OR_RETURN(auto jobs, store_.ListJobs(latest));
  std::vector<std::string> ended;
  for (const JobRecord& j : jobs) {
    if (IsTerminal(j.state)) ended.push_back(j.id);
  }
  ASSIGN_OR_RETURN(auto sealed, store_.GetSealedRecords(ended));
  s.jobs_read = static_cast<int64_t>(jobs.size());
  s.ended_jobs = static_cast<int64_t>(ended.size());
  s.sealed_jobs = static_cast<int64_t>(sealed.size());
  return s;
}

Result<readiness::Report> ReadinessService::Report() const {
  ASSIGN_OR_RETURN(readiness::Snapshot s, Gather());
  return readiness::Evaluate(estate_, s);
}

}  // namespace causeway
