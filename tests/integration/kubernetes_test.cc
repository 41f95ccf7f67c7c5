// The kubernetes provider against a real control plane (k8s_plane.h):
// kube-apiserver with RBAC and an audit log, etcd, the controller manager
// and scheduler, KWOK's fake GPU nodes and Kueue admitting by team quota.
// Each test keeps to objects of its own: a namespace prefix, its nodes, a
// GPU product label of its own (so no test's nodes count as another's
// pool), its ResourceFlavor, ClusterQueue and LocalQueue.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "freezing_proxy.h"
#include "k8s_plane.h"
#include "server_process.h"
#include "silent_peer.h"
#include "slurm_cluster.h"

namespace causeway::testing {
namespace {

using json = nlohmann::json;

// A test's own corner of the shared plane.
class KubernetesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    plane_ = K8sPlane::Get(why);
    ASSERT_TRUE(plane_) << why;
  }
  void TearDown() override {
    // The test's namespace goes, and its Jobs with it; the rest is named
    // for the test and left (a plane lives for one run of the suite).
    if (plane_ && !prefix_.empty()) plane_->Kubectl("delete namespace " + prefix_ + "nlp --wait=false");
  }

  // Nodes, a ResourceFlavor, a ClusterQueue of `gpu_quota` GPUs (with
  // priority-based preemption inside it) and a LocalQueue "lq" in the
  // namespace of team nlp, all named for `tag`.
  void Corner(const std::string& tag, int nodes, int gpu_quota) {
    tag_ = tag;
    prefix_ = "cw-" + tag + "-";
    label_ = tag + ".test.causeway.dev/gpu.product";
    std::string yaml = "apiVersion: v1\nkind: Namespace\nmetadata: {name: " + prefix_ + "nlp}\n";
    for (int i = 1; i <= nodes; ++i) {
      std::string name = tag + "-gpu-" + std::to_string(i);
      yaml += "---\napiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
              "\n  annotations: {kwok.x-k8s.io/node: fake}\n"
              "  labels: {type: kwok, kubernetes.io/hostname: " + name + ", \"" + label_ +
              "\": NVIDIA-H100-80GB-HBM3, nvidia.com/cuda.driver-version.full: 550.54.15, "
              "nvidia.com/cuda.runtime-version.full: \"12.4\", nvidia.com/gpu.memory: \"81559\"}\n"
              "status:\n"
              "  allocatable: {cpu: \"32\", memory: 256Gi, pods: \"110\", nvidia.com/gpu: \"8\"}\n"
              "  capacity: {cpu: \"32\", memory: 256Gi, pods: \"110\", nvidia.com/gpu: \"8\"}\n"
              "  nodeInfo: {kernelVersion: 6.1.0-causeway-test, osImage: Ubuntu 22.04.4 LTS, "
              "containerRuntimeVersion: \"containerd://1.7.13\", architecture: amd64, operatingSystem: linux}\n";
    }
    yaml += "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: " + tag +
            "-h100}\nspec: {nodeLabels: {\"" + label_ + "\": NVIDIA-H100-80GB-HBM3}}\n"
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: " + tag + "-cq}\n"
            "spec:\n"
            "  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: " + prefix_ + "nlp}}\n"
            "  preemption: {withinClusterQueue: LowerPriority}\n"
            "  resourceGroups:\n"
            "  - coveredResources: [cpu, memory, nvidia.com/gpu]\n"
            "    flavors:\n"
            "    - name: " + tag + "-h100\n"
            "      resources:\n"
            "      - {name: cpu, nominalQuota: \"256\"}\n"
            "      - {name: memory, nominalQuota: 2Ti}\n"
            "      - {name: nvidia.com/gpu, nominalQuota: \"" + std::to_string(gpu_quota) + "\"}\n"
            "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: " + prefix_ +
            "nlp}\nspec: {clusterQueue: " + tag + "-cq}\n";
    plane_->Apply(yaml);
    ASSERT_TRUE(Eventually([&] {
      int rc = 0;
      plane_->Kubectl("wait --for=condition=Active clusterqueue/" + tag + "-cq --timeout=1s", "", &rc);
      return rc == 0;
    })) << plane_->Kubectl("get clusterqueue " + tag + "-cq -o yaml");
  }

  // An estate with one Kubernetes cluster: this test's corner of the plane.
  // `block`: more settings of the cluster's kubernetes block.
  std::string Estate(const std::string& extra_clusters = "", const std::string& extra_providers = "",
                     const std::string& block = "") const {
    return "providers:\n  - {name: kc, kind: kubernetes, regions: [{name: r1, zone: eu}]}\n" + extra_providers +
           "clusters:\n"
           "  - name: kc-" + tag_ + "\n    provider: kc\n    region: r1\n"
           "    node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 2}]\n"
           "    kubernetes: {api_server: \"" + plane_->api() + "\", ca_file: " + plane_->ca() +
           ", token_file: " + plane_->token_file() + ", namespace_prefix: " + prefix_ +
           ", local_queue: lq, gpu_product_label: \"" + label_ + "\"" + block + "}\n" + extra_clusters +
           "prices:\n  - {cluster: kc-" + tag_ + ", gpu_type: H100, on_demand: \"2.00\"}\n";
  }

  std::string JobName(const std::string& id, int attempt) const {
    std::string name = "cw-";
    for (char c : id) name += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
    return name + "-" + std::to_string(attempt);
  }
  json KubeJson(const std::string& args) const {
    int rc = 0;
    std::string out = plane_->Kubectl(args + " -o json", "", &rc);
    return rc == 0 ? json::parse(out, nullptr, false) : json();
  }
  std::string Ns() const { return prefix_ + "nlp"; }

  K8sPlane* plane_ = nullptr;
  std::string tag_, prefix_, label_;
  TempDir dir_{"k8s-test"};
};

