// The local executor as a real backend, and a checkpointed job failing on
// real Slurm and resuming on a second cluster (the local executor).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "causeway/crypto.h"

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
  // Stopped by Causeway, the attempt's record says why its probe's facts
  // were not read back (once the scheduler has ended the attempt: the job
  // reads cancelled from the moment the cancellation is accepted).
  EXPECT_TRUE(Eventually([&] {
    return s.Get("/v1/jobs/" + slow)["attempts"][0]["facts"]["probe"].dump().find("Causeway cancelled it") !=
           std::string::npos;
  })) << s.Get("/v1/jobs/" + slow)["attempts"][0].dump(2);

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

// Every file under `dir`, concatenated: where a secret must never be.
std::string AllBytesUnder(const std::string& dir) {
  std::string all;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (!e.is_regular_file()) continue;
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    all += ss.str();
  }
  return all;
}

// --env and --secret as SkyPilot has them: a variable the file leaves null
// must be given; a secret reaches the job's environment and nothing else
// (the database and its journal, the job as shown, the audit trail).
TEST(LocalExecutorTest, EnvsAndSecretsGivenAtSubmissionReachTheJobAndSecretsNothingElse) {
  TempDir dir("secrets");
  std::string out = dir.path() + "/out";
  EstateServer s(dir, "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]\nclusters:\n" + LocalCluster(out));
  std::string spec = dir.path() + "/job.yaml";
  std::ofstream(spec) << "name: hf\nresources: {accelerators: H200:1}\nenvs: {MODE: null, EMPTY: \"\"}\n"
                         "secrets: {HF_TOKEN: null}\n"
                         "run: printf %s \"$HF_TOKEN\" | sha256sum; echo \"mode=$MODE empty=[$EMPTY]\"\n";
  const std::string secret = "hf_Zq8sEcReT0nlyForTheJob";
  std::map<std::string, std::string> env = {{"CAUSEWAY_SERVER", s.process().url()},
                                            {"CAUSEWAY_TOKEN", s.process().admin_token()},
                                            {"HF_TOKEN", secret}};

  // Null means "must be given": both are named, with the flag that gives them.
  auto refused = RunCli({"submit", spec}, env);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE(refused.err.find("envs.MODE"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--secret HF_TOKEN"), std::string::npos) << refused.err;
  auto offline = RunCli({"validate", spec, "--env", "MODE=fast"}, env);
  EXPECT_NE(offline.exit_code, 0) << offline.out;
  EXPECT_NE(offline.err.find("secrets.HF_TOKEN"), std::string::npos) << offline.err;
  EXPECT_EQ(RunCli({"validate", spec, "--env", "MODE=fast", "--secret", "HF_TOKEN"}, env).exit_code, 0);

  auto submitted = RunCli({"--json", "submit", spec, "--env", "MODE=fast", "--secret", "HF_TOKEN"}, env);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  std::string id = json::parse(submitted.out)["job"]["id"];
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id)["state"] == "succeeded"; })) << s.Get("/v1/jobs/" + id).dump(2);
  auto logs = RunCli({"logs", id}, env);
  EXPECT_EQ(logs.out, Sha256Hex(secret) + "  -\nmode=fast empty=[]\n");

  json job = s.Get("/v1/jobs/" + id);
  EXPECT_EQ(job["spec"]["envs"]["MODE"], "fast");
  EXPECT_EQ(job["spec"]["secrets"], json::array({"HF_TOKEN"}));
  std::string audit = s.Get("/v1/audit?limit=1000").dump();
  EXPECT_NE(audit.find("\"secrets\":[\"HF_TOKEN\"]"), std::string::npos) << "the secret's name is in the trail";
  s.process().Stop(SIGTERM);
  for (const std::string& where : {job.dump(), audit, AllBytesUnder(dir.path())}) {
    EXPECT_EQ(where.find(secret), std::string::npos) << "the secret's value was found in clear";
  }
}

