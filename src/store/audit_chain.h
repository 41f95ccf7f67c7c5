// The audit hash chain. Each event's hash is the SHA-256 of its canonical JSON,
// which includes the previous event's hash, so editing, deleting, reordering
// or inserting any event breaks every link after it.
//
// Canonical JSON: an object with the keys seq, time (Unix microseconds),
// actor, action, resource, details and prev_hash, keys sorted, no whitespace,
// UTF-8 (invalid sequences replaced), integers only.
#pragma once

#include <cstdint>
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
};

}  // namespace causeway::audit
