// The services' data plane against a real HAProxy (Debian's haproxy): the
// configuration Causeway writes is one HAProxy accepts; replicas are added
// through the runtime API only once pointed at and made ready; weights
// steer traffic; a drained replica finishes the answer it is giving and
// takes no new request; a replica killed mid-traffic costs no request
// (HAProxy retries it on another); the counters Causeway reads are HAProxy's
// own. The replicas are tests/peers/model-server.py.
#include <gtest/gtest.h>

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "node_peer.h"
#include "serving/controller.h"
#include "serving/haproxy.h"
#include "serving/probe.h"
#include "serving/traffic.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using serving::ServerState;

const char* kHaproxy = "/usr/sbin/haproxy";

// A free loopback port (bound, then released).
uint16_t FreePort() {
  TempDir dir("port");
  auto r = RunProcess({"python3", "-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"},
                      {{"PATH", "/usr/bin:/bin"}}, "", std::chrono::seconds(10));
  return r.ok() ? static_cast<uint16_t>(std::stoi(r->out)) : 0;
}

class Replica {
 public:
  explicit Replica(const std::string& name, const std::string& delay = "0")
      : peer_({"python3", PeersDir() + "/model-server.py", name, "--delay", delay}) {
    const std::string& line = peer_.first_line();
    if (line.rfind("listening ", 0) == 0) port_ = static_cast<uint16_t>(std::stoi(line.substr(10)));
  }
  uint16_t port() const { return port_; }
  void Kill() { peer_.Stop(true); }

 private:
  PeerProcess peer_;
  uint16_t port_ = 0;
};

class HaproxyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kHaproxy)) GTEST_SKIP() << "Debian's haproxy is not installed (make test-deps)";
    port_ = FreePort();
    ASSERT_NE(port_, 0);
    config_.name = "chat";
    config_.bind = "127.0.0.1:" + std::to_string(port_);
    config_.slots = 4;
    config_.balance = "roundrobin";
    config_.socket_path = dir_.path() + "/admin.sock";
    config_.pid_file = dir_.path() + "/haproxy.pid";
    auto p = serving::ProxyProcess::Start(kHaproxy, config_, dir_.path() + "/haproxy.cfg");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    proxy_ = std::make_unique<serving::ProxyProcess>(std::move(*p));
  }
  // Who answered each of `n` requests (or the status when not 200).
  std::map<std::string, int> Spread(int n) {
    net::HttpClient client("127.0.0.1", port_, std::chrono::seconds(10));
    std::map<std::string, int> out;
    for (int i = 0; i < n; ++i) {
      auto r = client.Send("GET", "/v1/completions");
      ++out[!r.ok() ? r.status().ToString() : r->status == 200 ? r->body : "status " + std::to_string(r->status)];
    }
    return out;
  }
  const serving::RuntimeApi& api() { return proxy_->api(); }
  serving::ServerStats Slot(int slot) {
    auto stats = api().Stats("chat");
    EXPECT_TRUE(stats.ok()) << stats.status().ToString();
    for (const auto& s : stats.ok() ? *stats : std::vector<serving::ServerStats>{}) {
      if (s.name == serving::SlotName(slot)) return s;
    }
    return {};
  }

  TempDir dir_{"haproxy"};
  uint16_t port_ = 0;
  serving::ProxyConfig config_;
  std::unique_ptr<serving::ProxyProcess> proxy_;
};

TEST_F(HaproxyTest, ReplicasTakeTrafficOnlyOnceReadyAndByWeight) {
  // Nothing is ready: HAProxy answers 503 itself.
  EXPECT_EQ(Spread(2), (std::map<std::string, int>{{"status 503", 2}}));
  Replica a("a"), b("b");
  ASSERT_NE(a.port(), 0);
  ASSERT_NE(b.port(), 0);
  ASSERT_TRUE(api().SetServer("chat", "r1", "127.0.0.1", a.port(), 100).ok());
  ASSERT_TRUE(api().SetServer("chat", "r2", "127.0.0.1", b.port(), 100).ok());
  EXPECT_EQ(Spread(2), (std::map<std::string, int>{{"status 503", 2}})) << "pointed at, not yet ready";
  EXPECT_EQ(Slot(1).status, "MAINT");
  ASSERT_TRUE(api().SetState("chat", "r1", ServerState::kReady).ok());
  ASSERT_TRUE(api().SetState("chat", "r2", ServerState::kReady).ok());
  EXPECT_EQ(Spread(10), (std::map<std::string, int>{{"a", 5}, {"b", 5}})) << "round robin";
  ASSERT_TRUE(api().SetWeight("chat", "r2", 0).ok());
  EXPECT_EQ(Spread(6), (std::map<std::string, int>{{"a", 6}})) << "weight 0 takes nothing";
  ASSERT_TRUE(api().SetWeight("chat", "r2", 100).ok());

  // HAProxy's own counters, as Causeway reads them.
  serving::ServerStats one = Slot(1);
  EXPECT_EQ(one.addr, "127.0.0.1:" + std::to_string(a.port()));
  EXPECT_EQ(one.requests, 11) << "5 + 6 answered by a";
  EXPECT_EQ(one.weight, 100);
  EXPECT_EQ(Slot(2).requests, 5);

  // Refusals come back as errors, not silence.
  EXPECT_FALSE(api().SetState("chat", "r9", ServerState::kReady).ok()) << "no such slot";
  EXPECT_FALSE(api().SetState("chat", "r1 state ready; shutdown sessions server chat/r2", ServerState::kReady).ok());
  EXPECT_FALSE(api().SetServer("chat", "r1", "127.0.0.1; shutdown", a.port(), 100).ok());
  EXPECT_FALSE(api().SetWeight("chat", "r1", 300).ok());
}

TEST_F(HaproxyTest, ADrainedReplicaFinishesItsAnswerAndTakesNoMore) {
  Replica slow("slow", "1.5"), fast("fast");
  ASSERT_TRUE(api().SetServer("chat", "r1", "127.0.0.1", slow.port(), 100).ok());
  ASSERT_TRUE(api().SetState("chat", "r1", ServerState::kReady).ok());
  // A long answer under way on the slow replica...
  auto pending = std::async(std::launch::async, [&] {
    net::HttpClient client("127.0.0.1", port_, std::chrono::seconds(10));
    auto r = client.Send("GET", "/v1/completions");
    return r.ok() ? std::to_string(r->status) + " " + r->body : r.status().ToString();
  });
  ASSERT_TRUE(Eventually([&] { return Slot(1).current_sessions == 1; }, std::chrono::seconds(10)));
  // ...when the fast one joins and the slow one is drained.
  ASSERT_TRUE(api().SetServer("chat", "r2", "127.0.0.1", fast.port(), 100).ok());
  ASSERT_TRUE(api().SetState("chat", "r2", ServerState::kReady).ok());
  ASSERT_TRUE(api().SetState("chat", "r1", ServerState::kDrain).ok());
  EXPECT_EQ(Spread(4), (std::map<std::string, int>{{"fast", 4}}));
  EXPECT_EQ(pending.get(), "200 slow") << "the answer under way was not cut";
  EXPECT_TRUE(Eventually([&] { return Slot(1).current_sessions == 0; }, std::chrono::seconds(10)));
  ASSERT_TRUE(api().SetState("chat", "r1", ServerState::kMaint).ok());
  EXPECT_EQ(Slot(1).status, "MAINT");
}

