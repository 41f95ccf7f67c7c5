// A client of slurmrestd's REST API v0.0.38 (JWT auth). Every failure is a
// typed Status with a clear message:
//   missing or rejected credentials  -> kUnauthenticated
//   Slurm error 2017 (unknown job)   -> kNotFound
//   other Slurm errors               -> kFailedPrecondition, "slurm error N (what): description"
//   controller unreachable, 5xx      -> kUnavailable (retryable)
//   no answer in time                -> kDeadlineExceeded (retryable)
// Not thread-safe: one client per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/clock.h"
#include "causeway/status.h"
#include "net/http_client.h"

namespace causeway::slurm {

struct Endpoint {
  std::string url;         // http://host:port of slurmrestd
  std::string user;        // X-SLURM-USER-NAME
  std::string token_file;  // holds the JWT (re-read when it changes, so rotation works)
  std::chrono::milliseconds timeout{10'000};
};

struct SubmitRequest {
  std::string name;
  std::string script;  // "#!/bin/bash\n..."
  std::string partition;
  std::string gres;    // "gpu:h200:2"
  int nodes = 1;
  std::optional<int> time_limit_minutes;
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
};

class SlurmClient {
 public:
  explicit SlurmClient(Endpoint endpoint);

  Status Ping();
  // Returns the Slurm job id.
  Result<int64_t> Submit(const SubmitRequest& request);
  Result<JobInfo> GetJob(int64_t id);
  // Every job the controller still holds.
  Result<std::vector<JobInfo>> ListJobs();
  Status Cancel(int64_t id);

 private:
  Result<nlohmann::json> Call(const std::string& method, const std::string& path, const std::string& body);

  Endpoint endpoint_;
  std::optional<net::HttpClient> http_;
};

// Parses one entry of a v0.0.38 "jobs" array.
JobInfo ParseJob(const nlohmann::json& j);

}  // namespace causeway::slurm
