#include "service/breakglass_service.h"
#include "service/token_service.h"

#include <map>

#include <spdlog/spdlog.h>

#include "causeway/ids.h"
#include "identity/access.h"
#include "identity/scim/scim_schema.h"
#include "net/fetch.h"
#include "store/records_json.h"

namespace causeway {

using nlohmann::json;

namespace {
constexpr auto kReread = std::chrono::milliseconds(500);
// A request waits this long for its approver.
constexpr Micros kApprovalWindow = std::chrono::hours(1);

bool IsOwn(const identity::Principal& who, const BreakglassRecord& b) {
  return who.IsPerson() && identity::scim::EqualsIgnoreCase(b.user, who.user);
}
}  // namespace

Details DetailsOf(const BreakglassRecord& b) {
  auto opt = [](const std::optional<Timestamp>& t) { return t ? DetailValue(FormatRfc3339(*t)) : DetailValue(); };
  return {{"id", b.id},
          {"user", b.user},
          {"role", b.role},
          {"team", b.team.empty() ? DetailValue() : DetailValue(b.team)},
          {"reason", b.reason},
          {"requested_at", FormatRfc3339(b.requested_at)},
          {"duration_s", b.duration.count() / 1'000'000},
          {"approved_by", b.approved_by.empty() ? DetailValue() : DetailValue(b.approved_by)},
          {"approved_at", opt(b.approved_at)},
          {"expires_at", opt(b.expires_at)},
          {"revoked_at", opt(b.revoked_at)}};
}

std::string StateOf(const BreakglassRecord& b, Timestamp now) {
  if (b.revoked_at) return "revoked";
  if (b.approved_at) return b.expires_at && now >= *b.expires_at ? "expired" : "active";
  return now > b.requested_at + kApprovalWindow ? "lapsed" : "requested";
}

bool MayApprove(const identity::Principal& who, const BreakglassRecord& b, Timestamp now) {
  return StateOf(b, now) == "requested" && who.HasThroughGroup(identity::kScopeAdmin) && !IsOwn(who, b);
}

identity::Grant GrantOf(const BreakglassRecord& b) {
  return identity::Grant{b.role, b.team, "", "breakglass/" + b.id, identity::ScopesOfRole(b.role)};
}

BreakglassService::BreakglassService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
                                     std::function<void(const std::string&)> forget, net::Fetcher& http)
    : store_(store), queue_(queue), estate_(estate), clock_(clock), forget_(std::move(forget)), http_(http) {}

Status BreakglassService::Announce(const std::string& event, const Details& details) const {
  const std::string& url = estate_.identity.breakglass.webhook;
  if (url.empty()) return Status::Ok();
  json body = {{"event", event}, {"time", FormatRfc3339(clock_.Now())}, {"details", details}};
  net::OutboundRequest request;
  request.method = net::OutboundRequest::Method::kPost;
  request.url = url;
  request.body = body.dump();
  request.content_type = "application/json";
  request.timeout = std::chrono::seconds(5);
  auto r = http_.Send(request);
  if (!r.ok()) return r.status();
  if (r->status >= 300) return Unavailable("the break-glass webhook answered HTTP " + std::to_string(r->status));
  return Status::Ok();
}

void BreakglassService::Changed() {
  MutexLock lock(mu_);
  read_at_ = {};
}

identity::MintedToken BreakglassService::MintCredential(const BreakglassRecord& grant, const identity::Principal& who,
                                                        Timestamp now) const {
  identity::MintedToken t = identity::MintToken("break-glass " + grant.id + " (" + grant.role + ")",
                                                identity::ScopesOfRole(grant.role), who.token_id, now, grant.expires_at);
  t.record.id = std::string(identity::kBreakglassTokenPrefix) + t.record.id.substr(t.record.id.find('_') + 1);
  t.record.user = grant.user;
  t.record.creator = grant.user;
  t.record.grant = grant.id;
  return t;
}

