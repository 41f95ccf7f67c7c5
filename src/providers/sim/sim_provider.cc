#include "providers/sim/sim_provider.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "providers/registry.h"

namespace causeway {

namespace sim {
namespace {

// FNV-1a: stable across builds and platforms, unlike std::hash.
uint64_t Fnv(std::string_view s, uint64_t h = 1469598103934665603ULL) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

uint64_t SplitMix(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Time to the next event of a Poisson process with `per_hour` events per
// hour, or "never" for a zero rate.
Micros ExponentialDelay(uint64_t& state, double per_hour) {
  if (per_hour <= 0) return Micros::max();
  double u = (static_cast<double>(SplitMix(state) >> 11) + 0.5) / 9007199254740992.0;  // (0, 1)
  double hours = -std::log(u) / per_hour;
  if (hours > 1e6) return Micros::max();
  return Micros(static_cast<int64_t>(hours * 3600e6));
}

}  // namespace

void SimProvider::Pool::Move(int node, int new_free) {
  int old_free = free[node];
  auto& from = buckets[old_free];
  int idx = pos[node];
  from[idx] = from.back();
  pos[from[idx]] = idx;
  from.pop_back();
  buckets[new_free].push_back(node);
  pos[node] = static_cast<int>(buckets[new_free].size()) - 1;
  free[node] = new_free;
  free_total += new_free - old_free;
}

namespace {

SimBehaviour SettingsOrDefault(const Provider& provider) {
  const SimBehaviour* s = SettingsAs<SimBehaviour>(provider);
  return s ? *s : SimBehaviour{};
}

}  // namespace

SimProvider::SimProvider(const Estate& estate, const Provider& provider, uint64_t seed)
    : name_(provider.name), behaviour_(SettingsOrDefault(provider)), seed_(seed) {
  for (const auto& c : estate.clusters) {
    if (c.provider != provider.name) continue;
    for (const auto& p : c.node_pools) {
      Pool pool;
      pool.gpus_per_node = p.gpus_per_node;
      pool.cpu_only = p.cpu_only();
      pool.free.assign(static_cast<size_t>(p.nodes), p.gpus_per_node);
      pool.freed_at.assign(static_cast<size_t>(p.nodes), INT64_MIN);
      pool.buckets.resize(static_cast<size_t>(p.gpus_per_node) + 1);
      for (int n = 0; n < p.nodes; ++n) {
        pool.buckets[p.gpus_per_node].push_back(n);
        pool.pos.push_back(n);
      }
      pool.free_total = p.gpus_per_node * p.nodes;
      pools_[c.name][p.name] = std::move(pool);
    }
  }
  for (auto& [cluster, pools] : pools_) {
    for (auto& [name, pool] : pools) handles_.push_back(&pool);
  }
}

int SimProvider::ResolvePool(const std::string& cluster, const std::string& pool) const {
  Pool* p = const_cast<SimProvider*>(this)->FindPool(cluster, pool);
  auto it = std::find(handles_.begin(), handles_.end(), p);
  return p && it != handles_.end() ? static_cast<int>(it - handles_.begin()) : -1;
}

SimProvider::Pool* SimProvider::FindPool(const std::string& cluster, const std::string& pool) {
  auto c = pools_.find(cluster);
  if (c == pools_.end()) return nullptr;
  auto p = c->second.find(pool);
  return p == c->second.end() ? nullptr : &p->second;
}

bool SimProvider::Fits(const Pool& p, int gpus_per_node, int nodes) {
  if (gpus_per_node > p.gpus_per_node || gpus_per_node < 1) return false;
  int count = 0;
  for (int k = gpus_per_node; k <= p.gpus_per_node && count < nodes; ++k) {
    count += static_cast<int>(p.buckets[static_cast<size_t>(k)].size());
  }
  return count >= nodes;
}

bool SimProvider::Fits(int pool, int gpus_per_node, int nodes) const {
  if (pool < 0 || pool >= static_cast<int>(handles_.size())) return false;
  return Fits(*handles_[static_cast<size_t>(pool)], gpus_per_node, nodes);
}

int SimProvider::FreeGpus(int pool) const {
  if (pool < 0 || pool >= static_cast<int>(handles_.size())) return 0;
  return handles_[static_cast<size_t>(pool)]->free_total;
}

void SimProvider::ApplyScript(const Key& key, Micros& run_for, Running& run) const {
  auto script = scripts_.find(key);
  if (script == scripts_.end()) return;
  run_for = script->second.run_for;
  run.outcome = script->second.outcome;
  run.exit_code = script->second.exit_code;
  run.reason = std::string("as recorded: ") + std::string(AttemptOutcomeName(run.outcome));
}

std::pair<int, int> SimProvider::FreeOn(int pool, int at_least) const {
  if (pool < 0 || pool >= static_cast<int>(handles_.size())) return {0, 0};
  const Pool& p = *handles_[static_cast<size_t>(pool)];
  int nodes = 0, gpus = 0;
  for (int k = std::max(at_least, 1); k <= p.gpus_per_node; ++k) {
    int n = static_cast<int>(p.buckets[static_cast<size_t>(k)].size());
    nodes += n;
    gpus += n * k;
  }
  return {nodes, gpus};
}

Status SimProvider::Place(const LaunchRequest& r, Timestamp started, Timestamp now) {
  if (outage_) return Unavailable("provider " + name_ + " is down");
  Pool* pool = FindPool(r.cluster, r.pool);
  if (!pool) return NotFound("provider " + name_ + " has no pool " + r.cluster + "/" + r.pool);
  if (!Fits(*pool, r.gpus_per_node, r.num_nodes)) {
    return ResourceExhausted("no room for " + std::to_string(r.num_nodes) + " x " + std::to_string(r.gpus_per_node) +
                             (pool->cpu_only ? " CPUs" : " GPUs") + " on " + r.cluster + "/" + r.pool);
  }
  Key key{r.job_id, r.attempt};
  if (running_.count(key)) return AlreadyExists("attempt " + std::to_string(r.attempt) + " of " + r.job_id + " is running");
  Running run{r, {}, pool->cpu_only, started, started, AttemptOutcome::kSucceeded, "", 0};
  // Best fit: fill the fullest nodes that still fit, keeping whole nodes free
  // for large gangs. Ascending free counts never revisit a moved node.
  for (int k = r.gpus_per_node; k <= pool->gpus_per_node && static_cast<int>(run.nodes.size()) < r.num_nodes; ++k) {
    auto& bucket = pool->buckets[static_cast<size_t>(k)];
    while (!bucket.empty() && static_cast<int>(run.nodes.size()) < r.num_nodes) {
      int node = bucket.back();
      pool->Move(node, k - r.gpus_per_node);
      run.nodes.push_back(node);
    }
  }
  if (backdate_floor_ && started == now) {  // a launch, not a re-adoption
    int64_t at = ToUnixMicros(*backdate_floor_);
    for (int node : run.nodes) at = std::max(at, pool->freed_at[static_cast<size_t>(node)]);
    started = run.started = FromUnixMicros(std::min(at, ToUnixMicros(now)));
  }

  // The attempt's fate is drawn once, from a stream of its own, so it does
  // not depend on what else runs.
  uint64_t state = seed_ ^ Fnv(r.job_id) ^ (static_cast<uint64_t>(r.attempt) * 0x9e3779b97f4a7c15ULL);
  Micros run_for = ExpectedRun(r.sim, r.time_limit);
  run.outcome = r.sim.exit_code == 0 ? AttemptOutcome::kSucceeded : AttemptOutcome::kFailed;
  run.exit_code = r.sim.exit_code;
  run.reason = r.sim.exit_code == 0 ? "completed" : "the program exited with code " + std::to_string(r.sim.exit_code);
  if (run_for < r.sim.duration) {
    run.outcome = AttemptOutcome::kTimeout;
    run.reason = "ran past its time_limit of " + FormatDuration(*r.time_limit);
  }
  Micros preempt = r.spot ? ExponentialDelay(state, behaviour_.spot_preemption_per_hour) : Micros::max();
  Micros node_fail = ExponentialDelay(state, behaviour_.node_failure_per_hour * r.num_nodes);
  if (preempt < run_for && preempt <= node_fail) {
    run_for = preempt;
    run.outcome = AttemptOutcome::kPreempted;
    run.reason = "spot capacity reclaimed by " + name_;
  } else if (node_fail < run_for) {
    run_for = node_fail;
    run.outcome = AttemptOutcome::kNodeFailure;
    run.reason = "node " + std::to_string(run.nodes[SplitMix(state) % run.nodes.size()]) + " of " + r.cluster +
                 " failed (GPU fell off the bus, XID 79)";
  }
  if (run.outcome != AttemptOutcome::kSucceeded) run.exit_code = run.outcome == AttemptOutcome::kFailed ? run.exit_code : -1;
  ApplyScript(key, run_for, run);
  run.ends = started + run_for;
  (void)now;
  ends_.push({ToUnixMicros(run.ends), key});
  running_.emplace(std::move(key), std::move(run));
  return Status::Ok();
}

Result<std::string> SimProvider::Launch(const LaunchRequest& request, Timestamp now) {
  RETURN_IF_ERROR(Place(request, now, now));
  if (!dispatch_log_.empty()) {
    if (request.held) {
      held_.insert({request.job_id, request.attempt});
    } else {
      LogDispatch(request.job_id, request.attempt);
    }
  }
  return "sim:" + request.job_id + ":" + std::to_string(request.attempt);
}

void SimProvider::Release(const RecordedLaunch& launch) {
  if (held_.erase({launch.job_id(), launch.attempt()})) LogDispatch(launch.job_id(), launch.attempt());
}

void SimProvider::LogDispatch(const std::string& job_id, int attempt) const {
  int fd = ::open(dispatch_log_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  std::string line = job_id + " " + std::to_string(attempt) + "\n";
  (void)!::write(fd, line.data(), line.size());
  ::close(fd);
}

Status SimProvider::Restore(const LaunchRequest& request, Timestamp started_at) {
  return Place(request, started_at, started_at);
}

void SimProvider::FreeRoom(const Running& r) {
  Pool* pool = FindPool(r.request.cluster, r.request.pool);
  for (int node : r.nodes) {
    pool->Move(node, pool->free[static_cast<size_t>(node)] + r.request.gpus_per_node);
    pool->freed_at[static_cast<size_t>(node)] = ToUnixMicros(r.ends);  // a cancelled one: later, capped at its next launch
  }
}

std::optional<Timestamp> SimProvider::StartedAt(const std::string& job_id, int attempt) const {
  auto it = running_.find({job_id, attempt});
  if (it == running_.end()) return std::nullopt;
  return it->second.started;
}

Status SimProvider::Cancel(const std::string& job_id, int attempt) {
  held_.erase({job_id, attempt});
  auto it = running_.find({job_id, attempt});
  if (it == running_.end()) return NotFound("attempt " + std::to_string(attempt) + " of " + job_id + " is not running");
  FreeRoom(it->second);
  running_.erase(it);
  return Status::Ok();
}

std::vector<ProviderEvent> SimProvider::Poll(Timestamp now) {
  std::vector<ProviderEvent> out = std::move(outage_events_);
  outage_events_.clear();
  while (!ends_.empty() && ends_.top().first <= ToUnixMicros(now)) {
    auto [at, key] = ends_.top();
    ends_.pop();
    auto it = running_.find(key);
    if (it == running_.end() || ToUnixMicros(it->second.ends) != at) continue;  // cancelled
    const Running& r = it->second;
    out.push_back(ProviderEvent{key.first, key.second, r.ends, r.outcome, r.exit_code, r.reason});
    FreeRoom(r);
    running_.erase(it);
  }
  return out;
}

std::optional<Timestamp> SimProvider::NextEventTime() {
  if (!outage_events_.empty()) return outage_events_.front().time;
  while (!ends_.empty()) {
    auto [at, key] = ends_.top();
    auto it = running_.find(key);
    if (it != running_.end() && ToUnixMicros(it->second.ends) == at) return FromUnixMicros(at);
    ends_.pop();  // a cancelled attempt's stale entry
  }
  return std::nullopt;
}

Status Register(providers::Registry& registry) {
  providers::Kind kind;
  kind.adapter = [](const providers::Context& c) -> std::unique_ptr<ProviderAdapter> {
    auto sim = std::make_unique<SimProvider>(c.estate, c.provider, c.seed);
    if (const char* log = std::getenv("CAUSEWAY_SIM_DISPATCH_LOG")) sim->SetDispatchLog(log);
    return sim;
  };
  kind.simulated = true;
  kind.answers_at_once = true;  // all in memory
  kind.estate = EstateKindOf();
  return registry.Register("sim", std::move(kind));
}

void SimProvider::SetOutage(bool down, Timestamp now) {
  if (down && !outage_) {
    for (auto& [key, r] : running_) {
      outage_events_.push_back(ProviderEvent{key.first, key.second, now, AttemptOutcome::kProviderOutage, -1,
                                             "provider " + name_ + " is down"});
      FreeRoom(r);
    }
    running_.clear();
  }
  outage_ = down;
}

std::vector<GpuSample> SimProvider::SampleUtilization(Timestamp now) const {
  std::vector<GpuSample> out;
  int64_t minute = ToUnixMicros(now) / 60'000'000;
  for (const auto& [key, r] : running_) {
    if (r.cpu_only) continue;
    int gpus = r.request.gpus_per_node * r.request.num_nodes;
    for (int g = 0; g < gpus; ++g) {
      uint64_t h = Fnv(key.first, static_cast<uint64_t>(minute * 131 + g * 7 + key.second));
      int base = r.request.sim.utilization_percent;
      // Busy jobs jitter by +-5 points; idle ones read 0-2%.
      int pct = base == 0 ? static_cast<int>(h % 3) : std::clamp(base + static_cast<int>(h % 11) - 5, 0, 100);
      out.push_back(GpuSample{key.first, key.second, r.request.cluster, g, now, pct});
    }
  }
  return out;
}

}  // namespace sim
}  // namespace causeway
