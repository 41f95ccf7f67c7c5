#include "planning/replay.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include "providers/sim/sim_provider.h"
#include "scheduler/engine.h"

namespace causeway::planning {
namespace {

using scheduler::Transition;
constexpr int64_t kUs = 1'000'000;

// A GPU node pool of the estate, as the replay watches it.
struct PoolInfo {
  sim::SimProvider* sim = nullptr;
  GroupStats* gpu_group = nullptr;   // "gpu:TYPE"
  GroupStats* zone_group = nullptr;  // "zone:ZONE"
  int handle = -1;
  std::string type, zone;
  int gpus_per_node = 0;
  int64_t capacity = 0;
  int64_t allocated = 0;  // now
};

// What the replay keeps of each trace job.
struct JobRun {
  int64_t first_start_us = -1;
  int32_t pool = -1;  // of its latest attempt
  bool pending = false;
  bool done = false;
  bool succeeded = false;
};

// A waiting job's shape: what decides whether a pool's free GPUs are of use to it.
struct Shape {
  uint16_t types = 0, zone = 0;
  int32_t gpus = 0, nodes = 1;
  auto operator<=>(const Shape&) const = default;
};

class Replayer {
 public:
  Replayer(const Estate& estate, const Trace& trace, const ReplayOptions& o) : estate_(estate), trace_(trace), o_(o) {}

  Result<RunResult> Run();

 private:
  Status Setup();
  void SetupPools();
  JobSpec SpecOf(size_t i) const;
  std::string IdOf(size_t i) const { return trace_.history ? trace_.history->ids[i] : std::to_string(i); }
  Timestamp SubmitTime(size_t i) const {
    return trace_.history ? trace_.history->origin + Micros(trace_.history->submit_us[i])
                          : o_.start + std::chrono::seconds(trace_.jobs[i].submit_s);
  }
  // Fidelity: scripts each attempt the provider ended, and lists people's cancellations.
  void Script();
  void CompareWithRecord();
  // The recorded run's decision moments (fidelity), ascending.
  std::vector<int64_t> DecisionMoments();
  // The next attempt end or arrival after job `next`, if any.
  std::optional<Timestamp> NextEvent(size_t next);
  // One scheduling step at `now`: arrivals, people's cancellations, Tick,
  // and what it changed observed. Returns the transitions.
  std::vector<Transition> Step(Timestamp now, size_t& next, size_t& next_cancel);
  const std::string& TeamOf(const TraceJob& j) const;
  void Submit(size_t i, Timestamp now);
  std::optional<size_t> IndexOf(const std::string& job_id) const;
  void Observe(const Transition& t);
  void Dispatched(size_t i, const Transition& t, int pool);
  void AttemptEnded(size_t i, const Transition& t, int pool);
  void Advance(Timestamp to);
  // Stranded GPUs per pool now (only while some job waits).
  void MeasureStranded();
  const std::vector<char>& Compatible(uint16_t types, uint16_t zone);
  void AddShape(size_t i, int delta);
  void Finish(Timestamp end);
  // The groups job `i` counts in, given the pool of its latest attempt (-1: none).
  struct Groups {
    std::array<GroupStats*, 4> g{};
    size_t n = 0;
    GroupStats** begin() { return g.data(); }
    GroupStats** end() { return g.data() + n; }
  };
  Groups GroupsOf(size_t i, int pool);

