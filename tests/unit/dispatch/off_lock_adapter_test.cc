// The dispatcher in front of an adapter that may block
// (src/dispatch/off_lock_adapter.h): the scheduler's calls answer at once
// however the adapter behaves, a hung adapter's clusters take no new work
// after a bound, and what waited behind the hung call is placed elsewhere.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "dispatch/off_lock_adapter.h"
#include "providers/registry.h"
#include "fakes/gated_adapter.h"
#include "providers/sim/sim_provider.h"
#include "scheduler/engine.h"

namespace causeway::dispatch {
namespace {

using scheduler::Transition;
using testing::Gate;
using testing::Gates;
using testing::GatedAdapter;

// A cheaper cluster on the gated provider, a dearer one on a plain
// simulated provider, with the same GPUs.
constexpr const char* kEstate =
    "providers:\n"
    "  - {name: slow, kind: sim, regions: [{name: r1, zone: eu}]}\n"
    "  - {name: steady, kind: sim, regions: [{name: r1, zone: eu}]}\n"
    "clusters:\n"
    "  - name: slow-h200\n    provider: slow\n    region: r1\n"
    "    node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 8, nodes: 2}]\n"
    "  - name: steady-h200\n    provider: steady\n    region: r1\n"
    "    node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 8, nodes: 8}]\n"
    "prices:\n"
    "  - {cluster: slow-h200, gpu_type: H200, on_demand: \"2.00\"}\n"
    "  - {cluster: steady-h200, gpu_type: H200, on_demand: \"3.00\"}\n";

constexpr const char* kJob = "resources: {accelerators: H200:8}\nrun: train\nsim: {duration: 10h}\n";

class OffLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto e = providers::ParseEstate(kEstate, "estate.yaml");
    ASSERT_TRUE(e.ok()) << e.status().ToString();
    estate_ = std::make_unique<Estate>(std::move(*e));
    OffLockOptions options;
    options.hang_after = std::chrono::seconds(30);
    options.now = [this] { return clock_.Steady(); };
    const Provider& slow = *estate_->FindProvider("slow");
    dispatcher_ = std::make_unique<OffLockAdapter>(std::make_unique<GatedAdapter>(*estate_, slow, gates_), *estate_,
                                                   slow, options);
    steady_ = std::make_unique<sim::SimProvider>(*estate_, *estate_->FindProvider("steady"), 1);
    engine_ = std::make_unique<scheduler::Engine>(
        *estate_, std::map<std::string, ProviderAdapter*>{{"slow", dispatcher_.get()}, {"steady", steady_.get()}});
  }
  void TearDown() override {
    // Whatever the test left closed opens, so that the worker can finish.
    if (gates_->launch) gates_->launch->Open();
    if (gates_->poll) gates_->poll->Open();
    if (dispatcher_) dispatcher_->WaitIdle();
  }

  void Submit(const std::string& id) {
    auto spec = ParseJobSpec(kJob, id + ".yaml");
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    ASSERT_TRUE(engine_->Submit(scheduler::JobInput{id, spec->spec, now_, 0, 0, 0}).ok());
  }
  std::vector<Transition> Tick() {
    now_ += std::chrono::seconds(10);
    auto out = engine_->Tick(now_);
    for (const Transition& t : out) {
      if (t.kind == Transition::Kind::kDispatched) cluster_[t.job_id] = t.cluster;
    }
    return out;
  }
  static const Transition* Find(const std::vector<Transition>& ts, Transition::Kind kind, const std::string& job) {
    for (const Transition& t : ts) {
      if (t.kind == kind && t.job_id == job) return &t;
    }
    return nullptr;
  }

  std::shared_ptr<Gates> gates_ = std::make_shared<Gates>();
  ManualClock clock_;  // the dispatcher's monotonic time (Steady), moved by the test
  std::unique_ptr<Estate> estate_;
  std::unique_ptr<OffLockAdapter> dispatcher_;
  std::unique_ptr<sim::SimProvider> steady_;
  std::unique_ptr<scheduler::Engine> engine_;
  Timestamp now_ = FromUnixMicros(1'780'000'000'000'000);
  std::map<std::string, std::string> cluster_;
};

TEST_F(OffLockTest, ALaunchAnswersAtOnceAndTheAdaptersIdComesBackFromPoll) {
  gates_->launch = std::make_shared<Gate>();
  Submit("a");
  // Were Launch called here, this would wait for the gate, which opens only below.
  auto first = Tick();
  const Transition* d = Find(first, Transition::Kind::kDispatched, "a");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->cluster, "slow-h200");
  EXPECT_EQ(d->backend_id, "");  // not named yet
  gates_->launch->WaitEntered();
  EXPECT_TRUE(gates_->Launched().empty());

  gates_->launch->Open();
  dispatcher_->WaitIdle();
  auto second = Tick();
  const Transition* h = Find(second, Transition::Kind::kHandedOver, "a");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(h->backend_id.rfind("gated-", 0), 0u) << h->backend_id;
  EXPECT_EQ(gates_->Launched(), std::vector<std::string>{"a/1"});
}

