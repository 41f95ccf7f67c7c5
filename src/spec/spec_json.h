// JSON forms of the spec types, as the API returns them.
#pragma once

#include <nlohmann/json.hpp>

#include "causeway/estate.h"
#include "causeway/job_spec.h"

namespace causeway {

nlohmann::json ToJson(const JobSpec& spec);
// The inverse of ToJson(JobSpec), for specs Causeway stored itself.
// kDataLoss when the stored form is not what ToJson writes.
Result<JobSpec> JobSpecFromJson(const nlohmann::json& j);
nlohmann::json ToJson(const Diagnostic& d);
nlohmann::json ToJson(const Cluster& cluster, const Estate& estate);

}  // namespace causeway