  const Estate& estate_;
  const Trace& trace_;
  const ReplayOptions& o_;
  std::vector<std::unique_ptr<sim::SimProvider>> sims_;
  std::unique_ptr<scheduler::Engine> engine_;
  std::vector<PoolInfo> pools_;
  std::map<std::string, int> pool_index_;  // "cluster/pool"
  std::vector<std::vector<std::string>> types_;  // per trace type set: estate types
  std::set<std::string> queue_teams_;
  bool has_queues_ = false;
  std::vector<JobRun> runs_;
  // History traces: engine ids are the recorded ones.
  std::unordered_map<std::string, size_t> index_;
  // Fidelity: people's cancellations (time, job), and what the replay did
  // of each job's attempts (start, "cluster/pool").
  std::vector<std::pair<int64_t, size_t>> cancels_;
  std::vector<std::vector<std::pair<int64_t, std::string>>> replayed_;
  GroupStats* all_ = nullptr;
  std::vector<GroupStats*> team_groups_, zone_groups_;  // by trace team / zone index
  std::map<Shape, int64_t> waiting_;  // shape -> waiting jobs
  std::map<std::pair<uint16_t, uint16_t>, std::vector<char>> compatible_;
  std::vector<int64_t> stranded_;  // per pool, now
  int64_t stranded_total_ = 0, pending_ = 0, allocated_total_ = 0;
  // Reserved GPUs in use, per "cluster/type".
  std::map<std::string, int64_t> reserved_now_;
  std::map<std::string, double> reserved_used_s_;
  std::map<size_t, int64_t> borrowed_now_;  // job -> borrowed GPUs of its running attempt
  Timestamp now_;
  int64_t first_us_ = -1, last_us_ = -1;
  // The series' current bucket: its start and accumulated areas.
  int64_t bucket_start_us_ = 0;
  double bucket_alloc_ = 0, bucket_stranded_ = 0, bucket_pending_ = 0;
  RunResult r_;
};

Status Replayer::Setup() {
  if (o_.fidelity && !trace_.history) return InvalidArgument("a replay of the recorded run needs a history trace (--from-history)");
  for (const auto& q : estate_.queues) queue_teams_.insert(q.team);
  has_queues_ = !estate_.queues.empty();
  if (!o_.default_team.empty() && has_queues_ && !queue_teams_.count(o_.default_team)) {
    return InvalidArgument("default team \"" + o_.default_team + "\" has no queue in the estate");
  }
  for (const auto& p : estate_.providers) {
    sims_.push_back(std::make_unique<sim::SimProvider>(estate_, p, o_.seed));
  }
  std::map<std::string, ProviderAdapter*> adapters;
  for (auto& s : sims_) adapters[s->name()] = s.get();
  engine_ = std::make_unique<scheduler::Engine>(estate_, adapters);
  SetupPools();
  runs_.assign(trace_.jobs.size(), {});
  if (trace_.history) {
    for (size_t i = 0; i < trace_.history->ids.size(); ++i) index_[trace_.history->ids[i]] = i;
  }
  all_ = &r_.groups["all"];
  for (size_t k = 0; k < trace_.teams.size(); ++k) {
    TraceJob j;
    j.team = static_cast<uint16_t>(k);
    const std::string& as = TeamOf(j);
    team_groups_.push_back(as.empty() ? nullptr : &r_.groups["team:" + as]);
  }
  for (const auto& zone : trace_.zones) zone_groups_.push_back(zone.empty() ? nullptr : &r_.groups["zone:" + zone]);
  return Status::Ok();
}

void Replayer::SetupPools() {
  std::set<std::string> estate_types;
  for (const auto& c : estate_.clusters) {
    auto sim = std::find_if(sims_.begin(), sims_.end(), [&](const auto& s) { return s->name() == c.provider; });
    if (sim == sims_.end()) continue;
    for (const auto& p : c.node_pools) {
      if (p.cpu_only()) continue;
      pool_index_[c.name + "/" + p.name] = static_cast<int>(pools_.size());
      pools_.push_back({sim->get(), &r_.groups["gpu:" + p.gpu_type], &r_.groups["zone:" + c.zone],
                        (*sim)->ResolvePool(c.name, p.name), p.gpu_type, c.zone, p.gpus_per_node,
                        static_cast<int64_t>(p.gpus_per_node) * p.nodes, 0});
      estate_types.insert(p.gpu_type);
      r_.series.available_gpus += pools_.back().capacity;
    }
  }
  stranded_.assign(pools_.size(), 0);
  // Each of the trace's GPU type sets as estate types: mapped, or every
  // type of the estate for "any".
  std::vector<std::string> all(estate_types.begin(), estate_types.end());
  for (const auto& set : trace_.type_sets) {
    std::vector<std::string> mapped;
    for (const auto& t : set) {
      auto m = o_.gpu_types.find(t);
      std::string to = m == o_.gpu_types.end() ? t : m->second;
      if (std::find(mapped.begin(), mapped.end(), to) == mapped.end()) mapped.push_back(to);
    }
    types_.push_back(set.empty() || o_.any_gpu_type ? all : mapped);
  }
}

const std::string& Replayer::TeamOf(const TraceJob& j) const {
  const std::string& team = trace_.teams[j.team];
  bool served = has_queues_ ? queue_teams_.count(team) > 0 : !team.empty();
  return served || o_.default_team.empty() ? team : o_.default_team;
}

JobSpec Replayer::SpecOf(size_t i) const {
  const TraceJob& j = trace_.jobs[i];
  JobSpec s;
  if (trace_.history) {
    s = trace_.history->specs[i];  // as recorded, routed on everything it asks for
  } else {
    for (const auto& type : types_[j.types]) {
      Alternative a;
      a.type = type;
      a.count = j.gpus;
      a.use_spot = j.spot;
      s.accelerators.alternatives.push_back(std::move(a));
    }
    s.num_nodes = j.nodes;
    s.priority = j.priority;
    s.use_spot = j.spot;
    s.residency = trace_.zones[j.zone];
  }
  s.team = TeamOf(j);
  s.sim.duration = std::chrono::seconds(j.duration_s);
  s.sim.utilization_percent = j.util_permille / 10;
  s.sim.exit_code = j.status == TraceStatus::kFailed ? 1 : j.status == TraceStatus::kCancelled ? 130 : 0;
  return s;
}

Replayer::Groups Replayer::GroupsOf(size_t i, int pool) {
  const TraceJob& j = trace_.jobs[i];
  Groups g;
  g.g[g.n++] = all_;
  if (team_groups_[j.team]) g.g[g.n++] = team_groups_[j.team];
  if (pool >= 0) {
    g.g[g.n++] = pools_[static_cast<size_t>(pool)].gpu_group;
    g.g[g.n++] = pools_[static_cast<size_t>(pool)].zone_group;
  } else if (zone_groups_[j.zone]) {
    g.g[g.n++] = zone_groups_[j.zone];
  }
  return g;
}

void Replayer::AddShape(size_t i, int delta) {
  const TraceJob& j = trace_.jobs[i];
  Shape s{j.types, j.zone, j.gpus, j.nodes};
  auto it = waiting_.try_emplace(s, 0).first;
  it->second += delta;
  if (it->second == 0) waiting_.erase(it);
  pending_ += delta;
  runs_[i].pending = delta > 0;
}

void Replayer::Submit(size_t i, Timestamp now) {
  const TraceJob& j = trace_.jobs[i];
  if (first_us_ < 0) first_us_ = ToUnixMicros(now);
  scheduler::JobInput in;
  in.id = IdOf(i);
  in.spec = SpecOf(i);
  in.created_at = trace_.history ? SubmitTime(i) : now;
  if (trace_.history && !trace_.history->after[i].empty()) {
    auto before = index_.find(trace_.history->after[i]);
    if (before != index_.end()) {
      in.after = trace_.history->after[i];
      const JobRun& b = runs_[before->second];
      in.after_state = b.done ? (b.succeeded ? JobState::kSucceeded : JobState::kFailed) : JobState::kPending;
    }
  }
  (void)j;
  Status st = engine_->Submit(std::move(in));
  if (!st.ok()) {
    ++r_.refused;
    runs_[i].done = true;
    if (r_.refusals.size() < 20 || r_.refusals.count(st.message())) ++r_.refusals[st.message()];
    return;
  }
  AddShape(i, +1);
}

std::optional<size_t> Replayer::IndexOf(const std::string& job_id) const {
  if (trace_.history) {
    auto found = index_.find(job_id);
    return found == index_.end() ? std::nullopt : std::optional<size_t>(found->second);
  }
  size_t i = 0;
  auto [p, ec] = std::from_chars(job_id.data(), job_id.data() + job_id.size(), i);
  return ec != std::errc() || i >= runs_.size() ? std::nullopt : std::optional<size_t>(i);
}

void Replayer::Observe(const Transition& t) {
  std::optional<size_t> i = IndexOf(t.job_id);
  if (!i) return;
  auto pool_it = pool_index_.find(t.cluster + "/" + t.pool);
  int pool = pool_it == pool_index_.end() ? -1 : pool_it->second;
  switch (t.kind) {
    case Transition::Kind::kDispatched:
      Dispatched(*i, t, pool);
      break;
    case Transition::Kind::kAttemptEnded:
      AttemptEnded(*i, t, pool);
      break;
    case Transition::Kind::kAbandoned:
      if (runs_[*i].pending) AddShape(*i, -1);
      runs_[*i].done = true;
      for (GroupStats* g : GroupsOf(*i, -1)) ++g->jobs, ++g->cancelled;
      break;
    default:
      break;
  }
}

// The reserved capacity an attempt holds, by cluster and GPU type.
std::string ReservedKey(const Transition& t) { return t.cluster + "/" + t.flavor.substr(0, t.flavor.find("-spot")); }

void Replayer::Dispatched(size_t i, const Transition& t, int pool) {
  JobRun& run = runs_[i];
  int64_t at_us = ToUnixMicros(t.time);
  if (run.pending) AddShape(i, -1);
  run.pool = pool;
  if (run.first_start_us < 0) {
    run.first_start_us = at_us;
    for (GroupStats* g : GroupsOf(i, pool)) g->waits_s.push_back((at_us - ToUnixMicros(SubmitTime(i))) / kUs);
  }
  if (!replayed_.empty()) replayed_[i].push_back({at_us, t.cluster + "/" + t.pool});
  if (pool >= 0) pools_[static_cast<size_t>(pool)].allocated += t.gpus;
  allocated_total_ += t.gpus;
  if (t.reserved) reserved_now_[ReservedKey(t)] += t.gpus;
  if (t.borrowed > 0) borrowed_now_[i] = t.borrowed;
}

void Replayer::AttemptEnded(size_t i, const Transition& t, int pool) {
  int64_t at_us = ToUnixMicros(t.time);
  if (pool >= 0) pools_[static_cast<size_t>(pool)].allocated -= t.gpus;
  allocated_total_ -= t.gpus;
  if (t.reserved) reserved_now_[ReservedKey(t)] -= t.gpus;
  auto groups = GroupsOf(i, pool);
  double secs = static_cast<double>(t.gpu_seconds);
  bool preempted = t.outcome == AttemptOutcome::kPreempted || !t.preempted_by.empty();
  bool node_failure = t.outcome == AttemptOutcome::kNodeFailure;
  double useful = t.outcome == AttemptOutcome::kSucceeded ? secs * trace_.jobs[i].util_permille / 1000.0 : 0;
  double borrowed = 0;
  if (auto b = borrowed_now_.find(i); b != borrowed_now_.end()) {
    borrowed = static_cast<double>(b->second) * static_cast<double>(at_us - ToUnixMicros(t.started)) / kUs;
    borrowed_now_.erase(b);
  }
  for (GroupStats* g : groups) {
    g->allocated_gpu_s += secs;
    g->cost_micros += t.cost_micros;
    g->goodput_gpu_s += useful;
    g->preemptions += preempted;
    g->node_failures += node_failure;
    g->borrowed_gpu_s += borrowed;
  }
  if (!IsTerminal(t.new_state)) {
    AddShape(i, +1);  // back in its queue
    return;
  }
  runs_[i].done = true;
  runs_[i].succeeded = t.new_state == JobState::kSucceeded;
  last_us_ = std::max(last_us_, at_us);
  int64_t since_submit = (at_us - ToUnixMicros(SubmitTime(i))) / kUs;
  for (GroupStats* g : groups) {
    ++g->jobs;
    g->completed += t.new_state == JobState::kSucceeded;
    g->failed += t.new_state == JobState::kFailed;
    g->cancelled += t.new_state == JobState::kCancelled;
    if (t.new_state == JobState::kSucceeded) g->completion_s.push_back(since_submit);
  }
}

const std::vector<char>& Replayer::Compatible(uint16_t types, uint16_t zone) {
  auto [it, added] = compatible_.try_emplace({types, zone});
  if (added) {
    const auto& allowed = types_[types];
    for (const PoolInfo& p : pools_) {
      bool type_ok = std::find(allowed.begin(), allowed.end(), p.type) != allowed.end();
      it->second.push_back(type_ok && (zone == 0 || trace_.zones[zone] == p.zone));
    }
  }
  return it->second;
}

void Replayer::MeasureStranded() {
  stranded_total_ = 0;
  std::fill(stranded_.begin(), stranded_.end(), 0);
  if (pending_ == 0) return;
  for (size_t p = 0; p < pools_.size(); ++p) {
    const PoolInfo& pool = pools_[p];
    int64_t free = pool.capacity - pool.allocated;
    if (free <= 0) continue;
    // The smallest per-node count of a waiting job that may use the pool
    // and whose gang finds its nodes: GPUs on nodes with at least that many
    // free are of use; the rest are stranded.
    int best = -1;
    for (const auto& [shape, count] : waiting_) {
      if (shape.gpus > pool.gpus_per_node || (best >= 0 && shape.gpus >= best)) continue;
      if (!Compatible(shape.types, shape.zone)[p]) continue;
      if (pool.sim->FreeOn(pool.handle, shape.gpus).first >= shape.nodes) best = shape.gpus;
    }
    int64_t usable = best < 0 ? 0 : pool.sim->FreeOn(pool.handle, best).second;
    stranded_[p] = free - usable;
    stranded_total_ += stranded_[p];
  }
}

void Replayer::Advance(Timestamp to) {
  int64_t from_us = ToUnixMicros(now_), to_us = ToUnixMicros(to);
  if (to_us <= from_us) return;
  double dt = static_cast<double>(to_us - from_us) / kUs;
  for (size_t p = 0; p < pools_.size(); ++p) {
    if (stranded_[p]) {
      double s = static_cast<double>(stranded_[p]) * dt;
      pools_[p].gpu_group->stranded_gpu_s += s;
      pools_[p].zone_group->stranded_gpu_s += s;
      all_->stranded_gpu_s += s;
    }
  }
  for (const auto& [key, gpus] : reserved_now_) reserved_used_s_[key] += static_cast<double>(gpus) * dt;
  // The series: time-weighted means per bucket.
  int64_t interval_us = r_.series.interval_s * kUs;
  int64_t t = from_us;
  while (t < to_us) {
    int64_t bucket_end = bucket_start_us_ + interval_us;
    int64_t upto = std::min(to_us, bucket_end);
    double w = static_cast<double>(upto - t);
    bucket_alloc_ += static_cast<double>(allocated_total_) * w;
    bucket_stranded_ += static_cast<double>(stranded_total_) * w;
    bucket_pending_ += static_cast<double>(pending_) * w;
    t = upto;
    if (t == bucket_end) {
      double span = static_cast<double>(interval_us);
      r_.series.allocated.push_back(static_cast<float>(bucket_alloc_ / span));
      r_.series.stranded.push_back(static_cast<float>(bucket_stranded_ / span));
      r_.series.pending.push_back(static_cast<float>(bucket_pending_ / span));
      bucket_alloc_ = bucket_stranded_ = bucket_pending_ = 0;
      bucket_start_us_ = bucket_end;
    }
  }
  now_ = to;
}

void Replayer::Finish(Timestamp end) {
  int64_t start_us = first_us_ < 0 ? ToUnixMicros(o_.start) : first_us_;
  int64_t end_us = std::max(ToUnixMicros(end), start_us);
  r_.span_s = (end_us - start_us) / kUs;
  double span = static_cast<double>(end_us - start_us) / kUs;
  for (const PoolInfo& p : pools_) {
    double a = static_cast<double>(p.capacity) * span;
    p.gpu_group->available_gpu_s += a;
    p.zone_group->available_gpu_s += a;
    all_->available_gpu_s += a;
  }
  // Jobs that never started or never ended by the end.
  for (size_t i = 0; i < runs_.size(); ++i) {
    if (runs_[i].done) continue;
    for (GroupStats* g : GroupsOf(i, runs_[i].first_start_us >= 0 ? runs_[i].pool : -1)) {
      ++g->jobs;
      g->never_started += runs_[i].first_start_us < 0;
    }
  }
  // Reservations: committed over their time within the span.
  for (const Reservation& res : estate_.reservations) {
    int64_t from = std::max(start_us, ToUnixMicros(res.start)), to = std::min(end_us, ToUnixMicros(res.end));
    ReservationStats s;
    s.name = res.name;
    s.cluster = res.cluster;
    s.gpu_type = res.gpu_type;
    s.gpus = res.count;
    s.capacity_gpu_s = to > from ? static_cast<double>(res.count) * static_cast<double>(to - from) / kUs : 0;
    s.committed_micros = static_cast<int64_t>(std::llround(s.capacity_gpu_s / 3600.0 * static_cast<double>(res.price.micros())));
    r_.reservations.push_back(s);
  }
  // Use is known per cluster and GPU type: shared among its reservations by size.
  for (auto& s : r_.reservations) {
    double used = reserved_used_s_[s.cluster + "/" + s.gpu_type];
    double capacity = 0;
    for (const auto& o : r_.reservations) {
      if (o.cluster == s.cluster && o.gpu_type == s.gpu_type) capacity += o.capacity_gpu_s;
    }
    s.used_gpu_s = capacity > 0 ? std::min(s.capacity_gpu_s, used * s.capacity_gpu_s / capacity) : 0;
    double unused_share = s.capacity_gpu_s > 0 ? 1.0 - s.used_gpu_s / s.capacity_gpu_s : 0;
    s.unused_micros = static_cast<int64_t>(std::llround(static_cast<double>(s.committed_micros) * unused_share));
    r_.unused_reservation_micros += s.unused_micros;
  }
  all_->cost_micros += r_.unused_reservation_micros;
}

void Replayer::Script() {
  const History& h = *trace_.history;
  replayed_.assign(trace_.jobs.size(), {});
  for (size_t i = 0; i < h.attempts.size(); ++i) {
    const auto& attempts = h.attempts[i];
    for (size_t k = 0; k < attempts.size(); ++k) {
      const RecordedAttempt& a = attempts[k];
      if (a.end_us < a.start_us) continue;  // still running when read: its spec's run time
      if (a.state == "cancelled") {
        // A person's cancellation ends the job; Causeway's own (preemption)
        // is the replay's to decide again.
        if (k + 1 == attempts.size() && h.final_state[i] == JobState::kCancelled) cancels_.push_back({a.end_us, i});
        continue;
      }
      AttemptOutcome outcome = AttemptOutcome::kSucceeded;
      for (AttemptOutcome o : {AttemptOutcome::kSucceeded, AttemptOutcome::kFailed, AttemptOutcome::kPreempted,
                               AttemptOutcome::kNodeFailure, AttemptOutcome::kTimeout, AttemptOutcome::kProviderOutage}) {
        if (a.state == AttemptOutcomeName(o)) outcome = o;
      }
      for (auto& sim : sims_) sim->Script(h.ids[i], a.number, Micros(a.end_us - a.start_us), outcome, a.exit_code);
    }
  }
  std::sort(cancels_.begin(), cancels_.end());
}

void Replayer::CompareWithRecord() {
  const History& h = *trace_.history;
  Fidelity f;
  auto differ = [&](std::string what) {
    if (f.differences.size() < 20) f.differences.push_back(std::move(what));
  };
  for (size_t i = 0; i < h.attempts.size(); ++i) {
    ++f.jobs;
    const auto& rec = h.attempts[i];
    const auto& rep = replayed_[i];
    f.attempts += static_cast<int64_t>(rec.size());
    int64_t rec_first = rec.empty() ? -1 : rec.front().start_us, rep_first = rep.empty() ? -1 : rep.front().first;
    if (rec_first != rep_first) {
      f.same_order = false;
      differ("job " + h.ids[i] + " first started " +
             (rec_first < 0 ? std::string("never") : FormatRfc3339(FromUnixMicros(rec_first))) + " in the record, " +
             (rep_first < 0 ? std::string("never") : FormatRfc3339(FromUnixMicros(rep_first))) + " in the replay");
    }
    for (size_t k = 0; k < std::max(rec.size(), rep.size()); ++k) {
      std::string was = k < rec.size() ? rec[k].cluster + "/" + rec[k].pool : "(none)";
      std::string is = k < rep.size() ? rep[k].second : "(none)";
      if (was != is) {
        f.same_placements = false;
        differ("job " + h.ids[i] + " attempt " + std::to_string(k + 1) + " ran on " + was + " in the record, " + is +
               " in the replay");
      }
    }
  }
  r_.fidelity = std::move(f);
}

std::vector<int64_t> Replayer::DecisionMoments() {
  std::vector<int64_t> moments;
  for (const auto& attempts : trace_.history->attempts) {
    for (const auto& a : attempts) moments.push_back(a.start_us);
  }
  for (const auto& [at, job] : cancels_) moments.push_back(at);
  std::sort(moments.begin(), moments.end());
  moments.erase(std::unique(moments.begin(), moments.end()), moments.end());
  return moments;
}

std::optional<Timestamp> Replayer::NextEvent(size_t next) {
  std::optional<Timestamp> jump;
  for (auto& s : sims_) {
    auto t = s->NextEventTime();
    if (t && (!jump || *t < *jump)) jump = t;
  }
  if (next < trace_.jobs.size() && (!jump || SubmitTime(next) < *jump)) jump = SubmitTime(next);
  return jump;
}

std::vector<Transition> Replayer::Step(Timestamp now, size_t& next, size_t& next_cancel) {
  while (next < trace_.jobs.size() && SubmitTime(next) <= now) Submit(next++, now);
  std::vector<Transition> transitions;
  while (next_cancel < cancels_.size() && cancels_[next_cancel].first <= ToUnixMicros(now)) {
    auto cancelled = engine_->Cancel(IdOf(cancels_[next_cancel++].second), now);
    if (cancelled.ok()) transitions.insert(transitions.end(), cancelled->begin(), cancelled->end());
  }
  auto ticked = engine_->Tick(now);
  transitions.insert(transitions.end(), ticked.begin(), ticked.end());
  for (const Transition& t : transitions) Observe(t);
  ++r_.ticks;
  MeasureStranded();
  return transitions;
}

Result<RunResult> Replayer::Run() {
  RETURN_IF_ERROR(Setup());
  r_.seed = o_.seed;
  now_ = o_.start;
  bucket_start_us_ = ToUnixMicros(o_.start);
  int64_t horizon_s = 1;
  for (const auto& j : trace_.jobs) horizon_s = std::max(horizon_s, j.submit_s + j.duration_s);
  r_.series.interval_s = std::max<int64_t>(60, (horizon_s + o_.series_points - 1) / std::max(1, o_.series_points));
  // A recorded run is replayed at the moments its scheduler decided: each
  // recorded start and cancellation; then on events until everything ends.
  std::vector<int64_t> moments;
  if (o_.fidelity) {
    Script();
    moments = DecisionMoments();
  }
  size_t next = 0, next_moment = 0, next_cancel = 0;
  Timestamp now = o_.start;
  bool idle_jump = false;  // the last step jumped a month with nothing else to do
  while (true) {
    if (!Step(now, next, next_cancel).empty()) idle_jump = false;
    while (next_moment < moments.size() && moments[next_moment] <= ToUnixMicros(now)) ++next_moment;
    std::optional<Timestamp> jump =
        next_moment < moments.size() ? std::optional<Timestamp>(FromUnixMicros(moments[next_moment])) : NextEvent(next);
    if (!jump && pending_ > 0 && !idle_jump) {
      // Nothing runs and nothing arrives: work held by a spent budget waits
      // for the next month; when that admits nothing either, nothing will.
      idle_jump = true;
      jump = scheduler::Engine::MonthStart(scheduler::Engine::MonthStart(now) + std::chrono::hours(24 * 32));
    }
    if (!jump) break;
    Advance(std::max(now, *jump));
    now = std::max(now, *jump);
  }
  Finish(last_us_ >= 0 ? FromUnixMicros(last_us_) : now);
  if (o_.fidelity) CompareWithRecord();
  return std::move(r_);
}

}  // namespace

Result<RunResult> Replay(const Estate& estate, const Trace& trace, const ReplayOptions& options) {
  Replayer r(estate, trace, options);
  return r.Run();
}

}  // namespace causeway::planning
