#include "service/scim_service.h"

#include <algorithm>
#include <map>
#include <set>

#include "causeway/ids.h"
#include "identity/scim/scim_filter.h"
#include "identity/scim/scim_patch.h"
#include "store/records_json.h"

namespace causeway {

using nlohmann::json;
using namespace identity::scim;

namespace {

bool IsUser(const ResourceType& type) { return &type == &UserType(); }

std::string ETag(int64_t version) { return "W/\"" + std::to_string(version) + "\""; }

// RFC 7232: "*" matches any version; a list of ETags matches any of them.
Status CheckIfMatch(const std::string& if_match, const DirectoryEntry& e) {
  if (if_match.empty() || if_match == "*") return Status::Ok();
  std::string want = ETag(e.version);
  size_t start = 0;
  while (start < if_match.size()) {
    size_t comma = if_match.find(',', start);
    if (comma == std::string::npos) comma = if_match.size();
    std::string tag = if_match.substr(start, comma - start);
    tag.erase(0, tag.find_first_not_of(' '));
    tag.erase(tag.find_last_not_of(' ') + 1);
    if (tag == want || "W/" + tag == want) return Status::Ok();
    start = comma + 1;
  }
  return FailedPrecondition(e.kind + " " + e.id + " has changed: its version is now " + want);
}

// A store error as SCIM reports it.
Status AsScim(Status st) {
  if (st.ok() || !ScimTypeOf(st).empty()) return st;
  if (st.code() == Code::kAlreadyExists) return Error(Code::kAlreadyExists, "uniqueness", st.message());
  return st;
}

std::string ResourceName(const ResourceType& type, const std::string& id) {
  return (IsUser(type) ? "user/" : "group/") + id;
}

// The entry's columns from its resource.
void Fill(const ResourceType& type, const json& resource, DirectoryEntry& e) {
  e.kind = type.name;
  e.name = resource.value(IsUser(type) ? "userName" : "displayName", "");
  e.external_id = resource.value("externalId", "");
  auto active = resource.find("active");
  e.active = !IsUser(type) || active == resource.end() || !active->is_boolean() || active->get<bool>();
  e.resource = ResourceText(resource);
}

// Checks every member of a group exists and records what it is; the
// reference URL is made when the group is read.
Status ResolveMembers(WriteTx& tx, json& resource, const std::string& group_id) {
  auto members = resource.find("members");
  if (members == resource.end()) return Status::Ok();
  json resolved = json::array();
  std::set<std::string> seen;
  for (json m : *members) {
    auto value = m.find("value");
    if (value == m.end() || !value->is_string() || value->get<std::string>().empty()) {
      return Error(Code::kInvalidArgument, "invalidValue", "each member needs a \"value\": the id of a User or Group");
    }
    std::string id = value->get<std::string>();
    if (id == group_id) return Error(Code::kInvalidArgument, "invalidValue", "a group cannot be a member of itself");
    if (!seen.insert(id).second) continue;
    std::optional<DirectoryEntry> found;
    for (const char* kind : {"User", "Group"}) {
      if (found) break;
      ASSIGN_OR_RETURN(found, tx.GetDirectoryEntry(kind, id));
    }
    if (!found) {
      return Error(Code::kInvalidArgument, "invalidValue", "member \"" + id + "\" is not a known User or Group");
    }
    m.erase("$ref");
    m["type"] = found->kind;
    if (!m.contains("display")) m["display"] = found->name;
    resolved.push_back(std::move(m));
  }
  resource["members"] = std::move(resolved);
  return Status::Ok();
}

std::set<std::string> MemberIds(const DirectoryEntry& group) {
  std::vector<std::string> ids = GroupMemberIds(group);
  return std::set<std::string>(ids.begin(), ids.end());
}

// The groups that hold each member, each group's resource read once.
using MemberOf = std::map<std::string, std::vector<const DirectoryEntry*>>;

MemberOf GroupsByMember(const std::vector<DirectoryEntry>& groups) {
  MemberOf out;
  for (const DirectoryEntry& g : groups) {
    for (const std::string& id : MemberIds(g)) out[id].push_back(&g);
  }
  return out;
}

// What a change did, for the audit trail: names and ids, never values
// beyond the account's own name and state.
AuditEvent ChangeEvent(const ResourceType& type, const DirectoryEntry* before, const DirectoryEntry* after,
                       const std::string& actor, Timestamp now) {
  const DirectoryEntry& e = after ? *after : *before;
  AuditEvent event;
  event.time = now;
  event.actor = actor;
  event.resource = ResourceName(type, e.id);
  std::string prefix = IsUser(type) ? "scim.user." : "scim.group.";
  event.details = {{IsUser(type) ? "userName" : "displayName", e.name}, {"externalId", e.external_id}};
  if (!before) {
    event.action = prefix + "create";
  } else if (!after) {
    event.action = prefix + "delete";
  } else if (IsUser(type) && before->active != after->active) {
    event.action = prefix + (after->active ? "reactivate" : "deactivate");
  } else {
    event.action = prefix + "update";
  }
  if (IsUser(type)) {
    event.details["active"] = e.active;
  } else {
    std::set<std::string> was = before ? MemberIds(*before) : std::set<std::string>{};
    std::set<std::string> now_in = after ? MemberIds(*after) : std::set<std::string>{};
    std::vector<std::string> added, removed;
    for (const auto& id : now_in) {
      if (!was.count(id)) added.push_back(id);
    }
    for (const auto& id : was) {
      if (!now_in.count(id)) removed.push_back(id);
    }
    if (!added.empty()) event.details["members_added"] = added;
    if (!removed.empty()) event.details["members_removed"] = removed;
  }
  if (before && after) {
    const json was = ResourceJson(*before), now_is = ResourceJson(*after);
    std::vector<std::string> changed;
    std::set<std::string> keys;
    for (auto it = was.begin(); it != was.end(); ++it) keys.insert(it.key());
    for (auto it = now_is.begin(); it != now_is.end(); ++it) keys.insert(it.key());
    for (const auto& k : keys) {
      if (was.value(k, json()) != now_is.value(k, json())) changed.push_back(k);
    }
    event.details["changed"] = changed;
  }
  return event;
}

// Pointers to `groups`, each of them.
std::vector<const DirectoryEntry*> AllOf(const std::vector<DirectoryEntry>& groups) {
  std::vector<const DirectoryEntry*> out;
  for (const DirectoryEntry& g : groups) out.push_back(&g);
  return out;
}

// The resource as a client reads it. `groups`: for a user, the groups that
// hold it (its memberships).
json Render(const ResourceType& type, const DirectoryEntry& e, const std::string& base,
            const std::vector<const DirectoryEntry*>& groups) {
  json r = ResourceJson(e);
  r["id"] = e.id;
  json schemas = json::array({type.core->id});
  if (type.extension && r.contains(type.extension->id)) schemas.push_back(type.extension->id);
  r["schemas"] = schemas;
  if (IsUser(type)) {
    r["active"] = e.active;
    json member_of = json::array();
    for (const DirectoryEntry* g : groups) {
      member_of.push_back(
          {{"value", g->id}, {"display", g->name}, {"$ref", base + "/Groups/" + g->id}, {"type", "direct"}});
    }
    if (!member_of.empty()) r["groups"] = member_of;
  } else if (r.contains("members")) {
    for (json& m : r["members"]) {
      m["$ref"] = base + (m.value("type", "User") == "Group" ? "/Groups/" : "/Users/") + m.value("value", "");
    }
  }
  r["meta"] = {{"resourceType", type.name},
               {"created", FormatRfc3339(e.created_at)},
               {"lastModified", FormatRfc3339(e.updated_at)},
               {"location", base + type.endpoint + "/" + e.id},
               {"version", ETag(e.version)}};
  return r;
}

Status NotFoundIn(const ResourceType& type, const std::string& id) {
  return Error(Code::kNotFound, "", type.name + " " + id + " not found");
}

}  // namespace

Result<json> ScimService::Create(const Type& type, const json& body, const ScimCaller& caller) {
  ASSIGN_OR_RETURN(json resource, Normalize(type, body));
  RETURN_IF_ERROR(CheckRequired(type, resource));
  Timestamp now = clock_.Now();
  DirectoryEntry entry;
  entry.id = NewId(IsUser(type) ? "usr" : "grp", now);
  entry.created_at = entry.updated_at = now;
  DirectoryEntry stored;
  Status st = queue_.Run([&](WriteTx& tx) -> Status {
    stored = entry;
    json r = resource;
    if (!IsUser(type)) RETURN_IF_ERROR(ResolveMembers(tx, r, stored.id));
    Fill(type, r, stored);
    RETURN_IF_ERROR(AsScim(tx.PutDirectoryEntry(stored)));
    AuditEvent event = ChangeEvent(type, nullptr, &stored, caller.actor, now);
    return tx.AppendAudit(event);
  });
  RETURN_IF_ERROR(AsScim(st));
  if (caller.notify) {
    Changed(IsUser(type) ? std::vector<std::string>{stored.name} : NamesOf(MemberIds(stored)), caller.actor);
  }
  return Render(type, stored, caller.base, {});  // a new user belongs to no group yet
}

Result<json> ScimService::Get(const Type& type, const std::string& id, const std::string& base,
                              const ScimListQuery& projection) {
  ASSIGN_OR_RETURN(auto found, store_.FindDirectoryEntry(type.name, id));
  if (!found) return NotFoundIn(type, id);
  std::vector<DirectoryEntry> groups;  // those holding the user
  if (IsUser(type)) {
    ASSIGN_OR_RETURN(groups, store_.ListGroupsOf(id));
  }
  return Project(type, Render(type, *found, base, AllOf(groups)), projection.attributes, projection.excluded_attributes);
}

Result<json> ScimService::Update(const Type& type, const std::string& id, const std::string& if_match,
                                 const ScimCaller& caller, const Change& change) {
  Timestamp now = clock_.Now();
  DirectoryEntry stored, before;
  Status st = queue_.Run([&](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto found, tx.GetDirectoryEntry(type.name, id));
    if (!found) return NotFoundIn(type, id);
    before = *found;
    RETURN_IF_ERROR(CheckIfMatch(if_match, *found));
    ASSIGN_OR_RETURN(json next, change(ResourceJson(*found)));
    RETURN_IF_ERROR(CheckRequired(type, next));
    if (!IsUser(type)) RETURN_IF_ERROR(ResolveMembers(tx, next, id));
    stored = *found;
    Fill(type, next, stored);
    if (stored.resource == found->resource && stored.active == found->active) return Status::Ok();  // nothing changed
    stored.version = found->version + 1;
    stored.updated_at = now;
    RETURN_IF_ERROR(AsScim(tx.PutDirectoryEntry(stored)));
    AuditEvent event = ChangeEvent(type, &*found, &stored, caller.actor, now);
    return tx.AppendAudit(event);
  });
  RETURN_IF_ERROR(AsScim(st));
  if (caller.notify && stored.version != before.version) {
    if (IsUser(type)) {
      std::vector<std::string> users = {stored.name};
      if (before.name != stored.name) users.push_back(before.name);
      Changed(users, caller.actor);
    } else {
      // Those who joined or left.
      std::set<std::string> was = MemberIds(before), now_in = MemberIds(stored), moved;
      for (const auto& m : was) {
        if (!now_in.count(m)) moved.insert(m);
      }
      for (const auto& m : now_in) {
        if (!was.count(m)) moved.insert(m);
      }
      Changed(NamesOf(moved), caller.actor);
    }
  }
  std::vector<DirectoryEntry> groups;  // those holding the user
  if (IsUser(type)) {
    ASSIGN_OR_RETURN(groups, store_.ListGroupsOf(id));
  }
  return Render(type, stored, caller.base, AllOf(groups));
}

