#include "identity/workload.h"

#include <algorithm>
#include <set>

#include <nlohmann/json.hpp>

#include "causeway/crypto.h"
#include "causeway/ids.h"
#include "spec/spec_json.h"

namespace causeway::identity {

using nlohmann::json;

namespace {

// Keys written by another replica (a rotation) are seen within this.
constexpr auto kReloadEvery = std::chrono::seconds(5);
// Verifiers' clocks may be behind ours.
constexpr Micros kPublishSlack = std::chrono::minutes(5);

jwt::Alg AlgOf(const std::string& name) { return name == "RS256" ? jwt::Alg::kRS256 : jwt::Alg::kES256; }

Result<SigningKeyRecord> NewKey(const std::string& alg, Timestamp now) {
  std::string kid = Sha256Hex(RandomBytes(16)).substr(0, 16);
  ASSIGN_OR_RETURN(jwt::SigningKey key, jwt::SigningKey::Generate(AlgOf(alg), kid));
  return SigningKeyRecord{kid, alg, key.Pem(), now, std::nullopt};
}

AuditEvent KeyEvent(const std::string& action, const SigningKeyRecord& k, const std::string& actor, Timestamp now) {
  AuditEvent e;
  e.time = now;
  e.actor = actor;
  e.action = action;
  e.resource = "signing-key/" + k.kid;
  e.details = {{"kid", k.kid}, {"alg", k.alg}};  // never the key
  return e;
}

}  // namespace

WorkloadIssuer::WorkloadIssuer(const TokenReader& store, WorkloadIdentityConfig config,
                               const std::vector<CloudFederation>& federations)
    : store_(store), config_(std::move(config)) {
  std::set<std::string> open;  // used by a federation every team may use
  for (const CloudFederation& f : federations) {
    if (f.audience.empty()) continue;
    if (f.teams.empty()) open.insert(f.audience);
    auto& teams = teams_by_audience_[f.audience];
    teams.insert(teams.end(), f.teams.begin(), f.teams.end());
  }
  for (const std::string& a : open) teams_by_audience_.erase(a);
}

std::vector<std::string> WorkloadIssuer::AudiencesFor(const std::string& team) const {
  std::vector<std::string> out;
  for (const std::string& a : config_.audiences) {
    auto it = teams_by_audience_.find(a);
    if (it == teams_by_audience_.end() || std::find(it->second.begin(), it->second.end(), team) != it->second.end()) {
      out.push_back(a);
    }
  }
  return out;
}

void WorkloadIssuer::SetDefaultIssuer(const std::string& url) {
  MutexLock lock(mu_);
  default_issuer_ = url;
}

std::string WorkloadIssuer::issuer() const {
  MutexLock lock(mu_);
  return config_.issuer.empty() ? default_issuer_ : config_.issuer;
}

Result<std::optional<WriteFn>> WorkloadIssuer::FirstKeyWrite(Timestamp now) {
  ASSIGN_OR_RETURN(auto keys, store_.ListSigningKeys());
  for (const SigningKeyRecord& k : keys) {
    if (IsWorkloadKey(k.kid)) return std::optional<WriteFn>();
  }
  ASSIGN_OR_RETURN(SigningKeyRecord first, NewKey(config_.alg, now));
  return std::optional<WriteFn>([first, now](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.PutSigningKey(first));
    AuditEvent e = KeyEvent("workload.key.create", first, "causeway", now);
    return tx.AppendAudit(e);
  });
}

Result<WriteFn> WorkloadIssuer::RotateWrite(Timestamp now, const std::string& actor) {
  ASSIGN_OR_RETURN(auto keys, store_.ListSigningKeys());
  ASSIGN_OR_RETURN(SigningKeyRecord next, NewKey(config_.alg, now));
  std::vector<SigningKeyRecord> retiring;
  for (SigningKeyRecord& k : keys) {
    if (k.superseded_at || !IsWorkloadKey(k.kid)) continue;
    k.superseded_at = now;
    retiring.push_back(std::move(k));
  }
  {
    MutexLock lock(mu_);
    loaded_at_ = {};  // read the new key on next use
  }
  return WriteFn([next, retiring, now, actor](WriteTx& tx) -> Status {
    for (const SigningKeyRecord& k : retiring) {
      RETURN_IF_ERROR(tx.PutSigningKey(k));
      AuditEvent e = KeyEvent("workload.key.retire", k, actor, now);
      RETURN_IF_ERROR(tx.AppendAudit(e));
    }
    RETURN_IF_ERROR(tx.PutSigningKey(next));
    AuditEvent e = KeyEvent("workload.key.create", next, actor, now);
    return tx.AppendAudit(e);
  });
}

