// The local executor as a real backend, and a checkpointed job failing on
// real Slurm and resuming on a second cluster (the local executor).
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "slurm_cluster.h"

namespace causeway::testing {
namespace {

using nlohmann::json;


std::string LocalCluster(const std::string& out) {
  return "  - name: laptop\n    provider: here\n    region: r1\n"
         "    node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 2, nodes: 1}]\n"
         "    storage: [/shared/]\n"
         "    local: {output_dir: " + out + "}\n";
}

TEST(LocalExecutorTest, RunsFailsCancelsAndSurvivesRestarts) {
  TempDir dir("local");
  std::string out = dir.path() + "/out";
  EstateServer s(dir, "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]\nclusters:\n" + LocalCluster(out));

  std::string ok = s.Submit("resources: {accelerators: H200:2}\nenvs: {WHO: world}\nrun: echo hello $WHO on $CUDA_VISIBLE_DEVICES\n");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + ok)["state"] == "succeeded"; })) << s.Get("/v1/jobs/" + ok).dump(2);
  auto logs = RunCli({"logs", ok}, {{"CAUSEWAY_SERVER", s.process().url()}, {"CAUSEWAY_TOKEN", s.process().admin_token()}});
  EXPECT_EQ(logs.out, "hello world on 0,1\n");

  std::string bad = s.Submit("resources: {accelerators: H200:1}\nrun: echo 'CUDA out of memory' >&2; exit 1\n");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + bad)["state"] == "failed"; }));
  EXPECT_EQ(s.Get("/v1/jobs/" + bad)["attempts"][0]["failure_class"], "out_of_memory");

  // Cancel kills the whole process group, children included.
  std::string slow = s.Submit("resources: {accelerators: H200:1}\nrun: sleep 300 & echo $! > child.pid; wait\n");
  ASSERT_TRUE(Eventually([&] { return std::ifstream(out + "/child.pid").good(); }));
  int child = 0;
  ASSERT_TRUE(Eventually([&] { return static_cast<bool>(std::ifstream(out + "/child.pid") >> child); }));
  ASSERT_EQ(s.Post("/v1/jobs/" + slow + "/cancel"), 200);
  ASSERT_TRUE(Eventually([&] {
    std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
    std::string pid, comm, state;
    return !(stat >> pid >> comm >> state) || state == "Z";
  })) << "the job's child survived the cancellation";

  // An attempt that outlives Causeway is accounted for after a restart.
  std::string survivor = s.Submit("resources: {accelerators: H200:1}\nrun: sleep 2; echo done\n");
  // Running, and handed over: the attempt's id names its process (a launch
  // is recorded with no id, named by the executor's placeholder once its
  // dispatcher has passed it on, and released just after its dispatch is
  // recorded; one killed before the release was never started, and is
  // placed again).
  ASSERT_TRUE(Eventually([&] {
    auto j = s.Get("/v1/jobs/" + survivor);
    std::string id = j["attempts"].size() == 1 ? j["attempts"][0].value("backend_id", "") : "";
    return j["state"] == "running" && !id.empty() && id.find(":0:") == std::string::npos;
  })) << s.Get("/v1/jobs/" + survivor).dump(2);
  s.Restart();
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + survivor)["state"] == "succeeded"; }))
      << s.Get("/v1/jobs/" + survivor).dump(2);
  EXPECT_EQ(s.Get("/v1/jobs/" + survivor)["attempts"].size(), 1u);
}

TEST(FallbackTest, ACheckpointedJobKilledOnSlurmResumesOnAnotherCluster) {
  std::string why;
  auto cluster = SlurmCluster::Start(why);
  if (!cluster) GTEST_SKIP() << why;
  TempDir dir("fallback");
  std::string out = dir.path() + "/out";
  // Slurm is cheaper, so the job starts there; the laptop is the fallback.
  std::string estate = cluster->Estate();
  estate.replace(estate.find("providers: ["), 12, "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}, ");
  estate.replace(estate.find("clusters:\n"), 10, "clusters:\n" + LocalCluster(out));
  estate.replace(estate.find("prices: ["), 9, "prices: [{cluster: laptop, gpu_type: H200, on_demand: \"9.00\"}, ");
  EstateServer s(dir, estate);
  std::string script =
      "if [ -z \"$CAUSEWAY_RESUME_FROM\" ]; then\n"
      "  " + std::string(CAUSEWAY_BINARY) + " checkpoint register --job $CAUSEWAY_JOB_ID --path /shared/ckpt/step-500 --step 500\n"
      "  sleep 120\n"
      "else\n"
      "  echo resumed from $CAUSEWAY_RESUME_FROM on $CAUSEWAY_CLUSTER\n"
      "fi";
  json spec = {{"resources", {{"accelerators", "H200:1"}}},
               {"envs", {{"CAUSEWAY_SERVER", s.process().url()}, {"CAUSEWAY_TOKEN", s.process().admin_token()}}},
               {"run", script}};
  std::string id = s.Submit(spec.dump());
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id + "/checkpoints")["checkpoints"].size() == 1u; }))
      << s.Get("/v1/jobs/" + id).dump(2);
  EXPECT_EQ(s.Get("/v1/jobs/" + id)["attempts"][0]["cluster"], "lab-slurm");
  cluster->Run("scancel --name=cw-" + id + "-1");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id)["state"] == "succeeded"; })) << s.Get("/v1/jobs/" + id).dump(2);
  json job = s.Get("/v1/jobs/" + id);
  ASSERT_EQ(job["attempts"].size(), 2u);
  EXPECT_EQ(job["attempts"][1]["cluster"], "laptop");
  EXPECT_EQ(job["attempts"][1]["resumed_from"], "/shared/ckpt/step-500");
  std::ifstream log(out + "/" + id + "-2.log");
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line, "resumed from /shared/ckpt/step-500 on laptop");
}

}  // namespace
}  // namespace causeway::testing