Result<json> ScimService::Replace(const Type& type, const std::string& id, const json& body,
                                  const std::string& if_match, const ScimCaller& caller) {
  ASSIGN_OR_RETURN(json resource, Normalize(type, body));
  if (auto given = body.find("id"); given != body.end() && given->is_string() && given->get<std::string>() != id) {
    return Error(Code::kInvalidArgument, "mutability", "\"id\" is " + given->get<std::string>() + ", not " + id +
                                                           ": a resource's id cannot change");
  }
  return Update(type, id, if_match, caller, [&](const json&) -> Result<json> { return resource; });
}

Result<json> ScimService::Patch(const Type& type, const std::string& id, const json& body, const std::string& if_match,
                                const ScimCaller& caller) {
  return Update(type, id, if_match, caller,
                [&](const json& stored) -> Result<json> { return ApplyPatch(type, stored, body); });
}

Status ScimService::Delete(const Type& type, const std::string& id, const std::string& if_match,
                           const ScimCaller& caller) {
  // The groups that hold it (as user or nested group) lose it in the same
  // unit; each is read again, locked, inside it.
  ASSIGN_OR_RETURN(auto groups, store_.ListDirectory("Group"));
  std::vector<std::string> holding;
  for (const DirectoryEntry& g : groups) {
    if (MemberIds(g).count(id)) holding.push_back(g.id);
  }
  Timestamp now = clock_.Now();
  std::vector<std::string> affected;
  if (!IsUser(type)) {
    for (const DirectoryEntry& g : groups) {
      if (g.id == id) affected = NamesOf(MemberIds(g));
    }
  }
  DirectoryEntry gone;
  Status st = AsScim(queue_.Run([&](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto found, tx.GetDirectoryEntry(type.name, id));
    if (!found) return NotFoundIn(type, id);
    gone = *found;
    RETURN_IF_ERROR(CheckIfMatch(if_match, *found));
    for (const std::string& gid : holding) {
      ASSIGN_OR_RETURN(auto group, tx.GetDirectoryEntry("Group", gid));
      if (!group) continue;
      DirectoryEntry next = *group;
      json resource = ResourceJson(*group);
      json kept = json::array();
      for (const json& m : resource.value("members", json::array())) {
        if (m.value("value", "") != id) kept.push_back(m);
      }
      if (kept.empty()) {
        resource.erase("members");
      } else {
        resource["members"] = kept;
      }
      next.resource = ResourceText(resource);
      next.version = group->version + 1;
      next.updated_at = now;
      RETURN_IF_ERROR(tx.PutDirectoryEntry(next));
      AuditEvent event = ChangeEvent(GroupType(), &*group, &next, caller.actor, now);
      RETURN_IF_ERROR(tx.AppendAudit(event));
    }
    RETURN_IF_ERROR(tx.DeleteDirectoryEntry(type.name, id));
    AuditEvent event = ChangeEvent(type, &*found, nullptr, caller.actor, now);
    return tx.AppendAudit(event);
  }));
  RETURN_IF_ERROR(st);
  if (IsUser(type)) affected = {gone.name};
  if (caller.notify) Changed(affected, caller.actor);
  return Status::Ok();
}

