// /v1/telemetry and /v1/jobs/{id}/telemetry: GPU samples pushed for the
// idle reaper.

#include "api/api_helpers.h"
#include "api/telemetry_api.h"
#include "telemetry/samples.h"

namespace causeway::api {

using nlohmann::json;

void TelemetryApi::AddRoutes(RouteTable& routes) {
  using namespace identity;
  routes.Route("POST", "/v1/telemetry", kScopeTelemetryWrite, Bind(this, &TelemetryApi::PushTelemetry));
  routes.Route("POST", "/v1/jobs/{id}/telemetry", kScopeTelemetryWrite, Bind(this, &TelemetryApi::PushTelemetry), true);
}

// POST /v1/telemetry: Prometheus text exposition, series matched to jobs by
// their causeway_job label. POST /v1/jobs/{id}/telemetry?attempt=N
// [&format=nvidia-smi]: one job's samples (exposition or nvidia-smi CSV),
// which its own attempt credential may send.
Result<HttpResponse> TelemetryApi::PushTelemetry(HttpRequest& req) {
  if (!reaper_) {
    return FailedPrecondition("the estate has no reaper policies: samples would not be kept");
  }
  const std::string job = req.params["id"];
  if (!job.empty()) {
    // A job that does not exist takes no samples.
    ASSIGN_OR_RETURN(auto record, store_.GetJob(job));
    if (!record) return NotFound("job " + job + " not found");
  }
  auto attempt = QueryInt(req, "attempt", 1, 1000000, "an attempt number");
  if (!attempt.ok()) return attempt.status();
  std::string format = req.Query("format").empty() ? "exposition" : req.Query("format");
  Result<std::vector<GpuSample>> samples = std::vector<GpuSample>{};
  if (format == "nvidia-smi") {
    if (job.empty()) return InvalidArgument("nvidia-smi output is pushed to /v1/jobs/{id}/telemetry");
    samples = telemetry::ParseNvidiaSmiCsv(req.body, job, static_cast<int>(attempt->value_or(1)));
  } else if (format == "exposition") {
    telemetry::SeriesFormat series;
    series.job_id = job;  // under a job's path every series is that job's, labelled or not
    samples = telemetry::ParseExposition(req.body, series, clock_.Now());
    if (samples.ok() && !job.empty() && *attempt) {
      for (GpuSample& s : *samples) s.attempt = static_cast<int>(**attempt);
    }
  } else {
    return InvalidArgument("format \"" + format + "\": expected exposition or nvidia-smi");
  }
  if (!samples.ok()) return samples.status();
  size_t sent = samples->size();
  auto pushed = reaper_->Push(store_, std::move(*samples), clock_.Now());
  if (!pushed.ok()) return pushed.status();
  if (!job.empty() && sent > 0 && pushed->unknown_attempt == sent) {
    return FailedPrecondition("job " + job + " has no running attempt" +
                                                  (*attempt ? " " + std::to_string(**attempt) : std::string()) +
                                                  ": its samples are not kept");
  }
  return JsonResponse(202, {{"accepted", pushed->accepted},
                           {"rejected", {{"unknown_attempt", pushed->unknown_attempt},
                                         {"outside_window", pushed->outside_window},
                                         {"gpu_out_of_range", pushed->gpu_out_of_range},
                                         {"stale", pushed->stale},
                                         {"over_limit", pushed->over_limit}}}});
}

}  // namespace causeway::api