// `more`: top-level keys; `labels`: more labels; `resources`: more resources.
std::string Spec(const std::string& name, const std::string& more = "", const std::string& labels = "",
                 const std::string& resources = "") {
  return "name: " + name + "\nresources: {accelerators: H100:8, infra: k8s" + resources + "}\n"
         "labels: {team: nlp, owner: alice@example.com" + labels + "}\n" + more + "run: python train.py\n";
}

TEST_F(KubernetesTest, KueueAdmitsAGpuJobOnFakeGpuNodesAndItsAttemptCarriesTheNodesFacts) {
  Corner("a", 2, 16);
  EstateServer s(dir_, Estate());
  std::string id = s.Submit(Spec("train", "workdir: {url: https://git.example.com/ml/train.git, ref: v1.2}\n", "",
                                 ", image_id: \"registry.example.com/train@sha256:" + std::string(64, 'a') + "\""));
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id)["state"] == "succeeded"; }))
      << s.Get("/v1/jobs/" + id).dump(2) << plane_->Kubectl("get jobs,pods,workloads -A");

  // The Job: in the team's namespace, queued for Kueue, tied to the job.
  json job = KubeJson("-n " + Ns() + " get job " + JobName(id, 1));
  ASSERT_TRUE(job.is_object()) << plane_->Kubectl("get jobs -A");
  const json& labels = job["metadata"]["labels"];
  EXPECT_EQ(labels["kueue.x-k8s.io/queue-name"], "lq");
  EXPECT_EQ(labels["causeway-team"], "nlp");
  EXPECT_EQ(labels["causeway-owner"], "alice_example.com");
  EXPECT_EQ(job["metadata"]["annotations"]["causeway.dev/owner"], "alice@example.com");
  EXPECT_EQ(job["spec"]["template"]["spec"]["containers"][0]["image"],
            "registry.example.com/train@sha256:" + std::string(64, 'a'));
  EXPECT_EQ(job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "8");
  // The pod clones the job's git workdir before setup, in its image.
  const std::string command = job["spec"]["template"]["spec"]["containers"][0]["command"].dump();
  EXPECT_NE(command.find("git clone --quiet -- 'https://git.example.com/ml/train.git'"), std::string::npos) << command;
  EXPECT_NE(command.find("checkout --quiet 'v1.2'"), std::string::npos) << command;
  // The attempt's credential is in a Secret the Job owns, never in the spec.
  EXPECT_EQ(job.dump().find("cw_"), std::string::npos) << "a token in the Job's spec";
  EXPECT_EQ(job["spec"]["template"]["spec"]["containers"][0]["envFrom"][0]["secretRef"]["name"], JobName(id, 1));
  json secret = KubeJson("-n " + Ns() + " get secret " + JobName(id, 1));
  ASSERT_TRUE(secret.is_object());
  EXPECT_EQ(secret["metadata"]["ownerReferences"][0]["uid"], job["metadata"]["uid"]);
  EXPECT_TRUE(secret["data"].contains("CAUSEWAY_TOKEN"));
  // Kueue admitted it: its Workload names the ClusterQueue.
  json workloads = KubeJson("-n " + Ns() + " get workloads.kueue.x-k8s.io");
  json admitted_by;
  for (const json& w : workloads["items"]) {
    if (w["metadata"]["ownerReferences"][0]["name"] == JobName(id, 1)) admitted_by = w["status"]["admission"]["clusterQueue"];
  }
  EXPECT_EQ(admitted_by, "a-cq") << workloads.dump(2);

  // The node it ran on, as the API server describes it, is in its record.
  json record = s.Get("/v1/jobs/" + id);
  const json& facts = record["attempts"][0]["facts"];
  ASSERT_FALSE(facts["nodes"].empty()) << record.dump(2);
  const json& node = facts["nodes"][0];
  EXPECT_EQ(node["name"].get<std::string>().rfind("a-gpu-", 0), 0u) << node.dump();
  EXPECT_EQ(node["facts"]["kernel"], "6.1.0-causeway-test");
  EXPECT_EQ(node["facts"]["os"], "Ubuntu 22.04.4 LTS");
  EXPECT_EQ(node["facts"]["container_runtime"], "containerd://1.7.13");
  EXPECT_EQ(node["facts"]["driver"], "550.54.15");
  EXPECT_EQ(node["facts"]["cuda"], "12.4");
  EXPECT_EQ(node["facts"]["image"], "kwok-resolved://registry.example.com/train@sha256:" + std::string(64, 'a'));
  EXPECT_EQ(node["gpus"].size(), 8u);

  // The cluster's own audit log, imported, shows what Causeway did there
  // beside Causeway's own trail: the Job created, as the API server saw it.
  std::map<std::string, std::string> cli = {{"CAUSEWAY_SERVER", s.process().url()},
                                            {"CAUSEWAY_TOKEN", s.process().admin_token()}};
  auto imported = RunCli({"audit", "import", plane_->audit_log(), "--source", "k8s", "--provider", "kc"}, cli);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  auto found = RunCli({"--json", "audit", "search", "--provider", "kc", "--action", "create", "--since", "1d",
                       "--limit", "1000"},
                      cli);
  ASSERT_EQ(found.exit_code, 0) << found.err;
  bool job_created = false;
  json events = json::parse(found.out)["events"];
  for (const json& e : events) {
    job_created |= e.dump().find(JobName(id, 1)) != std::string::npos && e.dump().find("jobs") != std::string::npos;
  }
  EXPECT_TRUE(job_created) << found.out.substr(0, 4000);
}