Result<BreakglassService::Issued> BreakglassService::Request(const identity::Principal& who, const std::string& role,
                                                             const std::string& team, const std::string& reason,
                                                             Micros duration) {
  const BreakglassConfig& config = estate_.identity.breakglass;
  if (!config.enabled) {
    return FailedPrecondition("break-glass is off: the estate has no identity.breakglass section");
  }
  if (!who.IsPerson()) return PermissionDenied("break-glass is for people; token " + who.token_id + " is not one");
  if (!who.grant.empty()) return PermissionDenied("a break-glass grant's credential cannot ask for another grant");
  bool member = std::any_of(config.groups.begin(), config.groups.end(), [&](const std::string& g) {
    return std::any_of(who.groups.begin(), who.groups.end(),
                       [&](const std::string& mine) { return identity::scim::EqualsIgnoreCase(g, mine); });
  });
  if (!member) {
    std::string groups;
    for (const auto& g : config.groups) groups += (groups.empty() ? "" : ", ") + g;
    return PermissionDenied(who.user + " is in none of the groups that may ask for break-glass (" + groups + ")");
  }
  if (reason.size() < 10) return InvalidArgument("say why in --reason (at least 10 characters): it is read by auditors");
  if (reason.size() > 1000) return InvalidArgument("field \"reason\" is longer than 1000 characters");
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
  Issued out;
  BreakglassRecord& b = out.grant;
  b.id = NewId("bg", now);
  b.user = who.user;
  b.role = role;
  b.team = team;
  b.reason = reason;
  b.requested_at = now;
  b.duration = duration;
  if (config.approvers == 0) {
    b.approved_by = "(self-approved: the estate allows it)";
    b.approved_at = now;
    b.expires_at = now + duration;
    out.credential = MintCredential(b, who, now);
  }
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.PutBreakglass(b));
    AuditEvent e;
    e.time = now;
    e.actor = who.token_id;
    e.action = b.expires_at ? "breakglass.activate" : "breakglass.request";
    e.resource = "breakglass/" + b.id;
    e.details = DetailsOf(b);
    if (out.credential) e.details["credential"] = out.credential->record.id;
    RETURN_IF_ERROR(tx.AppendAudit(e));
    if (!out.credential) return Status::Ok();
    RETURN_IF_ERROR(tx.InsertToken(out.credential->record));
    AuditEvent t;
    t.time = now;
    t.actor = who.token_id;
    t.action = "token.create";
    t.resource = "token/" + out.credential->record.id;
    t.details = {{"name", out.credential->record.name}, {"scopes", out.credential->record.scopes},
                 {"user", b.user}, {"breakglass", b.id}, {"expires_at", FormatRfc3339(*b.expires_at)}};
    return tx.AppendAudit(t);
  }));
  Changed();
  if (Status st = Announce(b.expires_at ? "breakglass.activate" : "breakglass.request", DetailsOf(b)); !st.ok()) {
    spdlog::warn("announcing break-glass {} failed: {}", b.id, st.message());
  }
  return out;
}

Result<BreakglassRecord> BreakglassService::Change(const std::string& id, const std::string& action,
                                                   const std::string& actor,
                                                   const std::function<Status(BreakglassRecord&)>& change,
                                                   const std::vector<TokenRecord>& revoke) {
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
    e.details = DetailsOf(out);
    RETURN_IF_ERROR(tx.AppendAudit(e));
    for (const TokenRecord& t : revoke) {
      RETURN_IF_ERROR(tx.RevokeToken(t.id, now));
      AuditEvent r = RevokeEvent(t, actor, now, {{"breakglass", id}, {"reason", "its break-glass grant ended"}});
      RETURN_IF_ERROR(tx.AppendAudit(r));
    }
    return Status::Ok();
  }));
  if (forget_) {
    for (const TokenRecord& t : revoke) forget_(t.id);
  }
  Changed();
  if (Status st = Announce(action, DetailsOf(out)); !st.ok()) {
    spdlog::warn("announcing break-glass {} failed: {}", id, st.message());
  }
  return out;
}

