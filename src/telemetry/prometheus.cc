#include "telemetry/prometheus.h"
#include "causeway/json_input.h"

#include "net/http_client.h"

namespace causeway::telemetry {
namespace {


// Seconds with millisecond precision, as Prometheus takes times.
std::string Seconds(int64_t micros) {
  return std::to_string(micros / 1000000) + "." + std::to_string(1000 + (micros / 1000) % 1000).substr(1);
}

}  // namespace

Result<PrometheusSource> PrometheusSource::Create(const std::string& url, SeriesFormat format,
                                                 std::chrono::milliseconds timeout) {
  auto server = net::ParseServerUrl(url);
  if (!server.ok()) return server.status().WithPrefix("Prometheus URL");
  return PrometheusSource(server->first, server->second, std::move(format), timeout);
}

Result<std::vector<GpuSample>> PrometheusSource::Fetch(Timestamp start, Timestamp end, Micros step) const {
  // One query for every metric: {__name__=~"A|B", JOB_LABEL!=""}.
  std::string names;
  for (const auto& [name, scale] : format_.metrics) names += (names.empty() ? "" : "|") + name;
  std::string query = "{__name__=~\"" + names + "\"," + format_.job_label + "!=\"\"}";
  std::string target = "/api/v1/query_range?query=" + net::UrlEncode(query) + "&start=" + Seconds(ToUnixMicros(start)) +
                       "&end=" + Seconds(ToUnixMicros(end)) + "&step=" + Seconds(step.count());
  net::HttpClient client(host_, port_, timeout_);
  ASSIGN_OR_RETURN(net::HttpResult r, client.Send("GET", target));
  nlohmann::json answer = ParseUntrustedJson(r.body, "Prometheus answer").value_or(nlohmann::json::value_t::discarded);
  if (answer.is_discarded()) {
    return Unavailable("Prometheus at " + host_ + ":" + std::to_string(port_) + " answered " +
                       std::to_string(r.status) + " without JSON");
  }
  return ParsePrometheusMatrix(answer, format_);
}

}  // namespace causeway::telemetry