TEST_F(KubernetesTest, AJobBeyondKueuesQuotaWaitsWithKueuesWordsAndCancelDeletesTheJob) {
  Corner("b", 2, 8);
  EstateServer s(dir_, Estate());
  std::string first = s.Submit(Spec("first", "", ", kwok-run-for: 300s"));
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + first)["state"] == "running"; }))
      << s.Get("/v1/jobs/" + first).dump(2);
  std::string second = s.Submit(Spec("second"));
  // Handed to the cluster, it waits in Kueue, and explain says why in
  // Kueue's own words.
  json explain;
  ASSERT_TRUE(Eventually([&] {
    explain = s.Get("/v1/jobs/" + second + "/explain")["scheduler"];
    return explain.is_object() && explain.value("waiting", "").find("insufficient unused quota") != std::string::npos;
  })) << explain.dump(2);
  EXPECT_EQ(explain["state"], "admitted");
  EXPECT_NE(explain["waiting"].get<std::string>().find("nvidia.com/gpu in flavor b-h100"), std::string::npos)
      << explain.dump(2);
  EXPECT_EQ(s.Get("/v1/jobs/" + second)["state"], "admitted");

  // Cancelled, the first job's Job goes (and its pods and Secret with it);
  // the second is admitted by Kueue and runs.
  ASSERT_EQ(s.Post("/v1/jobs/" + first + "/cancel"), 200);
  ASSERT_TRUE(Eventually([&] {
    int rc = 0;
    plane_->Kubectl("-n " + Ns() + " get job " + JobName(first, 1), "", &rc);
    return rc != 0;
  })) << plane_->Kubectl("-n " + Ns() + " get jobs");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + second)["state"] == "succeeded"; }))
      << s.Get("/v1/jobs/" + second).dump(2);
}

TEST_F(KubernetesTest, KueueEvictingAJobIsAPreemptionAndTheJobResumesFromItsCheckpoint) {
  Corner("c", 1, 8);
  plane_->Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: c-urgent}\n"
                "value: 1000\n");
  EstateServer s(dir_, Estate());
  std::string id = s.Submit(Spec("long", "checkpoint: {path: s3://ckpt/long}\n", ", kwok-run-for: 600s"));
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id)["state"] == "running"; }))
      << s.Get("/v1/jobs/" + id).dump(2);
  // The attempt registers a checkpoint with its own credential, read from
  // its Secret (as the program in the pod would find it in its environment).
  std::string token = plane_->Kubectl("-n " + Ns() + " get secret " + JobName(id, 1) +
                                      " -o go-template='{{.data.CAUSEWAY_TOKEN | base64decode}}'");
  ASSERT_EQ(token.rfind("cw_", 0), 0u) << token;
  auto client = s.process().Client();
  auto registered = client.Send("POST", "/v1/jobs/" + id + "/checkpoints",
                                json{{"path", "s3://ckpt/long/step-200"}, {"step", 200}}.dump(), Auth(token));
  ASSERT_TRUE(registered.ok() && registered->status == 201) << (registered.ok() ? registered->body : "no answer");

  // Work of a higher priority arrives in the same ClusterQueue: Kueue
  // evicts Causeway's job to make room.
  plane_->Apply("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: urgent\n  namespace: " + Ns() +
                "\n  labels: {kueue.x-k8s.io/queue-name: lq, kueue.x-k8s.io/priority-class: c-urgent}\n"
                "spec:\n  suspend: true\n  template:\n    metadata: {labels: {kwok-run-for: 5s}}\n"
                "    spec:\n      restartPolicy: Never\n"
                "      containers: [{name: main, image: busybox, resources: {limits: {nvidia.com/gpu: \"8\"}}}]\n");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id)["attempts"].size() >= 2u; }, std::chrono::seconds(120)))
      << s.Get("/v1/jobs/" + id).dump(2) << plane_->Kubectl("-n " + Ns() + " get jobs,workloads");
  json job = s.Get("/v1/jobs/" + id);
  EXPECT_EQ(job["attempts"][0]["state"], "preempted") << job.dump(2);
  EXPECT_NE(job["events"].dump().find("evicted by Kueue"), std::string::npos) << job["events"].dump(2);
  // The next attempt resumes from the checkpoint (its Secret says where),
  // once the urgent work has finished.
  ASSERT_TRUE(Eventually([&] {
    std::string from = plane_->Kubectl("-n " + Ns() + " get secret " + JobName(id, 2) +
                                       " -o go-template='{{.data.CAUSEWAY_RESUME_FROM | base64decode}}'");
    return from == "s3://ckpt/long/step-200";
  }, std::chrono::seconds(120))) << plane_->Kubectl("-n " + Ns() + " get jobs,secrets");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id)["state"] == "running"; }, std::chrono::seconds(120)))
      << s.Get("/v1/jobs/" + id).dump(2);
}

// Causeway's priorities reach Kueue as its WorkloadPriorityClasses: a
// high-priority job makes Kueue evict a low-priority one of the same
// ClusterQueue, which Causeway records as a preemption and places again;
// it runs once the high one is done. A job whose class the cluster lacks
// waits, and explain says why (Kueue says it only in its own log).
TEST_F(KubernetesTest, KueueRanksCausewaysJobsByTheirPriority) {
  Corner("p", 1, 8);
  plane_->Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: p-low}\nvalue: 10\n"
                "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: p-high}\n"
                "value: 100\n");
  EstateServer s(dir_, Estate("", "", ", priority_classes: {low: p-low, high: p-high, critical: p-missing}"));
  std::string low = s.Submit(Spec("low", "priority: low\n", ", kwok-run-for: 600s"));
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + low)["state"] == "running"; })) << s.Get("/v1/jobs/" + low).dump(2);
  json job = KubeJson("-n " + Ns() + " get job " + JobName(low, 1));
  EXPECT_EQ(job["metadata"]["labels"]["kueue.x-k8s.io/priority-class"], "p-low") << job["metadata"].dump(2);

  std::string high = s.Submit(Spec("high", "priority: high\n", ", kwok-run-for: 5s"));
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + low)["attempts"].size() >= 2u; }, std::chrono::seconds(120)))
      << s.Get("/v1/jobs/" + low).dump(2) << plane_->Kubectl("-n " + Ns() + " get jobs,workloads");
  json first = s.Get("/v1/jobs/" + low);
  EXPECT_EQ(first["attempts"][0]["state"], "preempted") << first.dump(2);
  EXPECT_NE(first["events"].dump().find("evicted by Kueue"), std::string::npos) << first["events"].dump(2);
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + high)["state"] == "succeeded"; }, std::chrono::seconds(120)))
      << s.Get("/v1/jobs/" + high).dump(2);
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + low)["state"] == "running"; }, std::chrono::seconds(120)))
      << s.Get("/v1/jobs/" + low).dump(2);
  EXPECT_EQ(s.Get("/v1/jobs/" + high)["attempts"].size(), 1u) << "the high one was never evicted";

  std::string critical = s.Submit(Spec("critical", "priority: critical\n"));
  json explain;
  ASSERT_TRUE(Eventually([&] {
    explain = s.Get("/v1/jobs/" + critical + "/explain")["scheduler"];
    return explain.is_object() && explain.value("waiting", "").find("no WorkloadPriorityClass p-missing") != std::string::npos;
  })) << explain.dump(2);
  EXPECT_EQ(s.Get("/v1/jobs/" + critical)["attempts"].size(), 1u) << "it waits: no launch retried in a loop";
  EXPECT_EQ(s.Post("/v1/jobs/" + critical + "/cancel"), 200);
}

