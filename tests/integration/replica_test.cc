// Several `causeway serve` replicas on one real PostgreSQL: the leader is
// killed again and again under a steady stream of submissions to both, and
// the database is restarted under them. Nothing acknowledged is lost, no
// attempt is dispatched twice, and the audit chain stays intact.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "../postgres_server.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

const std::string kJob =
    "resources: {accelerators: L4:1, labels: {owner: o, team: research}}\nsim: {duration: 5s}\n";

class Replica {
 public:
  Replica(const std::string& dir, const std::string& db, const std::string& token_from)
      : dir_(dir), args_{"--db", db, "--tick-ms", "50", "--lease-ttl-ms", "2000", "--sim-speed", "10"} {
    std::filesystem::create_directories(dir_);
    if (!token_from.empty()) std::filesystem::copy_file(token_from, dir_ + "/admin.token",
                                                        std::filesystem::copy_options::overwrite_existing);
    Start();
  }
  void Start() { process_ = ServerProcess::Start(dir_, args_); }
  void Kill() { process_->Stop(SIGKILL); }
  ServerProcess& process() { return *process_; }
  // Only the leader answers /v1/queues.
  bool Leads() {
    auto c = process_->Client();
    auto r = c.Send("GET", "/v1/queues", "", Auth(process_->admin_token()));
    return r.ok() && r->status == 200;
  }
  // The new job's id when the submission was acknowledged.
  std::optional<std::string> Submit() {
    auto c = process_->Client();
    auto r = c.Send("POST", "/v1/jobs", json{{"spec", kJob}}.dump(), Auth(process_->admin_token()));
    if (!r.ok() || r->status != 201) return std::nullopt;
    return json::parse(r->body)["job"]["id"].get<std::string>();
  }
  std::string token_file() const { return dir_ + "/admin.token"; }

 private:
  std::string dir_;
  std::vector<std::string> args_;
  std::unique_ptr<ServerProcess> process_;
};

class ReplicaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = PostgresServer::Get(skip_);
    if (!server_) GTEST_SKIP() << skip_;
    static int n = 0;
    db_ = server_->CreateDatabase("replicas_" + std::to_string(::getpid()) + "_" + std::to_string(++n));
  }
  PostgresServer* server_ = nullptr;
  std::string skip_;
  std::string db_;
};