std::vector<std::string> ScimService::NamesOf(const std::set<std::string>& ids) const {
  std::vector<std::string> names;
  if (ids.empty()) return names;
  auto users = store_.ListDirectory("User");
  if (!users.ok()) return names;
  for (const DirectoryEntry& u : *users) {
    if (ids.count(u.id)) names.push_back(u.name);
  }
  return names;
}

void ScimService::Changed(std::vector<std::string> users, const std::string& actor) const {
  if (people_changed_ && !users.empty()) people_changed_(users, actor);
}

Result<json> ScimService::List(const Type& type, const ScimListQuery& query, const std::string& base) {
  std::optional<Filter> filter;
  if (!query.filter.empty()) {
    ASSIGN_OR_RETURN(filter, ParseFilter(type, query.filter));
  }
  // Unknown attributes in the projection are refused before any work.
  RETURN_IF_ERROR(Project(type, json::object(), query.attributes, query.excluded_attributes).status());
  ASSIGN_OR_RETURN(auto entries, store_.ListDirectory(type.name));
  std::vector<DirectoryEntry> groups;
  if (IsUser(type)) {
    ASSIGN_OR_RETURN(groups, store_.ListDirectory("Group"));
  }
  const MemberOf member_of = GroupsByMember(groups);
  std::vector<json> matched;
  for (const DirectoryEntry& e : entries) {
    auto held = member_of.find(e.id);
    json r = Render(type, e, base, held == member_of.end() ? std::vector<const DirectoryEntry*>{} : held->second);
    if (!filter || Matches(*filter, r)) matched.push_back(std::move(r));
  }
  int64_t start = std::max<int64_t>(1, query.start_index);
  int64_t count = std::clamp<int64_t>(query.count, 0, 1000);
  json page = json::array();
  for (int64_t i = start - 1; i < static_cast<int64_t>(matched.size()) && static_cast<int64_t>(page.size()) < count;
       ++i) {
    ASSIGN_OR_RETURN(json projected,
                     Project(type, std::move(matched[static_cast<size_t>(i)]), query.attributes, query.excluded_attributes));
    page.push_back(std::move(projected));
  }
  return json{{"schemas", json::array({kListResponse})},
              {"totalResults", matched.size()},
              {"startIndex", start},
              {"itemsPerPage", page.size()},
              {"Resources", page}};
}

Status ScimService::Deactivate(const std::string& user_name, const ScimCaller& caller) {
  ASSIGN_OR_RETURN(auto user, store_.FindDirectoryEntryByName("User", user_name));
  if (!user) return NotFound("no user " + user_name + " in the directory");
  const std::string id = user->id;
  const Json patch = {{"schemas", {identity::scim::kPatchOp}},
                      {"Operations", {{{"op", "replace"}, {"path", "active"}, {"value", false}}}}};
  ASSIGN_OR_RETURN(Json updated, Patch(identity::scim::UserType(), id, patch, "", caller));
  (void)updated;  // the caller asked for the change, not the resource
  return Status::Ok();
}

}  // namespace causeway
