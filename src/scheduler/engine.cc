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
    case ProviderEvent::Kind::kWaiting:
      if (j.admitted_only) j.backend_waiting = ev.reason;
      return;
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
  j.backend_waiting.clear();
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