TEST_F(KubernetesTest, AGangOfTwoNodesGetsItsRanksAndEachOthersAddresses) {
  Corner("d", 2, 16);
  EstateServer s(dir_, Estate());
  std::string id = s.Submit("name: gang\nnum_nodes: 2\nresources: {accelerators: H100:8, infra: k8s/kc-d}\n"
                            "labels: {team: nlp}\nrun: torchrun --nnodes=$SKYPILOT_NUM_NODES train.py\n");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id)["state"] == "succeeded"; }))
      << s.Get("/v1/jobs/" + id).dump(2);
  const std::string name = JobName(id, 1);
  json job = KubeJson("-n " + Ns() + " get job " + name);
  ASSERT_TRUE(job.is_object());
  EXPECT_EQ(job["spec"]["completionMode"], "Indexed");
  EXPECT_EQ(job["spec"]["completions"], 2);
  EXPECT_EQ(job["spec"]["parallelism"], 2);
  EXPECT_EQ(job["spec"]["template"]["spec"]["subdomain"], name);
  std::string script = job["spec"]["template"]["spec"]["containers"][0]["command"][2];
  EXPECT_NE(script.find("SKYPILOT_NODE_RANK=\"${JOB_COMPLETION_INDEX:-0}\""), std::string::npos) << script;
  EXPECT_NE(script.find(name + "-0." + name + "." + Ns() + ".svc\n" + name + "-1." + name + "." + Ns() + ".svc"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("MASTER_ADDR='" + name + "-0."), std::string::npos) << script;
  json service = KubeJson("-n " + Ns() + " get service " + name);
  ASSERT_TRUE(service.is_object());
  EXPECT_EQ(service["spec"]["clusterIP"], "None");
  // Both ranks ran, one pod each, on the two nodes.
  json pods = KubeJson("-n " + Ns() + " get pods -l batch.kubernetes.io/job-name=" + name);
  std::set<std::string> ranks, nodes;
  for (const json& p : pods["items"]) {
    ranks.insert(p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"].get<std::string>());
    nodes.insert(p["spec"]["nodeName"].get<std::string>());
  }
  EXPECT_EQ(ranks, (std::set<std::string>{"0", "1"}));
  EXPECT_EQ(nodes.size(), 2u);
}

TEST_F(KubernetesTest, AServerKilledMidLaunchAndRestartedDoesNotCreateASecondJob) {
  Corner("e", 1, 8);
  EstateServer s(dir_, Estate());
  std::string id = s.Submit(Spec("once", "", ", kwok-run-for: 5s"));
  // Killed the moment the Job exists: whether or not the hand-over was
  // recorded, the restarted server adopts that Job.
  ASSERT_TRUE(Eventually([&] {
    int rc = 0;
    plane_->Kubectl("-n " + Ns() + " get job " + JobName(id, 1), "", &rc);
    return rc == 0;
  }));
  s.Restart();
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id)["state"] == "succeeded"; }))
      << s.Get("/v1/jobs/" + id).dump(2);
  json jobs = KubeJson("-n " + Ns() + " get jobs -l causeway-job=" + id);
  EXPECT_EQ(jobs["items"].size(), 1u) << jobs.dump(2);
}

TEST_F(KubernetesTest, AnApiServerThatNeverAnswersHoldsNothingUpAndItsWorkGoesElsewhere) {
  SilentPeer silent;  // an API server that takes connections and never answers
  tag_ = "f";
  std::string estate =
      "providers:\n  - {name: kc, kind: kubernetes, regions: [{name: r1, zone: eu}]}\n"
      "  - {name: simmed, kind: sim, regions: [{name: r2, zone: eu}]}\n"
      "clusters:\n"
      "  - name: kc-silent\n    provider: kc\n    region: r1\n"
      "    node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 2}]\n"
      "    kubernetes: {api_server: \"https://127.0.0.1:" + std::to_string(silent.port()) + "\", ca_file: " +
      plane_->ca() + ", token_file: " + plane_->token_file() + ", namespace: causeway}\n"
      "  - name: sim-h100\n    provider: simmed\n    region: r2\n"
      "    node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 8}]\n"
      "prices:\n  - {cluster: kc-silent, gpu_type: H100, on_demand: \"1.00\"}\n"
      "  - {cluster: sim-h100, gpu_type: H100, on_demand: \"5.00\"}\n";
  EstateServer s(dir_, estate);
  auto timed = [&](const char* method, const std::string& path, const json& body) {
    auto c = s.process().Client();
    auto t0 = std::chrono::steady_clock::now();
    auto r = c.Send(method, path, body.is_null() ? "" : body.dump(), Auth(s.process().admin_token()));
    auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_TRUE(r.ok() && r->status < 300) << path << ": " << (r.ok() ? r->body : "no answer");
    return took;
  };
  // What the server answers does not wait on the silent cluster (its
  // calls have deadlines of 10 s; these answer in far less).
  for (int i = 0; i < 3; ++i) {
    EXPECT_LT(timed("POST", "/v1/jobs", json{{"spec", "name: j" + std::to_string(i) +
                                                          "\nresources: {accelerators: H100:8}\nrun: train\n"}}),
              std::chrono::seconds(5));
    EXPECT_LT(timed("POST", "/v1/tokens", json{{"name", "t" + std::to_string(i)}, {"scopes", {"jobs:read"}}}),
              std::chrono::seconds(5));
    EXPECT_LT(timed("GET", "/v1/queues", json()), std::chrono::seconds(5));
  }
  // The cheaper cluster is down: the work runs on the other.
  json jobs = s.Get("/v1/jobs?limit=10");
  ASSERT_EQ(jobs["jobs"].size(), 3u);
  for (const json& j : jobs["jobs"]) {
    std::string id = j["id"];
    ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id)["attempts"].size() >= 1u; })) << s.Get("/v1/jobs/" + id);
    EXPECT_EQ(s.Get("/v1/jobs/" + id)["attempts"][0]["cluster"], "sim-h100");
  }
  json explain = s.Get("/v1/jobs/" + jobs["jobs"][0]["id"].get<std::string>() + "/explain");
  EXPECT_NE(explain.dump().find("provider kc is down"), std::string::npos) << explain.dump(2);
}

