// The JSON forms of the engine's explanations, as the API shows them and as
// an attempt's placement is stored.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "scheduler/engine.h"

namespace causeway::scheduler {

nlohmann::json ToJson(const Placement& placement);
nlohmann::json ToJson(const Explanation& explanation);
nlohmann::json ToJson(const std::vector<QueueStatus>& queues);

}  // namespace causeway::scheduler
