// Routing: one test per filter and per scoring rule, and the explain output.
#include <gtest/gtest.h>

#include <set>

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

// What the backend honours beyond GPUs: the simulated estate everything
// (disk against what a pool declares); the local executor a git workdir and
// paths on its storage, never an image, a bucket or an undeclared disk.
TEST(HonouredTest, JobsGoOnlyWhereTheirImageDiskWorkdirAndMountsAreHonoured) {
  auto estate = providers::ParseEstate(R"(
providers:
  - {name: sim1, kind: sim, regions: [{name: r, zone: eu}]}
  - {name: here, kind: local, regions: [{name: r, zone: eu}]}
clusters:
  - {name: simc, provider: sim1, region: r, node_pools: [{name: p, gpu_type: H200, gpus_per_node: 8, nodes: 1}]}
  - name: laptop
    provider: here
    region: r
    storage: [/shared/]
    local: {output_dir: /tmp/laptop}
    node_pools: [{name: p, gpu_type: H200, gpus_per_node: 8, nodes: 1, disk_gb: 100, cpus: 32}]
prices:
  - {cluster: simc, gpu_type: H200, on_demand: "9.00"}
  - {cluster: laptop, gpu_type: H200, on_demand: "1.00"}
)", "e");
  ASSERT_TRUE(estate.ok()) << estate.status().ToString();
  Router router(*estate);
  // "cluster: eligible or why not" for every cluster.
  auto where = [&](const std::string& extra) {
    bool own = extra.rfind("resources:", 0) == 0;  // a resources block of its own
    auto spec = ParseJobSpec((own ? "" : "resources: {accelerators: H200:1}\n") + extra, "j");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    std::map<std::string, std::string> out;
    for (const auto& r : router.Explain(spec->spec, nullptr)) out[r.option.cluster->name] = r.eligible ? "yes" : r.failure;
    return out;
  };
  EXPECT_EQ(where("")["laptop"], "yes");
  EXPECT_EQ(where("workdir: {url: https://example.com/r.git, ref: main}\n")["laptop"], "yes");
  EXPECT_EQ(where("workdir: /shared/code\n")["laptop"], "yes");
  EXPECT_EQ(where("file_mounts: {/data: /shared/data}\n")["laptop"], "yes");
  EXPECT_EQ(where("resources: {accelerators: H200:1, disk_size: 100}\n")["laptop"], "yes");

  auto image = where("resources: {accelerators: H200:1, image_id: docker:nvcr.io/nvidia/pytorch:24.05-py3}\n");
  EXPECT_EQ(image["simc"], "yes");
  EXPECT_NE(image["laptop"].find("resources.image_id: the local executor runs jobs on the host"), std::string::npos)
      << image["laptop"];
  auto disk = where("resources: {accelerators: H200:1, disk_size: 200}\n");
  EXPECT_EQ(disk["simc"], "yes") << "a simulated pool that declares no disk";
  EXPECT_NE(disk["laptop"].find("has 100 GB of disk per node, the job asks for 200"), std::string::npos) << disk["laptop"];
  auto cpus = where("resources: {accelerators: H200:1, cpus: 64+}\n");
  EXPECT_EQ(cpus["simc"], "yes");
  EXPECT_NE(cpus["laptop"].find("resources.cpus: pool p has 32 CPUs per node, the job asks for 64+"), std::string::npos)
      << cpus["laptop"];
  EXPECT_EQ(where("resources: {accelerators: H200:1, cpus: 8}\n")["laptop"], "yes");
  auto memory = where("resources: {accelerators: H200:1, memory: 16+}\n");
  EXPECT_EQ(memory["simc"], "yes");
  EXPECT_NE(memory["laptop"].find("declares no memory_gb, so 16+ GB of memory per node cannot be promised"), std::string::npos)
      << memory["laptop"];
  auto code = where("workdir: ~/my-code\n");
  EXPECT_EQ(code["simc"], "yes");
  EXPECT_NE(code["laptop"].find("is not on this cluster's storage (/shared/)"), std::string::npos) << code["laptop"];
  EXPECT_NE(where("workdir: /shared/../etc\n")["laptop"], "yes");
  auto bucket = where("file_mounts: {/data: s3://bucket/data}\n");
  EXPECT_EQ(bucket["simc"], "yes");
  EXPECT_NE(bucket["laptop"].find("file_mounts./data: s3://bucket/data is under no storage location's url"),
            std::string::npos)
      << bucket["laptop"];

  // Refused at submission when nothing can honour it, with each reason.
  auto spec = ParseJobSpec("resources: {accelerators: H200:1, infra: here}\nfile_mounts: {/data: s3://b/d}\n", "j");
  Status st = CheckFeasible(router, spec->spec, "j");
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.ToString().find("under no storage location's url"), std::string::npos) << st.ToString();
}