TEST_F(KubernetesTest, AClusterWhoseApiServerStopsAnsweringGoesDownAndNewWorkGoesElsewhere) {
  Corner("g", 1, 16);
  // The cluster is reached through a proxy that can be made to hang.
  FreezingProxy proxy(static_cast<uint16_t>(std::stoi(plane_->api().substr(plane_->api().rfind(':') + 1))));
  std::string estate = Estate("  - name: sim-h100\n    provider: simmed\n    region: r2\n"
                              "    node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 8}]\n",
                              "  - {name: simmed, kind: sim, regions: [{name: r2, zone: eu}]}\n");
  estate.replace(estate.find(plane_->api()), plane_->api().size(), "https://127.0.0.1:" + std::to_string(proxy.port()));
  estate += "  - {cluster: sim-h100, gpu_type: H100, on_demand: \"5.00\"}\n";
  EstateServer s(dir_, estate);
  // Healthy, the cheaper cluster takes the work.
  std::string first = s.Submit(Spec("first", "", ", kwok-run-for: 600s"));
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + first)["state"] == "running"; }))
      << s.Get("/v1/jobs/" + first).dump(2);
  EXPECT_EQ(s.Get("/v1/jobs/" + first)["attempts"][0]["cluster"], "kc-g");

  proxy.Freeze();
  // The server answers at once while the cluster hangs (its calls have
  // deadlines of 10 s; the bound is generous, not a speed test).
  auto timed = [&](const char* method, const std::string& path, const json& body) {
    auto c = s.process().Client();
    auto t0 = std::chrono::steady_clock::now();
    auto r = c.Send(method, path, body.is_null() ? "" : body.dump(), Auth(s.process().admin_token()));
    EXPECT_TRUE(r.ok() && r->status < 300) << path << ": " << (r.ok() ? r->body : "no answer");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5)) << path << " waited on the cluster";
    return r.ok() ? json::parse(r->body, nullptr, false) : json();
  };
  std::string second;
  for (int i = 0; i < 3; ++i) {
    json submitted = timed("POST", "/v1/jobs", json{{"spec", "name: after" + std::to_string(i) +
                                                                 "\nresources: {accelerators: H100:8}\nlabels: {team: nlp}\nrun: train\n"}});
    if (i == 0) second = submitted["job"].value("id", "");
    timed("POST", "/v1/tokens", json{{"name", "t" + std::to_string(i)}, {"scopes", {"jobs:read"}}});
    timed("GET", "/v1/queues", json());
  }
  // Once the watch has not heard from it for its bound, the cluster is
  // down: new work runs on the other cluster.
  ASSERT_TRUE(Eventually([&] {
    json job = s.Get("/v1/jobs/" + second);
    return job["state"] == "running" && job["attempts"].back()["cluster"] == "sim-h100";
  }, std::chrono::seconds(120))) << s.Get("/v1/jobs/" + second).dump(2);
}

