// Runs a function every interval on a thread of its own, until Stop: the
// background loops of the scheduler and the reaper.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace causeway {

class Ticker {
 public:
  Ticker() = default;
  Ticker(const Ticker&) = delete;
  Ticker& operator=(const Ticker&) = delete;
  ~Ticker() { Stop(); }

  // The first run is one interval from now. Call once.
  void Start(std::chrono::milliseconds interval, std::function<void()> fn) {
    thread_ = std::thread([this, interval, fn = std::move(fn)] {
      std::unique_lock<std::mutex> lock(mu_);
      while (!cv_.wait_for(lock, interval, [this] { return stopping_; })) {
        lock.unlock();
        fn();
        lock.lock();
      }
    });
  }

  // Waits for a run in progress to end; no run starts afterwards.
  void Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  // guarded by mu_
  std::thread thread_;
};

}  // namespace causeway
