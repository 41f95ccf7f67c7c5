#include "providers/slurm/slurm_provider.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "causeway/text.h"
#include "providers/output_file.h"
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

constexpr int64_t kFirstBackoffMicros = 1'000'000;
constexpr int64_t kMaxBackoffMicros = 60'000'000;

}  // namespace

SlurmProvider::SlurmProvider(const Estate& estate, const Provider& provider) : name_(provider.name) {
  for (const auto& c : estate.clusters) {
    if (c.provider != provider.name || !c.slurm) continue;
    int index = static_cast<int>(clusters_.size());
    clusters_.push_back(ClusterState{c.name, *c.slurm, ApiFor(*c.slurm), true, 0, Timestamp{}, ""});
    for (const auto& p : c.node_pools) pools_.push_back(Pool{index, p.name, p.gpus_per_node, p.gpus_per_node * p.nodes, 0});
  }
}

std::string SlurmProvider::LogPath(const SlurmSettings& s, const std::string& job_id, int attempt) {
  return s.output_dir + "/" + job_id + "-" + std::to_string(attempt) + ".log";
}

int SlurmProvider::ClusterIndex(const std::string& cluster) const {
  for (size_t i = 0; i < clusters_.size(); ++i) {
    if (clusters_[i].name == cluster) return static_cast<int>(i);
  }
  return -1;
}

void SlurmProvider::Note(ClusterState& c, const Status& st, Timestamp now) {
  if (st.ok() || !IsRetryable(st.code())) {
    // Any answer, even a refusal, means the cluster is there.
    c.healthy = true;
    c.failures = 0;
    return;
  }
  c.healthy = false;
  c.last_error = st.message();
  int64_t backoff = kFirstBackoffMicros << std::min(c.failures, 6);
  c.failures++;
  c.next_try = FromUnixMicros(ToUnixMicros(now) + std::min(backoff, kMaxBackoffMicros));
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
  return clusters_[static_cast<size_t>(pools_[static_cast<size_t>(pool)].cluster)].healthy;
}

bool SlurmProvider::Fits(int pool, int gpus_per_node, int nodes) const {
  if (pool < 0 || pool >= static_cast<int>(pools_.size())) return false;
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
  return std::max(0, pools_[static_cast<size_t>(pool)].capacity - pools_[static_cast<size_t>(pool)].used);
}

Status SlurmProvider::Track(const LaunchRequest& r, int64_t slurm_id, Timestamp started) {
  int pool = ResolvePool(r.cluster, r.pool);
  if (pool < 0) return NotFound("provider " + name_ + " has no pool " + r.cluster + "/" + r.pool);
  int gpus = r.gpus_per_node * r.num_nodes;
  pools_[static_cast<size_t>(pool)].used += gpus;
  tracked_[{r.job_id, r.attempt}] = Tracked{pools_[static_cast<size_t>(pool)].cluster, pool, gpus, slurm_id, started};
  return Status::Ok();
}

Result<std::string> SlurmProvider::Launch(const LaunchRequest& r, Timestamp now) {
  int index = ClusterIndex(r.cluster);
  if (index < 0) return NotFound("provider " + name_ + " has no cluster " + r.cluster);
  ClusterState& c = clusters_[static_cast<size_t>(index)];
  if (!c.healthy && now < c.next_try) {
    return Unavailable("cluster " + r.cluster + " is unreachable (" + c.last_error + "); asking again in " +
                       std::to_string((ToUnixMicros(c.next_try) - ToUnixMicros(now)) / 1'000'000 + 1) + " s");
  }
  const SlurmSettings& s = c.settings;
  int pool = ResolvePool(r.cluster, r.pool);
  if (!Fits(pool, r.gpus_per_node, r.num_nodes)) {
    return ResourceExhausted("no room for " + std::to_string(r.num_nodes) + " x " + std::to_string(r.gpus_per_node) +
                             " GPUs on " + r.cluster);
  }
  SubmitRequest sub;
  sub.name = "cw-" + r.job_id + "-" + std::to_string(r.attempt);
  sub.script = "#!/bin/bash\nset -e\n" + (r.setup.empty() ? "" : r.setup + "\n") + (r.run.empty() ? "true" : r.run) + "\n";
  sub.partition = s.partition;
  std::string gres_type = s.gres_type.empty() ? Lower(pools_[static_cast<size_t>(pool)].name) : s.gres_type;
  sub.gres = "gpu:" + gres_type + ":" + std::to_string(r.gpus_per_node);
  sub.nodes = r.num_nodes;
  if (r.time_limit) sub.time_limit_minutes = static_cast<int>((r.time_limit->count() / 1'000'000 + 59) / 60);
  sub.environment = r.env;
  if (!sub.environment.count("PATH")) sub.environment["PATH"] = "/usr/local/bin:/usr/bin:/bin";
  sub.working_directory = s.output_dir;
  sub.output = LogPath(s, r.job_id, r.attempt);
  auto id = c.api->Submit(sub);
  Note(c, id.status(), now);
  if (!id.ok()) return id.status().WithPrefix("submitting to " + r.cluster);
  RETURN_IF_ERROR(Track(r, *id, now));
  return "slurm:" + r.cluster + ":" + std::to_string(*id);
}

