// /v1/readiness/...: every control per provider, OSCAL, the four questions.
// Built by ApiService with only the services below.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "causeway/estate.h"
#include "service/readiness_service.h"

namespace causeway::api {

class ReadinessApi final : public Area {
 public:
  ReadinessApi(const Estate& estate, ReadinessService& readiness)
      : estate_(estate), readiness_(readiness) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  // Readiness.
  Result<HttpResponse> Readiness(HttpRequest& req);
  Result<HttpResponse> ReadinessControls(HttpRequest& req);
  Result<HttpResponse> ReadinessOscal(HttpRequest& req);
  Result<HttpResponse> ReadinessQuestions(HttpRequest& req);

  const Estate& estate_;
  ReadinessService& readiness_;
};

}  // namespace causeway::api
