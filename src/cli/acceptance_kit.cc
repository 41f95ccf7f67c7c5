#include "cli/acceptance_kit.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "causeway/clock.h"
#include "causeway/crypto.h"
#include "cli/commands.h"
#include "cli/table.h"

namespace causeway::cli::acceptance {

EstateView ReadEstate(Session& admin) {
  EstateView v;
  std::set<std::string> types;
  auto r = admin.Do("GET", "/v1/clusters");
  if (r.status != 200) return v;
  for (const json& c : r.body["clusters"]) {
    ClusterInfo info{c.value("provider", ""), c.value("region", ""), c.value("zone", ""), {}, ""};
    if (c.contains("storage")) info.storage = c["storage"].get<std::vector<std::string>>();
    for (const json& p : c["node_pools"]) {
      if (info.first_type.empty()) info.first_type = p.value("gpu_type", "");
      types.insert(p.value("gpu_type", ""));
    }
    v.clusters[c.value("name", "")] = info;
  }
  types.erase("");
  std::string gpu;
  for (const std::string& t : types) gpu += (gpu.empty() ? "{" : ", ") + t + ": 1";
  v.any_gpu = gpu.empty() ? "{}" : gpu + "}";
  return v;
}

std::string Tag() { return Sha256Hex(RandomBytes(8)).substr(0, 10); }

namespace {

// The steps as the report lists them, and as a table.
json StepsJson(const Steps& steps, Table& t) {
  json js = json::array();
  int n = 0;
  for (const Step& s : steps) {
    json j = {{"step", s.name},
              {"ok", s.ok},
              {"result", s.not_applicable ? "not_applicable" : s.ok ? "pass" : "fail"},
              {"detail", s.detail},
              {"audit_seqs", s.evidence}};
    if (s.ms) j["applied_ms"] = *s.ms;
    js.push_back(j);
    std::string seqs;
    for (int64_t q : s.evidence) seqs += (seqs.empty() ? "" : ",") + std::to_string(q);
    t.Add({std::to_string(++n), s.name, s.not_applicable ? "not applicable" : s.ok ? "pass" : "FAIL",
           seqs.empty() ? "-" : seqs, s.detail});
  }
  return js;
}

// Records the run's verdict on the server (in its audit trail), naming the
// report by the digest of its JSON as written. The server's answer.
Answer Record(const Globals& g, const json& report, const std::string& as_json, const json& subject) {
  json run = {{"test", report["test"]},         {"passed", report["passed"]},
              {"started", report["started"]},   {"finished", report["finished"]},
              {"report_sha256", Sha256Hex(as_json)}, {"steps", json::array()}};
  for (const json& s : report["steps"]) {
    run["steps"].push_back({{"step", s["step"]}, {"result", s["result"]}, {"detail", s["detail"]},
                            {"audit_seqs", s["audit_seqs"]}});
  }
  for (const char* key : {"provider", "recovery_ms", "objective_ms"}) {
    if (subject.contains(key) && !subject[key].is_null()) run[key] = subject[key];
  }
  Session admin(g, AdminToken(g));
  return admin.Do("POST", "/v1/acceptance/runs", run);
}

}  // namespace

int Conclude(const Globals& g, const Options& o, const std::string& test, const std::string& started,
             const Steps& steps, json subject) {
  bool passed = !steps.empty() && std::all_of(steps.begin(), steps.end(), [](const Step& s) { return s.ok; });
  json report = {{"test", test}, {"server", g.server}, {"started", started},
                 {"finished", FormatRfc3339(RealClock().Now())}, {"passed", passed}};
  report.update(subject);
  Table t({"#", "STEP", "RESULT", "AUDIT EVENTS", "DETAIL"});
  report["steps"] = StepsJson(steps, t);
  std::string base = o.out_dir + "/acceptance-" + test + "-" + started.substr(0, 19);
  for (char& c : base) {
    if (c == ':') c = '-';
  }
  std::string as_json = report.dump(2) + "\n";
  std::ofstream(base + ".json") << as_json;
  Answer recorded = Record(g, report, as_json, subject);
  std::string recorded_as = recorded.status == 201
                                ? "recorded as audit event " + std::to_string(recorded.body["run"].value("seq", 0))
                                : "NOT recorded on the server: " + ErrorOf(recorded);

  std::ostringstream text;
  text << test << " acceptance test against " << g.server << " (" << started << ")\n";
  if (subject.contains("summary")) text << subject["summary"].get<std::string>() << "\n";
  text << "\n";
  t.Print(text);
  text << "\n" << (passed ? "PASSED" : "FAILED") << "; " << recorded_as << "\n";
  std::ofstream(base + ".txt") << text.str();
  if (g.json_output) {
    report["recorded"] = recorded.status == 201 ? recorded.body["run"]["seq"] : json(nullptr);
    std::cout << report.dump(2) << "\n";
  } else {
    std::cout << text.str() << "report: " << base << ".json, " << base << ".txt\n";
  }
  if (!passed) return kExitFailure;
  return recorded.status == 201 ? kExitOk : kExitFailure;
}

}  // namespace causeway::cli::acceptance
