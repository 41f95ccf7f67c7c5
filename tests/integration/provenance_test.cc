// Provenance records end to end, on the real server: a job killed by its
// provider and resumed elsewhere from its checkpoint shows both attempts,
// the checkpoint and what each ran on; the diff of its two attempts names
// what changed; an independent verifier (Node.js's own crypto, with DSSE's
// pre-authentication encoding written here) accepts the record and refuses
// every tampered copy, as `causeway provenance verify` does; export streams
// every record; a rerun is pinned and explain says where the pins bit.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "causeway/crypto.h"
#include "identity/jwt.h"
#include "node_peer.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

constexpr const char* kEstate = R"(
providers:
  - {name: alpha, kind: sim, regions: [{name: a1, zone: eu}]}
  - {name: beta, kind: sim, regions: [{name: b1, zone: eu}]}
clusters:
  - name: alpha-gpu
    provider: alpha
    region: a1
    node_pools:
      - {name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 2, interconnect: infiniband,
         software: {driver: 550.54.15, cuda: "12.4", os: Ubuntu 22.04.4 LTS}}
      - {name: a100, gpu_type: A100-80GB, gpus_per_node: 8, nodes: 2, interconnect: infiniband,
         software: {driver: 550.54.15, cuda: "12.4"}}
  - name: beta-a100
    provider: beta
    region: b1
    node_pools:
      - {name: a100, gpu_type: A100-80GB, gpus_per_node: 8, nodes: 2, interconnect: ethernet,
         software: {driver: 535.183.01, cuda: "12.2", os: Ubuntu 20.04.6 LTS}}
prices:
  - {cluster: alpha-gpu, gpu_type: H100, on_demand: "2.00"}
  - {cluster: alpha-gpu, gpu_type: A100-80GB, on_demand: "4.00"}
  - {cluster: beta-a100, gpu_type: A100-80GB, on_demand: "3.00"}
)";

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The independent verifier's verdict on a record: 0 accepted.
int NodeVerify(const std::string& record, const std::string& jwks) {
  std::string cmd = "node " + PeersDir() + "/verify-dsse.js " + record + " " + jwks + " > /dev/null 2>&1";
  int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class ProvenanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::make_unique<TempDir>("provenance");
    std::ofstream(dir_->path() + "/estate.yaml") << kEstate;
    server_ = ServerProcess::Start(dir_->path(), {"--estate", dir_->path() + "/estate.yaml", "--sim-speed", "600",
                                                  "--tick-ms", "20"});
    env_ = {{"CAUSEWAY_SERVER", server_->url()}, {"CAUSEWAY_TOKEN", server_->admin_token()}};
  }
  json Get(const std::string& path) {
    auto c = server_->Client();
    return json::parse(c.Send("GET", path, "", Auth(server_->admin_token()))->body);
  }
  int Post(const std::string& path, const json& body) {
    auto c = server_->Client();
    return c.Send("POST", path, body.dump(), Auth(server_->admin_token()))->status;
  }
  std::string Submit(const std::string& yaml) {
    auto c = server_->Client();
    auto r = c.Send("POST", "/v1/jobs", json{{"spec", yaml}}.dump(), Auth(server_->admin_token()));
    EXPECT_EQ(r->status, 201) << r->body;
    return json::parse(r->body)["job"]["id"];
  }
  std::string Path(const std::string& name) const { return dir_->path() + "/" + name; }

  std::unique_ptr<TempDir> dir_;
  std::unique_ptr<ServerProcess> server_;
  std::map<std::string, std::string> env_;
};

