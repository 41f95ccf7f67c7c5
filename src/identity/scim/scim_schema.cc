#include "identity/scim/scim_schema.h"

#include "causeway/input.h"

#include <set>

namespace causeway::identity::scim {

using nlohmann::json;

namespace {

constexpr std::string_view kScimTypeField = "scimType";

Attribute Str(std::string name, std::string description = "") {
  Attribute a;
  a.name = std::move(name);
  a.description = std::move(description);
  return a;
}
Attribute Of(Attribute a, Type type) {
  a.type = type;
  return a;
}
Attribute Exact(Attribute a) {
  a.case_exact = true;
  return a;
}
Attribute ReadOnly(Attribute a) {
  a.mutability = Mutability::kReadOnly;
  return a;
}
Attribute Complex(std::string name, std::vector<Attribute> sub, bool multi, std::string description) {
  Attribute a = Str(std::move(name), std::move(description));
  a.type = Type::kComplex;
  a.multi = multi;
  a.sub = std::move(sub);
  return a;
}
// The sub-attributes of a multi-valued attribute such as emails.
std::vector<Attribute> Plural(std::vector<std::string> types, Type value_type = Type::kString) {
  Attribute type = Str("type", "a label such as work or home");
  type.canonical_values = std::move(types);
  return {Of(Str("value"), value_type), Str("display"), type, Of(Str("primary"), Type::kBoolean)};
}
std::vector<Attribute> Reference(std::string display_name = "display") {
  return {Exact(Str("value", "the id of the referenced resource")), Exact(Of(Str("$ref"), Type::kReference)),
          Str(std::move(display_name)), Str("type")};
}

// Attributes every resource has (RFC 7643 section 3.1).
std::vector<Attribute> Common() {
  Attribute id = ReadOnly(Exact(Str("id", "the server's identifier")));
  id.returned = Returned::kAlways;
  id.unique = true;
  Attribute meta = Complex("meta",
                           {Exact(Str("resourceType")), Of(Str("created"), Type::kDateTime),
                            Of(Str("lastModified"), Type::kDateTime), Exact(Of(Str("location"), Type::kReference)),
                            Exact(Str("version"))},
                           false, "resource metadata");
  meta.mutability = Mutability::kReadOnly;
  for (Attribute& s : meta.sub) s.mutability = Mutability::kReadOnly;
  return {id, Exact(Str("externalId", "the provisioning client's identifier")), meta};
}

Schema MakeUserSchema() {
  Schema s{std::string(kUserSchema), "User", "A person who may use Causeway", {}};
  Attribute user_name = Str("userName", "unique login name, usually the IdP's email or UPN");
  user_name.required = true;
  user_name.unique = true;
  Attribute password = Str("password");
  password.mutability = Mutability::kWriteOnly;
  password.returned = Returned::kNever;
  Attribute groups = Complex("groups", Reference(), true, "the groups the user belongs to (set through Group)");
  groups.mutability = Mutability::kReadOnly;
  for (Attribute& a : groups.sub) a.mutability = Mutability::kReadOnly;
  s.attributes = {
      user_name,
      Complex("name",
              {Str("formatted"), Str("familyName"), Str("givenName"), Str("middleName"), Str("honorificPrefix"),
               Str("honorificSuffix")},
              false, "the person's name"),
      Str("displayName"),
      Str("nickName"),
      Of(Str("profileUrl"), Type::kReference),
      Str("title"),
      Str("userType"),
      Str("preferredLanguage"),
      Str("locale"),
      Str("timezone"),
      Of(Str("active", "false once the person may no longer use Causeway"), Type::kBoolean),
      password,
      Complex("emails", Plural({"work", "home", "other"}), true, "email addresses"),
      Complex("phoneNumbers", Plural({"work", "home", "mobile", "fax", "pager", "other"}), true, "phone numbers"),
      Complex("ims", Plural({"aim", "gtalk", "icq", "xmpp", "msn", "skype", "qq", "yahoo"}), true, "instant messaging"),
      Complex("photos", Plural({"photo", "thumbnail"}, Type::kReference), true, "photos"),
      Complex("addresses",
              {Str("formatted"), Str("streetAddress"), Str("locality"), Str("region"), Str("postalCode"),
               Str("country"), Str("type"), Of(Str("primary"), Type::kBoolean)},
              true, "addresses"),
      groups,
      Complex("entitlements", Plural({}), true, "entitlements"),
      Complex("roles", Plural({}), true, "roles"),
      Complex("x509Certificates", Plural({}), true, "certificates"),
  };
  return s;
}

Schema MakeEnterpriseSchema() {
  Schema s{std::string(kEnterpriseUserSchema), "EnterpriseUser", "Enterprise attributes of a user", {}};
  s.attributes = {Str("employeeNumber"), Str("costCenter"), Str("organization"), Str("division"), Str("department"),
                  Complex("manager", Reference("displayName"), false, "the user's manager")};
  return s;
}

Schema MakeGroupSchema() {
  Schema s{std::string(kGroupSchema), "Group", "A group of users; roles are bound to groups", {}};
  Attribute display = Str("displayName", "the group's name, as in the identity provider");
  display.required = true;
  display.unique = true;
  s.attributes = {display, Complex("members", Reference(), true, "the group's users")};
  return s;
}

const Schema& UserSchemaDef() {
  static const Schema s = MakeUserSchema();
  return s;
}
const Schema& EnterpriseSchemaDef() {
  static const Schema s = MakeEnterpriseSchema();
  return s;
}
const Schema& GroupSchemaDef() {
  static const Schema s = MakeGroupSchema();
  return s;
}
const std::vector<Attribute>& CommonAttributes() {
  static const std::vector<Attribute> a = Common();
  return a;
}

const char* TypeName(Type t) {
  switch (t) {
    case Type::kString: return "string";
    case Type::kBoolean: return "boolean";
    case Type::kDecimal: return "decimal";
    case Type::kInteger: return "integer";
    case Type::kDateTime: return "dateTime";
    case Type::kReference: return "reference";
    case Type::kComplex: return "complex";
  }
  return "string";
}

// The value `v` given for `a` (one value of it when multi-valued) in its
// stored form; kInvalidArgument (invalidValue) when it has the wrong type.
Result<json> NormalizeValueImpl(const Attribute& a, const json& v, const std::string& where) {
  switch (a.type) {
    case Type::kBoolean:
      if (v.is_boolean()) return v;
      // Entra sends booleans as "True" and "False".
      if (v.is_string() && EqualsIgnoreCase(v.get<std::string>(), "true")) return json(true);
      if (v.is_string() && EqualsIgnoreCase(v.get<std::string>(), "false")) return json(false);
      break;
    case Type::kInteger:
      if (v.is_number_integer()) return v;
      break;
    case Type::kDecimal:
      if (v.is_number()) return v;
      break;
    case Type::kComplex: {
      // Entra sends the enterprise extension's manager as the manager's id
      // alone ("manager": "26118915-…"), in POST and in PATCH: a
      // single-valued complex attribute with a value sub-attribute takes a
      // bare string as {"value": …}.
      if (v.is_string() && !a.multi && FindIn(a.sub, "value")) {
        return NormalizeValueImpl(a, json{{"value", v}}, where);
      }
      if (!v.is_object()) break;
      json out = json::object();
      for (auto it = v.begin(); it != v.end(); ++it) {
        const Attribute* sub = FindIn(a.sub, it.key());
        if (!sub || it->is_null()) continue;
        ASSIGN_OR_RETURN(out[sub->name], NormalizeValueImpl(*sub, *it, where + "." + sub->name));
      }
      return out;
    }
    default:
      if (v.is_string()) return v;
      break;
  }
  return Error(Code::kInvalidArgument, "invalidValue",
               "attribute \"" + where + "\": expected " + (a.multi && a.type != Type::kComplex ? "an array of " : "") +
                   (a.type == Type::kComplex ? "an object" : std::string("a ") + TypeName(a.type)) + ", got " +
                   std::string(v.type_name()));
}

// `value` for `a`: an array for a multi-valued attribute (a single value is
// taken as a one-element array, as several clients send it).
Result<json> NormalizeAttribute(const Attribute& a, const json& value, const std::string& where) {
  if (!a.multi) return NormalizeValueImpl(a, value, where);
  json items = value.is_array() ? value : json::array({value});
  json out = json::array();
  for (const json& v : items) {
    if (v.is_null()) continue;
    ASSIGN_OR_RETURN(json one, NormalizeValueImpl(a, v, where));
    out.push_back(std::move(one));
  }
  return out;
}

Status NormalizeInto(const std::vector<Attribute>& attrs, const json& in, json& out, const std::string& prefix) {
  for (auto it = in.begin(); it != in.end(); ++it) {
    const Attribute* a = FindIn(attrs, it.key());
    if (!a || a->mutability == Mutability::kReadOnly || a->mutability == Mutability::kWriteOnly) continue;
    if (it->is_null()) continue;  // null means unassigned (RFC 7643 2.5)
    ASSIGN_OR_RETURN(json v, NormalizeAttribute(*a, *it, prefix + a->name));
    out[a->name] = std::move(v);
  }
  return Status::Ok();
}

json AttributeDocument(const Attribute& a) {
  static const char* kMutability[] = {"readWrite", "readOnly", "immutable", "writeOnly"};
  static const char* kReturned[] = {"default", "always", "never", "request"};
  json j = {{"name", a.name},
            {"type", TypeName(a.type)},
            {"multiValued", a.multi},
            {"description", a.description},
            {"required", a.required},
            {"caseExact", a.case_exact},
            {"mutability", kMutability[static_cast<int>(a.mutability)]},
            {"returned", kReturned[static_cast<int>(a.returned)]},
            {"uniqueness", a.unique ? "server" : "none"}};
  if (!a.canonical_values.empty()) j["canonicalValues"] = a.canonical_values;
  if (a.type == Type::kReference) j["referenceTypes"] = json::array({"User", "Group", "external"});
  if (!a.sub.empty()) {
    j["subAttributes"] = json::array();
    for (const Attribute& s : a.sub) j["subAttributes"].push_back(AttributeDocument(s));
  }
  return j;
}

std::vector<std::string> SplitList(std::string_view list) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= list.size()) {
    size_t comma = list.find(',', start);
    if (comma == std::string_view::npos) comma = list.size();
    std::string_view item = list.substr(start, comma - start);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
    start = comma + 1;
  }
  return out;
}