// A job whose secrets the server can no longer open (its key file was
// replaced) is cancelled with the reason when placed, never run without them.
TEST(LocalExecutorTest, AJobWhoseSecretsCannotBeOpenedIsCancelledNotRunWithoutThem) {
  TempDir dir("secrets-key");
  std::string out = dir.path() + "/out";
  EstateServer s(dir, "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]\nclusters:\n" + LocalCluster(out));
  std::string blocker = s.Submit("resources: {accelerators: H200:2}\nrun: sleep 300\n");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + blocker)["state"] == "running"; }));
  auto c = s.process().Client();
  auto r = c.Send("POST", "/v1/jobs",
                  json{{"spec", "resources: {accelerators: H200:1}\nsecrets: {TOKEN: null}\nrun: touch ran\n"},
                       {"secrets", {{"TOKEN", "value"}}}}
                      .dump(),
                  Auth(s.process().admin_token()));
  ASSERT_EQ(r->status, 201) << r->body;
  std::string id = json::parse(r->body)["job"]["id"];
  s.process().Stop(SIGTERM);
  std::ofstream(dir.path() + "/secrets.key", std::ios::trunc) << std::string(64, 'a') << "\n";
  s.Start();
  ASSERT_EQ(s.Post("/v1/jobs/" + blocker + "/cancel"), 200);
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id)["state"] == "cancelled"; })) << s.Get("/v1/jobs/" + id).dump(2);
  // Its events say why.
  EXPECT_NE(s.Get("/v1/jobs/" + id).dump().find("secrets cannot be given to it"), std::string::npos)
      << s.Get("/v1/jobs/" + id).dump(2);
  EXPECT_FALSE(std::filesystem::exists(out + "/ran"));
}

// What the local executor honours beyond GPUs: a git workdir is cloned at
// its ref and entered, a file mount from the cluster's storage is linked at
// its target; a bucket mount or a container image is refused on submission
// with the reason, never ignored.
TEST(LocalExecutorTest, GitWorkdirAndStorageMountsAreHonouredAndWhatIsNotIsRefused) {
  TempDir dir("workspace");
  std::string out = dir.path() + "/out", shared = dir.path() + "/shared", repo = dir.path() + "/repo";
  std::string make_repo = "set -e; git init -q '" + repo + "'; cd '" + repo +
                          "'; git config user.email t@example.com; git config user.name t; echo one > version;"
                          " git add version; git commit -qm one; git tag v1; echo two > version; git commit -qam two";
  ASSERT_EQ(std::system(make_repo.c_str()), 0);
  std::filesystem::create_directories(shared);
  std::ofstream(shared + "/data.txt") << "payload\n";
  EstateServer s(dir, "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]\nclusters:\n"
                      "  - name: laptop\n    provider: here\n    region: r1\n"
                      "    node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 2, nodes: 1}]\n"
                      "    storage: [" + shared + "/]\n    local: {output_dir: " + out + "}\n");

  std::string id = s.Submit("resources: {accelerators: H200:1}\nworkdir: {url: \"file://" + repo + "\", ref: v1}\n"
                            "file_mounts: {" + out + "/mnt/data.txt: " + shared + "/data.txt}\n"
                            "run: cat version; cat " + out + "/mnt/data.txt; basename \"$PWD\"\n");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id)["state"] == "succeeded"; })) << s.Get("/v1/jobs/" + id).dump(2);
  auto logs = RunCli({"logs", id}, {{"CAUSEWAY_SERVER", s.process().url()}, {"CAUSEWAY_TOKEN", s.process().admin_token()}});
  EXPECT_EQ(logs.out, "one\npayload\nworkdir-" + id + "-1\n");

  auto c = s.process().Client();
  const std::pair<std::string, std::string> refused[] = {
      {"resources: {accelerators: H200:1}\nfile_mounts: {/data: s3://bucket/data}\n", "is under no storage location's url (data.locations)"},
      {"resources: {accelerators: H200:1, image_id: nvcr.io/nvidia/pytorch:24.05-py3}\n", "runs jobs on the host"},
      {"resources: {accelerators: H200:1}\nworkdir: ~/my-code\n", "is not on this cluster's storage"},
  };
  for (const auto& [spec, why] : refused) {
    auto r = c.Send("POST", "/v1/jobs", json{{"spec", spec}}.dump(), Auth(s.process().admin_token()));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 400) << spec << r->body;
    EXPECT_NE(r->body.find(why), std::string::npos) << r->body;
  }
}

