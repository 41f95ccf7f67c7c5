// The CLI end to end: offline validation, and every client command against a
// running server, with the documented exit codes.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

std::string Write(const TempDir& dir, const std::string& name, const std::string& text) {
  std::string path = dir.path() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CliTest, ValidateOffline) {
  TempDir dir("cli-validate");
  auto good = RunCli({"validate", std::string(CAUSEWAY_SOURCE_DIR) + "/examples/jobs/train-llama.yaml"});
  EXPECT_EQ(good.exit_code, 0) << good.err;
  EXPECT_NE(good.out.find("valid (H200:8, 2 nodes)"), std::string::npos) << good.out;

  std::string bad = Write(dir, "bad.yaml", "name: x\nresources:\n  acelerators: H100:8\n");
  auto r = RunCli({"validate", bad});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find(bad + ":3:3: resources.acelerators: unknown key \"acelerators\"; did you mean \"accelerators\"?"),
            std::string::npos)
      << r.err;

  auto j = RunCli({"--json", "validate", bad});
  EXPECT_EQ(j.exit_code, 3);
  json report = json::parse(j.out);
  EXPECT_FALSE(report["valid"].get<bool>());
  EXPECT_EQ(report["diagnostics"][0]["line"], 3);

  std::string h300 = Write(dir, "h300.yaml", "resources:\n  accelerators: H300:8\n  labels: {owner: o, team: nlp}\n");
  auto estate = RunCli({"validate", h300, "--estate", std::string(CAUSEWAY_SOURCE_DIR) + "/examples/estate.yaml"});
  EXPECT_EQ(estate.exit_code, 3);
  EXPECT_NE(estate.err.find("did you mean \"H200\""), std::string::npos) << estate.err;

  EXPECT_EQ(RunCli({"validate", dir.path() + "/missing.yaml"}).exit_code, 4);
  auto unknown = RunCli({"no-such-command"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown command \"no-such-command\" for causeway: expected one of serve, validate"),
            std::string::npos)
      << unknown.err;
  auto nested = RunCli({"cost", "frob"});
  EXPECT_EQ(nested.exit_code, 2);
  EXPECT_NE(nested.err.find("unknown command \"frob\" for causeway cost: expected one of import"), std::string::npos)
      << nested.err;
  auto none = RunCli({"token"});
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("causeway token needs a command: one of create"), std::string::npos) << none.err;
  EXPECT_EQ(RunCli({"jobs", "--bogus-flag"}).exit_code, 2);
}

