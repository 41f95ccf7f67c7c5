#include "dispatch/worker.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>

namespace causeway::dispatch {

Worker::Worker(std::string name, size_t capacity) : name_(std::move(name)), capacity_(capacity) {
  thread_ = std::thread([this] { Loop(); });
}

Worker::~Worker() { Stop(); }

bool Worker::Push(Task task, bool bounded) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || (bounded && tasks_.size() >= capacity_)) return false;
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

bool Worker::Post(Task task) { return Push(std::move(task), true); }
bool Worker::PostAlways(Task task) { return Push(std::move(task), false); }

std::chrono::steady_clock::duration Worker::BusyFor() const {
  std::lock_guard<std::mutex> lock(mu_);
  if (running_since_ == std::chrono::steady_clock::time_point{}) return {};
  return std::chrono::steady_clock::now() - running_since_;
}

size_t Worker::waiting() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tasks_.size();
}

void Worker::Stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
    tasks_.clear();
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Worker::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
    if (stopping_) return;
    Task task = std::move(tasks_.front());
    tasks_.pop_front();
    running_since_ = std::chrono::steady_clock::now();
    lock.unlock();
    try {
      task();
    } catch (const std::exception& e) {
      // A task reports its errors as values; this is a bug, not a reason to
      // stop serving the backend.
      spdlog::error("{}: a task threw: {}", name_, e.what());
    }
    lock.lock();
    running_since_ = {};
  }
}

void Backoff::Failed(Clock::time_point now) {
  Clock::duration wait = first_ * (1LL << std::min(failures_, 20));
  failures_++;
  next_ = now + std::min(wait, max_);
}

}  // namespace causeway::dispatch
