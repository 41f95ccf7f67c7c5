// Running a short-lived helper program (a Slurm CLI tool, a token command)
// and collecting what it prints. Not for jobs: those belong to providers.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "causeway/status.h"

namespace causeway {

struct ProcessResult {
  int exit_code = 0;  // 128 + N when killed by signal N
  std::string out;
  std::string err;
};

// Runs argv (argv[0] looked up on this process's PATH) with exactly `env` as
// its environment and `input` on its standard input, and waits for it.
// A program that is not installed is kFailedPrecondition; one that runs
// past `timeout` is killed and reported as kDeadlineExceeded. A non-zero
// exit is not an error here: callers read exit_code.
Result<ProcessResult> RunProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                                 const std::string& input, std::chrono::milliseconds timeout);

}  // namespace causeway
