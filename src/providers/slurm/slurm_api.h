// What Causeway needs of a Slurm cluster, whichever interface serves it:
// slurmrestd's REST API (slurm_client.h) or the CLI tools (slurm_cli.h), or
// both in order of preference (FallbackApi). Every failure is a typed
// Status with a clear message:
//   missing or rejected credentials  -> kUnauthenticated
//   unknown job                      -> kNotFound
//   other Slurm errors               -> kFailedPrecondition, "slurm error N (what): description"
//   controller unreachable           -> kUnavailable (retryable)
//   no answer in time                -> kDeadlineExceeded (retryable)
// Implementations are not thread-safe: one per thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/clock.h"
#include "causeway/status.h"

namespace causeway::slurm {

struct SubmitRequest {
  std::string name;
  std::string script;  // "#!/bin/bash\n..."
  std::string partition;
  std::string gres;    // "gpu:h200:2"
  int nodes = 1;
  std::optional<int> time_limit_minutes;
  std::optional<int> cpus_per_task;  // one task per node: CPUs on each node
  std::optional<int> memory_mb;      // memory on each node
  std::map<std::string, std::string> environment;
  std::string working_directory;
  std::string output;  // stdout and stderr, with Slurm's %j
};

struct JobInfo {
  int64_t id = 0;
  std::string name;
  std::string state;   // PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, PREEMPTED, OUT_OF_MEMORY, ...
  std::string reason;  // state_reason
  int exit_code = 0;   // the program's exit status
  int signal = 0;      // the signal that ended it, if any
  std::optional<Timestamp> start;
  std::optional<Timestamp> end;
  int gpus = 0;        // GPUs allocated (TRES gres/gpu), once it has started
  int restarts = 0;    // times Slurm requeued it (restart_cnt)
};

class SlurmApi {
 public:
  virtual ~SlurmApi() = default;
  // "slurmrestd at http://...", "the Slurm CLI": for messages.
  virtual std::string Describe() const = 0;
  virtual Status Ping() = 0;
  // Returns the Slurm job id. Jobs are submitted not to be requeued by
  // Slurm where the interface allows (slurmrestd 22.05 ignores the
  // setting): Causeway decides about retries, and records each attempt.
  virtual Result<int64_t> Submit(const SubmitRequest& request) = 0;
  // Every job the controller still holds (it forgets finished jobs after
  // MinJobAge).
  virtual Result<std::vector<JobInfo>> ListJobs() = 0;
  virtual Status Cancel(int64_t id) = 0;
  // The accounting records (slurmdbd) of these jobs, one per run of a job
  // Slurm requeued, oldest first; jobs accounting does not know are left
  // out. kUnavailable when accounting cannot be reached.
  virtual Result<std::vector<JobInfo>> Accounting(const std::vector<int64_t>& ids) = 0;
};

// Tries each interface in turn: a call that fails because one is
// unreachable (kUnavailable, kDeadlineExceeded) goes to the next. Any
// other answer, success or error, is final.
class FallbackApi final : public SlurmApi {
 public:
  explicit FallbackApi(std::vector<std::unique_ptr<SlurmApi>> apis) : apis_(std::move(apis)) {}
  std::string Describe() const override;
  Status Ping() override;
  Result<int64_t> Submit(const SubmitRequest& request) override;
  Result<std::vector<JobInfo>> ListJobs() override;
  Status Cancel(int64_t id) override;
  Result<std::vector<JobInfo>> Accounting(const std::vector<int64_t>& ids) override;

 private:
  template <typename Fn>
  auto First(Fn fn) -> decltype(fn(std::declval<SlurmApi&>()));
  std::vector<std::unique_ptr<SlurmApi>> apis_;
};

// Parses one entry of a v0.0.38 "jobs" array (slurmrestd /slurm/v0.0.38/jobs
// and `squeue --json`).
JobInfo ParseJob(const nlohmann::json& j);
// Parses one entry of a dbv0.0.38 "jobs" array (slurmrestd
// /slurmdb/v0.0.38/jobs and `sacct --json`).
JobInfo ParseAccountingJob(const nlohmann::json& j);
// The first error of a Slurm "errors" array as a typed Status (2017, an
// unknown job, is kNotFound; one without a number means the controller could
// not be asked, kUnavailable); OK when there is none.
Status SlurmErrors(const nlohmann::json& body);

}  // namespace causeway::slurm
