// Reads GPU utilization from a Prometheus server's HTTP API (query_range):
// the DCGM exporter's series, matched to jobs by label.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/provider.h"
#include "causeway/status.h"
#include "telemetry/samples.h"

namespace causeway::telemetry {

class PrometheusSource {
 public:
  // `url`: http://HOST:PORT (no path). kInvalidArgument for anything else.
  // `timeout` bounds each query, connecting included.
  static Result<PrometheusSource> Create(const std::string& url, SeriesFormat format = {},
                                         std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // Every configured metric's series that carry the job label, sampled every
  // `step` over [start, end]. kUnavailable when Prometheus cannot be
  // reached or refuses the query.
  Result<std::vector<GpuSample>> Fetch(Timestamp start, Timestamp end, Micros step) const;

 private:
  PrometheusSource(std::string host, uint16_t port, SeriesFormat format, std::chrono::milliseconds timeout)
      : host_(std::move(host)), port_(port), format_(std::move(format)), timeout_(timeout) {}
  std::string host_;
  uint16_t port_;
  SeriesFormat format_;
  std::chrono::milliseconds timeout_;
};

}  // namespace causeway::telemetry