Status SlurmProvider::Restore(const LaunchRequest& r, Timestamp started_at) {
  auto colon = r.backend_id.rfind(':');
  if (r.backend_id.rfind("slurm:", 0) != 0 || colon == std::string::npos) {
    return InvalidArgument("attempt " + std::to_string(r.attempt) + " of " + r.job_id + " has no Slurm job id");
  }
  auto id = ParseInt(std::string_view(r.backend_id).substr(colon + 1));
  if (!id) {
    return InvalidArgument("attempt " + std::to_string(r.attempt) + " of " + r.job_id + " has a malformed Slurm job id");
  }
  return Track(r, *id, started_at);
}

Status SlurmProvider::Cancel(const std::string& job_id, int attempt) {
  auto it = tracked_.find({job_id, attempt});
  if (it == tracked_.end()) return NotFound("attempt " + std::to_string(attempt) + " of " + job_id + " is not in Slurm");
  Status st = clusters_[static_cast<size_t>(it->second.cluster)].api->Cancel(it->second.slurm_id);
  // Gone already is fine; anything else is reported, but the attempt is
  // Causeway's no longer either way.
  pools_[static_cast<size_t>(it->second.pool)].used -= it->second.gpus;
  tracked_.erase(it);
  if (st.code() == Code::kNotFound) return Status::Ok();
  return st;
}

Result<std::string> SlurmProvider::ReadLog(const std::string& cluster, const std::string& job_id, int attempt,
                                           int64_t offset, int64_t max) const {
  int index = ClusterIndex(cluster);
  if (index < 0) return NotFound("provider " + name_ + " has no cluster " + cluster);
  return ReadOutputRange(LogPath(clusters_[static_cast<size_t>(index)].settings, job_id, attempt), offset, max);
}

ProviderEvent SlurmProvider::Ended(const Key& key, const Tracked& t, const JobInfo& job, AttemptOutcome outcome,
                                   Timestamp now) const {
  ProviderEvent ev{key.first, key.second, job.end.value_or(now), outcome, job.exit_code, "", "", std::nullopt};
  ev.started = job.start;
  // The end of the output tells an out-of-memory, a full disk or an XID
  // from a plain bug.
  if (outcome != AttemptOutcome::kSucceeded) {
    ev.log_tail = ReadOutputTail(LogPath(clusters_[static_cast<size_t>(t.cluster)].settings, key.first, key.second));
  }
  return ev;
}

