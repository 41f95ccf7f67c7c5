// SkyPilot task forms, written from SkyPilot's documentation, read by
// SkyPilot's own parser (sky.Task.from_yaml, tests/oracle/skypilot_task.py)
// and by `causeway validate`: the same accelerators and alternatives (each
// with its cloud, region and spot), preference order, nodes, envs and mount
// targets. SkyPilot comes from PyPI, pinned (scripts/install-deps.sh test);
// where it could not be installed the test skips and says why.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cached_peer.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

std::string SkyPython() {
  if (const char* p = std::getenv("CAUSEWAY_SKYPILOT_PYTHON"); p && *p) return p;
  return CachedPeer("CAUSEWAY_SKYPILOT_VENV", "skypilot-0.14.1") + "/bin/python";
}

// Standard output of `command`, and whether it exited 0.
std::pair<std::string, bool> Shell(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return {"", false};
  std::string out;
  char buf[4096];
  while (size_t n = std::fread(buf, 1, sizeof buf, pipe)) out.append(buf, n);
  int status = ::pclose(pipe);
  return {out, WIFEXITED(status) && WEXITSTATUS(status) == 0};
}

// One alternative as a comparable string.
std::string Key(const json& a) {
  return a.value("type", "") + ":" + std::to_string(a.value("count", 0)) + " cloud=" + a.value("cloud", "") +
         " region=" + a.value("region", "") + " spot=" + (a.value("use_spot", false) ? "yes" : "no");
}

struct Form {
  const char* name;
  const char* yaml;
  const char* estate = nullptr;  // validated against this estate too
};

// Two Kubernetes clusters (contexts kc-a and kc-b) beside a simulated one.
constexpr const char* kKubernetesEstate =
    "providers:\n"
    "  - {name: coreweave, kind: kubernetes, regions: [{name: us-east-04, zone: us}]}\n"
    "  - {name: nebius, kind: kubernetes, regions: [{name: eu-north1, zone: eu}]}\n"
    "  - {name: lab, kind: sim, regions: [{name: r1, zone: us}]}\n"
    "clusters:\n"
    "  - name: kc-a\n    provider: coreweave\n    region: us-east-04\n"
    "    node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 4}]\n"
    "    kubernetes: {api_server: \"https://127.0.0.1:1\", ca_file: /dev/null, token_file: /dev/null, namespace_prefix: team-}\n"
    "  - name: kc-b\n    provider: nebius\n    region: eu-north1\n"
    "    node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 4}]\n"
    "    kubernetes: {api_server: \"https://127.0.0.1:1\", ca_file: /dev/null, token_file: /dev/null, namespace: causeway}\n"
    "  - name: lab-h100\n    provider: lab\n    region: r1\n"
    "    node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 4}]\n";

