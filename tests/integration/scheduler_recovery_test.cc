// The scheduler survives SIGKILL: jobs that were running are re-adopted where
// they ran (no second dispatch), pending ones are scheduled, and everything
// finishes with the audit chain intact.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>

#include "causeway/clock.h"
#include "scheduler/engine.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

// Polls `GET /v1/jobs` until `done` holds for the list or `limit` passes.
bool WaitFor(ServerProcess& s, const std::function<bool(const json&)>& done, std::chrono::seconds limit) {
  auto client = s.Client();
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    auto r = client.Send("GET", "/v1/jobs?limit=1000", "", Auth(s.admin_token()));
    if (r.ok() && r->status == 200 && done(json::parse(r->body)["jobs"])) return true;
  }
  return false;
}

int Count(const json& jobs, const std::string& state) {
  int n = 0;
  for (const auto& j : jobs) n += j["state"] == state;
  return n;
}

TEST(SchedulerRecoveryTest, RunningJobsAreReadoptedAfterSigkill) {
  TempDir dir("recovery");
  std::vector<std::string> args = {"--sim-speed", "1800", "--tick-ms", "20"};
  auto server = ServerProcess::Start(dir.path(), args);
  std::string token = server->admin_token();
  auto client = server->Client();
  // Four 1-hour jobs (two seconds of real time each) and more than the
  // research queue's quota, so some wait.
  for (int i = 0; i < 6; ++i) {
    auto r = client.Send("POST", "/v1/jobs",
                         json{{"spec", "name: r" + std::to_string(i) +
                                           "\nresources: {accelerators: L4:4, labels: {owner: o, team: research}}\n"
                                           "sim: {duration: 1h}\n"}}.dump(),
                         Auth(token));
    ASSERT_EQ(r->status, 201) << r->body;
  }
  ASSERT_TRUE(WaitFor(*server, [](const json& jobs) { return Count(jobs, "running") == 4; }, std::chrono::seconds(30)));
  server->Stop(SIGKILL);

  auto restarted = ServerProcess::Start(dir.path(), args);
  ASSERT_TRUE(WaitFor(*restarted, [](const json& jobs) { return Count(jobs, "succeeded") == 6; },
                      std::chrono::seconds(90)));
  auto rc = restarted->Client();
  std::map<std::string, int> dispatches;
  std::string cursor;
  for (;;) {
    auto r = rc.Send("GET", "/v1/audit?action=job.dispatch&limit=1000" + (cursor.empty() ? "" : "&cursor=" + cursor), "",
                     Auth(token));
    json page = json::parse(r->body);
    for (const auto& e : page["events"]) ++dispatches[e["resource"].get<std::string>()];
    if (page["next_cursor"].is_null()) break;
    cursor = page["next_cursor"];
  }
  auto jobs = json::parse(rc.Send("GET", "/v1/jobs?limit=1000", "", Auth(token))->body)["jobs"];
  ASSERT_EQ(jobs.size(), 6u);
  for (const auto& j : jobs) {
    std::string id = j["id"];
    EXPECT_EQ(j["attempts"], 1) << id << " was dispatched again after the restart";
    EXPECT_EQ(dispatches["job/" + id], 1) << id;
    EXPECT_EQ(j["gpu_seconds"], 4 * 3600) << id;
  }
  auto verify = rc.Send("GET", "/v1/audit/verify", "", Auth(token));
  EXPECT_TRUE(json::parse(verify->body)["ok"].get<bool>()) << verify->body;
  // The restart found jobs still pending and running: none of them is
  // reported as already scheduled or unschedulable (the servers' output, in
  // DATA_DIR/server.log).
  std::ifstream log_file(dir.path() + "/server.log");
  std::string log((std::istreambuf_iterator<char>(log_file)), {});
  EXPECT_NE(log.find("scheduler recovered"), std::string::npos) << log;
  EXPECT_EQ(log.find("already scheduled"), std::string::npos) << log;
  EXPECT_EQ(log.find("cannot be scheduled"), std::string::npos) << log;
}

// Budgets are charged from the ledger: a team that spent its month's budget
// before a SIGKILL is still held after the restart (the new engine reads
// what its ended attempts cost).
TEST(SchedulerRecoveryTest, ASpentBudgetStaysSpentAfterARestart) {
  // The simulated clock runs hours ahead: near a month's end the month
  // (and the budget) would turn over during the test.
  Timestamp now = RealClock().Now();
  if (scheduler::Engine::MonthStart(now + std::chrono::hours(48)) != scheduler::Engine::MonthStart(now)) {
    GTEST_SKIP() << "too close to the end of the month (UTC) for a budget test";
  }
  TempDir dir("budget");
  std::vector<std::string> args = {"--sim-speed", "3600", "--tick-ms", "20"};
  auto server = ServerProcess::Start(dir.path(), args);
  std::string token = server->admin_token();
  auto submit = [&](ServerProcess& s, const std::string& accelerators, const std::string& duration) {
    auto r = s.Client().Send("POST", "/v1/jobs",
                             json{{"spec", "name: spend\nresources: {accelerators: " + accelerators +
                                               ", labels: {owner: o, team: research}}\nsim: {duration: " + duration +
                                               ", utilization: 90}\n"}}.dump(),
                             Auth(token));
    EXPECT_EQ(r->status, 201) << r->body;
    return json::parse(r->body)["job"]["id"].get<std::string>();
  };
  // Eight A100s for four hours: more than research's 60 a month.
  submit(*server, "A100-80GB:8", "4h");
  ASSERT_TRUE(WaitFor(*server, [](const json& jobs) { return Count(jobs, "succeeded") == 1; }, std::chrono::seconds(60)));
  server->Stop(SIGKILL);

  auto restarted = ServerProcess::Start(dir.path(), args);
  std::string late = submit(*restarted, "L4:1", "1h");
  auto rc = restarted->Client();
  ASSERT_TRUE(Eventually([&] {
    auto r = rc.Send("GET", "/v1/jobs/" + late + "/explain", "", Auth(token));
    return r.ok() && r->body.find("spent its monthly budget") != std::string::npos;
  })) << "the restarted scheduler forgot what research spent";
  auto jobs = json::parse(rc.Send("GET", "/v1/jobs?limit=10", "", Auth(token))->body)["jobs"];
  EXPECT_EQ(Count(jobs, "pending"), 1);
}

}  // namespace
}  // namespace causeway::testing