TEST(CliTest, ClientCommandsAgainstARunningServer) {
  TempDir dir("cli");
  auto server = ServerProcess::Start(dir.path());
  std::map<std::string, std::string> env = {{"CAUSEWAY_SERVER", server->url()},
                                            {"CAUSEWAY_TOKEN", server->admin_token()}};
  std::string spec = std::string(CAUSEWAY_SOURCE_DIR) + "/examples/jobs/finetune-vision.yaml";

  auto submitted = RunCli({"--json", "submit", spec}, env);
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  std::string id = json::parse(submitted.out)["job"]["id"];

  auto human = RunCli({"submit", spec, "--idempotency-key", "k1"}, env);
  EXPECT_EQ(human.exit_code, 0);
  EXPECT_NE(human.out.find("submitted job_"), std::string::npos) << human.out;
  auto replay = RunCli({"submit", spec, "--idempotency-key", "k1"}, env);
  EXPECT_NE(replay.out.find("already submitted"), std::string::npos) << replay.out;

  auto jobs = RunCli({"jobs", "--team", "vision"}, env);
  EXPECT_EQ(jobs.exit_code, 0);
  EXPECT_NE(jobs.out.find("ID"), std::string::npos);
  EXPECT_NE(jobs.out.find(id), std::string::npos);
  EXPECT_NE(jobs.out.find("H100:8|A100-80GB:8"), std::string::npos) << jobs.out;

  auto job = RunCli({"job", id}, env);
  EXPECT_EQ(job.exit_code, 0);
  // The scheduler may already have dispatched it.
  EXPECT_TRUE(job.out.find("state:     pending") != std::string::npos ||
              job.out.find("state:     running") != std::string::npos)
      << job.out;
  EXPECT_NE(job.out.find("team:      vision"), std::string::npos) << job.out;
  EXPECT_EQ(RunCli({"job", "job_nope"}, env).exit_code, 4);

  // Once it has run, explain says where even after it ended (from the attempt).
  ASSERT_TRUE(Eventually([&] { return RunCli({"job", id}, env).out.find("state:     running") != std::string::npos; }));
  EXPECT_EQ(RunCli({"cancel", id, "--reason", "test"}, env).exit_code, 0);
  auto explained = RunCli({"explain", id}, env);
  EXPECT_EQ(explained.exit_code, 0) << explained.err;
  EXPECT_NE(explained.out.find("  placed on "), std::string::npos) << explained.out;
  EXPECT_NE(explained.out.find("attempt 1 on "), std::string::npos) << explained.out;
  auto again = RunCli({"cancel", id}, env);
  EXPECT_EQ(again.exit_code, 6);
  EXPECT_NE(again.err.find("already cancelled"), std::string::npos) << again.err;

  auto clusters = RunCli({"clusters"}, env);
  EXPECT_NE(clusters.out.find("nebius-eu-h200"), std::string::npos);
  // Listed by the provider it ran at, and not by another.
  json ran = json::parse(RunCli({"--json", "job", id}, env).out);
  ASSERT_FALSE(ran["attempts"].empty()) << ran.dump();
  std::string ran_at, elsewhere;
  const json estate_clusters = json::parse(RunCli({"--json", "clusters"}, env).out)["clusters"];
  for (const json& c : estate_clusters) {
    (c["name"] == ran["attempts"][0]["cluster"] ? ran_at : elsewhere) = c["provider"].get<std::string>();
  }
  ASSERT_FALSE(ran_at.empty());
  if (elsewhere == ran_at) elsewhere.clear();
  EXPECT_NE(RunCli({"jobs", "--provider", ran_at}, env).out.find(id), std::string::npos);
  if (!elsewhere.empty()) {
    EXPECT_EQ(RunCli({"jobs", "--provider", elsewhere}, env).out.find(id), std::string::npos);
  }
  EXPECT_EQ(RunCli({"jobs", "--provider", "nowhere"}, env).exit_code, 3);
  // A queue's waiting jobs in order (none wait now); an unknown queue is not found.
  auto waiting = RunCli({"queues", "vision"}, env);
  EXPECT_EQ(waiting.exit_code, 0) << waiting.err;
  EXPECT_NE(waiting.out.find("waiting in vision, in admission order"), std::string::npos) << waiting.out;
  EXPECT_EQ(RunCli({"queues", "nope"}, env).exit_code, 4);
  auto log = RunCli({"audit", "log", "--action", "job."}, env);
  EXPECT_NE(log.out.find("job.cancel"), std::string::npos) << log.out;
  auto verify = RunCli({"audit", "verify"}, env);
  EXPECT_EQ(verify.exit_code, 0);
  EXPECT_NE(verify.out.find("chain intact"), std::string::npos);

  auto created = RunCli({"--json", "token", "create", "--name", "reader", "--scope", "jobs:read", "--ttl", "1d"}, env);
  ASSERT_EQ(created.exit_code, 0) << created.err;
  json tok = json::parse(created.out);
  std::string secret = tok["secret"], tok_id = tok["token"]["id"];
  auto reader_env = env;
  reader_env["CAUSEWAY_TOKEN"] = secret;
  EXPECT_EQ(RunCli({"jobs"}, reader_env).exit_code, 0);
  EXPECT_EQ(RunCli({"submit", spec}, reader_env).exit_code, 5);
  auto listed = RunCli({"token", "list"}, env);
  EXPECT_NE(listed.out.find("reader"), std::string::npos);
  EXPECT_EQ(listed.out.find(secret), std::string::npos);
  EXPECT_EQ(RunCli({"token", "revoke", tok_id}, env).exit_code, 0);
  EXPECT_EQ(RunCli({"jobs"}, reader_env).exit_code, 5);

  // The token can come from a file, as `make demo` does.
  auto from_file = RunCli({"whoami", "--token-file", dir.path() + "/admin.token"}, {{"CAUSEWAY_SERVER", server->url()}});
  EXPECT_EQ(from_file.exit_code, 0) << from_file.err;
  EXPECT_NE(from_file.out.find("bootstrap-admin"), std::string::npos);
  EXPECT_EQ(RunCli({"jobs"}, {{"CAUSEWAY_SERVER", server->url()}}).exit_code, 5);

  server->Stop(SIGTERM);
  auto down = RunCli({"jobs"}, env);
  EXPECT_EQ(down.exit_code, 7);
  EXPECT_NE(down.err.find("cannot reach the Causeway server"), std::string::npos) << down.err;
}

}  // namespace
}  // namespace causeway::testing

