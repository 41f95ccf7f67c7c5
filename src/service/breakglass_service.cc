#include "service/breakglass_service.h"

#include <spdlog/spdlog.h>

#include "causeway/ids.h"
#include "identity/access.h"
#include "identity/scim/scim_schema.h"
#include "net/fetch.h"

namespace causeway {

using nlohmann::json;

namespace {
constexpr auto kReread = std::chrono::milliseconds(500);
// A request waits this long for its approver.
constexpr Micros kApprovalWindow = std::chrono::hours(1);
}  // namespace

json ToJson(const BreakglassRecord& b) {
  auto opt = [](const std::optional<Timestamp>& t) { return t ? json(FormatRfc3339(*t)) : json(); };
  return {{"id", b.id},
          {"user", b.user},
          {"role", b.role},
          {"team", b.team.empty() ? json() : json(b.team)},
          {"reason", b.reason},
          {"requested_at", FormatRfc3339(b.requested_at)},
          {"duration_s", b.duration.count() / 1'000'000},
          {"approved_by", b.approved_by.empty() ? json() : json(b.approved_by)},
          {"approved_at", opt(b.approved_at)},
          {"expires_at", opt(b.expires_at)},
          {"revoked_at", opt(b.revoked_at)}};
}

BreakglassService::BreakglassService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock)
    : store_(store), queue_(queue), estate_(estate), clock_(clock) {}

Status BreakglassService::Announce(const std::string& event, const json& details) const {
  const std::string& url = estate_.identity.breakglass.webhook;
  if (url.empty()) return Status::Ok();
  json body = {{"event", event}, {"time", FormatRfc3339(clock_.Now())}, {"details", details}};
  auto r = net::PostJson(url, body.dump(), std::chrono::seconds(5));
  if (!r.ok()) return r.status();
  if (r->status >= 300) return Unavailable("the break-glass webhook answered HTTP " + std::to_string(r->status));
  return Status::Ok();
}

Result<BreakglassRecord> BreakglassService::Request(const identity::Principal& who, const std::string& role,
                                                    const std::string& team, const std::string& reason,
                                                    Micros duration) {
  const BreakglassConfig& config = estate_.identity.breakglass;
  if (!who.IsPerson()) return PermissionDenied("break-glass is for people; token " + who.token_id + " is not one");
  if (reason.size() < 10) return InvalidArgument("say why in --reason (at least 10 characters): it is read by auditors");
  if (std::find(config.roles.begin(), config.roles.end(), role) == config.roles.end()) {
    std::string roles;
    for (const auto& r : config.roles) roles += (roles.empty() ? "" : ", ") + r;
    return InvalidArgument("role \"" + role + "\" cannot be asked for; the estate offers " + roles);
  }
  if (!team.empty() && !estate_.FindTeam(team)) return InvalidArgument("unknown team \"" + team + "\"");
  if (duration.count() <= 0 || duration > config.max_duration) {
    return InvalidArgument("--duration must be more than zero and at most " +
                           std::to_string(config.max_duration.count() / 60'000'000) + " minutes");
  }
  Timestamp now = clock_.Now();
  BreakglassRecord b;
  b.id = NewId("bg", now);
  b.user = who.user;
  b.role = role;
  b.team = team;
  b.reason = reason;
  b.requested_at = now;
  b.duration = duration;
  if (config.approvers == 0) {
    b.approved_by = "(no approver required)";
    b.approved_at = now;
    b.expires_at = now + duration;
  }
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.PutBreakglass(b));
    AuditEvent e;
    e.time = now;
    e.actor = who.token_id;
    e.action = b.expires_at ? "breakglass.activate" : "breakglass.request";
    e.resource = "breakglass/" + b.id;
    e.details = ToJson(b);
    return tx.AppendAudit(e);
  }));
  {
    std::lock_guard<std::mutex> lock(mu_);
    read_at_ = {};
  }
  if (Status st = Announce(b.expires_at ? "breakglass.activate" : "breakglass.request", ToJson(b)); !st.ok()) {
    spdlog::warn("announcing break-glass {} failed: {}", b.id, st.message());
  }
  return b;
}

