#include "scheduler/engine.h"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <queue>

#include "causeway/money.h"
#include "policy/policy.h"
#include "recovery/recovery.h"

namespace causeway::scheduler {
namespace {

int MonthOf(Timestamp t) {
  time_t secs = static_cast<time_t>(ToUnixMicros(t) / 1'000'000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  return (tm.tm_year + 1900) * 12 + tm.tm_mon;
}

std::string Dollars(int64_t micros, const std::string& currency) { return Money(micros, currency).ToString(); }

std::string NextAction(recovery::Owner o) {
  switch (o) {
    case recovery::Owner::kResearcher: return "next action: the researcher (the program, its inputs or its limits)";
    case recovery::Owner::kPlatform: return "next action: the platform team (storage, data paths, quota or configuration)";
    case recovery::Owner::kProvider: return "next action: the provider (hardware or an outage)";
    case recovery::Owner::kNobody: break;
  }
  return "";
}

}  // namespace

std::string DemandKey(const JobSpec& s) {
  std::string k = s.team + "\x1f" + std::to_string(s.num_nodes) + (s.accelerators.ordered ? "o" : "a");
  for (const auto& a : s.accelerators.alternatives) k += "\x1f" + a.Describe() + (a.use_spot ? "+s" : "");
  k += "\x1f" + (s.cpus ? s.cpus->ToString() : "") + "\x1f" + (s.memory_gb ? s.memory_gb->ToString() : "") + "\x1f" +
       s.cuda + "\x1f" + s.driver + "\x1f" + (s.disk_size_gb ? std::to_string(*s.disk_size_gb) : "") + "\x1f" +
       s.residency + (s.allow_remote_data ? "\x1fr" : "\x1f") + s.workdir.path + "\x1f" + s.workdir.git_url + "\x1f" +
       s.workdir.git_ref;
  for (const auto& d : s.datasets) k += "\x1f" + d.name + "@" + d.version + d.digest;
  for (const auto& m : s.file_mounts) {
    k += "\x1f" + m.target + "=" + m.source + "," + m.name + "," + m.store + "," + m.mode;
    for (const auto& more : m.more_sources) k += "," + more;
  }
  return k;
}

Engine::Engine(const Estate& estate, std::map<std::string, ProviderAdapter*> providers, EngineOptions options)
    : estate_(estate),
      providers_(std::move(providers)),
      options_(options),
      quota_(estate.queues),
      router_(estate),
      pending_(estate.queues.size() + 1),
      reservation_used_(estate.reservations.size(), 0) {
  for (const auto& ref : router_.pools()) {
    Slot slot;
    auto it = providers_.find(ref.cluster->provider);
    if (it != providers_.end()) {
      slot.adapter = it->second;
      slot.handle = it->second->ResolvePool(ref.cluster->name, ref.pool->name);
    }
    for (size_t r = 0; r < estate.reservations.size(); ++r) {
      const Reservation& res = estate.reservations[r];
      if (res.cluster == ref.cluster->name && res.gpu_type == ref.pool->gpu_type) slot.reservations.push_back(static_cast<int>(r));
    }
    slots_.push_back(std::move(slot));
  }
  running_prio_.resize(estate.queues.size() + 1);
  class_ids_.resize(pending_.size());
  counted_.resize(pending_.size(), 0);
  unknown_.resize(pending_.size(), 0);
  apart_.resize(pending_.size());
  running_qf_.resize(quota_.queues() * quota_.flavors());
}


bool Engine::Healthy(const placement::PoolRef& pool) const {
  const Slot& s = slots_[static_cast<size_t>(pool.id)];
  return s.adapter != nullptr && s.handle >= 0 && s.adapter->Healthy(s.handle);
}

bool Engine::Fits(const placement::PoolRef& pool, int gpus_per_node, int nodes) const {
  const Slot& s = slots_[static_cast<size_t>(pool.id)];
  return s.adapter != nullptr && s.adapter->Fits(s.handle, gpus_per_node, nodes);
}

int Engine::FreeGpus(const placement::PoolRef& pool) const {
  const Slot& s = slots_[static_cast<size_t>(pool.id)];
  return s.adapter == nullptr ? 0 : s.adapter->FreeGpus(s.handle);
}

int Engine::ReservedFree(const placement::PoolRef& pool) const {
  int free = 0;
  for (int i : slots_[static_cast<size_t>(pool.id)].reservations) {
    const Reservation& r = estate_.reservations[static_cast<size_t>(i)];
    if (r.start <= now_ && now_ < r.end) free += static_cast<int>(r.count - reservation_used_[static_cast<size_t>(i)]);
  }
  return free;
}

void Engine::AddRunning(Job& j) {
  running_.insert(j.input.id);
  running_prio_[static_cast<size_t>(QueueSlot(j))].insert(j.spec().priority);
  if (j.queue >= 0 && j.flavor >= 0) {
    running_qf_[static_cast<size_t>(j.queue) * quota_.flavors() + static_cast<size_t>(j.flavor)].insert(&j);
  }
}

void Engine::RemoveRunning(Job& j) {
  running_.erase(j.input.id);
  auto& prios = running_prio_[static_cast<size_t>(QueueSlot(j))];
  if (auto it = prios.find(j.spec().priority); it != prios.end()) prios.erase(it);
  if (j.queue >= 0 && j.flavor >= 0) {
    running_qf_[static_cast<size_t>(j.queue) * quota_.flavors() + static_cast<size_t>(j.flavor)].erase(&j);
  }
}

Engine::PendingKey Engine::KeyOf(Job& j) const {
  return {-j.spec().priority, ToUnixMicros(j.input.created_at), j.input.id, &j, j.cls, j.apart};
}

// A queued job holds its demand class. It is kept apart from the class's
// count when it has something of its own to route or wait by (a gang, a
// checkpoint to resume, a cluster to avoid, a backoff): such a job may
// start where others of its demand cannot, so a pass never skips it.
void Engine::Enqueue(Job& j) {
  const size_t slot = static_cast<size_t>(QueueSlot(j));
  auto [queued, inserted] = pending_[slot].insert(KeyOf(j));
  if (!inserted) return;
  ++pending_count_;
  // Demands by queue slot: the queue is not part of the key.
  auto& ids = class_ids_[slot];
  auto id = ids.find(std::string_view(j.input.spec.demand()));
  if (id == ids.end()) {
    int32_t n;
    if (free_classes_.empty()) {
      n = static_cast<int32_t>(classes_.size());
      classes_.emplace_back();
    } else {
      n = free_classes_.back();
      free_classes_.pop_back();
    }
    id = ids.emplace(j.input.spec.demand(), n).first;
    classes_[static_cast<size_t>(n)] = DemandClass{};
  }
  j.cls = id->second;
  j.queued_after_pass = pass_;
  j.apart = !j.input.group.empty() || !j.input.resume_from.empty() || !j.avoid.empty() || j.not_before != Timestamp{};
  queued->cls = j.cls;
  queued->apart = j.apart;
  DemandClass& c = classes_[static_cast<size_t>(j.cls)];
  ++c.holders;
  if (j.apart) {
    apart_[slot].insert(*queued);
    return;
  }
  ++c.counted;
  ++counted_[slot];
  if (c.no_room.pass != pass_) ++unknown_[slot];  // (outside a pass: reset when the next begins)
}

void Engine::Dequeue(Job& j) {
  const size_t slot = static_cast<size_t>(QueueSlot(j));
  PendingKey key = KeyOf(j);
  if (!pending_[slot].erase(key)) return;
  --pending_count_;
  DemandClass& c = classes_[static_cast<size_t>(j.cls)];
  if (j.apart) {
    apart_[slot].erase(key);
  } else {
    --c.counted;
    --counted_[slot];
    if (c.no_room.pass != pass_) --unknown_[slot];
  }
  if (--c.holders == 0) {
    auto& ids = class_ids_[slot];
    if (auto id = ids.find(std::string_view(j.input.spec.demand())); id != ids.end()) ids.erase(id);
    free_classes_.push_back(j.cls);
  }
  j.cls = -1;
}

int Engine::QueueSlot(const Job& j) const { return j.queue >= 0 ? j.queue : static_cast<int>(quota_.queues()); }

Status Engine::Submit(JobInput input) {
  if (jobs_.count(input.id)) return AlreadyExists("job " + input.id + " is already scheduled");
  // From here on the engine sees what the job asks of a pool: a CPU-only
  // job as its CPUs (JobSpec::Demand).
  if (input.spec->cpu_only()) {
    JobSpec spec = *input.spec;
    spec.accelerators = spec.Demand();
    input.spec = std::move(spec);
  }
  int queue = -1;
  if (!estate_.queues.empty()) {
    const QueueConfig* q = estate_.QueueForTeam(input.spec->team);
    if (!q) return InvalidArgument("team \"" + input.spec->team + "\" has no queue in the estate");
    queue = quota_.QueueIndex(q->name);
  }
  ++version_;
  Job& job = jobs_.try_emplace(input.id).first->second;  // made in place: a Job is large
  job.not_before = input.not_before;
  job.queue = queue;
  job.input = std::move(input);
  const std::string after = job.input.after;
  const JobState after_state = job.input.after_state;
  if (!job.input.group.empty()) JoinGroup(job);
  if (after.empty() || after_state == JobState::kSucceeded) {
    job.input.after.clear();
    Enqueue(job);
  } else if (IsTerminal(after_state)) {
    abandon_.emplace_back(job.input.id,
                          "the step before it, job " + after + ", " + std::string(JobStateName(after_state)));
  } else if (!jobs_.count(after)) {
    abandon_.emplace_back(job.input.id, "the step before it, job " + after + ", is not scheduled");
  } else {
    waiting_for_[after].push_back(job.input.id);
    job.wait = Job::Wait::kOther;
    job.waiting = "pipeline step: runs once the step before it, job " + after + ", has succeeded";
  }
  return Status::Ok();
}

void Engine::StepEnded(const std::string& id, bool succeeded, const std::string& how, Timestamp now,
                       std::vector<Transition>& out) {
  auto found = waiting_for_.find(id);
  if (found == waiting_for_.end()) return;
  std::vector<std::string> waiters = std::move(found->second);
  waiting_for_.erase(found);
  for (const std::string& w : waiters) {
    auto it = jobs_.find(w);
    if (it == jobs_.end()) continue;
    Job& j = it->second;
    if (succeeded) {
      j.input.after.clear();
      j.wait = Job::Wait::kNew;
      Enqueue(j);
      continue;
    }
    Abandon(it, "the step before it, job " + id + ", " + how, now, out);
  }
}

Transition Engine::CancelledWaiting(const Job& j, Timestamp now, std::string message) const {
  Transition t;
  t.kind = Transition::Kind::kAbandoned;
  t.job_id = j.input.id;
  t.team = j.spec().team;
  t.time = now;
  t.new_state = JobState::kCancelled;
  t.message = std::move(message);
  t.attempts = j.input.attempts;
  t.total_gpu_seconds = j.input.gpu_seconds;
  t.total_cost_micros = j.input.cost_micros;
  return t;
}

Transition Engine::CancelRunning(Job& j, Timestamp now, const std::string& reason) {
  (void)j.provider->Cancel(j.input.id, j.attempt);
  Transition t = EndAttempt(j, now, AttemptOutcome::kCancelled, -1, reason);
  t.new_state = JobState::kCancelled;
  return t;
}

void Engine::Abandon(JobMap::iterator it, const std::string& why, Timestamp now, std::vector<Transition>& out) {
  const Job& j = it->second;
  out.push_back(CancelledWaiting(j, now, "not run: " + why));
  std::string id = j.input.id;
  jobs_.erase(it);
  StepEnded(id, false, "was not run", now, out);
}

Status Engine::Restore(JobInput input, const RunningAttempt& a) {
  std::string id = input.id;
  RETURN_IF_ERROR(Submit(std::move(input)));
  Job& j = jobs_.at(id);
  const placement::PoolRef* ref = nullptr;
  for (const auto& r : router_.pools()) {
    if (r.cluster->name == a.cluster && r.pool->name == a.pool) ref = &r;
  }
  if (!ref || !slots_[static_cast<size_t>(ref->id)].adapter) {
    return FailedPrecondition("job " + id + " ran on " + a.cluster + "/" + a.pool + ", which the estate no longer has");
  }
  const NodePool* pool = ref->pool;
  ProviderAdapter* provider = slots_[static_cast<size_t>(ref->id)].adapter;
  // The alternative it ran as: the pool's GPU type, at the count the
  // attempt held when known (one type may be listed at several counts).
  int alt = -1;
  const auto& alts = j.spec().accelerators.alternatives;
  for (size_t i = 0; i < alts.size(); ++i) {
    if (alts[i].type != pool->gpu_type) continue;
    bool count_matches = a.gpus > 0 && static_cast<int64_t>(alts[i].count) * j.spec().num_nodes == a.gpus;
    if (alt < 0 || count_matches) alt = static_cast<int>(i);
    if (count_matches) break;
  }
  if (alt < 0) alt = 0;
  const Alternative& g = alts[static_cast<size_t>(alt)];
  LaunchRequest req{id, a.attempt, a.cluster, a.pool, g.count, j.spec().num_nodes, g.use_spot,
                    {}, j.spec().setup, j.spec().run, j.spec().time_limit, j.spec().sim, a.backend_id};
  RETURN_IF_ERROR(provider->Restore(req, a.started));
  j.backend_id = a.backend_id;
  j.admitted_only = a.admitted_only;
  Dequeue(j);
  j.running = true;
  j.attempt = a.attempt;
  j.input.attempts = std::max(j.input.attempts, a.attempt);
  j.provider = provider;
  j.cluster = a.cluster;
  j.pool = a.pool;
  j.flavor_name = a.flavor.empty() ? FlavorName(g, g.use_spot) : a.flavor;
  j.flavor = quota_.FlavorIndex(j.flavor_name);
  j.gpus = static_cast<int64_t>(g.count) * j.spec().num_nodes;
  j.started = a.started;
  j.reserved = a.reserved;
  const Price* price = estate_.FindPrice(a.cluster, pool->gpu_type);
  j.price_micros = price ? (g.use_spot && price->spot ? price->spot->micros() : price->on_demand.micros()) : 0;
  if (a.reserved) {
    for (size_t i = 0; i < estate_.reservations.size(); ++i) {
      const Reservation& r = estate_.reservations[i];
      if (r.cluster == a.cluster && r.gpu_type == pool->gpu_type) {
        j.reservation = static_cast<int>(i);
        j.price_micros = r.price.micros();
        reservation_used_[i] += j.gpus;
        break;
      }
    }
  }
  j.pool_id = ref->id;
  if (j.queue >= 0 && j.flavor >= 0) quota_.Add(j.queue, j.flavor, j.gpus);
  AddRunning(j);
  return Status::Ok();
}

Transition Engine::AttemptTransition(const Job& j, Transition::Kind kind, Timestamp at) const {
  Transition t;
  t.kind = kind;
  t.job_id = j.input.id;
  t.team = j.spec().team;
  t.attempt = j.attempt;
  t.time = at;
  t.cluster = j.cluster;
  t.pool = j.pool;
  t.backend_id = j.backend_id;
  t.resumed_from = j.resumed_from;
  t.flavor = j.flavor_name;
  t.gpus = j.gpus;
  t.nodes = j.spec().num_nodes;
  t.reserved = j.reserved;
  t.borrowed = j.borrowed;
  t.price_micros = j.price_micros;
  t.started = j.started;
  t.placement = j.placement;
  return t;
}

Transition Engine::EndAttempt(Job& j, Timestamp at, AttemptOutcome outcome, int exit_code, const std::string& reason) {
  Transition t = AttemptTransition(j, Transition::Kind::kAttemptEnded, at);
  t.outcome = outcome;
  t.exit_code = exit_code;
  t.message = reason;
  int64_t us = std::max<int64_t>(0, ToUnixMicros(at) - ToUnixMicros(j.started));
  // A CPU-only attempt holds CPUs: it is costed by them but adds no GPU time.
  t.gpu_seconds = IsCpuFlavor(j.flavor_name) ? 0 : j.gpus * us / 1'000'000;
  auto cost = Money::Scale(Money(j.price_micros, estate_.currency), j.gpus * us, 3'600'000'000LL);
  t.cost_micros = cost.ok() ? cost->micros() : 0;

  if (j.queue >= 0 && j.flavor >= 0) quota_.Remove(j.queue, j.flavor, j.gpus);
  if (j.reservation >= 0) reservation_used_[static_cast<size_t>(j.reservation)] -= j.gpus;
  RemoveRunning(j);
  month_spend_[j.spec().team] += t.cost_micros;
  j.input.gpu_seconds += t.gpu_seconds;
  j.input.cost_micros += t.cost_micros;
  j.running = false;
  j.reservation = -1;
  j.provider = nullptr;
  t.attempts = j.input.attempts;
  t.total_gpu_seconds = j.input.gpu_seconds;
  t.total_cost_micros = j.input.cost_micros;
  return t;
}

Status Engine::SetCheckpoint(const std::string& job_id, const std::string& path) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return NotFound("job " + job_id + " is not scheduled");
  ++version_;
  Job& j = it->second;
  // A queued job is queued again: a checkpoint of its own sets it apart.
  const bool queued = j.cls >= 0;
  if (queued) Dequeue(j);
  j.input.resume_from = path;
  j.input.resume_cluster = j.cluster;
  if (queued) Enqueue(j);
  return Status::Ok();
}

Result<std::vector<Transition>> Engine::Cancel(const std::string& job_id, Timestamp now) {
  auto it = jobs_.find(job_id);
  if (it == jobs_.end()) return NotFound("job " + job_id + " is not scheduled");
  ++version_;
  Job& j = it->second;
  std::vector<Transition> out;
  if (j.running) {
    out.push_back(CancelRunning(j, now, "cancelled"));
  } else {
    Dequeue(j);
    if (auto w = waiting_for_.find(j.input.after); w != waiting_for_.end()) {
      w->second.erase(std::remove(w->second.begin(), w->second.end(), job_id), w->second.end());
    }
  }
  LeaveGroup(j, false);
  jobs_.erase(it);
  StepEnded(job_id, false, "was cancelled", now, out);
  return out;
}

void Engine::JoinGroup(const Job& j) {
  Group& g = groups_[j.input.group];
  g.name = j.input.group_name;
  // Handed over on its own: the group has started (a task ran already).
  if (j.input.gang.empty()) {
    g.started = true;
    g.gang.clear();
  } else if (!g.started && g.gang.empty()) {
    g.gang = j.input.gang;
  }
  if (j.input.auxiliary) {
    g.auxiliary.insert(j.input.id);
    g.delay[j.input.id] = j.input.termination_delay;
  } else {
    g.primary.insert(j.input.id);
  }
  g.primary_failed = g.primary_failed || j.input.primary_failed;
  if (g.primary.empty() && !g.auxiliary.empty()) groups_ending_.insert(j.input.group);
}

void Engine::LeaveGroup(const Job& j, bool succeeded) {
  auto it = groups_.find(j.input.group);
  if (it == groups_.end()) return;
  Group& g = it->second;
  const std::string& id = j.input.id;
  // One that ends before the group started no longer starts with the others.
  g.gang.erase(std::remove(g.gang.begin(), g.gang.end(), id), g.gang.end());
  if (g.primary.erase(id)) {
    if (!succeeded) g.primary_failed = true;
    if (g.primary.empty() && !g.auxiliary.empty()) groups_ending_.insert(it->first);
  }
  g.auxiliary.erase(id);
  g.delay.erase(id);
  if (g.primary.empty() && g.auxiliary.empty()) {
    groups_ending_.erase(it->first);
    groups_.erase(it);
  }
}

void Engine::EndAuxiliaries(Timestamp now, std::vector<Transition>& out) {
  // Copied: ending a task may end its group.
  std::vector<std::string> ending(groups_ending_.begin(), groups_ending_.end());
  for (const std::string& id : ending) {
    auto gi = groups_.find(id);
    if (gi == groups_.end() || !gi->second.primary.empty() || gi->second.auxiliary.empty()) {
      groups_ending_.erase(id);
      continue;
    }
    Group& g = gi->second;
    if (!g.started) continue;  // nothing of it has run: its primary tasks may still come
    if (!g.primaries_ended) g.primaries_ended = now;
    std::vector<std::pair<std::string, Micros>> due;
    for (const std::string& a : g.auxiliary) {
      Micros delay = g.primary_failed ? Micros(0) : g.delay[a];
      if (now >= *g.primaries_ended + delay) due.emplace_back(a, delay);
    }
    std::string why = "ended: the primary tasks of job group " + g.name + " have " +
                      (g.primary_failed ? "ended, not all of them succeeded" : "all succeeded");
    for (const auto& [a, delay] : due) {
      auto it = jobs_.find(a);
      if (it == jobs_.end()) continue;
      Job& j = it->second;
      std::string reason = why + (delay.count() > 0 ? " (termination_delay " + FormatDuration(delay) + ")" : "");
      if (j.running) {
        out.push_back(CancelRunning(j, now, reason));
      } else {
        Dequeue(j);
        out.push_back(CancelledWaiting(j, now, reason));
      }
      LeaveGroup(j, false);
      jobs_.erase(it);
    }
  }
}

std::vector<Transition> Engine::Tick(Timestamp now) {
  now_ = now;
  ++ticks_;
  std::vector<Transition> out;
  // 1. What the backends say of the attempts: handed over, started, ended.
  for (auto& [name, provider] : providers_) {
    for (const ProviderEvent& ev : provider->Poll(now)) Observe(ev, out);
  }
  // Pipeline steps found never to run when they were handed over.
  std::vector<std::pair<std::string, std::string>> abandon;
  abandon.swap(abandon_);
  for (const auto& [id, why] : abandon) {
    if (auto it = jobs_.find(id); it != jobs_.end()) Abandon(it, why, now, out);
  }
  // Auxiliary tasks of job groups whose primary tasks have ended.
  if (!groups_ending_.empty()) EndAuxiliaries(now, out);
  // 2. Budgets.
  CheckBudgets(now, out);
  // 3. Admission.
  AdmitPending(now, out);
  if (!out.empty()) ++version_;
  return out;
}

void Engine::Observe(const ProviderEvent& ev, std::vector<Transition>& out) {
  auto it = jobs_.find(ev.job_id);
  if (it == jobs_.end() || !it->second.running || it->second.attempt != ev.attempt) return;
  Job& j = it->second;
  switch (ev.kind) {
    case ProviderEvent::Kind::kHandedOver:
      return HandedOver(j, ev, out);
    case ProviderEvent::Kind::kStarted:
      return Started(j, ev, out);
    default:
      return Ended(it, ev, out);
  }
}

void Engine::HandedOver(Job& j, const ProviderEvent& ev, std::vector<Transition>& out) {
  // A held launch named once it was sent: admitted where the backend
  // queues (and only until it runs there), running where it starts at once.
  bool queues = !j.provider->StartsOnLaunch();
  if ((queues && !j.admitted_only) || ev.backend_id.empty() || ev.backend_id == j.backend_id) return;
  j.backend_id = ev.backend_id;
  Transition t = AttemptTransition(j, Transition::Kind::kHandedOver, ev.time);
  t.new_state = j.admitted_only ? JobState::kAdmitted : JobState::kRunning;
  t.attempts = j.input.attempts;
  t.message = "attempt " + std::to_string(j.attempt) + " accepted by " + j.cluster + " as " + j.backend_id;
  out.push_back(std::move(t));
}

void Engine::Started(Job& j, const ProviderEvent& ev, std::vector<Transition>& out) {
  if (!j.admitted_only) return;
  j.admitted_only = false;
  if (!ev.backend_id.empty()) j.backend_id = ev.backend_id;
  // GPU time counts from here, not from the hand-over.
  if (ev.time > j.started) j.started = ev.time;
  Transition t = AttemptTransition(j, Transition::Kind::kStarted, ev.time);
  t.new_state = JobState::kRunning;
  t.attempts = j.input.attempts;
  t.total_gpu_seconds = j.input.gpu_seconds;
  t.total_cost_micros = j.input.cost_micros;
  t.message = "attempt " + std::to_string(j.attempt) + " started running on " + j.cluster;
  out.push_back(std::move(t));
}

void Engine::Ended(JobMap::iterator it, const ProviderEvent& ev, std::vector<Transition>& out) {
  Job& j = it->second;
  if (ev.started && *ev.started > j.started && *ev.started <= ev.time) j.started = *ev.started;
  // Never seen running on a backend that queues: no GPU time was used.
  if (j.admitted_only && !ev.started) j.started = ev.time;
  if (ev.kind == ProviderEvent::Kind::kNotLaunched) {
    // The backend never received it: placed again, elsewhere first, and
    // not counted against the job's retries.
    Transition t = EndAttempt(j, ev.time, AttemptOutcome::kProviderOutage, -1, ev.reason);
    t.failure_class = std::string(recovery::FailureClassName(recovery::FailureClass::kProviderOutage));
    t.owner = std::string(recovery::OwnerName(recovery::Owner::kProvider));
    t.new_state = JobState::kPending;
    t.message += "; never launched; requeued";
    j.avoid = t.cluster;
    j.unlaunched++;
    j.wait = Job::Wait::kOther;
    j.waiting = "requeued: attempt " + std::to_string(j.attempt) + " never reached " + t.cluster + ": " + ev.reason;
    out.push_back(std::move(t));
    Enqueue(j);
    return;
  }
  Transition t = EndAttempt(j, ev.time, ev.outcome, ev.exit_code, ev.reason);
  t.node_facts = ev.node_facts;
  auto cls = recovery::Classify(ev.outcome, ev.exit_code, ev.reason, ev.log_tail);
  auto decision = recovery::Decide(recovery::PolicyFor(j.spec()), cls, j.input.attempts - j.unlaunched);
  bool retry = decision.retry;
  t.failure_class = cls.failure == recovery::FailureClass::kNone ? "" : std::string(recovery::FailureClassName(cls.failure));
  t.owner = std::string(recovery::OwnerName(cls.owner));
  if (ev.outcome == AttemptOutcome::kSucceeded) {
    t.new_state = JobState::kSucceeded;
  } else {
    t.message += "; " + t.failure_class + (cls.evidence.empty() || cls.evidence == ev.reason ? "" : " (" + cls.evidence + ")") +
                 "; " + decision.why;
    if (retry) {
      t.new_state = JobState::kPending;
      t.message += "; requeued";
      // Another cluster first, when one qualifies: this one just failed it.
      if (cls.owner == recovery::Owner::kProvider || cls.failure == recovery::FailureClass::kPreemption) {
        j.avoid = t.cluster;
      }
      j.not_before = ev.time + decision.wait;
      j.wait = Job::Wait::kOther;
      j.waiting = "requeued after attempt " + std::to_string(j.attempt) + ": " + ev.reason +
                  (decision.wait.count() > 0 ? "; not before " + FormatRfc3339(j.not_before) : "");
    } else {
      t.new_state = JobState::kFailed;
      if (std::string next = NextAction(cls.owner); !next.empty()) t.message += "; " + next;
    }
  }
  bool succeeded = t.new_state == JobState::kSucceeded;
  std::string how = std::string(JobStateName(t.new_state));
  out.push_back(std::move(t));
  if (retry) {
    Enqueue(j);
  } else {
    std::string id = j.input.id;
    LeaveGroup(j, succeeded);
    jobs_.erase(it);
    StepEnded(id, succeeded, how, ev.time, out);
  }
}

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
  const JobSpec& spec = j.spec();
  if (now < j.not_before) return false;  // backing off after a failure; waiting says until when
  // Only a job with nothing of its own to route by (a checkpoint to resume,
  // a cluster to avoid) and outside a gang's start shares its verdict.
  const bool shares = j.input.resume_from.empty() && j.avoid.empty() && !gang_launch_;
  if (!exhausted_.empty() && exhausted_.count(spec.team)) {
    j.wait = Job::Wait::kBudget;
    if (shares) RememberNoRoom(j, Job::Wait::kBudget);
    return false;
  }
  const auto& alts = spec.accelerators.alternatives;
  struct Pick {
    placement::Option option;
    int flavor;
    int64_t borrowed;
  };
  std::optional<Pick> best;
  // Only clusters that can read the checkpoint it resumes from qualify.
  std::optional<placement::Resume> resume_at;
  if (!j.input.resume_from.empty()) resume_at = placement::Resume{j.input.resume_from, j.input.resume_cluster};
  const placement::Resume* resume = resume_at ? &*resume_at : nullptr;
  bool quota_blocked = false, preempted = false;
  for (int a = 0; a < static_cast<int>(alts.size()); ++a) {
    const Alternative& g = alts[static_cast<size_t>(a)];
    int64_t gpus = static_cast<int64_t>(g.count) * spec.num_nodes;
    int f = j.queue >= 0 ? quota_.FlavorIndex(FlavorName(g, g.use_spot)) : -1;
    int64_t borrowed = 0;
    if (j.queue >= 0) {
      auto chk = quota_.Evaluate(j.queue, f, gpus);
      if (chk.verdict != quota::QuotaBook::Verdict::kFits && chk.verdict != quota::QuotaBook::Verdict::kBorrows) {
        quota_blocked = true;
        continue;
      }
      borrowed = chk.borrowed;
    }
    auto option = router_.Choose(spec, *this, [a](int i) { return i == a; }, j.avoid, resume);
    if (!option) continue;
    if (!best || Better(*option, best->option)) best = Pick{*option, f, borrowed};
    if (spec.accelerators.ordered) break;
  }
  if (best) return Dispatch(j, best->option, best->flavor, best->borrowed, now, out);

