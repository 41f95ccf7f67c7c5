// Planning against the real binary: the demo's jobs, run live on the demo
// estate and read back from the server's ledger, replay through the same
// scheduler to the same admission order and placements; and the trace
// replay's table, JSON and HTML from the command line.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "causeway/subprocess.h"
#include "node_peer.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

const std::string kSource = CAUSEWAY_SOURCE_DIR;

TEST(PlanningCliTest, TheDemosJobsAsARecordedRunReplayToTheSameDecisions) {
  TempDir dir("plan-fidelity");
  // Long scheduling cycles make a submission that lands between a cycle's
  // read and its decisions (seen one cycle later than its time says) rare.
  auto server = ServerProcess::Start(
      dir.path(), {"--estate", kSource + "/examples/estate.yaml", "--sim-speed", "3600", "--tick-ms", "400"});
  auto client = server->Client();
  int submitted = 0;
  for (const char* name : {"train-llama", "eval-sweep", "nlp-eval", "finetune-vision", "research-batch",
                           "spot-augment", "vision-sweep", "research-urgent", "eval-cuda"}) {
    std::ifstream in(kSource + "/examples/jobs/" + name + ".yaml");
    std::string yaml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto r = client.Send("POST", "/v1/jobs", json{{"spec", yaml}}.dump(), Auth(server->admin_token()));
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 201) << name << ": " << r->body;
    ++submitted;
  }
  // Until every job has ended (spot preemptions and all), or a minute.
  Eventually([&] {
    auto r = client.Send("GET", "/v1/jobs?limit=100", "", Auth(server->admin_token()));
    if (!r.ok() || r->status != 200) return false;
    json listed = json::parse(r->body);
    for (const auto& j : listed["jobs"]) {
      if (j["state"] == "pending" || j["state"] == "running" || j["state"] == "admitted") return false;
    }
    return true;
  });
  server->Stop(SIGTERM);

  auto out = RunCli({"plan", "trace", "--from-history", "--since", "3650d", "--db", dir.path() + "/causeway.db",
                     "--estate", kSource + "/examples/estate.yaml", "--fidelity", "--json"});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  json report = json::parse(out.out);
  EXPECT_EQ(report["trace"]["format"], "history");
  EXPECT_EQ(report["trace"]["jobs"], submitted);
  const json& f = report["estates"][0]["fidelity"];
  EXPECT_EQ(f["jobs"], submitted);
  EXPECT_GE(f["attempts"].get<int>(), submitted);
  EXPECT_TRUE(f["same_order"].get<bool>()) << f.dump(2);
  EXPECT_TRUE(f["same_placements"].get<bool>()) << f.dump(2);

  // The same history on a candidate estate without the H200 cluster: the
  // job pinned there is refused, and the report says so.
  auto what_if = RunCli({"plan", "trace", "--from-history", "--since", "3650d", "--db", dir.path() + "/causeway.db",
                         "--estate", kSource + "/examples/estate.yaml", "--remove-cluster", "nebius-eu-h200"});
  ASSERT_EQ(what_if.exit_code, 0) << what_if.err;
  EXPECT_NE(what_if.out.find("removed cluster nebius-eu-h200"), std::string::npos) << what_if.out;
  EXPECT_NE(what_if.out.find("Largest changes against"), std::string::npos) << what_if.out;
}

