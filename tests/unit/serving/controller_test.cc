// The service controller's decisions (serving/controller.h), pass by pass:
// replicas started to the wanted counts, admitted only once ready (the
// preferred place's only after hold-down when coming back), drained before
// they are stopped, failover to the warm alternate, fall-back without
// flapping, the degraded mode, and the autoscaler's delays.
#include "serving/controller.h"

#include <gtest/gtest.h>

namespace causeway::serving {
namespace {

constexpr Timestamp T0 = Timestamp(Micros(1'700'000'000LL * 1'000'000));
Timestamp At(int seconds) { return T0 + Micros(seconds * 1'000'000LL); }

class ControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    spec_.readiness.initial_delay_seconds = 60;
    spec_.readiness.interval_seconds = 1;
    spec_.replicas.min_replicas = 2;
    spec::Failover f;
    f.preferred.place = "nebius";
    f.alternate.place = "coreweave";
    f.alternate.warm = 1;
    f.hold_down = Micros(30'000'000);
    spec_.failover = f;
    view_.spec = &spec_;
    view_.now = At(100);
    view_.preferred.since = T0;
    view_.alternate.since = T0;
  }
  // A replica running since `started`, ready since `ready` (nullopt: not yet).
  ReplicaView Replica(const std::string& id, Role role, int started, std::optional<int> ready, bool in_traffic) {
    ReplicaView r;
    r.id = id;
    r.role = role;
    r.running = true;
    r.started_at = At(started);
    if (ready) r.passing_since = At(*ready);
    r.in_traffic = in_traffic;
    return r;
  }
  static std::vector<std::string> Of(const Decision& d, ActionKind kind, std::optional<Role> role = std::nullopt) {
    std::vector<std::string> out;
    for (const Action& a : d.actions) {
      if (a.kind == kind && (!role || a.role == *role)) out.push_back(a.replica.empty() ? std::string(ToString(a.role)) : a.replica);
    }
    return out;
  }
  spec::ServiceSpec spec_;
  ServiceView view_;
};

TEST_F(ControllerTest, AStartingServiceStartsItsReplicasAndAWarmAlternate) {
  Decision d = Decide(view_);
  EXPECT_EQ(d.mode, Mode::kStarting);
  EXPECT_TRUE(d.transition.empty());
  EXPECT_EQ(Of(d, ActionKind::kStart), (std::vector<std::string>{"preferred", "preferred", "alternate"}));
  // The first preferred replica ready: normal, and every ready one admitted
  // (the alternate's as a backup).
  view_.replicas = {Replica("p1", Role::kPreferred, 10, 50, false), Replica("p2", Role::kPreferred, 50, std::nullopt, false),
                    Replica("a1", Role::kAlternate, 10, 40, false)};
  d = Decide(view_);
  EXPECT_EQ(d.mode, Mode::kNormal);
  EXPECT_EQ(d.transition, "starting -> normal: a replica at nebius answers its readiness probe");
  EXPECT_EQ(Of(d, ActionKind::kAdmit), (std::vector<std::string>{"p1", "a1"}));
  EXPECT_TRUE(Of(d, ActionKind::kStart).empty());
}

TEST_F(ControllerTest, LosingThePreferredPlaceFailsOverToTheWarmAlternateAndScalesItUp) {
  view_.mode = Mode::kNormal;
  ReplicaView p1 = Replica("p1", Role::kPreferred, 10, 50, true), p2 = Replica("p2", Role::kPreferred, 10, 50, true);
  p1.passing_since.reset();
  p1.failing_since = At(99);
  p2.passing_since.reset();
  p2.failing_since = At(99);
  view_.replicas = {p1, p2, Replica("a1", Role::kAlternate, 10, 40, true)};
  view_.preferred = {false, At(98), "provider outage reported"};
  Decision d = Decide(view_);
  EXPECT_EQ(d.mode, Mode::kFailedOver);
  EXPECT_EQ(d.transition, "normal -> failed_over: nebius is unavailable (provider outage reported); coreweave serves");
  EXPECT_EQ(d.owner, "next action: the provider (hardware or an outage)");
  EXPECT_EQ(Of(d, ActionKind::kDrain), (std::vector<std::string>{"p1", "p2"})) << "out of traffic at once";
  EXPECT_EQ(d.want_alternate, 2) << "the alternate scaled to the service's minimum";
  EXPECT_EQ(Of(d, ActionKind::kStart), (std::vector<std::string>{"alternate"}));
  // Failing past three probe periods: replaced (stopped once drained).
  view_.mode = Mode::kFailedOver;
  view_.now = At(103);
  for (auto& r : view_.replicas) {
    if (r.role == Role::kPreferred) r.draining = true;
  }
  d = Decide(view_);
  EXPECT_EQ(Of(d, ActionKind::kStop), (std::vector<std::string>{"p1", "p2"}));
  EXPECT_EQ(Of(d, ActionKind::kStart, Role::kPreferred), (std::vector<std::string>{"preferred", "preferred"}))
      << "the preferred place is asked again, for when it returns";
}

TEST_F(ControllerTest, TrafficGoesBackOnlyAfterHoldDownAndAFlapRestartsIt) {
  view_.mode = Mode::kFailedOver;
  view_.preferred = {true, At(60), ""};
  view_.replicas = {Replica("p3", Role::kPreferred, 61, 80, false), Replica("p4", Role::kPreferred, 61, 85, false),
                    Replica("a1", Role::kAlternate, 10, 40, true), Replica("a2", Role::kAlternate, 20, 45, true)};
  view_.now = At(100);  // ready for 15 s of 30
  Decision d = Decide(view_);
  EXPECT_EQ(d.mode, Mode::kFailedOver);
  EXPECT_TRUE(Of(d, ActionKind::kAdmit).empty()) << "not before hold-down";
  // p4 flaps: failing, then passing again at 110; hold-down counts from 110.
  view_.replicas[1].passing_since = At(110);
  view_.now = At(130);
  EXPECT_EQ(Decide(view_).mode, Mode::kFailedOver);
  view_.now = At(140);
  d = Decide(view_);
  EXPECT_EQ(d.mode, Mode::kNormal);
  EXPECT_EQ(d.transition, "failed_over -> normal: nebius has served its replicas' probes for 30 s (hold-down 30 s)");
  EXPECT_EQ(Of(d, ActionKind::kAdmit), (std::vector<std::string>{"p3", "p4"}));
  EXPECT_EQ(d.want_alternate, 1) << "back to warm";
  EXPECT_EQ(Of(d, ActionKind::kDrain), (std::vector<std::string>{"a2"})) << "the newest alternate drains first";
  // Drained but still answering: not stopped yet; once idle, stopped.
  view_.mode = Mode::kNormal;
  view_.replicas[3].draining = true;
  view_.replicas[3].in_flight = 2;
  EXPECT_TRUE(Of(Decide(view_), ActionKind::kStop).empty()) << "no request cut mid-answer";
  view_.replicas[3].in_flight = 0;
  EXPECT_EQ(Of(Decide(view_), ActionKind::kStop), (std::vector<std::string>{"a2"}));
}

TEST_F(ControllerTest, WithNothingReadyAnywhereTheDegradedModeServes) {
  spec_.failover->degraded.replica = spec::Placement{"lambda", "L4", 1};
  spec_.failover->degraded.replicas = 1;
  view_.mode = Mode::kNormal;
  ReplicaView p1 = Replica("p1", Role::kPreferred, 10, std::nullopt, true);
  p1.failing_since = At(99);
  view_.replicas = {p1};
  view_.preferred = {false, At(98), "cluster unhealthy"};
  view_.alternate = {false, At(97), "provider outage reported"};
  Decision d = Decide(view_);
  EXPECT_EQ(d.mode, Mode::kDegraded);
  EXPECT_EQ(d.transition, "normal -> degraded: nebius is unavailable (cluster unhealthy), and none at coreweave is ready");
  EXPECT_EQ(d.owner, "next action: the platform team (no capacity at either place)");
  EXPECT_EQ(Of(d, ActionKind::kStart, Role::kDegraded), (std::vector<std::string>{"degraded"}));
  // The alternate comes back: failed over, the degraded replica leaves.
  view_.mode = Mode::kDegraded;
  view_.alternate = {true, At(120), ""};
  view_.now = At(130);
  view_.replicas.push_back(Replica("d1", Role::kDegraded, 100, 110, true));
  view_.replicas.push_back(Replica("a1", Role::kAlternate, 121, 125, false));
  d = Decide(view_);
  EXPECT_EQ(d.mode, Mode::kFailedOver);
  EXPECT_EQ(Of(d, ActionKind::kAdmit), (std::vector<std::string>{"a1"}));
  EXPECT_EQ(Of(d, ActionKind::kDrain, Role::kDegraded), (std::vector<std::string>{"d1"}));
}

TEST_F(ControllerTest, TheAutoscalerWaitsItsDelaysBeforeChangingTheTarget) {
  spec_.replicas.min_replicas = 1;
  spec_.replicas.max_replicas = 4;
  spec_.replicas.target_qps_per_replica = 10;
  spec_.replicas.upscale_delay_seconds = 20;
  spec_.replicas.downscale_delay_seconds = 60;
  view_.mode = Mode::kNormal;
  view_.target = 1;
  view_.replicas = {Replica("p1", Role::kPreferred, 10, 20, true), Replica("a1", Role::kAlternate, 10, 20, true)};
  view_.qps = 35;  // asks for 4
  Decision d = Decide(view_);
  EXPECT_EQ(d.target, 1);
  EXPECT_EQ(d.asked_target, 4);
  EXPECT_EQ(d.asked_since, At(100));
  view_.asked_target = d.asked_target;
  view_.asked_since = d.asked_since;
  view_.now = At(119);
  EXPECT_EQ(Decide(view_).target, 1) << "within the upscale delay";
  view_.now = At(120);
  d = Decide(view_);
  EXPECT_EQ(d.target, 4);
  EXPECT_EQ(Of(d, ActionKind::kStart, Role::kPreferred).size(), 3u);
  // More than max is never asked; less load waits the downscale delay.
  view_.target = 4;
  view_.asked_target = 0;
  view_.asked_since.reset();
  view_.qps = 5;
  d = Decide(view_);
  EXPECT_EQ(d.target, 4);
  EXPECT_EQ(d.asked_target, 1);
}

TEST_F(ControllerTest, AReplicaThatNeverAnswersInTimeIsReplaced) {
  view_.mode = Mode::kNormal;
  view_.replicas = {Replica("p1", Role::kPreferred, 10, 20, true), Replica("p2", Role::kPreferred, 30, std::nullopt, false),
                    Replica("a1", Role::kAlternate, 10, 20, true)};
  view_.now = At(91);  // 61 s after p2 started, with an initial delay of 60
  Decision d = Decide(view_);
  EXPECT_EQ(Of(d, ActionKind::kStop), (std::vector<std::string>{"p2"}));
  EXPECT_EQ(Of(d, ActionKind::kStart), (std::vector<std::string>{"preferred"}));
  ASSERT_FALSE(d.actions.empty());
  EXPECT_EQ(d.actions[0].reason,
            "replica p2 leaves: it did not answer its readiness probe within 60 s of starting (it is replaced)");
}

TEST_F(ControllerTest, AnUpdateRollsEachPlaceOneReadyNewReplicaAtATime) {
  view_.mode = Mode::kNormal;
  auto old = [&](const std::string& id, Role role, bool in) {
    ReplicaView r = Replica(id, role, 10, 20, in);
    r.outdated = true;
    return r;
  };
  ReplicaView pending_old = old("p3", Role::kPreferred, false);
  pending_old.passing_since.reset();
  view_.replicas = {old("p1", Role::kPreferred, true), old("p2", Role::kPreferred, true), pending_old,
                    old("a1", Role::kAlternate, true)};
  // Nothing of the new revision yet: every place starts its wanted number,
  // and only the old replica that serves nothing leaves at once.
  Decision d = Decide(view_);
  EXPECT_EQ(Of(d, ActionKind::kStart), (std::vector<std::string>{"preferred", "preferred", "alternate"}));
  EXPECT_EQ(Of(d, ActionKind::kStop), (std::vector<std::string>{"p3"}));
  EXPECT_TRUE(Of(d, ActionKind::kDrain).empty());
  // One new preferred replica ready: it is admitted, and one old one is
  // drained (the newest of those ready), never stopped mid-answer.
  view_.replicas = {old("p1", Role::kPreferred, true), old("p2", Role::kPreferred, true), old("a1", Role::kAlternate, true),
                    Replica("n1", Role::kPreferred, 90, 95, false), Replica("n2", Role::kPreferred, 90, std::nullopt, false),
                    Replica("m1", Role::kAlternate, 90, std::nullopt, false)};
  view_.replicas[1].started_at = At(11);
  d = Decide(view_);
  EXPECT_TRUE(Of(d, ActionKind::kStart).empty());
  EXPECT_EQ(Of(d, ActionKind::kAdmit), (std::vector<std::string>{"n1"}));
  EXPECT_EQ(Of(d, ActionKind::kDrain), (std::vector<std::string>{"p2"}));
  EXPECT_TRUE(Of(d, ActionKind::kStop).empty());
  EXPECT_EQ(d.mode, Mode::kNormal);
  // Drained and answering nothing: stopped. The warm alternate's old one
  // stays until its successor is ready.
  view_.replicas[1].draining = true;
  view_.replicas[1].in_flight = 0;
  d = Decide(view_);
  EXPECT_EQ(Of(d, ActionKind::kStop), (std::vector<std::string>{"p2"}));
  ASSERT_FALSE(d.actions.empty());
  EXPECT_EQ(d.actions[0].reason,
            "replica p2 leaves: the service was updated: 1 of 2 preferred replicas of its new revision are ready");
  // Every place's new replicas ready: the last old ones drain.
  view_.replicas = {old("p1", Role::kPreferred, true), old("a1", Role::kAlternate, true),
                    Replica("n1", Role::kPreferred, 90, 95, true), Replica("n2", Role::kPreferred, 90, 96, false),
                    Replica("m1", Role::kAlternate, 90, 96, false)};
  d = Decide(view_);
  EXPECT_EQ(Of(d, ActionKind::kDrain), (std::vector<std::string>{"p1", "a1"}));
  EXPECT_EQ(Of(d, ActionKind::kAdmit), (std::vector<std::string>{"n2", "m1"}));
}

TEST_F(ControllerTest, ABlueGreenUpdateKeepsEveryOldReplicaUntilAllTheNewOnesAreReady) {
  view_.mode = Mode::kNormal;
  view_.blue_green = true;
  auto old = [&](const std::string& id, Role role) {
    ReplicaView r = Replica(id, role, 10, 20, true);
    r.outdated = true;
    return r;
  };
  view_.replicas = {old("p1", Role::kPreferred), old("p2", Role::kPreferred), old("a1", Role::kAlternate),
                    Replica("n1", Role::kPreferred, 90, 95, false), Replica("n2", Role::kPreferred, 90, std::nullopt, false),
                    Replica("m1", Role::kAlternate, 90, 95, false)};
  Decision d = Decide(view_);
  EXPECT_EQ(Of(d, ActionKind::kDrain), (std::vector<std::string>{"a1"})) << "the alternate's new one is ready";
  EXPECT_TRUE(Of(d, ActionKind::kDrain, Role::kPreferred).empty()) << "1 of 2 new preferred ready: both old ones stay";
  view_.replicas[4].passing_since = At(97);
  d = Decide(view_);
  EXPECT_EQ(Of(d, ActionKind::kDrain, Role::kPreferred), (std::vector<std::string>{"p1", "p2"}));
}

}  // namespace
}  // namespace causeway::serving
