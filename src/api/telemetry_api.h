// /v1/telemetry: GPU samples pushed to the idle reaper.
// Built by ApiService with only the services below.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "causeway/clock.h"
#include "causeway/store.h"
#include "service/reaper_service.h"

namespace causeway::api {

class TelemetryApi final : public Area {
 public:
  TelemetryApi(Store& store, const Clock& clock, ReaperService* const& reaper)
      : store_(store), clock_(clock), reaper_(reaper) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  Result<HttpResponse> PushTelemetry(HttpRequest& req);

  Store& store_;
  const Clock& clock_;
  ReaperService* const& reaper_;
};

}  // namespace causeway::api
