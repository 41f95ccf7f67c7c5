// Provenance records: the probe as it runs on this machine (facts found, and
// what is not there named with the reason), its output read with bounds,
// facts kept apart by source, the Statement and its read-back, the
// comparison of two runs, a record checked against the server's, and a
// rerun's pins.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "causeway/crypto.h"
#include "causeway/job_spec.h"
#include "provenance/dsse.h"
#include "provenance/facts.h"
#include "provenance/probe.h"
#include "provenance/rerun.h"
#include "provenance/statement.h"
#include "spec/software.h"

namespace causeway::provenance {
namespace {

using nlohmann::json;

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `script` with bash in `dir`, with `env` prepended ("A=b C=d").
int RunBash(const std::string& dir, const std::string& env, const std::string& script) {
  std::string file = dir + "/script.sh";
  std::ofstream(file) << script;
  return std::system(("cd " + dir + " && env " + env + " bash " + file + " > /dev/null 2>&1").c_str());
}

class ProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() / ("cw-probe-" + std::to_string(::getpid()))).string();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(ProbeTest, ReportsThisMachineAndNamesWhatIsNotThere) {
  std::string facts = dir_ + "/job-1.facts";
  ASSERT_EQ(RunBash(dir_, "CAUSEWAY_FACTS_FILE=" + facts, "set -e\n" + ProbeScript() + "echo user command runs\n"), 0);
  std::string text = Slurp(facts + ".0");
  ASSERT_FALSE(text.empty()) << "the probe wrote nothing";
  EXPECT_FALSE(std::filesystem::exists(facts + ".0.tmp")) << "written whole: the temporary file is renamed";
  NodeFacts node = ParseProbe(text);
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  EXPECT_EQ(node.name, host);
  EXPECT_TRUE(node.facts["kernel"].detected()) << text;
  EXPECT_NE(node.facts["kernel"].value.find("Linux"), std::string::npos);
  EXPECT_TRUE(node.facts["os"].detected()) << text;
  EXPECT_TRUE(node.facts["cpu"].detected());
  EXPECT_TRUE(node.facts["memory_mb"].detected());
  EXPECT_TRUE(node.facts["interconnect"].detected());
  EXPECT_FALSE(node.facts["image"].detected()) << "no container image is invented";
  if (std::system("command -v nvidia-smi > /dev/null 2>&1") != 0) {
    // This machine has no NVIDIA driver: the GPU facts say so, and why.
    EXPECT_TRUE(node.gpus.empty());
    EXPECT_NE(node.gpus_not_detected.find("nvidia-smi is not on the PATH"), std::string::npos) << text;
    EXPECT_FALSE(node.facts["driver"].detected());
    EXPECT_NE(node.facts["driver"].not_detected.find("no NVIDIA driver"), std::string::npos);
    EXPECT_FALSE(node.facts["cuda"].detected());
  } else {
    EXPECT_FALSE(node.gpus.empty()) << text;
    EXPECT_TRUE(node.facts["driver"].detected()) << text;
  }
  // Every fact either has a value or says why not.
  for (const auto& [name, fact] : node.facts) {
    EXPECT_TRUE(!fact.value.empty() || !fact.not_detected.empty()) << name;
  }
  // An attempt given no GPU is told apart from a node without a driver.
  ASSERT_EQ(RunBash(dir_, "CAUSEWAY_FACTS_FILE=" + facts + " CUDA_VISIBLE_DEVICES=", ProbeScript()), 0);
  EXPECT_NE(ParseProbe(Slurp(facts + ".0")).gpus_not_detected.find("given no GPU"), std::string::npos);
  // Without the variable, the probe writes nothing and never fails the job.
  std::filesystem::remove(facts + ".0");
  EXPECT_EQ(RunBash(dir_, "X=1", "set -e\n" + ProbeScript() + "exit 0\n"), 0);
  EXPECT_FALSE(std::filesystem::exists(facts + ".0"));
  // An output directory it cannot write costs the facts, not the run.
  EXPECT_EQ(RunBash(dir_, "CAUSEWAY_FACTS_FILE=/proc/nope/x", "set -e\n" + ProbeScript() + "exit 0\n"), 0);
}

TEST_F(ProbeTest, TheWorkdirsGitCommitIsRecorded) {
  if (std::system("command -v git > /dev/null 2>&1") != 0) GTEST_SKIP() << "git is not installed";
  std::string repo = dir_ + "/repo", facts = dir_ + "/job-2.facts";
  ASSERT_EQ(std::system(("git init -q " + repo + " && cd " + repo +
                         " && git -c user.email=t@e -c user.name=t commit -q --allow-empty -m one").c_str()),
            0);
  std::string head = Slurp(repo + "/.git/HEAD");
  std::string commit;
  FILE* p = ::popen(("git -C " + repo + " rev-parse HEAD").c_str(), "r");
  char buf[64] = {};
  if (p && std::fgets(buf, sizeof buf, p)) commit = std::string(buf).substr(0, 40);
  if (p) ::pclose(p);
  ASSERT_EQ(commit.size(), 40u);
  ASSERT_EQ(RunBash(dir_, "CAUSEWAY_FACTS_FILE=" + facts, ProbeScript() + "cd " + repo + "\n" + CodeRevisionScript()), 0);
  NodeFacts node = ParseProbe(Slurp(facts + ".0"));
  EXPECT_EQ(node.facts["code_revision"].value, commit);
  // Not a checkout: said so.
  ASSERT_EQ(RunBash(dir_, "CAUSEWAY_FACTS_FILE=" + facts, ProbeScript() + "cd /\n" + CodeRevisionScript()), 0);
  EXPECT_NE(ParseProbe(Slurp(facts + ".0")).facts["code_revision"].not_detected.find("not a git checkout"),
            std::string::npos);
}

TEST(ParseProbeTest, ReadsFactsWithinBoundsAndSkipsTheRest) {
  std::string text =
      "+node\tgpu-node-7\n"
      "+gpu\t0, NVIDIA H100 80GB HBM3, GPU-4b5f2d9e-aaaa-bbbb-cccc-0123456789ab, 550.54.15, 81559\n"
      "+gpu\t1, NVIDIA H100 80GB HBM3, GPU-1111, 550.54.15, 81559\n"
      "+cuda\t12.4\n"
      "-torch\ttorch is not importable\n"
      "garbage line\n"
      "+BAD NAME\tx\n"
      "+kernel\t" + std::string(5000, 'k') + "\n"
      "+os\tUbuntu\x01\x1b[31m 22.04\n";
  NodeFacts n = ParseProbe(text);
  EXPECT_EQ(n.name, "gpu-node-7");
  ASSERT_EQ(n.gpus.size(), 2u);
  EXPECT_EQ(n.gpus[0].model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(n.gpus[0].uuid, "GPU-4b5f2d9e-aaaa-bbbb-cccc-0123456789ab");
  EXPECT_EQ(n.gpus[0].memory_mib, "81559");
  EXPECT_EQ(n.facts["driver"].value, "550.54.15") << "the driver is the GPUs'";
  EXPECT_EQ(n.facts["cuda"].value, "12.4");
  EXPECT_EQ(n.facts["torch"].not_detected, "torch is not importable");
  EXPECT_EQ(n.facts["kernel"].value.size(), kMaxFactValueBytes);
  EXPECT_EQ(n.facts["os"].value, "Ubuntu[31m 22.04") << "control characters are dropped";
  EXPECT_EQ(n.facts.count("BAD NAME"), 0u);
  // Bounded: many names, many GPUs, a huge file.
  std::string flood;
  for (int i = 0; i < 500; ++i) flood += "+f" + std::to_string(i) + "\tv\n+gpu\t" + std::to_string(i) + ", X, U, D, M\n";
  NodeFacts f = ParseProbe(flood + std::string(1 << 20, 'x'));
  EXPECT_LE(f.facts.size(), kMaxFactsPerNode + 1);  // + the driver
  EXPECT_EQ(f.gpus.size(), kMaxGpusPerNode);
}

TEST(VersionRequirementTest, MatchesAsDocumented) {
  auto req = [](const char* t) { return *ParseVersionRequirement(t); };
  EXPECT_TRUE(req(">=12.4").Matches("12.4"));
  EXPECT_TRUE(req(">=12.4").Matches("12.10"));
  EXPECT_FALSE(req(">=12.4").Matches("12.2"));
  EXPECT_TRUE(req("12.4").Matches("12.4.1"));
  EXPECT_FALSE(req("12.4").Matches("12.40"));
  EXPECT_TRUE(req("550.54.15").Matches("550.54.15"));
  EXPECT_FALSE(req("550.54.15").Matches("550.54.14"));
  EXPECT_TRUE(req("<13").Matches("12.9"));
  EXPECT_FALSE(req("!=12.3").Matches("12.3"));
  EXPECT_FALSE(req(">=12.4").Matches(""));
  for (const char* bad : {"", ">=", "twelve", "12..4", ">= 12.4; rm -rf /", "=>12"}) {
    EXPECT_FALSE(ParseVersionRequirement(bad).ok()) << bad;
  }
}

TEST(JobSpecSoftwareTest, CudaAndDriverRequirementsAreReadAndChecked) {
  auto p = ParseJobSpec("resources: {accelerators: H100:8, cuda: \">=12.4\", driver: 550.54.15}\nrun: x\n", "j.yaml");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->spec.cuda, ">=12.4");
  EXPECT_EQ(p->spec.driver, "550.54.15");
  auto bad = ParseJobSpec("resources:\n  accelerators: H100:8\n  cuda: latest\n", "j.yaml");
  ASSERT_FALSE(bad.ok());
  ASSERT_FALSE(bad.status().diagnostics().empty());
  EXPECT_EQ(bad.status().diagnostics()[0].field, "resources.cuda");
  EXPECT_EQ(bad.status().diagnostics()[0].line, 3);
}

JobHistory History() {
  JobHistory h;
  h.job.id = "job_01JTEST00000000000000000000";
  h.job.name = "train";
  h.job.team = "nlp";
  h.job.owner = "alice";
  h.job.state = JobState::kSucceeded;
  h.job.spec_yaml = "name: train\nresources: {accelerators: [H100:8, A100-80GB:8]}\n"
                    "datasets: [{name: c4, version: \"2024-05\"}]\nrun: python train.py\n";
  auto parsed = ParseJobSpec(h.job.spec_yaml, "train.yaml");
  EXPECT_TRUE(parsed.ok());
  h.job.spec_json = R"({})";
  h.job.submitted_by = "tok_alice";
  Estate estate;
  Attempt a1;
  a1.job_id = h.job.id;
  a1.number = 1;
  a1.cluster = "cw-h100";
  a1.pool = "h100";
  a1.state = "node_failure";
  a1.failure_class = "node_fault";
  a1.gpus = 8;
  a1.cost_micros = 20'000'000;
  AttemptFacts f1;
  f1.placement = Placed{"coreweave", "cw-h100", "us-east-04", "us", "h100", "H100", "infiniband", 8, 1};
  f1.declared = {{"driver", "550.54.15"}, {"cuda", "12.4"}};
  AddProbe(f1, {}, false, "the simulated estate");
  a1.facts = ToJson(f1).dump();
  Attempt a2 = a1;
  a2.number = 2;
  a2.cluster = "gcp-a100";
  a2.pool = "a100";
  a2.state = "succeeded";
  a2.failure_class = "";
  a2.resumed_from = "s3://ckpt/step-100";
  AttemptFacts f2;
  f2.placement = Placed{"gcp", "gcp-a100", "us-central1", "us", "a100", "A100-80GB", "ethernet", 8, 1};
  f2.declared = {{"driver", "535.183.01"}, {"cuda", "12.2"}};
  AddProbe(f2, {"+node\tn1\n+cuda\t12.2\n+interconnect\tethernet (no InfiniBand device in /sys/class/infiniband)\n"
                "+gpu\t0, NVIDIA A100-SXM4-80GB, GPU-aaaa, 535.183.01, 81920\n"},
           true, "Slurm");
  a2.facts = ToJson(f2).dump();
  h.attempts = {a1, a2};
  h.checkpoints = {Checkpoint{h.job.id, 1, 1, "s3://ckpt/step-100", 100, {}, "sha256:" + std::string(64, 'a')}};
  h.facts = {JobFact{h.job.id, 1, 2, "mlflow.run_id", "\"3f2a\"", "cred_job", {}},
             JobFact{h.job.id, 2, 2, "artifact:model.safetensors", R"({"digest":"sha256:)" + std::string(64, 'b') + "\"}",
                     "cred_job", {}}};
  h.audit = AuditRange{10, 42, 17};
  return h;
}