// SkyPilot's Kubernetes forms route to the estate's Kubernetes clusters:
// `infra: k8s` (or kubernetes, or cloud: kubernetes) to any of them,
// `infra: k8s/CONTEXT` to the one of that name; an image runs there and
// not on a backend without containers.
TEST(KubernetesRoutingTest, SkyPilotsKubernetesInfraGoesToTheKubernetesClusters) {
  auto estate = providers::ParseEstate(R"(
providers:
  - {name: coreweave, kind: kubernetes, regions: [{name: us-east-04, zone: us}]}
  - {name: nebius, kind: kubernetes, regions: [{name: eu-north1, zone: eu}]}
  - {name: lab, kind: sim, regions: [{name: r1, zone: us}]}
  - {name: here, kind: local, regions: [{name: r1, zone: us}]}
clusters:
  - name: kc-a
    provider: coreweave
    region: us-east-04
    node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 4}]
    kubernetes: {api_server: "https://127.0.0.1:1", ca_file: /dev/null, token_file: /dev/null, namespace_prefix: team-}
  - name: kc-b
    provider: nebius
    region: eu-north1
    node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 4}]
    kubernetes: {api_server: "https://127.0.0.1:1", ca_file: /dev/null, token_file: /dev/null, namespace: causeway}
  - {name: lab-h100, provider: lab, region: r1, node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 4}]}
  - name: laptop
    provider: here
    region: r1
    local: {output_dir: /tmp/laptop}
    node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 1}]