namespace causeway::testing {
namespace {

// Offline, a name outside SkyPilot's catalogue is most likely a typo: refused,
// with what it probably meant; the estate may still sell a type of its own.
TEST(CliTest, ValidateRefusesAnUnknownAcceleratorOffline) {
  TempDir dir("cli-catalogue");
  std::string path = dir.path() + "/j.yaml";
  std::ofstream(path) << "resources: {accelerators: H20O:8}\nservice: {replicas: 2}\n";
  auto r = RunCli({"validate", path});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("unknown accelerator H20O"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("did you mean H200?"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("warning: "), std::string::npos) << "the other notes ride along: " << r.err;
  std::ofstream(path) << "resources: {accelerators: H200:8}\n";
  EXPECT_EQ(RunCli({"validate", path}).exit_code, 0);
}

TEST(CliTest, ValidateWithAnEstateRunsItsPoliciesAndFeasibility) {
  TempDir dir("cli-feasible");
  std::string estate = std::string(CAUSEWAY_SOURCE_DIR) + "/examples/estate.yaml";
  std::string path = dir.path() + "/j.yaml";
  std::ofstream(path) << "resources: {accelerators: A100-80GB:1, labels: {owner: o, team: research}}\nresidency: eu\n";
  auto r = RunCli({"validate", path, "--estate", estate});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no cluster in the estate can ever run this job"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gcp-us-a100: it is in residency zone us, the job must stay in eu"), std::string::npos) << r.err;

  std::ofstream(path) << "resources: {accelerators: L4:1, labels: {owner: o, team: nlp}}\n";
  auto ok = RunCli({"validate", path, "--estate", estate});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.err.find("policy nlp-in-eu set residency to eu"), std::string::npos) << ok.err;

  auto rejected = RunCli({"validate", std::string(CAUSEWAY_SOURCE_DIR) + "/examples/jobs/no-owner.yaml", "--estate", estate});
  EXPECT_EQ(rejected.exit_code, 3);
  EXPECT_NE(rejected.err.find("policy cost-owner"), std::string::npos);
}


// `causeway audit import`: OCSF JSON lines out, a report with file:line for
// what could not be read, and --strict.
TEST(CliTest, AuditImportWritesOcsfAndReportsUnreadableRecords) {
  TempDir dir("audit-import");
  std::string sample = std::string(CAUSEWAY_SOURCE_DIR) + "/examples/audit/k8s-audit.jsonl";
  std::string log = dir.path() + "/k8s.jsonl";
  {
    std::ifstream in(sample);
    std::ofstream out(log);
    out << in.rdbuf() << "{\"kind\": \"Event\", \"verb\": \n";
  }
  std::string events = dir.path() + "/events.jsonl";
  auto r = RunCli({"audit", "import", log, "--source", "k8s", "--provider", "coreweave", "-o", events});
  EXPECT_EQ(r.exit_code, 9) << "a run that refused a record says so in its exit status: " << r.err;
  EXPECT_NE(r.err.find("6 records: 4 events, 1 earlier stages skipped, 0 duplicates, 0 conflicts, 1 unreadable"),
            std::string::npos) << r.err;
  EXPECT_NE(r.err.find(log + ":6: malformed JSON"), std::string::npos) << r.err;
  std::ifstream in(events);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    nlohmann::json ev = nlohmann::json::parse(line);
    EXPECT_EQ(ev["class_uid"], 6003);
    EXPECT_EQ(ev["cloud"]["provider"], "coreweave");
    ++n;
  }
  EXPECT_EQ(n, 4);
  auto strict = RunCli({"audit", "import", log, "--source", "k8s", "--provider", "coreweave", "-o", events, "--strict"});
  EXPECT_EQ(strict.exit_code, 3);
  auto wrong = RunCli({"audit", "import", log, "--source", "splunk", "--provider", "x"});
  EXPECT_EQ(wrong.exit_code, 3);
  EXPECT_NE(wrong.err.find("expected k8s, cloudtrail, gcp, azure, okta or slurm"), std::string::npos) << wrong.err;
  auto missing = RunCli({"audit", "import", dir.path() + "/none.jsonl", "--source", "k8s", "--provider", "x"});
  EXPECT_EQ(missing.exit_code, 4) << missing.err;
}

}  // namespace
}  // namespace causeway::testing