TEST_F(HaproxyTest, AKilledReplicasRequestsGoToTheOthers) {
  Replica a("a"), b("b");
  ASSERT_TRUE(api().SetServer("chat", "r1", "127.0.0.1", a.port(), 100).ok());
  ASSERT_TRUE(api().SetServer("chat", "r2", "127.0.0.1", b.port(), 100).ok());
  ASSERT_TRUE(api().SetState("chat", "r1", ServerState::kReady).ok());
  ASSERT_TRUE(api().SetState("chat", "r2", ServerState::kReady).ok());
  a.Kill();
  // Still marked ready (no probe has run): each request sent to the dead
  // replica is refused by its port and retried on the other.
  EXPECT_EQ(Spread(10), (std::map<std::string, int>{{"b", 10}}));
  const serving::ServerStats dead = Slot(1);
  EXPECT_GT(dead.retries + dead.redispatches, 0) << "HAProxy counted the refusals it sent elsewhere";
  EXPECT_EQ(Slot(2).responses_5xx, 0);
}

// The warm alternate as backup servers: ready, yet sent nothing while a
// preferred replica is up; all of the traffic the moment none is, shared
// among them; back to the preferred one when it is up again.
TEST_F(HaproxyTest, BackupSlotsServeOnlyWhileNoPreferredReplicaIsUp) {
  proxy_.reset();
  config_.backup_slots = 2;
  auto p = serving::ProxyProcess::Start(kHaproxy, config_, dir_.path() + "/haproxy.cfg");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  proxy_ = std::make_unique<serving::ProxyProcess>(std::move(*p));
  Replica pref("preferred"), alt1("alternate-1"), alt2("alternate-2");
  ASSERT_TRUE(api().SetServer("chat", "r1", "127.0.0.1", pref.port(), 100).ok());
  ASSERT_TRUE(api().SetServer("chat", "b1", "127.0.0.1", alt1.port(), 100).ok());
  ASSERT_TRUE(api().SetServer("chat", "b2", "127.0.0.1", alt2.port(), 100).ok());
  for (const char* s : {"r1", "b1", "b2"}) ASSERT_TRUE(api().SetState("chat", s, ServerState::kReady).ok());
  EXPECT_EQ(Spread(6), (std::map<std::string, int>{{"preferred", 6}}));
  ASSERT_TRUE(api().SetState("chat", "r1", ServerState::kMaint).ok());
  EXPECT_EQ(Spread(6), (std::map<std::string, int>{{"alternate-1", 3}, {"alternate-2", 3}}));
  ASSERT_TRUE(api().SetState("chat", "r1", ServerState::kReady).ok());
  EXPECT_EQ(Spread(4), (std::map<std::string, int>{{"preferred", 4}}));
}

// The degraded mode as an answer: HAProxy gives it itself, with
// Retry-After, exactly while no replica is up, whatever the body holds.
TEST_F(HaproxyTest, WhileNoReplicaIsReadyTheDegradedAnswerIsServed) {
  proxy_.reset();
  config_.degraded_answer = spec::FixedAnswer{503, "busy: \"$HOME\" \\ it's\nback soon", 17};
  auto p = serving::ProxyProcess::Start(kHaproxy, config_, dir_.path() + "/haproxy.cfg");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  proxy_ = std::make_unique<serving::ProxyProcess>(std::move(*p));
  net::HttpClient client("127.0.0.1", port_, std::chrono::seconds(10));
  auto degraded = client.Send("GET", "/v1/completions");
  ASSERT_TRUE(degraded.ok()) << degraded.status().ToString();
  EXPECT_EQ(degraded->status, 503);
  EXPECT_EQ(degraded->body, "busy: \"$HOME\" \\ it's\nback soon") << "verbatim";
  EXPECT_EQ(degraded->headers["retry-after"], "17");
  Replica a("a");
  ASSERT_TRUE(api().SetServer("chat", "r1", "127.0.0.1", a.port(), 100).ok());
  ASSERT_TRUE(api().SetState("chat", "r1", ServerState::kReady).ok());
  EXPECT_EQ(Spread(3), (std::map<std::string, int>{{"a", 3}})) << "served again once a replica is up";
  ASSERT_TRUE(api().SetState("chat", "r1", ServerState::kMaint).ok());
  EXPECT_EQ(Spread(2), (std::map<std::string, int>{{"status 503", 2}}));
}

// The readiness probe as SkyPilot sends it: GET, or POST of post_data as
// JSON with the spec's headers; a 500 is not ready; a replica slower than
// the probe's timeout is not ready either, and the probe returns in time.
TEST(ProbeTest, AReplicaIsReadyOnlyWhenItAnswers200InTime) {
  Replica a("a"), slow("slow", "5");
  spec::ReadinessProbe get;
  get.path = "/health";
  get.timeout_seconds = 2;
  serving::ProbeResult r = serving::Probe("127.0.0.1", a.port(), get);
  EXPECT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.status, 200);

  spec::ReadinessProbe post;
  post.path = "/v1/completions";
  post.post_data = R"({"prompt":"hi","max_tokens":1})";
  post.headers = {{"Authorization", "Bearer probe-token"}};
  post.timeout_seconds = 2;
  EXPECT_TRUE(serving::Probe("127.0.0.1", a.port(), post).ok);
  net::HttpClient client("127.0.0.1", a.port());
  auto last = client.Send("GET", "/last");
  ASSERT_TRUE(last.ok());
  const nlohmann::json sent = nlohmann::json::parse(last->body);
  EXPECT_EQ(sent["method"], "POST");
  EXPECT_EQ(sent["path"], "/v1/completions");
  EXPECT_EQ(sent["body"], *post.post_data);
  EXPECT_EQ(sent["headers"]["Authorization"], "Bearer probe-token");
  EXPECT_EQ(sent["headers"]["Content-Type"], "application/json");

  ASSERT_TRUE(client.Send("POST", "/fail").ok());
  r = serving::Probe("127.0.0.1", a.port(), get);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "answered 500 to /health");
  EXPECT_EQ(r.error.find("probe-token"), std::string::npos);

  post.timeout_seconds = 0.3;
  r = serving::Probe("127.0.0.1", slow.port(), post);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.status, 0);
  EXPECT_LT(r.took, std::chrono::seconds(3)) << "the deadline fired";
}