prices:
  - {cluster: kc-a, gpu_type: H100, on_demand: "2.00"}
  - {cluster: kc-b, gpu_type: H100, on_demand: "2.10"}
  - {cluster: lab-h100, gpu_type: H100, on_demand: "1.00"}
  - {cluster: laptop, gpu_type: H100, on_demand: "0.50"}
)", "e");
  ASSERT_TRUE(estate.ok()) << estate.status().ToString();
  Router router(*estate);
  auto eligible = [&](const std::string& resources) {
    auto spec = ParseJobSpec("resources:\n" + resources + "run: echo\n", "task.yaml");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    std::set<std::string> out;
    if (!spec.ok()) return out;
    for (const auto& r : router.Explain(spec->spec, nullptr)) {
      if (r.eligible) out.insert(r.option.cluster->name);
    }
    return out;
  };
  const std::set<std::string> both = {"kc-a", "kc-b"};
  EXPECT_EQ(eligible("  infra: k8s\n  accelerators: H100:8\n"), both);
  EXPECT_EQ(eligible("  infra: kubernetes\n  accelerators: H100:8\n"), both);
  EXPECT_EQ(eligible("  cloud: kubernetes\n  accelerators: H100:8\n"), both);
  EXPECT_EQ(eligible("  infra: k8s/kc-b\n  accelerators: H100:8\n"), std::set<std::string>{"kc-b"});
  EXPECT_EQ(eligible("  infra: kubernetes/kc-a\n  accelerators: H100:8\n"), std::set<std::string>{"kc-a"});
  EXPECT_EQ(eligible("  accelerators: H100:8\n  any_of:\n    - infra: k8s/kc-a\n    - infra: lab\n"),
            (std::set<std::string>{"kc-a", "lab-h100"}));
  EXPECT_EQ(eligible("  accelerators: H100:8\n  image_id: docker:nvcr.io/nvidia/pytorch:24.05-py3\n"),
            (std::set<std::string>{"kc-a", "kc-b", "lab-h100"}))
      << "an image runs where containers run (the simulator takes any)";
  // A git workdir is cloned in the pod; a directory on the cluster's
  // storage means nothing inside a pod.
  EXPECT_EQ(eligible("  infra: k8s\n  accelerators: H100:8\nworkdir: {url: https://example.com/r.git, ref: main}\n"), both);
  EXPECT_TRUE(eligible("  infra: k8s\n  accelerators: H100:8\nworkdir: /shared/code\n").empty());
  // Placed: the cheaper of the two Kubernetes clusters, never the cheaper
  // simulated one the file did not ask for.
  auto spec = ParseJobSpec("resources:\n  infra: k8s\n  accelerators: H100:8\nrun: echo\n", "task.yaml");
  FakeView view;
  auto chosen = router.Choose(spec->spec, view, [](int) { return true; });
  ASSERT_TRUE(chosen);
  EXPECT_EQ(chosen->cluster->name, "kc-a");
  // A context the estate does not have is refused at submission, naming it.
  auto nowhere = ParseJobSpec("resources:\n  infra: k8s/kc-z\n  accelerators: H100:8\nrun: echo\n", "task.yaml");
  Status st = CheckFeasible(router, nowhere->spec, "task.yaml");
  EXPECT_FALSE(st.ok());
}

// Buckets under a storage location are copied by the local executor (and
// Slurm) with the nodes' rclone config; mounting needs FUSE declared.
TEST(HonouredTest, BucketsAreCopiedWhereTheEstateSaysHowAndMountedOnlyWithFuse) {
  const std::string base = R"(
providers:
  - {name: here, kind: local, regions: [{name: r, zone: eu}]}
clusters:
  - {name: laptop, provider: here, region: r, local: {output_dir: /tmp/laptop},
     node_pools: [{name: p, gpu_type: H200, gpus_per_node: 8, nodes: 1}]}
  - {name: fused, provider: here, region: r, local: {output_dir: /tmp/fused}, fuse: true,
     node_pools: [{name: p, gpu_type: H200, gpus_per_node: 8, nodes: 1}]}
data:
  locations: [{name: eu, provider: here, region: r, remote: "eu:bucket", url: "s3://bucket"}]
)";
  auto where = [](const std::string& estate_yaml, const std::string& mounts) {
    auto estate = providers::ParseEstate(estate_yaml, "e");
    EXPECT_TRUE(estate.ok()) << estate.status().ToString();
    Router router(*estate);
    auto spec = ParseJobSpec("resources: {accelerators: H200:1}\nfile_mounts: " + mounts + "\n", "j");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    std::map<std::string, std::string> out;
    for (const auto& r : router.Explain(spec->spec, nullptr)) out[r.option.cluster->name] = r.eligible ? "yes" : r.failure;
    return out;
  };
  auto no_config = where(base, "{/data: s3://bucket/c4}");
  EXPECT_NE(no_config["laptop"].find("no rclone config for buckets (data.node_rclone_config)"), std::string::npos)
      << no_config["laptop"];
  const std::string estate = base + "  node_rclone_config: /shared/rclone-read.conf\n";
  EXPECT_EQ(where(estate, "{/data: s3://bucket/c4}")["laptop"], "yes");
  auto mount = where(estate, "{/data: {source: s3://bucket/c4}}");  // a storage object: MOUNT by default
  EXPECT_NE(mount["laptop"].find("mode MOUNT mounts the bucket with rclone, which needs FUSE"), std::string::npos)
      << mount["laptop"];
  EXPECT_EQ(mount["fused"], "yes");
  EXPECT_EQ(where(estate, "{/data: {source: s3://bucket/c4, mode: COPY}}")["laptop"], "yes");
  EXPECT_NE(where(estate, "{/data: s3://elsewhere/c4}")["laptop"].find("under no storage location's url"),
            std::string::npos);
}

