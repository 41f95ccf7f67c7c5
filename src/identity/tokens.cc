#include "identity/tokens.h"

#include <algorithm>

#include "causeway/crypto.h"
#include "causeway/ids.h"

namespace causeway::identity {
namespace {
constexpr std::string_view kTokenPrefix = "cw_";
constexpr size_t kSecretChars = 52;  // base32 of 32 bytes
}  // namespace

bool Principal::Has(std::string_view scope) const {
  return std::any_of(scopes.begin(), scopes.end(),
                     [&](const std::string& s) { return s == scope || s == kScopeAdmin; });
}

bool Principal::HasThroughGroup(std::string_view scope) const {
  if (!IsPerson() || !grant.empty()) return false;
  return std::any_of(grants.begin(), grants.end(), [&](const Grant& g) {
    return g.source.rfind("breakglass/", 0) != 0 &&
           std::any_of(g.scopes.begin(), g.scopes.end(), [&](const std::string& s) { return s == scope || s == kScopeAdmin; });
  });
}

bool Principal::AllowsTeam(std::string_view scope, std::string_view team) const {
  if (!IsPerson()) return Has(scope);
  for (const Grant& g : grants) {
    if (!g.team.empty() && g.team != team) continue;
    for (const std::string& s : g.scopes) {
      if (s == scope || s == kScopeAdmin) return true;
    }
  }
  return false;
}

std::vector<std::string> Principal::TeamsFor(std::string_view scope) const {
  if (!IsPerson()) return {};
  std::vector<std::string> teams;
  for (const Grant& g : grants) {
    bool confers = std::any_of(g.scopes.begin(), g.scopes.end(),
                               [&](const std::string& s) { return s == scope || s == kScopeAdmin; });
    if (!confers) continue;
    if (g.team.empty()) return {};
    if (std::find(teams.begin(), teams.end(), g.team) == teams.end()) teams.push_back(g.team);
  }
  return teams;
}

bool Principal::IsJob(const std::string& job_id) const {
  std::string scope = JobScope(job_id);
  return std::find(scopes.begin(), scopes.end(), scope) != scopes.end();
}

std::string Principal::Describe() const {
  if (IsPerson()) return user;
  return "token " + (name.empty() || name == token_id ? token_id : name + " (" + token_id + ")");
}

std::string JobScope(const std::string& job_id) { return "job:" + job_id; }

bool IsBreakglassCredential(std::string_view token_id) {
  return token_id.substr(0, kBreakglassTokenPrefix.size()) == kBreakglassTokenPrefix;
}

std::string JobCredentialId(const std::string& job_id, int attempt) {
  return "tokj_" + job_id + "_" + std::to_string(attempt);
}

MintedToken MintJobCredential(const std::string& job_id, int attempt, Timestamp now, Micros lifetime) {
  MintedToken t = MintToken(job_id + " attempt " + std::to_string(attempt), {JobScope(job_id)}, "scheduler", now,
                            now + lifetime);
  t.record.id = JobCredentialId(job_id, attempt);
  return t;
}

Status ValidateScopes(const std::vector<std::string>& scopes) {
  if (scopes.empty()) return InvalidArgument("a token needs at least one scope");
  for (const auto& s : scopes) {
    if (std::find(std::begin(kAllScopes), std::end(kAllScopes), s) == std::end(kAllScopes)) {
      std::string list;
      for (auto k : kAllScopes) list += (list.empty() ? "" : ", ") + std::string(k);
      return InvalidArgument("unknown scope \"" + s + "\": expected one of " + list);
    }
  }
  return Status::Ok();
}

MintedToken MintToken(std::string name, std::vector<std::string> scopes, std::string created_by,
                      Timestamp now, std::optional<Timestamp> expires_at) {
  MintedToken t;
  t.secret = std::string(kTokenPrefix) + Base32Encode(RandomBytes(32));
  t.record.id = NewId("tok", now);
  t.record.name = std::move(name);
  t.record.hash = Sha256Hex(t.secret);
  t.record.scopes = std::move(scopes);
  t.record.created_by = std::move(created_by);
  t.record.created_at = now;
  t.record.expires_at = expires_at;
  return t;
}

Result<std::string> TokenHashOf(std::string_view authorization) {
  if (authorization.empty()) {
    return Unauthenticated("missing Authorization header: expected \"Bearer <token>\"");
  }
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.size() <= kBearer.size() ||
      !std::equal(kBearer.begin(), kBearer.end(), authorization.begin(),
                  [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
    return Unauthenticated("malformed Authorization header: expected \"Bearer <token>\"");
  }
  std::string_view secret = authorization.substr(kBearer.size());
  if (secret.size() != kTokenPrefix.size() + kSecretChars || secret.substr(0, kTokenPrefix.size()) != kTokenPrefix) {
    return Unauthenticated("malformed token: expected \"cw_\" followed by 52 characters");
  }
  return Sha256Hex(secret);
}

Result<Principal> CheckToken(const std::optional<TokenRecord>& found, const std::string& hash, Timestamp now) {
  // The lookup is by hash, so timing reveals nothing about the secret; the
  // comparison below guards against a store that matched loosely.
  if (!found || !ConstantTimeEqual(found->hash, hash)) return Unauthenticated("unknown token");
  if (found->revoked_at) return Unauthenticated("token " + found->id + " has been revoked");
  if (found->expires_at && *found->expires_at <= now) {
    return Unauthenticated("token " + found->id + " expired at " + FormatRfc3339(*found->expires_at));
  }
  Principal p{found->id, found->name, found->scopes};
  p.user = found->user;  // a person's token: resolved against the directory by the caller
  p.grant = found->grant;  // a break-glass token: checked against its grant by the caller
  p.creator = found->creator;
  return p;
}

Result<Principal> Authenticate(const TokenReader& store, std::string_view authorization, Timestamp now) {
  ASSIGN_OR_RETURN(std::string hash, TokenHashOf(authorization));
  ASSIGN_OR_RETURN(auto found, store.FindTokenByHash(hash));
  return CheckToken(found, hash, now);
}

}  // namespace causeway::identity
