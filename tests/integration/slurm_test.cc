// The Slurm adapter against a real Slurm 22.05 cluster on loopback.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <nlohmann/json.hpp>

#include "providers/slurm/slurm_cli.h"
#include "providers/slurm/slurm_client.h"
#include "providers/slurm/slurm_provider.h"
#include "s3_peer.h"
#include "slurm_cluster.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

class SlurmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cluster_ = SlurmCluster::Start(skip_reason_).release(); }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    if (!cluster_) GTEST_SKIP() << skip_reason_;
  }
  slurm::SlurmClient Client() {
    return slurm::SlurmClient({cluster_->Get("CAUSEWAY_SLURM_URL"), "root", cluster_->Get("CAUSEWAY_SLURM_TOKEN_FILE")});
  }
  // A two-GPU job that prints its GPUs and $FOO, then exits 3.
  static slurm::SubmitRequest FailingJob(const std::string& name, const std::string& foo) {
    slurm::SubmitRequest r;
    r.name = name + "-test";
    r.script = "#!/bin/bash\necho gpus=$CUDA_VISIBLE_DEVICES foo=$FOO\nexit 3\n";
    r.partition = "gpu";
    r.gres = "gpu:h200:2";
    r.environment = {{"PATH", "/usr/bin:/bin"}, {"FOO", foo}};
    r.working_directory = cluster_->OutputDir();
    r.output = cluster_->OutputDir() + "/" + name + "-%j.out";
    return r;
  }
  // The job as `api` lists it once it has ended.
  static std::optional<slurm::JobInfo> WaitForEnd(slurm::SlurmApi& api, int64_t id) {
    std::optional<slurm::JobInfo> info;
    bool ended = Eventually([&] {
      auto jobs = api.ListJobs();
      if (!jobs.ok()) return false;
      for (const auto& j : *jobs) {
        if (j.id == id) info = j;
      }
      return info && slurm::OutcomeOf(*info).has_value();
    });
    return ended ? info : std::nullopt;
  }
  static std::string FirstLine(const std::string& name, int64_t id) {
    std::ifstream out(cluster_->OutputDir() + "/" + name + "-" + std::to_string(id) + ".out");
    std::string line;
    std::getline(out, line);
    return line;
  }
  static SlurmCluster* cluster_;
  static std::string skip_reason_;
};
SlurmCluster* SlurmTest::cluster_ = nullptr;
std::string SlurmTest::skip_reason_;


TEST_F(SlurmTest, ClientSubmitsWatchesAndCancelsRealJobs) {
  auto client = Client();
  ASSERT_TRUE(client.Ping().ok());
  slurm::SubmitRequest r = FailingJob("client", "bar");
  auto id = client.Submit(r);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto info = WaitForEnd(client, *id);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->state, "FAILED");
  EXPECT_EQ(info->exit_code, 3);
  EXPECT_EQ(slurm::OutcomeOf(*info), AttemptOutcome::kFailed);
  ASSERT_TRUE(info->start && info->end);
  EXPECT_EQ(FirstLine("client", *id), "gpus=0,1 foo=bar");
  auto one = client.GetJob(*id);
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->state, "FAILED");

  r.script = "#!/bin/bash\nsleep 60\n";
  auto sleeper = client.Submit(r);
  ASSERT_TRUE(sleeper.ok());
  ASSERT_TRUE(client.Cancel(*sleeper).ok());
  ASSERT_TRUE(Eventually([&] {
    auto j = client.GetJob(*sleeper);
    return j.ok() && j->state == "CANCELLED";
  }));
}

TEST_F(SlurmTest, ErrorsAreTypedAndClear) {
  auto client = Client();
  auto missing = client.GetJob(999999);
  EXPECT_EQ(missing.status().code(), Code::kNotFound);
  EXPECT_NE(missing.status().message().find("slurm error 2017"), std::string::npos) << missing.status().message();
  EXPECT_EQ(client.Cancel(999999).code(), Code::kNotFound);

  slurm::SlurmClient no_token({cluster_->Get("CAUSEWAY_SLURM_URL"), "root", cluster_->base() + "/no-such-token"});
  EXPECT_EQ(no_token.Ping().code(), Code::kNotFound);

  std::string bad_token_file = cluster_->base() + "/bad-token";
  std::ofstream(bad_token_file) << "not-a-jwt\n";
  slurm::SlurmClient bad({cluster_->Get("CAUSEWAY_SLURM_URL"), "root", bad_token_file});
  auto jobs = bad.ListJobs();
  EXPECT_FALSE(jobs.ok());
  EXPECT_EQ(jobs.status().message().find("not-a-jwt"), std::string::npos) << "a token leaked into an error";

  slurm::SlurmClient nobody({"http://127.0.0.1:1", "root", cluster_->Get("CAUSEWAY_SLURM_TOKEN_FILE")});
  auto refused = nobody.Ping();
  EXPECT_EQ(refused.code(), Code::kUnavailable);
  EXPECT_NE(refused.message().find("slurmrestd at http://127.0.0.1:1"), std::string::npos) << refused.message();
}

