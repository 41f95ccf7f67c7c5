#include "dispatch/worker.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>

namespace causeway::dispatch {

Worker::Worker(std::string name, size_t capacity, SteadyNow now)
    : name_(std::move(name)), capacity_(capacity), now_(std::move(now)) {
  thread_ = std::thread([this] { Loop(); });
}

Worker::~Worker() { Stop(); }

bool Worker::Push(Task task, bool bounded) {
  {
    MutexLock lock(mu_);
    if (stopping_ || (bounded && tasks_.size() >= capacity_)) return false;
    tasks_.push_back(std::move(task));
  }
  cv_.NotifyAll();  // the loop, among WaitIdle's waiters
  return true;
}

bool Worker::Post(Task task) { return Push(std::move(task), true); }
bool Worker::PostAlways(Task task) { return Push(std::move(task), false); }

std::chrono::steady_clock::duration Worker::BusyFor() const {
  MutexLock lock(mu_);
  if (!running_) return {};
  return now_() - running_since_;
}

size_t Worker::waiting() const {
  MutexLock lock(mu_);
  return tasks_.size();
}

void Worker::WaitIdle() {
  MutexLock lock(mu_);
  while (running_ || !tasks_.empty()) cv_.Wait(mu_);
}

void Worker::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
    tasks_.clear();
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

void Worker::Loop() {
  MutexLock lock(mu_);
  for (;;) {
    while (!stopping_ && tasks_.empty()) cv_.Wait(mu_);
    if (stopping_) return;
    Task task = std::move(tasks_.front());
    tasks_.pop_front();
    running_ = true;
    running_since_ = now_();
    lock.Unlock();
    try {
      task();
    } catch (const std::exception& e) {
      // A task reports its errors as values; this is a bug, not a reason to
      // stop serving the backend.
      spdlog::error("{}: a task threw: {}", name_, e.what());
    }
    lock.Lock();
    running_ = false;
    cv_.NotifyAll();  // WaitIdle
  }
}

void Backoff::Failed(Clock::time_point now) {
  Clock::duration wait = first_ * (1LL << std::min(failures_, 20));
  failures_++;
  next_ = now + std::min(wait, max_);
}

}  // namespace causeway::dispatch