TEST_F(ReplicaTest, KillingTheLeaderLosesNothingAndDispatchesNothingTwice) {
  TempDir dir("replicas");
  std::string dispatch_log = dir.path() + "/dispatches";
  ::setenv("CAUSEWAY_SIM_DISPATCH_LOG", dispatch_log.c_str(), 1);
  std::vector<std::unique_ptr<Replica>> replicas;
  replicas.push_back(std::make_unique<Replica>(dir.path() + "/a", db_, ""));
  replicas.push_back(std::make_unique<Replica>(dir.path() + "/b", db_, replicas[0]->token_file()));
  ::unsetenv("CAUSEWAY_SIM_DISPATCH_LOG");

  // A steady stream of submissions to both replicas.
  std::mutex mu;
  std::vector<std::string> acknowledged;
  std::set<int> down;  // replicas being restarted
  std::atomic<bool> stop{false};
  std::condition_variable paced;
  std::thread submitter([&] {
    for (int i = 0; !stop; ++i) {
      int which = i % 2;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (down.count(which)) continue;
      }
      // The process may die under this call: then it is not acknowledged.
      auto id = replicas[static_cast<size_t>(which)]->Submit();
      if (id) {
        std::lock_guard<std::mutex> lock(mu);
        acknowledged.push_back(*id);
      }
      // A steady stream (about 50 a second), not a flood: the estate must
      // be able to drain it. Ends at once when the test is done.
      std::unique_lock<std::mutex> pace(mu);
      paced.wait_for(pace, std::chrono::milliseconds(20), [&] { return stop.load(); });
    }
  });

  for (int round = 0; round < 3; ++round) {
    int leader = -1;
    ASSERT_TRUE(Eventually([&] {
      for (int i = 0; i < 2; ++i) {
        if (replicas[static_cast<size_t>(i)]->Leads()) leader = i;
      }
      return leader >= 0;
    })) << "no replica leads";
    {
      std::lock_guard<std::mutex> lock(mu);
      down.insert(leader);
    }
    replicas[static_cast<size_t>(leader)]->Kill();
    auto killed = Clock::now();
    int other = 1 - leader;
    ASSERT_TRUE(Eventually([&] { return replicas[static_cast<size_t>(other)]->Leads(); }, std::chrono::seconds(20)));
    auto takeover = Clock::now() - killed;
    EXPECT_LE(takeover, std::chrono::seconds(10)) << "the follower took "
                                                   << std::chrono::duration_cast<std::chrono::milliseconds>(takeover).count()
                                                   << " ms to lead";
    replicas[static_cast<size_t>(leader)]->Start();
    std::lock_guard<std::mutex> lock(mu);
    down.erase(leader);
  }
  stop = true;
  paced.notify_all();
  submitter.join();
  ASSERT_GT(acknowledged.size(), 10u);

  // Every acknowledged job exists, once, and the survivors finish them all.
  Replica& any = *replicas[0];
  auto c = any.process().Client();
  std::set<std::string> listed;
  std::string cursor;
  for (;;) {
    auto r = c.Send("GET", "/v1/jobs?limit=1000" + (cursor.empty() ? "" : "&cursor=" + cursor), "",
                    Auth(any.process().admin_token()));
    ASSERT_TRUE(r.ok() && r->status == 200);
    json page = json::parse(r->body);
    for (const auto& j : page["jobs"]) EXPECT_TRUE(listed.insert(j["id"].get<std::string>()).second);
    if (!page.contains("next_cursor") || page["next_cursor"].is_null()) break;
    cursor = page["next_cursor"];
  }
  for (const auto& id : acknowledged) EXPECT_TRUE(listed.count(id)) << id << " was acknowledged and lost";
  // A submission the killed replica committed but could not answer exists
  // unacknowledged: at most one per kill (one request in flight at a time).
  EXPECT_LE(listed.size(), acknowledged.size() + 3) << "jobs nobody submitted";
  auto count = [&](const std::string& state) {
    auto r = c.Send("GET", "/v1/jobs?limit=1000&state=" + state, "", Auth(any.process().admin_token()));
    return r.ok() && r->status == 200 ? json::parse(r->body)["jobs"].size() : size_t{9999};
  };
  ASSERT_TRUE(Eventually([&] { return count("pending") + count("running") == 0; }, std::chrono::seconds(120)))
      << "work was left behind: " << count("pending") << " pending, " << count("running") << " running of "
      << acknowledged.size();

  std::ifstream log(dispatch_log);
  std::map<std::string, int> dispatches;
  std::string job, attempt;
  while (log >> job >> attempt) dispatches[job + " " + attempt]++;
  EXPECT_FALSE(dispatches.empty());
  // Each launch is recorded before it is made, so a leader killed between
  // launching and recording the dispatch does not get the attempt launched
  // again by its successor.
  for (const auto& [key, n] : dispatches) EXPECT_EQ(n, 1) << key << " was dispatched " << n << " times";

  auto verify = RunCli({"audit", "verify", "--db", db_});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

// The database goes away under running replicas: requests fail cleanly
// with a retryable error, nothing acknowledged is lost, and service resumes
// by itself when it is back.
TEST_F(ReplicaTest, ADatabaseRestartFailsRequestsCleanlyAndServiceResumes) {
  TempDir dir("pg-restart");
  Replica a(dir.path() + "/a", db_, "");
  std::vector<std::string> before;
  for (int i = 0; i < 5; ++i) {
    auto id = a.Submit();
    ASSERT_TRUE(id);
    before.push_back(*id);
  }
  ASSERT_TRUE(server_->Ctl("stop"));
  auto c = a.process().Client();
  auto r = c.Send("POST", "/v1/jobs", json{{"spec", kJob}}.dump(), Auth(a.process().admin_token()));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->status, 503) << r->body;
  json err = json::parse(r->body)["error"];
  EXPECT_EQ(err["code"], "unavailable") << r->body;
  EXPECT_TRUE(err["details"]["retryable"].get<bool>()) << r->body;
  EXPECT_EQ(r->body.find(db_.substr(db_.find(':', 14) + 1, 10)), std::string::npos) << "the password leaked: " << r->body;

  ASSERT_TRUE(server_->Ctl("start"));
  std::optional<std::string> after;
  ASSERT_TRUE(Eventually([&] { return (after = a.Submit()).has_value(); })) << "service did not resume";
  for (const auto& id : before) {
    auto g = c.Send("GET", "/v1/jobs/" + id, "", Auth(a.process().admin_token()));
    ASSERT_TRUE(g.ok());
    EXPECT_EQ(g->status, 200) << id;
  }
}