// The CLI interface against the same cluster: sbatch, squeue --json,
// scancel, sacct; the job's environment reaches it quoted, and accounting
// reports exit codes and allocated GPUs (slurmrestd's does too).
TEST_F(SlurmTest, CliSubmitsWatchesCancelsAndReadsAccounting) {
  slurm::SlurmCli cli(cluster_->Get("SLURM_CONF"));
  ASSERT_TRUE(cli.Ping().ok()) << cli.Ping().ToString();
  slurm::SubmitRequest r = FailingJob("cli", "it's $HOME");
  auto id = cli.Submit(r);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  auto info = WaitForEnd(cli, *id);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->state, "FAILED");
  EXPECT_EQ(info->exit_code, 3);
  EXPECT_EQ(info->gpus, 2);
  EXPECT_EQ(FirstLine("cli", *id), "gpus=0,1 foo=it's $HOME");

  std::vector<slurm::JobInfo> accounted;
  ASSERT_TRUE(Eventually([&] {
    auto a = cli.Accounting({*id, 999999});
    if (a.ok()) accounted = *a;
    return a.ok() && accounted.size() == 1 && accounted[0].state == "FAILED";
  }));
  EXPECT_EQ(accounted[0].id, *id);
  EXPECT_EQ(accounted[0].exit_code, 3);
  EXPECT_EQ(accounted[0].gpus, 2);
  ASSERT_TRUE(accounted[0].start && accounted[0].end);
  EXPECT_EQ(ToUnixMicros(*accounted[0].end), ToUnixMicros(*info->end));
  auto rest = Client().Accounting({*id});
  ASSERT_TRUE(rest.ok()) << rest.status().ToString();
  ASSERT_EQ(rest->size(), 1u);
  EXPECT_EQ((*rest)[0].state, "FAILED");
  EXPECT_EQ((*rest)[0].gpus, 2);
  EXPECT_EQ(ToUnixMicros(*(*rest)[0].start), ToUnixMicros(*accounted[0].start));

  r.script = "#!/bin/bash\nsleep 60\n";
  auto sleeper = cli.Submit(r);
  ASSERT_TRUE(sleeper.ok());
  ASSERT_TRUE(cli.Cancel(*sleeper).ok());
  EXPECT_EQ(cli.Cancel(999999).code(), Code::kNotFound);

  slurm::SlurmCli nowhere(cluster_->base() + "/no-such-slurm.conf");
  Status missing = nowhere.Ping();
  EXPECT_EQ(missing.code(), Code::kFailedPrecondition);
  EXPECT_NE(missing.message().find("no-such-slurm.conf"), std::string::npos) << missing.message();
}

// Causeway through the CLI when slurmrestd is away (interfaces: [rest,
// cli]), with its REST token from a command.
TEST_F(SlurmTest, FallsBackToTheCliWhileSlurmrestdIsAway) {
  std::string restd = std::string(CAUSEWAY_SOURCE_DIR) + "/scripts/slurm/restd.sh " + cluster_->base();
  TempDir dir("slurm-fallback");
  EstateServer s(dir, cluster_->Estate("lab", "eu",
                                       "interfaces: [rest, cli], url: \"" + cluster_->Get("CAUSEWAY_SLURM_URL") +
                                           "\", user: root, token_command: \"SLURM_CONF=" + cluster_->Get("SLURM_CONF") +
                                           " scontrol token username=root lifespan=600\", conf: " +
                                           cluster_->Get("SLURM_CONF")));
  auto job = [&](const std::string& id) { return s.Get("/v1/jobs/" + id); };
  std::string over_rest = s.Submit("resources: {accelerators: H200:1}\nrun: echo over rest\n");
  ASSERT_TRUE(Eventually([&] { return job(over_rest)["state"] == "succeeded"; })) << job(over_rest).dump(2);

  ASSERT_EQ(std::system((restd + " stop").c_str()), 0);
  std::string over_cli = s.Submit("resources: {accelerators: H200:1}\nrun: echo over the cli\n");
  ASSERT_TRUE(Eventually([&] { return job(over_cli)["state"] == "succeeded"; })) << job(over_cli).dump(2);
  std::ifstream log(cluster_->OutputDir() + "/" + over_cli + "-1.log");
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line, "over the cli");
  ASSERT_EQ(std::system((restd + " start").c_str()), 0);
}

// A node that goes down under a job (NODE_FAIL) is the provider's fault:
// the job is retried, not failed.
TEST_F(SlurmTest, NodeFailureIsRetried) {
  TempDir dir("slurm-nodefail");
  EstateServer s(dir, cluster_->Estate());
  std::string id = s.Submit("resources: {accelerators: H200:1}\nrun: if [ $CAUSEWAY_ATTEMPT = 1 ]; then sleep 60; fi\n");
  auto job = [&] { return s.Get("/v1/jobs/" + id); };
  ASSERT_TRUE(Eventually([&] { return cluster_->Run("squeue -h -t R -o %j").find("cw-" + id + "-1") != std::string::npos; }));
  cluster_->Run("scontrol update nodename=localhost state=down reason=causeway-test");
  ASSERT_TRUE(Eventually([&] { return job()["attempts"].size() == 2u; })) << job().dump(2);
  json first = job()["attempts"][0];
  EXPECT_EQ(first["state"], "node_failure");
  EXPECT_EQ(first["failure_class"], "node_fault");
  cluster_->Run("scontrol update nodename=localhost state=resume");
  ASSERT_TRUE(Eventually([&] { return job()["state"] == "succeeded"; })) << job().dump(2);
}

