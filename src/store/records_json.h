// JSON forms of stored records, as the API returns them. Token hashes are
// never included.
#pragma once

#include <nlohmann/json.hpp>

#include "causeway/records.h"
#include "causeway/status.h"

namespace causeway {

// Details as a JSON object, keys sorted; also found by nlohmann's
// conversions, so `json j = details` works.
void to_json(nlohmann::json& j, const Details& details);
void to_json(nlohmann::json& j, const DetailValue& value);
// The Details a JSON object holds. Refuses anything else: a floating point
// number, a top level that is not an object, nesting deeper than 32.
Result<Details> DetailsFromJson(const nlohmann::json& j);
// An audit event's details read back from their stored text. Text that no
// longer holds Details (edited by hand) is kept whole under "stored_text", so
// verification reports the event as modified instead of failing to read it.
Details StoredDetails(std::string_view text);

// A directory entry's stored resource as JSON: the object its text holds,
// or an empty object when the text is not one.
nlohmann::json ResourceJson(const DirectoryEntry& entry);
// The text stored for `resource` (compact, keys sorted, invalid UTF-8
// replaced): equal resources give equal text.
std::string ResourceText(const nlohmann::json& resource);
// The ids of a directory group's members (its resource's members[].value),
// in the order stored.
std::vector<std::string> GroupMemberIds(const DirectoryEntry& group);

nlohmann::json ToJson(const JobRecord& job);  // without spec_yaml
// The pipeline a job is a step of: id, name, its step (from 1), steps, after.
nlohmann::json PipelineJson(const JobRecord& job);
nlohmann::json ToJson(const JobEvent& event);
nlohmann::json ToJson(const Attempt& attempt);
nlohmann::json ToJson(const TokenRecord& token);
nlohmann::json ToJson(const AuditEvent& event);
nlohmann::json ToJson(const Checkpoint& checkpoint);

}  // namespace causeway
