// /v1/queues, /v1/clusters, /v1/capacity, provider outages.
// Built by ApiService with only the services below.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "service/reaper_service.h"
#include "service/scheduler_service.h"

namespace causeway::api {

class ClustersApi final : public Area {
 public:
  ClustersApi(Store& store, const Estate& estate, const Clock& clock, SchedulerService* scheduler,
              ReaperService* const& reaper)
      : store_(store), estate_(estate), clock_(clock), scheduler_(scheduler), reaper_(reaper) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  // Queues, clusters, providers; telemetry.
  Result<HttpResponse> ListQueues(HttpRequest& req);
  Result<HttpResponse> ListQueuedJobs(HttpRequest& req);
  Result<HttpResponse> QueueHistory(HttpRequest& req);
  Result<HttpResponse> SetOutage(HttpRequest& req);
  Result<HttpResponse> ListClusters(HttpRequest& req);
  Result<HttpResponse> Capacity(HttpRequest& req);

  Store& store_;
  const Estate& estate_;
  const Clock& clock_;
  SchedulerService* scheduler_;
  ReaperService* const& reaper_;
};

}  // namespace causeway::api