// Where the registry knows a version, its verified replicas decide data
// locality (the estate's list does not); a dataset asked for on demand
// makes clusters where it may be copied eligible, and the job waits there
// for the copy.
TEST(DataPlacesTest, TheRegistryDecidesWhereAVersionIsAndAnOnDemandJobWaitsForItsCopy) {
  auto estate = providers::ParseEstate(std::string(kEstate) + R"(
data:
  locations: [{name: cw-us-store, provider: cw, region: us-e, remote: "us:d"}]
  transfer_prices: [{from: neb, to: "*", per_gb: "0.05"}]
)", "e");
  ASSERT_TRUE(estate.ok()) << estate.status().ToString();
  struct FakePlaces : DataPlaces {
    std::optional<DataPlace> Verified(const std::string& digest) const override {
      auto it = at.find(digest);
      return it == at.end() ? std::nullopt : std::optional<DataPlace>(it->second);
    }
    std::string RequestCopy(const std::string& digest, const std::string& place, const std::string& job,
                            const std::string& team) const override {
      asked.push_back(digest + " " + place + " " + job + " " + team);
      return "asked";
    }
    std::map<std::string, DataPlace> at;
    mutable std::vector<std::string> asked;
  } places;
  const std::string in_us = "sha256:" + std::string(64, 'a'), in_eu = "sha256:" + std::string(64, 'b');
  places.at[in_us] = DataPlace{{"cw/us-e"}, 2'000'000'000};
  places.at[in_eu] = DataPlace{{"neb/eu-n"}, 1'000'000'000};
  Router router(*estate);
  router.SetDataPlaces(&places);
  FakeView view;
  auto pick = [&](const std::string& yaml) {
    auto o = router.Choose(ParseJobSpec(yaml, "j")->spec, view, [](int) { return true; });
    return o ? o->cluster->name : "none";
  };
  const std::string h200 = "resources: {accelerators: H200:4}\nlabels: {team: nlp}\n";
  EXPECT_EQ(pick(h200 + "datasets: [{name: c4, digest: " + in_us + "}]\n"), "cw-us");
  EXPECT_EQ(pick(h200 + "datasets: [{name: c4, digest: \"sha256:" + std::string(64, 'c') + "\"}]\n"), "neb-eu")
      << "a version the registry does not know: the estate's replicas";

  // Reading remotely: explain says what it moves and what it costs.
  JobSpec remote = ParseJobSpec(h200 + "datasets: [{name: c4, digest: " + in_eu + "}]\nallow_remote_data: true\n", "j")->spec;
  std::map<std::string, std::string> data;
  for (const auto& r : router.Explain(remote, &view)) data[r.option.cluster->name] = r.data;
  EXPECT_EQ(data["neb-eu"], "data local");
  EXPECT_EQ(data["cw-us"], "would read 1.0 GB across regions at 0.05 USD");

  // On demand: cw-us has a storage location, cw-eu none; the job is placed
  // on cw-us (cheaper than neb-eu) and waits there for the copy.
  JobSpec copy = ParseJobSpec(h200 + "datasets: [{name: c4, digest: " + in_eu + ", replicate: on-demand}]\n", "j")->spec;
  std::map<std::string, std::string> why;
  for (const auto& r : router.Explain(copy, &view)) why[r.option.cluster->name] = r.eligible ? r.data : r.failure;
  EXPECT_EQ(why["cw-us"], "would copy 1.0 GB here first (replicate: on-demand) at 0.05 USD");
  EXPECT_NE(why["cw-eu"].find("no storage location there it may be copied to"), std::string::npos) << why["cw-eu"];
  auto o = router.Choose(copy, view, [](int) { return true; });
  ASSERT_TRUE(o);
  EXPECT_EQ(o->cluster->name, "cw-us");
  std::string waiting = router.AwaitData(copy, *o->cluster, "job_1");
  EXPECT_NE(waiting.find("to be copied to cw/us-e (replicate: on-demand): asked"), std::string::npos) << waiting;
  ASSERT_EQ(places.asked.size(), 1u);
  EXPECT_EQ(places.asked[0], in_eu + " cw/us-e job_1 nlp");
  EXPECT_EQ(router.AwaitData(copy, *estate->FindCluster("neb-eu"), "job_1"), "");
}

// A job that requires a CUDA version or a driver is placed only on pools
// that declare one that satisfies it, on every backend; explain says why
// each other pool was passed over.
TEST(SoftwareTest, ACudaRequirementPlacesOnlyOnPoolsThatDeclareIt) {
  auto estate = providers::ParseEstate(R"(
providers:
  - {name: sim1, kind: sim, regions: [{name: r, zone: eu}]}
clusters:
  - name: new
    provider: sim1
    region: r
    node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1, software: {cuda: "12.4", driver: 550.54.15}}]
  - name: old
    provider: sim1
    region: r
    node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1, software: {cuda: "12.2", driver: 535.183.01}}]
  - {name: bare, provider: sim1, region: r, node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]}
