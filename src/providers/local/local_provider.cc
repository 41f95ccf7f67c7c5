#include "providers/local/local_provider.h"
#include "providers/local/local_settings.h"

#include "causeway/text.h"
#include "providers/output_file.h"
#include "provenance/probe.h"
#include "providers/registry.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

namespace causeway::local {

Status Register(providers::Registry& registry) {
  providers::Kind kind;
  kind.adapter = [](const providers::Context& c) -> std::unique_ptr<ProviderAdapter> {
    return std::make_unique<LocalProvider>(c.estate, c.provider);
  };
  kind.estate = EstateKindOf();
  return registry.Register("local", std::move(kind));
}

LocalProvider::LocalProvider(const Estate& estate, const Provider& provider) : name_(provider.name) {
  for (const auto& c : estate.clusters) {
    if (c.provider != provider.name) continue;
    const LocalSettings* s = SettingsAs<LocalSettings>(c);
    output_dirs_[c.name] = s ? s->output_dir : "";
    for (const auto& p : c.node_pools) {
      pools_.push_back(Pool{c.name, p.name, p.gpus_per_node, std::vector<bool>(static_cast<size_t>(p.gpus_per_node)),
                            p.cpu_only()});
    }
  }
}

LocalProvider::~LocalProvider() = default;

std::string LocalProvider::Base(const std::string& cluster, const std::string& job_id, int attempt) const {
  return output_dirs_.at(cluster) + "/" + job_id + "-" + std::to_string(attempt);
}

int LocalProvider::ResolvePool(const std::string& cluster, const std::string& pool) const {
  for (size_t i = 0; i < pools_.size(); ++i) {
    if (pools_[i].cluster == cluster && pools_[i].name == pool) return static_cast<int>(i);
  }
  return -1;
}

int LocalProvider::FreeGpus(int pool) const {
  if (pool < 0 || pool >= static_cast<int>(pools_.size())) return 0;
  int free = 0;
  for (bool busy : pools_[static_cast<size_t>(pool)].gpu_busy) free += !busy;
  return free;
}

bool LocalProvider::Fits(int pool, int gpus_per_node, int nodes) const {
  return !outage_ && nodes == 1 && FreeGpus(pool) >= gpus_per_node;
}

void LocalProvider::SetOutage(bool down, Timestamp now) {
  if (down && !outage_) {
    for (auto& [key, r] : running_) {
      if (r.pid > 0) {
        ::kill(-r.pid, SIGKILL);
        ::waitpid(r.pid, nullptr, WNOHANG);
      }
      for (int g : r.gpus) pools_[static_cast<size_t>(r.pool)].gpu_busy[static_cast<size_t>(g)] = false;
      events_.push_back(ProviderEvent{key.first, key.second, now, AttemptOutcome::kProviderOutage, -1,
                                      "provider " + name_ + " is down (outage drill)"});
    }
    running_.clear();
  }
  outage_ = down;
}

Result<std::string> LocalProvider::Launch(const LaunchRequest& r, Timestamp now) {
  if (outage_) return Unavailable("provider " + name_ + " is down");
  int pool = ResolvePool(r.cluster, r.pool);
  if (pool < 0) return NotFound("provider " + name_ + " has no pool " + r.cluster + "/" + r.pool);
  if (!Fits(pool, r.gpus_per_node, r.num_nodes)) {
    return ResourceExhausted("no room for " + std::to_string(r.num_nodes) + " x " + std::to_string(r.gpus_per_node) +
                             (pools_[static_cast<size_t>(pool)].cpu_only ? " CPUs" : " GPUs") + " on " + r.cluster +
                             " (the local executor runs single-node work)");
  }
  Pool& p = pools_[static_cast<size_t>(pool)];
  Running run;
  run.pool = pool;
  for (int g = 0; g < p.gpus_per_node && static_cast<int>(run.gpus.size()) < r.gpus_per_node; ++g) {
    if (!p.gpu_busy[static_cast<size_t>(g)]) run.gpus.push_back(g);
  }
  std::string base = Base(r.cluster, r.job_id, r.attempt);
  run.log_file = base + ".log";
  run.exit_file = base + ".exit";
  if (r.held) {  // its GPUs are taken now; the process starts at Release (pid 0 until then)
    run.held = r;
    run.launched = now;
  } else {
    RETURN_IF_ERROR(Start(r, run));
  }
  for (int g : run.gpus) p.gpu_busy[static_cast<size_t>(g)] = true;
  std::string id = BackendId(r.cluster, run.pid, run.gpus);
  running_[{r.job_id, r.attempt}] = std::move(run);
  return id;
}

std::string LocalProvider::Visible(const std::vector<int>& gpus) {
  std::string visible;
  for (int g : gpus) visible += (visible.empty() ? "" : ",") + std::to_string(g);
  return visible;
}

std::string LocalProvider::BackendId(const std::string& cluster, pid_t pid, const std::vector<int>& gpus) {
  return "local:" + cluster + ":" + std::to_string(pid) + ":" + Visible(gpus);
}

Status LocalProvider::Start(const LaunchRequest& r, Running& run) {
  std::string visible = Visible(run.gpus);
  std::string dir = output_dirs_.at(r.cluster);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::filesystem::remove(run.exit_file, ec);
  // The probe first, in the attempt's own environment (provenance/probe.h).
  std::string script = "set -e\n" + provenance::ProbeScript() + (r.setup.empty() ? "" : r.setup + "\n") +
                       (r.run.empty() ? "true" : r.run) + "\n";

  // Everything the child needs is prepared before fork: it only calls
  // async-signal-safe functions.
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : r.env) env_strings.push_back(k + "=" + v);
  if (!r.env.count("PATH")) env_strings.push_back("PATH=/usr/local/bin:/usr/bin:/bin");
  env_strings.push_back("CUDA_VISIBLE_DEVICES=" + (pools_[static_cast<size_t>(run.pool)].cpu_only ? "" : visible));
  env_strings.push_back("CAUSEWAY_EXIT_FILE=" + run.exit_file);
  env_strings.push_back(std::string(provenance::kFactsFileVariable) + "=" + FactsFile(run));
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  // The wrapper records the script's exit status, atomically, for Poll.
  std::string wrapper = "/bin/bash -c \"$0\"; s=$?; echo $s > \"$CAUSEWAY_EXIT_FILE.tmp\" && mv \"$CAUSEWAY_EXIT_FILE.tmp\" \"$CAUSEWAY_EXIT_FILE\"";
  const char* argv[] = {"/bin/sh", "-c", wrapper.c_str(), script.c_str(), nullptr};

