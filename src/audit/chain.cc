#include "audit/chain.h"

#include "causeway/crypto.h"

namespace causeway::audit {

std::string CanonicalDetails(const nlohmann::json& details) {
  return details.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string CanonicalJson(const AuditEvent& e) {
  nlohmann::json j = {
      {"seq", e.seq},         {"time", ToUnixMicros(e.time)}, {"actor", e.actor},
      {"action", e.action},   {"resource", e.resource},       {"details", e.details},
      {"prev_hash", e.prev_hash},
  };
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string ComputeHash(const AuditEvent& e) { return Sha256Hex(CanonicalJson(e)); }

bool ChainVerifier::Fail(int64_t seq, std::string reason) {
  if (report_.ok) {
    report_.ok = false;
    report_.first_bad_seq = seq;
    report_.reason = std::move(reason);
  }
  return false;
}

bool ChainVerifier::Add(const AuditEvent& e) {
  if (!report_.ok) return false;
  ++report_.events;
  if (e.seq != expected_seq_) {
    if (e.seq > expected_seq_) {
      return Fail(expected_seq_, "event " + std::to_string(expected_seq_) + " is missing (next stored is " +
                                     std::to_string(e.seq) + ")");
    }
    return Fail(e.seq, "event " + std::to_string(e.seq) + " is out of order (expected " +
                           std::to_string(expected_seq_) + ")");
  }
  if (e.prev_hash != prev_hash_) {
    return Fail(e.seq, "event " + std::to_string(e.seq) +
                           " does not link to the event before it (an event was removed, inserted or reordered)");
  }
  if (ComputeHash(e) != e.hash) {
    return Fail(e.seq, "event " + std::to_string(e.seq) + " was modified: its content does not match its hash");
  }
  prev_hash_ = e.hash;
  ++expected_seq_;
  return true;
}

VerifyReport ChainVerifier::Finish(const ChainHead& head) {
  if (report_.ok) {
    int64_t last = expected_seq_ - 1;
    if (head.seq > last) {
      Fail(last + 1, "events " + std::to_string(last + 1) + " to " + std::to_string(head.seq) +
                         " are missing from the end of the chain");
    } else if (head.seq < last) {
      Fail(head.seq + 1, "event " + std::to_string(head.seq + 1) + " was added after the recorded head");
    } else if (head.hash != prev_hash_) {
      Fail(last, "event " + std::to_string(last) + " does not match the recorded head");
    }
  }
  return report_;
}

}  // namespace causeway::audit