// Causeway end to end on Slurm: submit through the API, see the job in
// squeue, run it to completion, classify a failure, cancel.
TEST_F(SlurmTest, CausewayRunsJobsOnSlurm) {
  TempDir dir("slurm-serve");
  std::string estate = dir.path() + "/estate.yaml";
  std::ofstream(estate) << cluster_->Estate();
  auto server = ServerProcess::Start(dir.path(), {"--estate", estate, "--tick-ms", "50"});
  auto client = server->Client();
  auto submit = [&](const std::string& name, const std::string& run) {
    json spec = {{"spec", "name: " + name + "\nresources: {accelerators: H200:2, cpus: 2+, memory: 1GB}\n"
                              "envs: {GREETING: hello}\nrun: |\n  " +
                              run + "\n"}};
    auto r = client.Send("POST", "/v1/jobs", spec.dump(), Auth(server->admin_token()));
    EXPECT_EQ(r->status, 201) << r->body;
    return json::parse(r->body)["job"]["id"].get<std::string>();
  };
  auto job = [&](const std::string& id) {
    return json::parse(client.Send("GET", "/v1/jobs/" + id, "", Auth(server->admin_token()))->body);
  };

  // Run on each node as an srun task, with SkyPilot's variables and the
  // CPUs and memory the job asked for reserved on the node.
  std::string ok = submit("ok", "echo $GREETING from $CAUSEWAY_JOB_ID on $CAUSEWAY_CLUSTER with $NCCL_IB_HCA; "
                                "echo rank=$SKYPILOT_NODE_RANK of $SKYPILOT_NUM_NODES at $SKYPILOT_NODE_IPS "
                                "gpus=$SKYPILOT_NUM_GPUS_PER_NODE step=$SLURM_STEP_ID cpus=$SLURM_CPUS_ON_NODE mem=$SLURM_MEM_PER_NODE; sleep 2");
  ASSERT_TRUE(Eventually([&] { return cluster_->Run("squeue -h -o %j").find("cw-" + ok + "-1") != std::string::npos; }))
      << "the job never showed up in squeue";
  ASSERT_TRUE(Eventually([&] { return job(ok)["state"] == "succeeded"; })) << job(ok).dump(2);
  json done = job(ok);
  EXPECT_EQ(done["cluster"], "lab-slurm");
  EXPECT_EQ(done["attempts"][0]["backend_id"].get<std::string>().rfind("slurm:lab-slurm:", 0), 0u);
  std::ifstream log(cluster_->OutputDir() + "/" + ok + "-1.log");
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line, "hello from " + ok + " on lab-slurm with mlx5");
  // The same output through `causeway logs`.
  std::map<std::string, std::string> env = {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", server->admin_token()}};
  auto logs = RunCli({"logs", ok}, env);
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "hello from " + ok + " on lab-slurm with mlx5\nrank=0 of 1 at localhost gpus=2 step=0 cpus=2 mem=1024\n");
  auto none = RunCli({"logs", ok, "--attempt", "9"}, env);
  EXPECT_EQ(none.exit_code, 4);

  // A CPU-only job: Slurm is asked for its CPUs and no GPU.
  json cpu_spec = {{"spec", "name: cpu\nresources: {cpus: 3}\nrun: echo gpus=[$SLURM_JOB_GPUS] "
                            "n=$SKYPILOT_NUM_GPUS_PER_NODE cpus=$SLURM_CPUS_ON_NODE\n"}};
  auto cpu_made = client.Send("POST", "/v1/jobs", cpu_spec.dump(), Auth(server->admin_token()));
  ASSERT_EQ(cpu_made->status, 201) << cpu_made->body;
  std::string cpu = json::parse(cpu_made->body)["job"]["id"];
  ASSERT_TRUE(Eventually([&] { return job(cpu)["state"] == "succeeded"; })) << job(cpu).dump(2);
  EXPECT_EQ(job(cpu)["attempts"][0]["pool"], "cpu");
  EXPECT_EQ(RunCli({"logs", cpu}, env).out, "gpus=[] n=0 cpus=3\n");

  std::string bad = submit("bad", "exit 7");
  ASSERT_TRUE(Eventually([&] { return job(bad)["state"] == "failed"; }));
  json failed = job(bad);
  EXPECT_EQ(failed["attempts"].size(), 1u) << "a user error is not retried";
  EXPECT_EQ(failed["attempts"][0]["exit_code"], 7);
  EXPECT_EQ(failed["attempts"][0]["failure_class"], "user_error");
  EXPECT_NE(failed["reason"].get<std::string>().find("exit code 7"), std::string::npos) << failed.dump(2);
  EXPECT_NE(failed["reason"].get<std::string>().find("next action: the researcher"), std::string::npos);

  // The log says the disk is full: a platform problem, not the researcher's.
  std::string full = submit("full", "echo 'OSError: [Errno 28] No space left on device' >&2; exit 1");
  ASSERT_TRUE(Eventually([&] { return job(full)["state"] == "failed"; }));
  EXPECT_EQ(job(full)["attempts"][0]["failure_class"], "storage_full");
  EXPECT_NE(job(full)["reason"].get<std::string>().find("next action: the platform team"), std::string::npos);

  std::string slow = submit("slow", "echo started; sleep 120");
  ASSERT_TRUE(Eventually([&] { return job(slow)["state"] == "running"; }));
  ASSERT_TRUE(Eventually([&] { return RunCli({"logs", slow}, env).out == "started\n"; }));
  auto cancel = client.Send("POST", "/v1/jobs/" + slow + "/cancel", "{}", Auth(server->admin_token()));
  ASSERT_EQ(cancel->status, 200);
  ASSERT_TRUE(Eventually([&] { return cluster_->Run("squeue -h -o %j").find("cw-" + slow) == std::string::npos; }))
      << "cancelled in Causeway but still in Slurm";

  // A job Slurm holds in its own queue is admitted, not running, until
  // Slurm starts it; then it is running, from Slurm's start time.
  auto whole = [&](const std::string& name) {
    json spec = {{"spec", "name: " + name + "\nresources: {accelerators: H200:8}\nrun: sleep 120\n"}};
    auto r = client.Send("POST", "/v1/jobs", spec.dump(), Auth(server->admin_token()));
    EXPECT_EQ(r->status, 201) << r->body;
    return json::parse(r->body)["job"]["id"].get<std::string>();
  };
  std::string first = whole("first");
  ASSERT_TRUE(Eventually([&] { return job(first)["state"] == "running"; })) << job(first).dump(2);
  std::string second = whole("second");
  ASSERT_TRUE(Eventually([&] { return cluster_->Run("squeue -h -t PD -o %j").find("cw-" + second) != std::string::npos; }));
  // Slurm has it before Causeway has recorded handing it over.
  EXPECT_TRUE(Eventually([&] { return job(second)["state"] == "admitted"; })) << job(second).dump(2);
  auto explain = json::parse(client.Send("GET", "/v1/jobs/" + second + "/explain", "", Auth(server->admin_token()))->body);
  EXPECT_NE(explain["scheduler"].value("waiting", "").find("waiting in its own queue"), std::string::npos)
      << explain.dump(2);
  std::vector<std::string> events;
  json first_job = job(first);  // kept: the loop borrows from it
  for (const auto& e : first_job["events"]) events.push_back(e["type"]);
  // Slurm's id is recorded as Slurm accepts the job, before it runs.
  EXPECT_EQ(events, (std::vector<std::string>{"submitted", "dispatched", "handed_over", "started"}));
  for (const auto& id : {first, second}) {
    ASSERT_EQ(client.Send("POST", "/v1/jobs/" + id + "/cancel", "{}", Auth(server->admin_token()))->status, 200);
  }
  // Gone from Slurm before the server stops: the next test shares the cluster.
  ASSERT_TRUE(Eventually([&] {
    std::string queue = cluster_->Run("squeue -h -o %j");
    return queue.find("cw-" + first) == std::string::npos && queue.find("cw-" + second) == std::string::npos;
  }));
}

