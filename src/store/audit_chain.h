// The audit hash chain. Each event's hash is the SHA-256 of its canonical JSON,
// which includes the previous event's hash, so editing, deleting, reordering
// or inserting any event breaks every link after it.
//
// Canonical JSON: an object with the keys seq, time (Unix microseconds),
// actor, action, resource, details and prev_hash, keys sorted, no whitespace,
// UTF-8 (invalid sequences replaced), integers only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "causeway/records.h"

namespace causeway::audit {

std::string CanonicalJson(const AuditEvent& event);
// SHA-256 hex of CanonicalJson(event); the value stored as event.hash.
std::string ComputeHash(const AuditEvent& event);
// `details` as stored: canonical JSON text.
std::string CanonicalDetails(const Details& details);
// Appends CanonicalJson of the event to `out` without parsing `details`:
// the same bytes when the stored details are canonical text.
void AppendCanonicalJson(const RawAuditEvent& event, std::string& out);

// What an import's chain event commits to (details "digest"): the SHA-256
// over each row the import stored, in the order stored, each appended here
// as length-prefixed fields (every column but the id, which a copy of the
// database may renumber). Editing or deleting a stored row changes it.
void AppendImportedRow(const ImportedAuditEvent& row, std::string& out);

struct VerifyReport {
  bool ok = true;
  int64_t events = 0;         // events checked
  int64_t first_bad_seq = 0;  // the first sequence number where the chain breaks
  std::string reason;         // what is wrong there
};

// Checks a chain event by event, in the order stored (ascending seq).
class ChainVerifier {
 public:
  // Feeds the next stored event. Returns false once the chain is broken;
  // later events are then not needed.
  bool Add(const AuditEvent& event);
  // The same for an event as stored: its hash recomputed from the columns
  // (falling back to parsing `details` when the stored text is not
  // canonical, so both read the chain alike).
  bool AddRaw(const RawAuditEvent& event);
  // On a trail others may be appending to: `before` is the head read before
  // the first event was fed, and Finish is given the head read after the
  // last. The chain must reach `before` (and hold its hash there) and not go
  // past the later head; events appended while it was read are accepted.
  // Without Begin, Finish's head must be exactly the chain's end.
  void Begin(const ChainHead& before);
  // Checks the end of the chain against the recorded head and returns the
  // verdict.
  VerifyReport Finish(const ChainHead& head);

 private:
  bool Fail(int64_t seq, std::string reason);
  // Checks that `seq` comes next and links to the previous event.
  bool Links(int64_t seq, std::string_view prev_hash);
  bool Accept(int64_t seq, bool hash_matches, std::string_view hash);

  std::string canonical_;  // AddRaw's buffer, reused

  VerifyReport report_;
  int64_t expected_seq_ = 1;
  std::string prev_hash_ = kGenesisHash;
  std::optional<ChainHead> before_;  // Begin's head
  std::string hash_at_before_;       // the chain's hash at before_->seq, once read
};

}  // namespace causeway::audit
