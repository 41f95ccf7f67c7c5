#include "service/binding_service.h"

#include <spdlog/spdlog.h>

#include "causeway/ids.h"

namespace causeway {

using nlohmann::json;

namespace {
constexpr const char* kKind = "Binding";
constexpr auto kReread = std::chrono::milliseconds(500);

AuditEvent Event(const std::string& action, const identity::Binding& b, const std::string& actor, Timestamp now) {
  AuditEvent e;
  e.time = now;
  e.actor = actor;
  e.action = action;
  e.resource = b.source;
  e.details = {{"group", b.group}, {"role", b.role}, {"team", b.team.empty() ? json() : json(b.team)}};
  return e;
}
}  // namespace

std::vector<identity::Binding> BindingService::Current() {
  std::vector<identity::Binding> out = estate_.access;
  std::lock_guard<std::mutex> lock(mu_);
  auto steady = std::chrono::steady_clock::now();
  if (steady - read_at_ >= kReread) {
    auto entries = store_.ListDirectory(kKind);
    if (entries.ok()) {
      stored_.clear();
      for (const DirectoryEntry& d : *entries) {
        stored_.push_back(identity::Binding{d.resource.value("group", ""), d.resource.value("role", ""),
                                            d.resource.value("team", ""), "binding/" + d.id});
      }
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
                                                 const std::string& team, const std::string& actor) {
  if (group.empty() || group.size() > 256) return InvalidArgument("field \"group\" must name an IdP group");
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
  d.resource = {{"group", group}, {"role", role}, {"team", team}};
  d.created_at = d.updated_at = now;
  identity::Binding b{group, role, team, "binding/" + d.id};
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    if (Status st = tx.PutDirectoryEntry(d); st.code() == Code::kAlreadyExists) {
      return AlreadyExists("group " + group + " is already bound to " + role + (team.empty() ? "" : " of " + team));
    } else if (!st.ok()) {
      return st;
    }
    AuditEvent e = Event("access.bind", b, actor, now);
    return tx.AppendAudit(e);
  }));
  std::lock_guard<std::mutex> lock(mu_);
  read_at_ = {};
  return b;
}

Result<identity::Binding> BindingService::Delete(const std::string& id, const std::string& actor) {
  Timestamp now = clock_.Now();
  identity::Binding removed;
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto found, tx.GetDirectoryEntry(kKind, id));
    if (!found) return NotFound("no API binding " + id + " (the estate's bindings are changed in its file)");
    RETURN_IF_ERROR(tx.DeleteDirectoryEntry(kKind, id));
    removed = identity::Binding{found->resource.value("group", ""), found->resource.value("role", ""),
                                found->resource.value("team", ""), "binding/" + id};
    AuditEvent e = Event("access.unbind", removed, actor, now);
    return tx.AppendAudit(e);
  }));
  std::lock_guard<std::mutex> lock(mu_);
  read_at_ = {};
  return removed;
}

}  // namespace causeway
