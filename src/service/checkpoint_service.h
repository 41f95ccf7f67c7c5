// Signed checkpoints of the audit chain. Now and then the chain's head (its
// sequence number and hash) is signed with an ES256 key of the audit's own
// and the signature appended to the chain as an `audit.checkpoint` event.
// Whoever holds the public key (GET /v1/audit/keys) can then check a copy
// of the trail without trusting the database it came from: rewriting
// history means recomputing every later hash, which the signed hashes
// catch. The private key never leaves the database.
#pragma once

#include <optional>
#include <string>

#include "store/audit_chain.h"
#include "causeway/clock.h"
#include "causeway/store.h"
#include "identity/jwt.h"
#include "store/commit_queue.h"

namespace causeway {

// The `iss` of a checkpoint's claims.
inline constexpr std::string_view kCheckpointIssuer = "causeway-audit";

class CheckpointService {
 public:
  CheckpointService(Store& store, CommitQueue& queue, const Clock& clock) : store_(store), queue_(queue), clock_(clock) {}

  // Signs the head, making the audit key on first use. Returns the
  // checkpoint event, or nullopt when nothing but a checkpoint has been
  // appended since the last one (an idle chain is not signed again).
  Result<std::optional<AuditEvent>> Checkpoint(const std::string& actor);

  // The public keys checkpoints are signed with, as a JWKS (RFC 7517): the
  // standard form of a published key, JSON by definition.
  Result<nlohmann::json> PublicKeys() const;

 private:
  Store& store_;
  CommitQueue& queue_;
  const Clock& clock_;
};

// What `audit verify` found: the chain, then each checkpoint in it.
struct TrailReport {
  audit::VerifyReport chain;
  int64_t checkpoints = 0;      // checkpoints whose signature and hash check out
  int64_t last_signed_seq = 0;  // the newest signed position (0: none)
  bool checkpoints_ok = true;
  std::string checkpoint_error;  // the first bad checkpoint and why
  // Imported provider events against what their imports committed to.
  int64_t imported_events = 0;   // rows checked
  bool imports_ok = true;
  std::string import_error;      // the first mismatch and why
  bool ok() const { return chain.ok && checkpoints_ok && imports_ok; }
};

// Checks the chain and every checkpoint in it against `keys`, or the
// audit keys in the store when `keys` is null, and every imported provider
// event against the digest its import's chain event holds: an imported
// event edited, deleted or added behind the imports' back is found.
Result<TrailReport> VerifyTrail(const Store& store, const identity::jwt::KeySet* keys = nullptr);

// The ES256 keys stored for one service's signatures (kid starting with
// `prefix`: kAuditKeyPrefix, kProvenanceKeyPrefix), oldest first.
Result<std::vector<identity::jwt::SigningKey>> ServiceKeys(const Store& store, std::string_view prefix);
// Their public halves as a JWKS (RFC 7517).
nlohmann::json Jwks(const std::vector<identity::jwt::SigningKey>& keys);

// The keys of a JWKS file (as GET /v1/audit/keys and GET
// /v1/provenance/keys serve them), or of a single JWK. kInvalidArgument
// naming the file.
Result<identity::jwt::KeySet> LoadPublicKeys(const std::string& path);

}  // namespace causeway
