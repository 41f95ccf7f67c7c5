#include "service/readiness_service.h"

#include <nlohmann/json.hpp>

#include "causeway/text.h"
#include "policy/policy.h"
#include "readiness/key_scan.h"
#include "readiness/residency.h"
#include "spec/spec_json.h"

namespace causeway {

// Per provider, what the latest jobs that ran carried: static cloud keys in
// the environment Causeway passed (their envs, their secrets' names, what
// their cluster injects), federated identities, and images pinned by digest.
void ReadinessService::ReadJobs(const std::vector<JobRecord>& jobs, readiness::Snapshot& s) const {
  for (const JobRecord& j : jobs) {
    const Cluster* cluster = estate_.FindCluster(j.cluster);
    if (!cluster) continue;  // not run yet
    auto spec = StoredSpec(j);
    if (!spec.ok()) continue;  // counted by the scheduler, which cannot adopt it either
    readiness::Snapshot::ProviderJobs& p = s.jobs_by_provider[cluster->provider];
    ++p.ran;
    std::map<std::string, std::string> envs = cluster->inject_envs;
    for (const auto& [k, v] : spec->envs) envs[k] = v;
    auto keys = readiness::ScanForStaticKeys(envs, spec->secrets);
    if (!keys.empty()) {
      ++p.static_keys;
      if (p.example.empty()) p.example = j.id + ": " + keys.front().variable + " (" + keys.front().kind + ")";
    }
    if (!policy::FederationsFor(*spec, estate_.identity).empty()) ++p.federated;
    if (!spec->secrets.empty()) ++p.with_secrets;
    if (!spec->secret_refs.empty()) ++p.by_reference;
    if (!spec->image_id.empty()) {
      ++p.with_image;
      p.pinned += spec->image_id.find("@sha256:") != std::string::npos ? 1 : 0;
    }
    if (!spec->residency.empty()) {
      ++p.zone_bound;
      std::string left = LeftZone(j, spec->residency, *cluster);
      if (!left.empty()) {
        ++p.left_zone;
        if (p.left_example.empty()) p.left_example = j.id + ": " + left;
      }
    }
  }
}

// How a job bound to `zone` left it: it ran outside the zone, or one of
// its checkpoints is not shown to be in it; "" when neither.
std::string ReadinessService::LeftZone(const JobRecord& j, const std::string& zone, const Cluster& ran_on) const {
  if (ran_on.zone != zone) return "ran on " + ran_on.name + " in zone " + ran_on.zone;
  auto checkpoints = store_.ListCheckpoints(j.id);
  if (!checkpoints.ok()) return "";
  for (const Checkpoint& c : *checkpoints) {
    if (!readiness::ResidencyBreach(estate_, zone, c.path, ran_on.name).empty()) return "checkpoint " + Utf8Prefix(c.path, 200);
  }
  return "";
}

// Billed amounts of the last 90 days per provider, and the part with an owner.
Status ReadinessService::ReadSpend(readiness::Snapshot& s) const {
  BillingQuery q;
  q.group_by = {BillingDim::kProvider, BillingDim::kOwner};
  q.from_day = FormatRfc3339(s.at - std::chrono::hours(24 * 90)).substr(0, 10);
  ASSIGN_OR_RETURN(auto totals, store_.QueryBilling(q));
  for (const BillingTotal& t : totals) {
    readiness::Snapshot::Spend& spend = s.spend_by_provider[t.keys.at(0)];
    if (spend.currency.empty()) spend.currency = t.currency;
    if (t.currency != spend.currency) continue;
    auto micros = static_cast<int64_t>(t.billed / 1'000'000);
    spend.billed_micros += micros;
    spend.owned_micros += t.keys.at(1).empty() ? 0 : micros;
  }
  return Status::Ok();
}

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
  ReadJobs(jobs, s);
  RETURN_IF_ERROR(ReadSpend(s));
  for (const FeedReaders::Reader& r : feed_readers_.All()) s.exporters.push_back({r.reader, r.delivered_seq, r.at});
  ASSIGN_OR_RETURN(auto runs, acceptance_.Latest());
  for (const auto& [test, run] : runs) {
    readiness::AcceptanceResult a{run.passed, run.finished, run.seq, run.provider, "", run.recovery_ms, run.objective_ms};
    for (const AcceptanceStep& step : run.steps) {
      if (step.result == "fail" && a.failed_step.empty()) a.failed_step = step.name + ": " + step.detail;
    }
    s.acceptance[test] = std::move(a);
  }
  s.jobs_read = static_cast<int64_t>(jobs.size());
  s.ended_jobs = static_cast<int64_t>(ended.size());
  s.sealed_jobs = static_cast<int64_t>(sealed.size());
  return s;
}

Result<int> ReadinessService::RecordChanges(const std::string& actor) {
  ASSIGN_OR_RETURN(readiness::Report report, Report());
  // The states as last recorded.
  std::map<std::string, std::string> before;
  ASSIGN_OR_RETURN(auto last, LatestAuditEvent(store_, "readiness", "readiness.change"));
  if (const Details* states = last ? last->details.Object("states") : nullptr) {
    for (const auto& [key, value] : *states) {
      if (const std::string* s = value.AsString()) before[key] = *s;
    }
  }
  Details states;
  DetailValue::List changes;
  for (const readiness::Finding& f : report.findings) {
    std::string key = f.control + "@" + f.provider;
    std::string now(readiness::StateCode(f.state));
    states.Set(key, now);
    auto was = before.find(key);
    if (was != before.end() && was->second == now) continue;
    changes.emplace_back(Details{{"control", f.control},
                                 {"provider", f.provider},
                                 {"from", was == before.end() ? "unrecorded" : was->second},
                                 {"to", now},
                                 {"reason", Utf8Prefix(f.reason, 300)}});
  }
  if (changes.empty()) return 0;
  int count = static_cast<int>(changes.size());
  AuditEvent e;
  e.time = clock_.Now();
  e.actor = actor;
  e.action = "readiness.change";
  e.resource = "readiness";
  e.details = Details{{"changed", count}, {"changes", std::move(changes)}, {"states", std::move(states)}};
  ASSIGN_OR_RETURN(auto seqs, queue_.RunAudited([e](WriteTx& tx) mutable -> Status { return tx.AppendAudit(e); }));
  if (seqs.size() != 1) return Internal("recording readiness changes committed " + std::to_string(seqs.size()) + " events");
  return count;
}

Result<readiness::Report> ReadinessService::Report() const {
  ASSIGN_OR_RETURN(readiness::Snapshot s, Gather());
  return readiness::Evaluate(estate_, s);
}

}  // namespace causeway
