#include "providers/sim/sim_provider.h"
#include "providers/registry.h"

#include <gtest/gtest.h>

namespace causeway::sim {
namespace {

Estate OnePool(int nodes, const std::string& sim = "") {
  return *providers::ParseEstate("providers: [{name: p, kind: sim, regions: [{name: r, zone: eu}]" + sim +
                          "}]\nclusters: [{name: c, provider: p, region: r, node_pools: [{name: h, gpu_type: H100, "
                          "gpus_per_node: 8, nodes: " + std::to_string(nodes) + "}]}]\n",
                      "e");
}

LaunchRequest Req(const std::string& id, int gpus, int nodes, Micros duration = std::chrono::hours(1)) {
  LaunchRequest r;
  r.job_id = id;
  r.cluster = "c";
  r.pool = "h";
  r.gpus_per_node = gpus;
  r.num_nodes = nodes;
  r.sim.duration = duration;
  return r;
}

TEST(SimProviderTest, BestFitKeepsWholeNodesForGangs) {
  Estate e = OnePool(3);
  SimProvider p(e, e.providers[0], 1);
  Timestamp t0 = FromUnixMicros(0);
  ASSERT_TRUE(p.Launch(Req("a", 4, 1), t0).ok());
  ASSERT_TRUE(p.Launch(Req("b", 4, 1), t0).ok());  // same node as a: two whole nodes stay free
  EXPECT_TRUE(p.Fits(p.ResolvePool("c", "h"), 8, 2));
  ASSERT_TRUE(p.Launch(Req("gang", 8, 2), t0).ok());
  EXPECT_EQ(p.FreeGpus(p.ResolvePool("c", "h")), 0);
  EXPECT_EQ(p.Launch(Req("more", 1, 1), t0).status().code(), Code::kResourceExhausted);
  ASSERT_TRUE(p.Cancel("gang", 1).ok());
  EXPECT_EQ(p.FreeGpus(p.ResolvePool("c", "h")), 16);
  EXPECT_EQ(p.Cancel("gang", 1).code(), Code::kNotFound);
}

TEST(SimProviderTest, AttemptsEndOnTimeAndFreeTheirNodes) {
  Estate e = OnePool(1);
  SimProvider p(e, e.providers[0], 1);
  Timestamp t0 = FromUnixMicros(0);
  ASSERT_TRUE(p.Launch(Req("a", 8, 1, std::chrono::minutes(30)), t0).ok());
  EXPECT_TRUE(p.Poll(t0 + std::chrono::minutes(29)).empty());
  auto events = p.Poll(t0 + std::chrono::minutes(31));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].outcome, AttemptOutcome::kSucceeded);
  EXPECT_EQ(events[0].time, t0 + std::chrono::minutes(30));
  EXPECT_EQ(p.FreeGpus(p.ResolvePool("c", "h")), 8);
}

TEST(SimProviderTest, TheSameSeedGivesTheSameFailures) {
  Estate e = OnePool(8, ", sim: {spot_preemption_per_hour: 1, node_failure_per_hour: 0.5}");
  auto run = [&](uint64_t seed) {
    SimProvider p(e, e.providers[0], seed);
    std::string out;
    for (int i = 0; i < 8; ++i) {
      LaunchRequest r = Req("j" + std::to_string(i), 8, 1, std::chrono::hours(4));
      r.spot = i % 2 == 0;
      EXPECT_TRUE(p.Launch(r, FromUnixMicros(0)).ok());
    }
    for (const auto& ev : p.Poll(FromUnixMicros(0) + std::chrono::hours(5))) {
      out += ev.job_id + ":" + std::string(AttemptOutcomeName(ev.outcome)) + "@" + std::to_string(ToUnixMicros(ev.time)) + " ";
    }
    return out;
  };
  EXPECT_EQ(run(7), run(7));
  EXPECT_NE(run(7), run(8));
  EXPECT_NE(run(7).find("preempted"), std::string::npos);
}

TEST(SimProviderTest, OutagesEndRunningAttemptsAndRefuseLaunches) {
  Estate e = OnePool(2);
  SimProvider p(e, e.providers[0], 1);
  Timestamp t0 = FromUnixMicros(0);
  ASSERT_TRUE(p.Launch(Req("a", 8, 1), t0).ok());
  p.SetOutage(true, t0 + std::chrono::minutes(5));
  EXPECT_FALSE(p.Healthy(0));
  EXPECT_EQ(p.Launch(Req("b", 8, 1), t0).status().code(), Code::kUnavailable);
  auto events = p.Poll(t0 + std::chrono::minutes(6));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].outcome, AttemptOutcome::kProviderOutage);
  p.SetOutage(false, t0);
  EXPECT_TRUE(p.Launch(Req("b", 8, 1), t0).ok());
}

TEST(SimProviderTest, UtilizationSamplesPerGpuIdleJobsReadNearZero) {
  Estate e = OnePool(2);
  SimProvider p(e, e.providers[0], 1);
  LaunchRequest busy = Req("busy", 8, 1);
  busy.sim.utilization_percent = 90;
  LaunchRequest idle = Req("idle", 4, 1);
  idle.sim.utilization_percent = 0;
  ASSERT_TRUE(p.Launch(busy, FromUnixMicros(0)).ok());
  ASSERT_TRUE(p.Launch(idle, FromUnixMicros(0)).ok());
  auto samples = p.SampleUtilization(FromUnixMicros(600'000'000));
  ASSERT_EQ(samples.size(), 12u);
  for (const auto& s : samples) {
    if (s.job_id == "busy") {
      EXPECT_GE(s.utilization_percent, 85);
      EXPECT_LE(s.utilization_percent, 95);
    } else {
      EXPECT_LE(s.utilization_percent, 2);
    }
  }
}

TEST(SimProviderTest, RestoredAttemptsKeepTheirOriginalClock) {
  Estate e = OnePool(1);
  SimProvider p(e, e.providers[0], 1);
  Timestamp started = FromUnixMicros(0);
  ASSERT_TRUE(p.Restore(Req("a", 8, 1, std::chrono::hours(1)), started).ok());
  auto events = p.Poll(started + std::chrono::hours(2));
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].time, started + std::chrono::hours(1));
}

}  // namespace
}  // namespace causeway::sim
