// /v1/jobs/{id}/provenance and /v1/provenance/...: signed records, their
// keys, exports, facts jobs record, reruns.
// Built by ApiService with only the services below.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "service/job_service.h"
#include "service/provenance_service.h"

namespace causeway::api {

class ProvenanceApi final : public Area {
 public:
  ProvenanceApi(Store& store, const Estate& estate, ProvenanceService& provenance, JobService& jobs)
      : store_(store), estate_(estate), provenance_(provenance), jobs_(jobs) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  // Provenance.
  Result<HttpResponse> JobProvenance(HttpRequest& req);
  Result<HttpResponse> ProvenanceKeys(HttpRequest& req);
  Result<HttpResponse> ExportProvenance(HttpRequest& req);
  Result<HttpResponse> RecordJobFacts(HttpRequest& req);
  Result<HttpResponse> RerunSpec(HttpRequest& req);

  Store& store_;
  const Estate& estate_;
  ProvenanceService& provenance_;
  JobService& jobs_;
};

}  // namespace causeway::api