  int log_fd = ::open(run.log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) return FailedPrecondition("cannot write " + run.log_file + ": " + std::strerror(errno));
  pid_t pid = ::fork();
  if (pid < 0) {
    ::close(log_fd);
    return ResourceExhausted(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setsid();  // its own process group, so Cancel can kill all of it
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, 0);
    // Nothing else of the server's (its listening socket, its database):
    // an attempt may outlive the server, which must be able to start again.
    ::close_range(3, ~0U, 0);
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    ::execve("/bin/sh", const_cast<char* const*>(argv), envp.data());
    ::_exit(127);
  }
  ::close(log_fd);
  run.pid = pid;
  if (r.time_limit) run.deadline = std::chrono::time_point_cast<Micros>(std::chrono::system_clock::now()) + *r.time_limit;
  // Beside the log, for a restart that finds only the placeholder id of a
  // held launch, or no id at all (the process id was reported by the next
  // Poll): its process id, then its GPUs.
  std::ofstream(PidFile(run)) << pid << "\n" << visible << "\n";
  return Status::Ok();
}

std::string LocalProvider::FactsFile(const Running& run) {
  return run.log_file.substr(0, run.log_file.size() - 4) + ".facts";
}

std::string LocalProvider::PidFile(const Running& run) {
  return run.log_file.substr(0, run.log_file.size() - 4) + ".pid";
}

void LocalProvider::Release(const RecordedLaunch& launch) {
  const std::string& job_id = launch.job_id();
  const int attempt = launch.attempt();
  auto it = running_.find({job_id, attempt});
  if (it == running_.end() || !it->second.held) return;
  Running& run = it->second;
  LaunchRequest r = std::move(*run.held);
  run.held.reset();
  for (const auto& [k, v] : launch.env()) r.env.emplace(k, v);
  Status st = Start(r, run);
  Timestamp now = run.launched;  // when the scheduler placed it
  if (!st.ok()) {
    for (int g : run.gpus) pools_[static_cast<size_t>(run.pool)].gpu_busy[static_cast<size_t>(g)] = false;
    running_.erase(it);
    ProviderEvent ev{job_id, attempt, now, AttemptOutcome::kProviderOutage, -1, "", "", std::nullopt};
    ev.kind = ProviderEvent::Kind::kNotLaunched;
    ev.reason = "starting it failed: " + st.message();
    events_.push_back(std::move(ev));
    return;
  }
  ProviderEvent ev{job_id, attempt, now, AttemptOutcome::kSucceeded, 0, "", "", std::nullopt};
  ev.kind = ProviderEvent::Kind::kHandedOver;
  ev.backend_id = BackendId(r.cluster, run.pid, run.gpus);
  events_.push_back(std::move(ev));
}