// A pipeline on a real backend: each step starts only once the one before
// it has succeeded (the second reads what the first wrote), across a kill
// of the server; a failed step stops the rest, which never run.
// A CPU-only job on a CPU-only pool of a real backend: placed there and not
// on the GPU pool, it sees no GPU, is told it has none, and is costed by its
// CPUs with no GPU time.
TEST(LocalExecutorTest, CpuOnlyJobsRunOnCpuPoolsAndSeeNoGpu) {
  TempDir dir("cpu");
  std::string out = dir.path() + "/out";
  EstateServer s(dir, "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]\nclusters:\n"
                      "  - name: laptop\n    provider: here\n    region: r1\n"
                      "    node_pools:\n"
                      "      - {name: h200, gpu_type: H200, gpus_per_node: 2, nodes: 1, cpus: 8}\n"
                      "      - {name: cpu, cpus: 4, memory_gb: 8, nodes: 1}\n"
                      "    local: {output_dir: " + out + "}\n"
                      "prices: [{cluster: laptop, gpu_type: CPU, on_demand: \"0.10\"}]\n");
  std::string job = s.Submit("resources: {cpus: 2+, memory: 4}\n"
                             "run: sleep 2; echo \"gpus=[$CUDA_VISIBLE_DEVICES] per-node=$SKYPILOT_NUM_GPUS_PER_NODE\"\n");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + job)["state"] == "succeeded"; }))
      << s.Get("/v1/jobs/" + job).dump(2);
  std::map<std::string, std::string> env{{"CAUSEWAY_SERVER", s.process().url()},
                                         {"CAUSEWAY_TOKEN", s.process().admin_token()}};
  EXPECT_EQ(RunCli({"logs", job}, env).out, "gpus=[] per-node=0\n");
  json shown = s.Get("/v1/jobs/" + job);
  const json& attempt = shown["attempts"][0];
  EXPECT_EQ(attempt["cluster"], "laptop");
  EXPECT_EQ(attempt["flavor"], "CPU") << attempt.dump(2);
  EXPECT_EQ(attempt["pool"], "cpu");
  EXPECT_EQ(attempt["gpus"], 2);  // CPUs, as its flavor says
  EXPECT_EQ(attempt["price_micros"], 100'000);
  EXPECT_GT(attempt.value("cost_micros", 0), 0) << attempt.dump(2);  // 2 CPUs for 2 s or more
  EXPECT_EQ(attempt.value("gpu_seconds", -1), 0) << attempt.dump(2);
  // More CPUs than a CPU-only node has is refused at submission, with the reason.
  std::string big = dir.path() + "/big.yaml";
  std::ofstream(big) << "resources: {cpus: 16}\nrun: x\n";
  auto refused = RunCli({"submit", big}, env);
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_NE((refused.out + refused.err).find("no CPU-only pool has 16 CPUs on one node"), std::string::npos)
      << refused.out << refused.err;
  auto clusters = RunCli({"clusters"}, env);
  EXPECT_NE(clusters.out.find("1x4cpu"), std::string::npos) << clusters.out;
  EXPECT_NE(clusters.out.find("CPU=0.10 USD"), std::string::npos) << clusters.out;
}

