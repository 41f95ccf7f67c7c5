// API tokens. A token is "cw_" followed by 52 base32 characters (256 random
// bits). Only its SHA-256 is stored; the secret is shown once, at creation.
// A plain hash suffices (no slow KDF): the secret is random, not a password.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/clock.h"
#include "causeway/records.h"
#include "causeway/status.h"
#include "causeway/store.h"

namespace causeway::identity {

// What a token may do. "admin" includes every other scope.
inline constexpr std::string_view kScopeAdmin = "admin";
inline constexpr std::string_view kScopeJobsRead = "jobs:read";
inline constexpr std::string_view kScopeJobsWrite = "jobs:write";
inline constexpr std::string_view kScopeAuditRead = "audit:read";
inline constexpr std::string_view kScopeClustersRead = "clusters:read";
inline constexpr std::string_view kScopeMetricsRead = "metrics:read";
inline constexpr std::string_view kScopeCostRead = "cost:read";              // bills and showback
inline constexpr std::string_view kScopeTelemetryWrite = "telemetry:write";  // pushing GPU samples
// Provisioning users and groups through /scim/v2 (the IdP's token).
inline constexpr std::string_view kScopeScimProvision = "scim:provision";
// Declaring provider outages and other changes to the estate's state.
inline constexpr std::string_view kScopeProvidersWrite = "providers:write";
// Cancelling other people's jobs (people hold it through team-admin,
// platform or admin; a token with jobs:write may cancel any job it sees).
inline constexpr std::string_view kScopeJobsManage = "jobs:manage";
// Registering dataset versions, replicating and verifying them (reading
// the registry needs jobs:read).
inline constexpr std::string_view kScopeDatasetsWrite = "datasets:write";
inline constexpr std::string_view kAllScopes[] = {
    kScopeAdmin,       kScopeJobsRead,       kScopeJobsWrite,     kScopeJobsManage,     kScopeAuditRead,
    kScopeClustersRead, kScopeMetricsRead,   kScopeCostRead,      kScopeTelemetryWrite, kScopeScimProvision,
    kScopeProvidersWrite, kScopeDatasetsWrite};

// A role a person holds through one of their groups, for one team or all.
struct Grant {
  std::string role;   // one of kRoleNames (causeway/estate.h)
  std::string team;   // "" for every team
  std::string group;  // the IdP group it comes through
  std::string source; // the binding: "access[2]" (estate), "binding/<id>" (API) or "breakglass/<id>"
  std::vector<std::string> scopes;  // what the role confers
};

// Who is making a request: a token (a service account, a job attempt), or a
// person signed in through the identity provider.
struct Principal {
  std::string token_id;  // the actor named in the audit trail
  std::string name;
  std::vector<std::string> scopes;  // a person's: every scope of every grant

  // A person: their directory userName (or the IdP's name for them), their
  // directory id when provisioned, their groups and what those grant.
  std::string user;
  std::string user_id;
  std::vector<std::string> groups;
  std::vector<Grant> grants;

  // The break-glass grant its token was made under ("" for none): the
  // request is then a use of that grant, and whatever it creates is tied to it.
  std::string grant;
  // A service token's creator (a userName): who answers for what it makes.
  std::string creator;

  bool Has(std::string_view scope) const;
  // Whether a grant through one of the person's own groups (not a
  // break-glass grant) confers `scope` after narrowing to the token: a
  // decision that needs a role held through the directory asks this, never
  // the grant's role name, which narrowing leaves as it was.
  bool HasThroughGroup(std::string_view scope) const;
  // Whether `scope` holds for `team`: a token's scopes hold for every team;
  // a person's only through a grant for that team or for all.
  bool AllowsTeam(std::string_view scope, std::string_view team) const;
  // The teams `scope` is limited to; empty when it holds for every team
  // (ask only once Has(scope) is true).
  std::vector<std::string> TeamsFor(std::string_view scope) const;
  // Whether it is the credential of one of the job's attempts.
  bool IsJob(const std::string& job_id) const;
  bool IsPerson() const { return !user.empty(); }
  // The person answerable for what this principal creates: the person
  // themselves, or the creator of a service token; "" for neither.
  const std::string& Answerable() const { return IsPerson() ? user : creator; }
  // Who it is in words for an error message: the person's name, or
  // "token NAME (ID)".
  std::string Describe() const;
};

// A break-glass grant's own credential: "tokb_<ulid>", its grant in TokenRecord::grant. It acts as
// the requester with the granted role and nothing else.
inline constexpr std::string_view kBreakglassTokenPrefix = "tokb_";
bool IsBreakglassCredential(std::string_view token_id);

struct MintedToken {
  TokenRecord record;
  std::string secret;  // give to the user once; never store or log it
};

// Checks each scope is known; kInvalidArgument naming the accepted ones.
Status ValidateScopes(const std::vector<std::string>& scopes);

// Makes a new token record and its secret. Does not store it.
MintedToken MintToken(std::string name, std::vector<std::string> scopes, std::string created_by,
                      Timestamp now, std::optional<Timestamp> expires_at);

// A job attempt's own credential carries one scope, "job:<job id>": it may
// read that job and register and read its checkpoints, nothing else. It is
// minted when the attempt launches and revoked when the attempt ends.
std::string JobScope(const std::string& job_id);
// Its id is derived from the attempt, so it can be revoked after a restart.
std::string JobCredentialId(const std::string& job_id, int attempt);
// Expires after `lifetime` even if the attempt's end is never seen.
MintedToken MintJobCredential(const std::string& job_id, int attempt, Timestamp now, Micros lifetime);

// The SHA-256 (hex) of the token in an "Authorization: Bearer ..." value,
// as stored; kUnauthenticated if the value is missing or malformed.
Result<std::string> TokenHashOf(std::string_view authorization);
// The Principal of `found`, the token stored under `hash`; kUnauthenticated
// if there is none or it is revoked or expired at `now`. A token acting for
// a person has `user` set and no grants yet: the caller resolves them
// (identity::PersonToken), or the token is refused everything team-scoped.
Result<Principal> CheckToken(const std::optional<TokenRecord>& found, const std::string& hash, Timestamp now);

// Resolves an "Authorization" header value to a Principal. kUnauthenticated
// for a missing, malformed, unknown, expired or revoked token; the message
// never repeats the token.
Result<Principal> Authenticate(const TokenReader& store, std::string_view authorization, Timestamp now);

}  // namespace causeway::identity
