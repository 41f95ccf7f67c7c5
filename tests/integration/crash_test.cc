// Crash safety: several clients submit in a tight loop, the server is killed
// with SIGKILL mid-stream and restarted on the same file. Every job that was
// acknowledged with 201 must be there exactly once, retries with the same
// Idempotency-Key must not duplicate anything, and the audit chain verifies.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

std::string SpecFor(const std::string& key) {
  return "name: crash-" + key + "\nresources: {accelerators: L4:1, labels: {owner: crash, team: research}}\nrun: x\n";
}

TEST(CrashTest, AcknowledgedJobsSurviveSigkillExactlyOnce) {
  TempDir dir("crash");
  auto server = ServerProcess::Start(dir.path());
  std::string token = server->admin_token();

  constexpr int kClients = 4;
  constexpr int kAcksBeforeKill = 400;
  std::mutex mu;
  std::map<std::string, std::string> acked;  // key -> job id, guarded by mu
  std::vector<std::string> sent_keys;        // every key a request was sent with, guarded by mu
  std::atomic<int> ack_count{0};
  std::atomic<bool> killed{false};
  std::atomic<int> running{kClients};

  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      net::HttpClient client("127.0.0.1", server->port());
      for (int i = 0; !killed.load(); ++i) {
        std::string key = "c" + std::to_string(c) + "-" + std::to_string(i);
        {
          std::lock_guard<std::mutex> lock(mu);
          sent_keys.push_back(key);
        }
        auto r = client.Send("POST", "/v1/jobs", json{{"spec", SpecFor(key)}}.dump(),
                             {{"Authorization", "Bearer " + token}, {"Idempotency-Key", key}});
        if (!r.ok()) break;  // the server is gone
        if (r->status == 201) {
          std::lock_guard<std::mutex> lock(mu);
          acked[key] = json::parse(r->body)["job"]["id"];
          ++ack_count;
        }
      }
      --running;
    });
  }
  // Kill mid-stream: after enough acknowledgements, with requests in flight.
  while (ack_count.load() < kAcksBeforeKill && running.load() > 0) std::this_thread::yield();
  server->Stop(SIGKILL);
  killed = true;
  for (auto& t : clients) t.join();
  ASSERT_GE(acked.size(), static_cast<size_t>(kAcksBeforeKill));

  auto restarted = ServerProcess::Start(dir.path());
  EXPECT_EQ(restarted->banner().find("admin token"), std::string::npos) << "a second admin token was minted";
  auto client = restarted->Client();
  auto auth = Auth(token);

  // Retry every key that was ever sent, as a client that lost its answer would.
  for (const auto& key : sent_keys) {
    auto headers = auth;
    headers.emplace_back("Idempotency-Key", key);
    auto r = client.Send("POST", "/v1/jobs", json{{"spec", SpecFor(key)}}.dump(), headers);
    ASSERT_TRUE(r.ok());
    ASSERT_TRUE(r->status == 200 || r->status == 201) << r->body;
    auto it = acked.find(key);
    if (it != acked.end()) {
      EXPECT_EQ(r->status, 200) << "acknowledged job " << key << " was lost";
      EXPECT_EQ(json::parse(r->body)["job"]["id"], it->second);
    }
  }

  // Now exactly one job per key, and every acknowledged id present.
  std::multiset<std::string> names;
  std::set<std::string> ids;
  std::string cursor;
  for (;;) {
    auto r = client.Send("GET", "/v1/jobs?owner=crash&limit=1000" + (cursor.empty() ? "" : "&cursor=" + cursor), "", auth);
    ASSERT_TRUE(r.ok());
    json page = json::parse(r->body);
    for (const auto& j : page["jobs"]) {
      names.insert(j["name"].get<std::string>());
      ids.insert(j["id"].get<std::string>());
    }
    if (page["next_cursor"].is_null()) break;
    cursor = page["next_cursor"];
  }
  EXPECT_EQ(names.size(), sent_keys.size());
  for (const auto& key : sent_keys) EXPECT_EQ(names.count("crash-" + key), 1u) << key;
  for (const auto& [key, id] : acked) EXPECT_EQ(ids.count(id), 1u) << key;

  auto verify = client.Send("GET", "/v1/audit/verify", "", auth);
  EXPECT_TRUE(json::parse(verify->body)["ok"].get<bool>()) << verify->body;
  restarted->Stop(SIGTERM);
  auto offline = RunCli({"audit", "verify", "--data-dir", dir.path()});
  EXPECT_EQ(offline.exit_code, 0) << offline.out << offline.err;
}

}  // namespace
}  // namespace causeway::testing