Status LocalProvider::Restore(const LaunchRequest& r, Timestamp started_at) {
  int pool = ResolvePool(r.cluster, r.pool);
  if (pool < 0) return NotFound("provider " + name_ + " has no pool " + r.cluster + "/" + r.pool);
  Running run;
  run.pool = pool;
  std::string base = Base(r.cluster, r.job_id, r.attempt);
  run.log_file = base + ".log";
  run.exit_file = base + ".exit";
  // "local:CLUSTER:PID:GPUS", with PID 0 for a launch recorded while held;
  // or nothing, for one recorded before this executor had named it (a
  // dispatcher stood in front of it). Where the process id is not known,
  // what the process wrote beside its log says, if it was started at all.
  std::string pid_text, gpus;
  if (r.backend_id.empty()) {
    pid_text = "0";
  } else {
    std::vector<std::string> parts = Split(r.backend_id, ':');
    if (parts.size() != 4 || parts[0] != "local") {
      return InvalidArgument("attempt " + std::to_string(r.attempt) + " of " + r.job_id + " has no local process id");
    }
    pid_text = parts[2];
    gpus = parts[3];
  }
  auto pid = ParseInt(pid_text);
  if (!pid || *pid < 0) return InvalidArgument("attempt of " + r.job_id + " has a malformed process id");
  if (*pid == 0) {
    std::ifstream file(PidFile(run));
    int64_t written = 0;
    std::string rest, written_gpus;
    if (!(file >> written) || written <= 0) {
      return NotFound("attempt " + std::to_string(r.attempt) + " of " + r.job_id + " was never started");
    }
    std::getline(file, rest);
    if (std::getline(file, written_gpus)) gpus = written_gpus;
    pid = written;
  }
  run.pid = static_cast<pid_t>(*pid);
  if (r.time_limit) run.deadline = started_at + *r.time_limit;
  for (const std::string& index : Split(gpus, ',')) {
    if (index.empty()) continue;  // no GPUs
    auto gpu = ParseInt(index);
    if (!gpu || *gpu < 0 || *gpu >= pools_[static_cast<size_t>(pool)].gpus_per_node) {
      return InvalidArgument("attempt of " + r.job_id + " has malformed GPU indices");
    }
    run.gpus.push_back(static_cast<int>(*gpu));
  }
  for (int g : run.gpus) pools_[static_cast<size_t>(pool)].gpu_busy[static_cast<size_t>(g)] = true;
  running_[{r.job_id, r.attempt}] = std::move(run);
  return Status::Ok();
}

Status LocalProvider::Cancel(const std::string& job_id, int attempt) {
  auto it = running_.find({job_id, attempt});
  if (it == running_.end()) return NotFound("attempt " + std::to_string(attempt) + " of " + job_id + " is not running here");
  if (it->second.pid > 0) {  // 0: held, never started (and kill(0) would reach our own group)
    ::kill(-it->second.pid, SIGKILL);
    ::waitpid(it->second.pid, nullptr, WNOHANG);
  }
  for (int g : it->second.gpus) pools_[static_cast<size_t>(it->second.pool)].gpu_busy[static_cast<size_t>(g)] = false;
  running_.erase(it);
  return Status::Ok();
}

std::vector<ProviderEvent> LocalProvider::Poll(Timestamp now) {
  std::vector<ProviderEvent> out;
  out.swap(events_);
  for (auto it = running_.begin(); it != running_.end();) {
    Running& r = it->second;
    if (r.pid <= 0) {  // held: not started yet
      ++it;
      continue;
    }
    ::waitpid(r.pid, nullptr, WNOHANG);  // reaps our own children; others' are not ours to reap
    std::ifstream exit_file(r.exit_file);
    int code = -1;
    bool exited = static_cast<bool>(exit_file >> code);
    bool alive = !exited && ::kill(r.pid, 0) == 0;
    if (alive) {
      // A zombie is not alive: read its state letter.
      std::ifstream stat("/proc/" + std::to_string(r.pid) + "/stat");
      std::string pid, comm, state;
      stat >> pid >> comm >> state;
      alive = state != "Z";
    }
    bool overdue = alive && r.deadline && std::chrono::system_clock::now() >= *r.deadline;
    if (alive && !overdue) {
      ++it;
      continue;
    }
    ProviderEvent ev{it->first.first, it->first.second, now, AttemptOutcome::kSucceeded, code, "completed"};
    if (overdue) {
      ::kill(-r.pid, SIGKILL);
      ::waitpid(r.pid, nullptr, WNOHANG);
      ev.outcome = AttemptOutcome::kTimeout;
      ev.exit_code = -1;
      ev.reason = "ran past its time_limit and was stopped";
      ev.log_tail = ReadOutputTail(r.log_file);
    } else if (!exited) {
      ev.outcome = AttemptOutcome::kNodeFailure;
      ev.reason = "the process group of attempt " + std::to_string(it->first.second) + " vanished without an exit status";
    } else if (code != 0) {
      ev.outcome = AttemptOutcome::kFailed;
      ev.reason = "the program exited with code " + std::to_string(code);
      ev.log_tail = ReadOutputTail(r.log_file);
    }
    ev.node_facts = ReadNodeFacts(FactsFile(r));
    for (int g : r.gpus) pools_[static_cast<size_t>(r.pool)].gpu_busy[static_cast<size_t>(g)] = false;
    out.push_back(std::move(ev));
    it = running_.erase(it);
  }
  return out;
}

Result<std::string> LocalProvider::ReadLog(const std::string& cluster, const std::string& job_id, int attempt,
                                           int64_t offset, int64_t max) const {
  if (!output_dirs_.count(cluster)) return NotFound("provider " + name_ + " has no cluster " + cluster);
  return ReadOutputRange(Base(cluster, job_id, attempt) + ".log", offset, max);
}

}  // namespace causeway::local
