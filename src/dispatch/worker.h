// Where a provider's calls to its backend run: one thread per backend
// (a Slurm cluster, later a Kubernetes API server), off the scheduler's
// lock, so a backend that hangs holds up only its own work.
//
// Worker: a thread and a bounded FIFO of tasks. Post refuses a task once
// `capacity` are waiting (the caller reports the backend as busy rather
// than queueing without end); PostAlways is for the few tasks that must not
// be dropped (stopping work Causeway no longer wants), which are bounded by
// what the backend holds. BusyFor says how long the running task has taken,
// so a caller can call the backend unhealthy while a call hangs, before
// its deadline fires. Stop finishes the running task (every backend call
// has a deadline), drops the rest and joins. Time is read from a
// monotonic clock the owner may replace (a test's, which it moves itself).
//
// Backoff: the shared retry schedule for an unreachable backend — first
// wait, doubling per failure in a row, capped; any answer resets it.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <string>
#include <thread>

#include "causeway/mutex.h"

namespace causeway::dispatch {

// Monotonic time: std::chrono::steady_clock's, or a test's.
using SteadyNow = std::function<std::chrono::steady_clock::time_point()>;
inline std::chrono::steady_clock::time_point SteadyClockNow() { return std::chrono::steady_clock::now(); }

class Worker {
 public:
  using Task = std::function<void()>;
  // `name` is for logs.
  Worker(std::string name, size_t capacity, SteadyNow now = SteadyClockNow);
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;
  ~Worker();

  // False when `capacity` tasks are already waiting, or after Stop.
  bool Post(Task task) EXCLUDES(mu_);
  // Queued whatever the length (false only after Stop).
  bool PostAlways(Task task) EXCLUDES(mu_);
  // How long the task now running has run; zero when idle.
  std::chrono::steady_clock::duration BusyFor() const EXCLUDES(mu_);
  // Tasks waiting (not counting the one running).
  size_t waiting() const EXCLUDES(mu_);
  // Returns once nothing is queued or running (for tests: a task that
  // hangs makes it wait as long).
  void WaitIdle() EXCLUDES(mu_);
  void Stop() EXCLUDES(mu_);

 private:
  bool Push(Task task, bool bounded) EXCLUDES(mu_);
  void Loop() EXCLUDES(mu_);

  const std::string name_;
  const size_t capacity_;
  const SteadyNow now_;
  mutable Mutex mu_;
  CondVar cv_;
  std::deque<Task> tasks_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  bool running_ GUARDED_BY(mu_) = false;
  std::chrono::steady_clock::time_point running_since_ GUARDED_BY(mu_);
  std::thread thread_;
};

class Backoff {
 public:
  using Clock = std::chrono::steady_clock;
  Backoff(Clock::duration first, Clock::duration max) : first_(first), max_(max) {}
  // A call failed in a way worth retrying: wait before the next.
  void Failed(Clock::time_point now);
  // Any answer, even a refusal: the backend is there.
  void Answered() { failures_ = 0; }
  bool failing() const { return failures_ > 0; }
  int failures() const { return failures_; }
  // Whether it is time to ask again (always, while not failing).
  bool Ready(Clock::time_point now) const { return failures_ == 0 || now >= next_; }
  Clock::time_point next() const { return next_; }

 private:
  Clock::duration first_, max_;
  int failures_ = 0;
  Clock::time_point next_{};
};

}  // namespace causeway::dispatch
