#include "cli/provenance_commands.h"

#include <filesystem>
#include <fstream>

#include "causeway/job_spec.h"
#include "cli/errors.h"
#include "cli/table.h"
#include "provenance/dsse.h"
#include "provenance/statement.h"
#include "service/checkpoint_service.h"

namespace causeway::cli {

using nlohmann::json;

namespace {

// A record file is an envelope; anything much larger is not one.
constexpr uintmax_t kMaxRecordFileBytes = 16 << 20;

Result<json> ReadJsonFile(const std::string& path) {
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return NotFound("cannot read " + path + ": " + ec.message());
  if (size > kMaxRecordFileBytes) {
    return InvalidArgument(path + ": " + std::to_string(size) + " bytes is more than a provenance record can be");
  }
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument(path + ": expected a JSON object (a DSSE envelope)");
  return j;
}

// The Statement inside `doc` without checking any signature (for
// comparing; `verify` checks).
Result<json> StatementOf(const json& doc, const std::string& what) {
  if (doc.contains("_type")) return doc;
  auto payload = provenance::UnverifiedPayload(doc);
  if (!payload.ok()) return payload.status().WithPrefix(what);
  json statement = json::parse(*payload, nullptr, false);
  if (!statement.is_object()) return InvalidArgument(what + ": its payload is not a JSON Statement");
  return statement;
}

// "JOB", "JOB@N" (attempt N), or a record file.
struct RunRef {
  std::string job, file;
  int attempt = 0;
};

RunRef ParseRunRef(const std::string& text) {
  RunRef r;
  std::error_code ec;
  if (std::filesystem::is_regular_file(text, ec)) {
    r.file = text;
    return r;
  }
  size_t at = text.rfind('@');
  r.job = text.substr(0, at);
  if (at != std::string::npos) r.attempt = std::atoi(text.c_str() + at + 1);
  return r;
}

// --since/--until: an RFC 3339 time, or a duration ago ("90d").
Result<std::string> TimeArg(const std::string& text, const char* flag) {
  if (auto t = ParseRfc3339(text); t.ok()) return FormatRfc3339(*t);
  auto d = ParseDuration(text);
  if (!d.ok()) return InvalidArgument(std::string(flag) + ": expected an RFC 3339 time or a duration such as 90d");
  return FormatRfc3339(RealClock().Now() - *d);
}

// provenance JOB
CLI::App* AddProvenance(Cli& c) {
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  auto* prov = c.app.add_subcommand("provenance", "a job's signed provenance record: what ran, where, on what, from which data");
  std::string &job = c.Keep<std::string>(), &out_file = c.Keep<std::string>();
  bool& statement_only = c.Keep<bool>(false);
  prov->add_option("JOB", job, "job id: print (or -o write) its record, a DSSE envelope");
  prov->add_option("-o,--output", out_file, "write the record to this file");
  prov->add_flag("--statement", statement_only, "the in-toto Statement alone, unsigned (for reading)");
  prov->require_subcommand(0, 1);
  prov->callback([&, prov] {
    if (!prov->get_subcommands().empty()) return;
    if (job.empty()) {
      rc = Fail(InvalidArgument("give a job id, or one of: verify, diff, export"));
      return;
    }
    std::string target = "/v1/jobs/" + net::UrlEncode(job) + "/provenance" + (statement_only ? "?format=statement" : "");
    auto j = api.Call("GET", target, "", rc);
    if (!j) return;
    if (Status st = WriteOut(out_file, j->dump(statement_only || g.json_output ? 2 : -1) + "\n"); !st.ok()) rc = Fail(st);
    if (!out_file.empty() && out_file != "-" && rc == kExitOk) std::cerr << "wrote the record of " << job << " to " << out_file << "\n";
  });
  return prov;
}

void AddVerify(Cli& c, CLI::App* prov) {
  Api& api = c.api;
  int& rc = c.rc;
  std::string &verify_file = c.Keep<std::string>(), &public_key = c.Keep<std::string>();
  auto* verify = prov->add_subcommand("verify", "check a record's signature and, with a server, that it still matches");
  verify->add_option("FILE", verify_file, "the record (a DSSE envelope)")->required();
  verify->add_option("--public-key", public_key, "the provenance keys (a JWKS, as GET /v1/provenance/keys serves it); "
                                                 "without it they are fetched from the server");
  verify->callback([&] {
    auto envelope = ReadJsonFile(verify_file);
    if (!envelope.ok()) return void(rc = Fail(envelope.status()));
    identity::jwt::KeySet keys;
    if (!public_key.empty()) {
      auto loaded = LoadPublicKeys(public_key);
      if (!loaded.ok()) return void(rc = Fail(loaded.status()));
      keys = std::move(*loaded);
    } else {
      auto jwks = api.Call("GET", "/v1/provenance/keys", "", rc);
      if (!jwks) return;
      auto set = identity::jwt::KeySet::FromJwks(*jwks);
      if (!set.ok()) return void(rc = Fail(set.status()));
      keys = std::move(*set);
    }
    auto payload = provenance::Verify(*envelope, provenance::kInTotoPayloadType, keys);
    if (!payload.ok()) {
      rc = Fail(payload.status().WithPrefix(verify_file + ": the signature does not verify"));
      return;
    }
    // A payload that is not a Statement is summarized as empty and fails verification below, which
    // says why.
    json statement = json::parse(*payload, nullptr, false);
    auto summary = provenance::Summarize(statement);
    std::string id = statement.is_object() ? statement["predicate"]["buildDefinition"]["internalParameters"].value("job_id", "")
                                           : "";
    std::cout << verify_file << ": signature valid; the record of " << (id.empty() ? "?" : id) << "\n";
    if (!public_key.empty()) return;  // offline: nothing more to compare with
    // Against the server: the record it would sign now must agree with this
    // one on every attempt and output, and the audit chain must be intact.
    auto now = api.Call("GET", "/v1/jobs/" + net::UrlEncode(id) + "/provenance?format=statement", "", rc);
    if (!now) return;
    std::vector<std::string> problems = provenance::CompareRecords(statement, *now);
    auto chain = api.Call("GET", "/v1/audit/verify", "", rc);
    if (!chain) return;
    if (!chain->value("ok", false)) problems.push_back("the server's audit chain does not verify");
    if (problems.empty()) {
      std::cout << "matches the server's record and its intact audit chain\n";
      return;
    }
    for (const std::string& p : problems) std::cout << "mismatch: " << p << "\n";
    rc = kExitFailure;
  });
}

void AddDiff(Cli& c, CLI::App* prov) {
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  std::string &diff_a = c.Keep<std::string>(), &diff_b = c.Keep<std::string>();
  auto* diff = prov->add_subcommand("diff", "what differed between two runs: JOB, JOB@ATTEMPT or a record file each");
  diff->add_option("A", diff_a, "the first run")->required();
  diff->add_option("B", diff_b, "the second run")->required();
  diff->callback([&] {
    std::vector<provenance::RunSummary> runs;
    for (const std::string* ref_text : {&diff_a, &diff_b}) {
      RunRef ref = ParseRunRef(*ref_text);
      json statement;
      if (!ref.file.empty()) {
        auto doc = ReadJsonFile(ref.file);
        auto st = doc.ok() ? StatementOf(*doc, ref.file) : Result<json>(doc.status());
        if (!st.ok()) return void(rc = Fail(st.status()));
        statement = std::move(*st);
      } else {
        auto j = api.Call("GET", "/v1/jobs/" + net::UrlEncode(ref.job) + "/provenance?format=statement", "", rc);
        if (!j) return;
        statement = std::move(*j);
      }
      auto s = provenance::Summarize(statement, ref.attempt);
      if (!s.ok()) return void(rc = Fail(s.status().WithPrefix(*ref_text)));
      runs.push_back(std::move(*s));
    }
    std::vector<provenance::Difference> diffs = provenance::Diff(runs[0], runs[1]);
    auto name = [](const provenance::RunSummary& s) { return s.job_id + "@" + std::to_string(s.attempt); };
    if (g.json_output) {
      json out = {{"a", name(runs[0])}, {"b", name(runs[1])}, {"differences", json::array()}};
      for (const auto& d : diffs) out["differences"].push_back({{"field", d.field}, {"a", d.a}, {"b", d.b}});
      return PrintJson(out);
    }
    if (diffs.empty()) {
      std::cout << name(runs[0]) << " and " << name(runs[1]) << " ran on the same recorded hardware and software\n";
      return;
    }
    Table t({"field", name(runs[0]), name(runs[1])});
    for (const auto& d : diffs) t.Add({d.field, d.a.empty() ? "-" : d.a, d.b.empty() ? "-" : d.b});
    t.Print(std::cout);
  });
}

void AddExport(Cli& c, CLI::App* prov) {
  Api& api = c.api;
  int& rc = c.rc;
  std::string &ex_team = c.Keep<std::string>(), &ex_since = c.Keep<std::string>(), &ex_until = c.Keep<std::string>(),
              &ex_out = c.Keep<std::string>();
  bool& ex_finished = c.Keep<bool>(false);
  auto* ex = prov->add_subcommand("export", "every record of a team or period, one signed record per line (JSON lines)");
  ex->add_option("--team", ex_team, "only this team's jobs");
  ex->add_option("--since", ex_since, "jobs submitted since (RFC 3339, or a duration ago such as 90d)");
  ex->add_option("--until", ex_until, "jobs submitted before (RFC 3339, or a duration ago)");
  ex->add_flag("--finished", ex_finished, "only jobs that have ended");
  ex->add_option("-o,--output", ex_out, "write to this file (default: stdout)");
  ex->callback([&] {
    std::string query = "?limit=1000";
    if (!ex_team.empty()) query += "&team=" + net::UrlEncode(ex_team);
    for (auto [text, param, flag] : {std::tuple{&ex_since, "since", "--since"}, std::tuple{&ex_until, "until", "--until"}}) {
      if (text->empty()) continue;
      auto t = TimeArg(*text, flag);
      if (!t.ok()) return void(rc = Fail(t.status()));
      query += std::string("&") + param + "=" + net::UrlEncode(*t);
    }
    if (ex_finished) query += "&finished=true";
    std::ofstream file;
    if (!ex_out.empty() && ex_out != "-") {
      file.open(ex_out, std::ios::binary | std::ios::trunc);
      if (!file) return void(rc = Fail(Unavailable("cannot write " + ex_out)));
    }
    std::ostream& out = file.is_open() ? static_cast<std::ostream&>(file) : std::cout;
    std::string cursor;
    int64_t total = 0;
    do {  // page by page: each is written before the next is asked for
      auto res = api.Raw("GET", "/v1/provenance/export" + query + (cursor.empty() ? "" : "&after=" + cursor), "", rc);
      if (!res) return;
      out << res->body << std::flush;
      total += std::atoll(res->headers["x-causeway-records"].c_str());
      cursor = res->headers["x-causeway-next-cursor"];
    } while (!cursor.empty());
    if (!out) return void(rc = Fail(Unavailable("cannot write " + ex_out)));
    if (file.is_open()) std::cerr << "wrote " << total << " records to " << ex_out << "\n";
  });
}

// record NAME=VALUE ...
void AddRecordFacts(Cli& c) {
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  std::string& rec_job = c.Keep<std::string>();
  auto& rec_facts = c.Keep<std::vector<std::string>>();
  auto& rec_artifacts = c.Keep<std::vector<std::string>>();
  if (const char* id = std::getenv("CAUSEWAY_JOB_ID")) rec_job = id;
  auto* rec = c.app.add_subcommand("record", "add facts to a job's provenance record (run from inside the job)");
  rec->add_option("FACT", rec_facts, "NAME=VALUE; a VALUE that is JSON is kept as JSON (lr=3e-4, tags=[\"a\"])");
  rec->add_option("--artifact", rec_artifacts, "NAME=sha256:HEX[@URI]: an output of the job, a subject of its record");
  rec->add_option("--job", rec_job, "job id (inside a job: $CAUSEWAY_JOB_ID)");
  rec->callback([&] {
    if (rec_job.empty()) return void(rc = Fail(InvalidArgument("--job is required outside a job")));
    json facts = json::object(), artifacts = json::array();
    for (const std::string& f : rec_facts) {
      size_t eq = f.find('=');
      if (eq == std::string::npos || eq == 0) {
        return void(rc = Fail(InvalidArgument("\"" + f + "\": expected NAME=VALUE")));
      }
      // A value that is not JSON is recorded as the string it is (`--fact run=abc`).
      json v = json::parse(f.substr(eq + 1), nullptr, false);
      facts[f.substr(0, eq)] = v.is_discarded() ? json(f.substr(eq + 1)) : v;
    }
    for (const std::string& a : rec_artifacts) {
      size_t eq = a.find('=');
      if (eq == std::string::npos || eq == 0) {
        return void(rc = Fail(InvalidArgument("--artifact \"" + a + "\": expected NAME=sha256:HEX[@URI]")));
      }
      std::string digest = a.substr(eq + 1), uri;
      if (size_t at = digest.find('@'); at != std::string::npos) {
        uri = digest.substr(at + 1);
        digest.resize(at);
      }
      json art = {{"name", a.substr(0, eq)}, {"digest", digest}};
      if (!uri.empty()) art["uri"] = uri;
      artifacts.push_back(std::move(art));
    }
    json body = json::object();
    if (!facts.empty()) body["facts"] = facts;
    if (!artifacts.empty()) body["artifacts"] = artifacts;
    auto j = api.Call("POST", "/v1/jobs/" + net::UrlEncode(rec_job) + "/facts", body.dump(), rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << "recorded " << (*j)["recorded"].size() << " fact(s) in the record of " << rec_job << "\n";
  });
}

// rerun JOB
void AddRerun(Cli& c) {
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  std::string &rerun_job = c.Keep<std::string>(), &rerun_on = c.Keep<std::string>();
  bool& rerun_dry = c.Keep<bool>(false);
  auto* rerun = c.app.add_subcommand("rerun", "submit a job again, pinned to what its record says it ran on");
  rerun->add_option("JOB", rerun_job, "job id")->required();
  rerun->add_option("--on", rerun_on, "also pin it to this cluster's provider and region");
  rerun->add_flag("--dry-run", rerun_dry, "print the pinned spec; submit nothing");
  rerun->callback([&] {
    std::string target = "/v1/jobs/" + net::UrlEncode(rerun_job) + "/rerun";
    if (!rerun_on.empty()) target += "?on=" + net::UrlEncode(rerun_on);
    auto plan = api.Call("GET", target, "", rc);
    if (!plan) return;
    if (rerun_dry) {
      if (g.json_output) return PrintJson(*plan);
      std::cout << (*plan)["spec"].get<std::string>();
      return;
    }
    auto j = api.Call("POST", "/v1/jobs", json{{"spec", (*plan)["spec"]}, {"file", rerun_job + "-rerun"}}.dump(), rc);
    if (!j) return;
    if (g.json_output) return PrintJson({{"job", (*j)["job"]}, {"pins", (*plan)["pins"]}, {"unpinned", (*plan)["unpinned"]}});
    std::string id = Str((*j)["job"], "id");
    std::cout << "submitted " << id << ", a rerun of " << rerun_job << " pinned to:\n";
    for (const auto& p : (*plan)["pins"]) std::cout << "  " << Str(p, "field") << ": " << Str(p, "value") << " (" << Str(p, "from") << ")\n";
    for (const auto& u : (*plan)["unpinned"]) std::cout << "  not pinned: " << u.get<std::string>() << "\n";
    std::cout << "where the pins narrowed its placement: causeway explain " << id << "\n";
  });
}

}  // namespace

void AddProvenanceCommands(Cli& c) {
  CLI::App* prov = AddProvenance(c);
  AddVerify(c, prov);
  AddDiff(c, prov);
  AddExport(c, prov);
  AddRecordFacts(c);
  AddRerun(c);
}

}  // namespace causeway::cli