// Buckets in file_mounts on real Slurm, from a real S3 server (moto) with
// the nodes' rclone config: copied before the job runs (COPY); mounted
// (MOUNT) where the machine has FUSE, and refused with the reason where
// the cluster declares none; written through a MOUNT_CACHED mount and in
// the bucket when the job ends.
TEST_F(SlurmTest, BucketsInFileMountsAreDeliveredOnSlurm) {
  if (std::string why = S3PeersMissing(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir("slurm-buckets");
  S3Peer s3;
  ASSERT_TRUE(s3.ready()) << "moto did not start";
  std::string conf = dir.path() + "/rclone.conf", node_conf = dir.path() + "/node-rclone.conf";
  std::ofstream(conf) << RcloneRemote("store", s3);
  std::ofstream(node_conf) << RcloneRemote("store", s3);
  std::filesystem::create_directories(dir.path() + "/src");
  std::ofstream(dir.path() + "/src/hello.txt") << "hello from the bucket\n";
  Rclone(conf, {"mkdir", "store:data"});
  Rclone(conf, {"copy", dir.path() + "/src", "store:data/set"});
  const std::string no_fuse = FuseMissing(dir.path() + "/probe");
  const bool fuse = no_fuse.empty();
  std::string estate = cluster_->Estate();
  if (fuse) estate.insert(estate.find("    inject_envs:"), "    fuse: true\n");
  estate += "data:\n  rclone_config: " + conf + "\n  node_rclone_config: " + node_conf +
            "\n  locations:\n    - {name: lab-store, provider: lab, region: r1, remote: \"store:data\", url: \"s3://data\"}\n";
  std::ofstream(dir.path() + "/estate.yaml") << estate;
  auto server = ServerProcess::Start(dir.path() + "/db", {"--estate", dir.path() + "/estate.yaml", "--tick-ms", "50"});
  auto client = server->Client();
  auto submit = [&](const std::string& body) {
    return client.Send("POST", "/v1/jobs", json{{"spec", body}}.dump(), Auth(server->admin_token()));
  };
  auto job = [&](const std::string& id) {
    return json::parse(client.Send("GET", "/v1/jobs/" + id, "", Auth(server->admin_token()))->body);
  };
  auto logs = [&](const std::string& id) {
    return client.Send("GET", "/v1/jobs/" + id + "/logs", "", Auth(server->admin_token()))->body;
  };
  auto run = [&](const std::string& body) {
    auto made = submit(body);
    EXPECT_EQ(made->status, 201) << made->body;
    std::string id = json::parse(made->body)["job"]["id"];
    EXPECT_TRUE(Eventually([&] {
      std::string state = job(id)["state"];
      return state == "succeeded" || state == "failed";
    }, std::chrono::seconds(120))) << job(id).dump(2);
    EXPECT_EQ(job(id)["state"], "succeeded") << logs(id);
    return id;
  };

  std::string copied = dir.path() + "/mnt/copied";
  std::string copy = run("name: copy\nresources: {cpus: 1}\nfile_mounts:\n  " + copied + ": s3://data/set\n"
                         "run: cat " + copied + "/hello.txt\n");
  EXPECT_NE(logs(copy).find("hello from the bucket\n"), std::string::npos) << logs(copy);

  std::string mounted = dir.path() + "/mnt/mounted", cached = dir.path() + "/mnt/cached";
  std::string mount_spec = "name: mount\nresources: {cpus: 1}\nfile_mounts:\n  " + mounted +
                           ": {source: s3://data/set}\n  " + cached + ": {source: s3://data/out, mode: MOUNT_CACHED}\n"
                           "run: cat " + mounted + "/hello.txt && echo result > " + cached + "/result.txt\n";
  if (!fuse) {
    auto refused = submit(mount_spec);
    EXPECT_EQ(refused->status, 400) << refused->body;
    EXPECT_NE(refused->body.find("needs FUSE"), std::string::npos) << refused->body;
    GTEST_SKIP() << "COPY checked; MOUNT needs FUSE: " << no_fuse;
  }
  std::string mount = run(mount_spec);
  EXPECT_NE(logs(mount).find("hello from the bucket\n"), std::string::npos) << logs(mount);
  // Written just before the job ended: the attempt waited for rclone to
  // write it back before unmounting.
  EXPECT_EQ(Rclone(conf, {"cat", "store:data/out/result.txt"}).out, "result\n");
}

// A federated identity on Slurm: the attempt's token is a file only the
// job's user may read (0600, in a 0700 folder), with the variables AWS's SDK
// reads; it is refreshed while the job runs (from the node, through the
// attempt's credential) and gone with the attempt, and in no log.
TEST_F(SlurmTest, AFederatedJobsTokenIsAFileOnlyItsUserReadsRefreshedAndRemoved) {
  TempDir dir("slurm-federated");
  std::ofstream(dir.path() + "/estate.yaml")
      << cluster_->Estate() << "teams: [{name: nlp}]\n"
      << "identity:\n  workload: {audiences: [sts.amazonaws.com], lifetime: 16s}\n"
      << "  federations:\n    - {name: aws-training, kind: aws, role_arn: \"arn:aws:iam::123456789012:role/training\", "
         "teams: [nlp], default: true}\n";
  auto server = ServerProcess::Start(dir.path() + "/db", {"--estate", dir.path() + "/estate.yaml", "--tick-ms", "50"});
  auto client = server->Client();
  // It reports the file's mode and owner, its folder's mode, its own user,
  // and waits (up to 30 s) until the file changes: the refresh, at half
  // the token's 16 s.
  const std::string run =
      "f=$AWS_WEB_IDENTITY_TOKEN_FILE; before=$(sha256sum < \"$f\")\n"
      "  echo \"file=$(stat -c '%a %U' \"$f\") folder=$(stat -c '%a' \"${f%/*}\") user=$(id -un) role=$AWS_ROLE_ARN\"\n"
      "  for i in $(seq 300); do [ \"$(sha256sum < \"$f\")\" != \"$before\" ] && break; sleep 0.1; done\n"
      "  [ \"$(sha256sum < \"$f\")\" != \"$before\" ] && echo refreshed; echo \"path=$f\"\n";
  auto made = client.Send("POST", "/v1/jobs",
                          json{{"spec", "name: federated\nresources: {cpus: 1}\nlabels: {team: nlp}\nrun: |\n  " + run}}.dump(),
                          Auth(server->admin_token()));
  ASSERT_EQ(made->status, 201) << made->body;
  const std::string id = json::parse(made->body)["job"]["id"];
  auto job = [&] { return json::parse(client.Send("GET", "/v1/jobs/" + id, "", Auth(server->admin_token()))->body); };
  ASSERT_TRUE(Eventually([&] { return job()["state"] == "succeeded"; }, std::chrono::seconds(90))) << job().dump(2);
  const std::string log = client.Send("GET", "/v1/jobs/" + id + "/logs", "", Auth(server->admin_token()))->body;
  std::string user = cluster_->Run("id -un");
  user.erase(user.find_last_not_of('\n') + 1);
  EXPECT_NE(log.find("file=600 " + user + " folder=700 user=" + user + " role=arn:aws:iam::123456789012:role/training"),
            std::string::npos) << log;
  EXPECT_NE(log.find("refreshed"), std::string::npos) << "refreshed while it ran: " << log;
  const size_t at = log.find("path=");
  ASSERT_NE(at, std::string::npos) << log;
  const std::string path = log.substr(at + 5, log.find('\n', at) - at - 5);
  EXPECT_FALSE(std::filesystem::exists(path)) << "the token file outlived its attempt";
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(path).parent_path()));
  EXPECT_EQ(log.find("eyJ"), std::string::npos) << "a token in the job's log";
}

