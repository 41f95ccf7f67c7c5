#include "audit/ocsf.h"

#include <set>

#include "store/audit_chain.h"
#include "store/records_json.h"

namespace causeway::audit::ocsf {

using nlohmann::json;

namespace {

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// The verb of an action: "scim.user.deactivate" -> "deactivate".
std::string_view Verb(std::string_view action) {
  size_t dot = action.rfind('.');
  return dot == std::string_view::npos ? action : action.substr(dot + 1);
}

int ApiActivity(std::string_view verb) {
  static const std::set<std::string_view> create = {"create", "submit", "import", "bind", "request", "register",
                                                    "activate", "issue", "copy", "lead"};
  static const std::set<std::string_view> read = {"read", "list", "get", "use", "verify"};
  static const std::set<std::string_view> remove = {"delete", "revoke", "unbind", "remove", "retire"};
  if (create.count(verb)) return 1;
  if (read.count(verb)) return 2;
  if (remove.count(verb)) return 4;
  return 3;  // every other change updates something
}

json Actor(const std::string& actor) {
  if (StartsWith(actor, "user:")) return {{"user", {{"name", actor.substr(5)}, {"type_id", 1}}}};
  if (StartsWith(actor, "tok")) return {{"user", {{"uid", actor}, {"type_id", 99}, {"type", "API token"}}}};
  return {{"user", {{"name", actor}, {"type_id", 3}}}};
}

const json* Find(const json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

Status Missing(const std::string& what, int class_uid) {
  return InvalidArgument("OCSF class " + std::to_string(class_uid) + ": " + what);
}

bool NonEmptyObject(const json* j) { return j && j->is_object() && !j->empty(); }

}  // namespace

json FromCauseway(const AuditEvent& e, const std::string& region) {
  std::string_view action = e.action;
  std::string_view verb = Verb(action);
  int class_uid = kApiActivity;
  int activity = 0;
  if (StartsWith(action, "job.")) {
    class_uid = kScheduledJobActivity;
    activity = verb == "submit" ? 1 : verb == "cancel" ? 3 : (verb == "launch" || verb == "dispatch") ? 6 : 2;
  } else if (StartsWith(action, "scim.user.") || action == "identity.deprovision") {
    class_uid = kAccountChange;
    activity = verb == "create"       ? kAccountCreate
               : verb == "delete"     ? kAccountDelete
               : verb == "reactivate" ? kAccountEnable
               : (verb == "deactivate" || verb == "deprovision") ? kAccountDisable
                                                                  : kOther;
  } else if (StartsWith(action, "scim.group.")) {
    class_uid = kGroupManagement;
    bool added = e.details.Contains("members_added"), removed = e.details.Contains("members_removed");
    activity = verb == "create"   ? kGroupCreate
               : verb == "delete" ? kGroupDelete
               : added && !removed ? kGroupAddUser
               : removed && !added ? kGroupRemoveUser
                                   : kOther;
  } else {
    activity = ApiActivity(verb);
  }
  int severity = StartsWith(action, "breakglass.")                                        ? kSeverityMedium
                 : (action == "identity.deprovision" || EndsWith(action, "account.remove")) ? kSeverityLow
                                                                                            : kSeverityInformational;
  json ev = {{"class_uid", class_uid},
             {"category_uid", class_uid / 1000},
             {"activity_id", activity},
             {"type_uid", class_uid * 100 + activity},
             {"severity_id", severity},
             {"status_id", kStatusSuccess},
             {"time", ToUnixMicros(e.time) / 1000},
             {"message", e.action + " " + e.resource},
             {"metadata",
              {{"product", {{"name", "Causeway"}, {"vendor_name", "Causeway"}}},
               {"version", kSchemaVersion},
               {"uid", "causeway:" + std::to_string(e.seq)},
               {"log_name", "causeway-audit"}}},
             {"actor", Actor(e.actor)},
             {"resources", json::array({{{"uid", e.resource}, {"type", e.resource.substr(0, e.resource.find('/'))}}})},
             {"raw_data", CanonicalJson(e)}};
  std::string provider = e.details.String("provider");
  ev["cloud"] = {{"provider", provider.empty() ? "causeway" : provider}};
  if (!region.empty()) ev["cloud"]["region"] = region;
  std::string target = e.resource.substr(e.resource.find('/') + 1);
  if (class_uid == kScheduledJobActivity) {
    ev["job"] = {{"name", target}, {"file", {{"name", target + ".yaml"}, {"type_id", 1}}}};
  } else if (class_uid == kAccountChange) {
    std::string name = e.details.String("userName", e.details.String("user"));
    ev["user"] = {{"uid", target}, {"type_id", 1}};
    if (!name.empty()) ev["user"]["name"] = name;
  } else if (class_uid == kGroupManagement) {
    std::string name = e.details.String("displayName");
    ev["group"] = {{"uid", target}};
    if (!name.empty()) ev["group"]["name"] = name;
  } else {
    ev["src_endpoint"] = {{"svc_name", "causeway-api"}};
  }
  // Every class may carry the API call; searches match on its operation.
  ev["api"] = {{"operation", e.action}, {"service", {{"name", "causeway"}}}};
  if (!e.details.empty()) ev["unmapped"] = e.details;
  return ev;
}

Status Validate(const json& ev) {
  if (!ev.is_object()) return InvalidArgument("an OCSF event is a JSON object");
  const json* cls = Find(ev, "class_uid");
  if (!cls || !cls->is_number_integer()) return InvalidArgument("OCSF: class_uid is required");
  int class_uid = cls->get<int>();
  static const std::set<int> known = {kScheduledJobActivity, kAccountChange, kAuthentication,
                                      kUserAccess,           kGroupManagement, kApiActivity};
  if (!known.count(class_uid)) return Missing("is not one Causeway produces", class_uid);
  const json* category = Find(ev, "category_uid");
  if (!category || !category->is_number_integer() || category->get<int>() != class_uid / 1000) {
    return Missing("category_uid must be " + std::to_string(class_uid / 1000), class_uid);
  }
  const json* activity = Find(ev, "activity_id");
  if (!activity || !activity->is_number_integer()) return Missing("activity_id is required", class_uid);
  int a = activity->get<int>();
  int max_activity = class_uid == kScheduledJobActivity ? 6
                     : class_uid == kAccountChange       ? 11
                     : class_uid == kAuthentication      ? 5
                     : class_uid == kUserAccess          ? 2
                     : class_uid == kGroupManagement     ? 6
                                                         : 4;
  if (a != 99 && (a < 0 || a > max_activity)) {
    return Missing("activity_id " + std::to_string(a) + " is not in the class's enum", class_uid);
  }
  const json* type = Find(ev, "type_uid");
  if (!type || !type->is_number_integer() || type->get<int64_t>() != int64_t{class_uid} * 100 + a) {
    return Missing("type_uid must be class_uid * 100 + activity_id", class_uid);
  }
  const json* severity = Find(ev, "severity_id");
  if (!severity || !severity->is_number_integer() ||
      !(severity->get<int>() == 99 || (severity->get<int>() >= 0 && severity->get<int>() <= 6))) {
    return Missing("severity_id must be 0-6 or 99", class_uid);
  }
  if (const json* status = Find(ev, "status_id");
      status && !(status->is_number_integer() && (status->get<int>() == 99 || (status->get<int>() >= 0 && status->get<int>() <= 2)))) {
    return Missing("status_id must be 0, 1, 2 or 99", class_uid);
  }
  const json* time = Find(ev, "time");
  if (!time || !time->is_number_integer() || time->get<int64_t>() <= 0) {
    return Missing("time (milliseconds since the epoch) is required", class_uid);
  }
  const json* metadata = Find(ev, "metadata");
  const json* product = metadata ? Find(*metadata, "product") : nullptr;
  if (!NonEmptyObject(product)) return Missing("metadata.product is required", class_uid);
  const json* version = metadata ? Find(*metadata, "version") : nullptr;
  if (!version || !version->is_string()) return Missing("metadata.version is required", class_uid);
  if (const json* cloud = Find(ev, "cloud"); cloud) {
    const json* provider = Find(*cloud, "provider");
    if (!provider || !provider->is_string() || provider->get<std::string>().empty()) {
      return Missing("cloud.provider is required with cloud", class_uid);
    }
  }
  switch (class_uid) {
    case kApiActivity: {
      if (!NonEmptyObject(Find(ev, "actor"))) return Missing("actor is required", class_uid);
      const json* api = Find(ev, "api");
      const json* op = api ? Find(*api, "operation") : nullptr;
      if (!op || !op->is_string() || op->get<std::string>().empty()) return Missing("api.operation is required", class_uid);
      if (!NonEmptyObject(Find(ev, "src_endpoint"))) return Missing("src_endpoint is required", class_uid);
      break;
    }
    case kAuthentication:
      if (!NonEmptyObject(Find(ev, "user"))) return Missing("user is required", class_uid);
      if (!NonEmptyObject(Find(ev, "service")) && !NonEmptyObject(Find(ev, "dst_endpoint"))) {
        return Missing("service or dst_endpoint is required", class_uid);
      }
      break;
    case kAccountChange:
      if (!NonEmptyObject(Find(ev, "user"))) return Missing("user is required", class_uid);
      break;
    case kUserAccess:
      if (!NonEmptyObject(Find(ev, "user"))) return Missing("user is required", class_uid);
      if (const json* p = Find(ev, "privileges"); !p || !p->is_array() || p->empty()) {
        return Missing("privileges is required", class_uid);
      }
      break;
    case kGroupManagement:
      if (!NonEmptyObject(Find(ev, "group"))) return Missing("group is required", class_uid);
      break;
    case kScheduledJobActivity: {
      const json* job = Find(ev, "job");
      const json* name = job ? Find(*job, "name") : nullptr;
      if (!name || !name->is_string() || name->get<std::string>().empty()) return Missing("job.name is required", class_uid);
      break;
    }
    default:
      break;
  }
  return Status::Ok();
}

}  // namespace causeway::audit::ocsf