// Kueue's quota steers routing: of two clusters alike in price and nodes,
// the one whose ClusterQueue other work has filled is the fuller, and the
// job goes where Kueue has room. There, Causeway queue nlp-gpu has its own
// LocalQueue (lq2, behind another ClusterQueue).
TEST_F(KubernetesTest, KueuesQuotaHeadroomSteersWorkAndACausewayQueueHasItsOwnLocalQueue) {
  Corner("h", 2, 8);
  plane_->Apply("apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\nmetadata: {name: h-roomy-cq}\nspec:\n"
                "  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: " + Ns() + "}}\n"
                "  resourceGroups:\n  - coveredResources: [cpu, memory, nvidia.com/gpu]\n    flavors:\n"
                "    - name: h-h100\n      resources:\n      - {name: cpu, nominalQuota: \"256\"}\n"
                "      - {name: memory, nominalQuota: 2Ti}\n      - {name: nvidia.com/gpu, nominalQuota: \"16\"}\n"
                "---\napiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq2, namespace: " + Ns() +
                "}\nspec: {clusterQueue: h-roomy-cq}\n");
  // Work that is not Causeway's holds h-cq's whole quota.
  plane_->Apply("apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: others\n  namespace: " + Ns() +
                "\n  labels: {kueue.x-k8s.io/queue-name: lq}\n"
                "spec:\n  suspend: true\n  template:\n    metadata: {labels: {kwok-run-for: 600s}}\n"
                "    spec:\n      restartPolicy: Never\n"
                "      containers: [{name: main, image: busybox, resources: {limits: {nvidia.com/gpu: \"8\"}}}]\n");
  ASSERT_TRUE(Eventually([&] {
    json cq = KubeJson("get clusterqueue h-cq");
    for (const json& f : cq["status"]["flavorsReservation"]) {
      for (const json& r : f["resources"]) {
        if (r["name"] == "nvidia.com/gpu" && r["total"] == "8") return true;
      }
    }
    return false;
  })) << plane_->Kubectl("get clusterqueue h-cq -o yaml");

  // Two Causeway clusters on this corner: kc-h sends to lq (h-cq, full);
  // kc-h2 sends nlp-gpu's jobs to lq2 (h-roomy-cq) and others to lq.
  // Without the headroom they tie, and kc-h (first by name) would win.
  std::string estate = Estate("  - name: kc-h2\n    provider: kc\n    region: r1\n"
                              "    node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 2}]\n"
                              "    kubernetes: {api_server: \"" + plane_->api() + "\", ca_file: " + plane_->ca() +
                              ", token_file: " + plane_->token_file() + ", namespace_prefix: " + prefix_ +
                              ", local_queue: lq, local_queues: {nlp-gpu: lq2}, gpu_product_label: \"" + label_ +
                              "\"}\n");
  estate += "  - {cluster: kc-h2, gpu_type: H100, on_demand: \"2.00\"}\n"
            "teams:\n  - {name: nlp}\nqueues:\n  - {name: nlp-gpu, team: nlp, quotas: [{flavor: H100, nominal: 8}]}\n";
  EstateServer s(dir_, estate);
  // A job pinned to kc-h2 takes the queue's whole Causeway quota, so the
  // next waits in Causeway while both clusters are seen.
  std::string pinned = s.Submit("name: pinned\nresources: {accelerators: H100:8, infra: k8s/kc-h2}\n"
                                "labels: {team: nlp, owner: alice@example.com, kwok-run-for: 600s}\nrun: train\n");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + pinned)["state"] == "running"; }))
      << s.Get("/v1/jobs/" + pinned).dump(2);
  EXPECT_EQ(s.Get("/v1/jobs/" + pinned)["attempts"][0]["cluster"], "kc-h2");
  std::string routed = s.Submit(Spec("routed", "", ", kwok-run-for: 5s"));
  // kc-h: Kueue can admit nothing there, so it counts as full; kc-h2: the
  // pinned job holds half of its pool and of lq2's quota.
  json explain;
  ASSERT_TRUE(Eventually([&] {
    explain = s.Get("/v1/jobs/" + routed + "/explain")["scheduler"];
    std::map<std::string, int> load;
    for (const json& c : explain["candidates"]) {
      if (c.value("eligible", false)) load[c["cluster"]] = c["load_percent"];
    }
    return load.size() == 2 && load["kc-h"] == 100 && load["kc-h2"] == 50;
  })) << explain.dump(2);
  EXPECT_EQ(s.Get("/v1/jobs/" + routed)["state"], "pending");

  // The pinned job ends: the next goes where Kueue has room, to its queue's LocalQueue.
  ASSERT_EQ(s.Post("/v1/jobs/" + pinned + "/cancel"), 200);
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + routed)["state"] == "succeeded"; }))
      << s.Get("/v1/jobs/" + routed).dump(2) << s.Get("/v1/jobs/" + routed + "/explain").dump(2);
  EXPECT_EQ(s.Get("/v1/jobs/" + routed)["attempts"][0]["cluster"], "kc-h2");
  json job = KubeJson("-n " + Ns() + " get job " + JobName(routed, 1));
  EXPECT_EQ(job["metadata"]["labels"]["kueue.x-k8s.io/queue-name"], "lq2") << job.dump(2);
  json admitted_by, workloads = KubeJson("-n " + Ns() + " get workloads.kueue.x-k8s.io");
  for (const json& w : workloads["items"]) {
    if (w["metadata"]["ownerReferences"][0]["name"] == JobName(routed, 1)) admitted_by = w["status"]["admission"]["clusterQueue"];
  }
  EXPECT_EQ(admitted_by, "h-roomy-cq");
}