TEST(PlanningCliTest, ATraceReplaysToATableJsonAndAnOfflineHtmlReport) {
  TempDir dir("plan-trace");
  std::string trace = dir.path() + "/trace.csv";
  std::ofstream(trace) << "submit,duration,gpus,gpu_type,team,status\n"
                          "0,3600,8,H200,nlp,completed\n0,3600,8,H200,nlp,completed\n60,1800,4,L4,research,failed\n";
  std::string html = dir.path() + "/report.html";
  auto out = RunCli({"plan", "trace", trace, "--add-reservation", "nebius-eu-h200:H200:128:12mo:2.30", "--seeds", "3",
                     "--start", "2026-03-01T00:00:00Z", "--html", html});
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("embedded estate + changes"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("reserved 128 H200 on nebius-eu-h200"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("cost per completed job"), std::string::npos);
  std::ifstream in(html);
  std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(page.find("<svg"), std::string::npos);
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);

  // The page in the real Chromium, the network cut off: every plot drawn,
  // nothing fetched, no script error.
  if (std::string why = ChromiumMissing(); !why.empty()) {
    std::cout << "[ SKIPPED  ] the HTML report in Chromium: " << why << "\n";
  } else {
    std::string shot = dir.path() + "/report.png";
    auto rendered = RunProcess({"node", PeersDir() + "/render-page.mjs", html, shot}, {}, "", std::chrono::seconds(120));
    ASSERT_TRUE(rendered.ok()) << rendered.status().ToString();
    ASSERT_EQ(rendered->exit_code, 0) << rendered->err;
    json seen = json::parse(rendered->out);
    EXPECT_EQ(seen["svgs"], 4) << seen.dump();      // wait, utilization, stranded, cost
    EXPECT_EQ(seen["lines"], 6) << seen.dump();     // two estates in each of three line plots
    EXPECT_EQ(seen["bars"], 2) << seen.dump();      // cost per completed job per estate
    EXPECT_TRUE(seen["drawn"].get<bool>());
    EXPECT_EQ(seen["requests"], 0);
    EXPECT_TRUE(seen["errors"].empty()) << seen.dump();
    EXPECT_GT(std::filesystem::file_size(shot), 10'000u);
  }

  auto json_out = RunCli({"--json", "plan", "trace", trace, "--start", "2026-03-01T00:00:00Z"});
  ASSERT_EQ(json_out.exit_code, 0) << json_out.err;
  json report = json::parse(json_out.out);
  EXPECT_EQ(report["estates"][0]["headline"]["jobs"]["median"], 3);

  // Bad input: the file and line, and the usage errors, with their exit codes.
  EXPECT_EQ(RunCli({"plan", "trace", trace, "--add-reservation", "nowhere:H200:8:1mo:1"}).exit_code, 3);
  EXPECT_EQ(RunCli({"plan", "trace", trace, "--fidelity"}).exit_code, 3);
  std::ofstream(trace) << "submit,duration,gpus\n0,60,eight\n";
  auto bad = RunCli({"plan", "trace", trace});
  EXPECT_EQ(bad.exit_code, 3);
  EXPECT_NE(bad.err.find("trace.csv:2: gpus: expected a number"), std::string::npos) << bad.err;
  EXPECT_EQ(RunCli({"plan", "trace", trace, "--format", "philly"}).exit_code, 3);
  EXPECT_EQ(RunCli({"plan", "trace", dir.path() + "/absent.csv"}).exit_code, 4);

  // Demand curves: a team over its quota, a reservation, the break-even size.
  std::filesystem::create_directories(dir.path() + "/vcs/vcA");
  std::ofstream(dir.path() + "/vcs/vcA/cluster_sequence_vc.csv.gz")
      << "time,total_gpu_num,running_gpu_num,pending_gpu_num\nt0,8,8,8\nt1,8,4,0\n";
  auto demand = RunCli({"plan", "demand", dir.path() + "/vcs", "--reservation", "8", "--reserved-price", "1",
                        "--on-demand-price", "2"});
  ASSERT_EQ(demand.exit_code, 0) << demand.err;
  EXPECT_NE(demand.out.find("a reservation of 8 GPUs: 75.0% used"), std::string::npos) << demand.out;
  EXPECT_EQ(RunCli({"plan", "demand", dir.path() + "/vcs", "--quota", "vcA=lots"}).exit_code, 3);
  EXPECT_EQ(RunCli({"plan", "demand", dir.path() + "/vcs", "--quota", "vcZ=8"}).exit_code, 3);
  EXPECT_EQ(RunCli({"plan", "demand", dir.path() + "/none"}).exit_code, 4);
}

// `causeway plan job` and /v1/plan against a live server: where and when a
// job would start behind the work there, what it would cost, the same in
// explain, nothing written, and a plan sees only what its asker may.
TEST(PlanningCliTest, APlanSaysWhenAndWhereAJobWouldStartAndWritesNothing) {
  TempDir dir("plan-job");
  const std::string estate = dir.path() + "/estate.yaml";
  std::ofstream(estate) << R"(providers: [{name: p, kind: sim, regions: [{name: r, zone: eu}]}]
clusters:
  - {name: big, provider: p, region: r, node_pools: [{name: h, gpu_type: H100, gpus_per_node: 8, nodes: 2}]}
prices: [{cluster: big, gpu_type: H100, on_demand: "2.00"}]
teams: [{name: ml}, {name: cv}]
queues:
  - {name: ml, team: ml, quotas: [{flavor: H100, nominal: 16}]}
  - {name: cv, team: cv, quotas: [{flavor: H100, nominal: 16}]}
access: [{group: cv-people, role: researcher, team: cv}]
)";
  auto server = ServerProcess::Start(dir.path() + "/data", {"--estate", estate, "--sim-speed", "1"});
  auto client = server->Client();
  const auto admin = Auth(server->admin_token());
  auto job = [](const std::string& nodes, const std::string& duration) {
    return "resources: {accelerators: H100:8}\nnum_nodes: " + nodes +
           "\nlabels: {team: ml, owner: ann}\nsim: {duration: " + duration + "}\nrun: train\n";
  };
  auto submit = [&](const std::string& yaml) {
    auto r = client.Send("POST", "/v1/jobs", json{{"spec", yaml}}.dump(), admin);
    EXPECT_EQ(r->status, 201) << r->body;
    return json::parse(r->body)["job"]["id"].get<std::string>();
  };
  const std::string whole = submit(job("2", "2h"));  // both nodes for two hours
  ASSERT_TRUE(Eventually([&] {
    return json::parse(client.Send("GET", "/v1/jobs/" + whole, "", admin)->body)["state"] == "running";
  }));
  const std::string next = submit(job("1", "1h"));
  ASSERT_TRUE(Eventually([&] {
    auto e = json::parse(client.Send("GET", "/v1/jobs/" + next + "/explain", "", admin)->body);
    return e.contains("scheduler") && e["scheduler"].contains("position");
  }));

  // The API: behind both, when the two-hour job ends; 8 GPUs x 2.00 x 0.5 h.
  const std::string spec = job("1", "30m");
  auto r = client.Send("POST", "/v1/plan/job", json{{"spec", spec}}.dump(), admin);
  ASSERT_EQ(r->status, 200) << r->body;
  json plan = json::parse(r->body);
  ASSERT_EQ(plan["jobs"].size(), 1u) << plan.dump(2);
  const json& p = plan["jobs"][0];
  EXPECT_TRUE(p["starts"].get<bool>()) << p.dump(2);
  EXPECT_EQ(p["queue"], "ml");
  EXPECT_EQ(p["position"]["position"], 2);
  EXPECT_EQ(p["position"]["queued"], 2);
  EXPECT_EQ(p["placement"]["cluster"], "big");
  EXPECT_EQ(p["expected_cost"]["amount"], "8.00");
  EXPECT_EQ(p["expected_run_seconds"], 1800);
  EXPECT_GT(p["start_in_seconds"].get<int64_t>(), 7000);  // the test takes well under 200 s
  EXPECT_LE(p["start_in_seconds"].get<int64_t>(), 7200);

  // The CLI, in words.
  const std::string file = dir.path() + "/short.yaml";
  std::ofstream(file) << spec;
  std::map<std::string, std::string> env = {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", server->admin_token()}};
  auto out = RunCli({"plan", "job", file}, env);
  ASSERT_EQ(out.exit_code, 0) << out.err;
  EXPECT_NE(out.out.find("position 2 of 2 in queue ml"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("expected start in about 2.0 h"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("on big (p, eu; 8 H100 at 2.00 USD/GPU-h)"), std::string::npos) << out.out;
  EXPECT_NE(out.out.find("expected cost 8.00"), std::string::npos) << out.out;

  // Explain for the waiting job says the same kind of answer; so does its plan route.
  auto explained = RunCli({"explain", next}, env);
  ASSERT_EQ(explained.exit_code, 0) << explained.err;
  EXPECT_NE(explained.out.find("position 1 of 1 in queue ml"), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("expected start in about 2.0 h"), std::string::npos) << explained.out;
  auto queued = client.Send("GET", "/v1/plan/jobs/" + next, "", admin);
  ASSERT_EQ(queued->status, 200) << queued->body;
  EXPECT_EQ(json::parse(queued->body)["jobs"][0]["placement"]["cluster"], "big");
  EXPECT_EQ(client.Send("GET", "/v1/plan/jobs/" + whole, "", admin)->status, 409) << "running: nothing to forecast";

  // Nothing was written: still two jobs.
  EXPECT_EQ(json::parse(client.Send("GET", "/v1/jobs", "", admin)->body)["jobs"].size(), 2u);

  // A bad spec is refused as a submission would be: the field and line.
  auto bad = client.Send("POST", "/v1/plan/job", json{{"spec", "resources: {accelerators: H100:lots}\nrun: x\n"}}.dump(), admin);
  EXPECT_EQ(bad->status, 400) << bad->body;
  EXPECT_NE(bad->body.find("accelerators"), std::string::npos) << bad->body;

  // A cv researcher may not plan for ml, nor see ml's job through its plan.
  auto scim = json::parse(client.Send("POST", "/v1/tokens", json{{"name", "idp"}, {"scopes", {"scim:provision"}}}.dump(), admin)->body)["secret"].get<std::string>();
  auto user = client.Send("POST", "/scim/v2/Users",
                          json{{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:User"}}, {"userName", "cy@corp.example"}}.dump(),
                          Auth(scim));
  ASSERT_EQ(user->status, 201) << user->body;
  auto group = client.Send("POST", "/scim/v2/Groups",
                           json{{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:Group"}}, {"displayName", "cv-people"},
                                {"members", {{{"value", json::parse(user->body)["id"]}}}}}.dump(),
                           Auth(scim));
  ASSERT_EQ(group->status, 201) << group->body;
  auto cy = json::parse(client.Send("POST", "/v1/tokens", json{{"name", "cy"}, {"scopes", {"admin"}}, {"user", "cy@corp.example"}}.dump(), admin)->body)["secret"].get<std::string>();
  auto theirs = client.Send("POST", "/v1/plan/job", json{{"spec", spec}}.dump(), Auth(cy));
  EXPECT_EQ(theirs->status, 403) << theirs->body;
  EXPECT_EQ(client.Send("GET", "/v1/plan/jobs/" + next, "", Auth(cy))->status, 404);
  std::string own = spec;
  own.replace(own.find("team: ml, owner: ann"), 20, "team: cv");
  auto mine = client.Send("POST", "/v1/plan/job", json{{"spec", own}}.dump(), Auth(cy));
  EXPECT_EQ(mine->status, 200) << mine->body;
  EXPECT_GT(json::parse(mine->body)["jobs"][0]["start_in_seconds"].get<int64_t>(), 7000)
      << "cv's queue is empty, but no node is free before the two-hour job ends";

  // The ledger's own history replayed on the estate as it is and with a
  // change (the console's planning page): both jobs, at half the price.
  auto replay = client.Send("POST", "/v1/plan/history", json{{"since", "1d"}, {"price", {"big:H100:1.00"}}}.dump(), admin);
  ASSERT_EQ(replay->status, 200) << replay->body;
  json report = json::parse(replay->body);
  EXPECT_EQ(report["trace"]["jobs"], 2) << report["trace"].dump();
  ASSERT_EQ(report["estates"].size(), 2u);
  const double as_is = report["estates"][0]["headline"]["cost"]["median"].get<double>();
  EXPECT_GT(as_is, 0);
  EXPECT_NEAR(report["estates"][1]["headline"]["cost"]["median"].get<double>(), as_is / 2, 0.01);
  ASSERT_GE(report["headline_rows"].size(), 3u);
  EXPECT_EQ(report["headline_rows"][0][1], "the estate as it is");
  EXPECT_EQ(report["headline_rows"][1], json::array({"jobs", "2", "2"})) << report["headline_rows"].dump();
  // Bad input names the field; a researcher may not see every team's history.
  for (const json& bad_plan : {json{{"since", "lots"}}, json{{"remove_cluster", {"nowhere"}}},
                               json{{"seeds", 6}}, json{{"price", {"big"}}}}) {
    auto refused = client.Send("POST", "/v1/plan/history", bad_plan.dump(), admin);
    EXPECT_EQ(refused->status, 400) << bad_plan.dump() << " " << refused->body;
  }
  EXPECT_EQ(client.Send("POST", "/v1/plan/history", "{}", Auth(cy))->status, 403);
}

}  // namespace
}  // namespace causeway::testing