Status WorkloadIssuer::Reload() {
  if (std::chrono::steady_clock::now() - loaded_at_ < kReloadEvery && !keys_.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(auto records, store_.ListSigningKeys());
  std::vector<Loaded> keys;
  for (SigningKeyRecord& r : records) {
    if (!IsWorkloadKey(r.kid)) continue;  // the audit chain's, the provenance's
    ASSIGN_OR_RETURN(jwt::SigningKey key, jwt::SigningKey::FromPem(r.private_pem, AlgOf(r.alg), r.kid));
    keys.push_back(Loaded{std::move(r), std::move(key)});
  }
  keys_ = std::move(keys);
  loaded_at_ = std::chrono::steady_clock::now();
  return Status::Ok();
}

json WorkloadIssuer::Discovery() const {
  std::string iss = issuer();
  return {{"issuer", iss},
          {"jwks_uri", iss + "/jwks"},
          {"response_types_supported", json::array({"id_token"})},
          {"subject_types_supported", json::array({"public"})},
          {"id_token_signing_alg_values_supported", json::array({"ES256", "RS256"})},
          {"scopes_supported", json::array({"openid"})},
          {"claims_supported",
           json::array({"iss", "sub", "aud", "exp", "iat", "nbf", "jti", "job_id", "attempt", "team", "owner",
                        "project", "cluster"})}};
}

Result<json> WorkloadIssuer::Jwks(Timestamp now) {
  MutexLock lock(mu_);
  RETURN_IF_ERROR(Reload());
  json keys = json::array();
  for (const Loaded& k : keys_) {
    // A superseded key is published while tokens it signed may still live.
    if (k.record.superseded_at && *k.record.superseded_at + config_.lifetime + kPublishSlack < now) continue;
    keys.push_back(k.key.PublicJwk());
  }
  return json{{"keys", keys}};
}

Result<WorkloadToken> WorkloadIssuer::Mint(const JobRecord& job, int attempt, const std::string& cluster,
                                           const std::string& audience, Timestamp now, std::optional<Timestamp> started) {
  WorkloadToken out;
  const std::vector<std::string> allowed = AudiencesFor(job.team);
  if (audience.empty()) {
    if (allowed.empty()) {
      return PermissionDenied("team \"" + job.team + "\" may use none of the estate's workload audiences (" +
                              "each is for federations of other teams)");
    }
    out.audiences = allowed;
  } else if (std::find(allowed.begin(), allowed.end(), audience) != allowed.end()) {
    out.audiences = {audience};
  } else if (std::find(config_.audiences.begin(), config_.audiences.end(), audience) != config_.audiences.end()) {
    return PermissionDenied("audience \"" + audience + "\" is for federations team \"" + job.team + "\" may not use");
  } else {
    return PermissionDenied("audience \"" + audience + "\" is not one the estate lets jobs have tokens for");
  }
  std::string iss = issuer();
  if (iss.empty()) return Unavailable("the workload issuer's address is not known yet (the server is starting)");
  ASSIGN_OR_RETURN(JobSpec spec, StoredSpec(job));
  auto label = spec.labels.find("project");
  const std::string project = label == spec.labels.end() ? "" : label->second;
  int64_t iat = ToUnixMicros(now) / 1'000'000;
  int64_t exp = iat + config_.lifetime.count() / 1'000'000;
  if (spec.time_limit) {
    // No longer than the attempt may run.
    const int64_t must_end = ToUnixMicros(started.value_or(now) + *spec.time_limit) / 1'000'000;
    exp = std::max(iat + 60, std::min(exp, must_end));
  }
  out.expires_at = FromUnixMicros(exp * 1'000'000);
  out.jti = NewId("wlt", now);
  json claims = {{"iss", iss},
                 {"sub", "job:" + job.id},
                 {"aud", out.audiences.size() == 1 ? json(out.audiences[0]) : json(out.audiences)},
                 {"iat", iat},
                 {"nbf", iat},
                 {"exp", ToUnixMicros(out.expires_at) / 1'000'000},
                 {"jti", out.jti},
                 {"job_id", job.id},
                 {"attempt", attempt},
                 {"team", job.team},
                 {"owner", job.owner},
                 {"cluster", cluster}};
  if (!project.empty()) claims["project"] = project;
  MutexLock lock(mu_);
  RETURN_IF_ERROR(Reload());
  const Loaded* signer = nullptr;
  for (const Loaded& k : keys_) {
    if (!k.record.superseded_at) signer = &k;  // the newest current key
  }
  if (!signer) return FailedPrecondition("there is no workload signing key yet");
  out.kid = signer->record.kid;
  ASSIGN_OR_RETURN(out.token, signer->key.Sign(claims));
  return out;
}

}  // namespace causeway::identity