// People's roles inside the cluster: a role bound to a person's group is a
// RoleBinding in the team's namespace to Causeway's ClusterRole, so the
// person (as the cluster's OIDC authenticator names them; here through
// impersonation) may list the team's Jobs and read their logs, but not
// submit around Causeway nor look into another namespace. Leaving the group
// takes it away at once; `credentials` says what the cluster still grants.
// Then the identity acceptance test passes with the cluster in the estate.
TEST_F(KubernetesTest, PeoplesRolesAreRoleBindingsThatFollowTheDirectory) {
  Corner("r", 1, 8);
  EstateServer s(dir_, Estate("", "", ", manage_rbac: true, rbac_user_prefix: \"oidc:\"") + "teams: [{name: nlp}]\n");
  auto send = [&](const char* method, const std::string& path, const json& body, const std::string& token,
                  const std::string& type = "application/json") {
    auto c = s.process().Client();
    auto headers = Auth(token);
    headers.emplace_back("Content-Type", type);
    auto r = c.Send(method, path, body.is_null() ? "" : body.dump(), headers);
    EXPECT_TRUE(r.ok());
    return r.ok() ? std::make_pair(r->status, json::parse(r->body, nullptr, false)) : std::make_pair(0, json());
  };
  const std::string admin = s.process().admin_token();
  auto scim = send("POST", "/v1/tokens", {{"name", "idp"}, {"scopes", {"scim:provision"}}}, admin);
  ASSERT_EQ(scim.first, 201) << scim.second.dump();
  const std::string idp = scim.second["secret"];
  auto user = send("POST", "/scim/v2/Users",
                   {{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:User"}}, {"userName", "bob@example.com"}, {"active", true}},
                   idp, "application/scim+json");
  ASSERT_EQ(user.first, 201) << user.second.dump();
  auto group = send("POST", "/scim/v2/Groups",
                    {{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:Group"}}, {"displayName", "nlp-researchers"},
                     {"members", {{{"value", user.second["id"]}}}}},
                    idp, "application/scim+json");
  ASSERT_EQ(group.first, 201) << group.second.dump();
  auto bound = send("POST", "/v1/access/bindings", {{"group", "nlp-researchers"}, {"role", "researcher"}, {"team", "nlp"}}, admin);
  ASSERT_EQ(bound.first, 201) << bound.second.dump();

  auto can = [&](const std::string& what) {
    int rc = 0;
    std::string out = plane_->Kubectl("auth can-i " + what + " --as oidc:bob@example.com", "", &rc);
    return out.rfind("yes", 0) == 0;
  };
  EXPECT_TRUE(can("list jobs.batch -n " + Ns())) << plane_->Kubectl("get rolebindings -A -l app.kubernetes.io/managed-by=causeway");
  EXPECT_TRUE(can("get pods --subresource=log -n " + Ns()));
  EXPECT_TRUE(can("list workloads.kueue.x-k8s.io -n " + Ns()));
  EXPECT_FALSE(can("create jobs.batch -n " + Ns())) << "submitting stays Causeway's";
  EXPECT_FALSE(can("delete jobs.batch -n " + Ns())) << "stopping work is a cancel through Causeway";
  EXPECT_FALSE(can("list jobs.batch -n default")) << "another namespace";
  EXPECT_FALSE(can("list secrets -n " + Ns())) << "the attempts' credentials";
  // As the cluster itself lists it, the impersonated person reads Jobs.
  int rc = 1;
  plane_->Kubectl("-n " + Ns() + " get jobs --as oidc:bob@example.com", "", &rc);
  EXPECT_EQ(rc, 0);
  json rb = KubeJson("-n " + Ns() + " get rolebindings -l app.kubernetes.io/managed-by=causeway");
  ASSERT_EQ(rb["items"].size(), 1u) << rb.dump(2);
  EXPECT_EQ(rb["items"][0]["roleRef"]["name"], "causeway:researcher");
  EXPECT_EQ(rb["items"][0]["subjects"][0]["name"], "oidc:bob@example.com");

  // Bob submits through Causeway with a token acting for him; Causeway
  // makes the Job in the cluster, for him.
  auto bobs = send("POST", "/v1/tokens",
                   {{"name", "bob"}, {"scopes", {"jobs:read", "jobs:write"}}, {"user", "bob@example.com"}}, admin);
  ASSERT_EQ(bobs.first, 201) << bobs.second.dump();
  auto submitted = send("POST", "/v1/jobs",
                        {{"spec", "name: bobs\nresources: {accelerators: H100:1}\nlabels: {team: nlp}\nrun: \"true\"\n"}},
                        bobs.second["secret"]);
  ASSERT_EQ(submitted.first, 201) << submitted.second.dump();
  const std::string bob_job = submitted.second["job"]["id"];
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + bob_job)["state"] == "succeeded"; }))
      << s.Get("/v1/jobs/" + bob_job).dump(2);

  json creds = s.Get("/v1/people/bob%40example.com/credentials");
  ASSERT_EQ(creds["provider_accounts"].size(), 1u) << creds.dump(2);
  EXPECT_EQ(creds["provider_accounts"][0]["state"], "present");
  EXPECT_EQ(creds["provider_accounts"][0]["kind"], "Kubernetes user");
  EXPECT_EQ(creds["provider_accounts"][0]["account_user"], "oidc:bob@example.com");
  EXPECT_EQ(creds["provider_accounts"][0]["accounts"], json({"researcher@" + Ns()}));
  EXPECT_NE(creds["verdict"].get<std::string>().find("Kubernetes user oidc:bob@example.com on kc-r"), std::string::npos)
      << creds["verdict"];

  // Out of the group: the binding goes with the SCIM request.
  auto removed = send("PATCH", "/scim/v2/Groups/" + group.second["id"].get<std::string>(),
                      {{"schemas", {"urn:ietf:params:scim:api:messages:2.0:PatchOp"}},
                       {"Operations", {{{"op", "remove"}, {"path", "members[value eq \"" + user.second["id"].get<std::string>() + "\"]"}}}}},
                      idp, "application/scim+json");
  ASSERT_TRUE(removed.first == 200 || removed.first == 204) << removed.second.dump();
  EXPECT_FALSE(can("list jobs.batch -n " + Ns()));
  creds = s.Get("/v1/people/bob%40example.com/credentials");
  EXPECT_EQ(creds["provider_accounts"][0]["state"], "absent") << creds.dump(2);
  json audit = s.Get("/v1/audit?action=provider.account.&resource=cluster/kc-r&limit=10");
  std::vector<std::string> actions;
  for (const json& e : audit["events"]) actions.push_back(e["action"]);
  EXPECT_EQ(actions, (std::vector<std::string>{"provider.account.create", "provider.account.remove"})) << audit.dump(2);

  // Bob's search: what he did in Causeway and, from the cluster's own audit
  // log, what he did there (as the OIDC authenticator names him) and what
  // was done there for him (his Job, his RoleBinding), side by side.
  std::map<std::string, std::string> cli = {{"CAUSEWAY_SERVER", s.process().url()}, {"CAUSEWAY_TOKEN", admin}};
  auto imported = RunCli({"audit", "import", plane_->audit_log(), "--source", "k8s", "--provider", "kc"}, cli);
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  json trail = s.Get("/v1/audit/people/bob%40example.com?limit=1000");
  ASSERT_TRUE(trail.contains("events")) << trail.dump(2);
  bool submitted_here = false, listed_there = false, job_for_him = false, binding_for_him = false,
       binding_removed = false;
  for (const json& e : trail["events"]) {
    const std::string provider = e["cloud"].value("provider", "");
    const json& resource = e.contains("resources") ? e["resources"][0] : json::object();
    const std::string owner = resource.contains("owner") ? resource["owner"].value("name", "") : "";
    const std::string op = e.contains("api") ? e["api"].value("operation", "") : "";
    submitted_here |= provider == "causeway" && e.value("message", "") == "job.submit job/" + bob_job;
    listed_there |= provider == "kc" && op == "list" && e["actor"]["user"].value("name", "") == "oidc:bob@example.com";
    job_for_him |= provider == "kc" && op == "create" && resource.value("type", "") == "jobs" &&
                   resource.value("name", "") == JobName(bob_job, 1) && owner == "bob@example.com";
    binding_for_him |= provider == "kc" && op == "create" && resource.value("type", "") == "rolebindings" &&
                       owner == "oidc:bob@example.com";
    // The DELETE names nobody; whom it was for is read from its creation.
    binding_removed |= provider == "kc" && op == "delete" && resource.value("type", "") == "rolebindings" &&
                       owner == "oidc:bob@example.com";
  }
  EXPECT_TRUE(submitted_here) << "his submission through Causeway";
  EXPECT_TRUE(listed_there) << "his list of Jobs in the cluster";
  EXPECT_TRUE(job_for_him) << "the Job Causeway made for him";
  EXPECT_TRUE(binding_for_him) << "his RoleBinding\n" << trail["events_by_provider"].dump();
  EXPECT_TRUE(binding_removed) << "his RoleBinding removed\n" << trail["events_by_provider"].dump();

  // The identity acceptance test, with this cluster among the estate's.
  auto run = RunCli({"acceptance", "identity", "--team", "nlp", "--out", dir_.path(), "--json"},
                    {{"CAUSEWAY_SERVER", s.process().url()}, {"CAUSEWAY_TOKEN", admin}});
  json report = json::parse(run.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.out << run.err;
  EXPECT_TRUE(report["passed"]) << report.dump(2);
  for (const json& step : report["steps"]) EXPECT_TRUE(step["ok"]) << step.dump();
  const std::string follows = report["steps"][4]["detail"];
  EXPECT_NE(follows.find("researcher@" + Ns()), std::string::npos) << follows;
  EXPECT_EQ(report["credentials"]["provider_accounts"][0]["state"], "absent");
  EXPECT_TRUE(KubeJson("get rolebindings,clusterrolebindings -A -l app.kubernetes.io/managed-by=causeway")["items"].empty());
}

