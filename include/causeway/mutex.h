// A mutex, its scoped lock and a condition variable that clang's
// -Wthread-safety analysis understands (scripts/thread_safety.sh checks the
// whole tree in `make test`): members say which mutex guards them
// (GUARDED_BY), functions which mutex they need held (REQUIRES) or must not
// hold (EXCLUDES), and the compiler proves it. With other compilers the
// annotations are empty and these are plain std::mutex wrappers.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#if defined(__clang__)
#define CW_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define CW_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) CW_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY CW_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) CW_THREAD_ANNOTATION(guarded_by(x))
#define REQUIRES(...) CW_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) CW_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define RELEASE(...) CW_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define EXCLUDES(...) CW_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) CW_THREAD_ANNOTATION(assert_capability(x))
#define NO_THREAD_SAFETY_ANALYSIS CW_THREAD_ANNOTATION(no_thread_safety_analysis)

namespace causeway {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mu_.lock(); }
  void Unlock() RELEASE() { mu_.unlock(); }
  // Tells the analysis the caller holds it (where it cannot see that).
  void AssertHeld() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for its scope; Unlock and Lock let a scope drop it around a
// slow call and take it again.
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mu) ACQUIRE(mu) : mu_(mu) { mu_.Lock(); }
  ~MutexLock() RELEASE() {
    if (held_) mu_.Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() RELEASE() {
    mu_.Unlock();
    held_ = false;
  }
  void Lock() ACQUIRE() {
    mu_.Lock();
    held_ = true;
  }

 private:
  Mutex& mu_;
  bool held_ = true;
};

// Waits release `mu` while waiting and hold it again when they return, as
// std::condition_variable's do. They may return spuriously: callers loop on
// their condition, which the analysis then sees read under `mu`:
//   while (!ready_) cv_.Wait(mu_);
class CondVar {
 public:
  void NotifyOne() { cv_.notify_one(); }
  void NotifyAll() { cv_.notify_all(); }

  void Wait(Mutex& mu) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // False once `deadline` has passed.
  template <typename Clock, typename Duration>
  bool WaitUntil(Mutex& mu, const std::chrono::time_point<Clock, Duration>& deadline) REQUIRES(mu) {
    std::unique_lock<std::mutex> lock(mu.mu_, std::adopt_lock);
    bool in_time = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return in_time;
  }

 private:
  std::condition_variable cv_;
};

}  // namespace causeway