TEST_F(ProvenanceTest, AResumedRunsRecordVerifiesIndependentlyAndTamperingIsCaught) {
  const std::string digest = "sha256:" + Sha256Hex("weights at step 500");
  std::string id = Submit(
      "name: train\nresources:\n  any_of: [{accelerators: H100:8}, {accelerators: A100-80GB:8}]\n"
      "datasets: [{name: c4, version: \"2024-05\"}]\nallow_remote_data: true\n"
      "checkpoint: {path: s3://ckpt/train}\nsim: {duration: 30m}\n");
  ASSERT_TRUE(Eventually([&] { return Get("/v1/jobs/" + id)["state"] == "running"; })) << Get("/v1/jobs/" + id).dump(2);
  ASSERT_EQ(Get("/v1/jobs/" + id)["attempts"][0]["cluster"], "alpha-gpu");
  auto registered = RunCli({"checkpoint", "register", "--job", id, "--path", "s3://ckpt/train/step-500", "--step", "500",
                            "--digest", digest},
                           env_);
  ASSERT_EQ(registered.exit_code, 0) << registered.err;
  auto recorded = RunCli({"record", "--job", id, "mlflow.run_id=3f2a9c", "lr=3e-4", "--artifact",
                          "eval.json=" + digest.substr(0, 7) + std::string(64, 'e') + "@s3://out/eval.json"},
                         env_);
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  // The provider goes down under the job: it resumes on the other one.
  ASSERT_EQ(Post("/v1/providers/alpha/outage", {{"down", true}}), 200);
  ASSERT_TRUE(Eventually([&] { return Get("/v1/jobs/" + id)["state"] == "succeeded"; })) << Get("/v1/jobs/" + id).dump(2);
  ASSERT_EQ(Post("/v1/providers/alpha/outage", {{"down", false}}), 200);

  auto exported = RunCli({"provenance", id, "-o", Path("record.json")}, env_);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  json statement = Get("/v1/jobs/" + id + "/provenance?format=statement");
  const json& by = statement["predicate"]["runDetails"]["byproducts"];
  ASSERT_GE(by.size(), 2u) << statement.dump(2);
  // Lineage: attempt 1 ended with the provider, attempt 2 resumed from the
  // checkpoint attempt 1 registered.
  EXPECT_EQ(by[0]["annotations"]["cluster"], "alpha-gpu");
  EXPECT_EQ(by[0]["annotations"]["state"], "provider_outage");
  EXPECT_EQ(by[0]["annotations"]["next_action_owner"], "provider");
  EXPECT_EQ(by[0]["annotations"]["checkpoints"][0]["digest"], digest);
  EXPECT_EQ(by[1]["annotations"]["cluster"], "beta-a100");
  EXPECT_EQ(by[1]["annotations"]["resumed_from"], "s3://ckpt/train/step-500");
  // The simulated estate's facts are what its pools declare, and say so.
  const json& facts = by[1]["annotations"]["facts"];
  EXPECT_EQ(facts["declared"]["driver"], "535.183.01");
  EXPECT_EQ(facts["placement"]["interconnect"], "ethernet");
  EXPECT_NE(facts["probe"]["not_detected"].get<std::string>().find("the simulated estate runs no probe"), std::string::npos);
  // Outputs with digests are the subjects; the job's own facts are kept.
  std::set<std::string> subjects;
  for (const json& s : statement["subject"]) subjects.insert(s["name"].get<std::string>());
  EXPECT_EQ(subjects, (std::set<std::string>{"s3://ckpt/train/step-500", "eval.json"}));
  EXPECT_NE(statement.dump().find("3f2a9c"), std::string::npos);
  EXPECT_GT(by.back()["annotations"]["events"].get<int>(), 5);

  // What changed between the attempts.
  auto diff = RunCli({"--json", "provenance", "diff", id + "@1", id + "@2"}, env_);
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  std::map<std::string, json> changed;
  json differences = json::parse(diff.out)["differences"];
  for (const json& d : differences) changed[d["field"]] = d;
  EXPECT_EQ(changed["cluster"]["a"], "alpha-gpu");
  EXPECT_EQ(changed["cluster"]["b"], "beta-a100");
  EXPECT_EQ(changed["gpu_model"]["a"], "H100");
  EXPECT_EQ(changed["gpu_model"]["b"], "A100-80GB");
  EXPECT_EQ(changed["interconnect"]["a"], "infiniband");
  EXPECT_EQ(changed["interconnect"]["b"], "ethernet");
  EXPECT_EQ(changed["started_from"]["b"], "s3://ckpt/train/step-500");
  auto table = RunCli({"provenance", "diff", id + "@1", Path("record.json")}, env_);
  EXPECT_NE(table.out.find("interconnect"), std::string::npos) << table.out << table.err;

  // Verified with the published key, by Causeway and by Node's own crypto.
  auto c = server_->Client();
  std::ofstream(Path("keys.json")) << c.Send("GET", "/v1/provenance/keys", "", Auth(server_->admin_token()))->body;
  auto online = RunCli({"provenance", "verify", Path("record.json")}, env_);
  EXPECT_EQ(online.exit_code, 0) << online.out << online.err;
  EXPECT_NE(online.out.find("matches the server's record"), std::string::npos) << online.out;
  EXPECT_EQ(RunCli({"provenance", "verify", Path("record.json"), "--public-key", Path("keys.json")}, env_).exit_code, 0);
  if (std::string why = std::system("node --version > /dev/null 2>&1") == 0 ? "" : "Node.js is not installed";
      !why.empty()) {
    GTEST_SKIP() << why << ": the independent verifier cannot run";
  }
  EXPECT_EQ(NodeVerify(Path("record.json"), Path("keys.json")), 0);

  // Tampered copies: one byte of the payload, one attempt removed, one
  // digest changed. Both verifiers refuse each.
  json envelope = json::parse(Slurp(Path("record.json")));
  std::string payload = *identity::jwt::Base64UrlDecode([&] {
    std::string s = envelope["payload"];
    while (!s.empty() && s.back() == '=') s.pop_back();
    for (char& ch : s) ch = ch == '+' ? '-' : ch == '/' ? '_' : ch;
    return s;
  }());
  auto with_payload = [&](const std::string& name, const std::string& body) {
    json e = envelope;
    std::string b64 = identity::jwt::Base64UrlEncode(body);
    for (char& ch : b64) ch = ch == '-' ? '+' : ch == '_' ? '/' : ch;
    b64.append((4 - b64.size() % 4) % 4, '=');
    e["payload"] = b64;
    std::ofstream(Path(name)) << e.dump();
    return Path(name);
  };
  std::string one_byte = payload;
  size_t at = one_byte.find("beta-a100");
  one_byte[at] = 'B';
  json fewer = json::parse(payload);
  auto& list = fewer["predicate"]["runDetails"]["byproducts"];
  list.erase(list.begin());
  json other_digest = json::parse(payload);
  other_digest["subject"][0]["digest"]["sha256"] = std::string(64, '0');
  for (const std::string& tampered : {with_payload("byte.json", one_byte), with_payload("fewer.json", fewer.dump()),
                                      with_payload("digest.json", other_digest.dump())}) {
    EXPECT_NE(NodeVerify(tampered, Path("keys.json")), 0) << tampered;
    auto offline = RunCli({"provenance", "verify", tampered, "--public-key", Path("keys.json")}, env_);
    EXPECT_NE(offline.exit_code, 0) << tampered << offline.out;
    EXPECT_NE(offline.err.find("signature does not verify"), std::string::npos) << offline.err;
    EXPECT_NE(RunCli({"provenance", "verify", tampered}, env_).exit_code, 0) << tampered;
  }
}