TEST(StatementTest, IsAnInTotoStatementWithTheJobsWholeHistory) {
  JobHistory h = History();
  json s = BuildStatement(h, Estate{}, Builder{"http://causeway.example:8080", "0.1.0", "USD"});
  EXPECT_EQ(s["_type"], kStatementType);
  EXPECT_EQ(s["predicateType"], kSlsaPredicateType);
  // Subjects: the digested checkpoint and artifact.
  ASSERT_EQ(s["subject"].size(), 2u);
  EXPECT_EQ(s["subject"][0]["name"], "s3://ckpt/step-100");
  EXPECT_EQ(s["subject"][0]["digest"]["sha256"], std::string(64, 'a'));
  EXPECT_EQ(s["subject"][1]["name"], "model.safetensors");
  const json& def = s["predicate"]["buildDefinition"];
  EXPECT_EQ(def["buildType"], kBuildType);
  EXPECT_EQ(def["externalParameters"]["spec_sha256"], Sha256Hex(h.job.spec_yaml));
  EXPECT_EQ(def["internalParameters"]["submitted_by"], "tok_alice");
  const json& run = s["predicate"]["runDetails"];
  EXPECT_EQ(run["builder"]["id"], "http://causeway.example:8080");
  EXPECT_EQ(run["metadata"]["invocationId"], h.job.id);
  // Lineage: both attempts, how each ended, who acts next, where the second
  // resumed from, and each one's cost.
  const json& by = run["byproducts"];
  ASSERT_EQ(by.size(), 4u);  // two attempts, the job's facts, the audit range
  EXPECT_EQ(by[0]["annotations"]["state"], "node_failure");
  EXPECT_EQ(by[0]["annotations"]["next_action_owner"], "provider");
  EXPECT_EQ(by[0]["annotations"]["checkpoints"][0]["path"], "s3://ckpt/step-100");
  EXPECT_EQ(by[1]["annotations"]["resumed_from"], "s3://ckpt/step-100");
  EXPECT_EQ(by[1]["annotations"]["cost_micros"], 20'000'000);
  EXPECT_EQ(by[2]["annotations"]["facts"][0]["name"], "mlflow.run_id");
  EXPECT_EQ(by[3]["annotations"]["first_seq"], 10);
  EXPECT_EQ(by[3]["annotations"]["events"], 17);
  // The same history, the same bytes.
  EXPECT_EQ(BuildStatement(h, Estate{}, Builder{"http://causeway.example:8080", "0.1.0", "USD"}).dump(), s.dump());

  // With no output digested, the subject is the spec that ran.
  h.checkpoints[0].digest.clear();
  h.facts.pop_back();
  json bare = BuildStatement(h, Estate{}, Builder{});
  ASSERT_EQ(bare["subject"].size(), 1u);
  EXPECT_EQ(bare["subject"][0]["digest"]["sha256"], Sha256Hex(h.job.spec_yaml));
}