// The whole failover, with the real pieces: the controller's decisions,
// its probes every second and HAProxy driven through Traffic; the test plays
// the scheduler (a replica is a model-server started at a place, refused
// while the place is down). Under a steady load, every preferred replica is
// killed and its place reported down: all traffic moves to the warm
// alternate (HAProxy's passive check marks the dead replicas down on their
// first refused connection, and the backups take over), the alternate is
// scaled to the minimum; then the place returns and traffic goes back after
// the hold-down, once; with both places gone, the degraded answer is served.
class FailoverTest : public HaproxyTest {
 protected:
  struct Live {
    std::unique_ptr<Replica> process;
    serving::ReplicaView view;
  };
  void SetUp() override {
    if (!std::filesystem::exists(kHaproxy)) GTEST_SKIP() << "Debian's haproxy is not installed (make test-deps)";
    port_ = FreePort();
    config_.name = "chat";
    config_.bind = "127.0.0.1:" + std::to_string(port_);
    config_.slots = 4;
    config_.backup_slots = 4;
    config_.degraded_answer = spec::FixedAnswer{503, "degraded", 5};
    config_.socket_path = dir_.path() + "/admin.sock";
    config_.pid_file = dir_.path() + "/haproxy.pid";
    auto p = serving::ProxyProcess::Start(kHaproxy, config_, dir_.path() + "/haproxy.cfg");
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    proxy_ = std::make_unique<serving::ProxyProcess>(std::move(*p));
    traffic_ = std::make_unique<serving::Traffic>(proxy_->api(), "chat", config_.slots, config_.backup_slots);
    spec_.readiness.path = "/health";
    spec_.readiness.interval_seconds = 1;
    spec_.readiness.timeout_seconds = 0.5;
    spec_.readiness.initial_delay_seconds = 30;
    spec_.replicas.min_replicas = 2;
    spec_.failover = spec::Failover{spec::Placement{"here-a"}, spec::AlternatePlacement{{"here-b"}, 1},
                                    Micros(3'000'000), {}};
  }
  void TearDown() override {
    stop_ = true;
    if (loop_.joinable()) loop_.join();
  }
  static Timestamp Now() { return std::chrono::time_point_cast<Micros>(std::chrono::system_clock::now()); }

