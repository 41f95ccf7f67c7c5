// SCIM filters (GET ?filter=) and PATCH paths, evaluated against a user.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "identity/scim/scim_filter.h"
#include "identity/scim/scim_schema.h"

namespace scim = causeway::identity::scim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nlohmann::json kUser = nlohmann::json::parse(R"({
    "userName": "ada@corp.example", "active": true, "displayName": "Ada",
    "name": {"givenName": "Ada", "familyName": "Lovelace"},
    "emails": [{"value": "ada@corp.example", "type": "work", "primary": true}],
    "meta": {"created": "2026-01-01T00:00:00Z", "lastModified": "2026-02-01T00:00:00Z"}})");
  std::string_view text(reinterpret_cast<const char*>(data), size);
  for (const scim::ResourceType* type : {&scim::UserType(), &scim::GroupType()}) {
    if (auto f = scim::ParseFilter(*type, text); f.ok()) (void)scim::Matches(*f, kUser);
    auto path = scim::ParsePath(*type, text);
    (void)path;  // only crashes and hangs matter here
  }
  return 0;
}