TEST(LocalExecutorTest, PipelineStepsRunInOrderAndAFailedStepStopsTheRest) {
  TempDir dir("pipeline");
  std::string out = dir.path() + "/out";
  EstateServer s(dir, "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]\nclusters:\n" + LocalCluster(out));
  auto env = [&] {
    return std::map<std::string, std::string>{{"CAUSEWAY_SERVER", s.process().url()},
                                              {"CAUSEWAY_TOKEN", s.process().admin_token()}};
  };
  std::string file = dir.path() + "/chain.yaml";
  std::ofstream(file) << "name: chain\n"
                         "---\n"
                         "name: first\n"
                         "resources: {accelerators: H200:1}\n"
                         "run: sleep 3; echo one > step1.txt\n"
                         "---\n"
                         "name: second\n"
                         "resources: {accelerators: H200:1}\n"
                         "run: cat step1.txt; echo two\n";
  auto valid = RunCli({"validate", file});
  EXPECT_EQ(valid.exit_code, 0) << valid.err;
  EXPECT_NE(valid.out.find("valid pipeline chain of 2 steps"), std::string::npos) << valid.out;
  auto submitted = RunCli({"--json", "submit", file}, env());
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
  json made = json::parse(submitted.out);
  ASSERT_EQ(made["jobs"].size(), 2u) << made.dump(2);
  std::string first = made["jobs"][0]["id"], second = made["jobs"][1]["id"];
  EXPECT_EQ(made["jobs"][1]["pipeline"]["after"], first);

  // The second waits, with the reason, though the cluster has room for it.
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + first)["state"] == "running"; }));
  json why = s.Get("/v1/jobs/" + second + "/explain");
  EXPECT_EQ(why["state"], "pending");
  EXPECT_NE(why["scheduler"].value("waiting", "").find(first), std::string::npos) << why.dump(2);
  EXPECT_EQ(why["pipeline"]["jobs"].size(), 2u) << why.dump(2);
  s.Restart();  // while the first runs: the second still waits for it
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + second)["state"] == "succeeded"; }))
      << s.Get("/v1/jobs/" + second).dump(2);
  auto logs = RunCli({"logs", second}, env());
  EXPECT_EQ(logs.out, "one\ntwo\n");
  auto shown = RunCli({"job", second}, env());
  EXPECT_NE(shown.out.find("pipeline:  chain"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("step 2 of 2, runs once " + first + " has succeeded"), std::string::npos) << shown.out;

  std::string gpu = "resources: {accelerators: H200:1}\n";
  std::ofstream(file) << gpu << "run: exit 3\n---\n"
                      << gpu << "run: echo never > never.txt\n---\n"
                      << gpu << "run: echo never >> never.txt\n";
  submitted = RunCli({"--json", "submit", file}, env());
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
  made = json::parse(submitted.out);
  ASSERT_EQ(made["jobs"].size(), 3u);
  std::string failing = made["jobs"][0]["id"], skipped = made["jobs"][1]["id"], last = made["jobs"][2]["id"];
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + last)["state"] == "cancelled"; }))
      << s.Get("/v1/jobs/" + last).dump(2);
  EXPECT_EQ(s.Get("/v1/jobs/" + failing)["state"], "failed");
  json step2 = s.Get("/v1/jobs/" + skipped);
  EXPECT_EQ(step2["state"], "cancelled");
  EXPECT_EQ(step2["attempts"].size(), 0u);
  bool said = false;
  for (const auto& e : step2["events"]) said |= e.value("message", "").find("not run: the step before it, job " + failing + ", failed") != std::string::npos;
  EXPECT_TRUE(said) << step2.dump(2);
  EXPECT_FALSE(std::filesystem::exists(out + "/never.txt"));
}

