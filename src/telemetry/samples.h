// GPU utilization samples from the places they come from, and a compact
// per-GPU store of them.
//
// Sources: a Prometheus server's HTTP API (DCGM-exporter series such as
// DCGM_FI_DEV_GPU_UTIL, percent, or DCGM_FI_PROF_GR_ENGINE_ACTIVE, a ratio),
// Prometheus text exposition pushed to Causeway, `nvidia-smi
// --query-gpu=timestamp,index,utilization.gpu --format=csv` output, and the
// simulated provider. Samples are matched to jobs by a label (default
// `causeway_job`, with `causeway_attempt` for the attempt number).
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/provider.h"
#include "causeway/status.h"

namespace causeway::telemetry {

// How series are read: which metrics, and which labels name the job, the
// attempt and the GPU.
struct SeriesFormat {
  std::string job_label = "causeway_job";
  std::string attempt_label = "causeway_attempt";
  std::string gpu_label = "gpu";
  // Metric name -> multiplier to percent: DCGM_FI_DEV_GPU_UTIL is already
  // percent (1), DCGM_FI_PROF_GR_ENGINE_ACTIVE a ratio (100).
  std::map<std::string, int> metrics = {{"DCGM_FI_DEV_GPU_UTIL", 1}, {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", 100}};
};

// Prometheus text exposition (version 0.0.4): `name{label="v",...} value
// [timestamp_ms]` lines; other metrics, comments and series without the
// job label are skipped. A line without a timestamp is taken at `now`.
// kInvalidArgument names the line of a malformed sample.
Result<std::vector<GpuSample>> ParseExposition(std::string_view text, const SeriesFormat& format, Timestamp now);

// `nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv`
// (with or without `,noheader,nounits`; more columns are allowed, found by
// their header) from one attempt. kInvalidArgument names the line.
Result<std::vector<GpuSample>> ParseNvidiaSmiCsv(std::string_view text, const std::string& job_id, int attempt);

// The `data.result` matrix of a Prometheus `query_range` answer.
Result<std::vector<GpuSample>> ParsePrometheusMatrix(const nlohmann::json& answer, const SeriesFormat& format);

// Recent samples per (job, attempt, GPU), oldest first, each series kept
// for `retention`. Not thread-safe: one owner.
class SampleStore {
 public:
  explicit SampleStore(Micros retention) : retention_(retention) {}

  struct Point {
    int64_t time_us;
    int32_t percent;
  };
  struct Key {
    std::string job_id;
    int attempt = 0;
    int gpu = 0;
    auto operator<=>(const Key&) const = default;
  };

  // Adds samples (any order); a sample older than its series' newest by more
  // than the retention is dropped.
  void Add(const std::vector<GpuSample>& samples);
  // Drops points older than now - retention, and series left empty.
  void Prune(Timestamp now);
  // The series of one attempt: GPU index -> points.
  std::map<int, const std::vector<Point>*> Attempt(const std::string& job_id, int attempt) const;
  size_t series() const { return series_.size(); }

 private:
  Micros retention_;
  std::map<Key, std::vector<Point>> series_;
};

}  // namespace causeway::telemetry
