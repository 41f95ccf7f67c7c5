// Runs a function every interval on a thread of its own, until Stop: the
// background loops of the scheduler and the reaper.
#pragma once

#include <chrono>
#include <functional>
#include <thread>

#include "causeway/mutex.h"

namespace causeway {

class Ticker {
 public:
  Ticker() = default;
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;
  ~Ticker() { Stop(); }

  // The first run is one interval from now. Call once.
  void Start(std::chrono::milliseconds interval, std::function<void()> fn) {
    thread_ = std::thread([this, interval, fn = std::move(fn)] { Run(interval, fn); });
  }

  // Waits for a run in progress to end; no run starts afterwards.
  void Stop() EXCLUDES(mu_) {
    {
      MutexLock lock(mu_);
      stopping_ = true;
    }
    cv_.NotifyAll();
    if (thread_.joinable()) thread_.join();
  }

 private:
  void Run(std::chrono::milliseconds interval, const std::function<void()>& fn) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    for (;;) {
      auto due = std::chrono::steady_clock::now() + interval;
      while (!stopping_ && cv_.WaitUntil(mu_, due)) {
      }
      if (stopping_) return;
      lock.Unlock();
      fn();
      lock.Lock();
    }
  }

  Mutex mu_;
  CondVar cv_;
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace causeway