// The object of `resource` that holds `ref`'s attribute (the resource itself
// or its extension object), null if absent.
json* Holder(json& resource, const AttrRef& ref) {
  if (ref.urn.empty()) return &resource;
  auto it = resource.find(ref.urn);
  return it == resource.end() || !it->is_object() ? nullptr : &*it;
}

}  // namespace

Result<json> NormalizeOne(const Attribute& a, const json& value, const std::string& where) {
  return NormalizeValueImpl(a, value, where);
}
Result<json> NormalizeWhole(const Attribute& a, const json& value, const std::string& where) {
  return NormalizeAttribute(a, value, where);
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

Status Error(Code code, std::string_view scim_type, std::string detail) {
  return Status(code, std::move(detail), {Diagnostic{"", 0, 0, std::string(kScimTypeField), std::string(scim_type)}});
}

std::string ScimTypeOf(const Status& status) {
  for (const Diagnostic& d : status.diagnostics()) {
    if (d.field == kScimTypeField && d.file.empty()) return d.message;
  }
  return "";
}

int HttpStatusOf(const Status& status) {
  if (status.code() == Code::kFailedPrecondition && ScimTypeOf(status).empty()) return 412;
  return HttpStatus(status.code());
}

json ErrorBody(const Status& status) {
  json body = {{"schemas", json::array({kErrorSchema})},
               {"status", std::to_string(HttpStatusOf(status))},
               {"detail", status.message()}};
  std::string type = ScimTypeOf(status);
  if (!type.empty()) body["scimType"] = type;
  return body;
}

const Attribute* FindIn(const std::vector<Attribute>& attrs, std::string_view name) {
  for (const Attribute& a : attrs) {
    if (EqualsIgnoreCase(a.name, name)) return &a;
  }
  return nullptr;
}

const ResourceType& UserType() {
  static const ResourceType t{"User", "/Users", &UserSchemaDef(), &EnterpriseSchemaDef()};
  return t;
}
const ResourceType& GroupType() {
  static const ResourceType t{"Group", "/Groups", &GroupSchemaDef(), nullptr};
  return t;
}

const Schema* FindSchema(std::string_view urn) {
  for (const Schema* s : {&UserSchemaDef(), &EnterpriseSchemaDef(), &GroupSchemaDef()}) {
    if (EqualsIgnoreCase(s->id, urn)) return s;
  }
  return nullptr;
}

Result<AttrRef> Resolve(const ResourceType& type, std::string_view path, std::string_view scim_type) {
  AttrRef ref;
  std::string_view rest = path;
  const std::vector<Attribute>* attrs = &type.core->attributes;
  // A schema URN in front: "urn:...:User:userName" or the extension's.
  for (const Schema* s : {type.core, type.extension}) {
    if (!s || rest.size() <= s->id.size() + 1 || rest[s->id.size()] != ':') continue;
    if (!EqualsIgnoreCase(rest.substr(0, s->id.size()), s->id)) continue;
    rest.remove_prefix(s->id.size() + 1);
    attrs = &s->attributes;
    if (s == type.extension) ref.urn = s->id;
    break;
  }
  size_t dot = rest.find('.');
  std::string_view top = rest.substr(0, dot);
  ref.attr = FindIn(*attrs, top);
  if (!ref.attr && ref.urn.empty()) ref.attr = FindIn(CommonAttributes(), top);
  if (!ref.attr) {
    return Error(Code::kInvalidArgument, scim_type,
                 "unknown attribute \"" + std::string(path) + "\" for a " + type.name);
  }
  if (dot != std::string_view::npos) {
    ref.sub = FindIn(ref.attr->sub, rest.substr(dot + 1));
    if (!ref.sub) {
      return Error(Code::kInvalidArgument, scim_type,
                   "unknown attribute \"" + std::string(path) + "\": \"" + ref.attr->name + "\" has no sub-attribute \"" +
                       std::string(rest.substr(dot + 1)) + "\"");
    }
  }
  return ref;
}

Result<json> Normalize(const ResourceType& type, const json& resource) {
  if (!resource.is_object()) return Error(Code::kInvalidArgument, "invalidSyntax", "the resource must be a JSON object");
  auto schemas = resource.find("schemas");
  bool has_core = false;
  if (schemas != resource.end()) {
    if (!schemas->is_array()) {
      return Error(Code::kInvalidArgument, "invalidSyntax", "\"schemas\" must be an array of schema URNs");
    }
    for (const json& s : *schemas) has_core |= s.is_string() && EqualsIgnoreCase(s.get<std::string>(), type.core->id);
  }
  if (!has_core) {
    return Error(Code::kInvalidArgument, "invalidSyntax",
                 "\"schemas\" must list \"" + type.core->id + "\" for a " + type.name);
  }
  json out = json::object();
  RETURN_IF_ERROR(NormalizeInto(type.core->attributes, resource, out, ""));
  if (auto ext = resource.find("externalId"); ext != resource.end() && !ext->is_null()) {
    if (!ext->is_string()) return Error(Code::kInvalidArgument, "invalidValue", "attribute \"externalId\": expected a string");
    out["externalId"] = *ext;
  }
  if (type.extension) {
    for (auto it = resource.begin(); it != resource.end(); ++it) {
      if (!EqualsIgnoreCase(it.key(), type.extension->id) || !it->is_object()) continue;
      json ext = json::object();
      RETURN_IF_ERROR(NormalizeInto(type.extension->attributes, *it, ext, type.extension->id + ":"));
      if (!ext.empty()) out[type.extension->id] = std::move(ext);
    }
  }
  return out;
}

Status CheckRequired(const ResourceType& type, const json& resource) {
  for (const Attribute& a : type.core->attributes) {
    if (!a.required) continue;
    auto it = resource.find(a.name);
    if (it == resource.end() || it->is_null() || (it->is_string() && it->get<std::string>().empty())) {
      return Error(Code::kInvalidArgument, "invalidValue", "attribute \"" + a.name + "\" is required for a " + type.name);
    }
  }
  // Names that reach the directory, Slurm accounts, audit events and log
  // lines: no control characters (a NUL would make "bob\0evil" a separate
  // person who prints as bob).
  auto check = [](const json& v, const std::string& field) -> Status {
    if (!v.is_string()) return Status::Ok();
    if (Status st = CheckName(v.get<std::string>(), field, 1024); !st.ok()) {
      return Error(Code::kInvalidArgument, "invalidValue", st.message());
    }
    return Status::Ok();
  };
  for (const char* attr : {"userName", "displayName", "externalId"}) {
    if (auto it = resource.find(attr); it != resource.end()) RETURN_IF_ERROR(check(*it, attr));
  }
  if (auto emails = resource.find("emails"); emails != resource.end() && emails->is_array()) {
    for (const json& e : *emails) {
      if (e.is_object() && e.contains("value")) RETURN_IF_ERROR(check(e["value"], "emails.value"));
    }
  }
  return Status::Ok();
}

Result<json> Project(const ResourceType& type, json resource, std::string_view attributes, std::string_view excluded) {
  auto always = [](const AttrRef& r) { return r.attr->returned == Returned::kAlways; };
  if (!attributes.empty()) {
    json out = json::object();
    for (const char* keep : {"schemas", "id"}) {
      if (resource.contains(keep)) out[keep] = resource[keep];
    }
    for (const std::string& path : SplitList(attributes)) {
      ASSIGN_OR_RETURN(AttrRef ref, Resolve(type, path, "invalidPath"));
      json* from = Holder(resource, ref);
      if (!from || !from->contains(ref.attr->name)) continue;
      json& to = ref.urn.empty() ? out : out[ref.urn];
      const json& v = (*from)[ref.attr->name];
      if (!ref.sub) {
        to[ref.attr->name] = v;
      } else if (v.is_object() && v.contains(ref.sub->name)) {
        to[ref.attr->name][ref.sub->name] = v[ref.sub->name];
      } else if (v.is_array()) {
        json& list = to[ref.attr->name];
        if (!list.is_array()) list = json::array();
        for (size_t i = 0; i < v.size(); ++i) {
          if (list.size() <= i) list.push_back(json::object());
          if (v[i].is_object() && v[i].contains(ref.sub->name)) list[i][ref.sub->name] = v[i][ref.sub->name];
        }
      }
    }
    return out;
  }
  for (const std::string& path : SplitList(excluded)) {
    ASSIGN_OR_RETURN(AttrRef ref, Resolve(type, path, "invalidPath"));
    if (always(ref)) continue;
    json* from = Holder(resource, ref);
    if (!from || !from->contains(ref.attr->name)) continue;
    if (!ref.sub) {
      from->erase(ref.attr->name);
    } else {
      json& v = (*from)[ref.attr->name];
      if (v.is_object()) v.erase(ref.sub->name);
      if (v.is_array()) {
        for (json& item : v) {
          if (item.is_object()) item.erase(ref.sub->name);
        }
      }
    }
  }
  return resource;
}

json ServiceProviderConfig(const std::string& base) {
  return {{"schemas", json::array({"urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"})},
          {"documentationUri", "https://causeway.dev/docs/identity"},
          {"patch", {{"supported", true}}},
          {"bulk", {{"supported", false}, {"maxOperations", 0}, {"maxPayloadSize", 0}}},
          {"filter", {{"supported", true}, {"maxResults", 1000}}},
          {"changePassword", {{"supported", false}}},
          {"sort", {{"supported", false}}},
          {"etag", {{"supported", true}}},
          {"authenticationSchemes",
           json::array({{{"type", "oauthbearertoken"},
                         {"name", "Bearer token"},
                         {"description", "A Causeway API token with the scim:provision scope"},
                         {"primary", true}}})},
          {"meta", {{"resourceType", "ServiceProviderConfig"}, {"location", base + "/ServiceProviderConfig"}}}};
}

json SchemaDocument(const Schema& schema, const std::string& base) {
  json attrs = json::array();
  for (const Attribute& a : schema.attributes) attrs.push_back(AttributeDocument(a));
  return {{"schemas", json::array({"urn:ietf:params:scim:schemas:core:2.0:Schema"})},
          {"id", schema.id},
          {"name", schema.name},
          {"description", schema.description},
          {"attributes", attrs},
          {"meta", {{"resourceType", "Schema"}, {"location", base + "/Schemas/" + schema.id}}}};
}

json SchemasDocument(const std::string& base) {
  json list = json::array();
  for (const Schema* s : {&UserSchemaDef(), &EnterpriseSchemaDef(), &GroupSchemaDef()}) {
    list.push_back(SchemaDocument(*s, base));
  }
  return {{"schemas", json::array({kListResponse})},
          {"totalResults", list.size()},
          {"itemsPerPage", list.size()},
          {"startIndex", 1},
          {"Resources", list}};
}

json ResourceTypeDocument(const ResourceType& type, const std::string& base) {
  json doc = {{"schemas", json::array({"urn:ietf:params:scim:schemas:core:2.0:ResourceType"})},
              {"id", type.name},
              {"name", type.name},
              {"endpoint", type.endpoint},
              {"description", type.core->description},
              {"schema", type.core->id},
              {"meta", {{"resourceType", "ResourceType"}, {"location", base + "/ResourceTypes/" + type.name}}}};
  if (type.extension) {
    doc["schemaExtensions"] = json::array({{{"schema", type.extension->id}, {"required", false}}});
  }
  return doc;
}

json ResourceTypesDocument(const std::string& base) {
  json list = json::array({ResourceTypeDocument(UserType(), base), ResourceTypeDocument(GroupType(), base)});
  return {{"schemas", json::array({kListResponse})},
          {"totalResults", 2},
          {"itemsPerPage", 2},
          {"startIndex", 1},
          {"Resources", list}};
}

}  // namespace causeway::identity::scim
