#include "dispatch/off_lock_adapter.h"

#include <algorithm>
#include <map>
#include <thread>
#include <utility>

#include "causeway/mutex.h"

namespace causeway::dispatch {
namespace {

using Key = std::pair<std::string, int>;  // job, attempt

// What the adapter last said of one pool.
struct PoolView {
  bool healthy = false;
  int free = 0;
  std::vector<int> fit;  // [k]: the most nodes that each have k GPUs free
};

// The room one attempt takes: `nodes` nodes of `gpus_per_node` GPUs.
struct Room {
  int pool = -1;  // index into State::pools
  int gpus_per_node = 0;
  int nodes = 0;
};

}  // namespace

struct OffLockAdapter::State {
  struct Pool {
    int handle = -1;
    int gpus_per_node = 0;
    int nodes = 0;
  };
  // A launch or restore the worker has not finished yet.
  struct Queued {
    Room room;
    bool launch = true;    // false: a restore, never withdrawn (its attempt may be running)
    bool started = false;  // the worker is calling the adapter for it now
  };
  // A ReadLog answer, kept alive by the task that fills it even after its
  // caller stopped waiting.
  struct LogSlot {
    bool done = false;
    Result<std::string> result = Unavailable("");
  };

  explicit State(OffLockOptions o) : options(std::move(o)) {}

  bool Hung() const { return worker->BusyFor() >= options.hang_after; }
  int Index(int handle) const {
    auto it = by_handle.find(handle);
    return it == by_handle.end() ? -1 : it->second;
  }
  Room RoomOf(const LaunchRequest& r) const {
    auto it = inner_pools.find({r.cluster, r.pool});
    return Room{it == inner_pools.end() ? -1 : Index(it->second), r.gpus_per_node, r.num_nodes};
  }

  // On the worker only: what the adapter says of every pool now.
  std::vector<PoolView> Snapshot() const {
    std::vector<PoolView> out(pools.size());
    for (size_t i = 0; i < pools.size(); ++i) {
      const Pool& p = pools[i];
      PoolView& v = out[i];
      v.healthy = inner->Healthy(p.handle);
      v.free = inner->FreeGpus(p.handle);
      v.fit.assign(static_cast<size_t>(p.gpus_per_node) + 1, 0);
      for (int k = 0; k <= p.gpus_per_node; ++k) {
        int lo = 0, hi = p.nodes;  // Fits is monotone in the node count
        while (lo < hi) {
          int mid = (lo + hi + 1) / 2;
          if (inner->Fits(p.handle, k, mid)) lo = mid; else hi = mid - 1;
        }
        v.fit[static_cast<size_t>(k)] = lo;
      }
    }
    return out;
  }

  void Event(const Key& key, ProviderEvent::Kind kind, Timestamp time, std::string reason, std::string backend_id)
      REQUIRES(mu) {
    ProviderEvent ev;
    ev.job_id = key.first;
    ev.attempt = key.second;
    ev.time = time;
    ev.kind = kind;
    ev.outcome = AttemptOutcome::kProviderOutage;
    ev.exit_code = -1;
    ev.reason = std::move(reason);
    ev.backend_id = std::move(backend_id);
    if (kind == ProviderEvent::Kind::kNotLaunched) rooms.erase(key);
    outbox.push_back(std::move(ev));
  }

  // Launch and Restore: booked now, sent to the adapter by the worker unless
  // withdrawn first. `call` runs on the worker.
  template <typename Call>
  Status Book(const LaunchRequest& r, Timestamp time, bool launch, const char* what, Call call) REQUIRES(mu) {
    Key key{r.job_id, r.attempt};
    if (Hung()) return Unavailable(name + " has not answered for a while; nothing more is sent to it");
    Room room = RoomOf(r);
    queued[key] = Queued{room, launch, false};
    rooms[key] = room;
    bool posted = worker->Post([this, key, r, time, what, call] {
      {
        MutexLock lock(mu);
        auto it = queued.find(key);
        if (it == queued.end()) return;  // withdrawn: cancelled, or the adapter hung
        it->second.started = true;
      }
      Result<std::string> done = call(*inner, r);
      std::vector<PoolView> snap = Snapshot();
      MutexLock lock(mu);
      raw = std::move(snap);
      queued.erase(key);
      if (!done.ok()) {
        Event(key, ProviderEvent::Kind::kNotLaunched, time, std::string(what) + " failed: " + done.status().message(), "");
      } else if (!done->empty()) {
        Event(key, ProviderEvent::Kind::kHandedOver, time, "", *done);
      }
    });
    if (!posted) {
      queued.erase(key);
      rooms.erase(key);
      return Unavailable(name + " has too many calls waiting");
    }
    return Status::Ok();
  }


  const OffLockOptions options;
  std::string name;
  bool starts_on_launch = true;
  std::map<std::pair<std::string, std::string>, int> inner_pools;  // (cluster, pool) -> the adapter's handle
  std::vector<Pool> pools;
  std::map<int, int> by_handle;  // handle -> index into pools
  std::unique_ptr<ProviderAdapter> inner;  // called on the worker only, after construction