// One job spec, written once, runs unchanged on each engine: the simulated
// estate, real Slurm and the real Kubernetes plane (one server each, the
// same file submitted with the CLI). Each runs it and it succeeds; Slurm's
// output and the Kubernetes Job's command and Secret show what ran.
TEST_F(KubernetesTest, OneSpecRunsUnchangedOnTheSimulatorOnSlurmAndOnKubernetes) {
  std::string why;
  std::unique_ptr<SlurmCluster> slurm = SlurmCluster::Start(why);
  if (!slurm) GTEST_SKIP() << why;
  Corner("u", 1, 8);
  const std::string spec = dir_.path() + "/same.yaml";
  std::ofstream(spec) << "name: same-everywhere\n"
                         "resources: {accelerators: H100:1}\n"
                         "labels: {team: nlp}\n"
                         "envs: {MESSAGE: hello}\n"
                         "run: echo \"$MESSAGE from $SKYPILOT_NODE_RANK of $SKYPILOT_NUM_NODES\"\n"
                         "sim: {duration: 5s}\n";
  const std::string prices = "prices: [{cluster: C, gpu_type: H100, on_demand: \"2.00\"}]\n";
  auto priced = [&](std::string cluster) {
    std::string p = prices;
    return p.replace(p.find("C,"), 1, cluster);
  };
  const std::map<std::string, std::string> estates = {
      {"sim-h100",
       "providers: [{name: sim1, kind: sim, regions: [{name: r1, zone: eu}]}]\n"
       "clusters: [{name: sim-h100, provider: sim1, region: r1, node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 1}]}]\n" +
           priced("sim-h100")},
      {"lab-slurm",
       "providers: [{name: lab, kind: slurm, regions: [{name: r1, zone: eu}]}]\n"
       "clusters:\n  - name: lab-slurm\n    provider: lab\n    region: r1\n"
       "    node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 1, cpus: 16, memory_gb: 62}]\n"
       "    slurm: {url: \"" + slurm->Get("CAUSEWAY_SLURM_URL") + "\", user: root, token_file: " +
           slurm->Get("CAUSEWAY_SLURM_TOKEN_FILE") + ", partition: gpu, gres_type: h200, output_dir: " + slurm->OutputDir() +
           "}\n" + priced("lab-slurm")},
      {"kc-u", Estate()},
  };
  for (const auto& [cluster, estate] : estates) {
    SCOPED_TRACE(cluster);
    TempDir dir("same-" + cluster);
    EstateServer s(dir, estate + "teams: [{name: nlp}]\n");
    std::map<std::string, std::string> env = {{"CAUSEWAY_SERVER", s.process().url()},
                                              {"CAUSEWAY_TOKEN", s.process().admin_token()}};
    auto submitted = RunCli({"--json", "submit", spec}, env);
    ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
    const std::string id = json::parse(submitted.out)["job"]["id"];
    ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id)["state"] == "succeeded"; }, std::chrono::seconds(120)))
        << s.Get("/v1/jobs/" + id).dump(2);
    json job = s.Get("/v1/jobs/" + id);
    ASSERT_EQ(job["attempts"].size(), 1u) << job.dump(2);
    EXPECT_EQ(job["attempts"][0]["cluster"], cluster);
    if (cluster == "lab-slurm") {
      auto logs = RunCli({"logs", id}, env);
      EXPECT_EQ(logs.out, "hello from 0 of 1\n") << logs.err;
    } else if (cluster == "kc-u") {
      json kjob = KubeJson("-n " + Ns() + " get job " + JobName(id, 1));
      ASSERT_TRUE(kjob.is_object());
      EXPECT_NE(kjob["spec"]["template"]["spec"]["containers"][0].dump().find("from $SKYPILOT_NODE_RANK"), std::string::npos)
          << kjob["spec"]["template"]["spec"]["containers"][0].dump(2);
      EXPECT_EQ(plane_->Kubectl("-n " + Ns() + " get secret " + JobName(id, 1) +
                                " -o go-template='{{.data.MESSAGE | base64decode}}'"),
                "hello");
    }
  }
}

}  // namespace
}  // namespace causeway::testing
