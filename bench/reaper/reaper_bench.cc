// bench/reaper: one reaper cycle over 100,000 GPU series (12,500 attempts of
// 8 GPUs), each with a sample a minute for the last 40 minutes, under a
// 30-minute window; a tenth of the attempts idle. Target: under 50 ms a
// cycle. Prints one JSON line.
//   reaper_bench [SERIES]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "telemetry/reaper.h"

using namespace causeway;
using namespace causeway::telemetry;

int main(int argc, char** argv) {
  const int series = argc > 1 ? std::atoi(argv[1]) : 100000;
  const int gpus = 8, attempts = series / gpus, minutes = 40;
  const int64_t minute = 60LL * 1000000;
  const Timestamp now = FromUnixMicros(1796076000LL * 1000000 + minutes * minute);
  SampleStore store(Micros(60 * minute));
  std::vector<ActiveAttempt> running;
  std::vector<GpuSample> batch;
  for (int a = 0; a < attempts; ++a) {
    std::string job = "job_" + std::to_string(a);
    running.push_back(ActiveAttempt{job, 1, "team-" + std::to_string(a % 40), "owner", {}, gpus});
    bool idle = a % 10 == 0;
    for (int g = 0; g < gpus; ++g) {
      for (int m = 0; m < minutes; ++m) {
        int percent = idle ? (m * 7 + g) % 15 : 30 + (m * 13 + g * 7 + a) % 70;
        batch.push_back(GpuSample{job, 1, "", g, now - Micros((minutes - m) * minute), percent});
      }
    }
    if (batch.size() > 100000) {
      store.Add(batch);
      batch.clear();
    }
  }
  store.Add(batch);
  ReaperPolicy policy;
  policy.name = "idle-20";
  policy.cancel = false;  // warnings only, so every cycle does the same work
  constexpr int kCycles = 10;
  double best = 1e9, total = 0;
  size_t actions = 0;
  for (int c = 0; c < kCycles; ++c) {
    Reaper reaper({policy});  // fresh: every idle attempt is news each cycle
    auto t0 = std::chrono::steady_clock::now();
    actions = reaper.Evaluate(now, running, store).size();
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, ms);
    total += ms;
  }
  std::printf("{\"bench\": \"reaper\", \"series\": %zu, \"samples\": %d, \"idle_attempts\": %zu, "
              "\"cycle_ms_best\": %.2f, \"cycle_ms_mean\": %.2f, \"target_ms\": 50}\n",
              store.series(), series * minutes, actions, best, total / kCycles);
  return 0;
}
