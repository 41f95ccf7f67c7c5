// JSON forms of stored records, as the API returns them. Token hashes are
// never included.
#pragma once

#include <nlohmann/json.hpp>

#include "causeway/records.h"

namespace causeway {

nlohmann::json ToJson(const JobRecord& job);  // without spec_yaml
nlohmann::json ToJson(const JobEvent& event);
nlohmann::json ToJson(const Attempt& attempt);
nlohmann::json ToJson(const TokenRecord& token);
nlohmann::json ToJson(const AuditEvent& event);
nlohmann::json ToJson(const Checkpoint& checkpoint);

}  // namespace causeway