  // One pass: probe, observe, decide, act (the test's scheduler starts and
  // kills replicas).
  void Pass() {
    std::lock_guard<std::mutex> lock(mu_);
    ++passes_;
    const Timestamp now = Now();
    for (Live& l : live_) {
      const bool ok = serving::Probe("127.0.0.1", l.process->port(), spec_.readiness).ok;
      if (ok && !l.view.passing_since) l.view.passing_since = now;
      if (ok) l.view.failing_since.reset();
      if (!ok && !l.view.failing_since) l.view.failing_since = now;
      if (!ok) l.view.passing_since.reset();
    }
    serving::ServiceView v;
    v.spec = &spec_;
    v.now = now;
    v.mode = mode_;
    v.preferred = preferred_;
    v.alternate = alternate_;
    v.target = target_;
    v.asked_target = asked_target_;
    v.asked_since = asked_since_;
    for (const Live& l : live_) v.replicas.push_back(l.view);
    auto total = traffic_->Observe(v.replicas);
    ASSERT_TRUE(total.ok()) << total.status().ToString();
    // The request rate since the last pass, from HAProxy's own counter.
    if (last_total_ >= 0 && now > last_at_) {
      v.qps = static_cast<double>(*total - last_total_) / std::chrono::duration<double>(now - last_at_).count();
    }
    last_total_ = *total;
    last_at_ = now;
    qps_ = v.qps;
    serving::Decision d = serving::Decide(v);
    target_ = d.target;
    asked_target_ = d.asked_target;
    asked_since_ = d.asked_since;
    if (!d.transition.empty()) transitions_.push_back(d.transition);
    mode_ = d.mode;
    for (const serving::Action& a : d.actions) {
      auto it = std::find_if(live_.begin(), live_.end(), [&](const Live& l) { return l.view.id == a.replica; });
      switch (a.kind) {
        case serving::ActionKind::kStart: {
          const serving::PlaceView& place = a.role == serving::Role::kAlternate ? alternate_ : preferred_;
          if (!place.healthy) break;  // the scheduler cannot place it there now
          Live l;
          l.view.id = std::string(serving::ToString(a.role)) + "-" + std::to_string(++started_);
          l.view.role = a.role;
          l.process = std::make_unique<Replica>(l.view.id);
          l.view.running = true;
          l.view.started_at = Now();
          ASSERT_TRUE(traffic_->Place(l.view.id, a.role, "127.0.0.1", l.process->port()).ok());
          live_.push_back(std::move(l));
          break;
        }
        case serving::ActionKind::kAdmit: ASSERT_TRUE(traffic_->Admit(a.replica).ok()); break;
        case serving::ActionKind::kDrain: ASSERT_TRUE(traffic_->Drain(a.replica).ok()); break;
        case serving::ActionKind::kStop:
          ASSERT_TRUE(traffic_->Remove(a.replica).ok());
          if (it != live_.end()) live_.erase(it);
          break;
      }
    }
  }
  void StartLoop() {
    loop_ = std::thread([this] {
      while (!stop_) {
        Pass();
        // The probe period (1 s) is the schedule under test: the recovery
        // figure is measured against it, so it is real time.
        for (int i = 0; i < 10 && !stop_; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
  }
  // Kills every replica of `role`, its place reported down.
  void Lose(serving::Role role, const std::string& why) {
    std::lock_guard<std::mutex> lock(mu_);
    for (Live& l : live_) {
      if (l.view.role == role) l.process->Kill();
    }
    (role == serving::Role::kPreferred ? preferred_ : alternate_) = {false, Now(), why};
  }
  void Restore(serving::Role role) {
    std::lock_guard<std::mutex> lock(mu_);
    (role == serving::Role::kPreferred ? preferred_ : alternate_) = {true, Now(), ""};
  }
  // Waits until the loop has made `n` more passes (its own period, the
  // probe's, is what paces it).
  bool MorePasses(int n) {
    int from;
    {
      std::lock_guard<std::mutex> lock(mu_);
      from = passes_;
    }
    return Eventually([&] {
      std::lock_guard<std::mutex> lock(mu_);
      return passes_ >= from + n;
    }, std::chrono::seconds(30));
  }
  serving::Mode mode() {
    std::lock_guard<std::mutex> lock(mu_);
    return mode_;
  }

  spec::ServiceSpec spec_;
  std::unique_ptr<serving::Traffic> traffic_;
  std::mutex mu_;
  std::vector<Live> live_;
  serving::Mode mode_ = serving::Mode::kStarting;
  serving::PlaceView preferred_{true, Now(), ""}, alternate_{true, Now(), ""};
  int target_ = 0, started_ = 0, asked_target_ = 0, passes_ = 0;
  std::optional<Timestamp> asked_since_;
  int64_t last_total_ = -1;
  Timestamp last_at_{};
  double qps_ = 0;
  std::vector<std::string> transitions_;
  std::atomic<bool> stop_{false};
  std::thread loop_;
};

// A steady load: each answer's time and who gave it ("status N" when not 200).
class Load {
 public:
  Load(uint16_t port, int clients, std::chrono::milliseconds pause = std::chrono::milliseconds(20)) {
    for (int c = 0; c < clients; ++c) {
      threads_.emplace_back([this, port, pause] {
        net::HttpClient client("127.0.0.1", port, std::chrono::seconds(10));
        while (!stop_) {
          auto r = client.Send("GET", "/v1/completions");
          const std::string who = !r.ok() ? "error" : r->status == 200 ? r->body : "status " + std::to_string(r->status);
          {
            std::lock_guard<std::mutex> lock(mu_);
            answers_.emplace_back(std::chrono::steady_clock::now(), who);
          }
          std::this_thread::sleep_for(pause);  // the load's rate, which the autoscaler reads
        }
      });
    }
  }
  ~Load() { Stop(); }
  void Stop() {
    stop_ = true;
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  std::vector<std::pair<std::chrono::steady_clock::time_point, std::string>> Since(std::chrono::steady_clock::time_point t) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::pair<std::chrono::steady_clock::time_point, std::string>> out;
    for (const auto& a : answers_) {
      if (a.first >= t) out.push_back(a);
    }
    return out;
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::vector<std::pair<std::chrono::steady_clock::time_point, std::string>> answers_;
};

TEST_F(FailoverTest, TrafficMovesToTheWarmAlternateAndBackAfterHoldDownAndTheDegradedModeAnswersLast) {
  StartLoop();
  ASSERT_TRUE(Eventually([&] { return mode() == serving::Mode::kNormal; }, std::chrono::seconds(20)));
  // Both preferred replicas admitted (the second may answer a pass later).
  ASSERT_TRUE(Eventually([&] { return Spread(6) == std::map<std::string, int>{{"preferred-1", 3}, {"preferred-2", 3}}; },
                         std::chrono::seconds(10)));
  Load load(port_, 4);
  ASSERT_TRUE(Eventually([&] { return load.Since({}).size() >= 20; }, std::chrono::seconds(10)));

  // Every preferred replica killed, its place reported down.
  const auto killed = std::chrono::steady_clock::now();
  Lose(serving::Role::kPreferred, "provider outage reported");
  ASSERT_TRUE(Eventually([&] { return mode() == serving::Mode::kFailedOver; }, std::chrono::seconds(10)));
  // Enough answers after the kill to see where traffic settled.
  ASSERT_TRUE(Eventually([&] { return load.Since(killed).size() >= 100; }, std::chrono::seconds(20)));
  // The recovery time: from the kill to the first answer after which every
  // answer came from the alternate.
  const auto after = load.Since(killed);
  auto last_other = killed;
  int failed = 0;
  for (const auto& [at, who] : after) {
    if (who.rfind("alternate-", 0) != 0) last_other = at;
    if (who.rfind("alternate-", 0) != 0 && who.rfind("preferred-", 0) != 0) ++failed;
  }
  const double recovery_s = std::chrono::duration<double>(last_other - killed).count();
  std::printf("failover: recovery %.3f s, %d requests failed of %zu after the kill\n", recovery_s, failed, after.size());
  EXPECT_LT(recovery_s, 5.0);
  EXPECT_EQ(failed, 0) << "HAProxy retried each refused request on a live replica";
  ASSERT_TRUE(Eventually([&] {
    std::lock_guard<std::mutex> lock(mu_);
    return std::count_if(live_.begin(), live_.end(), [](const Live& l) {
             return l.view.role == serving::Role::kAlternate && l.view.passing_since;
           }) == 2;
  }, std::chrono::seconds(10))) << "the alternate scaled to the minimum";

  // The place returns: new preferred replicas start, and traffic goes back
  // only after the hold-down (3 s), once.
  const auto restored = std::chrono::steady_clock::now();
  Restore(serving::Role::kPreferred);
  ASSERT_TRUE(Eventually([&] { return mode() == serving::Mode::kNormal; }, std::chrono::seconds(20)));
  const double back_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - restored).count();
  EXPECT_GE(back_s, 3.0) << "not before the hold-down";
  ASSERT_TRUE(Eventually([&] {
    auto s = Spread(8);
    return s.size() == 2 && std::all_of(s.begin(), s.end(), [](const auto& w) { return w.first.rfind("preferred-", 0) == 0; });
  }, std::chrono::seconds(10))) << "two new preferred replicas serve everything";
  ASSERT_TRUE(MorePasses(3)) << "three more passes, to see any flap";
  {
    std::lock_guard<std::mutex> lock(mu_);
    EXPECT_EQ(transitions_.size(), 3u) << "no flapping";
    EXPECT_EQ(std::count_if(live_.begin(), live_.end(), [](const Live& l) { return l.view.role == serving::Role::kAlternate; }),
              1) << "the alternate back to warm";
  }
  load.Stop();
  const auto cut = load.Since(restored);
  EXPECT_EQ(std::count_if(cut.begin(), cut.end(), [](const auto& a) { return a.second.rfind("status", 0) == 0 || a.second == "error"; }),
            0) << "the fall-back drained, nothing failed";

  // Both places gone: the degraded answer.
  Lose(serving::Role::kPreferred, "provider outage reported");
  Lose(serving::Role::kAlternate, "cluster unhealthy");
  ASSERT_TRUE(Eventually([&] { return mode() == serving::Mode::kDegraded; }, std::chrono::seconds(15)));
  net::HttpClient client("127.0.0.1", port_, std::chrono::seconds(10));
  EXPECT_TRUE(Eventually([&] {
    auto r = client.Send("GET", "/v1/completions");
    return r.ok() && r->status == 503 && r->body == "degraded" && r->headers["retry-after"] == "5";
  }, std::chrono::seconds(10)));
  std::lock_guard<std::mutex> lock(mu_);
  ASSERT_FALSE(transitions_.empty());
  EXPECT_NE(transitions_.back().find("-> degraded"), std::string::npos) << transitions_.back();
}

// Scaling from HAProxy's own counters: a load above target_qps_per_replica
// times the replicas adds replicas once the upscale delay has passed; when
// it stops, replicas leave after the downscale delay, drained first, and no
// request fails on the way.
TEST_F(FailoverTest, LoadAboveTheTargetAddsReplicasAndTheyLeaveDrainedWhenItStops) {
  spec_.failover.reset();
  spec_.replicas.min_replicas = 1;
  spec_.replicas.max_replicas = 3;
  spec_.replicas.target_qps_per_replica = 20;
  spec_.replicas.upscale_delay_seconds = 2;
  spec_.replicas.downscale_delay_seconds = 3;
  StartLoop();
  ASSERT_TRUE(Eventually([&] { return mode() == serving::Mode::kNormal; }, std::chrono::seconds(20)));
  auto preferred = [&] {
    std::lock_guard<std::mutex> lock(mu_);
    return std::count_if(live_.begin(), live_.end(), [](const Live& l) { return l.view.passing_since.has_value(); });
  };
  EXPECT_EQ(preferred(), 1);
  const auto loaded = std::chrono::steady_clock::now();
  auto load = std::make_unique<Load>(port_, 4);  // about 150 requests/s: asks for all 3
  ASSERT_TRUE(Eventually([&] { return preferred() == 3; }, std::chrono::seconds(20)));
  const double up_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - loaded).count();
  std::printf("scaling: 3 replicas ready %.1f s after the load began (upscale delay 2 s), %.0f requests/s\n", up_s, qps_);
  EXPECT_GE(up_s, 2.0) << "not before the upscale delay";
  load.reset();
  // A light load (about 5 requests/s) while the surplus leaves.
  const auto light_from = std::chrono::steady_clock::now();
  load = std::make_unique<Load>(port_, 1, std::chrono::milliseconds(200));
  ASSERT_TRUE(Eventually([&] { return preferred() == 1; }, std::chrono::seconds(20)));
  ASSERT_TRUE(MorePasses(1));
  load->Stop();
  const auto answers = load->Since(light_from);
  EXPECT_GT(answers.size(), 10u);
  EXPECT_EQ(std::count_if(answers.begin(), answers.end(), [](const auto& a) { return a.second.rfind("preferred-", 0) != 0; }), 0)
      << "the leaving replicas were drained";
  std::lock_guard<std::mutex> lock(mu_);
  EXPECT_EQ(target_, 1);
}

TEST_F(HaproxyTest, AConfigurationThatWouldBreakTheFileIsRefused) {
  serving::ProxyConfig bad = config_;
  bad.name = "chat\n  server evil";
  EXPECT_EQ(serving::RenderConfig(bad).status().code(), Code::kInvalidArgument);
  bad = config_;
  bad.bind = "127.0.0.1:99999";
  EXPECT_EQ(serving::RenderConfig(bad).status().code(), Code::kInvalidArgument);
  bad = config_;
  bad.socket_path = "/tmp/a b.sock";
  EXPECT_EQ(serving::RenderConfig(bad).status().code(), Code::kInvalidArgument);
  // A socket nobody answers on: an error within the deadline.
  serving::RuntimeApi nobody(dir_.path() + "/nobody.sock", std::chrono::milliseconds(200));
  EXPECT_EQ(nobody.Command("show info").status().code(), Code::kUnavailable);
}

// A service run by the server end to end: `POST /v1/services` with a task
// whose replicas are model-servers on the local executor, on two clusters
// under different providers; the server submits them as jobs, probes them,
// starts HAProxy and drives it. Killing every preferred replica moves the
// traffic to the warm alternate at once; the server replaces them at the
// preferred place and moves traffic back after the hold-down; each change
// of mode is an audit event; down ends every replica and closes the
// endpoint.
class ServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kHaproxy)) GTEST_SKIP() << "Debian's haproxy is not installed (make test-deps)";
  }
  static std::string Estate(const std::string& out) {
    std::string e = "providers:\n"
                    "  - {name: here-a, kind: local, regions: [{name: ra, zone: eu}]}\n"
                    "  - {name: here-b, kind: local, regions: [{name: rb, zone: eu}]}\n"
                    "clusters:\n";
    for (const char* c : {"a", "b"}) {
      e += std::string("  - name: box-") + c + "\n    provider: here-" + c + "\n    region: r" + c +
           "\n    node_pools: [{name: l4, gpu_type: L4, gpus_per_node: 8, nodes: 1}]\n"
           "    local: {output_dir: " + out + "-" + c + "}\n";
    }
    return e;
  }
  // The replicas are model-servers answering with their role (and
  // `revision`'s suffix); while the file ROLE-lost exists in `dir`, a
  // replica of that role exits at once (its place is lost: every new
  // attempt there fails).
  static std::string Head(const std::string& dir, const std::string& revision = "") {
    return "name: chat\n"
           "resources: {accelerators: L4:1}\n"
           "run: test -e " + dir + "/$CAUSEWAY_REPLICA_ROLE-lost && exit 1;\n"
           "  exec python3 " + PeersDir() + "/model-server.py $CAUSEWAY_REPLICA_ROLE" + revision +
           " --port $CAUSEWAY_REPLICA_PORT --tag " + dir + "\n"
           "service:\n"
           "  readiness_probe: {path: /health, initial_delay_seconds: 30, timeout_seconds: 1,\n"
           "                    endpoint_probe_interval_seconds: 1}\n";
  }
  static std::string Task(const std::string& dir, const std::string& revision = "") {
    return Head(dir, revision) +
           "  replicas: 2\n"
           "failover:\n"
           "  preferred: here-a\n"
           "  alternate: {place: box-b, warm: 1}\n"
           "  hold_down: 3s\n";
  }
  static std::string ServerLog(TempDir& dir) {
    std::ifstream f(dir.path() + "/server.log");
    std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    return text.size() > 6000 ? text.substr(text.size() - 6000) : text;
  }
  std::string tag_ = "none";
  void TearDown() override {
    // Replicas and proxies outlive a server by design: none of this test's
    // may outlive it.
    for (const char* role : {"preferred", "alternate", "degraded", "preferred-v2", "alternate-v2"}) {
      for (pid_t p : Replicas(role)) ::kill(p, SIGKILL);
    }
    for (pid_t p : Proxies()) ::kill(p, SIGKILL);
  }
  // The pids of the processes whose command line (arguments joined by
  // spaces, one after the last) `match` accepts.
  template <typename F>
  static std::vector<pid_t> Processes(F match) {
    std::vector<pid_t> out;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
      const std::string name = e.path().filename();
      if (name.find_first_not_of("0123456789") != std::string::npos) continue;
      std::ifstream f(e.path() / "cmdline");
      std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      std::replace(cmd.begin(), cmd.end(), '\0', ' ');
      if (match(cmd)) out.push_back(std::stoi(name));
    }
    return out;
  }
  // This test's HAProxy processes.
  std::vector<pid_t> Proxies() const {
    return Processes([&](const std::string& cmd) {
      return cmd.rfind(kHaproxy, 0) == 0 && cmd.find(tag_ + "/services/") != std::string::npos;
    });
  }
  // This test's model-servers of `role` running now.
  std::vector<pid_t> Replicas(const std::string& role) const {
    return Processes([&](const std::string& cmd) {
      return cmd.find("model-server.py " + role + " ") != std::string::npos &&
             cmd.find("--tag " + tag_ + " ") != std::string::npos;
    });
  }
};

