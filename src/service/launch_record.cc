#include "service/launch_record.h"

#include "identity/tokens.h"

namespace causeway {

Status LaunchRecord::WriteIn(WriteTx& tx, Timestamp time, const std::string& actor) const {
  RETURN_IF_ERROR(tx.RecordLaunch(held_.job_id(), held_.attempt(), held_.cluster(), time));
  AuditEvent e;
  e.time = time;
  e.actor = actor;
  e.action = "job.launch";
  e.resource = "job/" + held_.job_id();
  e.details = {{"attempt", held_.attempt()}, {"cluster", held_.cluster()}};
  // Who the attempt's credentials are made for: the job's owner, and the
  // credential it was submitted with.
  if (cargo_.real) e.details["credentials_for"] = Details{{"owner", cargo_.owner}, {"submitted_by", cargo_.submitted_by}};
  // Which workload token the attempt carries: its id, never the token.
  if (cargo_.workload) {
    const identity::WorkloadToken& w = *cargo_.workload;
    e.details["workload_token"] = Details{{"jti", w.jti}, {"kid", w.kid}, {"audiences", w.audiences},
                                          {"expires_at", FormatRfc3339(w.expires_at)}};
  }
  // And each federated identity's token, by the identity's name.
  if (!cargo_.federated.empty()) {
    Details tokens;
    for (const auto& [name, w] : cargo_.federated) {
      tokens[name] = Details{{"jti", w.jti}, {"audiences", w.audiences}, {"expires_at", FormatRfc3339(w.expires_at)}};
    }
    e.details["federated_tokens"] = std::move(tokens);
  }
  RETURN_IF_ERROR(tx.AppendAudit(e));
  // Every read of a secret reference for it, delivered or not: the store,
  // the reference and a keyed digest, never the value.
  for (const secrets::SecretRead& r : cargo_.secret_reads) {
    AuditEvent read;
    read.time = time;
    read.actor = actor;
    read.action = "secret.read";
    read.resource = "job/" + held_.job_id();
    read.details = {{"attempt", held_.attempt()}, {"ok", r.ok}, {"variable", r.var}, {"store", r.store},
                    {"reference", r.reference}, {"delivery", r.delivery}, {"outcome", r.outcome}};
    if (!r.digest.empty()) read.details["digest"] = r.digest;
    RETURN_IF_ERROR(tx.AppendAudit(read));
  }
  // The attempt's credential lives exactly as long as the attempt: minted
  // now that the launch is written, known to the server from the moment
  // the launch is (it is revoked when the attempt ends).
  credential_id_.clear();
  credential_secret_.clear();
  if (cargo_.real && cargo_.refused.empty()) {
    identity::MintedToken minted = MintCredential(Written(), time);
    RETURN_IF_ERROR(tx.InsertToken(minted.record));
    credential_id_ = minted.record.id;
    credential_secret_ = std::move(minted.secret);
  }
  written_.store(true, std::memory_order_release);
  return Status::Ok();
}

identity::MintedToken LaunchRecord::MintCredential(const Written&, Timestamp time) const {
  return identity::MintJobCredential(held_.job_id(), held_.attempt(), time, std::chrono::hours(24 * 30));
}

Result<RecordedLaunch> LaunchRecord::Committed(const Status& commit) const {
  const std::string what = "the launch of job " + held_.job_id() + " attempt " + std::to_string(held_.attempt());
  if (!commit.ok()) return FailedPrecondition(what + " was not recorded: " + commit.message());
  if (!written_.load(std::memory_order_acquire)) return FailedPrecondition(what + " was never written");
  if (!cargo_.refused.empty()) return FailedPrecondition(what + " is refused: " + cargo_.refused);
  std::map<std::string, std::string> env = cargo_.env;
  if (!credential_secret_.empty()) env["CAUSEWAY_TOKEN"] = credential_secret_;
  return RecordedLaunch(held_, std::move(env));
}

}  // namespace causeway