TEST(LocalExecutorTest, AJobGroupsTasksStartTogetherAndAuxiliaryOnesEndAfterThePrimary) {
  TempDir dir("group");
  std::string out = dir.path() + "/out";
  EstateServer s(dir, "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]\nclusters:\n" + LocalCluster(out));
  auto env = [&] {
    return std::map<std::string, std::string>{{"CAUSEWAY_SERVER", s.process().url()},
                                              {"CAUSEWAY_TOKEN", s.process().admin_token()}};
  };
  // Three tasks of one GPU each on a laptop of two: none may start.
  std::string file = dir.path() + "/group.yaml";
  std::ofstream(file) << "name: rl\n"
                         "execution: parallel\n"
                         "primary_tasks: [trainer]\n"
                         "termination_delay: 1s\n"
                         "inter_connection: false\n"
                         "---\n"
                         "name: trainer\n"
                         "resources: {accelerators: H200:1}\n"
                         "run: while [ ! -e go ]; do sleep 0.2; done; echo $SKYPILOT_JOBGROUP_NAME > trainer.txt\n"
                         "---\n"
                         "name: buffer\n"
                         "resources: {accelerators: H200:1}\n"
                         "run: echo up > buffer.txt; sleep 600\n"
                         "---\n"
                         "name: eval\n"
                         "resources: {accelerators: H200:1}\n"
                         "run: echo eval > eval.txt\n";
  auto valid = RunCli({"validate", file});
  EXPECT_EQ(valid.exit_code, 0) << valid.err;
  EXPECT_NE(valid.out.find("valid job group rl of 3 tasks, started together"), std::string::npos) << valid.out;
  EXPECT_NE(valid.out.find("2. buffer (H200:1, 1 node, auxiliary: ended 1s after the primary tasks succeed)"),
            std::string::npos)
      << valid.out;
  auto submitted = RunCli({"--json", "submit", file}, env());
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err;
  json made = json::parse(submitted.out);
  ASSERT_EQ(made["jobs"].size(), 3u) << made.dump(2);
  std::string trainer = made["jobs"][0]["id"], buffer = made["jobs"][1]["id"], eval = made["jobs"][2]["id"];
  EXPECT_EQ(made["jobs"][1]["pipeline"]["execution"], "parallel");
  EXPECT_EQ(made["jobs"][1]["pipeline"]["auxiliary"], true);

  // What the scheduler says a task waits for ("" until it holds the task).
  auto waiting = [&](const std::string& id) {
    json scheduler = s.Get("/v1/jobs/" + id + "/explain")["scheduler"];
    return scheduler.is_object() ? scheduler.value("waiting", "") : std::string();
  };
  ASSERT_TRUE(Eventually([&] { return waiting(trainer).find("its tasks start together; task ") != std::string::npos; }))
      << s.Get("/v1/jobs/" + trainer + "/explain").dump(2);
  for (const std::string& id : {trainer, buffer, eval}) {
    json j = s.Get("/v1/jobs/" + id);
    EXPECT_EQ(j["state"], "pending") << j.dump(2);
    EXPECT_EQ(j["attempts"].size(), 0u) << j.dump(2);
  }
  // After a restart the group, none of whose tasks has run, still starts
  // whole: read back from the database, it waits as before.
  s.Restart();
  ASSERT_TRUE(Eventually([&] { return waiting(buffer).find("its tasks start together; task ") != std::string::npos; }))
      << s.Get("/v1/jobs/" + buffer + "/explain").dump(2);
  EXPECT_EQ(s.Get("/v1/jobs/" + trainer)["attempts"].size(), 0u);
  auto shown = RunCli({"job", buffer}, env());
  EXPECT_NE(shown.out.find("job group: rl"), std::string::npos) << shown.out;
  EXPECT_NE(shown.out.find("task 2 of 3, auxiliary; its tasks start together"), std::string::npos) << shown.out;

  // Without eval the other two fit: they start together.
  auto cancelled = RunCli({"cancel", eval}, env());
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.out << cancelled.err;
  ASSERT_TRUE(Eventually([&] {
    return s.Get("/v1/jobs/" + trainer)["state"] == "running" && s.Get("/v1/jobs/" + buffer)["state"] == "running";
  })) << s.Get("/v1/jobs/" + buffer).dump(2);
  ASSERT_TRUE(Eventually([&] { return std::filesystem::exists(out + "/buffer.txt"); }));
  s.Restart();  // while both run: re-adopted, the group already started
  std::ofstream(out + "/go") << "go\n";
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + trainer)["state"] == "succeeded"; }))
      << s.Get("/v1/jobs/" + trainer).dump(2);
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + buffer)["state"] == "cancelled"; }))
      << s.Get("/v1/jobs/" + buffer).dump(2);
  json aux = s.Get("/v1/jobs/" + buffer);
  EXPECT_NE(aux.value("reason", "").find("ended: the primary tasks of job group rl have all succeeded"),
            std::string::npos)
      << aux.dump(2);
  std::ifstream named(out + "/trainer.txt");
  std::string group_name;
  std::getline(named, group_name);
  EXPECT_EQ(group_name, "rl") << "SKYPILOT_JOBGROUP_NAME";
  EXPECT_FALSE(std::filesystem::exists(out + "/eval.txt"));
}

