// SCIM PATCH (RFC 7644 section 3.5.2) on a stored resource, all or nothing.
//
// Besides the RFC, what Okta and Microsoft Entra send is accepted:
// operation names in any case ("Replace"), booleans as "True"/"False",
// several operations in one request, a path-less add/replace whose value
// object has attribute paths as keys ("name.givenName", the enterprise
// extension's URN-prefixed names), and "remove" of group members given as a
// value list instead of a filter. `emails[type eq "work"].value` with no
// matching element adds one, as Entra expects.
#pragma once

#include <nlohmann/json.hpp>

#include "causeway/status.h"
#include "identity/scim/scim_schema.h"

namespace causeway::identity::scim {

// `resource` after the PatchOp `body`. kInvalidArgument with scimType
// invalidSyntax (malformed request), invalidPath, noTarget (a filter that
// matched nothing where it must), mutability (a read-only attribute) or
// invalidValue (wrong type, a required attribute removed).
Result<nlohmann::json> ApplyPatch(const ResourceType& type, nlohmann::json resource, const nlohmann::json& body);

}  // namespace causeway::identity::scim
