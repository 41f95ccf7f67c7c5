#include "cli/readiness_commands.h"

#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/table.h"
#include "net/http_client.h"

namespace causeway::cli {

using nlohmann::json;

namespace {

std::string OwnerText(const json& owner) {
  if (!owner.is_object()) return "-";
  if (owner.contains("group")) return "group " + owner["group"].get<std::string>();
  return owner.value("user", "-");
}

std::string StateText(const std::string& code) {
  std::string s = code;
  for (char& ch : s) ch = ch == '_' ? ' ' : ch;
  return s;
}

void AddControls(Cli& c, CLI::App* readiness) {
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  auto* controls = readiness->add_subcommand("controls", "the controls catalog: id, NIST SP 800-53 mapping, evidence");
  controls->callback([&] {
    auto j = api.Call("GET", "/v1/readiness/controls", "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    Table t({"control", "nist", "evidenced by"});
    for (const json& ctl : (*j)["controls"]) {
      std::string nist;
      for (const json& n : ctl["nist"]) nist += (nist.empty() ? "" : " ") + n.get<std::string>();
      t.Add({ctl["id"], nist, ctl["evidenced_by"]});
    }
    t.Print(std::cout);
  });
}

// readiness questions [--provider P]: the four procurement questions.
void AddQuestions(Cli& c, CLI::App* readiness) {
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  auto* q = readiness->add_subcommand("questions", "the four questions before placing a production workload, per provider");
  std::string& provider = c.Keep<std::string>();
  q->add_option("--provider", provider, "only this provider's answers");
  q->callback([&] {
    auto j = api.Call("GET", "/v1/readiness/questions" + (provider.empty() ? "" : "?provider=" + net::UrlEncode(provider)),
                      "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    Table t({"provider", "question", "answer", "why"});
    for (const json& a : (*j)["answers"]) t.Add({a["provider"], a["text"], a["answer"], a["reason"]});
    t.Print(std::cout);
  });
}

// readiness export --oscal -o FILE: the report as an OSCAL 1.1
// assessment-results document.
void AddExport(Cli& c, CLI::App* readiness) {
  Api& api = c.api;
  int& rc = c.rc;
  auto* exp = readiness->add_subcommand("export", "the readiness report as an OSCAL 1.1 assessment-results document");
  bool& oscal = c.Keep<bool>(false);
  std::string& out = c.Keep<std::string>();
  exp->add_flag("--oscal", oscal, "OSCAL 1.1 assessment results (JSON); the only format so far")->required();
  exp->add_option("-o,--output", out, "write to this file (default: stdout)");
  exp->callback([&] {
    auto j = api.Call("GET", "/v1/readiness/oscal", "", rc);
    if (!j) return;
    if (Status st = WriteOut(out, j->dump(2) + "\n"); !st.ok()) {
      rc = Fail(st);
      return;
    }
    if (!out.empty() && out != "-") {
      std::cerr << "wrote " << (*j)["assessment-results"]["results"][0]["findings"].size() << " findings to " << out
                << "\n";
    }
  });
}

}  // namespace

void AddReadinessCommands(Cli& c) {
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  auto* readiness = c.app.add_subcommand(
      "readiness", "every control per provider: in place, partly, not in place, with its owner and evidence");
  std::string& provider = c.Keep<std::string>();
  bool& fail_on_gaps = c.Keep<bool>(false);
  readiness->add_option("--provider", provider, "only this provider's controls");
  readiness->add_flag("--fail-on-gaps", fail_on_gaps,
                      "exit 10 when a control is not in place (or only partly), for a scheduled check");
  readiness->require_subcommand(0, 1);
  readiness->callback([&, readiness] {
    if (!readiness->get_subcommands().empty()) return;
    auto j = api.Call("GET", "/v1/readiness" + (provider.empty() ? "" : "?provider=" + net::UrlEncode(provider)), "", rc);
    if (!j) return;
    int gaps = 0;
    for (const json& f : (*j)["findings"]) {
      std::string state = f["state"];
      gaps += state == "not_in_place" || state == "partly" ? 1 : 0;
    }
    if (g.json_output) {
      PrintJson(*j);
    } else {
      Table t({"control", "provider", "state", "owner", "reason"});
      for (const json& f : (*j)["findings"]) {
        t.Add({f["control"], f["provider"], StateText(f["state"]), OwnerText(f["owner"]), f["reason"]});
      }
      t.Print(std::cout);
      std::cout << gaps << " of " << (*j)["findings"].size() << " control checks are not (fully) in place\n";
    }
    if (fail_on_gaps && gaps > 0 && rc == kExitOk) rc = kExitGaps;
  });
  AddControls(c, readiness);
  AddExport(c, readiness);
  AddQuestions(c, readiness);
}

}  // namespace causeway::cli
