// SCIM filters (RFC 7644 section 3.4.2.2) and PATCH paths (section 3.5.2),
// parsed against a resource type and evaluated on stored resources.
//
//   filter := or;  or := and ("or" and)*;  and := unary ("and" unary)*
//   unary  := "not" "(" filter ")" | "(" filter ")"
//           | attrPath "[" filter "]" | attrPath "pr" | attrPath op value
//   op     := eq ne co sw ew gt ge lt le     value := "string" | number | true | false | null
//
// Operators and attribute names ignore case; strings compare ignoring case
// unless the attribute is caseExact; dateTime values compare as instants.
// A comparison holds when any value of a multi-valued attribute satisfies it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/status.h"
#include "identity/scim/scim_schema.h"

namespace causeway::identity::scim {

struct Filter {
  enum class Kind { kCompare, kPresent, kAnd, kOr, kNot, kValuePath };
  Kind kind = Kind::kCompare;
  AttrRef attr;          // kCompare, kPresent, kValuePath (the multi-valued attribute)
  std::string op;        // kCompare: "eq", "ne", ...
  nlohmann::json value;  // kCompare: the literal
  std::vector<Filter> children;  // kAnd/kOr: two; kNot, kValuePath: one
};

// kInvalidArgument with scimType invalidFilter saying where and what was
// expected.
Result<Filter> ParseFilter(const ResourceType& type, std::string_view text);

// Whether `resource` (the stored form: attributes at the top, extension
// attributes under their URN, plus "id" and "meta") satisfies `filter`.
bool Matches(const Filter& filter, const nlohmann::json& resource);

// Whether `element`, one element of the multi-valued attribute a value path
// names, satisfies that path's bracketed filter.
bool MatchesElement(const Filter& bracketed, const nlohmann::json& resource, const nlohmann::json& element);

// A PATCH path: attrPath, attrPath[filter] or attrPath[filter].subAttr.
struct Path {
  AttrRef attr;                   // with `sub` set for "name.givenName" or "...].value"
  std::optional<Filter> filter;   // selects elements of a multi-valued attribute
};
// kInvalidArgument with scimType invalidPath.
Result<Path> ParsePath(const ResourceType& type, std::string_view text);

}  // namespace causeway::identity::scim
