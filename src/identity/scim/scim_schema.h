// SCIM 2.0 (RFC 7643) resource schemas for the directory: the core User
// with the enterprise extension, and Group. They say which attributes
// exist, their types, whether they compare case-exactly, who may change
// them and when they are returned; the filter, PATCH and the service work
// from them. Attribute names are matched ignoring case, as SCIM requires.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/status.h"

namespace causeway::identity::scim {

inline constexpr std::string_view kUserSchema = "urn:ietf:params:scim:schemas:core:2.0:User";
inline constexpr std::string_view kEnterpriseUserSchema = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
inline constexpr std::string_view kGroupSchema = "urn:ietf:params:scim:schemas:core:2.0:Group";
inline constexpr std::string_view kListResponse = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
inline constexpr std::string_view kPatchOp = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
inline constexpr std::string_view kErrorSchema = "urn:ietf:params:scim:api:messages:2.0:Error";

// The SCIM error an operation failed with: a Status (its code chooses the
// HTTP status) carrying RFC 7644's scimType, e.g. "invalidFilter".
Status Error(Code code, std::string_view scim_type, std::string detail);
// The scimType of `status`, "" when it has none.
std::string ScimTypeOf(const Status& status);
// The HTTP status for a failed SCIM operation (412 for a stale If-Match).
int HttpStatusOf(const Status& status);
// The SCIM error body for `status`.
nlohmann::json ErrorBody(const Status& status);

enum class Type { kString, kBoolean, kDecimal, kInteger, kDateTime, kReference, kComplex };
enum class Mutability { kReadWrite, kReadOnly, kImmutable, kWriteOnly };
enum class Returned { kDefault, kAlways, kNever, kRequest };

struct Attribute {
  std::string name;  // canonical spelling, e.g. "userName"
  Type type = Type::kString;
  bool multi = false;
  bool required = false;
  bool case_exact = false;
  Mutability mutability = Mutability::kReadWrite;
  Returned returned = Returned::kDefault;
  bool unique = false;
  std::vector<Attribute> sub;  // of a complex attribute
  std::vector<std::string> canonical_values;
  std::string description;
};

struct Schema {
  std::string id;  // the URN
  std::string name;
  std::string description;
  std::vector<Attribute> attributes;
};

// One kind of resource: "User" (core + enterprise extension) or "Group".
struct ResourceType {
  std::string name;      // "User"
  std::string endpoint;  // "/Users"
  const Schema* core;
  const Schema* extension;  // may be null
};
const ResourceType& UserType();
const ResourceType& GroupType();

// Attribute `name` of `attrs`, ignoring case; null if none.
const Attribute* FindIn(const std::vector<Attribute>& attrs, std::string_view name);

// An attribute reference resolved against a resource type: `urn` is the
// schema whose attributes hold it ("" for the core schema), `attr` the
// top-level attribute, `sub` the sub-attribute if one was named.
struct AttrRef {
  std::string urn;
  const Attribute* attr = nullptr;
  const Attribute* sub = nullptr;
  // The attribute's (or sub-attribute's) own definition.
  const Attribute& leaf() const { return sub ? *sub : *attr; }
};
// Resolves "userName", "name.givenName", "emails.value", "meta.created",
// "urn:...:enterprise:2.0:User:manager.value", ignoring case; kInvalidArgument
// (scimType `scim_type`) naming the unknown part.
Result<AttrRef> Resolve(const ResourceType& type, std::string_view path, std::string_view scim_type);

// The writable form of a client's resource: attribute names spelled as the
// schema does, booleans sent as "True"/"False" strings made booleans, types
// checked, read-only attributes and the password (write-only, never kept)
// dropped, attributes no schema defines ignored. kInvalidArgument with
// scimType invalidSyntax or invalidValue naming the attribute.
Result<nlohmann::json> Normalize(const ResourceType& type, const nlohmann::json& resource);
// One value of `a` (one element when `a` is multi-valued) in its stored
// form; `where` names it in errors.
Result<nlohmann::json> NormalizeOne(const Attribute& a, const nlohmann::json& value, const std::string& where);
// The whole value of `a`: an array when multi-valued.
Result<nlohmann::json> NormalizeWhole(const Attribute& a, const nlohmann::json& value, const std::string& where);
// kInvalidArgument (invalidValue) unless the required attributes are there.
Status CheckRequired(const ResourceType& type, const nlohmann::json& resource);

// Keeps what `attributes` asks for (or drops what `excluded` names), both
// comma-separated attribute paths; "id" and "schemas" always stay.
// kInvalidArgument (invalidPath) for an unknown attribute.
Result<nlohmann::json> Project(const ResourceType& type, nlohmann::json resource, std::string_view attributes,
                               std::string_view excluded);

// Discovery documents (RFC 7644 section 4), for resources under `base`
// (e.g. "https://causeway.example/scim/v2").
nlohmann::json ServiceProviderConfig(const std::string& base);
nlohmann::json SchemasDocument(const std::string& base);
nlohmann::json SchemaDocument(const Schema& schema, const std::string& base);
nlohmann::json ResourceTypesDocument(const std::string& base);
nlohmann::json ResourceTypeDocument(const ResourceType& type, const std::string& base);
// Schema `urn`, null if unknown.
const Schema* FindSchema(std::string_view urn);

bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace causeway::identity::scim
