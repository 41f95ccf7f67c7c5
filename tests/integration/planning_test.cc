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

}  // namespace
}  // namespace causeway::testing
