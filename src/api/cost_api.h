// /v1/cost/...: showback, bills, reconciliation, waste, usage export.
// Built by ApiService with only the services below.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/store.h"

namespace causeway::api {

class CostApi final : public Area {
 public:
  CostApi(Store& store, const Estate& estate, const Clock& clock)
      : store_(store), estate_(estate), clock_(clock) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  // Cost.
  Result<HttpResponse> CostShowback(HttpRequest& req);
  Result<HttpResponse> ListBills(HttpRequest& req);
  Result<HttpResponse> ImportBill(HttpRequest& req);
  Result<HttpResponse> ReconcileCost(HttpRequest& req);
  Result<HttpResponse> CostWaste(HttpRequest& req);
  Result<HttpResponse> ExportUsage(HttpRequest& req);

  Store& store_;
  const Estate& estate_;
  const Clock& clock_;
};

}  // namespace causeway::api
