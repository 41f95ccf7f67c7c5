// JSON forms of the spec types, as the API returns them.
#pragma once

#include <nlohmann/json.hpp>

#include "causeway/estate.h"
#include "causeway/job_spec.h"
#include "causeway/records.h"

namespace causeway {

nlohmann::json ToJson(const JobSpec& spec);
// The inverse of ToJson(JobSpec), for specs Causeway stored itself.
// kDataLoss when the stored form is not what ToJson writes.
Result<JobSpec> JobSpecFromJson(const nlohmann::json& j);
// The spec `job` was stored with (JobRecord::spec_json, written by ToJson),
// typed: the one reader of the stored form, so that a field renamed here is
// renamed for everything that reads a job's spec. kDataLoss naming the job
// when the stored form cannot be read.
Result<JobSpec> StoredSpec(const JobRecord& job);
nlohmann::json ToJson(const Diagnostic& d);
nlohmann::json ToJson(const Cluster& cluster, const Estate& estate);

}  // namespace causeway