Result<BreakglassRecord> BreakglassService::Approve(const identity::Principal& who, const std::string& id) {
  // An approver is an admin through a group, never through break-glass,
  // and uses a credential that carries the admin right: a token narrowed to
  // fewer scopes approves nothing (as it revokes nothing).
  if (!who.HasThroughGroup(identity::kScopeAdmin)) {
    return PermissionDenied("only an admin (through a group, with a token that carries the admin scope) approves break-glass");
  }
  Timestamp now = clock_.Now();
  return Change(id, "breakglass.approve", who.token_id, [&](BreakglassRecord& b) -> Status {
    if (IsOwn(who, b)) return PermissionDenied("nobody approves their own break-glass");
    if (b.approved_at) return FailedPrecondition("break-glass " + b.id + " is approved already");
    if (b.revoked_at) return FailedPrecondition("break-glass " + b.id + " was revoked");
    if (now > b.requested_at + kApprovalWindow) return FailedPrecondition("break-glass " + b.id + " waited too long: ask again");
    b.approved_by = who.user;
    b.approved_at = now;
    b.expires_at = now + b.duration;
    return Status::Ok();
  });
}

Result<identity::MintedToken> BreakglassService::IssueCredential(const identity::Principal& who, const std::string& id) {
  if (!who.grant.empty()) return PermissionDenied("a break-glass grant's credential cannot be used to get another");
  Timestamp now = clock_.Now();
  ASSIGN_OR_RETURN(auto tokens, store_.ListTokens());
  identity::MintedToken minted;
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto found, tx.GetBreakglass(id));
    if (!found) return NotFound("no break-glass grant " + id);
    if (!IsOwn(who, *found)) return PermissionDenied("only the requester of " + id + " receives its credential");
    if (!found->ActiveAt(now)) return FailedPrecondition("break-glass " + id + " is not active (not approved, expired or revoked)");
    for (const TokenRecord& t : tokens) {
      if (t.grant == id && identity::IsBreakglassCredential(t.id)) {
        return FailedPrecondition("the credential of " + id + " was issued already (" + t.id +
                                  "): revoke the grant and ask again if it was lost");
      }
    }
    minted = MintCredential(*found, who, now);
    RETURN_IF_ERROR(tx.InsertToken(minted.record));
    AuditEvent e;
    e.time = now;
    e.actor = who.token_id;
    e.action = "token.create";
    e.resource = "token/" + minted.record.id;
    e.details = {{"name", minted.record.name}, {"scopes", minted.record.scopes}, {"user", found->user},
                 {"breakglass", id}, {"expires_at", FormatRfc3339(*found->expires_at)}};
    return tx.AppendAudit(e);
  }));
  return minted;
}

Result<BreakglassRecord> BreakglassService::Revoke(const identity::Principal& who, const std::string& id) {
  Timestamp now = clock_.Now();
  ASSIGN_OR_RETURN(auto tokens, store_.ListTokens());
  std::vector<TokenRecord> tied;
  for (TokenRecord& t : tokens) {
    if (t.grant == id && !t.revoked_at) tied.push_back(std::move(t));
  }
  return Change(
      id, "breakglass.revoke", who.token_id,
      [&](BreakglassRecord& b) -> Status {
        bool own = IsOwn(who, b);
        bool admin = who.Has(identity::kScopeAdmin) && who.grant != b.id;
        if (!own && !admin) return PermissionDenied("only the requester or an admin revokes it");
        if (!b.revoked_at) b.revoked_at = now;
        return Status::Ok();
      },
      tied);
}

Result<std::vector<BreakglassRecord>> BreakglassService::List() const {
  return store_.ListBreakglass(clock_.Now() - std::chrono::hours(24 * 90));
}

