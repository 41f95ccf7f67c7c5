#include "service/provenance_service.h"

#include <set>
#include <unordered_map>

#include "causeway/crypto.h"
#include "provenance/dsse.h"
#include "readiness/residency.h"
#include "service/checkpoint_service.h"

namespace causeway {

using nlohmann::json;
namespace jwt = identity::jwt;

namespace {

Result<std::vector<jwt::SigningKey>> ProvenanceKeys(const Store& store) {
  return ServiceKeys(store, kProvenanceKeyPrefix);
}

// A fact's name: letters, digits and . _ - : / (an artifact's "artifact:"
// prefix is Causeway's).
bool IsFactName(const std::string& n) {
  if (n.empty() || n.size() > 128 || n.rfind("artifact:", 0) == 0) return false;
  for (char c : n) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-' || c == ':' || c == '/';
    if (!ok) return false;
  }
  return true;
}

bool IsDigest(const std::string& d) {
  if (d.size() != 71 || d.rfind("sha256:", 0) != 0) return false;
  for (size_t i = 7; i < d.size(); ++i) {
    char c = d[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status TooMany() {
  return InvalidArgument("at most " + std::to_string(kMaxJobFactsPerCall) + " facts and artifacts in one call");
}

// The named facts of one call ({name: JSON value}), appended to `out`.
Status AddNamedFacts(const json& facts, std::vector<JobFact>& out) {
  for (const auto& [name, value] : facts.items()) {
    if (out.size() == kMaxJobFactsPerCall) return TooMany();
    if (!IsFactName(name)) {
      return InvalidArgument("field \"facts\": name \"" + name.substr(0, 64) +
                             "\" must be 1 to 128 letters, digits and . _ - : / (not starting artifact:)");
    }
    std::string text = value.dump();
    if (text.size() > kMaxJobFactBytes) {
      return InvalidArgument("field \"facts." + name + "\": at most " + std::to_string(kMaxJobFactBytes) +
                             " bytes of JSON");
    }
    out.push_back(JobFact{"", 0, 0, name, std::move(text), "", {}});
  }
  return Status::Ok();
}

// The artifacts of one call ([{name, digest, uri?}]), appended to `out`.
Status AddArtifacts(const json& artifacts, std::vector<JobFact>& out) {
  int i = 0;
  for (const json& a : artifacts) {
    if (out.size() == kMaxJobFactsPerCall) return TooMany();
    std::string field = "artifacts[" + std::to_string(i++) + "]";
    if (!a.is_object() || !a.contains("name") || !a["name"].is_string() || !a.contains("digest") ||
        !a["digest"].is_string()) {
      return InvalidArgument("field \"" + field + "\" must be {\"name\": …, \"digest\": \"sha256:…\"}");
    }
    std::string name = a["name"].get<std::string>(), digest = a["digest"].get<std::string>();
    if (name.empty() || name.size() > 1024 || name.find_first_of("\n\r\t") != std::string::npos) {
      return InvalidArgument("field \"" + field + ".name\" must be 1 to 1024 characters on one line");
    }
    if (!IsDigest(digest)) return InvalidArgument("field \"" + field + ".digest\" must be sha256: and 64 hex digits");
    json value = {{"digest", digest}};
    if (a.contains("uri") && a["uri"].is_string()) value["uri"] = a["uri"].get<std::string>().substr(0, 2048);
    out.push_back(JobFact{"", 0, 0, "artifact:" + name, value.dump(), "", {}});
  }
  return Status::Ok();
}

// A job bound to a residency zone keeps its artifacts there: an artifact
// whose uri is not shown to be in the zone (as for checkpoints:
// readiness::ResidencyBreach) is refused, kFailedPrecondition naming it.
Status ArtifactsInZone(const Estate& estate, const JobRecord& job, const std::vector<JobFact>& records) {
  int i = 0;
  for (const JobFact& f : records) {
    if (f.name.rfind("artifact:", 0) != 0) continue;
    // Artifact values are built as JSON objects by FactsOf, just below: never unreadable.
    json value = json::parse(f.value, nullptr, false);
    std::string field = "artifacts[" + std::to_string(i++) + "].uri";
    if (!value.is_object() || !value["uri"].is_string()) continue;
    std::string why = readiness::ResidencyBreach(estate, job, value["uri"].get<std::string>());
    if (!why.empty()) return FailedPrecondition("field \"" + field + "\": " + why);
  }
  return Status::Ok();
}

// The facts and artifacts of one call as records (attempt and time set by
// the write), each checked.
Result<std::vector<JobFact>> FactsOf(const json& facts, const json& artifacts) {
  std::vector<JobFact> out;
  if (!facts.is_null() && !facts.is_object()) {
    return InvalidArgument("field \"facts\" must be an object of names to JSON values");
  }
  if (!artifacts.is_null() && !artifacts.is_array()) {
    return InvalidArgument("field \"artifacts\" must be a list of {name, digest, uri}");
  }
  if (facts.is_object()) RETURN_IF_ERROR(AddNamedFacts(facts, out));
  if (artifacts.is_array()) RETURN_IF_ERROR(AddArtifacts(artifacts, out));
  if (out.empty()) return InvalidArgument("give \"facts\" or \"artifacts\": nothing to record");
  return out;
}

// The jobs of one page (newest first) an export covers, up to its limit
// (`emitted` are out already); `more`: the limit cut the page short;
// `older`: the rest of the ledger is older than `since`.
struct ExportChoice {
  std::vector<const JobRecord*> jobs;
  bool more = false, older = false;
};

ExportChoice Choose(const std::vector<JobRecord>& page, const ProvenanceExport& which, int64_t emitted) {
  ExportChoice c;
  for (const JobRecord& job : page) {
    if (which.since && job.created_at < *which.since) {
      c.older = true;
      break;
    }
    if ((which.until && job.created_at >= *which.until) || (which.finished_only && !IsTerminal(job.state))) continue;
    if (which.limit > 0 && emitted + static_cast<int64_t>(c.jobs.size()) == which.limit) {
      c.more = true;
      break;
    }
    c.jobs.push_back(&job);
  }
  return c;
}

}  // namespace

ProvenanceService::ProvenanceService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
                                     provenance::Builder builder)
    : store_(store), queue_(queue), estate_(estate), clock_(clock), builder_(std::move(builder)) {
  builder_.currency = estate.currency;
}

void ProvenanceService::SetBuilderId(const std::string& id) {
  MutexLock lock(mu_);
  builder_.id = id;
}

provenance::Builder ProvenanceService::builder() const {
  MutexLock lock(mu_);
  return builder_;
}

Result<json> ProvenanceService::Statement(const std::string& job_id) const {
  ASSIGN_OR_RETURN(provenance::JobHistory history, provenance::ReadHistory(store_, job_id));
  return provenance::BuildStatement(history, estate_, builder());
}

Result<jwt::SigningKey> ProvenanceService::Key() {
  {
    MutexLock lock(mu_);
    if (key_) return *key_;
  }
  // Read and, on first use, made without the lock: the store is disk.
  ASSIGN_OR_RETURN(auto keys, ProvenanceKeys(store_));
  if (keys.empty()) {
    Timestamp now = clock_.Now();
    std::string kid = std::string(kProvenanceKeyPrefix) + Sha256Hex(RandomBytes(16)).substr(0, 16);
    ASSIGN_OR_RETURN(jwt::SigningKey key, jwt::SigningKey::Generate(jwt::Alg::kES256, kid));
    SigningKeyRecord record{kid, "ES256", key.Pem(), now, std::nullopt};
    RETURN_IF_ERROR(queue_.RunAudited([record, now](WriteTx& tx) -> Status {
                      RETURN_IF_ERROR(tx.PutSigningKey(record));
                      AuditEvent e;
                      e.time = now;
                      e.actor = "causeway";
                      e.action = "provenance.key.create";
                      e.resource = "signing-key/" + record.kid;
                      e.details = {{"kid", record.kid}, {"alg", "ES256"}};  // never the key
                      return tx.AppendAudit(e);
                    }).status());
    // Two first uses at once make two keys; both are published, and every
    // later record is signed with the newest.
    ASSIGN_OR_RETURN(keys, ProvenanceKeys(store_));
    if (keys.empty()) return Internal("the provenance key was not stored");
  }
  MutexLock lock(mu_);
  key_ = keys.back();
  return *key_;
}

Result<std::string> ProvenanceService::Record(const std::string& job_id) {
  ASSIGN_OR_RETURN(std::vector<SealedRecord> sealed, store_.GetSealedRecords({job_id}));
  if (!sealed.empty()) return std::move(sealed.front().envelope);
  ASSIGN_OR_RETURN(provenance::JobHistory history, provenance::ReadHistory(store_, job_id));
  std::string statement = provenance::StatementText(history, estate_, builder());
  ASSIGN_OR_RETURN(jwt::SigningKey key, Key());
  return provenance::SignToText(provenance::kInTotoPayloadType, statement, key);
}

Result<int> ProvenanceService::SealFinished(int limit) {
  ASSIGN_OR_RETURN(std::vector<std::string> ids, store_.ListUnsealedJobs(limit));
  if (ids.empty()) return 0;
  ASSIGN_OR_RETURN(jwt::SigningKey key, Key());
  provenance::Builder b = builder();
  Timestamp now = clock_.Now();
  // Read and signed before the write, outside it: the unit only stores.
  auto records = std::make_shared<std::vector<SealedRecord>>();
  for (const std::string& id : ids) {
    ASSIGN_OR_RETURN(provenance::JobHistory h, provenance::ReadHistory(store_, id));
    std::string statement = provenance::StatementText(h, estate_, b);
    ASSIGN_OR_RETURN(std::string envelope, provenance::SignToText(provenance::kInTotoPayloadType, statement, key));
    records->push_back(SealedRecord{id, key.kid(), now, std::move(envelope)});
  }
  RETURN_IF_ERROR(queue_.RunAudited([records, ids = std::move(ids), kid = key.kid(), now](WriteTx& tx) -> Status {
                    for (const SealedRecord& r : *records) RETURN_IF_ERROR(tx.PutSealedRecord(r));
                    // One event per batch, not per job: a job's own range of
                    // the chain stays as its sealed record states it.
                    AuditEvent e;
                    e.time = now;
                    e.actor = "causeway";
                    e.action = "provenance.seal";
                    e.resource = "signing-key/" + kid;
                    e.details = {{"kid", kid}, {"records", static_cast<int64_t>(ids.size())}, {"jobs", ids}};
                    return tx.AppendAudit(e);
                  }).status());
  return static_cast<int>(records->size());
}

Result<int64_t> ProvenanceService::SealAllFinished() {
  int64_t sealed = 0;
  for (;;) {
    ASSIGN_OR_RETURN(int n, SealFinished(kSealBatch));
    sealed += n;
    if (n < kSealBatch) return sealed;
  }
}

Result<ProvenancePage> ProvenanceService::Export(const ProvenanceExport& which,
                                                 const std::function<bool(const std::string&)>& emit) {
  ASSIGN_OR_RETURN(jwt::SigningKey key, Key());
  provenance::Builder b = builder();
  JobFilter filter;
  filter.team = which.team;
  filter.before_id = which.before_id;
  filter.limit = 500;
  ProvenancePage out;
  while (true) {
    ASSIGN_OR_RETURN(std::vector<JobRecord> page, store_.ListJobs(filter));
    ExportChoice choice = Choose(page, which, out.emitted);
    // Finished jobs' records were signed once, when sealed: streamed as
    // stored. The others (running, or not sealed yet) are signed now.
    std::vector<std::string> ids;
    for (const JobRecord* job : choice.jobs) ids.push_back(job->id);
    ASSIGN_OR_RETURN(std::vector<SealedRecord> stored, store_.GetSealedRecords(ids));
    std::unordered_map<std::string, std::string> sealed;
    for (SealedRecord& r : stored) sealed.emplace(r.job_id, std::move(r.envelope));
    for (const JobRecord* job : choice.jobs) {
      std::string envelope;
      if (auto it = sealed.find(job->id); it != sealed.end()) {
        envelope = std::move(it->second);
      } else {
        ASSIGN_OR_RETURN(provenance::JobHistory h, provenance::ReadHistory(store_, *job));
        std::string statement = provenance::StatementText(h, estate_, b);
        ASSIGN_OR_RETURN(envelope, provenance::SignToText(provenance::kInTotoPayloadType, statement, key));
      }
      ++out.emitted;
      filter.before_id = job->id;
      if (!emit(envelope)) return out;
    }
    if (choice.more) {
      out.next = filter.before_id;  // the last one emitted
      return out;
    }
    if (choice.older || page.size() < static_cast<size_t>(filter.limit)) return out;
    filter.before_id = page.back().id;
  }
}

Result<json> ProvenanceService::PublicKeys() const {
  ASSIGN_OR_RETURN(auto keys, ProvenanceKeys(store_));
  return Jwks(keys);
}

Result<std::vector<JobFact>> ProvenanceService::RecordFacts(const identity::Principal& who, const std::string& job_id,
                                                            const json& facts, const json& artifacts) {
  ASSIGN_OR_RETURN(std::vector<JobFact> records, FactsOf(facts, artifacts));
  auto written = std::make_shared<std::vector<JobFact>>();
  Timestamp now = clock_.Now();
  std::string actor = who.token_id;
  const Estate& estate = estate_;
  Status st = queue_.RunAudited([records, written, job_id, actor, now, &estate](WriteTx& tx) -> Status {
                      written->clear();  // a unit may run more than once
                      ASSIGN_OR_RETURN(auto job, tx.GetJob(job_id));
                      if (!job) return NotFound("job " + job_id + " not found");
                      if (IsTerminal(job->state)) {
                        return FailedPrecondition("job " + job_id + " is already " + std::string(JobStateName(job->state)) +
                                                  ": its record is closed");
                      }
                      RETURN_IF_ERROR(ArtifactsInZone(estate, *job, records));
                      std::vector<std::string> names;
                      for (JobFact f : records) {
                        f.job_id = job_id;
                        f.attempt = job->attempts;
                        f.recorded_by = actor;
                        f.recorded_at = now;
                        RETURN_IF_ERROR(tx.AddJobFact(f));
                        if (f.seq > static_cast<int64_t>(kMaxJobFacts)) {
                          return ResourceExhausted("job " + job_id + " has recorded " + std::to_string(kMaxJobFacts) +
                                                   " facts already, the most a job may");
                        }
                        names.push_back(f.name);
                        written->push_back(std::move(f));
                      }
                      AuditEvent e;
                      e.time = now;
                      e.actor = actor;
                      e.action = "job.record";
                      e.resource = "job/" + job_id;
                      e.details = {{"attempt", job->attempts}, {"names", names}};  // names only: values may be large
                      return tx.AppendAudit(e);
                    }).status();
  if (!st.ok()) return st;
  return *written;
}

}  // namespace causeway