TEST_F(OffLockTest, AHungLaunchMakesTheProviderUnhealthyAndWhatWaitedBehindItGoesElsewhere) {
  gates_->launch = std::make_shared<Gate>();
  Submit("a");
  Submit("b");
  Tick();  // both fit the cheaper cluster's two nodes: a's launch hangs, b's waits behind it
  EXPECT_EQ(cluster_["a"], "slow-h200");
  EXPECT_EQ(cluster_["b"], "slow-h200");
  gates_->launch->WaitEntered();

  // Not yet past the bound: still healthy, still the cheapest.
  clock_.Advance(std::chrono::seconds(29));
  Submit("c");
  Tick();
  EXPECT_EQ(cluster_["c"], "steady-h200");  // the cheaper cluster is full, in the dispatcher's view too

  clock_.Advance(std::chrono::seconds(2));  // 31 s into a's launch
  Submit("d");
  auto out = Tick();
  // b never reached the adapter: it is placed again, on the healthy cluster.
  const Transition* ended = Find(out, Transition::Kind::kAttemptEnded, "b");
  ASSERT_NE(ended, nullptr);
  EXPECT_EQ(ended->new_state, JobState::kPending);
  EXPECT_NE(ended->message.find("has not answered for 31 s"), std::string::npos) << ended->message;
  EXPECT_EQ(cluster_["b"], "steady-h200");
  EXPECT_EQ(cluster_["d"], "steady-h200");
  EXPECT_TRUE(gates_->Launched().empty());

  // Once the hung call answers, its attempt is named and the provider is
  // healthy again.
  gates_->launch->Open();
  dispatcher_->WaitIdle();
  out = Tick();
  ASSERT_NE(Find(out, Transition::Kind::kHandedOver, "a"), nullptr);
  EXPECT_EQ(gates_->Launched(), std::vector<std::string>{"a/1"});
  EXPECT_TRUE(dispatcher_->Healthy(dispatcher_->ResolvePool("slow-h200", "h200")));
}

TEST_F(OffLockTest, AHungPollHoldsUpNothingAndTheLaunchesBehindItGoElsewhere) {
  gates_->poll = std::make_shared<Gate>();
  Tick();  // the dispatcher's first Poll hangs on the worker
  gates_->poll->WaitEntered();
  Submit("a");
  Tick();  // returns: a is booked on the cheaper cluster, queued behind the hung Poll
  EXPECT_EQ(cluster_["a"], "slow-h200");
  clock_.Advance(std::chrono::seconds(31));
  auto out = Tick();
  ASSERT_NE(Find(out, Transition::Kind::kAttemptEnded, "a"), nullptr);
  EXPECT_EQ(cluster_["a"], "steady-h200");
  EXPECT_TRUE(gates_->Launched().empty());
}

TEST_F(OffLockTest, ACancelledLaunchNeverReachesTheAdapterAndItsRoomIsFreeAtOnce) {
  gates_->launch = std::make_shared<Gate>();
  const Provider& slow = *estate_->FindProvider("slow");
  int pool = dispatcher_->ResolvePool("slow-h200", "h200");
  ASSERT_GE(pool, 0);
  EXPECT_TRUE(dispatcher_->Fits(pool, 8, 2));
  LaunchRequest a{"a", 1, "slow-h200", "h200", 8, 1, false, {}, "", "train", std::nullopt, {}, ""};
  LaunchRequest b = a;
  b.job_id = "b";
  ASSERT_TRUE(dispatcher_->Launch(a, now_).ok());
  gates_->launch->WaitEntered();
  ASSERT_TRUE(dispatcher_->Launch(b, now_).ok());
  EXPECT_FALSE(dispatcher_->Fits(pool, 8, 1));  // both nodes booked
  EXPECT_EQ(dispatcher_->FreeGpus(pool), 0);

  ASSERT_TRUE(dispatcher_->Cancel("b", 1).ok());
  EXPECT_TRUE(dispatcher_->Fits(pool, 8, 1));
  EXPECT_EQ(dispatcher_->FreeGpus(pool), 8);
  // a is with the adapter: cancelling it frees its room in the view at once
  // too, and the adapter is told once its launch returns.
  ASSERT_TRUE(dispatcher_->Cancel("a", 1).ok());
  EXPECT_TRUE(dispatcher_->Fits(pool, 8, 2));
  gates_->launch->Open();
  dispatcher_->WaitIdle();
  EXPECT_EQ(gates_->Launched(), std::vector<std::string>{"a/1"});
  EXPECT_TRUE(dispatcher_->Fits(pool, 8, 2));  // the adapter's own word now
  EXPECT_EQ(dispatcher_->FreeGpus(pool), 16);
  (void)slow;
}

TEST_F(OffLockTest, ARestoreTheAdapterRefusesComesBackAsNotLaunched) {
  {
    std::lock_guard<std::mutex> lock(gates_->mu);
    gates_->restore = NotFound("no such attempt");
  }
  LaunchRequest a{"a", 3, "slow-h200", "h200", 8, 1, false, {}, "", "train", std::nullopt, {}, "gated-x"};
  ASSERT_TRUE(dispatcher_->Restore(a, now_).ok());  // answered at once
  dispatcher_->WaitIdle();
  auto events = dispatcher_->Poll(now_);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].kind, ProviderEvent::Kind::kNotLaunched);
  EXPECT_EQ(events[0].attempt, 3);
  EXPECT_NE(events[0].reason.find("no such attempt"), std::string::npos) << events[0].reason;
}

TEST_F(OffLockTest, GoingAwayDoesNotWaitForAHungCall) {
  auto gate = std::make_shared<Gate>();
  gates_->launch = gate;
  LaunchRequest a{"a", 1, "slow-h200", "h200", 8, 1, false, {}, "", "train", std::nullopt, {}, ""};
  ASSERT_TRUE(dispatcher_->Launch(a, now_).ok());
  gate->WaitEntered();
  clock_.Advance(std::chrono::seconds(31));
  engine_.reset();
  dispatcher_.reset();  // returns although the call still hangs
  gate->Open();         // the worker finishes alone and goes, the gated adapter with it
  EXPECT_TRUE(gates_->WaitGone(std::chrono::seconds(30)));
}

}  // namespace
}  // namespace causeway::dispatch