  // Nothing fits as things are: preempt lower-priority work of the queue, or
  // reclaim quota that other queues of the cohort borrowed.
  // Not for a job group's start: what it preempted could not be undone
  // when another of its tasks does not fit.
  if (j.queue >= 0 && quota_blocked && !gang_launch_) {
    const auto& prios = running_prio_[static_cast<size_t>(j.queue)];
    bool lower_running = !prios.empty() && *prios.begin() < spec.priority;
    for (int a = 0; a < static_cast<int>(alts.size()); ++a) {
      const Alternative& g = alts[static_cast<size_t>(a)];
      int64_t gpus = static_cast<int64_t>(g.count) * spec.num_nodes;
      int f = quota_.FlavorIndex(FlavorName(g, g.use_spot));
      if (f < 0) continue;
      auto chk = quota_.Evaluate(j.queue, f, gpus);
      bool reclaim = chk.verdict == quota::QuotaBook::Verdict::kNeedsReclaim;
      if (!reclaim && !lower_running) continue;
      if (!router_.StaticallyPossible(spec, a)) continue;
      if (!Preempt(j, f, gpus, reclaim, now, out)) continue;
      preempted = true;
      auto again = quota_.Evaluate(j.queue, f, gpus);
      auto option = router_.Choose(spec, *this, [a](int i) { return i == a; }, "", resume);
      if (option && (again.verdict == quota::QuotaBook::Verdict::kFits ||
                     again.verdict == quota::QuotaBook::Verdict::kBorrows)) {
        return Dispatch(j, *option, f, again.borrowed, now, out);
      }
    }
  }
  if (j.wait != Job::Wait::kOther) j.wait = quota_blocked ? Job::Wait::kQuota : Job::Wait::kNoRoom;
  if (shares && !preempted) RememberNoRoom(j, quota_blocked ? Job::Wait::kQuota : Job::Wait::kNoRoom);
  return false;
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
  if (!options_.hold_launches) {
    for (auto& [m, before] : placed) m->provider->Release(m->input.id, m->attempt, {});
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

bool Engine::Dispatch(Job& j, const placement::Option& o, int flavor, int64_t borrowed, Timestamp now,
                      std::vector<Transition>& out) {
  const JobSpec& spec = j.spec();
  const Alternative& g = spec.accelerators.alternatives[static_cast<size_t>(o.alternative)];
  int attempt = j.input.attempts + 1;
  ProviderAdapter* provider = slots_[static_cast<size_t>(o.pool_id)].adapter;
  LaunchRequest req{j.input.id, attempt, o.cluster->name, o.pool->name, g.count, spec.num_nodes, g.use_spot,
                    {}, "", "", spec.time_limit, spec.sim, ""};
  if (provider->RunsCommands()) {
    req.env = policy::LaunchEnv(spec, *o.cluster, j.input.id, attempt, g.type == kCpuType ? 0 : g.count);
    req.setup = policy::WorkspaceScript(spec, j.input.id, attempt, &estate_.data) + spec.setup;
    req.run = spec.run;
    if (!j.input.group.empty()) req.env["SKYPILOT_JOBGROUP_NAME"] = j.input.group_name;
    if (!j.input.resume_from.empty()) req.env["CAUSEWAY_RESUME_FROM"] = j.input.resume_from;
  }
  req.held = options_.hold_launches || gang_launch_;
  if (spec.cpus) req.cpus_per_node = static_cast<int>(std::ceil(spec.cpus->value));
  if (g.type == kCpuType) req.cpus_per_node = g.count;  // what a CPU-only job takes of each node
  if (spec.memory_gb) req.memory_mb_per_node = static_cast<int>(std::ceil(spec.memory_gb->value * 1024));
  // A dataset copied on demand: the job waits here until the copy is
  // verified (the copy is asked for, and made, off the scheduler).
  if (std::string why = router_.AwaitData(spec, *o.cluster, j.input.id); !why.empty()) {
    j.wait = Job::Wait::kOther;
    j.waiting = why;
    return false;
  }
  if (prepare_launch_) {
    auto extra = prepare_launch_(j.input.id, attempt, *o.cluster, now);
    if (!extra.ok()) {
      j.wait = Job::Wait::kOther;
      j.waiting = "launch on " + o.cluster->name + " not started: " + extra.status().message();
      return false;
    }
    if (provider->RunsCommands()) {
      for (auto& [k, v] : *extra) req.env.emplace(k, std::move(v));
    }
  }
  auto launched = provider->Launch(req, now);
  if (!launched.ok()) {
    j.wait = Job::Wait::kOther;
    j.waiting = "launch on " + o.cluster->name + " failed: " + launched.status().message();
    return false;
  }
  j.backend_id = *launched;
  j.resumed_from = j.input.resume_from;
  Dequeue(j);
  j.running = true;
  j.attempt = attempt;
  j.input.attempts = attempt;
  j.provider = provider;
  j.cluster = o.cluster->name;
  j.pool = o.pool->name;
  j.flavor = flavor;
  j.flavor_name = FlavorName(g, g.use_spot);
  j.gpus = static_cast<int64_t>(g.count) * spec.num_nodes;
  j.reserved = o.reserved;
  // The quota check says how far past nominal the whole queue goes; the
  // attempt's own part of that is at most its GPUs.
  const int64_t queue_borrowed = borrowed;
  borrowed = std::min<int64_t>(borrowed, j.gpus);
  j.borrowed = borrowed;
  j.price_micros = o.price_micros < 0 ? 0 : o.price_micros;
  j.started = now;
  j.pool_id = o.pool_id;
  j.reservation = -1;
  if (o.reserved) {
    for (size_t i = 0; i < estate_.reservations.size(); ++i) {
      const Reservation& r = estate_.reservations[i];
      if (r.cluster == j.cluster && r.gpu_type == g.type && r.start <= now && now < r.end &&
          r.count - reservation_used_[i] >= j.gpus) {
        j.reservation = static_cast<int>(i);
        reservation_used_[i] += j.gpus;
        break;
      }
    }
  }
  if (j.queue >= 0 && flavor >= 0) quota_.Add(j.queue, flavor, j.gpus);
  AddRunning(j);
  j.wait = Job::Wait::kNew;
  j.waiting.clear();

  std::string why = o.reserved ? "reserved capacity already paid for"
                               : "the cheapest eligible " + std::string(g.use_spot ? "spot " : "") + "capacity at " +
                                     Dollars(j.price_micros, estate_.currency) +
                                     (g.type == kCpuType ? " per CPU-hour" : " per GPU-hour");
  j.placement = Placement{j.cluster,   j.pool,        o.cluster->provider, o.cluster->zone,
                          j.flavor_name, j.gpus,      o.reserved,         borrowed,
                          Money(j.price_micros, estate_.currency).AmountString(), o.data_local, why};
  Transition t = AttemptTransition(j, Transition::Kind::kDispatched, now);
  j.admitted_only = !provider->StartsOnLaunch();
  t.new_state = j.admitted_only ? JobState::kAdmitted : JobState::kRunning;
  t.attempts = attempt;
  t.total_gpu_seconds = j.input.gpu_seconds;
  t.total_cost_micros = j.input.cost_micros;
  t.message = "attempt " + std::to_string(attempt) + " on " + j.cluster + " (" + CountOf(j.flavor_name, j.gpus) +
              "): " + why + (borrowed > 0 ? ", " + std::to_string(borrowed) + " of them on quota borrowed from the cohort" +
                                    (queue_borrowed > borrowed ? " (the queue borrows " + std::to_string(queue_borrowed) + " in all)" : "")
                              : "") +
              (j.resumed_from.empty() ? "" : ", resuming from " + j.resumed_from);
  out.push_back(std::move(t));
  return true;
}

void Engine::SeedMonthSpend(Timestamp now, std::map<std::string, int64_t> spend_micros) {
  ++version_;
  month_ = MonthOf(now);
  month_spend_ = std::move(spend_micros);
  warned_.clear();
  exhausted_.clear();
}

Timestamp Engine::MonthStart(Timestamp t) {
  time_t secs = static_cast<time_t>(ToUnixMicros(t) / 1'000'000);
  struct tm tm {};
  gmtime_r(&secs, &tm);
  tm.tm_mday = 1;
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  return FromUnixMicros(static_cast<int64_t>(timegm(&tm)) * 1'000'000);
}

int64_t Engine::TeamSpend(const std::string& team, Timestamp now) const {
  int64_t spend = 0;
  if (auto it = month_spend_.find(team); it != month_spend_.end()) spend = it->second;
  for (const auto& id : running_) {
    const Job& j = jobs_.at(id);
    if (j.spec().team != team) continue;
    int64_t us = std::max<int64_t>(0, ToUnixMicros(now) - ToUnixMicros(j.started));
    auto cost = Money::Scale(Money(j.price_micros, estate_.currency), j.gpus * us, 3'600'000'000LL);
    if (cost.ok()) spend += cost->micros();
  }
  return spend;
}

void Engine::CheckBudgets(Timestamp now, std::vector<Transition>& out) {
  int month = MonthOf(now);
  if (month != month_) {
    month_ = month;
    month_spend_.clear();
    warned_.clear();
    exhausted_.clear();
  }
  for (const auto& team : estate_.teams) {
    if (!team.budget || exhausted_.count(team.name)) continue;
    int64_t spend = TeamSpend(team.name, now);
    int64_t limit = team.budget->monthly.micros();
    auto report = [&](Transition::Kind kind, const std::string& what) {
      Transition t;
      t.kind = kind;
      t.team = team.name;
      t.time = now;
      t.total_cost_micros = spend;
      t.message = "team " + team.name + " has spent " + Dollars(spend, estate_.currency) + " of its " +
                  Dollars(limit, estate_.currency) + " monthly budget" + what;
      out.push_back(std::move(t));
    };
    if (spend >= limit) {
      exhausted_.insert(team.name);
      report(Transition::Kind::kBudgetExhausted, ": no new admissions until next month");
    } else if (spend * 100 >= limit * team.budget->soft_percent && warned_.insert(team.name).second) {
      report(Transition::Kind::kBudgetWarning, " (warning at " + std::to_string(team.budget->soft_percent) + "%)");
    }
  }
}

}  // namespace causeway::scheduler
