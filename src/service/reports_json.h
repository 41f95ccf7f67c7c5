// The JSON forms of the services' reports, for the edges that show them
// (the API and the CLI); the services themselves deal in structs.
#pragma once

#include <nlohmann/json.hpp>

#include "service/checkpoint_service.h"
#include "service/people_service.h"

namespace causeway {

nlohmann::json ToJson(const TrailReport& report);
nlohmann::json ToJson(const SyncReport& report);
nlohmann::json ToJson(const std::vector<SyncReport>& reports);
nlohmann::json ToJson(const CredentialReport& report);

}  // namespace causeway