// Each a form SkyPilot's documentation gives for a task file.
const Form kForms[] = {
    {"single_gpu_type_nodes_envs",
     "name: train\nresources:\n  accelerators: H100:8\nnum_nodes: 2\nenvs:\n  EPOCHS: 3\n  MODEL: llama\nrun: echo\n"},
    {"accelerator_set_several_counts", "resources:\n  accelerators: {A100:4, A100:8, A100-80GB:2}\nrun: echo\n"},
    {"accelerator_list_is_ordered", "resources:\n  accelerators: [H100:8, A100-80GB:8]\nrun: echo\n"},
    {"any_of_clouds", "resources:\n  accelerators: A100:8\n  any_of:\n    - infra: aws\n    - infra: gcp\nrun: echo\n"},
    {"ordered_regions_and_types",
     "resources:\n  ordered:\n    - infra: gcp/us-central1\n      accelerators: L4:1\n"
     "    - infra: aws/us-east-1\n      accelerators: A10G:1\nrun: echo\n"},
    {"any_of_spot_or_not",
     "resources:\n  accelerators: H100:8\n  any_of:\n    - use_spot: true\n    - use_spot: false\nrun: echo\n"},
    {"cpu_only_with_cpus_and_memory", "resources:\n  infra: gcp\n  cpus: 4+\n  memory: 32+\nrun: echo\n"},
    {"cloud_and_region_older_form", "resources:\n  cloud: aws\n  region: us-west-2\n  accelerators: V100:4\nrun: echo\n"},
    {"spot_with_infra", "resources:\n  infra: gcp\n  accelerators: {L4: 1}\n  use_spot: true\nrun: echo\n"},
    {"file_mounts_forms",
     "resources:\n  accelerators: L4:1\nfile_mounts:\n  /data: s3://my-bucket/data\n"
     "  /ckpt:\n    name: my-ckpt-bucket\n    mode: MOUNT\nrun: echo\n"},
    {"storage_objects_every_key",
     "resources:\n  accelerators: L4:1\nfile_mounts:\n  /datasets:\n    source: s3://my-bucket/ds\n    store: s3\n"
     "    mode: mount_cached\n    persistent: false\n  /out:\n    name: my-out-bucket\n    store: gcs\n    mode: MOUNT\n"
     "  ~/.netrc: ~/.netrc\nrun: echo\n"},
    {"workdir_git", "workdir:\n  url: https://github.com/skypilot-org/skypilot.git\n  ref: v0.10.3\nrun: echo\n"},
    {"workdir_path", "workdir: ~/my-code\nrun: echo\n"},
    {"envs_and_secrets", "envs:\n  LR: \"1e-4\"\n  EMPTY: \"\"\nsecrets:\n  HF_TOKEN: hf-from-file\nrun: echo\n"},
    // SkyPilot fills envs (and secrets) into mount targets, sources, bucket
    // names and store; a name it does not know stays as written.
    {"variables_in_file_mounts",
     "envs:\n  DATASET_ROOT: /datasets\n  BUCKET: team-data\n  STORE: s3\n  SIZE: \"7\"\n"
     "file_mounts:\n  ${DATASET_ROOT}/train: s3://$BUCKET/train-${SIZE}b\n"
     "  /models/llama-${SIZE}b: s3://llama-weights/llama-${SIZE}b\n"
     "  /ckpt:\n    name: ${BUCKET}-ckpt\n    store: $STORE\n    mode: MOUNT\n"
     "  /other: s3://$UNKNOWN_BUCKET/x\nrun: echo\n"},
    // Kubernetes as SkyPilot names it: the cloud (or its alias k8s), and a
    // context as the region; checked against an estate that has both.
    {"infra_k8s", "resources:\n  infra: k8s\n  accelerators: H100:8\nrun: echo\n", kKubernetesEstate},
    {"infra_kubernetes_context",
     "resources:\n  infra: kubernetes/kc-b\n  accelerators: H100:8\n  image_id: docker:nvcr.io/nvidia/pytorch:24.05-py3\n"
     "run: echo\n",
     kKubernetesEstate},
    {"cloud_kubernetes_any_of",
     "resources:\n  accelerators: H100:8\n  any_of:\n    - cloud: kubernetes\n    - infra: k8s/kc-a\nrun: echo\n",
     kKubernetesEstate},
};