prices:
  - {cluster: new, gpu_type: H100, on_demand: "9.00"}
  - {cluster: old, gpu_type: H100, on_demand: "1.00"}
  - {cluster: bare, gpu_type: H100, on_demand: "0.50"}
)", "e");
  ASSERT_TRUE(estate.ok()) << estate.status().ToString();
  EXPECT_EQ(estate->clusters[0].node_pools[0].software.at("cuda"), "12.4");
  Router router(*estate);
  auto where = [&](const std::string& res) {
    auto spec = ParseJobSpec("resources: {accelerators: H100:8" + res + "}\n", "j");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    std::map<std::string, std::string> out;
    for (const auto& r : router.Explain(spec->spec, nullptr)) out[r.option.cluster->name] = r.eligible ? "yes" : r.failure;
    return out;
  };
  auto cuda = where(", cuda: \">=12.4\"");
  EXPECT_EQ(cuda["new"], "yes");
  EXPECT_NE(cuda["old"].find("resources.cuda: pool p declares CUDA 12.2, the job requires >=12.4"), std::string::npos)
      << cuda["old"];
  EXPECT_NE(cuda["bare"].find("declares no CUDA version"), std::string::npos) << cuda["bare"];
  auto driver = where(", driver: 535.183.01");
  EXPECT_EQ(driver["old"], "yes");
  EXPECT_NE(driver["new"], "yes");
  // Without a requirement the cheapest is chosen, whatever it declares.
  auto any = where("");
  EXPECT_EQ(any["bare"], "yes");
  EXPECT_EQ(any["old"], "yes");
  // A declaration that is not a version is refused at its line.
  auto bad = providers::ParseEstate(R"(
providers:
  - {name: sim1, kind: sim, regions: [{name: r, zone: eu}]}
clusters:
  - name: c
    provider: sim1
    region: r
    node_pools:
      - {name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1, software: {cuda: ">=12", gpu: x}}
)", "e");
  ASSERT_FALSE(bad.ok());
  std::string all = bad.status().ToString();
  for (const auto& d : bad.status().diagnostics()) all += "\n" + d.field;
  EXPECT_NE(all.find("software.cuda"), std::string::npos) << all;
  EXPECT_NE(all.find("software.gpu"), std::string::npos) << all;
}

}  // namespace
}  // namespace causeway::placement
