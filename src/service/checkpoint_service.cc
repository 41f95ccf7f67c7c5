#include "service/checkpoint_service.h"

#include <deque>

#include "causeway/crypto.h"
#include "causeway/job_spec.h"

namespace causeway {

using nlohmann::json;
namespace jwt = identity::jwt;

namespace {

// Hashes of the most recent events kept while verifying: a checkpoint signs
// a head read just before it was appended, a few events back at most.
constexpr size_t kRecentHashes = 65536;

bool IsAuditKey(const SigningKeyRecord& k) { return k.kid.rfind(kAuditKeyPrefix, 0) == 0; }

Result<std::vector<jwt::SigningKey>> AuditKeys(const Store& store) {
  ASSIGN_OR_RETURN(auto records, store.ListSigningKeys());
  std::vector<jwt::SigningKey> keys;
  for (const SigningKeyRecord& r : records) {
    if (!IsAuditKey(r)) continue;
    ASSIGN_OR_RETURN(jwt::SigningKey key, jwt::SigningKey::FromPem(r.private_pem, jwt::Alg::kES256, r.kid));
    keys.push_back(std::move(key));
  }
  return keys;
}

}  // namespace

Result<std::optional<AuditEvent>> CheckpointService::Checkpoint(const std::string& actor) {
  ASSIGN_OR_RETURN(audit::ChainHead head, store_.GetAuditHead());
  if (head.seq == 0) return std::optional<AuditEvent>();
  ASSIGN_OR_RETURN(auto newest, store_.ListAudit(AuditFilter{.after_seq = head.seq - 1, .limit = 1}));
  if (!newest.empty() && newest.front().action == "audit.checkpoint") return std::optional<AuditEvent>();
  ASSIGN_OR_RETURN(auto keys, AuditKeys(store_));
  Timestamp now = clock_.Now();
  std::optional<SigningKeyRecord> fresh;
  if (keys.empty()) {
    std::string kid = std::string(kAuditKeyPrefix) + Sha256Hex(RandomBytes(16)).substr(0, 16);
    ASSIGN_OR_RETURN(jwt::SigningKey key, jwt::SigningKey::Generate(jwt::Alg::kES256, kid));
    fresh = SigningKeyRecord{kid, "ES256", key.Pem(), now, std::nullopt};
    keys.push_back(std::move(key));
  }
  const jwt::SigningKey& key = keys.back();  // the newest
  json claims = {{"iss", kCheckpointIssuer},
                 {"seq", head.seq},
                 {"hash", head.hash},
                 {"iat", ToUnixMicros(now) / 1'000'000}};
  ASSIGN_OR_RETURN(std::string jws, key.Sign(claims));
  AuditEvent e;
  e.time = now;
  e.actor = actor;
  e.action = "audit.checkpoint";
  e.resource = "audit/checkpoint";
  e.details = {{"seq", head.seq}, {"hash", head.hash}, {"kid", key.kid()}, {"jws", jws}};
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    if (fresh) {
      RETURN_IF_ERROR(tx.PutSigningKey(*fresh));
      AuditEvent made;
      made.time = now;
      made.actor = actor;
      made.action = "audit.key.create";
      made.resource = "signing-key/" + fresh->kid;
      made.details = {{"kid", fresh->kid}, {"alg", "ES256"}};  // never the key
      RETURN_IF_ERROR(tx.AppendAudit(made));
    }
    AuditEvent copy = e;  // a unit may run more than once
    RETURN_IF_ERROR(tx.AppendAudit(copy));
    e.seq = copy.seq;
    e.hash = copy.hash;
    return Status::Ok();
  }));
  return std::optional<AuditEvent>(e);
}

Result<json> CheckpointService::PublicKeys() const {
  ASSIGN_OR_RETURN(auto keys, AuditKeys(store_));
  json out = json::array();
  for (const jwt::SigningKey& k : keys) out.push_back(k.PublicJwk());
  return json{{"keys", out}};
}

Result<TrailReport> VerifyTrail(const Store& store, const jwt::KeySet* given) {
  jwt::KeySet stored;
  if (!given) {
    ASSIGN_OR_RETURN(auto keys, AuditKeys(store));
    for (const jwt::SigningKey& k : keys) {
      ASSIGN_OR_RETURN(jwt::PublicKey pub, jwt::PublicKey::FromJwk(k.PublicJwk()));
      stored.Add(std::move(pub));
    }
  }
  const jwt::KeySet& keys = given ? *given : stored;
  TrailReport report;
  audit::ChainVerifier chain;
  std::deque<std::pair<int64_t, std::string>> recent;  // (seq, hash), ascending
  auto bad = [&](int64_t seq, const std::string& why) {
    if (!report.checkpoints_ok) return;
    report.checkpoints_ok = false;
    report.checkpoint_error = "checkpoint at seq " + std::to_string(seq) + ": " + why;
  };
  RETURN_IF_ERROR(store.ScanAudit([&](const AuditEvent& e) {
    if (!chain.Add(e)) return false;
    if (e.action == "audit.checkpoint") {
      std::string jws = e.details.is_object() ? e.details.value("jws", "") : "";
      auto claims = jwt::VerifySignature(jws, keys);
      if (!claims.ok()) {
        bad(e.seq, claims.status().message());
      } else if (claims->value("iss", "") != kCheckpointIssuer) {
        bad(e.seq, "not signed as a checkpoint");
      } else {
        int64_t seq = claims->value("seq", int64_t{0});
        std::string hash = claims->value("hash", "");
        auto at = std::find_if(recent.begin(), recent.end(), [&](const auto& r) { return r.first == seq; });
        if (at == recent.end()) {
          bad(e.seq, "it signs seq " + std::to_string(seq) + ", which is not among the events just before it");
        } else if (at->second != hash) {
          bad(e.seq, "the hash it signs for seq " + std::to_string(seq) + " is not the chain's");
        } else {
          ++report.checkpoints;
          report.last_signed_seq = seq;
        }
      }
    }
    recent.emplace_back(e.seq, e.hash);
    if (recent.size() > kRecentHashes) recent.pop_front();
    return true;
  }));
  ASSIGN_OR_RETURN(auto head, store.GetAuditHead());
  report.chain = chain.Finish(head);
  return report;
}

Result<jwt::KeySet> LoadAuditKeys(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return InvalidArgument(path + ": expected a JWKS or a JWK (JSON object)");
  if (doc.contains("keys")) {
    auto set = jwt::KeySet::FromJwks(doc);
    if (!set.ok()) return set.status().WithPrefix(path);
    if (set->size() == 0) return InvalidArgument(path + ": the JWKS holds no usable key");
    return set;
  }
  auto key = jwt::PublicKey::FromJwk(doc);
  if (!key.ok()) return key.status().WithPrefix(path);
  jwt::KeySet set;
  set.Add(std::move(*key));
  return set;
}

json ToJson(const TrailReport& r) {
  json j = {{"ok", r.ok()},
            {"events", r.chain.events},
            {"checkpoints", r.checkpoints},
            {"last_signed_seq", r.last_signed_seq},
            {"unsigned_events", r.chain.ok ? std::max<int64_t>(0, r.chain.events - r.last_signed_seq) : 0}};
  if (!r.chain.ok) {
    j["first_bad_seq"] = r.chain.first_bad_seq;
    j["reason"] = r.chain.reason;
  }
  if (!r.checkpoints_ok) j["checkpoint_error"] = r.checkpoint_error;
  return j;
}

}  // namespace causeway