// On PostgreSQL the chain is linked as the batch commits; the checkpoint's
// answer still carries the sequence number it was stored under (it once
// answered 0 there).
TEST_F(ReplicaTest, ACheckpointAnswersTheSequenceNumberItWasStoredUnder) {
  TempDir dir("pg-checkpoint");
  Replica a(dir.path() + "/a", db_, "");
  ASSERT_TRUE(a.Submit());
  auto c = a.process().Client();
  auto made = c.Send("POST", "/v1/audit/checkpoints", "", Auth(a.process().admin_token()));
  ASSERT_TRUE(made.ok());
  ASSERT_EQ(made->status, 201) << made->body;
  json checkpoint = json::parse(made->body)["checkpoint"];
  int64_t seq = checkpoint["seq"].get<int64_t>();
  EXPECT_GT(seq, checkpoint["signed_seq"].get<int64_t>()) << made->body;
  auto listed = c.Send("GET", "/v1/audit?action=audit.checkpoint", "", Auth(a.process().admin_token()));
  ASSERT_TRUE(listed.ok());
  ASSERT_EQ(listed->status, 200) << listed->body;
  json events = json::parse(listed->body)["events"];
  ASSERT_EQ(events.size(), 1u) << listed->body;
  EXPECT_EQ(events[0]["seq"].get<int64_t>(), seq) << listed->body;
}

}  // namespace
}  // namespace causeway::testing

namespace causeway::testing {
namespace {

// An embedded SQLite database moves to PostgreSQL with its chain intact;
// `db check` and `migrate` report on it; a server then runs on the copy.
TEST(DbCommandsTest, CopyFromSqliteToPostgresKeepsTheChain) {
  std::string skip;
  PostgresServer* pg = PostgresServer::Get(skip);
  if (!pg) GTEST_SKIP() << skip;
  TempDir dir("db-copy");
  std::vector<std::string> ids;
  {
    auto server = ServerProcess::Start(dir.path() + "/sqlite");
    auto c = server->Client();
    for (int i = 0; i < 3; ++i) {
      auto r = c.Send("POST", "/v1/jobs", json{{"spec", kJob}}.dump(), Auth(server->admin_token()));
      ASSERT_EQ(r->status, 201) << r->body;
      ids.push_back(json::parse(r->body)["job"]["id"]);
    }
    server->Stop(SIGTERM);
  }
  std::string from = "sqlite:" + dir.path() + "/sqlite/causeway.db";
  // An imported bill travels too.
  std::string bill = dir.path() + "/bill.csv";
  std::ofstream(bill) << "ChargePeriodStart,BilledCost,Tags\n2026-11-02T00:00:00Z,12.25,\"{\"\"causeway-team\"\": "
                         "\"\"nlp\"\"}\"\n";
  auto imported = RunCli({"cost", "import", bill, "--provider", "nimbus", "--db", from});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  auto before = RunCli({"--json", "db", "check", "--db", from});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  int64_t events = json::parse(before.out)["audit"]["events"];

  std::string to = pg->CreateDatabase("copy_" + std::to_string(::getpid()));
  auto copy = RunCli({"--json", "db", "copy", "--from", from, "--to", to});
  ASSERT_EQ(copy.exit_code, 0) << copy.out << copy.err;
  json report = json::parse(copy.out);
  EXPECT_EQ(report["jobs"], 3);
  EXPECT_TRUE(report["audit"]["ok"].get<bool>());
  EXPECT_EQ(report["audit"]["events"], events + 1) << "the source's events and one db.copy";
  EXPECT_EQ(copy.out.find(to.substr(to.find(':', 14) + 1, 10)), std::string::npos) << "the password leaked";

  auto again = RunCli({"db", "copy", "--from", from, "--to", to});
  EXPECT_EQ(again.exit_code, 6) << "a non-empty target is refused: " << again.err;
  auto migrate = RunCli({"--json", "migrate", "--db", to});
  ASSERT_EQ(migrate.exit_code, 0) << migrate.err;
  EXPECT_EQ(json::parse(migrate.out)["schema_version"], json::parse(migrate.out)["latest_version"]);

  std::filesystem::create_directories(dir.path() + "/pg");
  std::filesystem::copy_file(dir.path() + "/sqlite/admin.token", dir.path() + "/pg/admin.token");
  auto server = ServerProcess::Start(dir.path() + "/pg", {"--db", to});
  auto c = server->Client();
  for (const auto& id : ids) {
    auto r = c.Send("GET", "/v1/jobs/" + id, "", Auth(server->admin_token()));
    EXPECT_EQ(r->status, 200) << id;
  }
  // The bill copied too, read through the server now on PostgreSQL.
  auto showback = RunCli({"--json", "cost", "showback", "--by", "team"},
                         {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", server->admin_token()}});
  ASSERT_EQ(showback.exit_code, 0) << showback.err;
  EXPECT_EQ(json::parse(showback.out)["rows"][0]["billed_cost"], "12.25");
  auto verify = RunCli({"audit", "verify", "--db", to});
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
}

}  // namespace
}  // namespace causeway::testing
