// Datasets against real S3 servers: two moto servers on loopback stand for
// two regions, the real rclone moves objects between them, and the real
// `causeway` server and CLI drive it. The server is started with
// AWS_CA_BUNDLE pointing at a file that does not exist (rclone fails with
// LoadCustomCABundleError when it inherits that), so every step also shows
// that Causeway gives rclone an environment of its own.
#include <dirent.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <random>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "causeway/crypto.h"
#include "causeway/money.h"
#include "s3_peer.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

std::string RandomBytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(gen() & 0xff);
  return s;
}

// The pids of rclone processes copying with `config`.
std::vector<pid_t> RcloneCopies(const std::string& config) {
  std::vector<pid_t> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    for (char& c : cmd) c = c == '\0' ? ' ' : c;
    if (cmd.find("rclone") != std::string::npos && cmd.find(config) != std::string::npos &&
        cmd.find(" copy ") != std::string::npos) {
      out.push_back(std::stoi(name));
    }
  }
  return out;
}

class DatasetsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = S3PeersMissing(); !why.empty()) GTEST_SKIP() << why;
    eu_ = std::make_unique<S3Peer>();
    us_ = std::make_unique<S3Peer>();
    ASSERT_TRUE(eu_->ready() && us_->ready()) << "moto did not start";
    conf_ = dir_.path() + "/rclone.conf";
    std::ofstream(conf_) << RcloneRemote("eu", *eu_) << RcloneRemote("us", *us_);
    Rclone(conf_, {"mkdir", "eu:eu-datasets"});
    Rclone(conf_, {"mkdir", "us:us-datasets"});

    // The nodes' config: the same remotes, with keys of their own (moto
    // takes any).
    node_conf_ = dir_.path() + "/node-rclone.conf";
    std::ofstream(node_conf_) << RcloneRemote("eu", *eu_) << RcloneRemote("us", *us_);

    std::ifstream in(std::string(CAUSEWAY_SOURCE_DIR) + "/examples/estate.yaml");
    std::string estate((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    size_t at = estate.find("\ndatasets:\n");
    ASSERT_NE(at, std::string::npos);
    estate.insert(at + 11, "  - {name: patients, owner: vision, residency: eu}\n");
    // A machine of the lab's own, run by the local executor, beside the
    // simulated clouds.
    at = estate.find("\nclusters:\n");
    ASSERT_NE(at, std::string::npos);
    estate.insert(at + 11, "  - {name: lab, provider: lab, region: lab1, node_pools: [{name: cpu, cpus: 4, nodes: 1}],\n"
                           "     local: {output_dir: " + dir_.path() + "/out}}\n"
                           "  - {name: labf, provider: labf, region: labf1, node_pools: [{name: cpu, cpus: 4, nodes: 1}],\n"
                           "     fuse: true, local: {output_dir: " + dir_.path() + "/outf}}\n");
    at = estate.find("\nproviders:\n");
    ASSERT_NE(at, std::string::npos);
    estate.insert(at + 12, "  - {name: lab, kind: local, regions: [{name: lab1, zone: eu}]}\n"
                           "  - {name: labf, kind: local, regions: [{name: labf1, zone: eu}]}\n");
    estate += "\ndata:\n  rclone_config: " + conf_ + "\n  node_rclone_config: " + node_conf_ + "\n" +
              "  locations:\n"
              "    - {name: nebius-eu, provider: nebius, region: eu-north1, remote: \"eu:eu-datasets\",\n"
              "       url: \"s3://eu-datasets\", storage_per_gb_month: \"0.02\"}\n"
              "    - {name: coreweave-us, provider: coreweave, region: us-east-04, remote: \"us:us-datasets\",\n"
              "       url: \"s3://us-datasets\"}\n"
              "  transfer_prices:\n"
              "    - {from: nebius, to: \"*\", per_gb: \"0.05\", kind: egress}\n";
    std::string path = dir_.path() + "/estate.yaml";
    std::ofstream(path) << estate;
    server_ = ServerProcess::Start(dir_.path() + "/data", {"--estate", path, "--tick-ms", "50"},
                                   {{"AWS_CA_BUNDLE", dir_.path() + "/no-such-ca.pem"}});
    ASSERT_TRUE(server_);
  }

  // `count` objects of `size` random bytes (and one with an awkward name)
  // under eu:eu-datasets/PREFIX; returns their bytes.
  int64_t Upload(const std::string& prefix, int count, size_t size, unsigned seed) {
    std::string local = dir_.path() + "/src-" + std::to_string(seed);
    std::filesystem::create_directories(local + "/train");
    int64_t total = 0;
    for (int i = 0; i < count; ++i) {
      std::ofstream(local + "/train/s" + std::to_string(i) + ".bin") << RandomBytes(size, seed + i);
      total += static_cast<int64_t>(size);
    }
    std::ofstream(local + "/a, b \"q\".txt") << "hi\n";
    total += 3;
    Rclone(conf_, {"copy", local, "eu:eu-datasets/" + prefix});
    return total;
  }

  CliResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {"--server", server_->url(), "--token", server_->admin_token()});
    return RunCli(args);
  }
  json CliJson(std::vector<std::string> args) {
    args.insert(args.begin(), "--json");
    CliResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return json::parse(r.out, nullptr, false);
  }
  std::optional<net::HttpResult> Api(const std::string& method, const std::string& path, const json& body = nullptr) {
    auto c = server_->Client();
    auto r = c.Send(method, path, body.is_null() ? "" : body.dump(), Auth(server_->admin_token()));
    if (!r.ok()) return std::nullopt;
    return *r;
  }

  TempDir dir_{"datasets"};
  std::unique_ptr<S3Peer> eu_, us_;
  std::string conf_, node_conf_;
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(DatasetsTest, RegisterReplicateVerifyRepairAndSubmit) {
  int64_t total = Upload("c4/2024-05", 4, 50'000, 1);

  // Registered from a listing of the bucket: the manifest names every object.
  CliResult reg = Cli({"dataset", "register", "c4", "--from", "s3://eu-datasets/c4/2024-05", "--version", "2024-05"});
  ASSERT_EQ(reg.exit_code, 0) << reg.out << reg.err;
  EXPECT_NE(reg.out.find("5 objects"), std::string::npos) << reg.out;
  json shown = CliJson({"dataset", "show", "c4@2024-05"});
  EXPECT_EQ(shown["objects"], 5);
  EXPECT_EQ(shown["bytes"], total);
  std::string digest = shown["digest"];
  ASSERT_EQ(shown["replicas"].size(), 1u);
  EXPECT_EQ(shown["replicas"][0]["location"], "nebius-eu");
  EXPECT_EQ(shown["replicas"][0]["state"], "verified");
  // Its storage is charged to the owner from the moment it was verified.
  EXPECT_EQ(shown["replicas"][0]["storage_charged_until"], shown["replicas"][0]["verified_at"]) << shown.dump(2);
  EXPECT_TRUE(shown["replicas"][0]["storage_per_month"].is_string()) << shown.dump(2);
  // The digest is the manifest's SHA-256, and the manifest lists the odd name.
  CliResult manifest = Cli({"dataset", "manifest", "c4@2024-05"});
  ASSERT_EQ(manifest.exit_code, 0);
  EXPECT_EQ("sha256:" + Sha256Hex(manifest.out), digest);
  EXPECT_NE(manifest.out.find("a,%20b%20\"q\".txt"), std::string::npos) << manifest.out;
  // By digest too; the same contents are not registered twice.
  EXPECT_EQ(CliJson({"dataset", "show", "c4@" + digest})["version"], "2024-05");
  CliResult again = Cli({"dataset", "register", "c4", "--from", "nebius-eu:c4/2024-05", "--version", "2024-06"});
  EXPECT_EQ(again.exit_code, 6) << again.out << again.err;
  EXPECT_NE(again.err.find("already"), std::string::npos) << again.err;
  CliResult unknown = Cli({"dataset", "show", "c4@1999-01"});
  EXPECT_EQ(unknown.exit_code, 4);
  EXPECT_NE(unknown.err.find("registered: 2024-05"), std::string::npos) << unknown.err;

  // Routing reads the registry: with the only verified copy in the EU, an
  // H100 job that must run by its data has nowhere to go (the estate's
  // static replica list, which names coreweave/us-east-04, no longer
  // counts for a registered version); one allowed to read remotely is
  // told what it would move, and at what price.
  const std::string h100 =
      "name: t\nresources: {accelerators: H100:8}\nlabels: {team: vision, owner: bob@example.com}\nrun: echo\n";
  auto nowhere = Api("POST", "/v1/jobs", {{"spec", h100 + "datasets: [c4@2024-05]\n"}});
  ASSERT_TRUE(nowhere);
  EXPECT_EQ(nowhere->status, 400) << nowhere->body;
  EXPECT_NE(nowhere->body.find("no verified replica of dataset c4@2024-05 in coreweave/us-east-04"), std::string::npos)
      << nowhere->body;
  auto remote = Api("POST", "/v1/jobs", {{"spec", h100 + "datasets: [c4@2024-05]\nallow_remote_data: true\n"}});
  ASSERT_TRUE(remote && remote->status == 201) << (remote ? remote->body : "");
  std::string remote_id = json::parse(remote->body)["job"]["id"];
  // Explained once the scheduler holds it.
  auto explained = [&](const std::string& id) {
    std::optional<net::HttpResult> r;
    Eventually([&] {
      r = Api("GET", "/v1/jobs/" + id + "/explain");
      return r && r->body.find("\"candidates\"") != std::string::npos;
    });
    return r;
  };
  auto explain = explained(remote_id);
  ASSERT_TRUE(explain);
  EXPECT_NE(explain->body.find("would read 200.0 KB across regions at 0.00001 USD"), std::string::npos)
      << explain->body;

  // Replicated to the other region: everything moves once, then nothing.
  json rep = CliJson({"dataset", "replicate", "c4@2024-05", "--to", "coreweave/us-east-04"});
  EXPECT_EQ(rep["state"], "verified") << rep.dump();
  EXPECT_EQ(rep["bytes_moved"], total);
  EXPECT_EQ(rep["from"], "nebius-eu");
  // 0.05 USD a GB leaving nebius.
  EXPECT_EQ(rep["transfer_cost"], Money::Scale(Money(50'000, "USD"), total, 1'000'000'000)->ToString());
  // Now the same job that must run by its data is placed by it.
  auto local = Api("POST", "/v1/jobs", {{"spec", h100 + "datasets: [c4@2024-05]\n"}});
  ASSERT_TRUE(local && local->status == 201) << (local ? local->body : "");
  auto local_explain = explained(json::parse(local->body)["job"]["id"].get<std::string>());
  ASSERT_TRUE(local_explain);
  EXPECT_NE(local_explain->body.find("data local"), std::string::npos) << local_explain->body;
  EXPECT_NE(local_explain->body.find("no verified replica of dataset c4@2024-05 in coreweave/eu-west-01"),
            std::string::npos)
      << local_explain->body;
  json twice = CliJson({"dataset", "replicate", "c4@2024-05", "--to", "coreweave-us"});
  EXPECT_EQ(twice["state"], "verified");
  EXPECT_EQ(twice["bytes_moved"], 0);
  std::string listing = Rclone(conf_, {"lsf", "-R", "--files-only", "us:us-datasets/c4/2024-05"}).out;
  EXPECT_NE(listing.find("train/s3.bin"), std::string::npos) << listing;

  // One object changed in place (same size): verify finds it, the replica
  // stops counting, and replicating again moves only that object.
  std::string bad = dir_.path() + "/bad.bin";
  std::ofstream(bad) << RandomBytes(50'000, 99);
  Rclone(conf_, {"copyto", bad, "us:us-datasets/c4/2024-05/train/s1.bin"});
  CliResult verify = Cli({"dataset", "verify", "c4@2024-05", "--at", "coreweave-us"});
  EXPECT_EQ(verify.exit_code, 1) << verify.out << verify.err;
  EXPECT_NE(verify.out.find("corrupt"), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("1 changed (train/s1.bin)"), std::string::npos) << verify.out;
  json after = CliJson({"dataset", "show", "c4@2024-05"});
  for (const json& r : after["replicas"]) {
    if (r["location"] == "coreweave-us") {
      EXPECT_EQ(r["state"], "corrupt");
      EXPECT_EQ(r["counts"], false);
    }
  }
  json repaired = CliJson({"dataset", "replicate", "c4@2024-05", "--to", "coreweave-us"});
  EXPECT_EQ(repaired["state"], "verified");
  EXPECT_EQ(repaired["bytes_moved"], 50'000);
  EXPECT_EQ(CliJson({"dataset", "verify", "c4@2024-05", "--at", "coreweave-us"})["state"], "verified");

  // A new version that changes one object of five: only that object
  // crosses to the other region; the rest is copied there from 2024-05's
  // replica, within the store.
  Rclone(conf_, {"copy", "eu:eu-datasets/c4/2024-05", "eu:eu-datasets/c4/2024-06"});
  std::string changed = dir_.path() + "/changed.bin";
  std::ofstream(changed) << RandomBytes(50'000, 42);
  Rclone(conf_, {"copyto", changed, "eu:eu-datasets/c4/2024-06/train/s2.bin"});
  ASSERT_EQ(Cli({"dataset", "register", "c4", "--from", "nebius-eu:c4/2024-06", "--version", "2024-06"}).exit_code, 0);
  json next = CliJson({"dataset", "replicate", "c4@2024-06", "--to", "coreweave-us"});
  EXPECT_EQ(next["state"], "verified") << next.dump();
  EXPECT_EQ(next["bytes_moved"], 50'000) << next.dump();

  // A dataset bound to the EU is never copied out of it.
  Upload("patients/v1", 1, 1'000, 7);
  ASSERT_EQ(Cli({"dataset", "register", "patients", "--from", "nebius-eu:patients/v1", "--version", "v1"}).exit_code, 0);
  CliResult out_of_zone = Cli({"dataset", "replicate", "patients@v1", "--to", "coreweave-us"});
  EXPECT_EQ(out_of_zone.exit_code, 3) << out_of_zone.err;
  EXPECT_NE(out_of_zone.err.find("residency zone eu"), std::string::npos) << out_of_zone.err;

  // Submission: an unknown version is refused, a known one is recorded by
  // digest in the job's spec; a job reading the EU dataset must be bound there.
  auto refused = Api("POST", "/v1/jobs",
                     {{"spec", "name: t\nresources: {accelerators: H100:8}\nlabels: {team: nlp, owner: alice@example.com}\n"
                               "datasets: [{name: c4, version: \"1999-01\"}]\nrun: echo\n"}});
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 400) << refused->body;
  EXPECT_NE(refused->body.find("datasets[0]"), std::string::npos) << refused->body;
  auto accepted = Api("POST", "/v1/jobs",
                      {{"spec", "name: t\nresources: {accelerators: H100:8}\nlabels: {team: vision, owner: bob@example.com}\n"
                                "datasets: [c4@2024-05]\nallow_remote_data: true\nrun: echo\n"}});
  ASSERT_TRUE(accepted);
  ASSERT_EQ(accepted->status, 201) << accepted->body;
  std::string id = json::parse(accepted->body)["job"]["id"];
  auto job = Api("GET", "/v1/jobs/" + id);
  ASSERT_TRUE(job);
  EXPECT_NE(job->body.find(digest), std::string::npos) << job->body;
  auto unbound = Api("POST", "/v1/jobs",
                     {{"spec", "name: t\nresources: {accelerators: H200:8}\nlabels: {team: vision, owner: bob@example.com}\n"
                               "datasets: [patients@v1]\nallow_remote_data: true\nrun: echo\n"}});
  ASSERT_TRUE(unbound);
  EXPECT_EQ(unbound->status, 422) << unbound->body;
  EXPECT_NE(unbound->body.find("residency: eu"), std::string::npos) << unbound->body;

  // Bound to the EU, it may read the EU dataset, and it may register a
  // checkpoint in the EU's storage location but not in the US one.
  auto bound = Api("POST", "/v1/jobs",
                   {{"spec", "name: t\nresources: {accelerators: H200:8}\nlabels: {team: vision, owner: bob@example.com}\nresidency: eu\n"
                             "datasets: [patients@v1]\nrun: echo\n"}});
  ASSERT_TRUE(bound && bound->status == 201) << (bound ? bound->body : "");
  std::string bound_id = json::parse(bound->body)["job"]["id"];
  auto us_ckpt = Api("POST", "/v1/jobs/" + bound_id + "/checkpoints", {{"path", "s3://us-datasets/ckpt/step-1"}});
  ASSERT_TRUE(us_ckpt);
  EXPECT_EQ(us_ckpt->status, 409) << us_ckpt->body;
  EXPECT_NE(us_ckpt->body.find("zone us"), std::string::npos) << us_ckpt->body;
  auto eu_ckpt = Api("POST", "/v1/jobs/" + bound_id + "/checkpoints", {{"path", "s3://eu-datasets/ckpt/step-1"}});
  ASSERT_TRUE(eu_ckpt);
  EXPECT_EQ(eu_ckpt->status, 201) << eu_ckpt->body;

  // The job placed away from its data paid for reading it across (once,
  // when its attempt was placed), and showback has every byte moved on
  // the line of the team that caused it: the replications of c4 on its
  // owner's (nlp), the remote read on the job's (vision).
  ASSERT_TRUE(Eventually([&] {
    auto r = Api("GET", "/v1/jobs/" + remote_id);
    return r && !json::parse(r->body)["data_charges"].empty();
  })) << Api("GET", "/v1/jobs/" + remote_id)->body;
  json remote_job = json::parse(Api("GET", "/v1/jobs/" + remote_id)->body);
  ASSERT_EQ(remote_job["data_charges"].size(), 1u) << remote_job.dump();
  EXPECT_EQ(remote_job["data_charges"][0]["kind"], "remote-read");
  EXPECT_EQ(remote_job["data_charges"][0]["bytes"], total);
  EXPECT_EQ(remote_job["data_charges"][0]["from"], "nebius/eu-north1");
  EXPECT_EQ(remote_job["data_charges"][0]["amount_micros"], 10);  // 0.05 USD/GB x 200,003 B
  CliResult cost_job = Cli({"cost", "job", remote_id});
  EXPECT_NE(cost_job.out.find("remote-read"), std::string::npos) << cost_job.out;
  auto showback = Api("GET", "/v1/cost/showback?source=metered&by=team");
  ASSERT_TRUE(showback);
  std::map<std::string, int64_t> data_bytes;
  json rows = json::parse(showback->body)["rows"];
  for (const json& row : rows) data_bytes[row["team"]] = row["data_bytes"];
  EXPECT_EQ(data_bytes["nlp"], total + 2 * 50'000) << showback->body;  // c4's replications
  EXPECT_EQ(data_bytes["vision"], total) << showback->body;            // the remote read

  // Every step is in the audit trail, with the bytes each copy moved.
  auto audit = Api("GET", "/v1/audit?action=dataset.&limit=100");
  ASSERT_TRUE(audit);
  json events = json::parse(audit->body)["events"];
  std::vector<int64_t> moved;
  int registered = 0, verified = 0;
  for (const json& e : events) {
    if (e["action"] == "dataset.register") ++registered;
    if (e["action"] == "dataset.verify") ++verified;
    if (e["action"] == "dataset.replicate") moved.push_back(e["details"]["bytes_moved"]);
  }
  EXPECT_EQ(registered, 3);
  EXPECT_EQ(verified, 2);
  EXPECT_EQ(moved, (std::vector<int64_t>{total, 0, 50'000, 50'000}));
}

TEST_F(DatasetsTest, AnInterruptedCopyIsRetriedAndResumesWhereItStopped) {
  // 30 objects of 40 KB at 300 KB/s: about four seconds, objects finishing
  // one after another, so that killing rclone midway leaves some done.
  int64_t total = Upload("c4/v1", 30, 40'000, 11);
  ASSERT_EQ(Cli({"dataset", "register", "c4", "--from", "nebius-eu:c4/v1"}).exit_code, 0);
  auto start = [&](int attempts) {
    auto r = Api("POST", "/v1/datasets/c4@v1/replicate",
                 {{"to", "coreweave-us"}, {"bwlimit", "300k"}, {"attempts", attempts}, {"backoff_ms", 100}});
    EXPECT_TRUE(r && r->status == 202) << (r ? r->body : "no answer");
    return json::parse(r->body)["id"].get<std::string>();
  };
  auto get = [&](const std::string& id) { return json::parse(Api("GET", "/v1/replications/" + id)->body); };
  // Kills the replication's rclone once its first run has moved a third
  // of the dataset: what it moved stays at the target.
  auto kill_midway = [&](const std::string& id) {
    ASSERT_TRUE(Eventually([&] { return get(id)["progress"]["bytes"].get<int64_t>() > total / 3; }))
        << get(id).dump();
    auto pids = RcloneCopies(conf_);
    ASSERT_EQ(pids.size(), 1u);
    ::kill(pids[0], SIGKILL);
  };
  // Kills the replication's first rclone as soon as it exists: found
  // alive, it cannot have finished, however little was left to copy (a
  // kill judged by progress races the end of a short copy).
  auto kill_at_start = [&] {
    std::vector<pid_t> pids;
    ASSERT_TRUE(Eventually([&] { return !(pids = RcloneCopies(conf_)).empty(); }));
    ASSERT_EQ(pids.size(), 1u);
    ::kill(pids[0], SIGKILL);
  };

  // One attempt: killed, it fails, and says how far it got.
  std::string first = start(1);
  kill_midway(first);
  ASSERT_TRUE(Eventually([&] { return get(first)["state"] != "running"; }));
  json failed = get(first);
  EXPECT_EQ(failed["state"], "failed") << failed.dump();
  ASSERT_EQ(failed["errors"].size(), 1u);
  int64_t before = failed["bytes_moved"];
  EXPECT_GT(before, 0);
  EXPECT_LT(before, total);
  EXPECT_EQ(CliJson({"dataset", "show", "c4@v1"})["replicas"].size(), 2u);

  // Three attempts: the first run is killed, the second resumes and
  // finishes; together they move what was still missing, not everything
  // (what a killed run had in flight is sent again, at most one object
  // per transfer, less than the third the first replication left there).
  std::string second = start(3);
  kill_at_start();
  ASSERT_TRUE(Eventually([&] { return get(second)["state"] != "running"; }, std::chrono::seconds(120)));
  json done = get(second);
  EXPECT_EQ(done["state"], "verified") << done.dump();
  EXPECT_EQ(done["runs"], 2);
  EXPECT_EQ(done["errors"].size(), 1u);
  EXPECT_LT(done["bytes_moved"].get<int64_t>(), total) << done.dump();
  EXPECT_EQ(CliJson({"dataset", "verify", "c4@v1", "--at", "coreweave-us"})["state"], "verified");
}

TEST_F(DatasetsTest, ABucketInFileMountsIsCopiedBeforeALocalJobRunsAndMountIsRefusedWithoutFuse) {
  Upload("c4/2024-05", 2, 10'000, 3);
  std::string mnt = dir_.path() + "/mnt/c4";
  std::string original = dir_.path() + "/src-3/train/s0.bin";
  auto job = Api("POST", "/v1/jobs",
                 {{"spec", "name: reader\nresources: {cpus: 1, infra: lab}\nlabels: {team: vision, owner: bob@example.com}\n"
                           "file_mounts:\n  " + mnt + ": s3://eu-datasets/c4/2024-05\n"
                           "run: ls " + mnt + "/train && cmp " + mnt + "/train/s0.bin " + original + " && echo same\n"}});
  ASSERT_TRUE(job && job->status == 201) << (job ? job->body : "");
  std::string id = json::parse(job->body)["job"]["id"];
  ASSERT_TRUE(Eventually([&] {
    std::string state = json::parse(Api("GET", "/v1/jobs/" + id)->body)["state"];
    return state == "succeeded" || state == "failed";
  })) << Api("GET", "/v1/jobs/" + id)->body;
  auto logs = Api("GET", "/v1/jobs/" + id + "/logs");
  ASSERT_TRUE(logs);
  EXPECT_EQ(json::parse(Api("GET", "/v1/jobs/" + id)->body)["state"], "succeeded") << logs->body;
  EXPECT_NE(logs->body.find("s1.bin"), std::string::npos) << logs->body;
  EXPECT_NE(logs->body.find("same"), std::string::npos) << logs->body;

  // A storage object is mounted by default (SkyPilot's MOUNT): the lab
  // declares no FUSE, so it is refused there, saying so.
  auto mounted = Api("POST", "/v1/jobs",
                     {{"spec", "name: m\nresources: {cpus: 1, infra: lab}\nlabels: {team: vision, owner: bob@example.com}\n"
                               "file_mounts:\n  " + mnt + "2: {source: s3://eu-datasets/c4/2024-05}\nrun: ls\n"}});
  ASSERT_TRUE(mounted);
  EXPECT_EQ(mounted->status, 400) << mounted->body;
  EXPECT_NE(mounted->body.find("needs FUSE"), std::string::npos) << mounted->body;

  // The data acceptance test: the loading pattern run on the lab machine,
  // its read measured, the data's way there and the cost per completed
  // job with the read across regions.
  ASSERT_EQ(Cli({"dataset", "register", "c4", "--from", "nebius-eu:c4/2024-05", "--version", "2024-05"}).exit_code, 0);
  std::string out = dir_.path() + "/reports";
  std::filesystem::create_directories(out);
  CliResult accepted = Cli({"acceptance", "data", "--dataset", "c4@2024-05", "--cluster", "lab", "--team", "vision",
                            "--out", out, "--job-timeout", "120"});
  EXPECT_EQ(accepted.exit_code, 0) << accepted.out << accepted.err;
  json report;
  for (const auto& f : std::filesystem::directory_iterator(out)) {
    if (f.path().extension() == ".json") report = json::parse(std::ifstream(f.path()), nullptr, false);
  }
  ASSERT_TRUE(report.is_object()) << accepted.out;
  EXPECT_EQ(report["passed"], true) << report.dump(2);
  EXPECT_EQ(report["read"]["bytes"], 2 * 10'000 + 3) << report.dump(2);
  EXPECT_GT(report["read"]["mb_per_s"].get<double>(), 0);
  EXPECT_EQ(report["flow"]["way"], "across regions");
  EXPECT_EQ(report["flow"]["replica"], "nebius-eu");
  EXPECT_FALSE(report["cost"]["per_completed_job"].is_null()) << report.dump(2);
  ASSERT_EQ(report["cost"]["data_charges"].size(), 1u) << report.dump(2);
  EXPECT_EQ(report["cost"]["data_charges"][0]["kind"], "remote-read");
  auto runs = Api("GET", "/v1/acceptance/runs");
  EXPECT_NE(runs->body.find("\"test\":\"data\""), std::string::npos) << runs->body;
}

TEST_F(DatasetsTest, AJobThatAsksForItsDataOnDemandWaitsForTheCopyAndPaysForIt) {
  int64_t total = Upload("c4/2024-05", 4, 50'000, 5);
  ASSERT_EQ(Cli({"dataset", "register", "c4", "--from", "nebius-eu:c4/2024-05", "--version", "2024-05"}).exit_code, 0);
  auto job = Api("POST", "/v1/jobs",
                 {{"spec", "name: t\nresources: {accelerators: H100:8}\nlabels: {team: vision, owner: bob@example.com}\n"
                           "datasets: [{name: c4, version: \"2024-05\", replicate: on-demand}]\nrun: echo\n"}});
  ASSERT_TRUE(job && job->status == 201) << (job ? job->body : "");
  std::string id = json::parse(job->body)["job"]["id"];
  // Placed where H100s are cheapest, it waits there for the copy, which
  // the server makes, verifies and charges to the job.
  ASSERT_TRUE(Eventually([&] {
    return json::parse(Api("GET", "/v1/jobs/" + id)->body)["state"] == "running";
  })) << Api("GET", "/v1/jobs/" + id + "/explain")->body;
  json shown = CliJson({"dataset", "show", "c4@2024-05"});
  bool verified_there = false;
  for (const json& r : shown["replicas"]) verified_there |= r["location"] == "coreweave-us" && r["state"] == "verified";
  EXPECT_TRUE(verified_there) << shown.dump();
  json detail = json::parse(Api("GET", "/v1/jobs/" + id)->body);
  EXPECT_EQ(detail["attempts"][0]["cluster"], "coreweave-us-h100");
  ASSERT_EQ(detail["data_charges"].size(), 1u) << detail.dump();
  EXPECT_EQ(detail["data_charges"][0]["kind"], "replication");
  EXPECT_EQ(detail["data_charges"][0]["bytes"], total);
  EXPECT_EQ(detail["data_charges"][0]["amount_micros"], 10);
  auto audit = Api("GET", "/v1/audit?action=dataset.replicate&limit=10");
  json events = json::parse(audit->body)["events"];
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["actor"], "scheduler");
  EXPECT_EQ(events[0]["details"]["job"], id);
  EXPECT_EQ(events[0]["details"]["team"], "vision");
}

// A checkpoint written through a MOUNT_CACHED mount (a machine with FUSE,
// the real rclone mount over moto) counts only once rclone has written it
// back to the bucket, and the end of the attempt waits for the write-back
// before unmounting, so a file written just before the job ends is not
// lost.
TEST_F(DatasetsTest, ACheckpointThroughACachedMountCountsOnceInTheBucketAndNothingWrittenIsLost) {
  if (std::string why = FuseMissing(dir_.path() + "/fuse-probe"); !why.empty()) GTEST_SKIP() << why;
  std::string mnt = dir_.path() + "/mnt/ckpt";
  auto job = Api("POST", "/v1/jobs",
                 {{"spec", "name: trainer\nresources: {cpus: 1, infra: labf}\n"
                           "labels: {team: vision, owner: bob@example.com}\n"
                           "file_mounts:\n  " + mnt + ": {source: s3://eu-datasets/ckpt/run1, mode: MOUNT_CACHED}\n"
                           "run: mkdir -p " + mnt + "/step-1 && head -c 200000 /dev/urandom > " + mnt +
                           "/step-1/w.bin && until [ -e " + dir_.path() + "/release ]; do sleep 0.1; done && echo last > " + mnt +
                           "/final.txt\n"}});
  ASSERT_TRUE(job && job->status == 201) << (job ? job->body : "");
  std::string id = json::parse(job->body)["job"]["id"];
  ASSERT_TRUE(Eventually([&] { return json::parse(Api("GET", "/v1/jobs/" + id)->body)["state"] == "running"; }))
      << Api("GET", "/v1/jobs/" + id)->body;

  // Nothing in the bucket at a path the job has not written: 503, retryable.
  auto early = Api("POST", "/v1/jobs/" + id + "/checkpoints", {{"path", mnt + "/step-0"}});
  ASSERT_TRUE(early);
  EXPECT_EQ(early->status, 503) << early->body;
  EXPECT_NE(early->body.find("MOUNT_CACHED"), std::string::npos) << early->body;
  EXPECT_NE(early->body.find("s3://eu-datasets/ckpt/run1/step-0"), std::string::npos) << early->body;
  // step-1 is accepted once rclone has written it back (the CLI asks again
  // until then), and the bucket holds it.
  CliResult reg = Cli({"checkpoint", "register", "--job", id, "--path", mnt + "/step-1", "--step", "1", "--wait", "90s"});
  EXPECT_EQ(reg.exit_code, 0) << reg.out << reg.err;
  std::string held = Rclone(conf_, {"size", "--json", "eu:eu-datasets/ckpt/run1/step-1"}).out;
  EXPECT_NE(held.find("\"bytes\":200000"), std::string::npos) << held;
  json cps = json::parse(Api("GET", "/v1/jobs/" + id + "/checkpoints")->body)["checkpoints"];
  ASSERT_EQ(cps.size(), 1u) << cps.dump();
  EXPECT_EQ(cps[0]["path"], mnt + "/step-1");

  // Released, the job writes final.txt as it ends: the attempt's end waits
  // for its write-back, so it reaches the bucket.
  std::ofstream(dir_.path() + "/release") << "go";
  ASSERT_TRUE(Eventually([&] {
    std::string state = json::parse(Api("GET", "/v1/jobs/" + id)->body)["state"];
    return state == "succeeded" || state == "failed";
  }, std::chrono::seconds(120))) << Api("GET", "/v1/jobs/" + id)->body;
  EXPECT_EQ(json::parse(Api("GET", "/v1/jobs/" + id)->body)["state"], "succeeded")
      << Api("GET", "/v1/jobs/" + id + "/logs")->body;
  EXPECT_EQ(Rclone(conf_, {"cat", "eu:eu-datasets/ckpt/run1/final.txt"}).out, "last\n")
      << Api("GET", "/v1/jobs/" + id + "/logs")->body;
}

}  // namespace
}  // namespace causeway::testing
