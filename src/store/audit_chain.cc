#include "store/audit_chain.h"

#include <openssl/sha.h>

#include "causeway/crypto.h"
#include "store/records_json.h"

namespace causeway::audit {

std::string CanonicalDetails(const Details& details) {
  return nlohmann::json(details).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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

namespace {

// A JSON string as nlohmann's dump writes it: printable ASCII without
// quotes or backslashes is copied; anything else goes through nlohmann
// itself (escapes, invalid UTF-8 replaced), so the bytes always agree.
void AppendQuoted(std::string_view s, std::string& out) {
  bool plain = true;
  for (unsigned char c : s) plain &= c >= 0x20 && c < 0x7F && c != '"' && c != '\\';
  if (plain) {
    out += '"';
    out.append(s);
    out += '"';
    return;
  }
  out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void AppendInt(int64_t v, std::string& out) {
  char buf[24];
  int n = std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  out.append(buf, static_cast<size_t>(n));
}

// Whether the SHA-256 of `data` is `hex` (64 lower-case hex digits).
bool HashIs(std::string_view data, std::string_view hex) {
  static constexpr char kHex[] = "0123456789abcdef";
  unsigned char md[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), md);
  if (hex.size() != 2 * SHA256_DIGEST_LENGTH) return false;
  for (int i = 0; i < SHA256_DIGEST_LENGTH; ++i) {
    if (hex[2 * i] != kHex[md[i] >> 4] || hex[2 * i + 1] != kHex[md[i] & 15]) return false;
  }
  return true;
}

}  // namespace

void AppendCanonicalJson(const RawAuditEvent& e, std::string& out) {
  // Keys in sorted order, as nlohmann's objects keep them.
  out += "{\"action\":";
  AppendQuoted(e.action, out);
  out += ",\"actor\":";
  AppendQuoted(e.actor, out);
  out += ",\"details\":";
  out.append(e.details);
  out += ",\"prev_hash\":";
  AppendQuoted(e.prev_hash, out);
  out += ",\"resource\":";
  AppendQuoted(e.resource, out);
  out += ",\"seq\":";
  AppendInt(e.seq, out);
  out += ",\"time\":";
  AppendInt(e.time_us, out);
  out += '}';
}

bool ChainVerifier::Fail(int64_t seq, std::string reason) {
  if (report_.ok) {
    report_.ok = false;
    report_.first_bad_seq = seq;
    report_.reason = std::move(reason);
  }
  return false;
}

bool ChainVerifier::Links(int64_t seq, std::string_view prev_hash) {
  if (!report_.ok) return false;
  ++report_.events;
  if (seq != expected_seq_) {
    if (seq > expected_seq_) {
      return Fail(expected_seq_, "event " + std::to_string(expected_seq_) + " is missing (next stored is " +
                                     std::to_string(seq) + ")");
    }
    return Fail(seq, "event " + std::to_string(seq) + " is out of order (expected " + std::to_string(expected_seq_) + ")");
  }
  if (prev_hash != prev_hash_) {
    return Fail(seq, "event " + std::to_string(seq) +
                         " does not link to the event before it (an event was removed, inserted or reordered)");
  }
  return true;
}

bool ChainVerifier::Accept(int64_t seq, bool hash_matches, std::string_view hash) {
  if (!hash_matches) {
    return Fail(seq, "event " + std::to_string(seq) + " was modified: its content does not match its hash");
  }
  prev_hash_.assign(hash);
  if (before_ && seq == before_->seq) hash_at_before_.assign(hash);
  ++expected_seq_;
  return true;
}

void ChainVerifier::Begin(const ChainHead& before) { before_ = before; }

bool ChainVerifier::Add(const AuditEvent& e) {
  return Links(e.seq, e.prev_hash) && Accept(e.seq, ComputeHash(e) == e.hash, e.hash);
}

bool ChainVerifier::AddRaw(const RawAuditEvent& e) {
  if (!Links(e.seq, e.prev_hash)) return false;
  canonical_.clear();
  AppendCanonicalJson(e, canonical_);
  bool matches = HashIs(canonical_, e.hash);
  if (!matches) {
    // Details stored as other text than their canonical form: read them as
    // the parsing path does before calling the event modified.
    Result<Details> details = DetailsFromJson(nlohmann::json::parse(e.details, nullptr, false));
    if (details.ok()) {
      AuditEvent parsed{e.seq, FromUnixMicros(e.time_us), std::string(e.actor), std::string(e.action),
                        std::string(e.resource), *std::move(details), std::string(e.prev_hash), std::string(e.hash)};
      matches = ComputeHash(parsed) == e.hash;
    }
  }
  return Accept(e.seq, matches, e.hash);
}

VerifyReport ChainVerifier::Finish(const ChainHead& head) {
  if (report_.ok && before_) {
    int64_t last = expected_seq_ - 1;
    if (last < before_->seq) {
      Fail(last + 1, "events " + std::to_string(last + 1) + " to " + std::to_string(before_->seq) +
                         " are missing from the end of the chain");
    } else if (before_->seq > 0 && hash_at_before_ != before_->hash) {
      Fail(before_->seq, "event " + std::to_string(before_->seq) + " does not match the recorded head");
    } else if (last > head.seq) {
      Fail(head.seq + 1, "event " + std::to_string(head.seq + 1) + " was added after the recorded head");
    } else if (last == head.seq && head.hash != prev_hash_) {
      Fail(last, "event " + std::to_string(last) + " does not match the recorded head");
    }
    return report_;
  }
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

void AppendImportedRow(const ImportedAuditEvent& row, std::string& out) {
  auto field = [&out](std::string_view v) {
    out.append(std::to_string(v.size())).append(":").append(v).append(";");
  };
  for (std::string_view v : {std::string_view(row.provider), std::string_view(row.source), std::string_view(row.source_id)}) {
    field(v);
  }
  field(std::to_string(row.time_ms));
  field(std::to_string(row.class_uid));
  for (std::string_view v : {std::string_view(row.activity), std::string_view(row.operation), std::string_view(row.actor),
                             std::string_view(row.subject), std::string_view(row.resource)}) {
    field(v);
  }
  field(std::to_string(row.status_id));
  field(row.event);
  field(std::to_string(ToUnixMicros(row.imported_at)));
}

}  // namespace causeway::audit
