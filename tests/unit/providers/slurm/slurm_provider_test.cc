// The Slurm adapter against a fake cluster: calls run on the cluster's
// worker, never on the caller's thread, so a cluster that hangs holds up
// only its own work. (tests/integration/slurm_test.cc drives real Slurm.)
#include "providers/slurm/slurm_provider.h"
#include "providers/registry.h"
#include "unit/launch_test_peer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace causeway::slurm {
namespace {

using namespace std::chrono_literals;

// A cluster whose Submit can be held (a hang) and answered at will.
struct FakeCluster {
  std::mutex mu;
  std::condition_variable cv;
  bool hold_submit = false;
  int submits_entered = 0;
  std::optional<Status> submit_answer;  // once held: what the held Submit returns
  int64_t next_id = 100;
  std::vector<JobInfo> jobs;
  std::vector<int64_t> cancelled;
  std::vector<SubmitRequest> submitted;
};

class FakeApi final : public SlurmApi {
 public:
  explicit FakeApi(FakeCluster& c) : c_(c) {}
  std::string Describe() const override { return "a fake cluster"; }
  Status Ping() override { return Status::Ok(); }
  Result<int64_t> Submit(const SubmitRequest& r) override {
    std::unique_lock<std::mutex> lock(c_.mu);
    c_.submits_entered++;
    c_.submitted.push_back(r);
    c_.cv.notify_all();
    if (c_.hold_submit) {
      c_.cv.wait(lock, [&] { return c_.submit_answer.has_value(); });
      Status st = *c_.submit_answer;
      c_.submit_answer.reset();
      c_.hold_submit = false;
      if (!st.ok()) return st;
    }
    JobInfo j;
    j.id = c_.next_id++;
    j.name = r.name;
    j.state = "PENDING";
    c_.jobs.push_back(j);
    return j.id;
  }
  Result<std::vector<JobInfo>> ListJobs() override {
    std::lock_guard<std::mutex> lock(c_.mu);
    return c_.jobs;
  }
  Status Cancel(int64_t id) override {
    std::lock_guard<std::mutex> lock(c_.mu);
    c_.cancelled.push_back(id);
    return Status::Ok();
  }
  Result<std::vector<JobInfo>> Accounting(const std::vector<int64_t>&) override { return std::vector<JobInfo>{}; }

