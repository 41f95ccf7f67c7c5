// The web console end to end: the real server, a real OpenID Connect
// provider (oauth2-mock-server) and Debian's Chromium driven by
// playwright-core (tests/peers/console-e2e.mjs), plus the security checks
// a browser cannot make on purpose: a write without the CSRF token, from
// another origin, or signing a browser in from another site. Screenshots
// go to the test's output (console-screenshots/ in the build directory).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "causeway/estate.h"
#include "causeway/subprocess.h"
#include "node_peer.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

std::string Spec(const std::string& name, const std::string& team, const std::string& gpus, const std::string& duration) {
  return "name: " + name + "\nresources:\n  accelerators: " + gpus + "\n  labels: {team: " + team +
         ", owner: alice@corp.example}\nrun: python " + name + ".py\nsim: {duration: " + duration + "}\n";
}

class ConsoleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = ChromiumMissing(); !why.empty()) GTEST_SKIP() << "the console in Chromium: " << why;
    idp_ = std::make_unique<NodePeer>("idp.mjs", std::vector<std::string>{"0"},
                                      std::vector<std::string>{"LOGIN_EMAIL=alice@corp.example",
                                                               "LOGIN_GROUPS=[\"nlp-researchers\"]"});
    issuer_ = idp_->first_line().substr(idp_->first_line().find(' ') + 1);
    dir_ = std::make_unique<TempDir>("console");
    // The reaper only warns here, so an idle job stays idle (and running) for the GPUs page.
    std::string estate(DefaultEstateYaml());
    const std::string exempt = "exempt_labels: [keep-alive]}";
    ASSERT_NE(estate.find(exempt), std::string::npos);
    estate.replace(estate.find(exempt), exempt.size(), "exempt_labels: [keep-alive], action: warn}");
    std::ofstream(dir_->path() + "/estate.yaml") << estate << R"(
identity:
  oidc:
    issuer: )" << issuer_ << R"(
    audience: causeway
  breakglass: {max_duration: 2h, roles: [auditor], groups: [nlp-researchers]}
access:
  - {group: nlp-researchers, role: researcher, team: nlp}
  - {group: platform-admins, role: admin}
)";
    server_ = ServerProcess::Start(dir_->path() + "/data",
                                   {"--estate", dir_->path() + "/estate.yaml", "--sim-speed", "600"});
    ASSERT_TRUE(server_);
  }

  json Call(const std::string& method, const std::string& target, const std::string& body = "",
            std::map<std::string, std::string> headers = {}, int* status = nullptr) {
    if (!headers.count("Cookie") && !headers.count("Authorization")) headers["Authorization"] = "Bearer " + server_->admin_token();
    if (!body.empty() && !headers.count("Content-Type")) headers["Content-Type"] = "application/json";
    auto r = server_->Client().Send(method, target, body, {headers.begin(), headers.end()});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    if (!r.ok()) return json();
    if (status) *status = r->status;
    last_headers_ = r->headers;
    return json::parse(r->body, nullptr, false);
  }
  std::string Submit(const std::string& spec) {
    json r = Call("POST", "/v1/jobs", json{{"spec", spec}}.dump());
    EXPECT_TRUE(r.contains("job")) << r.dump();
    return r.contains("job") ? r["job"]["id"].get<std::string>() : "";
  }
  std::string StateOf(const std::string& id) { return Call("GET", "/v1/jobs/" + id).value("state", ""); }
  // Asks `done` until it holds, for up to 60 s; each question is a request
  // to the server, so the wait ends as soon as the server's state does.
  static bool Eventually(const std::function<bool()>& done) {
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
         std::chrono::steady_clock::now() < until;) {
      if (done()) return true;
      std::this_thread::yield();
    }
    return done();
  }

  // Where the browser scripts put their screenshots.
  static std::string Shots() { return std::filesystem::current_path().string() + "/console-screenshots"; }
  // Runs a browser script of tests/peers (console-e2e.mjs, ...) against the
  // server with `config` (the server's address, the admin token and Shots()
  // added) and returns what it saw: a copy of its report's "seen", so a key
  // the script never reached (it stopped early) reads as null and fails its
  // expectation instead of aborting the test. nullopt when it gave no report.
  std::optional<json> Browse(const std::string& script, json config, std::chrono::seconds limit) {
    config["base"] = server_->url();
    config["admin_token"] = server_->admin_token();
    config["shots"] = Shots();
    const std::string path = dir_->path() + "/" + script + ".json";
    std::ofstream(path) << config.dump();
    auto run = RunProcess({"node", PeersDir() + "/" + script, path}, {}, "", limit);
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    if (!run.ok()) return std::nullopt;
    json report = json::parse(run->out, nullptr, false);
    EXPECT_TRUE(report.is_object()) << run->out << run->err;
    if (!report.is_object()) return std::nullopt;
    EXPECT_EQ(run->exit_code, 0) << report["failures"].dump(1) << "\n" << run->err;
    return report.value("seen", json::object());
  }

  std::unique_ptr<NodePeer> idp_;
  std::string issuer_;
  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<ServerProcess> server_;
  std::map<std::string, std::string> last_headers_;
};

