// Runs GPU telemetry and the idle reaper on the server: every cycle, on the
// replica that leads, the providers' per-GPU utilization goes into a sample
// store (which also sums each attempt's utilization, for goodput), the
// estate's reaper policies judge the running attempts, and each decision is
// written with its audit event (`reaper.warn`, `reaper.cancel`,
// `reaper.recovered`); a cancel, unless the policy is a dry run, cancels the
// job in the same transaction (`job.cancel` by actor `reaper`).
#pragma once

#include <atomic>
#include <chrono>
#include <optional>

#include "causeway/estate.h"
#include "causeway/mutex.h"
#include "causeway/ticker.h"
#include "service/scheduler_service.h"
#include "store/commit_queue.h"
#include "telemetry/prometheus.h"
#include "telemetry/reaper.h"

namespace causeway {

// What a push of samples may carry (docs/security.md).
struct TelemetryLimits {
  Micros max_age = std::chrono::hours(1);       // older samples are refused
  Micros max_ahead = std::chrono::minutes(5);   // and so are samples this far in the future
  size_t max_points = 1'000'000;                // kept in memory, every series together
  size_t max_series = 20'000;
  size_t max_jobs_per_push = 256;
};

class ReaperService {
 public:
  ReaperService(SchedulerService& scheduler, CommitQueue& queue, const Estate& estate, TelemetryLimits limits = {});
  ~ReaperService() { Stop(); }

  // One cycle; returns once its decisions are durable.
  Status TickOnce();
  // Samples read from the estate's Prometheus, and failed reads, so far.
  int64_t prometheus_samples() const { return prometheus_samples_.load(); }
  int64_t prometheus_errors() const { return prometheus_errors_.load(); }
  // Samples pushed through the API. They are kept by this replica only:
  // with several replicas, push to each (or let them read Prometheus).
  // Only samples of attempts that exist and are running are kept, stamped
  // within [now - max_age, now + max_ahead], for a GPU index below the
  // attempt's GPU count; a sample without an attempt number is the job's
  // running attempt's. kInvalidArgument for a push naming more jobs than
  // max_jobs_per_push; kResourceExhausted (429) when the store is full and
  // nothing could be kept.
  struct Pushed {
    size_t accepted = 0;
    size_t unknown_attempt = 0;  // no such job or attempt, or it is not running
    size_t outside_window = 0;
    size_t gpu_out_of_range = 0;
    size_t stale = 0;
    size_t over_limit = 0;
  };
  Result<Pushed> Push(const JobReader& store, std::vector<GpuSample> samples, Timestamp now);
  // Points and series held now.
  size_t points();
  size_t series();
  // What the samples say of one attempt so far (goodput: work over its
  // GPU time). Kept on the replica that received the samples.
  telemetry::Utilization AttemptUtilization(const std::string& job_id, int attempt);
  void Start(std::chrono::milliseconds interval);
  void Stop();

 private:
  // Reads the estate's Prometheus when its interval has passed (wall time:
  // Prometheus keeps real time).
  void PollPrometheus();

  SchedulerService& scheduler_;
  CommitQueue& queue_;
  Mutex mu_;  // the cycle and pushes
  telemetry::Reaper reaper_ GUARDED_BY(mu_);
  TelemetryLimits limits_;
  telemetry::SampleStore samples_ GUARDED_BY(mu_);
  Micros samples_retention_;
  std::optional<telemetry::PrometheusSource> prometheus_;
  Micros prometheus_interval_{0};
  Timestamp prometheus_read_to_;  // the end of the last successful read
  std::atomic<int64_t> prometheus_samples_{0}, prometheus_errors_{0};
  Ticker ticker_;
};

}  // namespace causeway