TEST_F(ServiceTest, TheServerRunsAServiceFailsItOverToTheWarmAlternateAndBackAndTakesItDown) {
  TempDir dir("service");
  tag_ = dir.path();
  EstateServer s(dir, Estate(dir.path() + "/out"));
  // A client of the server where it listens now (a restart moves it), and
  // the CLI pointed at it.
  auto c = [&] { return s.process().Client(); };
  auto cli = [&](std::vector<std::string> args) {
    return RunCli(std::move(args), {{"CAUSEWAY_SERVER", s.process().url()}, {"CAUSEWAY_TOKEN", s.process().admin_token()}});
  };
  auto up = c().Send("POST", "/v1/services", nlohmann::json{{"spec", Task(dir.path())}, {"file", "chat.yaml"}}.dump(),
                   Auth(s.process().admin_token()));
  ASSERT_EQ(up->status, 201) << up->body;
  const std::string endpoint = nlohmann::json::parse(up->body)["endpoint"];
  const uint16_t port = static_cast<uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
  // Two preferred replicas and the warm alternate, each a job, all ready.
  ASSERT_TRUE(Eventually([&] {
    auto j = s.Get("/v1/services/chat");
    return j["mode"] == "normal" && j["ready_replicas"] == 3;
  }, std::chrono::seconds(60))) << s.Get("/v1/services/chat").dump(2);
  auto shown = s.Get("/v1/services/chat");
  std::map<std::string, std::string> cluster_of;
  for (const auto& r : shown["replicas"]) cluster_of[r["role"]] = r["cluster"];
  EXPECT_EQ(cluster_of["preferred"], "box-a");
  EXPECT_EQ(cluster_of["alternate"], "box-b");
  const std::string replica_job = shown["replicas"][0]["job"];
  auto job = s.Get("/v1/jobs/" + replica_job);
  EXPECT_EQ(job["spec"]["labels"]["service"], "chat") << job["spec"].dump(2);
  // The same service twice is refused.
  auto again = c().Send("POST", "/v1/services", nlohmann::json{{"spec", Task(dir.path())}}.dump(), Auth(s.process().admin_token()));
  EXPECT_EQ(again->status, 409) << again->body;
  // The slot that answered is named only to a request that asks (a drill's).
  {
    net::HttpClient client("127.0.0.1", port, std::chrono::seconds(5));
    auto plain = client.Send("GET", "/v1/completions");
    ASSERT_TRUE(plain.ok()) << plain.status().ToString();
    EXPECT_EQ(plain->headers.count("x-causeway-slot"), 0u);
    auto asked = client.Send("GET", "/v1/completions", "", {{"X-Causeway-Slot", "?"}});
    ASSERT_TRUE(asked.ok()) << asked.status().ToString();
    EXPECT_EQ(asked->headers["x-causeway-slot"].substr(0, 1), "r") << asked->body;
  }

  Load load(port, 4);
  ASSERT_TRUE(Eventually([&] {
    auto a = load.Since({});
    return std::count_if(a.begin(), a.end(), [](const auto& x) { return x.second == "preferred"; }) >= 20;
  }, std::chrono::seconds(20)));
  // The preferred place lost: every preferred replica killed, and none
  // can start there again.
  std::vector<pid_t> preferred = Replicas("preferred");
  ASSERT_EQ(preferred.size(), 2u);
  std::ofstream(dir.path() + "/preferred-lost") << "lost\n";
  const auto killed = std::chrono::steady_clock::now();
  for (pid_t p : preferred) ::kill(p, SIGKILL);
  ASSERT_TRUE(Eventually([&] { return load.Since(killed).size() >= 100; }, std::chrono::seconds(20)));
  auto after = load.Since(killed);
  auto last_other = killed;
  int failed = 0;
  std::string failures;
  for (const auto& [at, who] : after) {
    if (who != "alternate") last_other = at;
    if (who != "alternate" && who != "preferred") {
      ++failed;
      failures += " [" + who + "]";
    }
  }
  const double recovery_s = std::chrono::duration<double>(last_other - killed).count();
  std::printf("service failover: recovery %.3f s, %d requests failed of %zu after the kill%s\n", recovery_s, failed,
              after.size(), failures.c_str());
  EXPECT_LT(recovery_s, 5.0);
  // Only a request a killed replica was answering at that moment may fail
  // (one per client at most); every later one is retried or rerouted.
  EXPECT_LE(failed, 4) << failures;
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/services/chat")["mode"] == "failed_over"; }, std::chrono::seconds(10)))
      << s.Get("/v1/services/chat").dump(2);
  // The alternate scaled to the service's two replicas.
  ASSERT_TRUE(Eventually([&] {
    auto j = s.Get("/v1/services/chat");
    return std::count_if(j["replicas"].begin(), j["replicas"].end(), [](const nlohmann::json& r) {
             return r["role"] == "alternate" && r["state"] == "ready" && r["in_traffic"] == true;
           }) == 2;
  }, std::chrono::seconds(30))) << s.Get("/v1/services/chat").dump(2);
  // The place back: new preferred replicas, and traffic back after the
  // hold-down.
  std::filesystem::remove(dir.path() + "/preferred-lost");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/services/chat")["mode"] == "normal"; }, std::chrono::seconds(60)))
      << s.Get("/v1/services/chat").dump(2);
  const auto back = std::chrono::steady_clock::now();
  ASSERT_TRUE(Eventually([&] {
    auto a = load.Since(back);
    return a.size() >= 20 && std::all_of(a.end() - 10, a.end(), [](const auto& x) { return x.second == "preferred"; });
  }, std::chrono::seconds(20)));
  load.Stop();
  auto cut = load.Since(killed + std::chrono::seconds(1));
  EXPECT_EQ(std::count_if(cut.begin(), cut.end(), [](const auto& a) { return a.second != "alternate" && a.second != "preferred"; }),
            0) << "nothing failed after the kill's moment, nor during the fall-back";

  // Separately, the failover drill as an operator runs it: `causeway
  // acceptance failover` puts its own load on the endpoint, takes the
  // preferred provider down (its outage drill kills the replicas and
  // places nothing there), measures, restores it, and records the verdict,
  // which readiness then shows for that provider.
  auto drill = cli({"acceptance", "failover", "chat", "--out", dir.path(), "--rate", "40"});
  ASSERT_EQ(drill.exit_code, 0) << drill.out << drill.err << ServerLog(dir);
  std::string report_file;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    if (e.path().filename().string().rfind("acceptance-failover-", 0) == 0 && e.path().extension() == ".json") {
      report_file = e.path();
    }
  }
  ASSERT_FALSE(report_file.empty()) << drill.out;
  std::ifstream report_in(report_file);
  const nlohmann::json report = nlohmann::json::parse(report_in);
  std::printf("service outage drill (causeway acceptance failover): %s\n", report.value("summary", "").c_str());
  EXPECT_EQ(report["provider"], "here-a");
  EXPECT_LT(report["recovery_ms"].get<int64_t>(), 5000);
  EXPECT_EQ(report["failed_during_failover"], 0);
  EXPECT_EQ(report["failed_during_fallback"], 0);
  EXPECT_TRUE(report["passed"].get<bool>()) << report.dump(2);
  auto readiness = s.Get("/v1/readiness?provider=here-a");
  // (Not in place all the same: this estate names no owner for it.)
  bool rehearsed = false;
  for (const auto& f : readiness["findings"]) {
    if (f["control"] == "restore-rehearsal") {
      rehearsed = f["reason"].get<std::string>().find("the failover acceptance run passed") != std::string::npos;
    }
  }
  EXPECT_TRUE(rehearsed) << readiness.dump(2);

  // The server killed (-9): the replicas and HAProxy go on serving; the
  // restarted server finds its replicas and takes over the HAProxy it left
  // (asked its pid over the admin socket), in the mode it was in.
  {
    Load across(port, 2);
    ASSERT_TRUE(Eventually([&] { return across.Since({}).size() >= 10; }, std::chrono::seconds(10)));
    const std::vector<pid_t> proxies_before = Proxies();
    ASSERT_EQ(proxies_before.size(), 1u);
    const auto killed_at = std::chrono::steady_clock::now();
    s.Restart();
    ASSERT_TRUE(Eventually([&] {
      auto j = s.Get("/v1/services/chat");
      return j["mode"] == "normal" && j["proxy"] == "running" && j["ready_replicas"] == 3;
    }, std::chrono::seconds(30))) << s.Get("/v1/services/chat").dump(2);
    const auto after = std::chrono::steady_clock::now();
    ASSERT_TRUE(Eventually([&] { return across.Since(after).size() >= 10; }, std::chrono::seconds(10)));
    across.Stop();
    auto through = across.Since(killed_at);
    int lost = 0;
    for (const auto& [at, who] : through) lost += who != "preferred" && who != "alternate" ? 1 : 0;
    std::printf("service across a kill -9 of the server: %d of %zu requests failed\n", lost, through.size());
    EXPECT_EQ(lost, 0) << "the proxy was taken over, not replaced";
    EXPECT_EQ(Proxies(), proxies_before) << "the same HAProxy serves";
  }

  // A rolling update under load (`causeway service update`): revision 2's
  // replicas start beside the old ones, and each old one leaves, drained,
  // as a new one is ready; no request fails and the mode never changes.
  {
    Load during(port, 4);
    ASSERT_TRUE(Eventually([&] { return during.Since({}).size() >= 20; }, std::chrono::seconds(10)));
    const std::string v2 = dir.path() + "/chat-v2.yaml";
    std::ofstream(v2) << Task(dir.path(), "-v2");
    const auto began = std::chrono::steady_clock::now();
    auto update = cli({"service", "update", "chat", v2});
    ASSERT_EQ(update.exit_code, 0) << update.out << update.err;
    EXPECT_NE(update.out.find("revision 2"), std::string::npos) << update.out;
    ASSERT_TRUE(Eventually([&] {
      auto j = s.Get("/v1/services/chat");
      return j["replicas"].size() == 3 && std::all_of(j["replicas"].begin(), j["replicas"].end(), [](const auto& r) {
               return r["revision"] == 2 && r["state"] == "ready";
             });
    }, std::chrono::seconds(60))) << s.Get("/v1/services/chat").dump(2);
    EXPECT_TRUE(Eventually([&] { return Replicas("preferred").empty() && Replicas("alternate").empty(); },
                           std::chrono::seconds(20)))
        << "the old replicas end";
    const auto done = std::chrono::steady_clock::now();
    ASSERT_TRUE(Eventually([&] {
      auto a = during.Since(done);
      return a.size() >= 10 && std::all_of(a.end() - 5, a.end(), [](const auto& x) { return x.second == "preferred-v2"; });
    }, std::chrono::seconds(10)));
    during.Stop();
    auto through = during.Since(began);
    int failed = 0, old_answers = 0;
    for (const auto& [at, who] : through) {
      failed += who != "preferred" && who != "preferred-v2" && who != "alternate" && who != "alternate-v2" ? 1 : 0;
      old_answers += who == "preferred" ? 1 : 0;
    }
    std::printf("service rolling update: %d of %zu requests failed (%d answered by revision 1 meanwhile)\n", failed,
                through.size(), old_answers);
    EXPECT_EQ(failed, 0);
    EXPECT_GT(old_answers, 0) << "the old revision served until the new one was ready";
    auto updates = s.Get("/v1/audit?action=service.update&resource=service/chat");
    ASSERT_EQ(updates["events"].size(), 1u);
    EXPECT_EQ(updates["events"][0]["details"]["revision"], 2);
  }

  // Each change of mode is an audit event, naming why and who acts next.
  auto audit = s.Get("/v1/audit?action=service.transition&resource=service/chat");
  std::vector<std::string> modes;
  for (const auto& e : audit["events"]) modes.push_back(e["details"]["to"]);
  EXPECT_EQ(modes, (std::vector<std::string>{"normal", "failed_over", "normal", "failed_over", "normal"})) << audit.dump(2);

  // Down: every replica ends, the endpoint closes, the service is gone.
  std::vector<std::string> serving;
  const nlohmann::json before_down = s.Get("/v1/services/chat");
  for (const auto& r : before_down["replicas"]) serving.push_back(r["job"]);
  ASSERT_GE(serving.size(), 3u);
  auto down = c().Send("DELETE", "/v1/services/chat", "", Auth(s.process().admin_token()));
  ASSERT_EQ(down->status, 200) << down->body;
  ASSERT_TRUE(Eventually([&] {
    auto r = c().Send("GET", "/v1/services/chat", "", Auth(s.process().admin_token()));
    return r.ok() && r->status == 404;
  }, std::chrono::seconds(30))) << s.Get("/v1/services/chat").dump(2) << ServerLog(dir);
  EXPECT_TRUE(Eventually([&] { return Replicas("preferred-v2").empty() && Replicas("alternate-v2").empty(); },
                         std::chrono::seconds(20)));
  net::HttpClient closed("127.0.0.1", port, std::chrono::seconds(2));
  EXPECT_FALSE(closed.Send("GET", "/").ok()) << "the endpoint is closed";
  for (const std::string& job : serving) EXPECT_EQ(s.Get("/v1/jobs/" + job)["state"], "cancelled") << job;
  // Showback beside jobs: the service's replicas' cost, the requests its
  // endpoint answered (recorded when it was removed), per hour and per
  // 1,000 requests.
  auto showback = s.Get("/v1/cost/showback?source=metered&by=service");
  const nlohmann::json* row = nullptr;
  for (const auto& r : showback["rows"]) {
    if (r["service"] == "chat") row = &r;
  }
  ASSERT_NE(row, nullptr) << showback.dump(2);
  EXPECT_GE((*row)["requests"].get<int64_t>(), 200) << row->dump();
  EXPECT_GE((*row)["attempts"].get<int64_t>(), 5) << row->dump();
  EXPECT_FALSE((*row)["cost_per_hour"].is_null()) << row->dump();
  EXPECT_FALSE((*row)["cost_per_1000_requests"].is_null()) << row->dump();
  auto table = cli({"cost", "showback", "--metered", "--by", "service"});
  EXPECT_NE(table.out.find("COST/1000 REQUESTS"), std::string::npos) << table.out << table.err;
  auto ended = s.Get("/v1/audit?action=service.replica_end&resource=service/chat");
  EXPECT_GE(ended["events"].size(), serving.size() + 2) << "the killed replicas' ends are recorded too";
}

