#include "provenance/statement.h"

#include <algorithm>
#include <map>

#include "causeway/crypto.h"
#include "provenance/facts.h"
#include "recovery/recovery.h"
#include "spec/spec_json.h"

namespace causeway::provenance {

using nlohmann::json;

Result<JobHistory> ReadHistory(const Store& store, const std::string& id) {
  ASSIGN_OR_RETURN(auto job, store.GetJob(id));
  if (!job) return NotFound("job " + id + " not found");
  return ReadHistory(store, *job);
}

Result<JobHistory> ReadHistory(const Store& store, const JobRecord& job) {
  JobHistory h;
  h.job = job;
  const std::string& id = job.id;
  ASSIGN_OR_RETURN(h.attempts, store.ListAttempts(id));
  ASSIGN_OR_RETURN(h.checkpoints, store.ListCheckpoints(id));
  ASSIGN_OR_RETURN(h.facts, store.ListJobFacts(id));
  ASSIGN_OR_RETURN(h.audit, store.GetAuditRange("job/" + id));
  return h;
}

namespace {

constexpr std::string_view kUrn = "urn:causeway:job:";

// "sha256:<hex>" as a DigestSet; empty when it is not one.
json DigestSet(std::string_view digest) {
  if (digest.substr(0, 7) != "sha256:" || digest.size() != 71) return json::object();
  return json{{"sha256", std::string(digest.substr(7))}};
}

// The digest an image reference pins ("…@sha256:…"), or "".
std::string PinnedDigest(const std::string& image) {
  size_t at = image.rfind("@sha256:");
  return at == std::string::npos ? "" : image.substr(at + 1);
}

// A URL without user name or password (a git URL may carry a token).
std::string WithoutUserInfo(const std::string& url) {
  size_t scheme = url.find("://");
  if (scheme == std::string::npos) return url;
  size_t host = scheme + 3, at = url.find('@', host), slash = url.find('/', host);
  if (at == std::string::npos || (slash != std::string::npos && at > slash)) return url;
  return url.substr(0, host) + url.substr(at + 1);
}

// Where the attempt read each dataset: the replica in its own provider and
// region, else remotely from the first.
json DataRead(const JobSpec& spec, const Attempt& a, const Estate& estate) {
  json out = json::object();
  if (spec.datasets.empty()) return out;
  const Cluster* c = estate.FindCluster(a.cluster);
  std::string here = c ? c->provider + "/" + c->region : "";
  for (const DatasetRef& d : spec.datasets) {
    const Dataset* ds = estate.FindDataset(d.name);
    if (!ds || ds->replicas.empty()) {
      out[d.name] = {{"not_detected", "the estate lists no replica of it"}};
    } else if (std::find(ds->replicas.begin(), ds->replicas.end(), here) != ds->replicas.end()) {
      out[d.name] = here;
    } else {
      out[d.name] = "remote: " + ds->replicas.front();
    }
  }
  return out;
}

// Where an attempt's facts go in the Statement's text: a string no value
// can dump to (a control character is always escaped), replaced by the
// facts as stored (their own canonical JSON) once the rest is written, so
// the facts are never parsed and written again.
std::string FactsMark(int attempt) { return std::string(1, '\x01') + "facts-" + std::to_string(attempt); }
// The same, as JSON text writes it.
std::string DumpedFactsMark(int attempt) { return "\"\\u0001facts-" + std::to_string(attempt) + "\""; }

json AttemptJson(const Attempt& a, const JobHistory& h, const JobSpec& spec, const Estate& estate,
                 const std::string& currency) {
  json cps = json::array();
  for (const Checkpoint& c : h.checkpoints) {
    if (c.attempt != a.number) continue;
    json cp = {{"seq", c.seq}, {"path", c.path}, {"registered_at", FormatRfc3339(c.created_at)}};
    if (c.step) cp["step"] = *c.step;
    if (!c.digest.empty()) cp["digest"] = c.digest;
    cps.push_back(std::move(cp));
  }
  json ann = {{"attempt", a.number},
              {"state", a.state},
              {"cluster", a.cluster},
              {"pool", a.pool},
              {"backend_id", a.backend_id},
              {"started_at", FormatRfc3339(a.started_at)},
              {"gpus", a.gpus},
              {"reserved", a.reserved},
              {"gpu_seconds", a.gpu_seconds},
              {"cost_micros", a.cost_micros},
              {"currency", currency},
              {"price_micros_per_gpu_hour", a.price_micros},
              {"resumed_from", a.resumed_from},
              {"checkpoints", std::move(cps)},
              {"data_read_from", DataRead(spec, a, estate)},
              {"facts", FactsMark(a.number)}};
  if (a.ended_at) ann["ended_at"] = FormatRfc3339(*a.ended_at);
  if (a.exit_code) ann["exit_code"] = *a.exit_code;
  if (!a.failure_class.empty()) {
    ann["failure_class"] = a.failure_class;
    auto cls = recovery::ParseFailureClass(a.failure_class);
    ann["next_action_owner"] = std::string(recovery::OwnerName(cls ? recovery::OwnerOf(*cls) : recovery::Owner::kNobody));
  }
  return json{{"name", "attempt/" + std::to_string(a.number)},
              {"uri", std::string(kUrn) + h.job.id + ":attempt:" + std::to_string(a.number)},
              {"annotations", std::move(ann)}};
}

// The code's revision: what the probe found in the workdir, else what the
// job recorded as `code_revision`.
std::string CodeRevision(const JobHistory& h) {
  for (const Attempt& a : h.attempts) {
    if (a.facts.find("\"code_revision\"") == std::string::npos) continue;  // parsed only when it may hold one
    std::string v = FactValue(FactsFromJson(a.facts), "code_revision");
    if (!v.empty()) return v;
  }
  for (const JobFact& f : h.facts) {
    if (f.name != "code_revision") continue;
    // Facts are stored as JSON by the provenance service; one that is not a string names no
    // revision.
    json v = json::parse(f.value, nullptr, false);
    if (v.is_string()) return v.get<std::string>();
  }
  return "";
}

// Whether stored facts hold a declared image (looked for in the text, so
// that facts without one are never parsed here).
bool DeclaresImage(const std::string& facts) {
  size_t declared = facts.find("\"declared\":{");
  if (declared == std::string::npos) return false;
  size_t end = facts.find('}', declared);
  size_t image = facts.find("\"image\":", declared);
  return image != std::string::npos && image < end;
}

json Dependencies(const JobHistory& h, const JobSpec& spec) {
  json deps = json::array();
  std::string image = spec.image_id;
  std::string declared_image;  // what the pool of the last attempt declares
  if (!h.attempts.empty() && DeclaresImage(h.attempts.back().facts)) {
    AttemptFacts last = FactsFromJson(h.attempts.back().facts);
    if (auto it = last.declared.find("image"); it != last.declared.end()) declared_image = it->second;
  }
  if (image.empty()) image = declared_image;
  if (!image.empty()) {
    std::string ref = image.rfind("docker:", 0) == 0 ? image.substr(7) : image;  // SkyPilot's prefix
    json d = {{"name", "image"}, {"uri", "docker://" + ref}};
    std::string digest = PinnedDigest(image);
    if (digest.empty()) digest = PinnedDigest(declared_image);
    if (!digest.empty()) {
      d["digest"] = DigestSet(digest);
    } else {
      d["annotations"] = {{"digest_not_detected", "the image is named by a tag and its backend resolved no digest"}};
    }
    deps.push_back(std::move(d));
  }
  for (const DatasetRef& ds : spec.datasets) {
    json d = {{"name", "dataset:" + ds.name}, {"uri", "urn:causeway:dataset:" + ds.name}};
    if (!ds.digest.empty()) d["digest"] = DigestSet(ds.digest);
    if (!ds.version.empty()) d["annotations"] = {{"version", ds.version}};
    deps.push_back(std::move(d));
  }
  std::string revision = CodeRevision(h);
  if (!spec.workdir.empty()) {
    std::string uri = spec.workdir.git_url.empty() ? "file://" + spec.workdir.path
                                                   : "git+" + WithoutUserInfo(spec.workdir.git_url);
    json d = {{"name", "code"}, {"uri", uri}};
    if (!revision.empty()) d["digest"] = {{"gitCommit", revision}};
    if (!spec.workdir.git_ref.empty()) d["annotations"] = {{"ref", spec.workdir.git_ref}};
    deps.push_back(std::move(d));
  } else if (!revision.empty()) {
    deps.push_back({{"name", "code"}, {"uri", std::string(kUrn) + h.job.id + ":code"}, {"digest", {{"gitCommit", revision}}}});
  }
  if (!h.attempts.empty() && !h.attempts.front().resumed_from.empty()) {
    deps.push_back({{"name", "checkpoint"}, {"uri", h.attempts.front().resumed_from}});
  }
  return deps;
}

json Subjects(const JobHistory& h) {
  json subjects = json::array();
  for (const Checkpoint& c : h.checkpoints) {
    if (json d = DigestSet(c.digest); !d.empty()) {
      subjects.push_back({{"name", c.path}, {"digest", d}, {"annotations", {{"kind", "checkpoint"}, {"attempt", c.attempt}}}});
    }
  }
  for (const JobFact& f : h.facts) {
    if (f.name.rfind("artifact:", 0) != 0) continue;
    // Artifacts are stored as JSON objects by the provenance service; one without a digest is no
    // subject.
    json v = json::parse(f.value, nullptr, false);
    if (!v.is_object() || !v.contains("digest") || !v["digest"].is_string()) continue;
    if (json d = DigestSet(v["digest"].get<std::string>()); !d.empty()) {
      subjects.push_back({{"name", f.name.substr(9)}, {"digest", d}, {"annotations", {{"kind", "artifact"}, {"attempt", f.attempt}}}});
    }
  }
  if (subjects.empty()) {  // in-toto requires one: the spec that was run
    subjects.push_back({{"name", std::string(kUrn) + h.job.id + ":spec"},
                        {"digest", {{"sha256", Sha256Hex(h.job.spec_yaml)}}},
                        {"annotations", {{"kind", "spec"}}}});
  }
  return subjects;
}

}  // namespace

namespace {

// The Statement with each attempt's facts marked (FactsMark).
json MarkedStatement(const JobHistory& h, const Estate& estate, const Builder& builder) {
  JobSpec spec;
  // The stored spec, embedded as stored (the record proves what was submitted); typed through
  // JobSpecFromJson for the secrets' names.
  json spec_json = json::parse(h.job.spec_json, nullptr, false);
  if (auto s = JobSpecFromJson(spec_json); s.ok()) spec = std::move(*s);
  json external = {{"spec", spec_json.is_discarded() ? json::object() : spec_json},
                   {"spec_sha256", Sha256Hex(h.job.spec_yaml)},
                   {"name", h.job.name},
                   {"team", h.job.team},
                   {"owner", h.job.owner},
                   {"secrets", spec.secrets}};
  json internal = {{"job_id", h.job.id}, {"priority", h.job.priority}, {"submitted_by", h.job.submitted_by},
                   {"submitted_at", FormatRfc3339(h.job.created_at)}};
  if (!h.job.pipeline.empty()) {
    internal[h.job.job_group ? "job_group" : "pipeline"] = {{"id", h.job.pipeline}, {"name", h.job.pipeline_name},
                                                            {"step", h.job.step + 1}, {"steps", h.job.steps}};
  }
  json byproducts = json::array();
  for (const Attempt& a : h.attempts) byproducts.push_back(AttemptJson(a, h, spec, estate, builder.currency));
  json recorded = json::array();
  for (const JobFact& f : h.facts) {
    // Stored as JSON by the provenance service; shown as null were it unreadable, never dropped.
    json v = json::parse(f.value, nullptr, false);
    recorded.push_back({{"seq", f.seq}, {"attempt", f.attempt}, {"name", f.name}, {"value", v.is_discarded() ? json() : v},
                        {"recorded_by", f.recorded_by}, {"recorded_at", FormatRfc3339(f.recorded_at)}});
  }
  byproducts.push_back({{"name", "job-facts"}, {"uri", std::string(kUrn) + h.job.id + ":facts"},
                        {"annotations", {{"facts", std::move(recorded)}}}});
  byproducts.push_back({{"name", "audit"},
                        {"uri", "urn:causeway:audit:" + std::to_string(h.audit.first) + "-" + std::to_string(h.audit.last)},
                        {"annotations",
                         {{"resource", "job/" + h.job.id},
                          {"first_seq", h.audit.first},
                          {"last_seq", h.audit.last},
                          {"events", h.audit.count}}}});
  json metadata = {{"invocationId", h.job.id}};
  if (!h.attempts.empty()) {
    metadata["startedOn"] = FormatRfc3339(h.attempts.front().started_at);
    if (IsTerminal(h.job.state) && h.attempts.back().ended_at) metadata["finishedOn"] = FormatRfc3339(*h.attempts.back().ended_at);
  }
  json run = {{"builder", {{"id", builder.id}, {"version", {{"causeway", builder.version}}}}},
              {"metadata", std::move(metadata)},
              {"byproducts", std::move(byproducts)}};
  json predicate = {{"buildDefinition",
                     {{"buildType", kBuildType},
                      {"externalParameters", std::move(external)},
                      {"internalParameters", std::move(internal)},
                      {"resolvedDependencies", Dependencies(h, spec)}}},
                    {"runDetails", std::move(run)}};
  return json{{"_type", kStatementType},
              {"subject", Subjects(h)},
              {"predicateType", kSlsaPredicateType},
              {"predicate", std::move(predicate)}};
}

}  // namespace

std::string StatementText(const JobHistory& h, const Estate& estate, const Builder& builder) {
  std::string text = MarkedStatement(h, estate, builder).dump();
  size_t from = 0;
  for (const Attempt& a : h.attempts) {
    std::string mark = DumpedFactsMark(a.number);
    size_t at = text.find(mark, from);
    if (at == std::string::npos) continue;
    // What the store holds is what ToJson wrote (only Causeway writes the
    // column); anything that is not even an object is left out.
    bool object = a.facts.size() >= 2 && a.facts.front() == '{' && a.facts.back() == '}';
    const std::string& facts = object ? a.facts : "{}";
    text.replace(at, mark.size(), facts);
    from = at + facts.size();
  }
  return text;
}

json BuildStatement(const JobHistory& h, const Estate& estate, const Builder& builder) {
  return json::parse(StatementText(h, estate, builder));
}

namespace {

const json* Path(const json& j, std::initializer_list<const char*> keys) {
  const json* at = &j;
  for (const char* k : keys) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(k);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

std::string Text(const json* j) {
  if (!j) return "";
  if (j->is_string()) return j->get<std::string>();
  if (j->is_number() || j->is_boolean()) return j->dump();
  return "";
}

// What a Statement's dependencies say of its inputs, for comparing.
struct Inputs {
  std::string datasets, image_digest, code;
};

Inputs InputsOf(const json& statement) {
  Inputs in;
  const json* deps = Path(statement, {"predicate", "buildDefinition", "resolvedDependencies"});
  if (!deps || !deps->is_array()) return in;
  for (const json& d : *deps) {
    std::string name = Text(Path(d, {"name"}));
    if (name == "image") in.image_digest = Text(Path(d, {"digest", "sha256"}));
    if (name == "code") in.code = Text(Path(d, {"digest", "gitCommit"}));
    if (name.rfind("dataset:", 0) != 0) continue;
    std::string v = name.substr(8) + "@" + Text(Path(d, {"annotations", "version"}));
    if (std::string digest = Text(Path(d, {"digest", "sha256"})); !digest.empty()) v += " sha256:" + digest.substr(0, 12);
    in.datasets += (in.datasets.empty() ? "" : ", ") + v;
  }
  return in;
}

}  // namespace

Result<RunSummary> Summarize(const json& statement, int attempt) {
  const json* type = Path(statement, {"predicate", "buildDefinition", "buildType"});
  const json* byproducts = Path(statement, {"predicate", "runDetails", "byproducts"});
  if (!type || *type != kBuildType || !byproducts || !byproducts->is_array()) {
    return InvalidArgument("not a Causeway provenance record (an in-toto Statement with buildType " +
                           std::string(kBuildType) + ")");
  }
  RunSummary s;
  s.job_id = Text(Path(statement, {"predicate", "buildDefinition", "internalParameters", "job_id"}));
  const json* chosen = nullptr;
  for (const json& b : *byproducts) {
    const json* n = Path(b, {"annotations", "attempt"});
    if (!n || !n->is_number_integer()) continue;
    if (attempt == 0 || n->get<int>() == attempt) chosen = &b;
  }
  if (!chosen) {
    return InvalidArgument(attempt ? "the record of " + s.job_id + " has no attempt " + std::to_string(attempt)
                                   : "the record of " + s.job_id + " has no attempt: the job never ran");
  }
  const json& ann = (*chosen)["annotations"];
  s.attempt = ann["attempt"].get<int>();
  const json* facts_json = Path(ann, {"facts"});
  AttemptFacts f = FactsFromJson(facts_json ? facts_json->dump() : "{}");
  auto fact = [&](const std::string& name) { return FactValue(f, name); };
  Inputs in = InputsOf(statement);
  int gpus_total = f.placement.gpus_per_node * std::max(1, f.placement.nodes);
  std::string gpu_uuids;
  for (const NodeFacts& n : f.nodes) {
    for (const Gpu& g : n.gpus) gpu_uuids += (gpu_uuids.empty() ? "" : ",") + g.uuid;
  }
  s.fields = {{"provider", f.placement.provider},
              {"cluster", f.placement.cluster},
              {"region", f.placement.region},
              {"gpu_model", fact("gpu_model")},
              {"gpus", f.placement.gpu_type == kCpuType ? "0" : std::to_string(gpus_total)},
              {"nodes", std::to_string(f.placement.nodes)},
              {"interconnect", fact("interconnect")},
              {"driver", fact("driver")},
              {"cuda", fact("cuda")},
              {"cuda_toolkit", fact("cuda_toolkit")},
              {"torch", fact("torch")},
              {"nccl", fact("nccl")},
              {"os", fact("os")},
              {"kernel", fact("kernel")},
              {"image_digest", in.image_digest.empty() ? "" : "sha256:" + in.image_digest},
              {"datasets", in.datasets},
              {"code_revision", in.code},
              {"started_from", Text(Path(ann, {"resumed_from"}))},
              {"node_names", [&] {
                 std::string names;
                 for (const NodeFacts& n : f.nodes) names += (names.empty() ? "" : ",") + n.name;
                 return names;
               }()},
              {"gpu_uuids", gpu_uuids}};
  return s;
}

std::vector<Difference> Diff(const RunSummary& a, const RunSummary& b) {
  std::vector<Difference> out;
  for (size_t i = 0; i < a.fields.size() && i < b.fields.size(); ++i) {
    if (a.fields[i].second != b.fields[i].second) out.push_back({a.fields[i].first, a.fields[i].second, b.fields[i].second});
  }
  return out;
}

namespace {

// The attempts of a Statement by number.
std::map<int, const json*> AttemptsOf(const json& statement) {
  std::map<int, const json*> out;
  const json* byproducts = Path(statement, {"predicate", "runDetails", "byproducts"});
  if (!byproducts || !byproducts->is_array()) return out;
  for (const json& b : *byproducts) {
    const json* n = Path(b, {"annotations", "attempt"});
    if (n && n->is_number_integer()) out[n->get<int>()] = &b;
  }
  return out;
}

int64_t Int64(const json* j) { return j && j->is_number_integer() ? j->get<int64_t>() : 0; }

}  // namespace

std::vector<std::string> CompareRecords(const json& record, const json& now) {
  std::vector<std::string> out;
  auto spec = [](const json& s) { return Text(Path(s, {"predicate", "buildDefinition", "externalParameters", "spec_sha256"})); };
  if (spec(record) != spec(now)) out.push_back("the spec's digest differs");
  const json* subjects = Path(record, {"subject"});
  const json* now_subjects = Path(now, {"subject"});
  if (subjects && subjects->is_array()) {
    for (const json& s : *subjects) {
      bool found = now_subjects && now_subjects->is_array() &&
                   std::find(now_subjects->begin(), now_subjects->end(), s) != now_subjects->end();
      if (!found) out.push_back("output " + Text(Path(s, {"name"})) + " is not in the server's record as it is here");
    }
  }
  auto mine = AttemptsOf(record), theirs = AttemptsOf(now);
  for (const auto& [n, a] : mine) {
    auto it = theirs.find(n);
    if (it == theirs.end()) {
      out.push_back("attempt " + std::to_string(n) + " is not in the server's record");
    } else if (Text(Path(*a, {"annotations", "state"})) != "running" && *a != *it->second) {
      out.push_back("attempt " + std::to_string(n) + " differs from the server's record of it");
    }
  }
  int last = mine.empty() ? 0 : mine.rbegin()->first;
  for (const auto& entry : theirs) {
    if (entry.first <= last && !mine.count(entry.first)) {
      out.push_back("attempt " + std::to_string(entry.first) + " of the server's record is missing here");
    }
  }
  auto audit = [](const json& s, const char* key) -> int64_t {
    const json* byproducts = Path(s, {"predicate", "runDetails", "byproducts"});
    if (!byproducts || !byproducts->is_array()) return 0;
    for (const json& b : *byproducts) {
      if (Text(Path(b, {"name"})) == "audit") return Int64(Path(b, {"annotations", key}));
    }
    return 0;
  };
  if (audit(record, "first_seq") != audit(now, "first_seq") || audit(record, "last_seq") > audit(now, "last_seq") ||
      audit(record, "events") > audit(now, "events")) {
    out.push_back("the job's audit range (seq " + std::to_string(audit(record, "first_seq")) + "-" +
                  std::to_string(audit(record, "last_seq")) + ", " + std::to_string(audit(record, "events")) +
                  " events) is not within the server's");
  }
  return out;
}

}  // namespace causeway::provenance
