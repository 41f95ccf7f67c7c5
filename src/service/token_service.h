// Creating, listing and revoking API tokens, each change audited.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/store.h"
#include "identity/tokens.h"
#include "store/commit_queue.h"

namespace causeway {

// The audit event of revoking `token` at `now` by `actor`: its name, and
// `details` added (why, for whom).
AuditEvent RevokeEvent(const TokenRecord& token, const std::string& actor, Timestamp now,
                       Details details = {});

class TokenService {
 public:
  TokenService(Store& store, CommitQueue& queue, const Clock& clock)
      : store_(store), queue_(queue), clock_(clock) {}

  // Creates a token; the secret in the result is the only copy there will be.
  // `ttl` of zero means it never expires. `user`: the person it acts for
  // (revoked when they are deprovisioned), "" for a service account. The
  // token records who answers for it (`who`'s person, or the creator of
  // `who`'s token) and the break-glass grant `who` acts under, if any: it
  // then works only while that grant is active.
  Result<identity::MintedToken> Create(const identity::Principal& who, std::string name,
                                       std::vector<std::string> scopes, Micros ttl, std::string user = "");
  Result<std::vector<TokenRecord>> List() const { return store_.ListTokens(); }
  Result<TokenRecord> Revoke(const identity::Principal& who, const std::string& token_id);
  // A new secret for the token's purpose: a new token with the same name,
  // scopes, person and lifetime, and the old one revoked, in one unit.
  Result<identity::MintedToken> Rotate(const identity::Principal& who, const std::string& token_id);
  // Makes `to` (an active person in the directory) answer for the token,
  // so that deprovisioning its creator leaves it working. Not for tokens
  // made under break-glass (they end with their grant) or acting for a person.
  Result<TokenRecord> Reassign(const identity::Principal& who, const std::string& token_id, const std::string& to);

  // On a database with no token at all, creates an admin token and returns
  // it; otherwise returns nullopt. `persist` is called with the secret before
  // the token is committed (so a crash never leaves a token nobody has); an
  // error from it aborts the bootstrap.
  Result<std::optional<identity::MintedToken>> Bootstrap(
      const std::function<Status(const std::string& secret)>& persist);

 private:
  Store& store_;
  CommitQueue& queue_;
  const Clock& clock_;
};

}  // namespace causeway
