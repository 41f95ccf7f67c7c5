#include "service/binding_service.h"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "causeway/ids.h"
#include "causeway/input.h"
#include "store/records_json.h"

namespace causeway {

using nlohmann::json;

namespace {
constexpr const char* kKind = "Binding";
constexpr auto kReread = std::chrono::milliseconds(500);

identity::Binding BindingOf(const DirectoryEntry& d) {
  const json r = ResourceJson(d);
  identity::Binding b{r.value("group", ""), r.value("role", ""), r.value("team", ""), "binding/" + d.id};
  b.breakglass = r.value("breakglass", "");
  b.confirmed = b.breakglass.empty() || r.contains("confirmed_by");
  return b;
}

AuditEvent Event(const std::string& action, const identity::Binding& b, const std::string& actor, Timestamp now) {
  AuditEvent e;
  e.time = now;
  e.actor = actor;
  e.action = action;
  e.resource = b.source;
  e.details = {{"group", b.group}, {"role", b.role}, {"team", b.team.empty() ? DetailValue() : DetailValue(b.team)}};
  return e;
}
}  // namespace

std::vector<identity::Binding> BindingService::Current() {
  std::vector<identity::Binding> out = All();
  // Checked outside mu_: whether a grant is active may read the store.
  out.erase(std::remove_if(out.begin(), out.end(),
                           [&](const identity::Binding& b) {
                             return !b.confirmed && !(grant_active_ && grant_active_(b.breakglass));
                           }),
            out.end());
  return out;
}

std::vector<identity::Binding> BindingService::All() {
  std::vector<identity::Binding> out = estate_.access;
  MutexLock lock(mu_);
  auto steady = std::chrono::steady_clock::now();
  if (steady - read_at_ >= kReread) {
    auto entries = store_.ListDirectory(kKind);
    if (entries.ok()) {
      stored_.clear();
      for (const DirectoryEntry& d : *entries) stored_.push_back(BindingOf(d));
      read_at_ = steady;
    } else {
      // Keep what was read last: better a stale binding list than none.
      spdlog::warn("reading role bindings failed: {}", entries.status().ToString());
    }
  }
  out.insert(out.end(), stored_.begin(), stored_.end());
  return out;
}

Result<identity::Binding> BindingService::Create(const std::string& group, const std::string& role,
                                                 const std::string& team, const identity::Principal& who) {
  const std::string& actor = who.token_id;
  RETURN_IF_ERROR(CheckName(group, "group"));
  if (!identity::IsRole(role)) {
    return InvalidArgument("unknown role \"" + role +
                           "\": expected admin, platform, team-admin, researcher, finance, auditor or viewer");
  }
  if (!team.empty() && !estate_.FindTeam(team)) return InvalidArgument("unknown team \"" + team + "\"");
  Timestamp now = clock_.Now();
  DirectoryEntry d;
  d.kind = kKind;
  d.id = NewId("bnd", now);
  // Unique per (group, role, team), the group ignoring case.
  d.name = group + "\n" + role + "\n" + team;
  json resource = {{"group", group}, {"role", role}, {"team", team}, {"created_by", actor}};
  if (!who.Answerable().empty()) resource["creator"] = who.Answerable();
  if (!who.grant.empty()) resource["breakglass"] = who.grant;
  d.resource = ResourceText(resource);
  d.created_at = d.updated_at = now;
  identity::Binding b = BindingOf(d);
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    if (Status st = tx.PutDirectoryEntry(d); st.code() == Code::kAlreadyExists) {
      return AlreadyExists("group " + group + " is already bound to " + role + (team.empty() ? "" : " of " + team));
    } else if (!st.ok()) {
      return st;
    }
    AuditEvent e = Event("access.bind", b, actor, now);
    if (!b.breakglass.empty()) e.details["breakglass"] = b.breakglass;
    return tx.AppendAudit(e);
  }));
  MutexLock lock(mu_);
  read_at_ = {};
  return b;
}

Result<identity::Binding> BindingService::Confirm(const std::string& id, const identity::Principal& who) {
  if (!who.grant.empty()) return PermissionDenied("a binding made under break-glass is confirmed by an admin acting through their own groups");
  Timestamp now = clock_.Now();
  identity::Binding confirmed;
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto found, tx.GetDirectoryEntry(kKind, id));
    if (!found) return NotFound("no API binding " + id);
    json resource = ResourceJson(*found);
    if (!resource.contains("breakglass")) return FailedPrecondition("binding " + id + " was not made under break-glass: nothing to confirm");
    if (resource.contains("confirmed_by")) return FailedPrecondition("binding " + id + " is confirmed already");
    if (!who.Answerable().empty() && who.Answerable() == resource.value("creator", "")) {
      return PermissionDenied("the person who made binding " + id + " under break-glass cannot confirm it");
    }
    resource["confirmed_by"] = who.Answerable().empty() ? who.token_id : who.Answerable();
    resource["confirmed_at"] = FormatRfc3339(now);
    found->resource = ResourceText(resource);
    found->updated_at = now;
    found->version += 1;
    RETURN_IF_ERROR(tx.PutDirectoryEntry(*found));
    confirmed = BindingOf(*found);
    AuditEvent e = Event("access.confirm", confirmed, who.token_id, now);
    e.details["breakglass"] = confirmed.breakglass;
    return tx.AppendAudit(e);
  }));
  MutexLock lock(mu_);
  read_at_ = {};
  return confirmed;
}

Result<identity::Binding> BindingService::Delete(const std::string& id, const std::string& actor) {
  Timestamp now = clock_.Now();
  identity::Binding removed;
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto found, tx.GetDirectoryEntry(kKind, id));
    if (!found) return NotFound("no API binding " + id + " (the estate's bindings are changed in its file)");
    RETURN_IF_ERROR(tx.DeleteDirectoryEntry(kKind, id));
    removed = BindingOf(*found);
    AuditEvent e = Event("access.unbind", removed, actor, now);
    return tx.AppendAudit(e);
  }));
  MutexLock lock(mu_);
  read_at_ = {};
  return removed;
}

}  // namespace causeway