TEST(StatementTest, TheDiffOfTwoAttemptsNamesTheClusterGpuAndInterconnect) {
  json s = BuildStatement(History(), Estate{}, Builder{});
  auto a = Summarize(s, 1), b = Summarize(s, 2);
  ASSERT_TRUE(a.ok() && b.ok());
  std::map<std::string, Difference> diffs;
  for (const Difference& d : Diff(*a, *b)) diffs[d.field] = d;
  EXPECT_EQ(diffs["cluster"].a, "cw-h100");
  EXPECT_EQ(diffs["cluster"].b, "gcp-a100");
  EXPECT_EQ(diffs["gpu_model"].a, "H100") << "declared by the estate";
  EXPECT_EQ(diffs["gpu_model"].b, "NVIDIA A100-SXM4-80GB") << "found by the probe";
  EXPECT_EQ(diffs["interconnect"].a, "infiniband");
  EXPECT_NE(diffs["interconnect"].b.find("ethernet"), std::string::npos);
  EXPECT_EQ(diffs["cuda"].a, "12.4");
  EXPECT_EQ(diffs["cuda"].b, "12.2");
  EXPECT_EQ(diffs["started_from"].b, "s3://ckpt/step-100");
  EXPECT_EQ(diffs.count("nodes"), 0u) << "the same shape is not a difference";
  EXPECT_FALSE(Summarize(s, 3).ok());
  EXPECT_FALSE(Summarize(json{{"_type", "x"}}).ok());
}

