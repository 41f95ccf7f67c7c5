#include "service/checkpoint_service.h"
#include "store/audit_chain.h"

#include <map>
#include <memory>
#include <tuple>

#include <array>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

#include "causeway/crypto.h"
#include "causeway/job_spec.h"
#include "store/records_json.h"

namespace causeway {

using nlohmann::json;
namespace jwt = identity::jwt;

namespace {

// Hashes of the most recent events kept while verifying: a checkpoint signs
// a head read just before it was appended, a few events back at most.
constexpr size_t kRecentHashes = 65536;

Result<std::vector<jwt::SigningKey>> AuditKeys(const Store& store) { return ServiceKeys(store, kAuditKeyPrefix); }

// ScanAuditRaw with `fn` on a second thread: reading rows (SQLite) and
// hashing them (fn) overlap. Rows travel in batches copied into an arena;
// `fn` returning false stops the scan.
Status ScanPipelined(const Store& store, const std::function<bool(const audit::RawAuditEvent&)>& fn) {
  struct Row {
    int64_t seq, time_us;
    std::array<uint32_t, 6> len;  // actor, action, resource, details, prev_hash, hash
  };
  struct Batch {
    std::string arena;
    std::vector<Row> rows;
  };
  constexpr size_t kRows = 4096, kInFlight = 4;
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::unique_ptr<Batch>> full, empty;
  bool done = false;
  std::atomic<bool> stop{false};
  for (size_t i = 0; i < kInFlight; ++i) empty.push_back(std::make_unique<Batch>());

  std::thread consumer([&] {
    audit::RawAuditEvent e;
    for (;;) {
      std::unique_ptr<Batch> b;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return !full.empty() || done; });
        if (full.empty()) return;
        b = std::move(full.front());
        full.pop_front();
      }
      const char* p = b->arena.data();
      for (const Row& r : b->rows) {
        std::string_view* fields[] = {&e.actor, &e.action, &e.resource, &e.details, &e.prev_hash, &e.hash};
        for (size_t f = 0; f < 6; ++f) {
          *fields[f] = std::string_view(p, r.len[f]);
          p += r.len[f];
        }
        e.seq = r.seq;
        e.time_us = r.time_us;
        if (!stop && !fn(e)) stop = true;
      }
      b->arena.clear();
      b->rows.clear();
      std::lock_guard<std::mutex> lock(mu);
      empty.push_back(std::move(b));
      cv.notify_all();
    }
  });

  std::unique_ptr<Batch> current;
  auto hand_over = [&] {
    std::unique_lock<std::mutex> lock(mu);
    if (current && !current->rows.empty()) full.push_back(std::move(current));
    cv.notify_all();
    cv.wait(lock, [&] { return !empty.empty(); });
    current = std::move(empty.front());
    empty.pop_front();
  };
  hand_over();
  Status st = store.ScanAuditRaw([&](const audit::RawAuditEvent& e) {
    if (stop) return false;
    Row r{e.seq, e.time_us, {}};
    size_t f = 0;
    for (std::string_view v : {e.actor, e.action, e.resource, e.details, e.prev_hash, e.hash}) {
      r.len[f++] = static_cast<uint32_t>(v.size());
      current->arena.append(v);
    }
    current->rows.push_back(r);
    if (current->rows.size() == kRows) hand_over();
    return true;
  });
  {
    std::lock_guard<std::mutex> lock(mu);
    if (current && !current->rows.empty()) full.push_back(std::move(current));
    done = true;
    cv.notify_all();
  }
  consumer.join();
  return st;
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
  ASSIGN_OR_RETURN(std::vector<int64_t> seqs, queue_.RunAudited([&](WriteTx& tx) -> Status {
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
    return tx.AppendAudit(copy);
  }));
  // The checkpoint is the unit's last event; its number is known only once
  // the batch has committed (where the chain is linked).
  if (seqs.empty()) return Internal("the checkpoint's commit returned no sequence number");
  e.seq = seqs.back();
  return std::optional<AuditEvent>(e);
}

Result<json> CheckpointService::PublicKeys() const {
  ASSIGN_OR_RETURN(auto keys, AuditKeys(store_));
  return Jwks(keys);
}

Result<std::vector<jwt::SigningKey>> ServiceKeys(const Store& store, std::string_view prefix) {
  ASSIGN_OR_RETURN(auto records, store.ListSigningKeys());
  std::vector<jwt::SigningKey> keys;
  for (const SigningKeyRecord& r : records) {
    if (r.kid.rfind(prefix, 0) != 0) continue;
    ASSIGN_OR_RETURN(jwt::SigningKey key, jwt::SigningKey::FromPem(r.private_pem, jwt::Alg::kES256, r.kid));
    keys.push_back(std::move(key));
  }
  return keys;
}

json Jwks(const std::vector<jwt::SigningKey>& keys) {
  json out = json::array();
  for (const jwt::SigningKey& k : keys) out.push_back(k.PublicJwk());
  return json{{"keys", out}};
}

namespace {

// What the chain's audit.import events say they stored, and the check of
// the stored rows against it. Rows are grouped by (provider, source, the
// time their import stored them): each import stores its rows at a time of
// its own. Imports recorded before digests were kept vouch for a count of
// rows of their provider and source only.
class ImportCommitments {
 public:
  void Add(int64_t seq, const Details& d) {
    Key key{d.String("provider"), d.String("source"), d.Int("imported_at")};
    if (d.Contains("digest")) {
      Expected& x = expected_[key];
      x.seqs.push_back(seq);
      x.digests.push_back(d.String("digest"));
      x.stored += d.Int("stored");
    } else {
      legacy_[{key.provider, key.source}] += d.Int("stored");
    }
  }