 private:
  FakeCluster& c_;
};

Estate OneCluster() {
  auto e = providers::ParseEstate(
      "providers: [{name: lab, kind: slurm, regions: [{name: r, zone: eu}]}]\n"
      "clusters:\n  - name: c\n    provider: lab\n    region: r\n"
      "    node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 8, nodes: 1}]\n"
      "    slurm: {url: \"http://127.0.0.1:1\", user: u, token_file: /dev/null, partition: gpu, output_dir: /tmp}\n",
      "estate.yaml");
  EXPECT_TRUE(e.ok()) << e.status().ToString();
  return *e;
}

LaunchRequest Request(const std::string& job, int attempt = 1) {
  LaunchRequest r;
  r.job_id = job;
  r.attempt = attempt;
  r.cluster = "c";
  r.pool = "h200";
  r.gpus_per_node = 8;
  r.run = "train";
  return r;
}

class SlurmProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    estate_ = OneCluster();
    SlurmProvider::Options o;
    o.hung_after = 50ms;
    o.queued_calls = 4;
    o.api = [this](const SlurmSettings&) { return std::make_unique<FakeApi>(fake_); };
    o.now = [this] { return std::chrono::steady_clock::time_point(std::chrono::microseconds(steady_us_.load())); };
    provider_ = std::make_unique<SlurmProvider>(estate_, estate_.providers[0], o);
    pool_ = provider_->ResolvePool("c", "h200");
    ASSERT_GE(pool_, 0);
  }
  // Polls until `done` holds for the events so far: each Poll asks the
  // worker to reconcile, and the next one comes once the worker is idle (a
  // bounded loop; no call in these tests hangs while it runs).
  template <typename F>
  std::vector<ProviderEvent> PollUntil(F done) {
    std::vector<ProviderEvent> all;
    for (int i = 0; i < 100 && !done(all); ++i) {
      provider_->WaitIdle();
      auto got = provider_->Poll(now_);
      all.insert(all.end(), got.begin(), got.end());
    }
    return all;
  }
  void AdvanceSteady(std::chrono::microseconds d) { steady_us_ += d.count(); }
  void WaitSubmitEntered(int n) {
    std::unique_lock<std::mutex> lock(fake_.mu);
    fake_.cv.wait(lock, [&] { return fake_.submits_entered >= n; });
  }
  void Answer(Status st) {
    std::lock_guard<std::mutex> lock(fake_.mu);
    fake_.submit_answer = st;
    fake_.cv.notify_all();
  }

  FakeCluster fake_;
  Estate estate_;
  std::unique_ptr<SlurmProvider> provider_;
  int pool_ = -1;
  Timestamp now_ = FromUnixMicros(1'800'000'000'000'000);
  std::atomic<int64_t> steady_us_{3'600'000'000};  // the provider's monotonic clock, moved by the test
};

TEST_F(SlurmProviderTest, ALaunchReturnsAtOnceWhileTheClusterHangsAndTheClusterIsThenUnhealthy) {
  fake_.hold_submit = true;
  auto id = provider_->Launch(Request("job_a"), now_);  // would block here if called inline
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, "slurm:c:cw-job_a-1");
  EXPECT_EQ(provider_->FreeGpus(pool_), 0) << "the attempt holds its GPUs from the hand-over";
  WaitSubmitEntered(1);
  // The submission hangs: after hung_after the cluster takes no new work.
  EXPECT_TRUE(provider_->Healthy(pool_)) << "not hung yet";
  AdvanceSteady(60ms);
  EXPECT_FALSE(provider_->Healthy(pool_));
  auto refused = provider_->Launch(Request("job_b"), now_);
  EXPECT_EQ(refused.status().code(), Code::kUnavailable);
  EXPECT_NE(refused.status().message().find("has not answered"), std::string::npos) << refused.status().message();

  // It runs out its deadline: the attempt never launched, the GPUs are free
  // again, and the cluster is down until it answers.
  Answer(Status(Code::kDeadlineExceeded, "no answer in 10 s"));
  auto events = PollUntil([](const auto& e) { return !e.empty(); });
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, ProviderEvent::Kind::kNotLaunched);
  EXPECT_EQ(events[0].job_id, "job_a");
  EXPECT_NE(events[0].reason.find("submitting to c failed: no answer in 10 s"), std::string::npos) << events[0].reason;
  EXPECT_EQ(provider_->FreeGpus(pool_), 8);
  EXPECT_FALSE(provider_->Healthy(pool_));
  EXPECT_NE(provider_->Launch(Request("job_b"), now_).status().message().find("unreachable"), std::string::npos);

  // Not asked again before the backoff (1 s) has passed; then it answers,
  // and is healthy again.
  (void)provider_->Poll(now_);
  provider_->WaitIdle();
  EXPECT_FALSE(provider_->Healthy(pool_));
  AdvanceSteady(1100ms);
  (void)provider_->Poll(now_);  // asks the cluster again
  provider_->WaitIdle();
  EXPECT_TRUE(provider_->Healthy(pool_));
}

