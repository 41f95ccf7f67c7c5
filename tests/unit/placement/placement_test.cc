// Routing: one test per filter and per scoring rule, and the explain output.
#include <gtest/gtest.h>

#include "placement/router.h"
#include "providers/registry.h"
#include "unit/scheduler_fixture.h"

namespace causeway::placement {
namespace {

constexpr const char* kEstate = R"(
providers:
  - {name: neb, kind: sim, regions: [{name: eu-n, zone: eu}]}
  - {name: cw, kind: sim, regions: [{name: us-e, zone: us}, {name: eu-w, zone: eu}]}
clusters:
  - {name: neb-eu, provider: neb, region: eu-n, node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 8, nodes: 4}]}
  - {name: cw-us, provider: cw, region: us-e, node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 8, nodes: 4}, {name: l4, gpu_type: L4, gpus_per_node: 4, nodes: 2}]}
  - {name: cw-eu, provider: cw, region: eu-w, node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 4, nodes: 2}]}
prices:
  - {cluster: neb-eu, gpu_type: H200, on_demand: "3.50"}
  - {cluster: cw-us, gpu_type: H200, on_demand: "3.00", spot: "1.50"}
  - {cluster: cw-us, gpu_type: L4, on_demand: "0.80"}
  - {cluster: cw-eu, gpu_type: H200, on_demand: "2.00"}
reservations:
  - {name: r, cluster: neb-eu, gpu_type: H200, count: 16, start: 2026-01-01, end: 2027-01-01, price: "2.50"}
datasets:
  - {name: c4, replicas: [neb/eu-n]}
)";

// A capacity view the test controls.
class FakeView : public CapacityView {
 public:
  bool Healthy(const PoolRef& p) const override { return !down.count(p.cluster->provider); }
  bool Fits(const PoolRef& p, int, int) const override { return !full.count(p.cluster->name); }
  int FreeGpus(const PoolRef& p) const override { return full.count(p.cluster->name) ? 0 : 16; }
  int ReservedFree(const PoolRef& p) const override { return p.cluster->name == "neb-eu" ? reserved : 0; }
  std::set<std::string> down, full;
  int reserved = 0;
};

class PlacementTest : public ::testing::Test {
 protected:
  PlacementTest() : estate_(*providers::ParseEstate(kEstate, "e")), router_(estate_) {}
  JobSpec Spec(const std::string& yaml) { return ParseJobSpec(yaml, "j")->spec; }
  std::string Pick(const std::string& yaml) {
    auto o = router_.Choose(Spec(yaml), view_, [](int) { return true; });
    return o ? o->cluster->name : "none";
  }
  Estate estate_;
  Router router_;
  FakeView view_;
};

TEST_F(PlacementTest, PrefersTheCheapestEligibleCluster) {
  EXPECT_EQ(Pick("resources: {accelerators: H200:4}\n"), "cw-eu");  // 2.00
}

TEST_F(PlacementTest, GangShapeFiltersNodesThatAreTooSmall) {
  EXPECT_EQ(Pick("resources: {accelerators: H200:8}\n"), "cw-us");  // cw-eu has 4 per node
  EXPECT_EQ(Pick("resources: {accelerators: H200:4}\nnum_nodes: 3\n"), "cw-us");  // cw-eu has 2 nodes
}

TEST_F(PlacementTest, ReservedCapacityComesBeforePrice) {
  view_.reserved = 16;
  EXPECT_EQ(Pick("resources: {accelerators: H200:8}\nnum_nodes: 2\n"), "neb-eu");
  view_.reserved = 8;  // not enough reserved room for 16 GPUs
  EXPECT_EQ(Pick("resources: {accelerators: H200:8}\nnum_nodes: 2\n"), "cw-us");
}

TEST_F(PlacementTest, SpotNeedsSpotCapacity) {
  EXPECT_EQ(Pick("resources: {accelerators: H200:4, use_spot: true}\n"), "cw-us");
}

TEST_F(PlacementTest, ResidencyIsNeverViolated) {
  EXPECT_EQ(Pick("resources: {accelerators: H200:8}\nresidency: eu\n"), "neb-eu");
  EXPECT_EQ(Pick("resources: {accelerators: L4:1}\nresidency: eu\n"), "none");
}

