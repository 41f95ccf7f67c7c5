// What the engine says of its jobs and queues without changing them: why
// a job waits (in words), the explanation of one job, each queue's state and
// the running attempts.
#include "scheduler/engine.h"

namespace causeway::scheduler {

std::string Engine::WaitingReason(const Job& j) const {
  switch (j.wait) {
    case Job::Wait::kNew: return "waiting for the next scheduling cycle";
    case Job::Wait::kBudget: return "team " + j.input.spec.team + " has spent its monthly budget; admissions resume next month";
    case Job::Wait::kNoRoom: return "quota allows it, but no eligible cluster has room for it now";
    case Job::Wait::kOther: return j.waiting;
    case Job::Wait::kQuota: break;
  }
  // Re-evaluate in words: what blocks it now.
  std::string out;
  const JobSpec& spec = j.input.spec;
  for (const auto& g : spec.accelerators.alternatives) {
    int64_t gpus = static_cast<int64_t>(g.count) * spec.num_nodes;
    auto chk = quota_.Evaluate(j.queue, quota_.FlavorIndex(FlavorName(g, g.use_spot)), gpus, true);
    out += (out.empty() ? "" : "; ") + chk.reason;
  }
  return out;
}

std::optional<Explanation> Engine::Explain(const std::string& job_id) const {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return std::nullopt;
  const Job& j = it->second;
  const JobSpec& spec = j.input.spec;
  Explanation out;
  out.job = job_id;
  out.state = !j.running ? "pending" : j.admitted_only ? "admitted" : "running";
  if (j.admitted_only) out.waiting = "handed to " + j.cluster + ", waiting in its own queue to start";
  if (j.queue >= 0) out.queue = quota_.config(j.queue).name;
  if (!j.running) out.waiting = WaitingReason(j);
  if (!j.placement.empty()) out.placement = j.placement;
  for (const auto& g : spec.accelerators.alternatives) {
    Explanation::Alternative a;
    a.accelerators = g.Describe();
    a.nodes = spec.num_nodes;
    a.flavor = FlavorName(g, g.use_spot);
    a.gpus = static_cast<int64_t>(g.count) * spec.num_nodes;
    if (j.queue >= 0 && !j.running) {
      auto chk = quota_.Evaluate(j.queue, quota_.FlavorIndex(a.flavor), a.gpus, true);
      static const char* kVerdicts[] = {"fits", "borrows", "needs_reclaim", "no_fit"};
      a.quota_verdict = kVerdicts[static_cast<int>(chk.verdict)];
      a.quota_reason = chk.reason;
    }
    out.alternatives.push_back(std::move(a));
  }
  placement::Resume resume{j.input.resume_from, j.input.resume_cluster};
  for (const auto& c : router_.Explain(spec, this, resume.path.empty() ? nullptr : &resume)) {
    Explanation::Candidate cand;
    cand.cluster = c.option.cluster->name;
    cand.accelerators = spec.accelerators.alternatives[static_cast<size_t>(c.option.alternative)].Describe();
    cand.eligible = c.eligible;
    if (c.option.pool) cand.pool = c.option.pool->name;
    if (c.eligible) {
      cand.reserved = c.option.reserved;
      cand.price_per_gpu_hour = Money(std::max<int64_t>(0, c.option.price_micros), estate_.currency).AmountString();
      cand.data_local = c.option.data_local;
      cand.load_percent = c.option.load_permille / 10;
    } else {
      cand.reason = c.failure;
    }
    out.candidates.push_back(std::move(cand));
  }
  return out;
}

std::vector<QueueStatus> Engine::Queues() const {
  std::vector<QueueStatus> out;
  for (size_t q = 0; q < quota_.queues(); ++q) {
    const int qi = static_cast<int>(q);
    const QueueConfig& cfg = quota_.config(qi);
    QueueStatus s;
    s.name = cfg.name;
    s.team = cfg.team;
    s.cohort = cfg.cohort;
    s.weight = cfg.weight;
    for (const auto& fq : cfg.quotas) {
      int64_t used = quota_.Used(qi, quota_.FlavorIndex(fq.flavor));
      s.flavors.push_back({fq.flavor, fq.nominal, used, std::max<int64_t>(0, used - fq.nominal)});
    }
    s.pending = static_cast<int64_t>(pending_[q].size());
    for (const auto& id : running_) s.running += jobs_.at(id).queue == qi;
    s.dominant_share_permille = quota_.DominantShare(qi) / 1000;
    const Team* team = estate_.FindTeam(cfg.team);
    if (team && team->budget) {
      s.budget = QueueStatus::Budget{
          team->budget->monthly.AmountString(),
          Money((TeamSpend(cfg.team, now_) + 5'000) / 10'000 * 10'000, estate_.currency).AmountString(),
          estate_.currency, exhausted_.count(cfg.team) > 0};
    }
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<ActiveAttempt> Engine::RunningAttempts() const {
  std::vector<ActiveAttempt> out;
  for (const std::string& id : running_) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.admitted_only) continue;
    const Job& j = it->second;
    if (IsCpuFlavor(j.flavor_name)) continue;
    out.push_back(ActiveAttempt{id, j.attempt, j.input.spec.team, j.input.spec.owner, j.input.spec.labels, j.gpus,
                              j.cluster, j.price_micros, j.started});
  }
  return out;
}

}  // namespace causeway::scheduler