  mutable Mutex mu;
  mutable CondVar cv;  // ReadLog answers
  std::vector<PoolView> raw GUARDED_BY(mu);
  std::map<Key, Queued> queued GUARDED_BY(mu);
  std::map<Key, Room> rooms GUARDED_BY(mu);    // every attempt it holds, for Cancel
  std::map<Key, Room> freeing GUARDED_BY(mu);  // cancels the worker has not finished
  std::vector<ProviderEvent> outbox GUARDED_BY(mu);
  bool poll_queued GUARDED_BY(mu) = false;
  bool sample_queued GUARDED_BY(mu) = false;
  std::vector<GpuSample> samples GUARDED_BY(mu);

  std::unique_ptr<Worker> worker;  // last: stopped (joined) before the rest goes
};

OffLockAdapter::OffLockAdapter(std::unique_ptr<ProviderAdapter> inner, const Estate& estate, const Provider& provider,
                               OffLockOptions options)
    : s_(std::make_shared<State>(std::move(options))) {
  State& s = *s_;
  s.name = inner->name();
  s.starts_on_launch = inner->StartsOnLaunch();
  for (const Cluster& c : estate.clusters) {
    if (c.provider != provider.name) continue;
    for (const NodePool& p : c.node_pools) {
      int handle = inner->ResolvePool(c.name, p.name);
      if (handle < 0) continue;
      s.inner_pools[{c.name, p.name}] = handle;
      if (s.by_handle.count(handle)) continue;
      s.by_handle[handle] = static_cast<int>(s.pools.size());
      s.pools.push_back(State::Pool{handle, p.gpus_per_node, p.nodes});
    }
  }
  s.inner = std::move(inner);
  std::vector<PoolView> first = s.Snapshot();
  {
    MutexLock lock(s.mu);
    s.raw = std::move(first);
  }
  s.worker = std::make_unique<Worker>(s.name, s.options.capacity, s.options.now ? s.options.now : SteadyClockNow);
}

OffLockAdapter::~OffLockAdapter() {
  if (!s_->Hung()) return;  // s_ goes: the worker finishes its call, drops the rest, joins
  // A call that hung may take as long as its own deadline: not waited for
  // here (a new scheduler term is built under the scheduler's lock).
  std::thread([s = std::move(s_)]() mutable { s.reset(); }).detach();
}

const std::string& OffLockAdapter::name() const { return s_->name; }
bool OffLockAdapter::StartsOnLaunch() const { return s_->starts_on_launch; }

int OffLockAdapter::ResolvePool(const std::string& cluster, const std::string& pool) const {
  auto it = s_->inner_pools.find({cluster, pool});
  return it == s_->inner_pools.end() ? -1 : it->second;
}

Result<std::string> OffLockAdapter::Launch(const LaunchRequest& request, Timestamp now) {
  State& s = *s_;
  MutexLock lock(s.mu);
  RETURN_IF_ERROR(s.Book(request, now, true, "launching it",
                         [now](ProviderAdapter& inner, const LaunchRequest& r) { return inner.Launch(r, now); }));
  return std::string();
}

Status OffLockAdapter::Restore(const LaunchRequest& request, Timestamp started_at) {
  State& s = *s_;
  MutexLock lock(s.mu);
  return s.Book(request, started_at, false, "re-adopting it after a restart",
                [started_at](ProviderAdapter& inner, const LaunchRequest& r) -> Result<std::string> {
                  RETURN_IF_ERROR(inner.Restore(r, started_at));
                  return std::string();
                });
}

void OffLockAdapter::Release(const RecordedLaunch& launch) {
  State& s = *s_;
  // Nothing to do for a launch withdrawn meanwhile: the adapter ignores a
  // release of what it does not hold. Its room was taken at Launch, so the
  // view of capacity stays as it is (a release that fails frees it, and the
  // next Poll says so).
  s.worker->PostAlways([&s, launch] { s.inner->Release(launch); });
}

Status OffLockAdapter::Cancel(const std::string& job_id, int attempt) {
  State& s = *s_;
  Key key{job_id, attempt};
  MutexLock lock(s.mu);
  auto q = s.queued.find(key);
  if (q != s.queued.end() && q->second.launch && !q->second.started) {  // the adapter never heard of it
    s.queued.erase(q);
    s.rooms.erase(key);
    return Status::Ok();
  }
  auto room = s.rooms.find(key);
  if (room == s.rooms.end()) return NotFound("attempt " + std::to_string(attempt) + " of " + job_id + " is not held here");
  s.freeing[key] = room->second;  // free in this view at once, as Cancel promises
  s.rooms.erase(room);
  s.worker->PostAlways([&s, key] {
    (void)s.inner->Cancel(key.first, key.second);
    std::vector<PoolView> snap = s.Snapshot();  // the adapter's own word on the room it freed
    MutexLock lock(s.mu);
    s.raw = std::move(snap);
    s.freeing.erase(key);
  });
  return Status::Ok();
}

std::vector<ProviderEvent> OffLockAdapter::Poll(Timestamp now) {
  State& s = *s_;
  MutexLock lock(s.mu);
  if (s.Hung()) {
    // Whatever waits behind the hung call goes elsewhere.
    auto seconds = std::chrono::duration_cast<std::chrono::seconds>(s.worker->BusyFor()).count();
    for (auto it = s.queued.begin(); it != s.queued.end();) {
      if (it->second.started || !it->second.launch) {
        ++it;
        continue;
      }
      Key key = it->first;
      it = s.queued.erase(it);
      s.Event(key, ProviderEvent::Kind::kNotLaunched, now,
              s.name + " has not answered for " + std::to_string(seconds) + " s; not sent there", "");
    }
  }
  if (!s.poll_queued) {
    s.poll_queued = s.worker->Post([&s, now] {
      std::vector<ProviderEvent> events = s.inner->Poll(now);
      std::vector<PoolView> snap = s.Snapshot();
      MutexLock lock(s.mu);
      s.raw = std::move(snap);
      s.poll_queued = false;
      for (ProviderEvent& ev : events) {
        if (ev.kind == ProviderEvent::Kind::kEnded || ev.kind == ProviderEvent::Kind::kNotLaunched) {
          s.rooms.erase({ev.job_id, ev.attempt});
        }
        s.outbox.push_back(std::move(ev));
      }
    });
  }
  std::vector<ProviderEvent> out = std::move(s.outbox);
  s.outbox.clear();
  return out;
}

bool OffLockAdapter::Fits(int pool, int gpus_per_node, int nodes) const {
  State& s = *s_;
  int i = s.Index(pool);
  if (i < 0 || gpus_per_node < 0 || gpus_per_node > s.pools[static_cast<size_t>(i)].gpus_per_node) return false;
  MutexLock lock(s.mu);
  int n = s.raw[static_cast<size_t>(i)].fit[static_cast<size_t>(gpus_per_node)];
  // Queued launches may take any node; queued cancels free nodes of at
  // least their own size.
  for (const auto& [key, q] : s.queued) {
    if (q.room.pool == i) n -= q.room.nodes;
  }
  for (const auto& [key, room] : s.freeing) {
    if (room.pool == i && room.gpus_per_node >= gpus_per_node) n += room.nodes;
  }
  return std::min(n, s.pools[static_cast<size_t>(i)].nodes) >= nodes;
}

int OffLockAdapter::FreeGpus(int pool) const {
  State& s = *s_;
  int i = s.Index(pool);
  if (i < 0) return 0;
  MutexLock lock(s.mu);
  int free = s.raw[static_cast<size_t>(i)].free;
  for (const auto& [key, q] : s.queued) {
    if (q.room.pool == i) free -= q.room.gpus_per_node * q.room.nodes;
  }
  for (const auto& [key, room] : s.freeing) {
    if (room.pool == i) free += room.gpus_per_node * room.nodes;
  }
  return std::max(free, 0);
}

const ProviderAdapter& OffLockAdapter::inner() const { return *s_->inner; }

void OffLockAdapter::Post(std::function<void(ProviderAdapter&)> call) {
  State& s = *s_;
  s.worker->PostAlways([&s, call = std::move(call)] {
    call(*s.inner);
    std::vector<PoolView> snap = s.Snapshot();
    MutexLock lock(s.mu);
    s.raw = std::move(snap);
  });
}

bool OffLockAdapter::Healthy(int pool) const {
  State& s = *s_;
  int i = s.Index(pool);
  if (i < 0 || s.Hung()) return false;
  MutexLock lock(s.mu);
  return s.raw[static_cast<size_t>(i)].healthy;
}

Result<std::string> OffLockAdapter::ReadLog(const std::string& cluster, const std::string& job_id, int attempt,
                                           int64_t offset, int64_t max) const {
  State& s = *s_;
  auto slot = std::make_shared<State::LogSlot>();
  bool posted = s.worker->Post([&s, slot, cluster, job_id, attempt, offset, max] {
    Result<std::string> r = s.inner->ReadLog(cluster, job_id, attempt, offset, max);
    MutexLock lock(s.mu);
    slot->result = std::move(r);
    slot->done = true;
    s.cv.NotifyAll();
  });
  if (!posted) return Unavailable(s.name + " has too many calls waiting; ask again");
  auto deadline = std::chrono::steady_clock::now() + s.options.read_deadline;
  MutexLock lock(s.mu);
  while (!slot->done) {
    if (!s.cv.WaitUntil(s.mu, deadline)) break;
  }
  if (!slot->done) return Unavailable(s.name + " did not answer in time; ask again");
  return slot->result;
}

std::vector<GpuSample> OffLockAdapter::SampleUtilization(Timestamp now) const {
  State& s = *s_;
  MutexLock lock(s.mu);
  if (!s.sample_queued) {
    s.sample_queued = s.worker->Post([&s, now] {
      std::vector<GpuSample> fresh = s.inner->SampleUtilization(now);
      MutexLock lock(s.mu);
      s.samples = std::move(fresh);
      s.sample_queued = false;
    });
  }
  return s.samples;
}

void OffLockAdapter::WaitIdle() const { s_->worker->WaitIdle(); }

}  // namespace causeway::dispatch
