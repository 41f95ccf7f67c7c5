// /v1/plan/...: when a job not yet submitted, or a queued one, would likely
// start; the ledger's history replayed.
// Built by ApiService with only the services below.
#pragma once

#include <atomic>
#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "service/job_service.h"
#include "service/plan_service.h"

namespace causeway::api {

// A queued job's forecast for explain: {"error": ...} when there is none.
nlohmann::json ExpectedStart(PlanService& plans, const Estate& estate, const std::string& job_id);

class PlanApi final : public Area {
 public:
  PlanApi(Store& store, const Estate& estate, const Clock& clock, PlanService& plans, JobService& jobs)
      : store_(store), estate_(estate), clock_(clock), plans_(plans), jobs_(jobs) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  // Planning: a job not yet submitted, and a queued one.
  Result<HttpResponse> PlanJob(HttpRequest& req);
  Result<HttpResponse> PlanQueuedJob(HttpRequest& req);
  Result<HttpResponse> PlanHistory(HttpRequest& req);

  Store& store_;
  const Estate& estate_;
  const Clock& clock_;
  PlanService& plans_;
  JobService& jobs_;
  std::atomic<bool> plan_replaying_{false};  // PlanHistory runs one replay at a time
};

}  // namespace causeway::api
