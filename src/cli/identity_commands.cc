#include "cli/identity_commands.h"

#include <iostream>
#include <memory>

#include "cli/table.h"

namespace causeway::cli {

using nlohmann::json;

namespace {

std::string Text(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// Workload tokens (Causeway's own and federated) and secret deliveries.
void PrintWorkloadCredentials(const json& j) {
  Table workload({"WORKLOAD TOKEN", "JOB", "IDENTITY", "EXPIRES", "STATE"});
  for (const json& t : j["workload_tokens"]) {
    workload.Add({Text(t, "jti"), Text(t, "job"), Text(t, "identity").empty() ? "causeway" : Text(t, "identity"),
                  Text(t, "expires_at"), Text(t, "state")});
  }
  workload.Print(std::cout);
  if (!j.value("secret_deliveries", json::array()).empty()) {
    std::cout << "\n";
    Table secrets({"SECRET", "JOB", "ATTEMPT", "AS", "STORE", "ENDS"});
    for (const json& d : j["secret_deliveries"]) {
      secrets.Add({Text(d, "reference"), Text(d, "job"), Text(d, "attempt"), Text(d, "delivery") + " " + Text(d, "variable"),
                   Text(d, "store"), Text(d, "ends")});
    }
    secrets.Print(std::cout);
  }
}

void PrintCredentials(const json& j) {
  std::cout << "credentials of " << Text(j, "user") << "\n";
  std::cout << "  directory: " << Text(j["directory"], "state") << "\n";
  Table tokens({"API TOKEN", "NAME", "SCOPES", "WHY", "STATE"});
  for (const json& t : j["api_tokens"]) {
    tokens.Add({Text(t, "id"), Text(t, "name"), t["scopes"].dump(), Text(t, "because"), Text(t, "state")});
  }
  Table accounts({"PROVIDER", "CLUSTER", "ACCOUNT", "USER", "STATE"});
  for (const json& a : j["provider_accounts"]) {
    accounts.Add({Text(a, "provider"), Text(a, "cluster"), Text(a, "kind"), Text(a, "account_user"),
                  Text(a, "state") + (a.contains("accounts") && !a["accounts"].empty() ? " " + a["accounts"].dump() : "")});
  }
  std::cout << "\n";
  tokens.Print(std::cout);
  std::cout << "\n";
  PrintWorkloadCredentials(j);
  std::cout << "\n";
  accounts.Print(std::cout);
  if (!j.value("breakglass", json::array()).empty()) {
    std::cout << "\n";
    Table grants({"BREAK-GLASS GRANT", "ROLE", "EXPIRES"});
    for (const json& b : j["breakglass"]) grants.Add({Text(b, "id"), Text(b, "role"), Text(b, "expires_at")});
    grants.Print(std::cout);
  }
  std::cout << "\n" << (j["retains_access"].get<bool>() ? "RETAINS ACCESS: " : "") << Text(j, "verdict") << "\n";
}

void PrintSteps(const json& j) {
  Table t({"STEP", "TARGET", "OK", "AUDIT SEQ", "DETAIL"});
  for (const json& s : j["steps"]) {
    t.Add({Text(s, "action"), Text(s, "target"), s["ok"].get<bool>() ? "yes" : "NO", Text(s, "seq"), Text(s, "detail")});
  }
  t.Print(std::cout);
  std::cout << (j["ok"].get<bool>() ? "done" : "some steps failed") << " (audit seq " << Text(j, "seq")
            << ")\n";
}

// What the access, people and break-glass commands parse into; kept as long
// as their callbacks (one per command line).
struct IdentityArgs {
  std::string user, action, team, groups;
  std::string role, reason, duration = "1h", id;
};

void PrintJsonReply(const json& j) { std::cout << j.dump(2) << "\n"; }

// access explain and confirm, credentials, people: who may do what, and carrying access through.
void AddAccess(CLI::App& app, Api& api, const Globals& g, int& rc, const std::shared_ptr<IdentityArgs>& st) {
  auto* access = app.add_subcommand("access", "who may do what, and why");
  access->require_subcommand(1);
  auto* explain = access->add_subcommand("explain", "the bindings that allow or deny USER ACTION [on TEAM]");
  explain->add_option("USER", st->user, "a userName, e.g. alice@corp.example")->required();
  explain->add_option("ACTION", st->action,
                      "submit, read, cancel, cancel-any, audit, cost, provision, outage, metrics, or a scope")
      ->required();
  explain->add_option("TEAM", st->team, "the team whose resource it is (team/nlp or nlp)");
  explain->add_option("--groups", st->groups, "groups to assume for someone the directory does not know (a,b)");
  explain->callback([&api, &g, &rc, st] {
    std::string team = st->team.rfind("team/", 0) == 0 ? st->team.substr(5) : st->team;
    std::string target = "/v1/access/explain?user=" + net::UrlEncode(st->user) + "&action=" + net::UrlEncode(st->action);
    if (!team.empty()) target += "&team=" + net::UrlEncode(team);
    if (!st->groups.empty()) target += "&groups=" + net::UrlEncode(st->groups);
    auto j = api.Call("GET", target, "", rc);
    if (!j) return;
    if (g.json_output) return PrintJsonReply(*j);
    std::cout << Text(*j, "user") << " " << Text(*j, "action") << (team.empty() ? "" : " on team " + team) << ": "
              << ((*j)["allowed"].get<bool>() ? "ALLOWED" : "DENIED") << " (needs " << Text(*j, "scope") << "; "
              << Text(*j, "why") << ")\n";
    std::cout << "groups: " << (*j)["groups"].dump() << "\n";
    Table t({"BINDING", "GROUP", "ROLE", "TEAM", "MEMBER", "CONFERS", "IN SCOPE", "ALLOWS"});
    auto yes = [](const json& v) { return v.get<bool>() ? "yes" : "no"; };
    for (const json& b : (*j)["bindings"]) {
      t.Add({Text(b, "source"), Text(b, "group"), Text(b, "role"), Text(b, "team").empty() ? "*" : Text(b, "team"),
             yes(b["member"]), yes(b["confers"]), yes(b["in_scope"]), yes(b["allows"])});
    }
    t.Print(std::cout);
    if (!(*j)["allowed"].get<bool>()) rc = kExitAuth;
  });

  auto* confirm = access->add_subcommand("confirm", "confirm a role binding made under break-glass (admin)");
  confirm->add_option("ID", st->id, "the binding (bnd_...)")->required();
  confirm->callback([&api, &g, &rc, st] {
    auto j = api.Call("POST", "/v1/access/bindings/" + net::UrlEncode(st->id) + "/confirm", "{}", rc);
    if (!j) return;
    if (g.json_output) return PrintJsonReply(*j);
    std::cout << "confirmed " << Text((*j)["binding"], "source") << ": " << Text((*j)["binding"], "group") << " -> "
              << Text((*j)["binding"], "role") << "\n";
  });

  auto* credentials = app.add_subcommand(
      "credentials", "every credential Causeway knows of for a person, or that a job's attempts hold, with its state");
  auto* user = credentials->add_option("--user", st->user, "a userName");
  auto* job = credentials->add_option("--job", st->id, "a job: its workload and federated tokens, its secrets delivered");
  user->excludes(job);
  credentials->callback([&api, &g, &rc, st] {
    if (st->user.empty() == st->id.empty()) {
      std::cerr << "error: give --user USER or --job JOB\n";
      rc = kExitUsage;
      return;
    }
    const bool of_job = !st->id.empty();
    auto j = api.Call("GET", of_job ? "/v1/jobs/" + net::UrlEncode(st->id) + "/credentials"
                                    : "/v1/people/" + net::UrlEncode(st->user) + "/credentials",
                      "", rc);
    if (!j) return;
    if (g.json_output) return PrintJsonReply(*j);
    if (!of_job) return PrintCredentials(*j);
    std::cout << "credentials held by job " << Text(*j, "job") << " of " << Text(*j, "user") << "\n\n";
    PrintWorkloadCredentials(*j);
    std::cout << "\n" << Text(*j, "verdict") << "\n";
  });

  auto* people = app.add_subcommand("people", "people's access (admin)");
  people->require_subcommand(1);
  for (auto [verb, what] : {std::pair<const char*, const char*>{"deactivate", "deactivate USER in the directory and deprovision them now"},
                             {"sync", "bring USER's provider accounts in line with the directory"}}) {
    auto* cmd = people->add_subcommand(verb, what);
    cmd->add_option("USER", st->user, "a userName")->required();
    cmd->callback([&api, &g, &rc, st, verb = std::string(verb)] {
      auto j = api.Call("POST", "/v1/people/" + net::UrlEncode(st->user) + "/" + verb, "{}", rc);
      if (!j) return;
      if (g.json_output) return PrintJsonReply(*j);
      PrintSteps(*j);
      if (!(*j)["ok"].get<bool>()) rc = kExitFailure;
    });
  }
}

// breakglass: time-boxed elevated access, asked for, approved, used and revoked.
void AddBreakglass(CLI::App& app, Api& api, const Globals& g, int& rc, const std::shared_ptr<IdentityArgs>& st) {
  auto* breakglass = app.add_subcommand("breakglass", "time-boxed elevated access, audited and announced");
  breakglass->require_subcommand(1);
  auto print_grant = [](const json& b) {
    std::cout << Text(b, "id") << ": " << Text(b, "role") << (Text(b, "team").empty() ? "" : " of " + Text(b, "team"))
              << " for " << Text(b, "user") << ", "
              << (!Text(b, "revoked_at").empty() ? "revoked " + Text(b, "revoked_at")
                  : !Text(b, "expires_at").empty() ? "active until " + Text(b, "expires_at")
                                                    : std::string("waiting for an approver"))
              << "\n";
  };
  auto* bg_request = breakglass->add_subcommand("request", "ask for an elevated role for a while");
  bg_request->add_option("--reason", st->reason, "why (read by auditors)")->required();
  bg_request->add_option("--duration", st->duration, "how long, e.g. 1h (at most the estate's max_duration)");
  bg_request->add_option("--role", st->role, "the role asked for (one the estate's identity.breakglass offers)")->required();
  bg_request->add_option("--team", st->team, "limit it to one team");
  bg_request->callback([&api, &g, &rc, st, print_grant] {
    json body = {{"role", st->role}, {"reason", st->reason}, {"duration", st->duration}};
    if (!st->team.empty()) body["team"] = st->team;
    auto j = api.Call("POST", "/v1/breakglass", body.dump(), rc);
    if (!j) return;
    if (g.json_output) return PrintJsonReply(*j);
    print_grant((*j)["breakglass"]);
    if (j->contains("credential")) {
      std::cout << "credential " << Text((*j)["credential"]["token"], "id") << " (use it for the elevated work; it ends with the grant)\n"
                << "secret (shown once, store it now): " << Text((*j)["credential"], "secret") << "\n";
    } else {
      std::cout << "once approved, get its credential with: causeway breakglass credential " << Text((*j)["breakglass"], "id") << "\n";
    }
  });
  auto* bg_credential = breakglass->add_subcommand("credential", "the credential of your approved grant (issued once)");
  bg_credential->add_option("ID", st->id, "the grant (bg_...)")->required();
  bg_credential->callback([&api, &g, &rc, st] {
    auto j = api.Call("POST", "/v1/breakglass/" + net::UrlEncode(st->id) + "/credential", "{}", rc);
    if (!j) return;
    if (g.json_output) return PrintJsonReply(*j);
    std::cout << "credential " << Text((*j)["token"], "id") << " until " << Text((*j)["token"], "expires_at")
              << " (it ends with the grant)\n"
              << "secret (shown once, store it now): " << Text(*j, "secret") << "\n";
  });
  for (const char* verb : {"approve", "revoke"}) {
    auto* cmd = breakglass->add_subcommand(verb, std::string(verb) + " a break-glass grant");
    cmd->add_option("ID", st->id, "the grant (bg_...)")->required();
    cmd->callback([&api, &g, &rc, st, print_grant, verb] {
      auto j = api.Call("POST", "/v1/breakglass/" + net::UrlEncode(st->id) + "/" + verb, "{}", rc);
      if (!j) return;
      if (g.json_output) return PrintJsonReply(*j);
      print_grant((*j)["breakglass"]);
    });
  }
  auto* bg_list = breakglass->add_subcommand("list", "break-glass grants of the last 90 days");
  bg_list->callback([&api, &g, &rc] {
    auto j = api.Call("GET", "/v1/breakglass", "", rc);
    if (!j) return;
    if (g.json_output) return PrintJsonReply(*j);
    Table t({"ID", "USER", "ROLE", "TEAM", "REASON", "APPROVED BY", "EXPIRES", "REVOKED", "MADE UNDER IT"});
    for (const json& b : (*j)["breakglass"]) {
      const json& made = b.value("created", json::object());
      size_t unconfirmed = 0;
      for (const json& x : made.value("bindings", json::array())) unconfirmed += x.value("confirmed", true) ? 0 : 1;
      std::string summary = std::to_string(made.value("tokens", json::array()).size()) + " tokens, " +
                            std::to_string(made.value("bindings", json::array()).size()) + " bindings" +
                            (unconfirmed ? " (" + std::to_string(unconfirmed) + " unconfirmed)" : "") + ", " +
                            std::to_string(made.value("links", json::array()).size()) + " links";
      t.Add({Text(b, "id"), Text(b, "user"), Text(b, "role"), Text(b, "team"), Text(b, "reason"), Text(b, "approved_by"),
             Text(b, "expires_at"), Text(b, "revoked_at"), summary});
    }
    t.Print(std::cout);
  });
}

// identity rotate-keys: the workload token signing keys.
void AddWorkloadKeys(CLI::App& app, Api& api, const Globals& g, int& rc) {
  auto* identity = app.add_subcommand("identity", "Causeway's own identity: workload token signing keys (admin)");
  identity->require_subcommand(1);
  auto* rotate = identity->add_subcommand("rotate-keys", "sign workload tokens with a new key; the old stays published");
  rotate->callback([&api, &g, &rc] {
    auto j = api.Call("POST", "/v1/identity/keys/rotate", "{}", rc);
    if (!j) return;
    if (g.json_output) return PrintJsonReply(*j);
    for (const json& k : (*j)["keys"]) std::cout << Text(k, "kid") << " " << Text(k, "alg") << "\n";
  });
}

}  // namespace

void AddIdentityCommands(CLI::App& app, Api& api, const Globals& g, int& rc) {
  auto st = std::make_shared<IdentityArgs>();
  AddAccess(app, api, g, rc, st);
  AddBreakglass(app, api, g, rc, st);
  AddWorkloadKeys(app, api, g, rc);
}

}  // namespace causeway::cli