// A job killed in Slurm behind Causeway's back is retried; Causeway
// re-adopts a running Slurm job after SIGKILL.
TEST_F(SlurmTest, ExternalKillsAreRetriedAndRestartsLoseNothing) {
  TempDir dir("slurm-recover");
  std::string estate = dir.path() + "/estate.yaml";
  std::ofstream(estate) << cluster_->Estate();
  std::vector<std::string> args = {"--estate", estate, "--tick-ms", "50"};
  auto server = ServerProcess::Start(dir.path(), args);
  auto client = server->Client();
  json spec = {{"spec", "name: long\nresources: {accelerators: H200:1}\nrun: sleep 4\n"}};
  auto r = client.Send("POST", "/v1/jobs", spec.dump(), Auth(server->admin_token()));
  std::string id = json::parse(r->body)["job"]["id"];
  auto job = [&](ServerProcess& s) {
    auto c = s.Client();
    return json::parse(c.Send("GET", "/v1/jobs/" + id, "", Auth(s.admin_token()))->body);
  };
  ASSERT_TRUE(Eventually([&] { return job(*server)["state"] == "running"; }));
  cluster_->Run("scancel --name=cw-" + id + "-1");
  // Attempt 2 running in Slurm (started there, not only recorded: killed
  // before Slurm had it, it would rightly be found lost and placed again).
  ASSERT_TRUE(Eventually([&] {
    json j = job(*server);
    return j["attempts"].size() == 2u && j["state"] == "running";
  })) << job(*server).dump(2);
  EXPECT_EQ(job(*server)["attempts"][0]["state"], "preempted");

  server->Stop(SIGKILL);  // while attempt 2 runs in Slurm
  auto restarted = ServerProcess::Start(dir.path(), args);
  ASSERT_TRUE(Eventually([&] { return job(*restarted)["state"] == "succeeded"; })) << job(*restarted).dump(2);
  json last = job(*restarted);
  EXPECT_EQ(last["attempts"].size(), 2u) << "re-adopted, not dispatched again: " << last.dump(2);
}

// While slurmrestd is away nothing is lost: running jobs keep their state,
// new work waits, and everything reconciles when it returns.
TEST_F(SlurmTest, NothingIsLostWhileSlurmrestdIsAway) {
  TempDir dir("slurm-outage");
  std::string estate = dir.path() + "/estate.yaml";
  std::ofstream(estate) << cluster_->Estate();
  auto server = ServerProcess::Start(dir.path(), {"--estate", estate, "--tick-ms", "50"});
  auto client = server->Client();
  auto submit = [&](const std::string& run) {
    json spec = {{"spec", "resources: {accelerators: H200:1}\nrun: " + run + "\n"}};
    auto r = client.Send("POST", "/v1/jobs", spec.dump(), Auth(server->admin_token()));
    EXPECT_EQ(r->status, 201) << r->body;
    return json::parse(r->body)["job"]["id"].get<std::string>();
  };
  auto state = [&](const std::string& id) {
    return json::parse(client.Send("GET", "/v1/jobs/" + id, "", Auth(server->admin_token()))->body)["state"];
  };
  std::string restd = std::string(CAUSEWAY_SOURCE_DIR) + "/scripts/slurm/restd.sh " + cluster_->base();

  std::string first = submit("sleep 2");
  ASSERT_TRUE(Eventually([&] { return state(first) == "running"; }));
  ASSERT_EQ(std::system((restd + " stop").c_str()), 0);
  std::string second = submit("true");
  // The first job finishes in Slurm meanwhile; Causeway cannot see it yet.
  ASSERT_TRUE(Eventually([&] { return cluster_->Run("squeue -h -o %j").find("cw-" + first) == std::string::npos; }));
  EXPECT_EQ(state(first), "running");
  EXPECT_EQ(state(second), "pending");
  auto explain = json::parse(client.Send("GET", "/v1/jobs/" + second + "/explain", "", Auth(server->admin_token()))->body);
  EXPECT_NE(explain.dump().find("is down"), std::string::npos) << explain.dump(2);

  ASSERT_EQ(std::system((restd + " start").c_str()), 0);
  ASSERT_TRUE(Eventually([&] { return state(first) == "succeeded" && state(second) == "succeeded"; }));
}