TEST_F(ConsoleTest, PeopleSignInSeeTheirJobsAndActAsThemselvesInChromium) {
  // Work that finishes (costs that no longer move), for three teams.
  std::vector<std::string> done = {Submit(Spec("nlp-eval", "nlp", "H100:1", "10m")),
                                   Submit(Spec("vision-train", "vision", "H100:8", "20m")),
                                   Submit(Spec("research-batch", "research", "L4:1", "10m"))};
  // A notebook that holds an H200 and does nothing (nebius, the only H200s): the reaper warns it.
  std::string idle = Submit("name: idle-notebook\nresources:\n  accelerators: H200:1\n  labels: {team: nlp, owner: "
                            "alice@corp.example}\nrun: jupyter lab\nsim: {duration: 100h, utilization: 0}\n");
  ASSERT_TRUE(Eventually([&] {
    return std::all_of(done.begin(), done.end(), [&](const std::string& id) { return StateOf(id) == "succeeded"; });
  }));
  ASSERT_TRUE(Eventually([&] { return !Call("GET", "/v1/audit?action=reaper.warn&resource=job/" + idle)["events"].empty(); }));
  ASSERT_EQ(StateOf(idle), "running");
  // Then every provider down but nebius (which has no H100 or L4): what is
  // submitted now waits, and says why.
  std::set<std::string> providers;
  json clusters = Call("GET", "/v1/clusters");
  for (const json& c : clusters["clusters"]) providers.insert(c["provider"].get<std::string>());
  for (const auto& p : providers) {
    if (p != "nebius") Call("POST", "/v1/providers/" + p + "/outage", R"({"down": true})");
  }
  std::string pending = Submit(Spec("vision-sweep", "vision", "H100:8", "1h"));
  // The idle notebook is the one cancelled with the mouse (once the GPUs page has shown it idle).
  std::string cancel = idle;
  std::string keyboard_cancel = Submit(Spec("research-b", "research", "L4:1", "1h"));
  // Two more for vision's queue: a later one, and a later urgent one that goes first.
  std::string later = Submit(Spec("vision-later", "vision", "H100:8", "1h"));
  std::string urgent = Submit(Spec("vision-urgent", "vision", "H100:8", "1h") + "priority: high\n");
  // Once the scheduler has weighed them (their candidates are in explain), they stay pending.
  for (const std::string& id : {pending, later, urgent}) {
    ASSERT_TRUE(Eventually([&] { return Call("GET", "/v1/jobs/" + id + "/explain").contains("scheduler"); }));
    ASSERT_EQ(StateOf(id), "pending");
  }
  // The provider the vision job ran at, and which finished jobs ran there.
  auto provider_of = [&](const std::string& cluster) {
    for (const json& c : clusters["clusters"]) {
      if (c["name"] == cluster) return c["provider"].get<std::string>();
    }
    return std::string();
  };
  auto cluster_of = [&](const std::string& id) {
    json job = Call("GET", "/v1/jobs/" + id);
    return job["attempts"].empty() ? std::string() : job["attempts"].back().value("cluster", "");
  };
  const std::string filter_provider = provider_of(cluster_of(done[1]));
  ASSERT_FALSE(filter_provider.empty());
  json ran_there = json::array();
  for (const std::string& id : {done[0], done[1], done[2], idle}) {
    if (provider_of(cluster_of(id)) == filter_provider) ran_there.push_back(Call("GET", "/v1/jobs/" + id)["name"]);
  }
  std::sort(ran_there.begin(), ran_there.end());

  // A provider's own log, imported: alice's actions on CoreWeave's Kubernetes.
  std::ifstream in(std::string(CAUSEWAY_SOURCE_DIR) + "/examples/audit/k8s-audit.jsonl");
  std::stringstream log;
  log << in.rdbuf();
  int status = 0;
  json imported = Call("POST", "/v1/audit/imports?source=k8s&provider=coreweave", log.str(),
                       {{"Content-Type", "application/octet-stream"}}, &status);
  ASSERT_EQ(status, 200) << imported.dump();

  // A provider's bill (FOCUS), imported: the cost page shows it beside
  // what Causeway metered.
  std::ifstream bill_in(std::string(CAUSEWAY_SOURCE_DIR) + "/examples/bills/nebius-2026-10.csv");
  std::stringstream bill;
  bill << bill_in.rdbuf();
  json billed = Call("POST", "/v1/cost/bills?provider=nebius&name=nebius-2026-10.csv", bill.str(),
                     {{"Content-Type", "text/csv"}}, &status);
  ASSERT_EQ(status, 201) << billed.dump();

  // People in the directory: alice (nlp-researchers, who may ask for
  // break-glass) and boss (platform-admins: admin, who may approve). Alice
  // asks; boss approves from the console.
  std::string idp_token = Call("POST", "/v1/tokens", json{{"name", "idp"}, {"scopes", {"scim:provision"}}}.dump())["secret"];
  auto scim = [&](const std::string& path, const json& body) {
    int st = 0;
    json r = Call("POST", path, body.dump(), {{"Authorization", "Bearer " + idp_token}, {"Content-Type", "application/scim+json"}}, &st);
    EXPECT_EQ(st, 201) << r.dump();
    return r;
  };
  for (auto [user, group] : {std::pair{"alice@corp.example", "nlp-researchers"}, {"boss@corp.example", "platform-admins"}}) {
    json u = scim("/scim/v2/Users", {{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:User"}}, {"userName", user}});
    scim("/scim/v2/Groups", {{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:Group"}}, {"displayName", group},
                             {"members", {{{"value", u["id"]}}}}});
  }
  auto person_token = [&](const std::string& user) {
    return Call("POST", "/v1/tokens", json{{"name", user + "-cli"}, {"scopes", {"admin"}}, {"user", user}}.dump())["secret"]
        .get<std::string>();
  };
  const std::string alice = person_token("alice@corp.example"), boss = person_token("boss@corp.example");
  json asked = Call("POST", "/v1/breakglass", json{{"role", "auditor"}, {"reason", "INC-7: triage of a stuck queue"}}.dump(),
                    {{"Authorization", "Bearer " + alice}, {"Content-Type", "application/json"}}, &status);
  ASSERT_EQ(status, 201) << asked.dump();
  const std::string grant = asked["breakglass"]["id"];

  const std::optional<json> browsed = Browse("console-e2e.mjs",
                                             {{"pending", pending},
                                              {"cancel", cancel},
                                              {"keyboard_cancel", keyboard_cancel},
                                              {"other_team_job", done[1]},
                                              {"researcher", "alice@corp.example"},
                                              {"researcher_team", "nlp"},
                                              {"provider_person", "alice@corp.example"},
                                              {"provider", "coreweave"},
                                              {"filter_provider", filter_provider},
                                              {"queue", "vision"},
                                              {"approver_token", boss},
                                              {"breakglass", grant},
                                              {"remove_cluster", clusters["clusters"][0]["name"]}},
                                             std::chrono::seconds(240));
  ASSERT_TRUE(browsed);
  json seen = *browsed;

  // What the browser showed agrees with the server.
  EXPECT_EQ(seen["whoami"], "bootstrap-admin");
  EXPECT_EQ(seen["researcher_whoami"], "alice@corp.example");
  EXPECT_EQ(seen["researcher_teams"], json::array({"nlp"}));
  EXPECT_EQ(StateOf(cancel), "cancelled");
  EXPECT_EQ(StateOf(keyboard_cancel), "cancelled");
  EXPECT_EQ(StateOf(pending), "pending");
  // The cancellations were audited as the person who signed in.
  json audit = Call("GET", "/v1/audit?action=job.cancel&resource=job/" + cancel);
  ASSERT_EQ(audit["events"].size(), 1u) << audit.dump();
  EXPECT_EQ(audit["events"][0]["actor"], Call("GET", "/v1/whoami")["token_id"]);
  json signins = Call("GET", "/v1/audit?action=console.sign_in");
  // The admin's token, boss (who approved break-glass), alice with the IdP.
  ASSERT_EQ(signins["events"].size(), 3u) << signins.dump();
  EXPECT_EQ(signins["events"][1]["resource"], "person/boss@corp.example");
  EXPECT_EQ(signins["events"][2]["actor"], "user:alice@corp.example");
  EXPECT_EQ(signins["events"][2]["details"]["method"], "oidc");

  // The provider filter showed exactly the finished jobs that ran there, on its clusters.
  EXPECT_EQ(seen["provider_filtered"], ran_there) << seen.dump();
  for (const json& c : seen["provider_filtered_clusters"]) EXPECT_EQ(provider_of(c.get<std::string>()), filter_provider);
  // The queue page's order is the scheduler's: priority first, then age;
  // and the pending job's position there is the one planning gives.
  EXPECT_EQ(seen["queue_order"], json::parse(R"([[1, "vision-urgent"], [2, "vision-sweep"], [3, "vision-later"]])"))
      << seen.dump();
  EXPECT_EQ(Call("GET", "/v1/plan/jobs/" + pending)["jobs"][0]["position"]["position"], 2);
  // The queues page's history counted the four jobs that started, as the API does.
  EXPECT_EQ(seen["history_started"], 4) << seen.dump();
  int64_t started = 0;
  json history = Call("GET", "/v1/queues/history?days=14");
  for (const json& row : history["rows"]) started += row["started"].get<int64_t>();
  EXPECT_EQ(started, 4) << history.dump();
  // The GPUs page showed the warned notebook as idle now, while it ran.
  EXPECT_EQ(seen["idle_now"], json::array({"idle-notebook"})) << seen.dump();

  // The audit page: newest first, and the chain's state once verified.
  EXPECT_EQ(seen["audit_newest_first"], true);
  EXPECT_NE(seen.value("chain", "").find("intact"), std::string::npos) << seen.dump();
  // Break-glass approved from the console by an admin through a group.
  json grants = Call("GET", "/v1/breakglass");
  ASSERT_EQ(grants["breakglass"].size(), 1u) << grants.dump();
  EXPECT_EQ(grants["breakglass"][0]["state"], "active") << grants.dump();
  EXPECT_EQ(grants["breakglass"][0]["approved_by"], "boss@corp.example");

  // The planning page showed the replay the API gives for the same question.
  json plan = Call("POST", "/v1/plan/history", json{{"since", "30d"}, {"remove_cluster", {clusters["clusters"][0]["name"]}}}.dump());
  ASSERT_TRUE(plan.contains("headline_rows")) << plan.dump();
  EXPECT_EQ(seen["plan_head"], plan["headline_rows"][0]) << seen.dump();
  EXPECT_EQ(seen["plan_first_row"], plan["headline_rows"][1]) << seen.dump();
  EXPECT_EQ(plan["headline_rows"][1][0], "jobs");

  // The job page asks explain without the forecast and planning after.
  EXPECT_TRUE(Call("GET", "/v1/jobs/" + pending + "/explain").contains("expected"));
  EXPECT_FALSE(Call("GET", "/v1/jobs/" + pending + "/explain?forecast=false").contains("expected"));
  EXPECT_NE(seen.value("expected_start", "").find("xpected"), std::string::npos) << seen.dump();

  // The cost page's total is the API's.
  std::string period = seen.value("cost_period", "");
  json showback = Call("GET", "/v1/cost/showback?source=metered&by=team,month&period=" + net::UrlEncode(period));
  double api_total = 0;
  for (const json& row : showback["rows"]) api_total += std::stod(row["cost"].get<std::string>());
  ASSERT_GT(api_total, 0);
  std::string shown = seen.value("cost_total", "");
  ASSERT_FALSE(shown.empty());
  EXPECT_NEAR(std::stod(shown), api_total, 0.006) << shown;
  EXPECT_NE(shown.find(showback["currency"].get<std::string>()), std::string::npos);

  for (const char* shot : {"jobs.png", "pending-job.png", "cost.png", "audit.png", "researcher-jobs.png"}) {
    EXPECT_TRUE(std::filesystem::exists(Shots() + "/" + shot)) << shot;
  }
}

TEST_F(ConsoleTest, TheServerRefusesWhatABrowserWouldNotSendOnPurpose) {
  int status = 0;
  // The page: strict CSP, served from the binary.
  auto page = server_->Client().Send("GET", "/", "", {});
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->status, 200);
  EXPECT_NE(page->headers["content-security-policy"].find("default-src 'none'"), std::string::npos);
  EXPECT_EQ(page->headers["content-security-policy"].find("unsafe"), std::string::npos);
  EXPECT_NE(page->body.find("/assets/app.js"), std::string::npos);

  std::string token_body = json{{"token", server_->admin_token()}}.dump();
  std::string origin = server_->url();
  // Signing a browser in from another site, or with no Origin: refused.
  Call("POST", "/auth/token", token_body, {{"Cookie", ""}, {"Origin", "http://evil.example"}}, &status);
  EXPECT_EQ(status, 403);
  Call("POST", "/auth/token", token_body, {{"Cookie", ""}, {"Sec-Fetch-Site", "cross-site"}, {"Origin", origin}}, &status);
  EXPECT_EQ(status, 403);
  Call("POST", "/auth/token", json{{"token", "cw_not_a_token"}}.dump(), {{"Cookie", ""}, {"Origin", origin}}, &status);
  EXPECT_EQ(status, 401);
  json in = Call("POST", "/auth/token", token_body, {{"Cookie", ""}, {"Origin", origin}}, &status);
  ASSERT_EQ(status, 200) << in.dump();
  std::string set_cookie = last_headers_["set-cookie"];
  EXPECT_NE(set_cookie.find("HttpOnly"), std::string::npos) << set_cookie;
  EXPECT_NE(set_cookie.find("SameSite=Strict"), std::string::npos) << set_cookie;
  EXPECT_NE(set_cookie.find("Max-Age="), std::string::npos) << set_cookie;
  EXPECT_EQ(set_cookie.find("Secure"), std::string::npos) << "plain http: not Secure, " << set_cookie;
  std::string cookie = set_cookie.substr(0, set_cookie.find(';'));
  std::string csrf = in["csrf"];
  // The secret token is not in what the browser keeps.
  EXPECT_EQ(set_cookie.find(server_->admin_token()), std::string::npos);

  std::string job = Submit(Spec("research-a", "research", "L4:1", "1h"));
  // Reads with the cookie work; a write needs the CSRF token and our Origin.
  Call("GET", "/v1/jobs/" + job, "", {{"Cookie", cookie}}, &status);
  EXPECT_EQ(status, 200);
  json refused = Call("POST", "/v1/jobs/" + job + "/cancel", "{}", {{"Cookie", cookie}, {"Origin", origin}}, &status);
  EXPECT_EQ(status, 403);
  EXPECT_NE(refused.dump().find("CSRF"), std::string::npos) << refused.dump();
  Call("POST", "/v1/jobs/" + job + "/cancel", "{}",
       {{"Cookie", cookie}, {"Origin", origin}, {"X-CSRF-Token", csrf + "x"}}, &status);
  EXPECT_EQ(status, 403);
  refused = Call("POST", "/v1/jobs/" + job + "/cancel", "{}",
                 {{"Cookie", cookie}, {"Origin", "http://evil.example"}, {"X-CSRF-Token", csrf}}, &status);
  EXPECT_EQ(status, 403);
  EXPECT_NE(refused.dump().find("cross-origin"), std::string::npos) << refused.dump();
  Call("GET", "/v1/jobs/" + job, "", {{"Cookie", cookie}, {"Origin", "http://evil.example"}}, &status);
  EXPECT_EQ(status, 403);
  Call("POST", "/v1/jobs/" + job + "/cancel", "{}", {{"Cookie", cookie}, {"X-CSRF-Token", csrf}}, &status);
  EXPECT_EQ(status, 403) << "a write without an Origin";
  EXPECT_NE(StateOf(job), "cancelled");
  Call("POST", "/v1/jobs/" + job + "/cancel", "{}", {{"Cookie", cookie}, {"Origin", origin}, {"X-CSRF-Token", csrf}},
       &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(StateOf(job), "cancelled");

  // Signing out ends the session and clears the cookie.
  Call("POST", "/auth/logout", "{}", {{"Cookie", cookie}, {"Origin", origin}, {"X-CSRF-Token", csrf}}, &status);
  EXPECT_EQ(status, 200);
  EXPECT_NE(last_headers_["set-cookie"].find("Max-Age=0"), std::string::npos);
  Call("GET", "/v1/whoami", "", {{"Cookie", cookie}}, &status);
  EXPECT_EQ(status, 401);
  json session = Call("GET", "/auth/session", "", {{"Cookie", cookie}}, &status);
  EXPECT_EQ(session["signed_in"], false);
  EXPECT_EQ(session["oidc"], true);
  // A made-up or oversized cookie is no session.
  Call("GET", "/v1/whoami", "", {{"Cookie", "causeway_session=" + std::string(5000, 'a')}}, &status);
  EXPECT_EQ(status, 401);
  // A sign-in the IdP returns with an unknown state: back to sign-in, no cookie.
  auto cb = server_->Client().Send("GET", "/auth/callback?state=forged&code=x", "", {});
  ASSERT_TRUE(cb.ok());
  EXPECT_EQ(cb->status, 302);
  EXPECT_EQ(cb->headers.count("set-cookie"), 0u);
  // With a fixed reason, never text of the request's (a link cannot put words on the page).
  EXPECT_EQ(cb->headers["location"], "/#/signin/expired");
  auto idp_refused = server_->Client().Send("GET", "/auth/callback?error=Call%20555-0100%20to%20unlock", "", {});
  ASSERT_TRUE(idp_refused.ok());
  EXPECT_EQ(idp_refused->headers["location"], "/#/signin/idp-refused");
}

// A service on the simulated estate (its replicas are simulated attempts),
// updated to a new revision while it serves: the API shows the rolling
// replacement, and its page in Chromium shows the replicas per place with
// their revision, the endpoint, the mode and the transitions, as the API
// does.
TEST_F(ConsoleTest, AServicesPageShowsItsReplicasPerPlaceAfterARollingUpdate) {
  std::ifstream in(std::string(CAUSEWAY_SOURCE_DIR) + "/examples/services/chat.yaml");
  std::stringstream chat;
  chat << in.rdbuf();
  int status = 0;
  json up = Call("POST", "/v1/services", json{{"spec", chat.str()}, {"file", "chat.yaml"}}.dump(), {}, &status);
  ASSERT_EQ(status, 201) << up.dump();
  auto shown = [&] { return Call("GET", "/v1/services/chat"); };
  auto all_at = [&](const json& s, int64_t revision) {
    if (s.value("mode", "") != "normal" || s["replicas"].size() != 3) return false;
    for (const json& r : s["replicas"]) {
      if (r["state"] != "ready" || r["revision"] != revision) return false;
    }
    return true;
  };
  ASSERT_TRUE(Eventually([&] { return all_at(shown(), 1); })) << shown().dump(1);

  // A new revision: a bigger model, replaced replica by replica.
  std::string next = chat.str();
  const std::string model = "Qwen/Qwen2.5-1.5B-Instruct";
  next.replace(next.find(model), model.size(), "Qwen/Qwen2.5-3B-Instruct");
  json updated = Call("PUT", "/v1/services/chat", json{{"spec", next}, {"file", "chat-v2.yaml"}}.dump(), {}, &status);
  ASSERT_EQ(status, 200) << updated.dump();
  EXPECT_EQ(updated["revision"], 2);
  EXPECT_EQ(updated["update_mode"], "rolling");
  ASSERT_TRUE(Eventually([&] { return all_at(shown(), 2); })) << shown().dump(1);
  json ended = Call("GET", "/v1/audit?action=service.replica_end&resource=service/chat");
  ASSERT_EQ(ended["events"].size(), 3u) << ended.dump(1);
  for (const json& e : ended["events"]) {
    EXPECT_NE(e["details"].value("reason", "").find("the service was updated"), std::string::npos) << e.dump();
  }
  // Never a pass without a ready replica: the mode stayed normal.
  const json s = shown();
  ASSERT_EQ(s["transitions"].size(), 1u) << s.dump(1);
  EXPECT_EQ(s["transitions"][0]["to"], "normal");

  const std::optional<json> browsed = Browse("console-service.mjs", {{"service", "chat"}}, std::chrono::seconds(120));
  ASSERT_TRUE(browsed);
  json seen = *browsed;
  // The list's row: name, team, mode, ready of the target, endpoint.
  ASSERT_GE(seen["listed_row"].size(), 5u) << seen.dump(1);
  EXPECT_EQ(seen["listed_row"][0], "chat");
  EXPECT_EQ(seen["listed_row"][1], "vision");
  EXPECT_EQ(seen["listed_row"][2], "normal");
  EXPECT_EQ(seen["listed_row"][3], "3 (target 2)") << seen.dump(1);
  EXPECT_EQ(seen["listed_row"][4], s["endpoint"]) << seen.dump(1);
  EXPECT_NE(seen.value("mode", "").find("normal"), std::string::npos) << seen.dump(1);
  EXPECT_EQ(seen["endpoint"], s["endpoint"]);
  EXPECT_EQ(seen["revision"], "2 (updates rolling)");
  const json two_ready = json::parse(R"([{"revision": "2", "state": "ready"}, {"revision": "2", "state": "ready"}])");
  EXPECT_EQ(seen["places"]["Preferred (coreweave-us-h100)"], two_ready) << seen.dump(1);
  EXPECT_EQ(seen["places"]["Alternate (gcp-us-a100)"], json::parse(R"([{"revision": "2", "state": "ready"}])"))
      << seen.dump(1);
  EXPECT_EQ(seen["transitions"], json::array({"normal"}));
  EXPECT_TRUE(std::filesystem::exists(Shots() + "/service.png"));

  Call("DELETE", "/v1/services/chat", "", {}, &status);
  EXPECT_EQ(status, 200);
  ASSERT_TRUE(Eventually([&] {
    int st = 0;
    Call("GET", "/v1/services/chat", "", {}, &st);
    return st == 404;
  }));
}

}  // namespace
}  // namespace causeway::testing