// Through the server as well: the autoscaler follows HAProxy's own request
// rate (up within the upscale delay, down after the downscale delay, each
// surplus replica drained first), and with both places lost the degraded
// answer is served by HAProxy itself, the transition naming the platform
// team.
TEST_F(ServiceTest, TheServerScalesAServiceWithItsLoadAndServesTheDegradedAnswerWhenBothPlacesAreLost) {
  TempDir dir("service-scale");
  tag_ = dir.path();
  EstateServer s(dir, Estate(dir.path() + "/out"));
  const std::string task = Head(dir.path()) +
                           "  replica_policy: {min_replicas: 1, max_replicas: 3, target_qps_per_replica: 20,\n"
                           "                   upscale_delay_seconds: 2, downscale_delay_seconds: 3}\n"
                           "failover:\n"
                           "  preferred: here-a\n"
                           "  alternate: {place: box-b, warm: 1}\n"
                           "  hold_down: 3s\n"
                           "  degraded: {answer: {status: 503, body: chat is busy, retry_after: 7}}\n";
  auto up = s.process().Client().Send("POST", "/v1/services", nlohmann::json{{"spec", task}, {"file", "chat.yaml"}}.dump(),
                                      Auth(s.process().admin_token()));
  ASSERT_EQ(up->status, 201) << up->body;
  const std::string endpoint = nlohmann::json::parse(up->body)["endpoint"];
  const uint16_t port = static_cast<uint16_t>(std::stoi(endpoint.substr(endpoint.rfind(':') + 1)));
  auto ready = [&](const std::string& role) {
    auto j = s.Get("/v1/services/chat");
    return std::count_if(j["replicas"].begin(), j["replicas"].end(), [&](const nlohmann::json& r) {
      return r["role"] == role && r["state"] == "ready" && r["in_traffic"] == true;
    });
  };
  ASSERT_TRUE(Eventually([&] { return ready("preferred") == 1 && ready("alternate") == 1; }, std::chrono::seconds(60)))
      << s.Get("/v1/services/chat").dump(2);

  // Load well above 20 requests a second per replica: three preferred replicas.
  {
    Load heavy(port, 4);
    const auto began = std::chrono::steady_clock::now();
    ASSERT_TRUE(Eventually([&] { return ready("preferred") == 3; }, std::chrono::seconds(30)))
        << s.Get("/v1/services/chat").dump(2);
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    heavy.Stop();
    auto answers = heavy.Since(began);
    const auto failed = std::count_if(answers.begin(), answers.end(), [](const auto& a) { return a.second != "preferred"; });
    std::printf("service through the server: 3 preferred replicas ready %.1f s after the load began (upscale delay 2 s), "
                "%ld of %zu requests failed\n", took, static_cast<long>(failed), answers.size());
    EXPECT_EQ(failed, 0);
    EXPECT_EQ(s.Get("/v1/services/chat")["target_replicas"], 3);
  }
  // A light load: back to one after the downscale delay, the surplus
  // drained, nothing failed.
  {
    Load light(port, 1, std::chrono::milliseconds(200));
    const auto began = std::chrono::steady_clock::now();
    ASSERT_TRUE(Eventually([&] {
      auto j = s.Get("/v1/services/chat");
      return j["target_replicas"] == 1 && j["replicas"].size() == 2;
    }, std::chrono::seconds(40))) << s.Get("/v1/services/chat").dump(2);
    light.Stop();
    auto answers = light.Since(began);
    EXPECT_GT(answers.size(), 5u);
    EXPECT_EQ(std::count_if(answers.begin(), answers.end(), [](const auto& a) { return a.second != "preferred"; }), 0);
    auto ended = s.Get("/v1/audit?action=service.replica_end&resource=service/chat");
    ASSERT_EQ(ended["events"].size(), 2u) << ended.dump(2);
    for (const auto& e : ended["events"]) {
      EXPECT_NE(e["details"].value("reason", "").find("wanted"), std::string::npos) << e.dump();
    }
  }

  // Both places lost: every replica killed, none may start again.
  std::ofstream(dir.path() + "/preferred-lost") << "lost\n";
  std::ofstream(dir.path() + "/alternate-lost") << "lost\n";
  for (const char* role : {"preferred", "alternate"}) {
    for (pid_t p : Replicas(role)) ::kill(p, SIGKILL);
  }
  net::HttpClient client("127.0.0.1", port, std::chrono::seconds(5));
  ASSERT_TRUE(Eventually([&] {
    auto r = client.Send("GET", "/v1/completions");
    return r.ok() && r->status == 503 && r->body == "chat is busy";
  }, std::chrono::seconds(20)));
  auto r = client.Send("GET", "/v1/completions");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->headers["retry-after"], "7");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/services/chat")["mode"] == "degraded"; }, std::chrono::seconds(20)))
      << s.Get("/v1/services/chat").dump(2);
  auto audit = s.Get("/v1/audit?action=service.transition&resource=service/chat");
  ASSERT_FALSE(audit["events"].empty());
  const auto& last = audit["events"][audit["events"].size() - 1];
  EXPECT_EQ(last["details"]["to"], "degraded") << audit.dump(2);
  EXPECT_NE(last["details"].value("next_action_owner", "").find("platform team"), std::string::npos) << last.dump();

  auto down = s.process().Client().Send("DELETE", "/v1/services/chat", "", Auth(s.process().admin_token()));
  ASSERT_EQ(down->status, 200) << down->body;
  ASSERT_TRUE(Eventually([&] {
    auto g = s.process().Client().Send("GET", "/v1/services/chat", "", Auth(s.process().admin_token()));
    return g.ok() && g->status == 404;
  }, std::chrono::seconds(30))) << ServerLog(dir);
}

}  // namespace
}  // namespace causeway::testing
