#include "api/metrics.h"

#include <cstdio>

namespace causeway::api {
namespace {

std::string Num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

void Metrics::ObserveRequest(const std::string& method, const std::string& route, int status, double seconds) {
  MutexLock lock(mu_);
  ++requests_[{method, route, status}];
  Histogram& h = latency_[route];
  size_t i = 0;
  while (i < kBuckets.size() && seconds > kBuckets[i]) ++i;
  if (i < kBuckets.size()) ++h.buckets[i];
  ++h.count;
  h.sum += seconds;
}

void Metrics::Render(std::string& out) const {
  MutexLock lock(mu_);
  out += "# HELP causeway_http_requests_total HTTP requests served, by route and status.\n";
  out += "# TYPE causeway_http_requests_total counter\n";
  for (const auto& [key, count] : requests_) {
    const auto& [method, route, status] = key;
    out += "causeway_http_requests_total{method=\"" + method + "\",route=\"" + route + "\",code=\"" +
           std::to_string(status) + "\"} " + std::to_string(count) + "\n";
  }
  out += "# HELP causeway_http_request_duration_seconds Time to answer an HTTP request.\n";
  out += "# TYPE causeway_http_request_duration_seconds histogram\n";
  for (const auto& [route, h] : latency_) {
    uint64_t cumulative = 0;
    std::string labels = "route=\"" + route + "\"";
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      cumulative += h.buckets[i];
      out += "causeway_http_request_duration_seconds_bucket{" + labels + ",le=\"" + Num(kBuckets[i]) + "\"} " +
             std::to_string(cumulative) + "\n";
    }
    out += "causeway_http_request_duration_seconds_bucket{" + labels + ",le=\"+Inf\"} " + std::to_string(h.count) + "\n";
    out += "causeway_http_request_duration_seconds_sum{" + labels + "} " + Num(h.sum) + "\n";
    out += "causeway_http_request_duration_seconds_count{" + labels + "} " + std::to_string(h.count) + "\n";
  }
}

void AppendMetric(std::string& out, const std::string& name, const std::string& type, const std::string& help,
                  double value) {
  out += "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + Num(value) + "\n";
}

}  // namespace causeway::api
