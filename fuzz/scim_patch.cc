// SCIM PATCH bodies (RFC 7644 section 3.5.2) applied to a user and a group.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "causeway/json_input.h"
#include "identity/scim/scim_patch.h"
#include "identity/scim/scim_schema.h"

namespace scim = causeway::identity::scim;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const nlohmann::json kUser = nlohmann::json::parse(R"({
    "userName": "ada@corp.example", "active": true,
    "emails": [{"value": "ada@corp.example", "type": "work", "primary": true}]})");
  static const nlohmann::json kGroup = nlohmann::json::parse(R"({
    "displayName": "ml-team", "members": [{"value": "u1"}, {"value": "u2"}]})");
  auto body = causeway::ParseUntrustedJson(std::string_view(reinterpret_cast<const char*>(data), size), "body");
  if (!body.ok()) return 0;
  if (auto u = scim::ApplyPatch(scim::UserType(), kUser, *body); u.ok()) (void)u->dump();
  if (auto g = scim::ApplyPatch(scim::GroupType(), kGroup, *body); g.ok()) (void)g->dump();
  return 0;
}
