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

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/provider.h"
#include "causeway/status.h"

namespace causeway::telemetry {

// How series are read: which metrics, and which labels name the job, the
// attempt and the GPU.
struct SeriesFormat {
  // Set for a push to a job's own path: every series is this job's, with or
  // without the job label (plain DCGM-exporter output has none).
  std::string job_id;
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

// How much of an attempt's GPU time telemetry saw, and how much of it was
// work: utilization integrated over time, summed over the attempt's GPUs.
// Between two samples of a GPU the earlier one holds; a gap longer than the
// store's max_gap is not observed.
struct Utilization {
  int64_t observed_gpu_us = 0;  // GPU-microseconds covered by samples
  int64_t work_percent_us = 0;  // sum of percent x microseconds

  int64_t observed_gpu_seconds() const { return observed_gpu_us / 1000000; }
  int64_t work_gpu_seconds() const { return work_percent_us / 100 / 1000000; }
  Utilization& operator+=(const Utilization& o) {
    observed_gpu_us += o.observed_gpu_us;
    work_percent_us += o.work_percent_us;
    return *this;
  }
};

// Recent samples per (job, attempt, GPU), oldest first, each series kept
// for `retention`, and a running Utilization per series that outlives its
// samples (for a day after the last one). Not thread-safe: one owner.
//
// Memory is bounded whatever is added: at most `max_points` points in all
// (16 bytes each, up to twice that with vector slack), `max_series` series
// and `max_points_per_series` points in one series (two a second over the
// retention, at least 1,024); a sample past a bound is dropped and counted.
struct SampleLimits {
  size_t max_points = 1'000'000;
  size_t max_series = 20'000;
};

class SampleStore {
 public:
  using Limits = SampleLimits;
  explicit SampleStore(Micros retention, Micros max_gap = std::chrono::minutes(10), Limits limits = {})
      : retention_(retention),
        max_gap_(max_gap),
        limits_(limits),
        max_points_per_series_(std::max<size_t>(1024, static_cast<size_t>(2 * (retention.count() / 1000000)))) {}

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

  // What Add did with its samples.
  struct Added {
    size_t kept = 0;
    size_t stale = 0;  // older than what the series keeps or has folded
    size_t full = 0;   // past a memory bound
  };
  // Adds samples (any order); a sample older than its series' newest by more
  // than the retention is dropped, and so is one older than what was folded
  // into the series' utilization already, and one past a memory bound.
  Added Add(const std::vector<GpuSample>& samples);
  // Folds points older than now - retention into their series' utilization
  // and drops them (and series left empty); forgets the utilization of
  // series without a sample for a day.
  void Prune(Timestamp now);

  // The series of one attempt: GPU index -> points.
  std::map<int, const std::vector<Point>*> Attempt(const std::string& job_id, int attempt) const;
  // The attempt's utilization so far, every GPU, pruned samples included.
  Utilization AttemptUtilization(const std::string& job_id, int attempt) const;
  size_t series() const { return series_.size(); }
  size_t points() const { return points_; }
  bool full() const { return points_ >= limits_.max_points; }

 private:
  // What pruning folded away: the sum, and the last point folded (the
  // start of the next interval).
  struct Folded {
    Utilization sum;
    Point last{0, 0};
  };
  // Adds the interval from `a` to `b` to `u`.
  void Integrate(const Point& a, const Point& b, Utilization& u) const;

  Micros retention_;
  Micros max_gap_;
  Limits limits_;
  size_t max_points_per_series_;
  size_t points_ = 0;  // in every series together
  std::map<Key, std::vector<Point>> series_;
  std::map<Key, Folded> folded_;
  int64_t next_sweep_us_ = 0;  // when Prune next looks for stale utilization
};

}  // namespace causeway::telemetry
