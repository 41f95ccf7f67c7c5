#include "cost/waste.h"

#include <algorithm>
#include <map>

#include "cost/focus.h"
#include "cost/metering.h"

namespace causeway::cost {
namespace {

int64_t OverlapSeconds(Timestamp a0, Timestamp a1, Timestamp b0, Timestamp b1) {
  Timestamp lo = std::max(a0, b0), hi = std::min(a1, b1);
  return hi > lo ? (ToUnixMicros(hi) - ToUnixMicros(lo)) / 1'000'000 : 0;
}

}  // namespace

Result<WasteReport> Waste(const Store& store, const Estate& estate, const std::string& from_day,
                          const std::string& to_day, Timestamp now, const WasteOptions& options) {
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
    if (!m.attempt.ended_at || AttemptFinishedTheWork(m.attempt.state)) continue;
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
      const Details& d = e.details;
      TeamWaste& t = team(d.String("team"));
      if (d.Bool("dry_run")) {
        ++t.dry_run_reaps;
        continue;
      }
      int64_t gpu_seconds = d.Int("gpus") * d.Int("idle_seconds");
      ++t.reaped_jobs;
      t.idle_gpu_seconds += gpu_seconds;
      ASSIGN_OR_RETURN(Money cost,
                       Money::Scale(Money(d.Int("price_micros"), estate.currency), gpu_seconds, 3600));
      t.idle_cost_micros += cost.micros();
    }
    if (static_cast<int>(events.size()) < f.limit) break;
    f.after_seq = events.back().seq;
  }

  // Reservations: the capacity paid for, within the period and up to now,
  // against the reserved attempts that ran on it.
  // Up to now, or to the last moment the ledger knows if later (a simulated
  // estate's clock may run ahead of the wall's).
  WasteReport out;
  Timestamp horizon = now;
  for (const MeteredAttempt& m : metered.attempts) horizon = std::max(horizon, m.attempt.ended_at.value_or(now));
  const Timestamp end = std::min(metered.to, horizon);
  std::map<std::pair<std::string, std::string>, ReservationUse> groups;  // (cluster, GPU type)
  for (const Reservation& r : estate.reservations) {
    int64_t seconds = OverlapSeconds(r.start, r.end, metered.from, end);
    if (seconds <= 0) continue;
    ReservationUse& g = groups[{r.cluster, r.gpu_type}];
    g.cluster = r.cluster;
    g.gpu_type = r.gpu_type;
    g.names.push_back(r.name);
    g.reserved_gpu_seconds += r.count * seconds;
    ASSIGN_OR_RETURN(Money committed, Money::Scale(r.price, r.count * seconds, 3600));
    g.committed_micros += committed.micros();
  }
  std::map<std::pair<std::string, std::string>, std::map<std::string, int64_t>> used_by_team;
  for (const MeteredAttempt& m : metered.attempts) {
    auto g = m.attempt.reserved ? groups.find({m.attempt.cluster, m.attempt.flavor}) : groups.end();
    if (g == groups.end()) continue;
    int64_t used = OverlapSeconds(m.attempt.started_at, m.attempt.ended_at.value_or(now), metered.from, end) *
                   m.attempt.gpus;
    if (used <= 0) continue;
    g->second.used_gpu_seconds += used;
    used_by_team[g->first][m.team] += used;
  }
  for (auto& [key, g] : groups) {
    const int64_t unused = std::max<int64_t>(0, g.reserved_gpu_seconds - g.used_gpu_seconds);
    g.unused_micros = static_cast<int64_t>(static_cast<__int128>(g.committed_micros) * unused / g.reserved_gpu_seconds);
    g.unallocated_micros = g.unused_micros;
    std::vector<std::string> names;
    std::vector<Picos> weights;
    if (options.share == ShareRule::kProportional) {
      for (const auto& [name, used] : used_by_team[key]) names.push_back(name), weights.push_back(used);
    } else if (options.share == ShareRule::kEven) {
      for (const Team& t : estate.teams) names.push_back(t.name), weights.push_back(1);
    }
    if (names.empty() || g.unused_micros == 0) continue;
    // Whole micro-units: split as if each were a nano (SplitExact's unit).
    std::vector<Picos> shares = SplitExact(static_cast<Picos>(g.unused_micros) * 1000, weights);
    for (size_t i = 0; i < names.size(); ++i) team(names[i]).unused_reserved_share_micros += shares[i] / 1000;
    g.unallocated_micros = 0;
  }
  for (auto& [key, g] : groups) out.reservations.push_back(std::move(g));

  out.currency = estate.currency;
  for (auto& [name, t] : teams) out.teams.push_back(std::move(t));
  ASSIGN_OR_RETURN(auto bills, store.QueryBilling(BillingQuery{{BillingDim::kCommitmentStatus}, from_day, to_day, ""}));
  for (const BillingTotal& b : bills) {
    if (b.keys[0] == "Unused") out.unused_commitments.emplace_back(b.currency, b.effective);
  }
  return out;
}

}  // namespace causeway::cost
