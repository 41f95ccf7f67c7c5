// The engine's admission: which pending job goes next, where it goes
// (the cheapest alternative that quota and capacity allow, or room made by
// preemption), and its dispatch, as a short sequence of decisions.
#include <algorithm>
#include <cmath>
#include <queue>

#include "causeway/money.h"
#include "policy/policy.h"
#include "recovery/recovery.h"
#include "scheduler/engine.h"

namespace causeway::scheduler {

// The queue with the lowest dominant share goes next.
void Engine::AdmitPending(Timestamp now, std::vector<Transition>& out) {
  ++pass_;
  using Entry = std::pair<int64_t, int>;  // share, queue slot
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> order;
  std::vector<std::set<PendingKey>::iterator> cursor(pending_.size());
  std::vector<size_t> misses(pending_.size(), 0);  // jobs tried that did not start, per queue
  auto share = [&](int slot) { return slot < static_cast<int>(quota_.queues()) ? quota_.DominantShare(slot) : 0; };
  for (size_t s = 0; s < pending_.size(); ++s) {
    unknown_[s] = counted_[s];
    cursor[s] = pending_[s].begin();
    if (!pending_[s].empty()) order.push({share(static_cast<int>(s)), static_cast<int>(s)});
  }
  while (!order.empty()) {
    auto [sh, slot] = order.top();
    order.pop();
    if (sh != share(slot)) {  // its share moved since it was queued
      order.push({share(slot), slot});
      continue;
    }
    auto& set = pending_[static_cast<size_t>(slot)];
    auto& it = cursor[static_cast<size_t>(slot)];
    const bool strict = slot < static_cast<int>(quota_.queues()) && quota_.config(slot).strict_fifo;
    // The queue's jobs in turn while nothing changes: a job that did not
    // start changed no share, so its queue is still the one to serve.
    while (it != set.end()) {
      auto next = std::next(it);
      const size_t reported = out.size();
      bool admitted = false;
      Job& j = *it->job;
      // Refused unseen (the job itself is not read): its demand found no room in this pass.
      const bool known = KnownNoRoom(*it);
      auto group = known || j.input.group.empty() ? groups_.end() : groups_.find(j.input.group);
      if (known) {
        ++decisions_;
        it = next;
      } else if (group != groups_.end() && !group->second.started) {
        // Once per cycle for the whole gang, whichever of its tasks comes
        // first. Its start takes tasks out of any queue: every cursor is found
        // again by the job it points at.
        it = next;
        if (group->second.tried != ticks_) {
          std::vector<std::optional<PendingKey>> at(pending_.size());
          for (size_t s = 0; s < pending_.size(); ++s) {
            if (cursor[s] != pending_[s].end()) at[s] = *cursor[s];
          }
          admitted = TryAdmitGang(group->second, now, out);
          for (size_t s = 0; s < pending_.size(); ++s) {
            cursor[s] = at[s] ? pending_[s].lower_bound(*at[s]) : pending_[s].end();
          }
        }
      } else {
        admitted = TryAdmit(j, now, out);
        it = next;
      }
      if (!admitted && strict) break;  // strict FIFO: nothing behind it goes first
      if (admitted || out.size() != reported) {
        order.push({share(slot), slot});
        break;
      }
      if (options_.queue_depth && ++misses[static_cast<size_t>(slot)] >= options_.queue_depth) break;
      if (options_.leave_known_queues && RestKnownNoRoom(static_cast<size_t>(slot), it)) break;  // the rest would be refused unseen
    }
  }
}

bool Engine::TryAdmit(Job& j, Timestamp now, std::vector<Transition>& out) {
  ++decisions_;
  if (now < j.not_before) return false;  // backing off after a failure; waiting says until when
  // Only a job with nothing of its own to route by (a checkpoint to resume,
  // a cluster to avoid) and outside a gang's start shares its verdict.
  const bool shares = j.input.resume_from.empty() && j.avoid.empty() && !gang_launch_;
  if (!exhausted_.empty() && exhausted_.count(j.spec().team)) {
    j.wait = Job::Wait::kBudget;
    if (shares) RememberNoRoom(j, Job::Wait::kBudget);
    return false;
  }
  // Only clusters that can read the checkpoint it resumes from qualify.
  std::optional<placement::Resume> resume_at;
  if (!j.input.resume_from.empty()) resume_at = placement::Resume{j.input.resume_from, j.input.resume_cluster};
  const placement::Resume* resume = resume_at ? &*resume_at : nullptr;

  Choice choice = Cheapest(j, resume);
  if (choice.best) return Dispatch(j, *choice.best, now, out);
  // Nothing fits as things are: preempt lower-priority work of the queue, or
  // reclaim quota that other queues of the cohort borrowed. Not for a job
  // group's start: what it preempted could not be undone when another of
  // its tasks does not fit.
  bool preempted = false;
  if (j.queue >= 0 && choice.quota_blocked && !gang_launch_) {
    std::optional<Pick> made = MakeRoom(j, resume, now, out, preempted);
    if (made) return Dispatch(j, *made, now, out);
  }
  const Job::Wait why = choice.quota_blocked ? Job::Wait::kQuota : Job::Wait::kNoRoom;
  if (j.wait != Job::Wait::kOther) j.wait = why;
  if (shares && !preempted) RememberNoRoom(j, why);
  return false;
}

Engine::Choice Engine::Cheapest(const Job& j, const placement::Resume* resume) const {
  const JobSpec& spec = j.spec();
  const auto& alts = spec.accelerators.alternatives;
  Choice c;
  for (int a = 0; a < static_cast<int>(alts.size()); ++a) {
    const Alternative& g = alts[static_cast<size_t>(a)];
    int64_t gpus = static_cast<int64_t>(g.count) * spec.num_nodes;
    int f = j.queue >= 0 ? quota_.FlavorIndex(FlavorName(g, g.use_spot)) : -1;
    int64_t borrowed = 0;
    if (j.queue >= 0) {
      auto chk = quota_.Evaluate(j.queue, f, gpus);
      if (!Admits(chk.verdict)) {
        c.quota_blocked = true;
        continue;
      }
      borrowed = chk.borrowed;
    }
    auto option = router_.Choose(spec, *this, [a](int i) { return i == a; }, j.avoid, resume);
    if (!option) continue;
    if (!c.best || Better(*option, c.best->option)) c.best = Pick{*option, f, borrowed};
    if (spec.accelerators.ordered) break;
  }
  return c;
}

std::optional<Engine::Pick> Engine::MakeRoom(Job& j, const placement::Resume* resume, Timestamp now,
                                             std::vector<Transition>& out, bool& preempted) {
  const JobSpec& spec = j.spec();
  const auto& prios = running_prio_[static_cast<size_t>(j.queue)];
  const bool lower_running = !prios.empty() && *prios.begin() < spec.priority;
  const auto& alts = spec.accelerators.alternatives;
  for (int a = 0; a < static_cast<int>(alts.size()); ++a) {
    const Alternative& g = alts[static_cast<size_t>(a)];
    int64_t gpus = static_cast<int64_t>(g.count) * spec.num_nodes;
    int f = quota_.FlavorIndex(FlavorName(g, g.use_spot));
    if (f < 0) continue;
    bool reclaim = quota_.Evaluate(j.queue, f, gpus).verdict == quota::QuotaBook::Verdict::kNeedsReclaim;
    if (!reclaim && !lower_running) continue;
    if (!router_.StaticallyPossible(spec, a)) continue;
    if (!Preempt(j, f, gpus, reclaim, now, out)) continue;
    preempted = true;
    auto again = quota_.Evaluate(j.queue, f, gpus);
    auto option = router_.Choose(spec, *this, [a](int i) { return i == a; }, "", resume);
    if (option && Admits(again.verdict)) return Pick{*option, f, again.borrowed};
  }
  return std::nullopt;
}

bool Engine::KnownNoRoom(const PendingKey& queued) const {
  if (queued.apart) return false;
  const NoRoom& hit = classes_[static_cast<size_t>(queued.cls)].no_room;
  return hit.pass == pass_ && -queued.neg_priority <= hit.priority;
}

void Engine::RememberNoRoom(const Job& j, Job::Wait why) {
  if (j.cls < 0) return;
  DemandClass& c = classes_[static_cast<size_t>(j.cls)];
  if (c.no_room.pass != pass_) {
    // Every counted job of this demand is now known: the queue's later
    // ones have no higher priority.
    unknown_[static_cast<size_t>(QueueSlot(j))] -= c.counted;
  } else if (j.spec().priority < c.no_room.priority) {
    return;
  }
  c.no_room = {pass_, j.spec().priority, why};
}

bool Engine::RestKnownNoRoom(size_t slot, std::set<PendingKey>::const_iterator next) const {
  if (unknown_[slot] != 0 || next == pending_[slot].end()) return false;
  const auto& apart = apart_[slot];
  return apart.empty() || *apart.rbegin() < *next;
}

bool Engine::TryAdmitGang(Group& g, Timestamp now, std::vector<Transition>& out) {
  g.tried = ticks_;
  auto wait_all = [&](const std::string& why) {
    for (const std::string& id : g.gang) {
      if (auto it = jobs_.find(id); it != jobs_.end()) {
        it->second.wait = Job::Wait::kOther;
        it->second.waiting = "job group " + g.name + ": its tasks start together; " + why;
      }
    }
  };
  for (const std::string& id : g.gang) {
    auto it = jobs_.find(id);
    if (it == jobs_.end() || it->second.running) {
      wait_all("task " + id + " has not been handed to the scheduler yet");
      return false;
    }
  }
  // Each task placed as it would be alone, its launch held; all undone when
  // one does not fit.
  const size_t mark = out.size();
  std::vector<std::pair<Job*, Job>> placed;  // the task, and what it was before
  const Job* blocker = nullptr;
  gang_launch_ = true;
  for (const std::string& id : g.gang) {
    Job& m = jobs_.at(id);
    Job before = m;
    m.wait = Job::Wait::kNew;
    m.waiting.clear();
    if (!TryAdmit(m, now, out)) {
      blocker = &m;
      break;
    }
    placed.emplace_back(&m, std::move(before));
  }
  gang_launch_ = false;
  if (blocker) {
    // In words while the others still hold their room: what it lacks.
    std::string why = "task " + (blocker->spec().name.empty() ? blocker->input.id : blocker->spec().name) +
                      " cannot start now: " + WaitingReason(*blocker);
    for (auto p = placed.rbegin(); p != placed.rend(); ++p) Undispatch(*p->first, std::move(p->second));
    out.resize(mark);
    wait_all(why);
    return false;
  }
  if (!options_.hold_launches) {  // no owner records them: this book is the record
    for (auto& [m, before] : placed) m->provider->Release(RecordedLaunch(HeldLaunch(m->input.id, m->attempt, m->cluster), {}));
  }
  g.gang.clear();
  g.started = true;
  return true;
}

void Engine::Undispatch(Job& j, Job before) {
  (void)j.provider->Cancel(j.input.id, j.attempt);  // held: it never reached the backend
  if (j.queue >= 0 && j.flavor >= 0) quota_.Remove(j.queue, j.flavor, j.gpus);
  if (j.reservation >= 0) reservation_used_[static_cast<size_t>(j.reservation)] -= j.gpus;
  RemoveRunning(j);
  j = std::move(before);
  Enqueue(j);
}

bool Engine::Preempt(Job& j, int f, int64_t gpus, bool reclaim, Timestamp now, std::vector<Transition>& out) {
  // Candidates: lower-priority work of this queue, or (reclaim) work of other
  // queues of the cohort that are borrowing this flavor. Cheapest to lose
  // first: lowest priority, then the most recently started.
  std::vector<Job*> candidates;
  auto bucket = [&](int q) -> const std::set<Job*>& {
    return running_qf_[static_cast<size_t>(q) * quota_.flavors() + static_cast<size_t>(f)];
  };
  if (!reclaim) {
    for (Job* r : bucket(j.queue)) {
      if (r->spec().priority < j.spec().priority) candidates.push_back(r);
    }
  } else {
    for (int q : quota_.CohortMembers(j.queue)) {
      if (q == j.queue || !quota_.Borrowing(q, f)) continue;
      for (Job* r : bucket(q)) candidates.push_back(r);
    }
  }
  std::sort(candidates.begin(), candidates.end(), [](const Job* a, const Job* b) {
    if (a->spec().priority != b->spec().priority) return a->spec().priority < b->spec().priority;
    if (a->started != b->started) return a->started > b->started;
    return a->input.id > b->input.id;
  });
  // Find the fewest victims that make room, by trying them out on the books.
  std::vector<Job*> victims;
  bool fits = false;
  for (Job* v : candidates) {
    if (reclaim && !quota_.Borrowing(v->queue, f)) continue;  // no longer borrowing: not reclaimable
    quota_.Remove(v->queue, f, v->gpus);
    victims.push_back(v);
    auto chk = quota_.Evaluate(j.queue, f, gpus);
    if (chk.verdict == quota::QuotaBook::Verdict::kFits || chk.verdict == quota::QuotaBook::Verdict::kBorrows) {
      fits = true;
      break;
    }
  }
  for (Job* v : victims) quota_.Add(v->queue, f, v->gpus);  // EndAttempt removes them for real
  if (!fits) return false;
  for (Job* v : victims) {
    (void)v->provider->Cancel(v->input.id, v->attempt);
    std::string why = reclaim ? "preempted: queue " + quota_.config(j.queue).name + " reclaimed quota its job " +
                                    j.input.id + " needs"
                              : "preempted by higher-priority job " + j.input.id + " (priority " +
                                    std::to_string(j.spec().priority) + " over " +
                                    std::to_string(v->spec().priority) + ")";
    Transition t = EndAttempt(*v, now, AttemptOutcome::kCancelled, -1, why + "; requeued");
    t.new_state = JobState::kPending;
    t.failure_class = std::string(recovery::FailureClassName(recovery::FailureClass::kPreemption));
    t.preempted_by = j.input.id;
    t.reclaimed = reclaim;
    v->wait = Job::Wait::kOther;
    v->waiting = why;
    out.push_back(std::move(t));
    Enqueue(*v);
  }
  return true;
}

bool Engine::Dispatch(Job& j, const Pick& pick, Timestamp now, std::vector<Transition>& out) {
  const placement::Option& o = pick.option;
  const int attempt = j.input.attempts + 1;
  ProviderAdapter* provider = slots_[static_cast<size_t>(o.pool_id)].adapter;
  auto request = RequestFor(j, o, attempt, *provider, now);
  if (!request.ok()) {
    j.wait = Job::Wait::kOther;
    j.waiting = request.status().message();
    return false;
  }
  auto launched = provider->Launch(*request, now);
  if (!launched.ok()) {
    j.wait = Job::Wait::kOther;
    j.waiting = "launch on " + o.cluster->name + " failed: " + launched.status().message();
    return false;
  }
  const int64_t queue_borrowed = pick.borrowed;
  Take(j, pick, attempt, provider, *launched, now);
  Transition t = DispatchTransition(j, o, queue_borrowed, now);
  if (options_.hold_launches) t.launch = HeldLaunch(j.input.id, attempt, j.cluster);
  out.push_back(std::move(t));
  return true;
}

Result<LaunchRequest> Engine::RequestFor(const Job& j, const placement::Option& o, int attempt,
                                         const ProviderAdapter& provider, Timestamp now) const {
  const JobSpec& spec = j.spec();
  const Alternative& g = spec.accelerators.alternatives[static_cast<size_t>(o.alternative)];
  LaunchRequest req{j.input.id, attempt, o.cluster->name, o.pool->name, g.count, spec.num_nodes, g.use_spot,
                    {}, "", "", spec.time_limit, spec.sim, ""};
  if (provider.RunsCommands()) {
    req.env = policy::LaunchEnv(spec, *o.cluster, j.input.id, attempt, g.type == kCpuType ? 0 : g.count);
    // Federated identities' tokens are refreshed at half their lifetime.
    const Micros refresh = estate_.identity.workload ? estate_.identity.workload->lifetime / 2 : Micros(0);
    req.setup = policy::WorkspaceScript(spec, j.input.id, attempt, &estate_.data,
                                        policy::FederationsFor(spec, estate_.identity), refresh) +
                spec.setup;
    req.run = spec.run;
    if (!j.input.group.empty()) req.env["SKYPILOT_JOBGROUP_NAME"] = j.input.group_name;
    if (!j.input.resume_from.empty()) req.env["CAUSEWAY_RESUME_FROM"] = j.input.resume_from;
  }
  req.held = options_.hold_launches || gang_launch_;
  req.image = g.image_id.empty() ? spec.image_id : g.image_id;
  req.priority = spec.priority;
  req.tags["causeway-job"] = j.input.id;
  if (!spec.team.empty()) req.tags["causeway-team"] = spec.team;
  if (!spec.owner.empty()) req.tags["causeway-owner"] = spec.owner;
  if (auto project = spec.labels.find("project"); project != spec.labels.end()) {
    req.tags["causeway-project"] = project->second;
  }
  for (const auto& [k, v] : spec.labels) req.tags.emplace(k, v);
  if (spec.cpus) req.cpus_per_node = static_cast<int>(std::ceil(spec.cpus->value));
  if (g.type == kCpuType) req.cpus_per_node = g.count;  // what a CPU-only job takes of each node
  if (spec.memory_gb) req.memory_mb_per_node = static_cast<int>(std::ceil(spec.memory_gb->value * 1024));
  // A dataset copied on demand: the job waits here until the copy is
  // verified (the copy is asked for, and made, off the scheduler).
  if (std::string why = router_.AwaitData(spec, *o.cluster, j.input.id); !why.empty()) return FailedPrecondition(why);
  if (prepare_launch_) {
    auto extra = prepare_launch_(j.input.id, attempt, *o.cluster, now);
    if (!extra.ok()) return extra.status().WithPrefix("launch on " + o.cluster->name + " not started");
    if (provider.RunsCommands()) {
      for (auto& [k, v] : *extra) req.env.emplace(k, std::move(v));
    }
  }
  return req;
}

void Engine::Take(Job& j, const Pick& pick, int attempt, ProviderAdapter* provider, std::string backend_id,
                  Timestamp now) {
  const placement::Option& o = pick.option;
  const Alternative& g = j.spec().accelerators.alternatives[static_cast<size_t>(o.alternative)];
  j.backend_id = std::move(backend_id);
  j.resumed_from = j.input.resume_from;
  Dequeue(j);
  j.running = true;
  j.attempt = attempt;
  j.input.attempts = attempt;
  j.provider = provider;
  j.cluster = o.cluster->name;
  j.pool = o.pool->name;
  j.flavor = pick.flavor;
  j.flavor_name = FlavorName(g, g.use_spot);
  j.gpus = static_cast<int64_t>(g.count) * j.spec().num_nodes;
  j.reserved = o.reserved;
  // The quota check says how far past nominal the whole queue goes; the
  // attempt's own part of that is at most its GPUs.
  j.borrowed = std::min<int64_t>(pick.borrowed, j.gpus);
  j.price_micros = o.price_micros < 0 ? 0 : o.price_micros;
  j.started = now;
  j.pool_id = o.pool_id;
  j.reservation = o.reserved ? ReservationFor(j, g.type, now) : -1;
  if (j.reservation >= 0) reservation_used_[static_cast<size_t>(j.reservation)] += j.gpus;
  if (j.queue >= 0 && j.flavor >= 0) quota_.Add(j.queue, j.flavor, j.gpus);
  AddRunning(j);
  j.wait = Job::Wait::kNew;
  j.waiting.clear();
  j.admitted_only = !provider->StartsOnLaunch();
}

int Engine::ReservationFor(const Job& j, const std::string& gpu_type, Timestamp now) const {
  for (size_t i = 0; i < estate_.reservations.size(); ++i) {
    const Reservation& r = estate_.reservations[i];
    if (r.cluster == j.cluster && r.gpu_type == gpu_type && r.start <= now && now < r.end &&
        r.count - reservation_used_[i] >= j.gpus) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

Transition Engine::DispatchTransition(Job& j, const placement::Option& o, int64_t queue_borrowed, Timestamp now) {
  const bool cpu = j.spec().accelerators.alternatives[static_cast<size_t>(o.alternative)].type == kCpuType;
  const bool spot = j.spec().accelerators.alternatives[static_cast<size_t>(o.alternative)].use_spot;
  std::string why = o.reserved ? "reserved capacity already paid for"
                               : "the cheapest eligible " + std::string(spot ? "spot " : "") + "capacity at " +
                                     Money(j.price_micros, estate_.currency).ToString() +
                                     (cpu ? " per CPU-hour" : " per GPU-hour");
  j.placement = Placement{j.cluster,     j.pool,   o.cluster->provider, o.cluster->zone,
                          j.flavor_name, j.gpus,   o.reserved,          j.borrowed,
                          Money(j.price_micros, estate_.currency).AmountString(), o.data_local, why};
  Transition t = AttemptTransition(j, Transition::Kind::kDispatched, now);
  t.new_state = j.admitted_only ? JobState::kAdmitted : JobState::kRunning;
  t.attempts = j.attempt;
  t.total_gpu_seconds = j.input.gpu_seconds;
  t.total_cost_micros = j.input.cost_micros;
  std::string borrowing;
  if (j.borrowed > 0) {
    borrowing = ", " + std::to_string(j.borrowed) + " of them on quota borrowed from the cohort";
    if (queue_borrowed > j.borrowed) borrowing += " (the queue borrows " + std::to_string(queue_borrowed) + " in all)";
  }
  t.message = "attempt " + std::to_string(j.attempt) + " on " + j.cluster + " (" + CountOf(j.flavor_name, j.gpus) +
              "): " + why + borrowing + (j.resumed_from.empty() ? "" : ", resuming from " + j.resumed_from);
  return t;
}

}  // namespace causeway::scheduler
