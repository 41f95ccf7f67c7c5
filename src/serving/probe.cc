#include "serving/probe.h"

#include <algorithm>

#include <chrono>

#include "net/http_client.h"

namespace causeway::serving {

ProbeResult Probe(const std::string& host, uint16_t port, const spec::ReadinessProbe& probe) {
  ProbeResult out;
  // Bounded whatever the spec says (it may say 1e300): 1 ms to 10 minutes.
  const auto timeout = std::chrono::milliseconds(static_cast<int64_t>(std::clamp(probe.timeout_seconds, 0.001, 600.0) * 1000));
  std::vector<std::pair<std::string, std::string>> headers(probe.headers.begin(), probe.headers.end());
  if (probe.post_data) headers.emplace_back("Content-Type", "application/json");
  const auto start = std::chrono::steady_clock::now();
  net::HttpClient client(host, port, std::max(timeout, std::chrono::milliseconds(1)));
  auto r = client.Send(probe.post_data ? "POST" : "GET", probe.path, probe.post_data.value_or(""), headers);
  out.took = std::chrono::duration_cast<Micros>(std::chrono::steady_clock::now() - start);
  if (!r.ok()) {
    out.error = r.status().ToString();
    return out;
  }
  out.status = r->status;
  out.ok = r->status == 200;
  if (!out.ok) out.error = "answered " + std::to_string(r->status) + " to " + probe.path;
  return out;
}

}  // namespace causeway::serving
