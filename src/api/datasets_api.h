// /v1/datasets/... and /v1/replications/...: the registry, verification,
// replication.
// Built by ApiService with only the services below.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "causeway/estate.h"
#include "service/dataset_service.h"

namespace causeway::api {

class DatasetsApi final : public Area {
 public:
  DatasetsApi(const Estate& estate, DatasetService& datasets)
      : estate_(estate), datasets_(datasets) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  // Datasets.
  Result<HttpResponse> ListDatasets(HttpRequest& req);
  Result<HttpResponse> DatasetVersions(HttpRequest& req);
  Result<HttpResponse> ShowDataset(HttpRequest& req);
  Result<HttpResponse> DatasetManifest(HttpRequest& req);
  Result<HttpResponse> RegisterDataset(HttpRequest& req);
  Result<HttpResponse> VerifyDataset(HttpRequest& req);
  Result<HttpResponse> ReplicateDataset(HttpRequest& req);
  Result<HttpResponse> GetReplication(HttpRequest& req);

  const Estate& estate_;
  DatasetService& datasets_;
};

}  // namespace causeway::api