  // Reads every stored row once, a page at a time (one hash state per
  // import, never the rows), and fills report.imports_*.
  Status Check(const Store& store, TrailReport& report) {
    struct Seen {
      std::unique_ptr<Sha256> hash = std::make_unique<Sha256>();
      int64_t rows = 0;
    };
    std::map<Key, Seen> seen;
    std::string buffer;
    constexpr int kPage = 5000;
    for (int64_t after = 0;;) {
      ASSIGN_OR_RETURN(auto page, store.ListImportedAuditSince(after, kPage));
      for (const ImportedAuditEvent& row : page) {
        after = row.id;
        Seen& s = seen[Key{row.provider, row.source, ToUnixMicros(row.imported_at)}];
        buffer.clear();
        audit::AppendImportedRow(row, buffer);
        s.hash->Update(buffer);
        ++s.rows;
        ++report.imported_events;
      }
      if (page.size() < static_cast<size_t>(kPage)) break;
    }
    auto fail = [&report](std::string why) {
      if (!report.imports_ok) return;
      report.imports_ok = false;
      report.import_error = std::move(why);
    };
    for (auto& [key, s] : seen) {
      const std::string where = key.provider + "/" + key.source;
      auto x = expected_.find(key);
      if (x == expected_.end()) {
        int64_t& vouched = legacy_[{key.provider, key.source}];
        vouched -= s.rows;
        if (vouched < 0) fail(std::to_string(s.rows) + " imported events of " + where + " that no import recorded");
        continue;
      }
      std::string digest = s.hash->HexDigest();
      bool one = x->second.seqs.size() == 1;
      if (s.rows != x->second.stored || (one && digest != x->second.digests.front())) {
        fail("the imported events the import at seq " + std::to_string(x->second.seqs.front()) + " stored (" + where +
             ") were changed, deleted or added to: " + std::to_string(s.rows) + " found, " +
             std::to_string(x->second.stored) + " stored" + (s.rows == x->second.stored ? ", contents differ" : ""));
      }
      expected_.erase(x);
    }
    for (const auto& [key, x] : expected_) {
      if (x.stored > 0) {
        fail("the " + std::to_string(x.stored) + " imported events the import at seq " + std::to_string(x.seqs.front()) +
             " stored (" + key.provider + "/" + key.source + ") are gone");
      }
    }
    return Status::Ok();
  }

 private:
  struct Key {
    std::string provider, source;
    int64_t imported_at = 0;
    bool operator<(const Key& o) const {
      return std::tie(provider, source, imported_at) < std::tie(o.provider, o.source, o.imported_at);
    }
  };
  struct Expected {
    std::vector<int64_t> seqs;  // more than one only when two imports shared a microsecond
    std::vector<std::string> digests;
    int64_t stored = 0;
  };
  std::map<Key, Expected> expected_;
  std::map<std::pair<std::string, std::string>, int64_t> legacy_;
};

}  // namespace

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
  // A running server may append while the trail is read: the head before
  // the scan and after it bound what the scan must find.
  ASSIGN_OR_RETURN(audit::ChainHead before, store.GetAuditHead());
  chain.Begin(before);
  // (seq, hash) of the latest events, a ring: a checkpoint's signed seq is
  // looked up here.
  struct Recent {
    int64_t seq = 0;
    std::array<char, 64> hash{};
  };
  std::vector<Recent> recent(kRecentHashes);
  auto bad = [&](int64_t seq, const std::string& why) {
    if (!report.checkpoints_ok) return;
    report.checkpoints_ok = false;
    report.checkpoint_error = "checkpoint at seq " + std::to_string(seq) + ": " + why;
  };
  auto check = [&](const audit::RawAuditEvent& e) {
    std::string jws = StoredDetails(e.details).String("jws");
    auto claims = jwt::VerifySignature(jws, keys);
    if (!claims.ok()) return bad(e.seq, claims.status().message());
    if (claims->value("iss", "") != kCheckpointIssuer) return bad(e.seq, "not signed as a checkpoint");
    int64_t seq = claims->value("seq", int64_t{0});
    std::string hash = claims->value("hash", "");
    const Recent& r = recent[static_cast<size_t>(seq) % kRecentHashes];
    if (seq <= 0 || seq >= e.seq || r.seq != seq) {
      return bad(e.seq, "it signs seq " + std::to_string(seq) + ", which is not among the events just before it");
    }
    if (std::string_view(r.hash.data(), r.hash.size()) != hash) {
      return bad(e.seq, "the hash it signs for seq " + std::to_string(seq) + " is not the chain's");
    }
    ++report.checkpoints;
    report.last_signed_seq = seq;
  };
  ImportCommitments imports;
  RETURN_IF_ERROR(ScanPipelined(store, [&](const audit::RawAuditEvent& e) {
    if (!chain.AddRaw(e)) return false;
    if (e.action == "audit.checkpoint") check(e);
    if (e.action == "audit.import") imports.Add(e.seq, StoredDetails(e.details));
    Recent& slot = recent[static_cast<size_t>(e.seq) % kRecentHashes];
    slot.seq = e.seq;
    std::copy_n(e.hash.data(), std::min<size_t>(e.hash.size(), 64), slot.hash.data());
    return true;
  }));
  ASSIGN_OR_RETURN(auto head, store.GetAuditHead());
  report.chain = chain.Finish(head);
  if (report.chain.ok) RETURN_IF_ERROR(imports.Check(store, report));
  return report;
}

Result<jwt::KeySet> LoadPublicKeys(const std::string& path) {
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

}  // namespace causeway
