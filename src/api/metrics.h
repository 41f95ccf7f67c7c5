// Request metrics in the Prometheus text exposition format.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>

#include "causeway/mutex.h"

namespace causeway::api {

class Metrics {
 public:
  // Records one finished request. `route` is the route pattern (bounded).
  void ObserveRequest(const std::string& method, const std::string& route, int status, double seconds);

  // Appends the request counters and latency histograms to `out`.
  void Render(std::string& out) const;

 private:
  static constexpr std::array<double, 12> kBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                      0.05,   0.1,   0.25,   0.5,   1,    2.5};
  struct Histogram {
    std::array<uint64_t, kBuckets.size()> buckets{};  // not cumulative
    uint64_t count = 0;
    double sum = 0;
  };
  mutable Mutex mu_;
  std::map<std::tuple<std::string, std::string, int>, uint64_t> requests_ GUARDED_BY(mu_);
  std::map<std::string, Histogram> latency_ GUARDED_BY(mu_);
};

// Appends one metric in the exposition format: HELP, TYPE and the sample.
void AppendMetric(std::string& out, const std::string& name, const std::string& type,
                  const std::string& help, double value);

}  // namespace causeway::api
