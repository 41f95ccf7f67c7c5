#include "service/token_service.h"

#include "causeway/input.h"
#include "identity/oidc.h"

namespace causeway {
namespace {

WriteFn InsertWithAudit(const TokenRecord& record, const std::string& actor) {
  return [record, actor](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.InsertToken(record));
    AuditEvent event;
    event.time = record.created_at;
    event.actor = actor;
    event.action = "token.create";
    event.resource = "token/" + record.id;
    // Never the secret, nor its hash.
    event.details = {{"name", record.name}, {"scopes", record.scopes}};
    if (!record.user.empty()) event.details["user"] = record.user;
    if (!record.creator.empty()) event.details["creator"] = record.creator;
    if (!record.grant.empty()) event.details["breakglass"] = record.grant;
    if (record.expires_at) event.details["expires_at"] = FormatRfc3339(*record.expires_at);
    return tx.AppendAudit(event);
  };
}

}  // namespace

// The event of revoking `token`; `details` adds to its name.
AuditEvent RevokeEvent(const TokenRecord& token, const std::string& actor, Timestamp now, Details details) {
  AuditEvent event;
  event.time = now;
  event.actor = actor;
  event.action = "token.revoke";
  event.resource = "token/" + token.id;
  event.details = {{"name", token.name}};
  event.details.Merge(details);
  return event;
}


Result<identity::MintedToken> TokenService::Create(const identity::Principal& who, std::string name,
                                                   std::vector<std::string> scopes, Micros ttl, std::string user) {
  if (name.empty() || name.size() > 128) return InvalidArgument("a token needs a name of 1 to 128 characters");
  RETURN_IF_ERROR(CheckName(name, "name", 128));
  if (!user.empty()) RETURN_IF_ERROR(CheckName(user, "user"));
  if (ttl.count() < 0) return InvalidArgument("a token's lifetime cannot be negative");
  RETURN_IF_ERROR(identity::ValidateScopes(scopes));
  Timestamp now = clock_.Now();
  std::optional<Timestamp> expires;
  if (ttl.count() > 0) expires = now + ttl;
  if (user.size() > 256) return InvalidArgument("field \"user\" is longer than 256 characters");
  auto minted = identity::MintToken(std::move(name), std::move(scopes), who.token_id, now, expires);
  minted.record.user = std::move(user);
  minted.record.creator = who.Answerable();
  minted.record.grant = who.grant;
  // Made under a grant: it cannot outlive it (it is refused once the grant
  // ends anyway; the expiry says so plainly).
  if (!who.grant.empty() && !minted.record.expires_at) minted.record.expires_at = now + std::chrono::hours(24);
  RETURN_IF_ERROR(queue_.Run(InsertWithAudit(minted.record, who.token_id)));
  return minted;
}

Result<TokenRecord> TokenService::Revoke(const identity::Principal& who, const std::string& token_id) {
  Timestamp now = clock_.Now();
  TokenRecord out;
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto found, tx.GetToken(token_id));
    if (!found) return NotFound("token " + token_id + " not found");
    if (found->revoked_at) return FailedPrecondition("token " + token_id + " is already revoked");
    RETURN_IF_ERROR(tx.RevokeToken(token_id, now));
    AuditEvent event = RevokeEvent(*found, who.token_id, now);
    RETURN_IF_ERROR(tx.AppendAudit(event));
    out = std::move(*found);
    out.revoked_at = now;
    return Status::Ok();
  }));
  return out;
}

Result<identity::MintedToken> TokenService::Rotate(const identity::Principal& who, const std::string& token_id) {
  Timestamp now = clock_.Now();
  identity::MintedToken next;
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto found, tx.GetToken(token_id));
    if (!found) return NotFound("token " + token_id + " not found");
    if (found->revoked_at) return FailedPrecondition("token " + token_id + " is revoked: create a new one");
    if (token_id.rfind("tokj_", 0) == 0) return FailedPrecondition("a job attempt's credential is not rotated");
    std::optional<Timestamp> expires;
    if (found->expires_at) expires = now + (*found->expires_at - found->created_at);
    next = identity::MintToken(found->name, found->scopes, who.token_id, now, expires);
    next.record.user = found->user;
    next.record.creator = found->creator;
    next.record.grant = found->grant;
    RETURN_IF_ERROR(tx.RevokeToken(token_id, now));
    AuditEvent revoked = RevokeEvent(*found, who.token_id, now, {{"rotated_to", next.record.id}});
    RETURN_IF_ERROR(tx.AppendAudit(revoked));
    return InsertWithAudit(next.record, who.token_id)(tx);
  }));
  return next;
}

Result<TokenRecord> TokenService::Reassign(const identity::Principal& who, const std::string& token_id,
                                           const std::string& to) {
  if (!who.grant.empty()) return PermissionDenied("tokens are reassigned by an admin acting through their own groups");
  RETURN_IF_ERROR(CheckName(to, "to"));
  ASSIGN_OR_RETURN(auto person, identity::ReadPerson(store_, to));
  if (!person || !person->user.active) return InvalidArgument("field \"to\": no active user \"" + to + "\" in the directory");
  Timestamp now = clock_.Now();
  TokenRecord out;
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto found, tx.GetToken(token_id));
    if (!found) return NotFound("token " + token_id + " not found");
    if (found->revoked_at) return FailedPrecondition("token " + token_id + " is revoked");
    if (!found->grant.empty()) return FailedPrecondition("token " + token_id + " was made under break-glass: it ends with its grant");
    if (!found->user.empty()) return FailedPrecondition("token " + token_id + " acts for " + found->user + ": it is theirs, not reassigned");
    RETURN_IF_ERROR(tx.SetTokenCreator(token_id, person->user.name));
    AuditEvent event;
    event.time = now;
    event.actor = who.token_id;
    event.action = "token.reassign";
    event.resource = "token/" + token_id;
    event.details = {{"name", found->name}, {"from", found->creator}, {"to", person->user.name}};
    RETURN_IF_ERROR(tx.AppendAudit(event));
    out = std::move(*found);
    out.creator = person->user.name;
    return Status::Ok();
  }));
  return out;
}

Result<std::optional<identity::MintedToken>> TokenService::Bootstrap(
    const std::function<Status(const std::string& secret)>& persist) {
  ASSIGN_OR_RETURN(auto tokens, store_.ListTokens());
  if (!tokens.empty()) return std::optional<identity::MintedToken>();
  auto minted = identity::MintToken("bootstrap-admin", {std::string(identity::kScopeAdmin)}, "system",
                                    clock_.Now(), std::nullopt);
  RETURN_IF_ERROR(persist(minted.secret));
  RETURN_IF_ERROR(queue_.Run(InsertWithAudit(minted.record, "system")));
  return std::optional<identity::MintedToken>(std::move(minted));
}

}  // namespace causeway
