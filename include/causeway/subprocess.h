// Running a short-lived helper program (a Slurm CLI tool, a token command)
// and collecting what it prints. Not for jobs: those belong to providers.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <string_view>
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

// What RunProcessStreaming does with a program's output, line by line (the
// newline removed; a line longer than `max_line` is cut there). A handler
// that returns false stops the program (it is killed), as does `stop`
// turning true (checked at least every 200 ms).
struct ProcessStreams {
  std::function<bool(std::string_view line)> on_out;
  std::function<bool(std::string_view line)> on_err;
  const std::atomic<bool>* stop = nullptr;
  size_t max_line = 1 << 20;
};

// Runs argv as RunProcess does, with nothing on its standard input, handing
// its output to `streams` as it comes instead of collecting it. Returns the
// exit code (128 + N when killed by signal N); kDeadlineExceeded past
// `timeout`, kUnavailable ("stopped") when a handler or `stop` stopped it.
Result<int> RunProcessStreaming(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                                std::chrono::milliseconds timeout, const ProcessStreams& streams);

}  // namespace causeway
