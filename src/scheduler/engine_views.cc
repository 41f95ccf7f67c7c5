// What the engine says of its jobs and queues without changing them: why
// a job waits (in words), the explanation of one job, each queue's state and
// the running attempts.
#include <algorithm>
#include <tuple>
#include <unordered_set>

#include "scheduler/engine.h"

namespace causeway::scheduler {

Engine::Job::Wait Engine::WaitOf(const Job& j) const {
  if (j.wait == Job::Wait::kOther || j.cls < 0 || j.apart || j.queued_after_pass >= pass_) return j.wait;
  const NoRoom& m = classes_[static_cast<size_t>(j.cls)].no_room;
  return m.pass == pass_ && j.spec().priority <= m.priority ? m.why : j.wait;
}

std::string Engine::WaitingReason(const Job& j) const {
  switch (WaitOf(j)) {
    case Job::Wait::kNew: return "waiting for the next scheduling cycle";
    case Job::Wait::kBudget: return "team " + j.spec().team + " has spent its monthly budget; admissions resume next month";
    case Job::Wait::kNoRoom: return "quota allows it, but no eligible cluster has room for it now";
    case Job::Wait::kOther: return j.waiting;
    case Job::Wait::kQuota: break;
  }
  // Re-evaluate in words: what blocks it now.
  std::string out;
  const JobSpec& spec = j.spec();
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
  const JobSpec& spec = j.spec();
  Explanation out;
  out.job = job_id;
  out.state = !j.running ? "pending" : j.admitted_only ? "admitted" : "running";
  if (j.admitted_only) {
    out.waiting = "handed to " + j.cluster + ", waiting in its own queue to start" +
                  (j.backend_waiting.empty() ? "" : ": " + j.backend_waiting);
  }
  if (j.queue >= 0) out.queue = quota_.config(j.queue).name;
  if (!j.running) out.waiting = WaitingReason(j);
  if (auto at = QueuePosition(job_id)) std::tie(out.position, out.queued) = *at;
  if (options_.queue_depth && out.position > static_cast<int64_t>(options_.queue_depth) && WaitOf(j) == Job::Wait::kNew) {
    out.waiting = "position " + std::to_string(out.position) + " in its queue: a scheduling cycle tries at most " +
                  std::to_string(options_.queue_depth) +
                  " of a queue's jobs that cannot start, so it waits for jobs ahead of it to start or leave";
  }
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
      cand.data = c.data;
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

std::optional<std::pair<int64_t, int64_t>> Engine::QueuePosition(const std::string& job_id) const {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end() || it->second.running) return std::nullopt;
  const Job& j = it->second;
  const auto& queue = pending_[static_cast<size_t>(QueueSlot(j))];
  auto at = queue.find(PendingKey{-j.spec().priority, ToUnixMicros(j.input.created_at), j.input.id, nullptr});
  if (at == queue.end()) return std::nullopt;  // held for a pipeline step, not queued
  return std::pair<int64_t, int64_t>{std::distance(queue.begin(), at) + 1, static_cast<int64_t>(queue.size())};
}

std::vector<Engine::Queued> Engine::QueuedJobs(const std::string& queue, size_t offset, size_t limit) const {
  std::vector<Queued> out;
  for (size_t q = 0; q < quota_.queues(); ++q) {
    if (quota_.config(static_cast<int>(q)).name != queue) continue;
    const auto& pending = pending_[q];
    if (offset >= pending.size()) return out;
    for (auto it = std::next(pending.begin(), static_cast<std::ptrdiff_t>(offset)); it != pending.end() && out.size() < limit;
         ++it) {
      out.push_back({it->id, -it->neg_priority, FromUnixMicros(it->created)});
    }
    break;
  }
  return out;
}

EngineSnapshot Engine::Snapshot() const {
  EngineSnapshot s;
  s.now = now_;
  s.version = version_;
  s.month_spend = month_spend_;
  // Running attempts in the order they started (simulated backends place
  // restored attempts in the order given, so this comes closest to where
  // they are), then queued jobs, each pipeline step after the one it
  // waits for.
  std::vector<const Job*> order;
  order.reserve(jobs_.size());
  std::unordered_set<std::string> waits;
  for (const auto& [before, steps] : waiting_for_) waits.insert(steps.begin(), steps.end());
  for (const auto& [id, j] : jobs_) {
    if (waits.empty() || !waits.count(id)) order.push_back(&j);
  }
  // (A queued job's place is its priority, age and id, whatever order it
  // is handed over in: only the running ones need sorting.)
  auto queued = std::partition(order.begin(), order.end(), [](const Job* j) { return j->running; });
  std::sort(order.begin(), queued, [](const Job* a, const Job* b) {
    return std::tie(a->started, a->input.id) < std::tie(b->started, b->input.id);
  });
  for (size_t i = 0; i < order.size() && !waiting_for_.empty(); ++i) {
    auto w = waiting_for_.find(order[i]->input.id);
    if (w == waiting_for_.end()) continue;
    for (const std::string& id : w->second) {
      if (auto it = jobs_.find(id); it != jobs_.end()) order.push_back(&it->second);
    }
  }
  s.jobs.reserve(order.size());
  for (const Job* j : order) {
    HeldJob h{j->input, std::nullopt};
    h.input.not_before = j->not_before;
    if (!h.input.after.empty()) h.input.after_state = JobState::kPending;  // held until it succeeds
    auto g = j->input.group.empty() ? groups_.end() : groups_.find(j->input.group);
    if (g != groups_.end() && g->second.started) h.input.gang.clear();  // placed on its own now
    if (j->running) {
      h.attempt = RunningAttempt{j->attempt, j->cluster,  j->pool,          j->backend_id, j->flavor_name,
                                 j->reserved, j->started, j->admitted_only, j->gpus};
    }
    s.jobs.push_back(std::move(h));
  }
  return s;
}

std::vector<ActiveAttempt> Engine::RunningAttempts() const {
  std::vector<ActiveAttempt> out;
  for (const std::string& id : running_) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.admitted_only) continue;
    const Job& j = it->second;
    if (IsCpuFlavor(j.flavor_name)) continue;
    out.push_back(ActiveAttempt{id, j.attempt, j.spec().team, j.spec().owner, j.spec().labels, j.gpus,
                              j.cluster, j.price_micros, j.started});
  }
  return out;
}

}  // namespace causeway::scheduler