TEST(StatementTest, ARecordIsComparedWithTheServersOwn) {
  JobHistory h = History();
  json record = BuildStatement(h, Estate{}, Builder{});
  EXPECT_TRUE(CompareRecords(record, record).empty());
  // The job went on: more audit events is no disagreement.
  h.audit.last = 50;
  h.audit.count = 20;
  EXPECT_TRUE(CompareRecords(record, BuildStatement(h, Estate{}, Builder{})).empty());
  // An attempt rewritten, or gone, is.
  JobHistory changed = History();
  changed.attempts[0].cost_micros = 1;
  EXPECT_FALSE(CompareRecords(record, BuildStatement(changed, Estate{}, Builder{})).empty());
  JobHistory fewer = History();
  fewer.attempts.pop_back();
  EXPECT_FALSE(CompareRecords(record, BuildStatement(fewer, Estate{}, Builder{})).empty());
  JobHistory digest = History();
  digest.checkpoints[0].digest = "sha256:" + std::string(64, 'c');
  EXPECT_FALSE(CompareRecords(record, BuildStatement(digest, Estate{}, Builder{})).empty());
}

TEST(RerunTest, PinsWhatTheLastAttemptRanOn) {
  JobHistory h = History();
  Estate estate;
  Cluster other;
  other.name = "nebius-h100";
  other.provider = "nebius";
  other.region = "eu-north1";
  estate.clusters.push_back(other);
  auto plan = PlanRerun(h, estate, "nebius-h100");
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::map<std::string, std::string> pins;
  for (const Pin& p : plan->pins) pins[p.field] = p.value;
  EXPECT_EQ(pins["resources.accelerators"], "A100-80GB:8");
  EXPECT_EQ(pins["num_nodes"], "1");
  EXPECT_EQ(pins["resources.cuda"], ">=12.2");
  EXPECT_EQ(pins["resources.driver"], "535.183.01");
  EXPECT_EQ(pins["resources.infra"], "nebius/eu-north1");
  // The pinned spec is a job spec Causeway reads back.
  auto parsed = ParseJobSpec(plan->yaml, "rerun.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString() << "\n" << plan->yaml;
  EXPECT_EQ(parsed->spec.accelerators.alternatives.size(), 1u);
  EXPECT_EQ(parsed->spec.cuda, ">=12.2");
  EXPECT_EQ(parsed->spec.cloud, "nebius");
  EXPECT_EQ(parsed->spec.name, "train-rerun");
  EXPECT_EQ(parsed->spec.datasets.size(), 1u);
  EXPECT_EQ(PlanRerun(h, estate, "nowhere").status().code(), Code::kNotFound);
  h.attempts.clear();
  EXPECT_EQ(PlanRerun(h, estate, "").status().code(), Code::kFailedPrecondition);
}

}  // namespace
}  // namespace causeway::provenance