TEST_F(ProvenanceTest, RecordsExportInBulkAndARerunIsPinnedWhereExplainSaysSo) {
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    ids.push_back(Submit("name: e" + std::to_string(i) +
                         "\nresources: {accelerators: A100-80GB:8, labels: {team: nlp}}\nsim: {duration: 5m}\n"));
  }
  ASSERT_TRUE(Eventually([&] {
    for (const auto& id : ids) {
      if (Get("/v1/jobs/" + id)["state"] != "succeeded") return false;
    }
    return true;
  }));
  // Finished, each record is sealed once: every read returns the same bytes
  // (ECDSA signs afresh with a random nonce each time, so equal signatures
  // can only be the stored record).
  auto record = [&](const std::string& id) {
    auto r = server_->Client().Send("GET", "/v1/jobs/" + id + "/provenance", "", Auth(server_->admin_token()));
    return r.ok() && r->status == 200 ? r->body : std::string();
  };
  for (const auto& id : ids) {
    ASSERT_TRUE(Eventually([&] {
      std::string first = record(id);
      return !first.empty() && first == record(id);
    })) << id << " was never sealed";
  }
  auto exported = RunCli({"provenance", "export", "--team", "nlp", "--since", "1d", "-o", Path("all.jsonl")}, env_);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::ifstream lines(Path("all.jsonl"));
  int count = 0;
  std::set<std::string> sealed;
  for (const auto& id : ids) sealed.insert(record(id));
  for (std::string line; std::getline(lines, line); ++count) {
    std::ofstream(Path("one.json")) << line;
    auto verified = RunCli({"provenance", "verify", Path("one.json")}, env_);
    EXPECT_EQ(verified.exit_code, 0) << line << verified.err;
    EXPECT_EQ(sealed.count(line), 1u) << "export streams the sealed record, byte for byte: " << line.substr(0, 200);
  }
  EXPECT_EQ(count, 3);
  EXPECT_TRUE(RunCli({"provenance", "export", "--team", "nobody", "-o", Path("none.jsonl")}, env_).exit_code == 0);
  EXPECT_EQ(Slurp(Path("none.jsonl")), "");

  // Rerun: pinned to the A100s, driver and CUDA the first run had (the
  // cheaper pool with another driver is passed over, and explain says so).
  auto dry = RunCli({"--json", "rerun", ids[0], "--dry-run"}, env_);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  json plan = json::parse(dry.out);
  std::map<std::string, std::string> pins;
  for (const json& p : plan["pins"]) pins[p["field"]] = p["value"];
  std::string ran_on = Get("/v1/jobs/" + ids[0])["attempts"][0]["cluster"];
  EXPECT_EQ(pins["resources.accelerators"], "A100-80GB:8");
  EXPECT_EQ(pins["resources.driver"], ran_on == "beta-a100" ? "535.183.01" : "550.54.15");
  auto on = RunCli({"--json", "rerun", ids[0], "--on", "alpha-gpu", "--dry-run"}, env_);
  ASSERT_EQ(on.exit_code, 0) << on.err;
  EXPECT_NE(on.out.find("alpha/a1"), std::string::npos) << on.out;
  auto rerun = RunCli({"--json", "rerun", ids[0]}, env_);
  ASSERT_EQ(rerun.exit_code, 0) << rerun.err;
  std::string again = json::parse(rerun.out)["job"]["id"];
  // The other cluster's A100s have another driver: explain names the pin.
  EXPECT_TRUE(Eventually([&] {
    return Get("/v1/jobs/" + again + "/explain").dump().find("resources.driver: pool a100 declares driver") !=
           std::string::npos;
  }, std::chrono::seconds(10)))
      << Get("/v1/jobs/" + again + "/explain").dump(2);
  ASSERT_TRUE(Eventually([&] { return Get("/v1/jobs/" + again)["state"] == "succeeded"; })) << Get("/v1/jobs/" + again).dump(2);
  EXPECT_EQ(Get("/v1/jobs/" + again)["attempts"][0]["cluster"], ran_on);
}

}  // namespace
}  // namespace causeway::testing
