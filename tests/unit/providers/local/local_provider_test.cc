// The local executor's held launches: the GPUs are set aside at Launch, the
// process starts only at Release (with the released environment), its id is
// reported by the next Poll, and a restart that finds only the held
// placeholder id finds the process through the id file beside its log.
// (tests/integration/local_test.cc runs it under the server.)
#include "providers/local/local_provider.h"
#include "providers/registry.h"
#include "unit/launch_test_peer.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace causeway::local {
namespace {

class LocalProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/causeway-local-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    auto e = providers::ParseEstate("providers: [{name: here, kind: local, regions: [{name: r, zone: eu}]}]\n"
                         "clusters:\n  - name: box\n    provider: here\n    region: r\n"
                         "    node_pools: [{name: l4, gpu_type: L4, gpus_per_node: 2, nodes: 1}]\n"
                         "    local: {output_dir: " + dir_ + "}\n",
                         "estate.yaml");
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    estate_ = *e;
    provider_ = std::make_unique<LocalProvider>(estate_, estate_.providers[0]);
    pool_ = provider_->ResolvePool("box", "l4");
    ASSERT_GE(pool_, 0);
  }
  void TearDown() override {
    provider_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  LaunchRequest Request(const std::string& job, const std::string& run) {
    LaunchRequest r;
    r.job_id = job;
    r.attempt = 1;
    r.cluster = "box";
    r.pool = "l4";
    r.gpus_per_node = 1;
    r.run = run;
    r.held = true;
    r.env = {{"WHO", "the request"}};
    return r;
  }
  // Polls until an event comes, waiting in between for a child process (the
  // attempt's, which this test process forked) to end, without reaping it:
  // the executor's Poll does that. No sleeping: waitid returns as soon as a
  // child has ended, or at once when none is left.
  std::vector<ProviderEvent> PollForEvents(LocalProvider& p) {
    for (int i = 0; i < 10; ++i) {
      auto got = p.Poll(now_);
      if (!got.empty()) return got;
      siginfo_t info{};
      (void)::waitid(P_ALL, 0, &info, WEXITED | WNOWAIT);
    }
    return {};
  }
  std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string dir_;
  Estate estate_;
  std::unique_ptr<LocalProvider> provider_;
  int pool_ = -1;
  Timestamp now_ = FromUnixMicros(1'800'000'000'000'000);
};

TEST_F(LocalProviderTest, AHeldLaunchStartsOnlyWhenReleasedAndItsProcessIdIsReported) {
  auto id = provider_->Launch(Request("job_a", "echo \"$WHO $TOKEN\" > out.txt"), now_);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, "local:box:0:0") << "no process yet: a placeholder id";
  EXPECT_EQ(provider_->FreeGpus(pool_), 1) << "its GPU is set aside at once";
  EXPECT_TRUE(provider_->Poll(now_).empty()) << "a held launch has not ended";
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/job_a-1.log")) << "nothing started before Release";

  provider_->Release(LaunchTestPeer::Recorded("job_a", 1, {{"WHO", "released"}, {"TOKEN", "minted"}}));
  // The hand-over first (the process may have ended by the same Poll).
  std::vector<ProviderEvent> events = provider_->Poll(now_);
  ASSERT_FALSE(events.empty());
  if (events.size() == 1) {
    auto more = PollForEvents(*provider_);
    events.insert(events.end(), more.begin(), more.end());
  }
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, ProviderEvent::Kind::kHandedOver);
  EXPECT_EQ(events[0].backend_id.rfind("local:box:", 0), 0u);
  EXPECT_NE(events[0].backend_id, "local:box:0:0");
  EXPECT_EQ(events[1].kind, ProviderEvent::Kind::kEnded);
  EXPECT_EQ(events[1].outcome, AttemptOutcome::kSucceeded) << events[1].reason;
  EXPECT_EQ(Read(dir_ + "/out.txt"), "the request minted\n") << "the request's own values win";
  EXPECT_EQ(provider_->FreeGpus(pool_), 2);
}

TEST_F(LocalProviderTest, CancellingAHeldLaunchStartsNothingAndKillsNothing) {
  ASSERT_TRUE(provider_->Launch(Request("job_b", "touch started"), now_).ok());
  // A held attempt has no process group: cancelling it must not signal
  // group 0, which is this test's own.
  ASSERT_TRUE(provider_->Cancel("job_b", 1).ok());
  EXPECT_EQ(provider_->FreeGpus(pool_), 2);
  provider_->Release(LaunchTestPeer::Recorded("job_b", 1));
  EXPECT_TRUE(provider_->Poll(now_).empty());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/started"));
}

TEST_F(LocalProviderTest, ARestartThatFindsOnlyThePlaceholderFindsTheProcessByItsIdFile) {
  ASSERT_TRUE(provider_->Launch(Request("job_c", "sleep 30"), now_).ok());
  provider_->Release(LaunchTestPeer::Recorded("job_c", 1));
  ASSERT_EQ(provider_->Poll(now_).size(), 1u);  // handed over

  // A new executor (a restart) given the id recorded before the hand-over.
  LocalProvider after(estate_, estate_.providers[0]);
  LaunchRequest r = Request("job_c", "");
  r.backend_id = "local:box:0:0";
  ASSERT_TRUE(after.Restore(r, now_).ok());
  EXPECT_EQ(after.FreeGpus(pool_), 1);
  EXPECT_TRUE(after.Poll(now_).empty()) << "still running";
  ASSERT_TRUE(after.Cancel("job_c", 1).ok());
  auto gone = PollForEvents(*provider_);
  ASSERT_EQ(gone.size(), 1u) << "the first executor sees its process group killed";

  // One never released was never started: nothing to re-adopt.
  LaunchRequest never = Request("job_d", "");
  never.backend_id = "local:box:0:0";
  EXPECT_EQ(after.Restore(never, now_).code(), Code::kNotFound);
}

}  // namespace
}  // namespace causeway::local

namespace causeway::local {
namespace {

// A job's time_limit holds on the local executor too: past it the process
// group is killed and the attempt ends as a timeout, not a success.
TEST_F(LocalProviderTest, AnAttemptPastItsTimeLimitIsStoppedAsATimeout) {
  LaunchRequest r = Request("job_t", "sleep 60");
  r.held = false;
  r.time_limit = Micros(1);  // over as soon as it starts
  auto id = provider_->Launch(r, now_);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto events = provider_->Poll(now_);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].outcome, AttemptOutcome::kTimeout);
  EXPECT_NE(events[0].reason.find("time_limit"), std::string::npos);
  EXPECT_EQ(provider_->FreeGpus(pool_), 2) << "its GPU is free again";
  EXPECT_TRUE(provider_->Poll(now_).empty());
}

}  // namespace
}  // namespace causeway::local
