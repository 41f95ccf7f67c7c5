// The idle reaper on a running server: a notebook that holds a GPU and does
// nothing is warned, then cancelled after the grace period; a busy job and
// an exempt idle one run on; every decision is in the audit trail.
// Simulated time (the embedded estate's policy: below 10% for 20 minutes,
// 10 minutes' grace) at 600x: seconds of real time.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

TEST(ReaperServiceTest, IdleJobIsWarnedThenCancelledAndTheOthersRunOn) {
  TempDir dir("reaper");
  auto server = ServerProcess::Start(dir.path(), {"--sim-speed", "600", "--tick-ms", "50"});
  auto client = server->Client();
  auto submit = [&](const std::string& name, const std::string& labels, int utilization) {
    auto r = client.Send("POST", "/v1/jobs",
                         json{{"spec", "name: " + name + "\nresources: {accelerators: L4:1, labels: {owner: o, team: "
                                       "research" + labels + "}}\nsim: {duration: 3h, utilization: " +
                                       std::to_string(utilization) + "}\n"}}.dump(),
                         Auth(server->admin_token()));
    EXPECT_EQ(r->status, 201) << r->body;
    return json::parse(r->body)["job"]["id"].get<std::string>();
  };
  std::string idle = submit("idle", "", 0);
  std::string busy = submit("busy", "", 80);
  std::string exempt = submit("kept", ", keep-alive: \"yes\"", 0);
  // One hour at 80%: finishes while the others run.
  auto r = client.Send("POST", "/v1/jobs",
                       json{{"spec", "name: short\nresources: {accelerators: L4:1, labels: {owner: o, team: research}}\n"
                                     "sim: {duration: 1h, utilization: 80}\n"}}.dump(),
                       Auth(server->admin_token()));
  ASSERT_EQ(r->status, 201) << r->body;
  std::string short_job = json::parse(r->body)["job"]["id"].get<std::string>();

  auto state = [&](const std::string& id) {
    auto r = client.Send("GET", "/v1/jobs/" + id, "", Auth(server->admin_token()));
    json j = json::parse(r->body);
    return (j.contains("job") ? j["job"] : j)["state"].get<std::string>();
  };
  ASSERT_TRUE(Eventually([&] { return state(idle) == "cancelled"; }, std::chrono::seconds(60)))
      << "the idle job was not reaped";
  EXPECT_EQ(state(busy), "running");
  EXPECT_EQ(state(exempt), "running");

  // Goodput: each ended attempt records the GPU time telemetry covered and
  // the work in it (utilization integrated over time).
  ASSERT_TRUE(Eventually([&] { return state(short_job) == "succeeded"; }, std::chrono::seconds(60)));
  auto attempt_of = [&](const std::string& id) {
    return json::parse(client.Send("GET", "/v1/jobs/" + id, "", Auth(server->admin_token()))->body)["attempts"][0];
  };
  json done = attempt_of(short_job);
  double observed = done["observed_gpu_seconds"].get<double>(), work = done["work_gpu_seconds"].get<double>();
  // Most of it: samples are taken in real time while the estate runs 600
  // times faster, so a loaded machine misses some (0.75 of the hour seen
  // under a full parallel test run); what matters is that the work in what
  // was seen is right.
  EXPECT_GE(observed, 0.5 * 3600) << done.dump();
  EXPECT_LE(observed, done["gpu_seconds"].get<double>()) << done.dump();
  EXPECT_NEAR(work / observed, 0.80, 0.05) << done.dump();
  json reaped = attempt_of(idle);
  EXPECT_GE(reaped["observed_gpu_seconds"].get<double>(), 20 * 60) << reaped.dump();
  EXPECT_LE(reaped["work_gpu_seconds"].get<double>(), 0.03 * reaped["observed_gpu_seconds"].get<double>());

  auto audit = client.Send("GET", "/v1/audit?action=reaper.&limit=100", "", Auth(server->admin_token()));
  ASSERT_EQ(audit->status, 200);
  std::vector<std::string> actions;
  json listed = json::parse(audit->body);
  for (const auto& e : listed["events"]) {
    EXPECT_EQ(e["resource"], "job/" + idle) << "only the idle job is judged idle";
    EXPECT_EQ(e["actor"], "reaper");
    actions.push_back(e["action"]);
  }
  ASSERT_EQ(actions, (std::vector<std::string>{"reaper.warn", "reaper.cancel"}));
  auto cancel = client.Send("GET", "/v1/audit?action=job.cancel&resource=job/" + idle, "", Auth(server->admin_token()));
  auto events = json::parse(cancel->body)["events"];
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["actor"], "reaper");
  EXPECT_EQ(events[0]["details"]["policy"], "idle-gpus");
  // `causeway waste` counts the idle time it caught: one GPU for the 20
  // minutes' window and at least the 10 minutes' grace.
  auto waste = RunCli({"--json", "waste"}, {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", server->admin_token()}});
  ASSERT_EQ(waste.exit_code, 0) << waste.err;
  json report = json::parse(waste.out);
  ASSERT_EQ(report["teams"].size(), 1u) << waste.out;
  EXPECT_EQ(report["teams"][0]["team"], "research");
  EXPECT_EQ(report["teams"][0]["reaped_jobs"], 1);
  EXPECT_GE(std::stod(report["teams"][0]["idle_gpu_hours"].get<std::string>()), 0.5);

  auto verify = client.Send("GET", "/v1/audit/verify", "", Auth(server->admin_token()));
  EXPECT_TRUE(json::parse(verify->body)["ok"].get<bool>());
}

}  // namespace
}  // namespace causeway::testing