// Causeway's reading of one task (validate's spec) against SkyPilot's.
void ExpectSameTask(const json& spec, const json& sky) {
  EXPECT_EQ(spec["num_nodes"], sky["num_nodes"]);
  EXPECT_EQ(spec["envs"], sky["envs"]);
  std::set<std::string> mounts;
  for (const json& m : spec["file_mounts"]) mounts.insert(m["target"].get<std::string>());
  EXPECT_EQ(mounts, sky["file_mounts"].get<std::set<std::string>>());
  for (const json& m : spec["file_mounts"]) {
    const std::string target = m["target"];
    if (sky["mount_sources"].contains(target)) {
      EXPECT_EQ(m["source"], sky["mount_sources"][target]) << target;
    } else if (sky["storage"].contains(target)) {
      const json& theirs = sky["storage"][target];
      if (!theirs["name"].get<std::string>().empty()) {
        EXPECT_EQ(m.value("name", ""), theirs["name"]) << target;
      }
      if (!theirs["source"].get<std::string>().empty()) {
        EXPECT_EQ(m["source"], theirs["source"]) << target;
      }
    }
  }
  EXPECT_EQ(spec["secrets"], sky["secrets"]);
  if (sky["workdir"].is_string()) {
    EXPECT_EQ(spec["workdir"], sky["workdir"]);
  } else if (!sky["workdir"].empty()) {
    EXPECT_EQ(spec["workdir_git"]["url"], sky["workdir"]["url"]);
    EXPECT_EQ(spec["workdir_git"]["ref"], sky["workdir"].value("ref", ""));
  }
  std::set<std::string> theirs, mine;
  for (const json& a : sky["alternatives"]) theirs.insert(Key(a));
  for (const json& a : spec["accelerators"]) mine.insert(Key(a));
  EXPECT_EQ(mine, theirs);
  EXPECT_EQ(spec["accelerators_ordered"].get<bool>() && spec["accelerators"].size() > 1, sky["ordered"].get<bool>());
}

bool HaveSkyPilot(const std::string& python) {
  return std::filesystem::exists(python) && Shell(python + " -c 'import sky' 2>/dev/null").second;
}

// The form read by both: SkyPilot's parser (the oracle script with
// `oracle_flags`) and `causeway validate --json`. Skipped where SkyPilot
// could not be installed.
class OracleTest : public ::testing::TestWithParam<Form> {
 protected:
  void SetUp() override {
    if (!HaveSkyPilot(python_)) {
      GTEST_SKIP() << "SkyPilot's parser is not installed at " << python_
                   << " (scripts/install-deps.sh test installs it from PyPI; set CAUSEWAY_SKYPILOT_PYTHON)";
    }
  }
  void ReadBoth(const std::string& oracle_flags, json& sky, json& ours) {
    std::string file = dir_.path() + "/task.yaml";
    std::ofstream(file) << GetParam().yaml;
    auto [sky_out, sky_ok] = Shell(python_ + " " + std::string(CAUSEWAY_SOURCE_DIR) + "/tests/oracle/skypilot_task.py " +
                                   oracle_flags + file + " 2>/dev/null");
    ASSERT_TRUE(sky_ok) << "SkyPilot refused the form: " << sky_out;
    // The JSON is the last line: SkyPilot's loaders may log before it.
    std::string last = sky_out.substr(0, sky_out.find_last_not_of('\n') + 1);
    sky = json::parse(last.substr(last.find_last_of('\n') + 1));
    std::vector<std::string> args = {"--json", "validate", file};
    if (GetParam().estate) {
      std::ofstream(dir_.path() + "/estate.yaml") << GetParam().estate;
      args = {"--json", "validate", "--estate", dir_.path() + "/estate.yaml", file};
    }
    auto validated = RunCli(args);
    ASSERT_EQ(validated.exit_code, 0) << validated.out << validated.err;
    ours = json::parse(validated.out);
  }
  std::string python_ = SkyPython();
  TempDir dir_{"skypilot-oracle"};
};

class SkyPilotOracleTest : public OracleTest {};

TEST_P(SkyPilotOracleTest, CausewayReadsTheFileAsSkyPilotDoes) {
  json sky, ours;
  ASSERT_NO_FATAL_FAILURE(ReadBoth("", sky, ours));
  ExpectSameTask(ours["spec"], sky);
}

INSTANTIATE_TEST_SUITE_P(Forms, SkyPilotOracleTest, ::testing::ValuesIn(kForms),
                         [](const auto& info) { return std::string(info.param.name); });

