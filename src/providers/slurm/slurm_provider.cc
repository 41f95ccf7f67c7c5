#include "providers/slurm/slurm_provider.h"

#include "providers/output_file.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <charconv>

namespace causeway::slurm {

std::optional<AttemptOutcome> OutcomeOf(const JobInfo& job) {
  const std::string& s = job.state;
  if (s == "COMPLETED") return AttemptOutcome::kSucceeded;
  if (s == "FAILED" || s == "OUT_OF_MEMORY") return AttemptOutcome::kFailed;
  if (s == "TIMEOUT" || s == "DEADLINE") return AttemptOutcome::kTimeout;
  if (s == "NODE_FAIL" || s == "BOOT_FAIL") return AttemptOutcome::kNodeFailure;
  if (s == "PREEMPTED") return AttemptOutcome::kPreempted;
  // Causeway's own cancellations are untracked before Slurm reports them, so
  // a CANCELLED job seen here was stopped by someone else (scancel,
  // scontrol): the work did not fail, so it is retried like a preemption.
  if (s == "CANCELLED") return AttemptOutcome::kPreempted;
  return std::nullopt;  // PENDING, RUNNING, CONFIGURING, COMPLETING, SUSPENDED, REQUEUED, ...
}

namespace {

std::string Reason(const JobInfo& j) {
  std::string what = "slurm job " + std::to_string(j.id) + " ended " + j.state;
  if (j.state == "FAILED") what += " with exit code " + std::to_string(j.exit_code);
  if (j.state == "OUT_OF_MEMORY") what += " (out of memory)";
  if (j.state == "CANCELLED") what += " outside Causeway (scancel or scontrol)";
  if (!j.reason.empty() && j.reason != "None") what += ", reason " + j.reason;
  return what;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

}  // namespace

SlurmProvider::SlurmProvider(const Estate& estate, const Provider& provider) : name_(provider.name) {
  for (const auto& c : estate.clusters) {
    if (c.provider != provider.name || !c.slurm) continue;
    settings_[c.name] = *c.slurm;
    clients_[c.name] = std::make_unique<SlurmClient>(Endpoint{c.slurm->url, c.slurm->user, c.slurm->token_file});
    for (const auto& p : c.node_pools) pools_.push_back(Pool{c.name, p.name, p.gpus_per_node, p.gpus_per_node * p.nodes, 0});
  }
}

std::string SlurmProvider::LogPath(const SlurmSettings& s, const std::string& job_id, int attempt) {
  return s.output_dir + "/" + job_id + "-" + std::to_string(attempt) + ".log";
}

SlurmClient& SlurmProvider::ClientFor(const std::string& cluster) { return *clients_.at(cluster); }

int SlurmProvider::ResolvePool(const std::string& cluster, const std::string& pool) const {
  for (size_t i = 0; i < pools_.size(); ++i) {
    if (pools_[i].cluster == cluster && pools_[i].name == pool) return static_cast<int>(i);
  }
  return -1;
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
  tracked_[{r.job_id, r.attempt}] = Tracked{r.cluster, pool, gpus, slurm_id, started};
  return Status::Ok();
}

Result<std::string> SlurmProvider::Launch(const LaunchRequest& r, Timestamp now) {
  auto settings = settings_.find(r.cluster);
  if (settings == settings_.end()) return NotFound("provider " + name_ + " has no cluster " + r.cluster);
  const SlurmSettings& s = settings->second;
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
  auto id = ClientFor(r.cluster).Submit(sub);
  if (!id.ok()) {
    if (IsRetryable(id.status().code())) healthy_ = false;
    return id.status().WithPrefix("submitting to " + r.cluster);
  }
  healthy_ = true;
  RETURN_IF_ERROR(Track(r, *id, now));
  return "slurm:" + r.cluster + ":" + std::to_string(*id);
}

Status SlurmProvider::Restore(const LaunchRequest& r, Timestamp started_at) {
  auto colon = r.backend_id.rfind(':');
  if (r.backend_id.rfind("slurm:", 0) != 0 || colon == std::string::npos) {
    return InvalidArgument("attempt " + std::to_string(r.attempt) + " of " + r.job_id + " has no Slurm job id");
  }
  int64_t id = 0;
  std::string_view digits = std::string_view(r.backend_id).substr(colon + 1);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) {
    return InvalidArgument("attempt " + std::to_string(r.attempt) + " of " + r.job_id + " has a malformed Slurm job id");
  }
  return Track(r, id, started_at);
}

Status SlurmProvider::Cancel(const std::string& job_id, int attempt) {
  auto it = tracked_.find({job_id, attempt});
  if (it == tracked_.end()) return NotFound("attempt " + std::to_string(attempt) + " of " + job_id + " is not in Slurm");
  Status st = ClientFor(it->second.cluster).Cancel(it->second.slurm_id);
  // Gone already is fine; anything else is reported, but the attempt is
  // Causeway's no longer either way.
  pools_[static_cast<size_t>(it->second.pool)].used -= it->second.gpus;
  tracked_.erase(it);
  if (st.code() == Code::kNotFound) return Status::Ok();
  return st;
}

Result<std::string> SlurmProvider::ReadLog(const std::string& cluster, const std::string& job_id, int attempt,
                                           int64_t offset, int64_t max) const {
  auto s = settings_.find(cluster);
  if (s == settings_.end()) return NotFound("provider " + name_ + " has no cluster " + cluster);
  return ReadOutputRange(LogPath(s->second, job_id, attempt), offset, max);
}

std::vector<ProviderEvent> SlurmProvider::Poll(Timestamp now) {
  std::vector<ProviderEvent> out;
  bool all_answered = true;
  std::map<std::string, std::map<int64_t, JobInfo>> by_cluster;
  std::set<std::string> busy;
  for (const auto& [key, t] : tracked_) busy.insert(t.cluster);
  for (auto& [cluster, client] : clients_) {
    // An idle cluster is asked only while the provider counts as down, to
    // notice its return; otherwise there is nothing to reconcile.
    if (!busy.count(cluster) && healthy_) continue;
    auto jobs = client->ListJobs();
    if (!jobs.ok()) {
      // Unreachable: report nothing, lose nothing; try again next cycle.
      all_answered = false;
      continue;
    }
    for (auto& j : *jobs) by_cluster[cluster][j.id] = std::move(j);
  }
  healthy_ = all_answered;
  for (auto it = tracked_.begin(); it != tracked_.end();) {
    const auto& [key, t] = *it;
    auto cluster = by_cluster.find(t.cluster);
    if (cluster == by_cluster.end()) {  // this cluster did not answer
      ++it;
      continue;
    }
    auto job = cluster->second.find(t.slurm_id);
    ProviderEvent ev{key.first, key.second, now, AttemptOutcome::kNodeFailure, -1, ""};
    if (job == cluster->second.end()) {
      ev.reason = "slurm no longer knows job " + std::to_string(t.slurm_id) + " (lost or purged)";
    } else {
      auto outcome = OutcomeOf(job->second);
      if (!outcome) {
        ++it;
        continue;
      }
      ev.outcome = *outcome;
      ev.exit_code = job->second.exit_code;
      ev.time = job->second.end.value_or(now);
      ev.reason = Reason(job->second);
      // The end of the output tells an out-of-memory, a full disk or an XID
      // from a plain bug.
      if (*outcome != AttemptOutcome::kSucceeded) ev.log_tail = ReadOutputTail(LogPath(settings_.at(t.cluster), key.first, key.second));
    }
    out.push_back(std::move(ev));
    pools_[static_cast<size_t>(t.pool)].used -= t.gpus;
    it = tracked_.erase(it);
  }
  std::sort(out.begin(), out.end(), [](const ProviderEvent& a, const ProviderEvent& b) { return a.time < b.time; });
  return out;
}

}  // namespace causeway::slurm