TEST_F(SlurmProviderTest, TheSlurmIdIsReportedWhenSlurmAcceptsTheJobAndCancellingMidSubmissionStopsIt) {
  auto launched = provider_->Launch(Request("job_a"), now_);
  ASSERT_TRUE(launched.ok());
  EXPECT_EQ(*launched, "slurm:c:cw-job_a-1") << "the name stands for the id until Slurm answers";
  // Slurm accepts it: its id is reported at once, before it runs, so that
  // it is recorded even if Causeway stops now.
  auto handed = PollUntil([](const auto& e) { return !e.empty(); });
  ASSERT_EQ(handed.size(), 1u);
  EXPECT_EQ(handed[0].kind, ProviderEvent::Kind::kHandedOver);
  EXPECT_EQ(handed[0].backend_id, "slurm:c:100");
  // Slurm runs it: the start is reported with the same id.
  {
    std::lock_guard<std::mutex> lock(fake_.mu);
    fake_.jobs[0].state = "RUNNING";
    fake_.jobs[0].start = now_;
  }
  auto started = PollUntil([](const auto& e) { return !e.empty(); });
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started[0].kind, ProviderEvent::Kind::kStarted);
  EXPECT_EQ(started[0].backend_id, "slurm:c:100");

  // Cancelled while its submission hangs: Slurm's job is cancelled once its
  // id is known; nothing is reported for it.
  ASSERT_TRUE(provider_->Cancel("job_a", 1).ok());
  {
    std::lock_guard<std::mutex> lock(fake_.mu);
    fake_.hold_submit = true;
  }
  ASSERT_TRUE(provider_->Launch(Request("job_b"), now_).ok());
  WaitSubmitEntered(2);
  ASSERT_TRUE(provider_->Cancel("job_b", 1).ok());
  EXPECT_EQ(provider_->FreeGpus(pool_), 8);
  Answer(Status::Ok());
  auto events = PollUntil([&](const auto&) {
    std::lock_guard<std::mutex> lock(fake_.mu);
    return fake_.cancelled.size() == 2;
  });
  EXPECT_TRUE(events.empty());
  std::lock_guard<std::mutex> lock(fake_.mu);
  EXPECT_EQ(fake_.cancelled, (std::vector<int64_t>{100, 101}));
}

// The outage drill on Slurm: taken down, each attempt is cancelled in Slurm
// and ends as a provider outage (to be resumed elsewhere), and the
// provider takes no work, saying why, until it is switched on again.
TEST_F(SlurmProviderTest, TheOutageDrillCancelsItsAttemptsAndTakesNoWorkUntilSwitchedOn) {
  ASSERT_TRUE(provider_->Launch(Request("job_a"), now_).ok());
  auto handed = PollUntil([](const auto& e) { return !e.empty(); });
  ASSERT_EQ(handed.size(), 1u);
  auto* drill = providers::Capability<providers::OutageDrill>(provider_.get());
  ASSERT_NE(drill, nullptr) << "Slurm providers have the outage drill";
  drill->SetOutage(true, now_);
  auto ended = PollUntil([&](const auto& e) {
    std::lock_guard<std::mutex> lock(fake_.mu);
    return !e.empty() && fake_.cancelled.size() == 1;
  });
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].job_id, "job_a");
  EXPECT_EQ(ended[0].outcome, AttemptOutcome::kProviderOutage);
  EXPECT_NE(ended[0].reason.find("outage drill"), std::string::npos);
  {
    std::lock_guard<std::mutex> lock(fake_.mu);
    EXPECT_EQ(fake_.cancelled, std::vector<int64_t>{100});
  }
  EXPECT_FALSE(provider_->Healthy(pool_));
  EXPECT_EQ(provider_->FreeGpus(pool_), 8);
  auto refused = provider_->Launch(Request("job_b"), now_);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("is down (outage drill)"), std::string::npos) << refused.status().message();
  drill->SetOutage(false, now_);
  EXPECT_TRUE(provider_->Healthy(pool_));
  EXPECT_TRUE(provider_->Launch(Request("job_b"), now_).ok());
}

