#include "cost/waste.h"

#include <map>

#include "cost/focus.h"
#include "cost/metering.h"

namespace causeway::cost {
namespace {

bool FinishedTheWork(const std::string& state) {
  return state == "succeeded" || state == "running" || state == "admitted" || state == "cancelled";
}

}  // namespace

Result<WasteReport> Waste(const Store& store, const Estate& estate, const std::string& from_day,
                          const std::string& to_day, Timestamp now) {
  std::map<std::string, TeamWaste> teams;
  auto team = [&](const std::string& name) -> TeamWaste& {
    TeamWaste& t = teams[name];
    t.team = name;
    return t;
  };

  // Attempts that ended without finishing the work. A cancel is the
  // owner's decision, not waste; a reaped one is counted below.
  ASSIGN_OR_RETURN(MeteredPeriod metered, MeterPeriod(store, estate, from_day, to_day, now));
  std::map<std::pair<std::string, int>, bool> counted;
  for (const MeteredDay& d : metered.days) {
    const MeteredAttempt& m = *d.source;
    if (!m.attempt.ended_at || FinishedTheWork(m.attempt.state)) continue;
    TeamWaste& t = team(m.team);
    if (!counted[{m.attempt.job_id, m.attempt.number}]) {
      counted[{m.attempt.job_id, m.attempt.number}] = true;
      ++t.failed_attempts;
    }
    t.failed_gpu_seconds += d.gpu_seconds;
    t.failed_cost_micros += d.cost_micros;
  }

  // Idle time the reaper caught.
  AuditFilter f;
  f.action = "reaper.cancel";
  f.since = metered.from;
  f.limit = 1000;
  for (;;) {
    ASSIGN_OR_RETURN(auto events, store.ListAudit(f));
    for (const AuditEvent& e : events) {
      if (e.time >= metered.to) continue;
      const nlohmann::json& d = e.details;
      TeamWaste& t = team(d.value("team", std::string()));
      if (d.value("dry_run", false)) {
        ++t.dry_run_reaps;
        continue;
      }
      int64_t gpu_seconds = d.value("gpus", int64_t{0}) * d.value("idle_seconds", int64_t{0});
      ++t.reaped_jobs;
      t.idle_gpu_seconds += gpu_seconds;
      ASSIGN_OR_RETURN(Money cost,
                       Money::Scale(Money(d.value("price_micros", int64_t{0}), estate.currency), gpu_seconds, 3600));
      t.idle_cost_micros += cost.micros();
    }
    if (static_cast<int>(events.size()) < f.limit) break;
    f.after_seq = events.back().seq;
  }

  WasteReport out;
  out.currency = estate.currency;
  for (auto& [name, t] : teams) out.teams.push_back(std::move(t));
  ASSIGN_OR_RETURN(auto bills, store.QueryBilling(BillingQuery{{BillingDim::kCommitmentStatus}, from_day, to_day, ""}));
  for (const BillingTotal& b : bills) {
    if (b.keys[0] == "Unused") out.unused_commitments.emplace_back(b.currency, b.effective);
  }
  return out;
}

}  // namespace causeway::cost
