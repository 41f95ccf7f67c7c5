// /v1/acceptance/...: the acceptance tests' verdicts.
// Built by ApiService with only the services below.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "causeway/estate.h"
#include "service/acceptance_service.h"

namespace causeway::api {

class AcceptanceApi final : public Area {
 public:
  AcceptanceApi(const Estate& estate, AcceptanceService& acceptance)
      : estate_(estate), acceptance_(acceptance) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  Result<HttpResponse> RecordAcceptance(HttpRequest& req);
  Result<HttpResponse> AcceptanceRuns(HttpRequest& req);

  const Estate& estate_;
  AcceptanceService& acceptance_;
};

}  // namespace causeway::api