Result<std::map<std::string, GrantArtifacts>> BreakglassService::Created(
    const std::vector<BreakglassRecord>& grants) const {
  std::map<std::string, GrantArtifacts> out;
  for (const BreakglassRecord& b : grants) out[b.id];
  ASSIGN_OR_RETURN(auto tokens, store_.ListTokens());
  for (const TokenRecord& t : tokens) {
    if (auto it = out.find(t.grant); it != out.end()) it->second.tokens.push_back(t.id);
  }
  ASSIGN_OR_RETURN(auto bindings, store_.ListDirectory("Binding"));
  for (const DirectoryEntry& d : bindings) {
    const json r = ResourceJson(d);
    if (auto it = out.find(r.value("breakglass", "")); it != out.end()) {
      it->second.bindings.push_back({d.id, r.value("group", ""), r.value("role", ""), r.value("team", ""),
                                     r.contains("confirmed_by")});
    }
  }
  ASSIGN_OR_RETURN(auto links, store_.ListDirectory("IdentityLink"));
  for (const DirectoryEntry& d : links) {
    if (auto it = out.find(ResourceJson(d).value("breakglass", "")); it != out.end()) it->second.links.push_back(d.id);
  }
  return out;
}

std::vector<CoverageFinding> BreakglassService::CoverageFindings(const std::vector<identity::Binding>& bindings) const {
  std::vector<CoverageFinding> out;
  const BreakglassConfig& c = estate_.identity.breakglass;
  if (c.enabled && c.approvers == 0) {
    out.push_back({"breakglass-self-approval", "causeway", "identity.breakglass",
                   "self_approval: true lets a requester activate their own grant without another person's approval"});
  }
  for (const identity::Binding& b : bindings) {
    if (b.confirmed) continue;
    out.push_back({"breakglass-binding-unconfirmed", "causeway", b.source,
                   "group " + b.group + " bound to " + b.role + (b.team.empty() ? "" : " of " + b.team) +
                       " under break-glass grant " + b.breakglass +
                       ": an admin must confirm it (causeway access confirm) or remove it"});
  }
  return out;
}

Result<std::optional<BreakglassRecord>> BreakglassService::Active(const std::string& id) {
  Timestamp now = clock_.Now();
  MutexLock lock(mu_);
  auto steady = std::chrono::steady_clock::now();
  if (steady - read_at_ >= kReread) {
    // Anything active now was requested within the longest duration plus
    // the approval window.
    ASSIGN_OR_RETURN(recent_, store_.ListBreakglass(now - estate_.identity.breakglass.max_duration - kApprovalWindow));
    read_at_ = steady;
  }
  for (const BreakglassRecord& b : recent_) {
    if (b.id == id && b.ActiveAt(now)) return std::optional<BreakglassRecord>(b);
  }
  return std::optional<BreakglassRecord>();
}

bool BreakglassService::IsActive(const std::string& id) {
  auto grant = Active(id);
  return grant.ok() && grant->has_value();
}

Status BreakglassService::Resolve(identity::Principal& who) {
  if (who.grant.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(auto grant, Active(who.grant));
  if (!grant) {
    return Unauthenticated("token " + who.token_id + " was made under break-glass grant " + who.grant +
                           ", which is no longer active");
  }
  if (identity::IsBreakglassCredential(who.token_id)) {
    // Exactly the granted role: not the person's other grants, and not
    // more than the role confers.
    identity::Grant g = GrantOf(*grant);
    who.scopes = g.scopes;
    who.grants = {std::move(g)};
  }
  return Status::Ok();
}

Status BreakglassService::RecordUse(const identity::Principal& who, const std::string& method, const std::string& path) {
  AuditEvent e;
  e.time = clock_.Now();
  e.actor = who.token_id;
  e.action = "breakglass.use";
  e.resource = "breakglass/" + who.grant;
  e.details = {{"grants", std::vector<std::string>{who.grant}}, {"user", who.Answerable()}, {"method", method}, {"path", path}};
  RETURN_IF_ERROR(queue_.Run([e](WriteTx& tx) mutable -> Status { return tx.AppendAudit(e); }));
  if (Status st = Announce("breakglass.use", e.details); !st.ok()) {
    spdlog::warn("announcing a break-glass use failed: {}", st.message());
  }
  return Status::Ok();
}

}  // namespace causeway