TEST_F(PlacementTest, OverridesPinProviderAndRegion) {
  EXPECT_EQ(Pick("resources: {accelerators: H200:4, infra: neb}\n"), "neb-eu");
  EXPECT_EQ(Pick("resources: {accelerators: H200:4, infra: cw/us-e}\n"), "cw-us");
}

TEST_F(PlacementTest, DataLocalityUnlessRemoteReadsAreAllowed) {
  EXPECT_EQ(Pick("resources: {accelerators: H200:4}\ndatasets: [c4@1]\n"), "neb-eu");
  EXPECT_EQ(Pick("resources: {accelerators: H200:4}\ndatasets: [c4@1]\nallow_remote_data: true\n"), "cw-eu");
}

TEST_F(PlacementTest, UnhealthyProvidersAndFullClustersAreSkipped) {
  view_.down.insert("cw");
  EXPECT_EQ(Pick("resources: {accelerators: H200:4}\n"), "neb-eu");
  view_.full.insert("neb-eu");
  EXPECT_EQ(Pick("resources: {accelerators: H200:4}\n"), "none");
}

TEST_F(PlacementTest, OrderedAlternativesAreTriedInOrder) {
  EXPECT_EQ(Pick("resources: {accelerators: [L4:4, H200:4]}\n"), "cw-us");  // L4 first even though H200 exists
  view_.full.insert("cw-us");
  EXPECT_EQ(Pick("resources: {accelerators: [L4:4, H200:4]}\n"), "cw-eu");  // falls back
}

TEST_F(PlacementTest, UnorderedAlternativesCompeteOnScore) {
  EXPECT_EQ(Pick("resources: {accelerators: {L4:4, H200:4}}\n"), "cw-us");  // L4 at 0.80 beats H200 at 2.00
}

TEST_F(PlacementTest, ExplainGivesEveryCandidateAVerdictInWords) {
  view_.down.insert("neb");
  auto reports = router_.Explain(Spec("resources: {accelerators: H200:8}\nresidency: eu\n"), &view_);
  std::map<std::string, std::string> why;
  for (const auto& r : reports) why[r.option.cluster->name] = r.eligible ? "ok" : r.failure;
  EXPECT_EQ(why["neb-eu"], "provider neb is down");
  EXPECT_EQ(why["cw-us"], "it is in residency zone us, the job must stay in eu");
  EXPECT_EQ(why["cw-eu"], "its H200 nodes have 4 GPUs, the job needs 8 on each node");
  auto ok = router_.Explain(Spec("resources: {accelerators: L4:1}\n"), &view_);
  EXPECT_TRUE(ok.front().eligible);  // eligible first
  EXPECT_EQ(ok.front().option.cluster->name, "cw-us");
  EXPECT_EQ(ok.back().failure, "it has no L4 GPUs");
}

}  // namespace
}  // namespace causeway::placement

namespace causeway::placement {
namespace {

TEST(CheckpointReachableTest, WhereItWasWrittenListedStorageOrAnObjectStore) {
  Cluster here{}, there{}, listed{};
  here.name = "here";
  there.name = "there";
  listed.name = "listed";
  listed.storage = std::vector<std::string>{"s3://ckpt-eu/", "/shared/"};
  EXPECT_TRUE(CheckpointReachable(here, "/scratch/x", "here"));
  EXPECT_FALSE(CheckpointReachable(there, "/scratch/x", "here"));
  EXPECT_FALSE(CheckpointReachable(there, "file:///scratch/x", "here"));
  EXPECT_TRUE(CheckpointReachable(there, "s3://any/x", "here")) << "object stores are reachable by default";
  EXPECT_TRUE(CheckpointReachable(listed, "/shared/run/x", "here"));
  EXPECT_TRUE(CheckpointReachable(listed, "s3://ckpt-eu/run/x", "here"));
  EXPECT_FALSE(CheckpointReachable(listed, "s3://ckpt-us/run/x", "here")) << "a listed cluster reaches only its list";
}

}  // namespace
}  // namespace causeway::placement
