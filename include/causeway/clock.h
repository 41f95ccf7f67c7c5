// Time. Everything that needs "now" takes a Clock, so the same code runs in
// real time in the server and in virtual time in tests and planning.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "causeway/status.h"

namespace causeway {

using Micros = std::chrono::microseconds;
using Timestamp = std::chrono::time_point<std::chrono::system_clock, Micros>;

inline int64_t ToUnixMicros(Timestamp t) { return t.time_since_epoch().count(); }
inline Timestamp FromUnixMicros(int64_t us) { return Timestamp(Micros(us)); }

// "2026-11-30T17:26:25.123456Z" (UTC, microseconds).
std::string FormatRfc3339(Timestamp t);
// Accepts "YYYY-MM-DD", "YYYY-MM-DD HH:MM:SS", "YYYY-MM-DDTHH:MM:SS" with
// optional fraction and an optional "Z" or "+HH:MM" offset; no offset means UTC.
Result<Timestamp> ParseRfc3339(std::string_view text);

using SteadyTime = std::chrono::steady_clock::time_point;

class Clock {
 public:
  virtual ~Clock() = default;
  // Current time. Thread-safe.
  virtual Timestamp Now() const = 0;
  // Monotonic time, for bounds on real waits (how long a backend call has
  // run): it never goes back and is never scaled. Thread-safe.
  virtual SteadyTime Steady() const = 0;
};

// Wall-clock time.
class RealClock final : public Clock {
 public:
  Timestamp Now() const override;
  SteadyTime Steady() const override { return std::chrono::steady_clock::now(); }
};

// Time that moves only when told to. Thread-safe; for tests and simulation.
// Advance moves both times; Set moves only the wall clock's.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(Timestamp start = FromUnixMicros(1'767'225'600'000'000))  // 2026-01-01
      : now_us_(ToUnixMicros(start)) {}
  Timestamp Now() const override { return FromUnixMicros(now_us_.load()); }
  SteadyTime Steady() const override { return SteadyTime(std::chrono::microseconds(steady_us_.load())); }
  void Set(Timestamp t) { now_us_.store(ToUnixMicros(t)); }
  void Advance(Micros d) {
    now_us_.fetch_add(d.count());
    if (d.count() > 0) steady_us_.fetch_add(d.count());
  }

 private:
  std::atomic<int64_t> now_us_;
  std::atomic<int64_t> steady_us_{3'600'000'000};  // any start: only differences count
};

// Real time sped up `factor` times from the moment it is made, for running
// the simulated estate faster than life (a demo at 600x shows an hour's work
// in six seconds). It starts at `start`, or now if `start` is earlier, so a
// restarted server never goes back in time. Thread-safe.
class ScaledClock final : public Clock {
 public:
  explicit ScaledClock(double factor, Timestamp start = Timestamp());
  Timestamp Now() const override;
  SteadyTime Steady() const override { return real_.Steady(); }  // real waits are not sped up

 private:
  RealClock real_;
  Timestamp real_origin_;
  Timestamp origin_;
  double factor_;
};

// Parses a duration such as "90s", "30m", "1h30m", "2d" or a bare number of
// seconds. Returns kInvalidArgument naming the accepted forms otherwise.
Result<Micros> ParseDuration(std::string_view text);
// "1h30m", "45s", "2d" — the inverse of ParseDuration for whole seconds.
std::string FormatDuration(Micros d);

}  // namespace causeway