// Each attempt records what the probe found where it ran: this machine's
// name, kernel and OS, and (it has no NVIDIA driver) GPU facts not detected,
// with the reason, never invented; the job adds facts of its own through its
// attempt credential, and they are part of its record.
TEST(LocalExecutorTest, AttemptsCarryTheProbesFactsAndTheJobsOwn) {
  TempDir dir("local-facts");
  std::string out = dir.path() + "/out";
  EstateServer s(dir, "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]\nclusters:\n" + LocalCluster(out));
  std::string digest = "sha256:" + Sha256Hex("model");
  std::string id = s.Submit("resources: {accelerators: H200:1}\nenvs: {CW: " + std::string(CAUSEWAY_BINARY) +
                            "}\nrun: |\n  $CW record stage=eval 'metrics={\"loss\": 0.25}' --artifact model.pt=" + digest + "\n");
  ASSERT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + id)["state"] == "succeeded"; })) << s.Get("/v1/jobs/" + id).dump(2);
  json attempt = s.Get("/v1/jobs/" + id)["attempts"][0];
  const json& facts = attempt["facts"];
  EXPECT_EQ(facts["probe"], "ran") << facts.dump(2);
  ASSERT_EQ(facts["nodes"].size(), 1u) << facts.dump(2);
  const json& node = facts["nodes"][0];
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  EXPECT_EQ(node["name"], host);
  EXPECT_TRUE(node["facts"]["kernel"].is_string()) << node.dump(2);
  EXPECT_TRUE(node["facts"]["os"].is_string()) << node.dump(2);
  EXPECT_TRUE(node["facts"]["image"].is_object()) << "the local executor runs no image: not detected";
  if (std::system("command -v nvidia-smi > /dev/null 2>&1") != 0) {
    // No GPU on this machine: the record says so and why.
    EXPECT_TRUE(node["gpus"].empty());
    EXPECT_NE(node["gpus_not_detected"].get<std::string>().find("nvidia-smi is not on the PATH"), std::string::npos)
        << node.dump(2);
    EXPECT_TRUE(node["facts"]["driver"].contains("not_detected")) << node.dump(2);
  } else {
    EXPECT_FALSE(node["gpus"].empty()) << node.dump(2);
  }
  json statement = s.Get("/v1/jobs/" + id + "/provenance?format=statement");
  ASSERT_EQ(statement["subject"].size(), 1u) << statement.dump(2);
  EXPECT_EQ(statement["subject"][0]["name"], "model.pt");
  EXPECT_EQ(statement["subject"][0]["digest"]["sha256"], digest.substr(7));
  std::string text = statement.dump();
  EXPECT_NE(text.find("\"stage\""), std::string::npos);
  EXPECT_NE(text.find("0.25"), std::string::npos);
  // Recorded with the attempt's own credential, which ended with it.
  json audit = s.Get("/v1/audit?action=job.record&limit=10");
  ASSERT_EQ(audit["events"].size(), 1u) << audit.dump(2);
  EXPECT_EQ(audit["events"][0]["actor"], "tokj_" + id + "_1");
  auto late = s.process().Client().Send("POST", "/v1/jobs/" + id + "/facts", json{{"facts", {{"x", 1}}}}.dump(),
                                        Auth(s.process().admin_token()));
  EXPECT_EQ(late->status, 409) << "a record closes when its job ends: " << late->body;
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

  // The record: Slurm's attempt with what the probe found on its node, the
  // checkpoint it registered, and the laptop's attempt resumed from it.
  json statement = s.Get("/v1/jobs/" + id + "/provenance?format=statement");
  const json& by = statement["predicate"]["runDetails"]["byproducts"];
  ASSERT_GE(by.size(), 2u) << statement.dump(2);
  EXPECT_EQ(by[0]["annotations"]["cluster"], "lab-slurm");
  EXPECT_EQ(by[0]["annotations"]["checkpoints"][0]["path"], "/shared/ckpt/step-500");
  const json& slurm = by[0]["annotations"]["facts"];
  std::string listing;
  for (const auto& f : std::filesystem::directory_iterator(cluster->OutputDir())) listing += f.path().string() + "\n";
  std::ifstream first_log(cluster->OutputDir() + "/" + id + "-1.log");
  std::string first((std::istreambuf_iterator<char>(first_log)), {});
  EXPECT_EQ(slurm["probe"], "ran") << slurm.dump(2) << listing << first;
  ASSERT_EQ(slurm["nodes"].size(), 1u) << slurm.dump(2);
  EXPECT_FALSE(slurm["nodes"][0]["name"].get<std::string>().empty());
  EXPECT_TRUE(slurm["nodes"][0]["facts"]["kernel"].is_string()) << slurm.dump(2);
  EXPECT_EQ(by[1]["annotations"]["resumed_from"], "/shared/ckpt/step-500");
  EXPECT_EQ(by[1]["annotations"]["facts"]["probe"], "ran");
  auto diff = RunCli({"--json", "provenance", "diff", id + "@1", id + "@2"},
                     {{"CAUSEWAY_SERVER", s.process().url()}, {"CAUSEWAY_TOKEN", s.process().admin_token()}});
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  EXPECT_NE(diff.out.find("\"lab-slurm\""), std::string::npos) << diff.out;
  EXPECT_NE(diff.out.find("\"laptop\""), std::string::npos) << diff.out;
}

}  // namespace
}  // namespace causeway::testing
