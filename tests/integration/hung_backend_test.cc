// A backend that accepts connections and never answers holds up nothing but
// its own work: the scheduler calls providers off its lock (each Slurm
// cluster has a worker), the commit thread only leaves word for it, and a
// cluster whose call hangs takes no new work until it answers.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "server_process.h"
#include "silent_peer.h"

namespace causeway::testing {
namespace {

using json = nlohmann::json;

// A Slurm cluster (cheaper, so preferred) whose slurmrestd is `url`, beside
// a simulated one with the same GPUs.
std::string Estate(const std::string& url, const std::string& dir) {
  std::ofstream(dir + "/slurm.token") << "x";
  return "providers:\n"
         "  - {name: lab, kind: slurm, regions: [{name: r1, zone: eu}]}\n"
         "  - {name: simco, kind: sim, regions: [{name: r1, zone: eu}]}\n"
         "clusters:\n"
         "  - name: lab-slurm\n    provider: lab\n    region: r1\n"
         "    node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 8, nodes: 1}]\n"
         "    slurm: {url: \"" + url + "\", user: root, token_file: " + dir + "/slurm.token, partition: gpu, "
         "gres_type: h200, output_dir: " + dir + "}\n"
         "  - name: sim-h200\n    provider: simco\n    region: r1\n"
         "    node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 8, nodes: 8}]\n"
         "prices:\n"
         "  - {cluster: lab-slurm, gpu_type: H200, on_demand: \"2.00\"}\n"
         "  - {cluster: sim-h200, gpu_type: H200, on_demand: \"3.00\"}\n";
}

constexpr const char* kJob = "resources: {accelerators: H200:8}\nrun: train\nsim: {duration: 10h}\n";

TEST(HungBackendTest, ASlurmClusterThatNeverAnswersHoldsUpNothingElse) {
  TempDir dir("hung-slurm");
  SilentPeer peer;
  EstateServer server(dir, Estate(peer.url("http"), dir.path()));
  auto client = server.process().Client();
  auto auth = Auth(server.process().admin_token());

  // Each of these would wait behind the hung call (about 10 s, the REST
  // client's deadline, then again at every retry) if the scheduler called
  // Slurm under its lock. The bound is generous; it is not a speed test.
  constexpr auto kPrompt = std::chrono::seconds(5);
  auto timed = [&](const char* method, const std::string& path, const std::string& body, int want) {
    auto start = std::chrono::steady_clock::now();
    auto r = client.Send(method, path, body, auth);
    auto took = std::chrono::steady_clock::now() - start;
    EXPECT_TRUE(r.ok()) << method << " " << path << ": " << r.status().ToString();
    if (r.ok()) {
      EXPECT_EQ(r->status, want) << method << " " << path << ": " << r->body;
    }
    EXPECT_LT(took, kPrompt) << method << " " << path << " waited behind the hung cluster";
    return r.ok() ? json::parse(r->body, nullptr, false) : json();
  };

  // The first job goes to the cheaper Slurm cluster, whose submission hangs.
  std::string first = server.Submit(kJob);
  ASSERT_TRUE(Eventually([&] { return server.Get("/v1/jobs/" + first)["attempts"].size() >= 1u; }));
  EXPECT_EQ(server.Get("/v1/jobs/" + first)["attempts"][0]["cluster"], "lab-slurm");

  // While it hangs, the API answers.
  std::string during;
  for (int i = 0; i < 3; ++i) {
    json submitted = timed("POST", "/v1/jobs", json{{"spec", kJob}}.dump(), 201);
    if (i == 0) during = submitted["job"].value("id", "");
    timed("POST", "/v1/tokens", json{{"name", "t" + std::to_string(i)}, {"scopes", {"jobs:read"}}}.dump(), 201);
    timed("GET", "/v1/queues", "", 200);
    timed("GET", "/v1/jobs/" + first + "/explain", "", 200);
  }

  // The hung submission fails at its deadline: the attempt never launched,
  // so the job is placed again, elsewhere, without using up a retry.
  ASSERT_TRUE(Eventually([&] {
    json j = server.Get("/v1/jobs/" + first);
    return j["state"] == "running" && j["cluster"] == "sim-h200";
  })) << server.Get("/v1/jobs/" + first).dump(2);
  json job = server.Get("/v1/jobs/" + first);
  ASSERT_EQ(job["attempts"].size(), 2u) << job.dump(2);
  EXPECT_EQ(job["attempts"][0]["state"], "provider_outage");
  EXPECT_NE(job.dump().find("never launched"), std::string::npos) << job.dump(2);
  EXPECT_EQ(job["attempts"][1]["cluster"], "sim-h200");

  // Work submitted meanwhile runs too, and while the cluster stays silent
  // new work goes straight to the healthy one.
  ASSERT_TRUE(Eventually([&] { return server.Get("/v1/jobs/" + during)["state"] == "running"; }))
      << server.Get("/v1/jobs/" + during).dump(2);
  std::string later = server.Submit(kJob);
  ASSERT_TRUE(Eventually([&] { return server.Get("/v1/jobs/" + later)["state"] == "running"; }));
  json l = server.Get("/v1/jobs/" + later);
  ASSERT_EQ(l["attempts"].size(), 1u) << l.dump(2);
  EXPECT_EQ(l["attempts"][0]["cluster"], "sim-h200");
  auto explain = server.Get("/v1/jobs/" + later + "/explain");
  EXPECT_NE(explain.dump().find("lab-slurm"), std::string::npos) << explain.dump(2);

  // Cancelling still works while the cluster hangs.
  EXPECT_EQ(server.Post("/v1/jobs/" + later + "/cancel"), 200);
  ASSERT_TRUE(Eventually([&] { return server.Get("/v1/jobs/" + later)["state"] == "cancelled"; }));
}

}  // namespace
}  // namespace causeway::testing