// A job registers a checkpoint from inside Slurm with its own credential,
// is killed, and its next attempt receives CAUSEWAY_RESUME_FROM; the attempt
// record says so. The first attempt's credential dies with it.
TEST_F(SlurmTest, KilledJobsResumeFromTheirLatestCheckpoint) {
  TempDir dir("slurm-checkpoint");
  std::string estate = dir.path() + "/estate.yaml";
  std::ofstream(estate) << cluster_->Estate();
  auto server = ServerProcess::Start(dir.path(), {"--estate", estate, "--tick-ms", "50"});
  auto client = server->Client();
  std::string script =
      "printf %s \"$CAUSEWAY_TOKEN\" > credential-$CAUSEWAY_ATTEMPT\n"
      "if [ -z \"$CAUSEWAY_RESUME_FROM\" ]; then\n"
      "  " + std::string(CAUSEWAY_BINARY) + " checkpoint register --job $CAUSEWAY_JOB_ID --path /ckpt/step-100 --step 100\n"
      "  sleep 120\n"
      "else\n"
      "  echo resumed from $CAUSEWAY_RESUME_FROM\n"
      "fi";
  json spec = {{"spec", {{"name", "resumable"},
                         {"resources", {{"accelerators", "H200:1"}}},
                         {"checkpoint", {{"path", "/ckpt"}}},
                         {"run", script}}}};
  auto r = client.Send("POST", "/v1/jobs", spec.dump(), Auth(server->admin_token()));
  ASSERT_EQ(r->status, 201) << r->body;
  std::string id = json::parse(r->body)["job"]["id"];
  auto get = [&](const std::string& path) {
    return json::parse(client.Send("GET", path, "", Auth(server->admin_token()))->body);
  };
  ASSERT_TRUE(Eventually([&] { return get("/v1/jobs/" + id + "/checkpoints")["checkpoints"].size() == 1u; }))
      << get("/v1/jobs/" + id).dump(2);
  EXPECT_EQ(get("/v1/jobs/" + id + "/checkpoints")["checkpoints"][0]["step"], 100);
  std::ifstream credential_file(cluster_->OutputDir() + "/credential-1");
  std::string credential((std::istreambuf_iterator<char>(credential_file)), {});
  ASSERT_EQ(credential.rfind("cw_", 0), 0u) << "the attempt got no credential of its own";
  EXPECT_EQ(client.Send("GET", "/v1/jobs/" + id, "", Auth(credential))->status, 200);
  EXPECT_EQ(client.Send("GET", "/v1/jobs", "", Auth(credential))->status, 403) << "it may see its own job only";
  EXPECT_EQ(client.Send("POST", "/v1/jobs", "{}", Auth(credential))->status, 403);
  cluster_->Run("scancel --name=cw-" + id + "-1");
  ASSERT_TRUE(Eventually([&] { return get("/v1/jobs/" + id)["state"] == "succeeded"; })) << get("/v1/jobs/" + id).dump(2);
  json job = get("/v1/jobs/" + id);
  ASSERT_EQ(job["attempts"].size(), 2u);
  EXPECT_EQ(job["attempts"][0]["resumed_from"], "");
  EXPECT_EQ(job["attempts"][1]["resumed_from"], "/ckpt/step-100");
  std::ifstream log(cluster_->OutputDir() + "/" + id + "-2.log");
  std::string line;
  std::getline(log, line);
  EXPECT_EQ(line, "resumed from /ckpt/step-100");
  auto audit = get("/v1/audit?action=checkpoint.register");
  ASSERT_EQ(audit["events"].size(), 1u);
  EXPECT_EQ(audit["events"][0]["details"]["path"], "/ckpt/step-100");
  EXPECT_EQ(audit["events"][0]["actor"], "tokj_" + id + "_1") << "registered with the attempt's own credential";
  EXPECT_EQ(audit.dump().find(credential), std::string::npos) << "a secret reached the audit trail";
  EXPECT_EQ(client.Send("GET", "/v1/jobs/" + id, "", Auth(credential))->status, 401)
      << "the credential outlived its attempt";
}

}  // namespace
}  // namespace causeway::testing

namespace causeway::testing {
namespace {

// A cluster whose controller forgets finished jobs after a few seconds
// (MinJobAge=2), as every controller does after MinJobAge.
class ForgetfulSlurmTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cluster_ = SlurmCluster::Start(skip_reason_, "SLURM_MIN_JOB_AGE=2").release(); }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }
  void SetUp() override {
    if (!cluster_) GTEST_SKIP() << skip_reason_;
  }
  static SlurmCluster* cluster_;
  static std::string skip_reason_;
};
SlurmCluster* ForgetfulSlurmTest::cluster_ = nullptr;
std::string ForgetfulSlurmTest::skip_reason_;

// Causeway is away while a job ends and the controller forgets it: on its
// return it reads the end from accounting instead of calling the job lost.
TEST_F(ForgetfulSlurmTest, JobsTheControllerForgotAreReadFromAccounting) {
  TempDir dir("slurm-forgot");
  EstateServer s(dir, cluster_->Estate());
  std::string id = s.Submit("resources: {accelerators: H200:2}\nrun: sleep 2\n");
  ASSERT_TRUE(Eventually([&] { return cluster_->Run("squeue -h -t R -o %j").find("cw-" + id + "-1") != std::string::npos; }));
  s.process().Stop(SIGKILL);
  // Finished, then forgotten: squeue --json lists every job it still holds.
  ASSERT_TRUE(Eventually([&] { return cluster_->Run("squeue --json").find("cw-" + id + "-1") == std::string::npos; },
                         std::chrono::seconds(90)));
  std::string sacct = cluster_->Run("sacct -X -n -P -o State --name=cw-" + id + "-1");
  EXPECT_EQ(sacct, "COMPLETED\n");

  s.Start();
  auto job = [&] { return s.Get("/v1/jobs/" + id); };
  ASSERT_TRUE(Eventually([&] { return job()["state"] == "succeeded"; })) << job().dump(2);
  json attempts = job()["attempts"];
  ASSERT_EQ(attempts.size(), 1u) << "read from accounting, not retried as lost";
  // Two GPUs for about two seconds, as Slurm ran it, not the time Causeway
  // was away.
  EXPECT_GE(attempts[0]["gpu_seconds"].get<int64_t>(), 2);
  EXPECT_LE(attempts[0]["gpu_seconds"].get<int64_t>(), 8);
}