// Pipelines (SkyPilot's chain DAGs): the same steps in the same order, each
// read as SkyPilot reads it, and the same pipeline name.
const Form kPipelines[] = {
    {"named_pipeline",
     "name: nightly\n---\nname: prep\nresources: {accelerators: L4:1}\nrun: echo\n---\nname: train\n"
     "num_nodes: 2\nresources:\n  accelerators: {A100:8, H100:8}\nrun: echo\n"},
    {"unnamed_steps", "run: echo a\n---\nresources: {accelerators: H100:8}\nenvs: {X: y}\nrun: echo b\n"},
    {"explicit_serial_header", "name: chain\nexecution: serial\n---\nname: a\nrun: echo\n---\nname: b\nrun: echo\n"},
    {"marker_first_and_comments",
     "---\n# prepare\nname: a\nrun: echo\n--- # then train\nname: b\nresources:\n  any_of:\n"
     "    - {infra: aws, accelerators: A100:8}\n    - {infra: gcp, accelerators: H100:8}\nrun: echo\n"},
};

class SkyPilotPipelineOracleTest : public OracleTest {};

TEST_P(SkyPilotPipelineOracleTest, CausewayReadsThePipelineAsSkyPilotDoes) {
  json sky, ours;
  ASSERT_NO_FATAL_FAILURE(ReadBoth("--dag ", sky, ours));
  json pipeline = ours["pipeline"];
  EXPECT_EQ(pipeline["name"], sky["name"]);
  ASSERT_EQ(pipeline["steps"].size(), sky["tasks"].size()) << ours.dump(2);
  for (size_t i = 0; i < sky["tasks"].size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i + 1));
    EXPECT_EQ(pipeline["steps"][i].value("name", ""), sky["tasks"][i]["name"]);
    ExpectSameTask(pipeline["steps"][i], sky["tasks"][i]);
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, SkyPilotPipelineOracleTest, ::testing::ValuesIn(kPipelines),
                         [](const auto& info) { return std::string(info.param.name); });

// Job groups (SkyPilot's parallel DAGs): the same tasks, each read as
// SkyPilot reads it, the same primary and auxiliary tasks, and the same
// termination delay for each auxiliary one.
const Form kGroups[] = {
    {"all_primary", "name: train-eval\nexecution: parallel\n---\nname: trainer\nresources: {accelerators: A100:1}\n"
                    "run: echo\n---\nname: evaluator\nresources: {accelerators: A100:1}\nrun: echo\n"},
    {"primary_and_one_delay",
     "name: rl\nexecution: parallel\nprimary_tasks: [ppo-trainer]\ntermination_delay: 30s\n---\n"
     "name: ppo-trainer\nnum_nodes: 2\nresources: {accelerators: H100:8}\nrun: echo\n---\n"
     "name: rollout-server\nresources:\n  accelerators: {L4: 1, A10G: 1}\nrun: echo\n---\n"
     "name: replay_buffer\nresources: {cpus: 8+, memory: 64+}\nenvs: {SIZE: \"1000\"}\nrun: echo\n"},
    {"delay_per_task_and_default",
     "name: rl2\nexecution: parallel\nprimary_tasks: [trainer]\ntermination_delay:\n  default: 1m\n  buffer: 90\n"
     "inter_connection: false\n---\nname: trainer\nresources: {accelerators: H100:1}\nrun: echo\n---\n"
     "name: buffer\nrun: echo\n---\nname: server\nresources: {accelerators: L4:1}\nrun: echo\n"},
};

class SkyPilotJobGroupOracleTest : public OracleTest {};

