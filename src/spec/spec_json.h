// JSON forms of the spec types, as the API returns them.
#pragma once

#include <nlohmann/json.hpp>

#include "causeway/estate.h"
#include "causeway/job_spec.h"

namespace causeway {

nlohmann::json ToJson(const JobSpec& spec);
nlohmann::json ToJson(const Diagnostic& d);
nlohmann::json ToJson(const Cluster& cluster, const Estate& estate);

}  // namespace causeway