// Identity on a real Slurm cluster with accounting: joining a team's group
// makes the person's Slurm user in the team's account; deactivation revokes
// their tokens, stops their running job and removes the Slurm user, each
// step in the audit trail, and their credentials show nothing left.
TEST_F(SlurmTest, PeopleGetSlurmUsersWhileTheyMayWorkAndLoseEverythingWhenDeprovisioned) {
  TempDir dir("people");
  std::string access = "url: \"" + cluster_->Get("CAUSEWAY_SLURM_URL") + "\", user: root, token_file: " +
                       cluster_->Get("CAUSEWAY_SLURM_TOKEN_FILE") + ", conf: " + cluster_->Get("SLURM_CONF");
  std::ofstream(dir.path() + "/estate.yaml")
      << cluster_->Estate("lab", "eu", access) << "teams: [{name: nlp}]\n"
      << "access:\n  - {group: nlp-researchers, role: researcher, team: nlp}\n"
      << "identity:\n  deprovision: {queued: cancel, running: stop}\n";
  auto server = ServerProcess::Start(dir.path() + "/data", {"--estate", dir.path() + "/estate.yaml", "--tick-ms", "50"});
  auto client = server->Client();
  auto call = [&](const std::string& token, const std::string& method, const std::string& path, const json& body = {}) {
    auto r = client.Send(method, path, body.is_null() ? "" : body.dump(), Auth(token));
    return std::make_pair(r->status, json::parse(r->body, nullptr, false));
  };
  const std::string admin = server->admin_token();
  std::string scim = call(admin, "POST", "/v1/tokens", {{"name", "idp"}, {"scopes", {"scim:provision"}}}).second["secret"];
  auto slurm_accounts = [&](const std::string& user) {
    return cluster_->Run("sacctmgr -n -P show assoc where user=" + user + " format=Account");
  };

  auto ada = call(scim, "POST", "/scim/v2/Users",
                  {{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:User"}}, {"userName", "ada@corp.example"}});
  auto bob = call(scim, "POST", "/scim/v2/Users",
                  {{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:User"}}, {"userName", "bob@corp.example"}});
  ASSERT_EQ(ada.first, 201) << ada.second;
  ASSERT_EQ(bob.first, 201) << bob.second;
  std::string ada_id = ada.second["id"], bob_id = bob.second["id"];
  auto group = call(scim, "POST", "/scim/v2/Groups",
                    {{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:Group"}},
                     {"displayName", "nlp-researchers"},
                     {"members", {{{"value", ada_id}}, {{"value", bob_id}}}}});
  ASSERT_EQ(group.first, 201) << group.second;
  EXPECT_EQ(slurm_accounts("ada"), "nlp\n");
  EXPECT_EQ(slurm_accounts("bob"), "nlp\n");

  // Bob leaves the group: his Slurm user goes, he stays active.
  auto left = call(scim, "PATCH", "/scim/v2/Groups/" + group.second["id"].get<std::string>(),
                   {{"schemas", {"urn:ietf:params:scim:api:messages:2.0:PatchOp"}},
                    {"Operations", {{{"op", "remove"}, {"path", "members[value eq \"" + bob_id + "\"]"}}}}});
  ASSERT_EQ(left.first, 204) << left.second;
  EXPECT_EQ(slurm_accounts("bob"), "");

  // Ada works through a token that acts for her: her roles, narrowed to it.
  std::string ada_token = call(admin, "POST", "/v1/tokens",
                               {{"name", "ada-cli"}, {"scopes", {"jobs:read", "jobs:write"}}, {"user", "ada@corp.example"}})
                              .second["secret"];
  auto me = call(ada_token, "GET", "/v1/whoami");
  ASSERT_EQ(me.first, 200) << me.second;
  EXPECT_EQ(me.second["grants"][0]["role"], "researcher");
  auto job = call(ada_token, "POST", "/v1/jobs",
                  {{"spec", "name: long\nresources: {accelerators: H200:1}\nlabels: {team: nlp}\nrun: sleep 300\n"}});
  ASSERT_EQ(job.first, 201) << job.second;
  std::string job_id = job.second["job"]["id"];
  EXPECT_EQ(job.second["job"]["owner"], "ada@corp.example");
  ASSERT_TRUE(Eventually([&] { return call(admin, "GET", "/v1/jobs/" + job_id).second["state"] == "running"; }));

  // Deactivated by the IdP: everything is carried through before it answers.
  auto off = call(scim, "PATCH", "/scim/v2/Users/" + ada_id,
                  {{"schemas", {"urn:ietf:params:scim:api:messages:2.0:PatchOp"}},
                   {"Operations", {{{"op", "Replace"}, {"path", "active"}, {"value", "False"}}}}});
  ASSERT_EQ(off.first, 200) << off.second;
  EXPECT_EQ(call(ada_token, "GET", "/v1/whoami").first, 401);
  EXPECT_EQ(call(admin, "GET", "/v1/jobs/" + job_id).second["state"], "cancelled");
  EXPECT_TRUE(Eventually([&] { return cluster_->Run("squeue -h -o %j").find("cw-" + job_id) == std::string::npos; }));
  EXPECT_EQ(slurm_accounts("ada"), "");

  auto creds = call(admin, "GET", "/v1/people/ada@corp.example/credentials");
  ASSERT_EQ(creds.first, 200) << creds.second;
  EXPECT_FALSE(creds.second["retains_access"]) << creds.second.dump(2);
  EXPECT_EQ(creds.second["api_tokens"][0]["state"], "revoked");
  EXPECT_EQ(creds.second["provider_accounts"][0]["state"], "absent");
  EXPECT_FALSE(creds.second["directory"]["active"]);

  std::set<std::string> actions;
  for (const std::string& resource : std::vector<std::string>{"user/ada@corp.example", "job/" + job_id, "cluster/lab-slurm"}) {
    auto listed = call(admin, "GET", "/v1/audit?resource=" + resource);
    ASSERT_EQ(listed.first, 200) << listed.second;
    for (const json& e : listed.second["events"]) actions.insert(e["action"]);
  }
  for (const char* want : {"identity.deprovision", "job.cancel", "provider.account.create", "provider.account.remove"}) {
    EXPECT_TRUE(actions.count(want)) << want << " in " << json(actions).dump();
  }
}


// `causeway acceptance identity` against a live server on real Slurm: the
// throwaway user's Slurm user is made with the role and removed with them.
TEST_F(SlurmTest, TheIdentityAcceptanceTestPassesOnRealSlurm) {
  TempDir dir("acceptance");
  std::string access = "url: \"" + cluster_->Get("CAUSEWAY_SLURM_URL") + "\", user: root, token_file: " +
                       cluster_->Get("CAUSEWAY_SLURM_TOKEN_FILE") + ", conf: " + cluster_->Get("SLURM_CONF");
  std::ofstream(dir.path() + "/estate.yaml") << cluster_->Estate("lab", "eu", access) << "teams: [{name: nlp}]\n";
  auto server = ServerProcess::Start(dir.path() + "/data", {"--estate", dir.path() + "/estate.yaml", "--tick-ms", "50"});
  auto run = RunCli({"acceptance", "identity", "--team", "nlp", "--out", dir.path(), "--json"},
                    {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", server->admin_token()}});
  json report = json::parse(run.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 0) << report.dump(2);
  EXPECT_TRUE(report["passed"]) << report.dump(2);
  ASSERT_EQ(report["steps"].size(), 11u);
  for (const json& step : report["steps"]) EXPECT_TRUE(step["ok"]) << step.dump();
  // The Slurm user existed while the role did, and is gone.
  const json& follows = report["steps"][4];
  EXPECT_NE(follows["detail"].get<std::string>().find("\"present\""), std::string::npos) << follows.dump();
  EXPECT_FALSE(follows["audit_seqs"].empty());
  std::string posix = report["user"].get<std::string>().substr(0, report["user"].get<std::string>().find('@'));
  EXPECT_EQ(cluster_->Run("sacctmgr -n -P show assoc where user=" + posix + " format=Account"), "");
  EXPECT_FALSE(report["steps"][10]["audit_seqs"].empty()) << "the Slurm user's removal is in the audit trail";
  EXPECT_EQ(report["credentials"]["provider_accounts"][0]["state"], "absent");
}

// The recovery and residency acceptance tests on real Slurm: three clusters
// of three providers on the test's slurmctld, two in the EU and one in the
// US. Recovery: the job's provider is taken down, its Slurm job is stopped,
// and it resumes from its checkpoint on another provider's cluster, a real
// Slurm job again. Residency: bound to the EU, it never lands on the US
// cluster, and a checkpoint outside the EU is refused.
TEST_F(SlurmTest, TheRecoveryAndResidencyAcceptanceTestsPassOnRealSlurm) {
  TempDir dir("acceptance-slurm");
  std::string access = "url: \"" + cluster_->Get("CAUSEWAY_SLURM_URL") + "\", user: root, token_file: " +
                       cluster_->Get("CAUSEWAY_SLURM_TOKEN_FILE");
  std::string estate = "providers:\n";
  std::string clusters = "clusters:\n", prices = "prices:\n";
  for (auto [name, zone] : std::vector<std::pair<std::string, std::string>>{{"lab-a", "eu"}, {"lab-b", "eu"}, {"lab-c", "us"}}) {
    estate += "  - {name: " + name + ", kind: slurm, regions: [{name: r1, zone: " + zone + "}]}\n";
    clusters += "  - name: " + name + "-slurm\n    provider: " + name + "\n    region: r1\n    node_pools:\n"
                "      - {name: h200, gpu_type: H200, gpus_per_node: 8, nodes: 1, cpus: 16, memory_gb: 62}\n"
                "    slurm: {" + access + ", partition: gpu, gres_type: h200, output_dir: " + cluster_->OutputDir() + "}\n";
    prices += "  - {cluster: " + name + "-slurm, gpu_type: H200, on_demand: \"3.00\"}\n";
  }
  std::ofstream(dir.path() + "/estate.yaml")
      << estate << clusters << prices << "teams: [{name: nlp}]\nreadiness:\n  recovery_objective: 2m\n"
      << "  owners: {restore-rehearsal: {group: platform}}\n";
  auto server = ServerProcess::Start(dir.path() + "/data", {"--estate", dir.path() + "/estate.yaml", "--tick-ms", "50"});
  std::map<std::string, std::string> env = {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", server->admin_token()}};
  auto get = [&](const std::string& path) {
    auto r = server->Client().Send("GET", path, "", Auth(server->admin_token()));
    return json::parse(r.ok() ? r->body : "{}", nullptr, false);
  };

  auto recovery = RunCli({"--json", "acceptance", "recovery", "--team", "nlp", "--out", dir.path()}, env);
  json r = json::parse(recovery.out, nullptr, false);
  ASSERT_TRUE(r.is_object()) << recovery.out << recovery.err;
  EXPECT_EQ(recovery.exit_code, 0) << r.dump(2);
  for (const json& step : r["steps"]) EXPECT_EQ(step["result"], "pass") << step.dump();
  std::string job = r["job"];
  json attempts = get("/v1/jobs/" + job)["attempts"];
  ASSERT_GE(attempts.size(), 2u) << attempts.dump(2);
  EXPECT_NE(attempts[0]["cluster"], attempts[1]["cluster"]);
  EXPECT_FALSE(attempts[1]["backend_id"].get<std::string>().empty()) << "a real Slurm job id";
  // Cleaned up: no Slurm job of it is left.
  EXPECT_TRUE(Eventually([&] { return cluster_->Run("squeue -h -o %j").find("cw-" + job) == std::string::npos; }));

  auto residency = RunCli({"--json", "acceptance", "residency", "--team", "nlp", "--zone", "eu", "--hold", "3",
                           "--out", dir.path()},
                          env);
  json z = json::parse(residency.out, nullptr, false);
  ASSERT_TRUE(z.is_object()) << residency.out << residency.err;
  EXPECT_EQ(residency.exit_code, 0) << z.dump(2);
  for (const json& step : z["steps"]) EXPECT_EQ(step["result"], "pass") << step.dump();
  json held = get("/v1/jobs/" + z["job"].get<std::string>());
  for (const json& a : held["attempts"]) {
    EXPECT_NE(a["cluster"], "lab-c-slurm") << "resumed outside its zone";
  }
  EXPECT_TRUE(Eventually([&] {
    return cluster_->Run("squeue -h -o %j").find("cw-" + z["job"].get<std::string>()) == std::string::npos;
  }));
  json runs = get("/v1/acceptance/runs");
  EXPECT_TRUE(runs["runs"][1]["passed"]) << runs.dump(2);
  EXPECT_TRUE(runs["runs"][2]["passed"]) << runs.dump(2);
}

}  // namespace
}  // namespace causeway::testing