TEST_P(SkyPilotJobGroupOracleTest, CausewayReadsTheJobGroupAsSkyPilotDoes) {
  json sky, ours;
  ASSERT_NO_FATAL_FAILURE(ReadBoth("--group ", sky, ours));
  ASSERT_TRUE(sky["job_group"].get<bool>());
  json group = ours["pipeline"];
  EXPECT_EQ(group["name"], sky["name"]);
  EXPECT_EQ(group["execution"], "parallel");
  ASSERT_EQ(group["steps"].size(), sky["tasks"].size()) << ours.dump(2);
  ASSERT_EQ(group["tasks"].size(), sky["tasks"].size()) << ours.dump(2);
  for (size_t i = 0; i < sky["tasks"].size(); ++i) {
    SCOPED_TRACE("task " + std::to_string(i + 1));
    EXPECT_EQ(group["steps"][i].value("name", ""), sky["tasks"][i]["name"]);
    ExpectSameTask(group["steps"][i], sky["tasks"][i]);
    EXPECT_EQ(group["tasks"][i]["auxiliary"], sky["tasks"][i]["auxiliary"]);
    EXPECT_EQ(group["tasks"][i]["termination_delay_seconds"], sky["tasks"][i]["termination_delay_seconds"]);
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, SkyPilotJobGroupOracleTest, ::testing::ValuesIn(kGroups),
                         [](const auto& info) { return std::string(info.param.name); });

// Job groups SkyPilot refuses: Causeway refuses them too.
const Form kBadGroups[] = {
    {"task_without_a_name", "name: g\nexecution: parallel\n---\nname: a\nrun: echo\n---\nrun: echo\n"},
    {"same_name_twice", "name: g\nexecution: parallel\n---\nname: a\nrun: echo\n---\nname: a\nrun: echo\n"},
    {"unknown_primary_task", "name: g\nexecution: parallel\nprimary_tasks: [b]\n---\nname: a\nrun: echo\n"},
    {"bad_delay", "name: g\nexecution: parallel\nprimary_tasks: [a]\ntermination_delay: soon\n---\nname: a\n"
                  "run: echo\n---\nname: x\nrun: echo\n"},
    {"delay_for_unknown_task",
     "name: g\nexecution: parallel\ntermination_delay: {y: 5m}\n---\nname: a\nrun: echo\n"},
    {"group_name_with_a_space", "name: my group\nexecution: parallel\n---\nname: a\nrun: echo\n"},
};

class SkyPilotBadJobGroupOracleTest : public OracleTest {};

TEST_P(SkyPilotBadJobGroupOracleTest, CausewayRefusesWhatSkyPilotRefuses) {
  std::string file = dir_.path() + "/group.yaml";
  std::ofstream(file) << GetParam().yaml;
  auto [sky_out, sky_ok] = Shell(python_ + " " + std::string(CAUSEWAY_SOURCE_DIR) +
                                 "/tests/oracle/skypilot_task.py --group " + file + " 2>&1");
  EXPECT_FALSE(sky_ok) << "SkyPilot accepted it: " << sky_out;
  auto validated = RunCli({"validate", file});
  EXPECT_NE(validated.exit_code, 0) << validated.out;
  EXPECT_NE(validated.err.find("group.yaml:"), std::string::npos) << "with the place: " << validated.err;
}

INSTANTIATE_TEST_SUITE_P(Forms, SkyPilotBadJobGroupOracleTest, ::testing::ValuesIn(kBadGroups),
                         [](const auto& info) { return std::string(info.param.name); });

// Service sections (SkyPilot Serve), as SkyPilot's serving docs write
// them: SkyServiceSpec reads each, and `causeway validate --json` must read
// every field the same, SkyPilot's defaults included.
const Form kServices[] = {
    {"probe_path_and_replicas",
     "service:\n  readiness_probe: /health\n  replicas: 2\nresources: {accelerators: L4:1, ports: 8080}\nrun: echo\n"},
    {"vllm_autoscaled",
     "service:\n  readiness_probe:\n    path: /v1/chat/completions\n    post_data:\n      model: meta-llama/Llama-3.1-8B-Instruct\n"
     "      messages: [{role: user, content: Hello}]\n      max_tokens: 1\n    initial_delay_seconds: 1200\n"
     "  replica_policy:\n    min_replicas: 2\n    max_replicas: 6\n    target_qps_per_replica: 2.5\n"
     "    upscale_delay_seconds: 300\n    downscale_delay_seconds: 1200\n  ports: 8081\n"
     "resources: {accelerators: {L4: 1, A10G: 1}, ports: 8081}\nrun: echo\n"},
    {"spot_with_fallback",
     "service:\n  readiness_probe: /\n  replica_policy:\n    min_replicas: 1\n    max_replicas: 3\n"
     "    target_qps_per_replica: 1\n    dynamic_ondemand_fallback: true\n    base_ondemand_fallback_replicas: 1\n"
     "    spot_placer: DYNAMIC_FALLBACK\n    num_overprovision: 1\nresources: {accelerators: A100:1, use_spot: true}\nrun: echo\n"},
    {"instance_aware",
     "service:\n  readiness_probe: /health\n  load_balancing_policy: instance_aware_least_load\n  replica_policy:\n"
     "    min_replicas: 1\n    max_replicas: 4\n    target_qps_per_replica: {L4: 5, \"A100:1\": 10.5}\n"
     "resources:\n  accelerators: {L4: 1, A100: 1}\nrun: echo\n"},
    {"probe_details_tls_and_stream_timeout",
     "service:\n  readiness_probe:\n    path: /ready\n    post_data: '{\"input\": \"ping\"}'\n    timeout_seconds: 5\n"
     "    endpoint_probe_interval_seconds: 1\n    consecutive_failure_threshold_timeout: 30\n"
     "    headers: {Authorization: Bearer probe-token, X-Probe: \"1\"}\n"
     "  load_balancer: {stream_timeout_seconds: 600}\n  load_balancing_policy: round_robin\n  replicas: 1\n"
     "  tls: {keyfile: ~/certs/key.pem, certfile: ~/certs/cert.pem}\nrun: echo\n"},
    {"workers_alone", "service:\n  workers: 3\nrun: echo\n"},
    {"pool_autoscaled", "service:\n  pool: {min_workers: 1, max_workers: 4, queue_length_threshold: 2}\nrun: echo\n"},
};

// Service sections SkyPilot refuses: Causeway refuses them too, each with
// its place; keys of older schemas are refused with the accepted ones.
const Form kBadServices[] = {
    {"replicas_and_policy", "service:\n  replicas: 2\n  replica_policy: {min_replicas: 1}\n"},
    {"misspelt_key", "service:\n  replica: 2\n"},
    {"older_schema_auto_restart", "service:\n  replica_policy: {min_replicas: 1, auto_restart: true}\n"},
    {"older_schema_qps_threshold", "service:\n  replica_policy: {min_replicas: 1, max_replicas: 2, qps_upper_threshold: 5}\n"},
    {"port_out_of_range", "service:\n  ports: 70000\n"},
    {"post_data_not_json", "service:\n  readiness_probe: {path: /, post_data: '{oops'}\n"},
    {"path_without_slash", "service:\n  readiness_probe: health\n"},
    {"probe_without_path", "service:\n  readiness_probe: {initial_delay_seconds: 5}\n"},
    {"max_below_min", "service:\n  replica_policy: {min_replicas: 3, max_replicas: 2, target_qps_per_replica: 1}\n"},
    {"target_without_max", "service:\n  replica_policy: {min_replicas: 1, target_qps_per_replica: 1}\n"},
    {"range_without_target", "service:\n  replica_policy: {min_replicas: 1, max_replicas: 3}\n"},
    {"instance_aware_with_a_number",
     "service:\n  load_balancing_policy: instance_aware_least_load\n"
     "  replica_policy: {min_replicas: 1, max_replicas: 2, target_qps_per_replica: 3}\n"},
    {"per_accelerator_without_instance_aware",
     "service:\n  replica_policy: {min_replicas: 1, max_replicas: 2, target_qps_per_replica: {L4: 3}}\n"},
    {"unknown_policy", "service:\n  load_balancing_policy: fastest\n"},
    {"policy_in_capitals", "service:\n  load_balancing_policy: ROUND_ROBIN\n"},
    {"tls_without_cert", "service:\n  tls: {keyfile: k.pem}\n"},
    {"pool_with_ports", "service:\n  pool: {workers: 2}\n  ports: 8080\n"},
    {"pool_without_workers", "service:\n  pool: {queue_length_threshold: 2}\n"},
    {"quoted_number", "service:\n  replica_policy: {min_replicas: 1, max_replicas: 2, target_qps_per_replica: \"2\"}\n"},
};

// Both lists at once: SkyPilot's parser reads every file in one process
// (importing it takes seconds), then `causeway validate` reads each.
TEST(SkyPilotServiceOracleTest, CausewayReadsAndRefusesServicesAsSkyPilotDoes) {
  const std::string python = SkyPython();
  if (!HaveSkyPilot(python)) {
    GTEST_SKIP() << "SkyPilot's parser is not installed at " << python
                 << " (scripts/install-deps.sh test installs it from PyPI; set CAUSEWAY_SKYPILOT_PYTHON)";
  }
  TempDir dir("skypilot-services");
  std::map<std::string, const Form*> forms;  // file -> form
  std::string files;
  auto write = [&](const Form& f, const std::string& tail) {
    const std::string file = dir.path() + "/" + f.name + ".yaml";
    std::ofstream(file) << f.yaml << tail;
    forms[file] = &f;
    files += " " + file;
  };
  for (const Form& f : kServices) write(f, "");
  for (const Form& f : kBadServices) write(f, "run: echo\n");
  auto [sky_out, sky_ok] = Shell(python + " " + std::string(CAUSEWAY_SOURCE_DIR) + "/tests/oracle/skypilot_task.py --service" +
                                 files + " 2>/dev/null");
  ASSERT_TRUE(sky_ok) << sky_out;
  std::map<std::string, json> sky;
  std::istringstream lines(sky_out);
  for (std::string line; std::getline(lines, line);) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.contains("file")) sky[j["file"]] = j;
  }
  ASSERT_EQ(sky.size(), forms.size()) << sky_out;
  const std::set<const Form*> good = [&] {
    std::set<const Form*> g;
    for (const Form& f : kServices) g.insert(&f);
    return g;
  }();
  for (const auto& [file, form] : forms) {
    SCOPED_TRACE(form->name);
    const json& theirs = sky[file];
    if (good.count(form)) {
      ASSERT_TRUE(theirs["ok"].get<bool>()) << "SkyPilot refused it: " << theirs.dump();
      auto validated = RunCli({"--json", "validate", file});
      ASSERT_EQ(validated.exit_code, 0) << validated.out << validated.err;
      const json service = json::parse(validated.out)["service"];
      ASSERT_TRUE(service.is_object()) << validated.out;
      for (const auto& [key, value] : theirs["service"].items()) EXPECT_EQ(service[key], value) << key;
      for (const auto& [key, value] : service.items()) {
        EXPECT_TRUE(theirs["service"].contains(key) || key == "pool") << "only Causeway reads " << key << ": " << value.dump();
      }
      continue;
    }
    EXPECT_FALSE(theirs["ok"].get<bool>()) << "SkyPilot accepted it: " << theirs.dump();
    auto validated = RunCli({"validate", file});
    EXPECT_NE(validated.exit_code, 0) << validated.out;
    EXPECT_NE(validated.err.find(std::string(form->name) + ".yaml:"), std::string::npos) << "with the place: " << validated.err;
    if (std::string(form->name).rfind("older_schema", 0) == 0) {
      EXPECT_NE(validated.err.find("expected one of: min_replicas, max_replicas"), std::string::npos) << validated.err;
    }
  }
}

}  // namespace
}  // namespace causeway::testing
