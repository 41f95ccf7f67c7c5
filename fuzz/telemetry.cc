// GPU telemetry as pushed (Prometheus exposition, nvidia-smi CSV) and as
// Prometheus answers (query_range JSON); the first byte picks the format.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "causeway/json_input.h"
#include "telemetry/samples.h"

namespace telemetry = causeway::telemetry;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  telemetry::SeriesFormat format;
  causeway::Result<std::vector<causeway::GpuSample>> samples = std::vector<causeway::GpuSample>{};
  switch (data[0] % 3) {
    case 0: samples = telemetry::ParseExposition(text, format, causeway::Timestamp()); break;
    case 1: samples = telemetry::ParseNvidiaSmiCsv(text, "job_1", 1); break;
    default:
      if (auto j = causeway::ParseUntrustedJson(text, "answer"); j.ok()) samples = telemetry::ParsePrometheusMatrix(*j, format);
  }
  if (!samples.ok()) return 0;
  telemetry::SampleStore store(std::chrono::minutes(30), std::chrono::minutes(2), telemetry::SampleLimits{4096, 64});
  (void)store.Add(*samples);
  store.Prune(causeway::Timestamp() + std::chrono::hours(1));
  (void)store.AttemptUtilization("job_1", 1);
  return 0;
}