std::vector<ProviderEvent> SlurmProvider::Poll(Timestamp now) {
  std::vector<ProviderEvent> out;
  std::set<int> busy;
  for (const auto& [key, t] : tracked_) busy.insert(t.cluster);
  std::vector<std::optional<std::map<int64_t, JobInfo>>> listed(clusters_.size());
  for (size_t i = 0; i < clusters_.size(); ++i) {
    ClusterState& c = clusters_[i];
    // An idle healthy cluster has nothing to reconcile; a down one is asked
    // again once its backoff has passed, to notice its return.
    if (c.healthy ? !busy.count(static_cast<int>(i)) : now < c.next_try) continue;
    auto jobs = c.api->ListJobs();
    Note(c, jobs.status(), now);
    if (!jobs.ok()) continue;  // report nothing, lose nothing
    auto& by_id = listed[i].emplace();
    for (auto& j : *jobs) by_id[j.id] = std::move(j);
  }

  // Attempts whose end only accounting can tell, per cluster: the
  // controller forgot them, or Slurm requeued them (it ignores "no requeue"
  // through slurmrestd 22.05, and clusters may requeue on node failure).
  std::map<int, std::vector<std::pair<Key, bool>>> ask;  // bool: requeued
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    const auto& [key, t] = *it;
    const auto& by_id = listed[static_cast<size_t>(t.cluster)];
    if (!by_id) {  // this cluster did not answer
      ++it;
      continue;
    }
    auto job = by_id->find(t.slurm_id);
    if (job == by_id->end()) {
      ask[t.cluster].push_back({key, false});
      ++it;
      continue;
    }
    auto outcome = OutcomeOf(job->second);
    if (!outcome) {
      if (job->second.restarts > 0) {
        ask[t.cluster].push_back({key, true});
      } else if (!it->second.seen_running && job->second.state != "PENDING" && job->second.start) {
        it->second.seen_running = true;
        ProviderEvent ev{key.first, key.second, *job->second.start, AttemptOutcome::kSucceeded, 0, "", "", std::nullopt};
        ev.kind = ProviderEvent::Kind::kStarted;
        out.push_back(std::move(ev));
      }
      ++it;
      continue;
    }
    ProviderEvent ev = Ended(key, t, job->second, *outcome, now);
    ev.reason = Reason(job->second, false);
    out.push_back(std::move(ev));
    pools_[static_cast<size_t>(t.pool)].used -= t.gpus;
    it = tracked_.erase(it);
  }

  for (const auto& [cluster, keys] : ask) {
    ClusterState& c = clusters_[static_cast<size_t>(cluster)];
    std::map<int64_t, std::vector<JobInfo>> runs;  // oldest first
    if (c.settings.accounting) {
      std::vector<int64_t> ids;
      for (const auto& [k, requeued] : keys) ids.push_back(tracked_.at(k).slurm_id);
      auto records = c.api->Accounting(ids);
      // Accounting unreachable: ask again next cycle rather than guess.
      if (!records.ok()) continue;
      for (auto& r : *records) runs[r.id].push_back(std::move(r));
    }
    for (const auto& [key, requeued] : keys) {
      const Tracked& t = tracked_.at(key);
      // The run Causeway launched: the first that ended when Slurm requeued
      // it, else the last.
      const JobInfo* ended = nullptr;
      for (const JobInfo& run : runs[t.slurm_id]) {
        if (!OutcomeOf(run) || (requeued && ended)) continue;
        ended = &run;
      }
      ProviderEvent ev;
      if (ended) {
        ev = Ended(key, t, *ended, *OutcomeOf(*ended), now);
        ev.reason = Reason(*ended, true);
      } else {
        ev = ProviderEvent{key.first, key.second, now, AttemptOutcome::kNodeFailure, -1, "", "", std::nullopt};
        ev.reason = requeued ? "slurm requeued job " + std::to_string(t.slurm_id) +
                                   " (a node failure, a preemption or an administrator)"
                             : "slurm no longer knows job " + std::to_string(t.slurm_id) +
                                   (c.settings.accounting ? " and accounting has no end for it" : "") +
                                   " (lost or purged)";
      }
      // A requeued job would run again as a copy of this attempt; Causeway
      // makes the next attempt itself, with its own environment.
      if (requeued) {
        (void)c.api->Cancel(t.slurm_id);
        ev.reason += "; Causeway cancelled Slurm's requeued copy and retries the job itself";
      }
      out.push_back(std::move(ev));
      pools_[static_cast<size_t>(t.pool)].used -= t.gpus;
      tracked_.erase(key);
    }
  }
  std::sort(out.begin(), out.end(), [](const ProviderEvent& a, const ProviderEvent& b) { return a.time < b.time; });
  return out;
}

}  // namespace causeway::slurm