TEST_F(SlurmProviderTest, AHeldLaunchTakesItsRoomAndIsSentOnlyWhenReleasedWithTheReleasedEnvironment) {
  LaunchRequest r = Request("job_a");
  r.held = true;
  r.env = {{"CAUSEWAY_JOB_ID", "job_a"}, {"CAUSEWAY_TOKEN", "the job's own"}};
  auto launched = provider_->Launch(r, now_);
  ASSERT_TRUE(launched.ok()) << launched.status().ToString();
  EXPECT_EQ(*launched, "slurm:c:cw-job_a-1");
  EXPECT_EQ(provider_->FreeGpus(pool_), 0) << "its room is taken at once";
  provider_->WaitIdle();
  EXPECT_TRUE(provider_->Poll(now_).empty());
  {
    std::lock_guard<std::mutex> lock(fake_.mu);
    EXPECT_TRUE(fake_.submitted.empty()) << "nothing reaches Slurm before Release";
  }
  provider_->Release(LaunchTestPeer::Recorded("job_a", 1, {{"CAUSEWAY_TOKEN", "minted"}, {"CAUSEWAY_SERVER", "https://cw"}}));
  auto handed = PollUntil([](const auto& e) { return !e.empty(); });
  ASSERT_EQ(handed.size(), 1u);
  EXPECT_EQ(handed[0].kind, ProviderEvent::Kind::kHandedOver);
  {
    std::lock_guard<std::mutex> lock(fake_.mu);
    ASSERT_EQ(fake_.submitted.size(), 1u);
    const auto& env = fake_.submitted[0].environment;
    EXPECT_EQ(env.at("CAUSEWAY_SERVER"), "https://cw");
    EXPECT_EQ(env.at("CAUSEWAY_TOKEN"), "the job's own") << "what the request set wins";
  }
  provider_->Release(LaunchTestPeer::Recorded("job_a", 1));  // released already: nothing more is sent

  // Cancelled while held: nothing is ever sent, its room is free again, and
  // a Release after it does nothing.
  ASSERT_TRUE(provider_->Cancel("job_a", 1).ok());
  LaunchRequest b = Request("job_b");
  b.held = true;
  ASSERT_TRUE(provider_->Launch(b, now_).ok());
  ASSERT_TRUE(provider_->Cancel("job_b", 1).ok());
  EXPECT_EQ(provider_->FreeGpus(pool_), 8);
  provider_->Release(LaunchTestPeer::Recorded("job_b", 1));
  auto events = PollUntil([](const auto&) { return false; });
  EXPECT_TRUE(events.empty());
  std::lock_guard<std::mutex> lock(fake_.mu);
  EXPECT_EQ(fake_.submitted.size(), 1u);
  EXPECT_EQ(fake_.cancelled, (std::vector<int64_t>{100})) << "only job_a, which Slurm had";
}

TEST_F(SlurmProviderTest, AnAttemptRestoredBeforeItsIdWasKnownIsFoundByName) {
  {
    std::lock_guard<std::mutex> lock(fake_.mu);
    JobInfo j;
    j.id = 7;
    j.name = "cw-job_a-2";
    j.state = "RUNNING";
    j.start = now_;
    fake_.jobs.push_back(j);
  }
  LaunchRequest r = Request("job_a", 2);
  r.backend_id = "slurm:c:cw-job_a-2";
  ASSERT_TRUE(provider_->Restore(r, now_).ok());
  auto events = PollUntil([](const auto& e) { return !e.empty(); });
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, ProviderEvent::Kind::kStarted);
  EXPECT_EQ(events[0].backend_id, "slurm:c:7");
  r.backend_id = "slurm:c:banana";
  EXPECT_EQ(provider_->Restore(r, now_).code(), Code::kInvalidArgument);
}

TEST_F(SlurmProviderTest, LaunchesAreRefusedOnceTheClustersQueueIsFull) {
  // A pool with room for many attempts, and room for two waiting calls.
  Estate big = estate_;
  big.clusters[0].node_pools[0].nodes = 100;
  SlurmProvider::Options o;
  o.hung_after = 1h;
  o.queued_calls = 2;
  o.api = [this](const SlurmSettings&) { return std::make_unique<FakeApi>(fake_); };
  SlurmProvider wide(big, big.providers[0], o);
  {
    std::lock_guard<std::mutex> lock(fake_.mu);
    fake_.hold_submit = true;
  }
  ASSERT_TRUE(wide.Launch(Request("job_1"), now_).ok());
  WaitSubmitEntered(1);
  ASSERT_TRUE(wide.Launch(Request("job_2"), now_).ok());
  ASSERT_TRUE(wide.Launch(Request("job_3"), now_).ok());
  auto full = wide.Launch(Request("job_4"), now_);
  EXPECT_EQ(full.status().code(), Code::kUnavailable);
  EXPECT_NE(full.status().message().find("calls waiting"), std::string::npos) << full.status().message();
  EXPECT_EQ(wide.FreeGpus(wide.ResolvePool("c", "h200")), 800 - 3 * 8) << "the refused launch holds nothing";
  Answer(Status::Ok());  // the rest are not held
}

}  // namespace
}  // namespace causeway::slurm