Result<BreakglassRecord> BreakglassService::Change(const std::string& id, const std::string& action,
                                                   const std::string& actor,
                                                   const std::function<Status(BreakglassRecord&)>& change) {
  Timestamp now = clock_.Now();
  BreakglassRecord out;
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto found, tx.GetBreakglass(id));
    if (!found) return NotFound("no break-glass grant " + id);
    out = *found;
    RETURN_IF_ERROR(change(out));
    RETURN_IF_ERROR(tx.PutBreakglass(out));
    AuditEvent e;
    e.time = now;
    e.actor = actor;
    e.action = action;
    e.resource = "breakglass/" + id;
    e.details = ToJson(out);
    return tx.AppendAudit(e);
  }));
  {
    std::lock_guard<std::mutex> lock(mu_);
    read_at_ = {};
  }
  if (Status st = Announce(action, ToJson(out)); !st.ok()) {
    spdlog::warn("announcing break-glass {} failed: {}", id, st.message());
  }
  return out;
}

Result<BreakglassRecord> BreakglassService::Approve(const identity::Principal& who, const std::string& id) {
  // An approver is an admin through a group, never through break-glass.
  bool admin = std::any_of(who.grants.begin(), who.grants.end(), [](const identity::Grant& g) {
    return g.role == "admin" && g.source.rfind("breakglass/", 0) != 0;
  });
  if (!who.IsPerson() || !admin) return PermissionDenied("only an admin (through a group) approves break-glass");
  Timestamp now = clock_.Now();
  return Change(id, "breakglass.approve", who.token_id, [&](BreakglassRecord& b) -> Status {
    if (identity::scim::EqualsIgnoreCase(b.user, who.user)) return PermissionDenied("nobody approves their own break-glass");
    if (b.approved_at) return FailedPrecondition("break-glass " + b.id + " is approved already");
    if (b.revoked_at) return FailedPrecondition("break-glass " + b.id + " was revoked");
    if (now > b.requested_at + kApprovalWindow) return FailedPrecondition("break-glass " + b.id + " waited too long: ask again");
    b.approved_by = who.user;
    b.approved_at = now;
    b.expires_at = now + b.duration;
    return Status::Ok();
  });
}

Result<BreakglassRecord> BreakglassService::Revoke(const identity::Principal& who, const std::string& id) {
  Timestamp now = clock_.Now();
  return Change(id, "breakglass.revoke", who.token_id, [&](BreakglassRecord& b) -> Status {
    bool own = who.IsPerson() && identity::scim::EqualsIgnoreCase(b.user, who.user);
    if (!own && !who.Has(identity::kScopeAdmin)) return PermissionDenied("only the requester or an admin revokes it");
    if (!b.revoked_at) b.revoked_at = now;
    return Status::Ok();
  });
}

Result<std::vector<BreakglassRecord>> BreakglassService::List() const {
  return store_.ListBreakglass(clock_.Now() - std::chrono::hours(24 * 90));
}

Result<std::vector<std::string>> BreakglassService::Elevate(identity::Principal& who) {
  std::vector<std::string> added;
  if (!who.IsPerson()) return added;
  Timestamp now = clock_.Now();
  std::vector<BreakglassRecord> active;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto steady = std::chrono::steady_clock::now();
    if (steady - read_at_ >= kReread) {
      // Anything active now was requested within the longest duration plus
      // the approval window.
      ASSIGN_OR_RETURN(active_, store_.ListBreakglass(now - estate_.identity.breakglass.max_duration - kApprovalWindow));
      read_at_ = steady;
    }
    active = active_;
  }
  for (const BreakglassRecord& b : active) {
    if (!b.ActiveAt(now) || !identity::scim::EqualsIgnoreCase(b.user, who.user)) continue;
    identity::Grant g{b.role, b.team, "", "breakglass/" + b.id, identity::ScopesOfRole(b.role)};
    for (const std::string& s : g.scopes) {
      if (std::find(who.scopes.begin(), who.scopes.end(), s) == who.scopes.end()) who.scopes.push_back(s);
    }
    who.grants.push_back(std::move(g));
    added.push_back(b.id);
  }
  return added;
}

Status BreakglassService::RecordUse(const identity::Principal& who, const std::vector<std::string>& grants,
                                    const std::string& method, const std::string& path) {
  AuditEvent e;
  e.time = clock_.Now();
  e.actor = who.token_id;
  e.action = "breakglass.use";
  e.resource = "breakglass/" + grants.front();
  e.details = {{"grants", grants}, {"user", who.user}, {"method", method}, {"path", path}};
  RETURN_IF_ERROR(queue_.Run([e](WriteTx& tx) mutable -> Status { return tx.AppendAudit(e); }));
  if (Status st = Announce("breakglass.use", e.details); !st.ok()) {
    spdlog::warn("announcing a break-glass use failed: {}", st.message());
  }
  return Status::Ok();
}

}  // namespace causeway
