#include "providers/slurm/slurm_provider.h"

#include <algorithm>
#include <cctype>
#include <set>

#include <spdlog/spdlog.h>

#include "causeway/crypto.h"
#include "causeway/text.h"
#include "providers/output_file.h"
#include "provenance/probe.h"
#include "providers/registry.h"
#include "providers/slurm/slurm_accounts.h"
#include "providers/slurm/slurm_cli.h"
#include "providers/slurm/slurm_client.h"

namespace causeway::slurm {

std::optional<AttemptOutcome> OutcomeOf(const JobInfo& job) {
  const std::string& s = job.state;
  if (s == "COMPLETED") return AttemptOutcome::kSucceeded;
  if (s == "FAILED" || s == "OUT_OF_MEMORY") return AttemptOutcome::kFailed;
  if (s == "TIMEOUT" || s == "DEADLINE") return AttemptOutcome::kTimeout;
  if (s == "NODE_FAIL" || s == "BOOT_FAIL") return AttemptOutcome::kNodeFailure;
  if (s == "PREEMPTED") return AttemptOutcome::kPreempted;
  // The work did not fail, so it is retried like a preemption.
  if (s == "CANCELLED") return AttemptOutcome::kPreempted;
  return std::nullopt;  // PENDING, RUNNING, CONFIGURING, COMPLETING, SUSPENDED, REQUEUED, ...
}

std::unique_ptr<SlurmApi> ApiFor(const SlurmSettings& s) {
  std::vector<std::unique_ptr<SlurmApi>> apis;
  for (const std::string& which : s.interfaces) {
    if (which == "rest") {
      apis.push_back(std::make_unique<SlurmClient>(Endpoint{s.url, s.user, s.token_file, s.token_command}));
    } else if (which == "cli") {
      apis.push_back(std::make_unique<SlurmCli>(s.conf));
    }
  }
  if (apis.size() == 1) return std::move(apis[0]);
  return std::make_unique<FallbackApi>(std::move(apis));
}

Status Register(providers::Registry& registry) {
  providers::Kind kind;
  kind.adapter = [](const providers::Context& c) -> std::unique_ptr<ProviderAdapter> {
    return std::make_unique<SlurmProvider>(c.estate, c.provider);
  };
  kind.people_accounts = [](const providers::Context& c) { return SlurmAccounts::ForProvider(c.estate, c.provider); };
  kind.answers_at_once = true;  // a worker per cluster calls Slurm (dispatch::Worker)
  kind.estate = EstateKindOf();
  return registry.Register("slurm", std::move(kind));
}

namespace {

std::string Reason(const JobInfo& j, bool from_accounting) {
  std::string what = "slurm job " + std::to_string(j.id) + " ended " + j.state;
  if (j.state == "FAILED") what += j.exit_code >= 0 ? " with exit code " + std::to_string(j.exit_code) : " (exit code not reported)";
  if (j.state == "OUT_OF_MEMORY") what += " (out of memory)";
  if (j.state == "CANCELLED") what += " outside Causeway (scancel or scontrol)";
  if (!j.reason.empty() && j.reason != "None") what += ", reason " + j.reason;
  if (from_accounting) what += " (from accounting)";
  return what;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

SlurmProvider::SlurmProvider(const Estate& estate, const Provider& provider, Options options)
    : name_(provider.name), options_(std::move(options)) {
  for (const auto& c : estate.clusters) {
    const SlurmSettings* settings = SettingsAs<SlurmSettings>(c);
    if (c.provider != provider.name || !settings) continue;
    int index = static_cast<int>(clusters_.size());
    ClusterState state;
    state.name = c.name;
    state.settings = *settings;
    state.api = options_.api(*settings);
    clusters_.push_back(std::move(state));
    for (const auto& p : c.node_pools) {
      pools_.push_back(Pool{index, p.name, p.gpus_per_node, p.gpus_per_node * p.nodes, 0, p.cpu_only()});
    }
  }
  // Started once clusters_ no longer moves: tasks name a cluster by index.
  for (ClusterState& c : clusters_) {
    c.worker = std::make_unique<dispatch::Worker>("slurm " + c.name, options_.queued_calls, options_.now);
  }
}

void SlurmProvider::WaitIdle() {
  for (ClusterState& c : clusters_) c.worker->WaitIdle();
}

SlurmProvider::~SlurmProvider() {
  // Before any member goes: a running task uses them.
  for (ClusterState& c : clusters_) c.worker->Stop();
}

std::string SlurmProvider::LogPath(const SlurmSettings& s, const std::string& job_id, int attempt) {
  return s.output_dir + "/" + job_id + "-" + std::to_string(attempt) + ".log";
}

std::string SlurmProvider::FactsPath(const SlurmSettings& s, const std::string& job_id, int attempt) {
  return s.output_dir + "/" + job_id + "-" + std::to_string(attempt) + ".facts";
}

std::string SlurmProvider::BackendId(const std::string& cluster, const std::string& id) {
  return "slurm:" + cluster + ":" + id;
}

std::string SlurmProvider::JobName(const std::string& job_id, int attempt) {
  return "cw-" + job_id + "-" + std::to_string(attempt);
}

int SlurmProvider::ClusterIndex(const std::string& cluster) const {
  for (size_t i = 0; i < clusters_.size(); ++i) {
    if (clusters_[i].name == cluster) return static_cast<int>(i);
  }
  return -1;
}

void SlurmProvider::Note(ClusterState& c, const Status& st) {
  if (st.ok() || !IsRetryable(st.code())) {
    // Any answer, even a refusal, means the cluster is there.
    c.backoff.Answered();
    return;
  }
  c.last_error = st.message();
  c.backoff.Failed(options_.now());
}

std::string SlurmProvider::Unavailability(const ClusterState& c) const {
  if (drill_down_) return "provider " + name_ + " is down (outage drill)";
  // Down until it answers again (Poll asks once the backoff has passed).
  if (c.backoff.failing()) {
    auto wait = std::chrono::duration_cast<std::chrono::seconds>(c.backoff.next() - options_.now());
    return "cluster " + c.name + " is unreachable (" + c.last_error + "); asking again " +
           (wait.count() >= 0 ? "in " + std::to_string(wait.count() + 1) + " s" : "now");
  }
  if (c.worker->BusyFor() >= options_.hung_after) {
    return "cluster " + c.name + " has not answered for " +
           std::to_string(std::chrono::duration_cast<std::chrono::seconds>(c.worker->BusyFor()).count()) + " s";
  }
  if (c.worker->waiting() >= options_.queued_calls) return QueueFull(c);
  return "";
}

int SlurmProvider::ResolvePool(const std::string& cluster, const std::string& pool) const {
  for (size_t i = 0; i < pools_.size(); ++i) {
    if (clusters_[static_cast<size_t>(pools_[i].cluster)].name == cluster && pools_[i].name == pool) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

bool SlurmProvider::Healthy(int pool) const {
  if (pool < 0 || pool >= static_cast<int>(pools_.size())) return false;
  MutexLock lock(mu_);
  return Unavailability(clusters_[static_cast<size_t>(pools_[static_cast<size_t>(pool)].cluster)]).empty();
}

bool SlurmProvider::Fits(int pool, int gpus_per_node, int nodes) const {
  if (pool < 0 || pool >= static_cast<int>(pools_.size())) return false;
  MutexLock lock(mu_);
  const Pool& p = pools_[static_cast<size_t>(pool)];
  // Slurm places the gang itself. Causeway keeps up to one more cluster's
  // worth of work queued in Slurm beyond what runs, so Slurm starts the next
  // job the moment one ends instead of waiting for Causeway's next cycle;
  // quotas and routing still decide what goes there.
  return gpus_per_node <= p.gpus_per_node && nodes * p.gpus_per_node <= p.capacity &&
         kBacklogFactor * p.capacity - p.used >= gpus_per_node * nodes;
}

int SlurmProvider::FreeGpus(int pool) const {
  if (pool < 0 || pool >= static_cast<int>(pools_.size())) return 0;
  MutexLock lock(mu_);
  return std::max(0, pools_[static_cast<size_t>(pool)].capacity - pools_[static_cast<size_t>(pool)].used);
}

Status SlurmProvider::Track(const LaunchRequest& r, int64_t slurm_id, Timestamp started) {
  int pool = ResolvePool(r.cluster, r.pool);
  if (pool < 0) return NotFound("provider " + name_ + " has no pool " + r.cluster + "/" + r.pool);
  int gpus = r.gpus_per_node * r.num_nodes;
  pools_[static_cast<size_t>(pool)].used += gpus;
  tracked_[{r.job_id, r.attempt}] = Tracked{pools_[static_cast<size_t>(pool)].cluster, pool, gpus, slurm_id, false, started};
  return Status::Ok();
}

void SlurmProvider::Untrack(std::map<Key, Tracked>::iterator it) {
  pools_[static_cast<size_t>(it->second.pool)].used -= it->second.gpus;
  held_.erase(it->first);
  tracked_.erase(it);
}

std::string BatchScript(const LaunchRequest& r) {
  // What every node runs, as SkyPilot does: setup, then run, with this
  // node's rank.
  std::string body = "set -e\nexport SKYPILOT_NODE_RANK=\"${SLURM_NODEID:-0}\"\n" + provenance::ProbeScript() +
                     (r.setup.empty() ? "" : r.setup + "\n") + (r.run.empty() ? "true" : r.run) + "\n";
  // The body travels to srun inside a quoted here-document, whose closing
  // word must not be a line of it.
  std::string word;
  do {
    word = "CAUSEWAY_NODE_SCRIPT_" + HexEncode(RandomBytes(8));
  } while (body.find("\n" + word + "\n") != std::string::npos);
  // Every node's address (one per line, as SkyPilot gives them), from the
  // allocation; then one task per node, each running the body (srun gives
  // a step all of the job's GPUs), failing as a whole when one fails.
  return "#!/bin/bash\nset -e\n"
         "if [ -n \"${SLURM_JOB_NODELIST:-}\" ] && command -v scontrol >/dev/null 2>&1; then\n"
         "  SKYPILOT_NODE_IPS=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" 2>/dev/null || hostname)\"\n"
         "  export SKYPILOT_NODE_IPS\n"
         "fi\n"
         "CAUSEWAY_NODE_SCRIPT=$(cat <<'" + word + "'\n" + body + word + "\n)\n"
         "if [ -n \"${SLURM_JOB_ID:-}\" ] && command -v srun >/dev/null 2>&1; then\n"
         "  exec srun --nodes=\"${SLURM_JOB_NUM_NODES:-1}\" --ntasks-per-node=1 --kill-on-bad-exit=1 "
         "/bin/bash -c \"$CAUSEWAY_NODE_SCRIPT\"\n"
         "fi\n"
         "exec /bin/bash -c \"$CAUSEWAY_NODE_SCRIPT\"\n";
}

Result<std::string> SlurmProvider::Launch(const LaunchRequest& r, Timestamp now) {
  int index = ClusterIndex(r.cluster);
  if (index < 0) return NotFound("provider " + name_ + " has no cluster " + r.cluster);
  int pool = ResolvePool(r.cluster, r.pool);
  if (!Fits(pool, r.gpus_per_node, r.num_nodes)) {
    return ResourceExhausted("no room for " + std::to_string(r.num_nodes) + " x " + std::to_string(r.gpus_per_node) +
                             (pool >= 0 && pools_[static_cast<size_t>(pool)].cpu_only ? " CPUs" : " GPUs") + " on " +
                             r.cluster);
  }
  MutexLock lock(mu_);
  ClusterState& c = clusters_[static_cast<size_t>(index)];
  if (std::string why = Unavailability(c); !why.empty()) return Unavailable(why);
  const SlurmSettings& s = c.settings;
  SubmitRequest sub;
  sub.name = JobName(r.job_id, r.attempt);
  sub.script = BatchScript(r);
  sub.partition = s.partition;
  // A CPU-only pool's job asks for its CPUs (cpus_per_node, set by the
  // engine) and no GPU.
  if (!pools_[static_cast<size_t>(pool)].cpu_only) {
    std::string gres_type = s.gres_type.empty() ? Lower(pools_[static_cast<size_t>(pool)].name) : s.gres_type;
    sub.gres = "gpu:" + gres_type + ":" + std::to_string(r.gpus_per_node);
  }
  sub.nodes = r.num_nodes;
  if (r.time_limit) sub.time_limit_minutes = static_cast<int>((r.time_limit->count() / 1'000'000 + 59) / 60);
  sub.cpus_per_task = r.cpus_per_node;
  sub.memory_mb = r.memory_mb_per_node;
  sub.environment = r.env;
  if (!sub.environment.count("PATH")) sub.environment["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  sub.working_directory = s.output_dir;
  sub.output = LogPath(s, r.job_id, r.attempt);
  sub.environment[std::string(provenance::kFactsFileVariable)] = FactsPath(s, r.job_id, r.attempt);
  RETURN_IF_ERROR(Track(r, 0, now));
  Key key{r.job_id, r.attempt};
  tracked_[key].submitting = true;
  if (r.held) {
    held_[key] = Held{index, std::move(sub), now};
  } else if (!c.worker->Post([this, index, key, sub = std::move(sub), now] { Submit(index, key, sub, now); })) {
    Untrack(tracked_.find(key));
    return Unavailable(QueueFull(c));
  }
  // The Slurm job id is not known yet: the job's name stands for it until
  // Slurm accepts the job (Poll reports the id with kHandedOver).
  return BackendId(r.cluster, JobName(r.job_id, r.attempt));
}

void SlurmProvider::Release(const RecordedLaunch& launch) {
  MutexLock lock(mu_);
  Key key{launch.job_id(), launch.attempt()};
  auto it = held_.find(key);
  if (it == held_.end()) return;  // cancelled meanwhile, or never held
  Held held = std::move(it->second);
  held_.erase(it);
  for (const auto& [k, v] : launch.env()) held.request.environment.emplace(k, v);
  int index = held.cluster;
  Timestamp at = held.at;
  bool posted = clusters_[static_cast<size_t>(index)].worker->Post(
      [this, index, key, sub = std::move(held.request), at] { Submit(index, key, sub, at); });
  if (posted) return;
  if (auto t = tracked_.find(key); t != tracked_.end()) Untrack(t);
  events_.push_back(NotLaunched(key, at, QueueFull(clusters_[static_cast<size_t>(index)])));
}

std::string SlurmProvider::QueueFull(const ClusterState& c) const {
  return "cluster " + c.name + " has " + std::to_string(options_.queued_calls) + " calls waiting";
}

ProviderEvent SlurmProvider::NotLaunched(const Key& key, Timestamp at, std::string reason) {
  ProviderEvent ev{key.first, key.second, at, AttemptOutcome::kProviderOutage, -1, std::move(reason), "", std::nullopt};
  ev.kind = ProviderEvent::Kind::kNotLaunched;
  return ev;
}

void SlurmProvider::Submit(int index, Key key, SubmitRequest request, Timestamp at) {
  ClusterState& c = clusters_[static_cast<size_t>(index)];
  std::string down;
  {
    MutexLock lock(mu_);
    if (!tracked_.count(key)) return;  // cancelled before it was sent
    // A cluster found down since this was queued: fail it now rather than
    // wait for another deadline.
    if (c.backoff.failing()) down = Unavailability(c);
  }
  Result<int64_t> id = down.empty() ? c.api->Submit(request) : Result<int64_t>(Unavailable(down));
  MutexLock lock(mu_);
  auto it = tracked_.find(key);
  if (down.empty()) Note(c, id.status());
  if (!id.ok()) {
    if (it == tracked_.end()) return;
    Untrack(it);
    events_.push_back(NotLaunched(key, at, "submitting to " + c.name + " failed: " + id.status().message()));
    return;
  }
  if (it != tracked_.end()) {
    it->second.slurm_id = *id;
    it->second.submitting = false;
    // Recorded before Slurm runs it: after a restart the attempt is found by
    // this id, in accounting too once the controller has forgotten it.
    ProviderEvent ev{key.first, key.second, at, AttemptOutcome::kSucceeded, 0, "", "", std::nullopt};
    ev.kind = ProviderEvent::Kind::kHandedOver;
    ev.backend_id = BackendId(c.name, std::to_string(*id));
    events_.push_back(std::move(ev));
    return;
  }
  // Cancelled while it was being submitted: stop what Slurm now holds.
  lock.Unlock();
  (void)c.api->Cancel(*id);
}

Status SlurmProvider::Restore(const LaunchRequest& r, Timestamp started_at) {
  std::string_view id_text = r.backend_id;
  if (id_text.rfind("slurm:", 0) != 0 || id_text.rfind(':') == std::string_view::npos) {
    return InvalidArgument("attempt " + std::to_string(r.attempt) + " of " + r.job_id + " has no Slurm job id");
  }
  id_text = id_text.substr(id_text.rfind(':') + 1);
  int64_t slurm_id = 0;
  if (id_text != JobName(r.job_id, r.attempt)) {  // else: handed over before its id was known; found by name
    auto id = ParseInt(id_text);
    if (!id || *id <= 0) {
      return InvalidArgument("attempt " + std::to_string(r.attempt) + " of " + r.job_id + " has a malformed Slurm job id");
    }
    slurm_id = *id;
  }
  MutexLock lock(mu_);
  return Track(r, slurm_id, started_at);
}

Status SlurmProvider::Cancel(const std::string& job_id, int attempt) {
  MutexLock lock(mu_);
  auto it = tracked_.find({job_id, attempt});
  if (it == tracked_.end()) return NotFound("attempt " + std::to_string(attempt) + " of " + job_id + " is not in Slurm");
  // The attempt is Causeway's no longer, whatever Slurm answers. One being
  // submitted is cancelled once its id comes back (Submit).
  int cluster = it->second.cluster;
  int64_t id = it->second.slurm_id;
  bool submitting = it->second.submitting;
  Untrack(it);
  dispatch::Worker& w = *clusters_[static_cast<size_t>(cluster)].worker;
  if (id > 0) {
    w.PostAlways([this, cluster, id] {
      Status st = clusters_[static_cast<size_t>(cluster)].api->Cancel(id);
      if (!st.ok() && st.code() != Code::kNotFound) {
        spdlog::warn("cancelling slurm job {} on {}: {}", id, clusters_[static_cast<size_t>(cluster)].name, st.message());
      }
    });
  } else if (!submitting) {
    w.PostAlways([this, cluster, name = JobName(job_id, attempt)] { CancelByName(cluster, name); });
  }
  return Status::Ok();
}

void SlurmProvider::SetOutage(bool down, Timestamp now) {
  std::vector<Key> stopped;
  {
    MutexLock lock(mu_);
    drill_down_ = down;
    if (!down) return;
    for (const auto& [key, t] : tracked_) stopped.push_back(key);
  }
  // Each attempt is Causeway's no longer (Cancel posts the scancel to its
  // cluster's worker: no call to Slurm under the lock), and ends as an
  // outage, to be resumed elsewhere.
  for (const Key& key : stopped) {
    if (!Cancel(key.first, key.second).ok()) continue;  // ended meanwhile: reported by Poll
    MutexLock lock(mu_);
    events_.push_back(ProviderEvent{key.first, key.second, now, AttemptOutcome::kProviderOutage, -1,
                                    "provider " + name_ + " is down (outage drill)", "", std::nullopt});
  }
}

void SlurmProvider::CancelByName(int cluster, std::string name) {
  SlurmApi& api = *clusters_[static_cast<size_t>(cluster)].api;
  auto jobs = api.ListJobs();
  if (!jobs.ok()) return;
  for (const JobInfo& j : *jobs) {
    if (j.name == name && !OutcomeOf(j)) (void)api.Cancel(j.id);
  }
}

Result<std::string> SlurmProvider::ReadLog(const std::string& cluster, const std::string& job_id, int attempt,
                                           int64_t offset, int64_t max) const {
  int index = ClusterIndex(cluster);
  if (index < 0) return NotFound("provider " + name_ + " has no cluster " + cluster);
  return ReadOutputRange(LogPath(clusters_[static_cast<size_t>(index)].settings, job_id, attempt), offset, max);
}

ProviderEvent SlurmProvider::Ended(const Key& key, const JobInfo& job, AttemptOutcome outcome, Timestamp now) {
  ProviderEvent ev{key.first, key.second, job.end.value_or(now), outcome, job.exit_code, "", "", std::nullopt};
  ev.started = job.start;
  return ev;
}

std::vector<ProviderEvent> SlurmProvider::Poll(Timestamp now) {
  MutexLock lock(mu_);
  std::set<int> busy;
  for (const auto& [key, t] : tracked_) busy.insert(t.cluster);
  auto steady = options_.now();
  for (size_t i = 0; i < clusters_.size(); ++i) {
    ClusterState& c = clusters_[i];
    // An idle healthy cluster has nothing to reconcile; a down one is asked
    // again once its backoff has passed, to notice its return.
    if (c.reconciling || !c.backoff.Ready(steady) || (!c.backoff.failing() && !busy.count(static_cast<int>(i)))) continue;
    int index = static_cast<int>(i);
    c.reconciling = c.worker->Post([this, index, now] { Reconcile(index, now); });
  }
  std::vector<ProviderEvent> out;
  out.swap(events_);
  std::sort(out.begin(), out.end(), [](const ProviderEvent& a, const ProviderEvent& b) { return a.time < b.time; });
  return out;
}

// Longer than the rest on purpose: it takes and releases the lock three
// times (the controller's list, accounting and the output's tail are read
// without it), and kept in one function the reader sees at once what each
// step may assume of `tracked_` after the lock was released.
void SlurmProvider::Reconcile(int cluster, Timestamp now) {
  ClusterState& c = clusters_[static_cast<size_t>(cluster)];
  {
    // Found down since this was queued: wait out the backoff.
    MutexLock lock(mu_);
    if (!c.backoff.Ready(options_.now())) {
      c.reconciling = false;
      return;
    }
  }
  auto jobs = c.api->ListJobs();
  MutexLock lock(mu_);
  Note(c, jobs.status());
  if (!jobs.ok()) {  // report nothing, lose nothing
    c.reconciling = false;
    return;
  }
  std::map<int64_t, JobInfo> by_id;
  std::map<std::string, int64_t> by_name;  // for attempts restored before their id was known
  for (auto& j : *jobs) {
    by_name[j.name] = j.id;
    int64_t id = j.id;
    by_id[id] = std::move(j);
  }
  // Attempts whose end only accounting can tell: the controller forgot
  // them, or Slurm requeued them (it ignores "no requeue" through slurmrestd
  // 22.05, and clusters may requeue on node failure).
  std::vector<Unseen> ask;
  // What this reconcile learned, published once the ends of failed
  // attempts' output are read (off the lock: disk).
  std::vector<ProviderEvent> learned;
  std::vector<bool> wants_tail;  // per learned event
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    auto& [key, t] = *it;
    if (t.cluster != cluster || t.submitting) {
      ++it;
      continue;
    }
    bool id_found = false;  // by name, just now
    if (t.slurm_id == 0) {
      auto named = by_name.find(JobName(key.first, key.second));
      if (named != by_name.end()) {
        t.slurm_id = named->second;
        id_found = true;
      }
    }
    auto job = by_id.find(t.slurm_id);
    if (job == by_id.end()) {
      ask.push_back({key, t.slurm_id, false});
      ++it;
      continue;
    }
    auto outcome = OutcomeOf(job->second);
    if (!outcome) {
      if (job->second.restarts > 0) {
        ask.push_back({key, t.slurm_id, true});
      } else if ((!t.seen_running || id_found) && job->second.state != "PENDING" && job->second.start) {
        t.seen_running = true;
        ProviderEvent ev{key.first, key.second, *job->second.start, AttemptOutcome::kSucceeded, 0, "", "", std::nullopt};
        ev.kind = ProviderEvent::Kind::kStarted;
        ev.backend_id = BackendId(c.name, std::to_string(t.slurm_id));
        learned.push_back(std::move(ev));
        wants_tail.push_back(false);
      }
      ++it;
      continue;
    }
    ProviderEvent ev = Ended(key, job->second, *outcome, now);
    ev.reason = Reason(job->second, false);
    learned.push_back(std::move(ev));
    wants_tail.push_back(*outcome != AttemptOutcome::kSucceeded);
    auto done = it++;
    Untrack(done);
  }

  // Accounting, without the lock; the attempts may be cancelled meanwhile.
  std::map<int64_t, std::vector<JobInfo>> runs;  // oldest first
  if (!ask.empty() && c.settings.accounting) {
    std::vector<int64_t> ids;
    for (const Unseen& u : ask) {
      if (u.slurm_id > 0) ids.push_back(u.slurm_id);
    }
    lock.Unlock();
    auto records = ids.empty() ? Result<std::vector<JobInfo>>(std::vector<JobInfo>{}) : c.api->Accounting(ids);
    lock.Lock();
    if (records.ok()) {
      for (auto& r : *records) runs[r.id].push_back(std::move(r));
    } else {
      ask.clear();  // accounting unreachable: ask again next cycle rather than guess
    }
  }
  std::vector<int64_t> requeued_copies;
  for (const Unseen& u : ask) {
    auto it = tracked_.find(u.key);
    if (it == tracked_.end() || it->second.slurm_id != u.slurm_id) continue;  // cancelled meanwhile
    const Tracked& t = it->second;
    // The run Causeway launched: the first that ended when Slurm requeued
    // it, else the last.
    const JobInfo* ended = nullptr;
    for (const JobInfo& run : runs[t.slurm_id]) {
      if (!OutcomeOf(run) || (u.requeued && ended)) continue;
      ended = &run;
    }
    ProviderEvent ev;
    if (ended) {
      ev = Ended(u.key, *ended, *OutcomeOf(*ended), now);
      ev.reason = Reason(*ended, true);
    } else {
      ev = ProviderEvent{u.key.first, u.key.second, now, AttemptOutcome::kNodeFailure, -1, "", "", std::nullopt};
      std::string which = t.slurm_id > 0 ? "job " + std::to_string(t.slurm_id) : "a job named " + JobName(u.key.first, u.key.second);
      ev.reason = u.requeued ? "slurm requeued " + which + " (a node failure, a preemption or an administrator)"
                             : "slurm no longer knows " + which +
                                   (c.settings.accounting ? " and accounting has no end for it" : "") + " (lost or purged)";
    }
    // A requeued job would run again as a copy of this attempt; Causeway
    // makes the next attempt itself, with its own environment.
    if (u.requeued) {
      requeued_copies.push_back(t.slurm_id);
      ev.reason += "; Causeway cancelled Slurm's requeued copy and retries the job itself";
    }
    learned.push_back(std::move(ev));
    wants_tail.push_back(ended && *OutcomeOf(*ended) != AttemptOutcome::kSucceeded);
    Untrack(it);
  }
  c.reconciling = false;
  lock.Unlock();
  // The end of the output tells an out-of-memory, a full disk or an XID
  // from a plain bug.
  // And what the probe found on each node, for the attempt's provenance.
  for (size_t i = 0; i < learned.size(); ++i) {
    ProviderEvent& ev = learned[i];
    if (wants_tail[i]) ev.log_tail = ReadOutputTail(LogPath(c.settings, ev.job_id, ev.attempt));
    if (ev.kind == ProviderEvent::Kind::kEnded) ev.node_facts = ReadNodeFacts(FactsPath(c.settings, ev.job_id, ev.attempt));
  }
  for (int64_t id : requeued_copies) (void)c.api->Cancel(id);
  lock.Lock();
  for (ProviderEvent& ev : learned) events_.push_back(std::move(ev));
}

}  // namespace causeway::slurm
