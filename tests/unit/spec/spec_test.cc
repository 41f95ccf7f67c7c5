// Job spec parsing: a table of valid and invalid specs, each invalid one with
// the message, line and column it must report.
#include <gtest/gtest.h>

#include "causeway/job_spec.h"
#include "spec/spec_json.h"

namespace causeway {
namespace {

struct Case {
  const char* name;
  friend void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }
  const char* yaml;
  // For invalid specs: a fragment of the first error, and where it points
  // (0 = not checked). nullptr means the spec is valid.
  const char* error = nullptr;
  int line = 0;
  int column = 0;
  const char* field = nullptr;
};

const Case kCases[] = {
    // ---- valid ----
    {"minimal", "run: echo hi\n"},
    {"accel_type_count", "resources:\n  accelerators: H200:8\n"},
    {"cpus_memory_at_least", "resources:\n  cpus: 4+\n  memory: 32GB+\n"},
    {"cpus_memory_fractions_and_units", "resources: {cpus: 0.5, memory: 512MB}\n"},
    {"workdir_git", "workdir:\n  url: https://github.com/org/repo.git\n  ref: release/v1.2\n"},
    {"workdir_git_scp_form", "workdir: {url: \"git@github.com:org/repo.git\"}\n"},
    {"file_mount_storage_every_key",
     "file_mounts:\n  /d:\n    source: [./a, ./b]\n    name: my-bucket\n    store: S3\n    mode: mount_cached\n"
     "    persistent: false\n    config: {disk_size: 100}\n    force_managed: true\n    _is_sky_managed: false\n"},
    {"accel_lowercase", "resources:\n  accelerators: h200\n"},
    {"accel_dashed", "resources:\n  accelerators: A100-80GB:4\n"},
    {"accel_map", "resources:\n  accelerators: {H100: 8}\n"},
    {"accel_list", "resources:\n  accelerators: [H100:8, A100-80GB:8]\n"},
    {"accel_set_form", "resources:\n  accelerators: {H100:8, A100-80GB:8}\n"},
    {"accel_list_of_maps", "resources:\n  accelerators:\n    - H100: 8\n    - A100: 8\n"},
    {"infra_provider_region", "resources:\n  infra: nebius/eu-north1\n"},
    {"infra_with_zone", "resources:\n  infra: gcp/us-central1/us-central1-a\n"},
    {"cloud_and_region", "resources:\n  cloud: GCP\n  region: us-central1\n"},
    {"full_skypilot",
     "name: train\nworkdir: .\nnum_nodes: 2\nresources:\n  accelerators: H200:8\n  use_spot: true\n"
     "  disk_size: 512\n  image_id: docker:nvcr.io/nvidia/pytorch@sha256:0123\n  labels:\n    owner: alice\n"
     "    team: nlp\nenvs:\n  EPOCHS: 3\n  DEBUG: true\nfile_mounts:\n  /data: s3://bucket/data\n"
     "  /ckpt:\n    name: ckpt-bucket\n    mode: MOUNT\nsetup: pip install -r req.txt\nrun: torchrun train.py\n"},
    {"causeway_fields",
     "labels: {owner: bob, team: vision}\ndatasets:\n  - {name: c4, version: \"2024-05\"}\n  - imagenet@sha256:"
     "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\ncheckpoint: {path: /ckpt, interval: 30m}\n"
     "residency: eu\npriority: high\n"},
    {"priority_integer", "priority: 700\n"},
    {"disk_size_string", "resources:\n  disk_size: 2TB\n"},
    {"ignored_top_field", "service:\n  replicas: 2\nrun: x\n"},
    {"cpus_memory_plain", "resources:\n  cpus: 8+\n  memory: 32+\n"},
    {"same_label_twice_same_value", "labels: {team: nlp}\nresources:\n  labels: {team: nlp}\n"},
    {"empty_resources", "resources:\nrun: x\n"},
    {"multiline_run", "run: |\n  echo one\n  echo two\n"},
    {"document_markers", "---\nrun: x\n...\n"},
    {"empty_second_document", "run: x\n---\n"},
    // Alternatives as SkyPilot documents them.
    {"accel_one_type_several_counts", "resources:\n  accelerators: {A100:4, A100:8, A100-80GB:2}\n"},
    {"any_of_infra", "resources:\n  accelerators: H100:8\n  any_of:\n    - infra: aws\n    - infra: gcp/us-central1\n"},
    {"any_of_own_accelerators",
     "resources:\n  any_of:\n    - {infra: aws, accelerators: A100:8}\n    - {cloud: gcp, accelerators: {L4:1, L4:4}}\n"},
    {"ordered_with_spot", "resources:\n  accelerators: H100:8\n  ordered:\n    - {use_spot: true}\n    - {use_spot: false}\n"},
    {"infra_wildcard_region", "resources:\n  infra: \"*/us-east-1\"\n"},
    {"service_checked_and_kept", "service:\n  readiness_probe: {path: /health, initial_delay_seconds: 30}\n"
                                 "  replica_policy: {min_replicas: 1, max_replicas: 4, target_qps_per_replica: 2}\nrun: x\n"},

    // ---- invalid ----
    {"empty_document", "", "empty", 1, 1},
    {"not_a_mapping", "- a\n- b\n", "expected a mapping", 1, 1},
    {"yaml_syntax", "name: [unclosed\n", "YAML syntax error", 2, 1},
    {"bad_indentation", "resources:\n  accelerators: H100\n   region: x\n", "YAML syntax error", 3, 10},
    {"misspelled_top_key", "nmae: x\n", "did you mean \"name\"", 1, 1, "nmae"},
    {"misspelled_accelerators", "resources:\n  accelerator: H100\n", "did you mean \"accelerators\"", 2, 3,
     "resources.accelerator"},
    {"misspelled_num_nodes", "num_node: 2\n", "did you mean \"num_nodes\"", 1, 1},
    {"unknown_key_no_hint", "frobnicate: 1\n", "expected one of", 1, 1},
    {"duplicate_top_key", "name: a\nrun: x\nname: b\n", "duplicate key \"name\" (first defined on line 1)", 3, 1},
    {"duplicate_resource_key", "resources:\n  accelerators: H100\n  accelerators: H200\n", "duplicate key", 3, 3},
    {"duplicate_env", "envs:\n  A: 1\n  A: 2\n", "duplicate key \"A\"", 3, 3},
    {"accel_fractional", "resources:\n  accelerators: A100:0.5\n", "fractional GPUs are not supported", 2, 17},
    {"accel_zero", "resources:\n  accelerators: H100:0\n", "expected 1 to 64", 2, 17},
    {"accel_too_many", "resources:\n  accelerators: H100:65\n", "expected 1 to 64", 2, 17},
    {"accel_bad_count", "resources:\n  accelerators: H100:eight\n", "expected TYPE:COUNT", 2, 17},
    {"accel_bad_type", "resources:\n  accelerators: \"H 100:8\"\n", "invalid GPU type", 2, 17},
    {"accel_map_bad_value", "resources:\n  accelerators: {H100: many}\n", "expected TYPE:COUNT", 2, 24},
    {"accel_map_count_twice", "resources:\n  accelerators: {\"H100:8\": 8}\n", "not both", 2, 18},
    {"accel_duplicate_alternative", "resources:\n  accelerators: [H100:8, h100:8]\n", "listed twice", 2, 26},
    {"service_misspelt", "service:\n  replica: 2\nrun: x\n", "did you mean \"replicas\"", 2, 3, "service.replica"},
    {"service_bad_replicas", "service:\n  replicas: two\n", "expected an integer", 2, 13, "service.replicas"},
    {"service_policy_misspelt", "service:\n  replica_policy: {min_replica: 1}\n", "did you mean \"min_replicas\"", 2, 20},
    {"yaml_unclosed_list_in_words", "name: [a, b\n", "a '[' list is not closed with ']'"},
    {"yaml_tab_in_words", "resources:\n\taccelerators: H100\n", "YAML syntax error"},
    {"any_of_and_ordered", "resources:\n  any_of: [{infra: aws}]\n  ordered: [{infra: gcp}]\n", "not both", 3, 12,
     "resources.ordered"},
    {"any_of_not_list", "resources:\n  any_of: {infra: aws}\n", "a list of resource alternatives", 2, 11},
    {"any_of_empty", "resources:\n  any_of: []\n", "a list of resource alternatives", 2, 11},
    {"any_of_misspelled", "resources:\n  any_of:\n    - {infar: aws}\n", "did you mean \"infra\"", 3, 8,
     "resources.any_of[0].infar"},
    {"any_of_bad_infra", "resources:\n  accelerators: L4\n  ordered:\n    - {infra: \"a//b\"}\n",
     "provider/region", 4, 15, "resources.ordered[0].infra"},
    {"any_of_same_twice", "resources:\n  accelerators: L4\n  any_of:\n    - {infra: aws}\n    - {cloud: AWS}\n",
     "alternative L4:1 on aws is listed twice"},
    {"any_of_mixed_cpu", "resources:\n  any_of:\n    - {accelerators: L4}\n    - {infra: aws}\n",
     "some alternatives ask for accelerators and some for none"},

    {"accel_empty_list", "resources:\n  accelerators: []\n", "a list of alternatives", 2, 17},
    {"accel_nested_list", "resources:\n  accelerators: [[H100]]\n", "each alternative", 2, 18},
    {"infra_and_cloud", "resources:\n  infra: gcp\n  cloud: gcp\n", "not both", 2, 10},
    {"infra_empty_part", "resources:\n  infra: nebius//x\n", "provider/region", 2, 10},
    {"infra_too_many_parts", "resources:\n  infra: a/b/c/d\n", "provider/region", 2, 10},
    {"use_spot_not_bool", "resources:\n  use_spot: maybe\n", "expected true or false", 2, 13},
    {"use_spot_quoted", "resources:\n  use_spot: \"true\"\n", "expected true or false", 2, 13},
    {"num_nodes_zero", "num_nodes: 0\n", "out of range", 1, 12},
    {"num_nodes_string", "num_nodes: \"2\"\n", "quoted string", 1, 12},
    {"num_nodes_float", "num_nodes: 1.5\n", "expected an integer", 1, 12},
    {"disk_size_bad", "resources:\n  disk_size: lots\n", "expected a size in GB", 2, 14},
    {"envs_not_map", "envs: [A, B]\n", "expected a mapping", 1, 7},
    {"env_bad_name", "envs:\n  1X: a\n", "invalid environment variable name", 2, 3},
    {"resources_not_map", "resources: H100:8\n", "expected a mapping", 1, 12},
    {"run_not_string", "run: {a: b}\n", "expected a string", 1, 6},
    {"name_not_string", "name: [a]\n", "expected a string", 1, 7},
    {"labels_conflict", "labels: {team: nlp}\nresources:\n  labels: {team: vision}\n", "in the other labels block", 1, 16},
    {"owner_empty", "labels: {owner: \"\"}\n", "label \"owner\" is empty", 1, 17},
    {"dataset_no_version", "datasets:\n  - {name: c4}\n", "needs a version or a digest", 2, 5},
    {"dataset_bad_digest", "datasets:\n  - {name: c4, digest: md5:abc}\n", "expected sha256:", 2, 5},
    {"dataset_shorthand_bad", "datasets: [c4]\n", "NAME@VERSION", 1, 12},
    {"dataset_twice", "datasets: [c4@1, c4@2]\n", "listed twice", 1, 18},
    {"dataset_misspelled_key", "datasets:\n  - {name: c4, verison: 1}\n", "did you mean \"version\"", 2, 16},
    {"checkpoint_no_path", "checkpoint: {interval: 10m}\n", "needs a path", 1, 13},
    {"checkpoint_bad_interval", "checkpoint: {path: /c, interval: soon}\n", "invalid duration", 1, 34},
    {"residency_bad", "residency: EU West\n", "residency zone", 1, 12},
    {"priority_unknown", "priority: urgent\n", "expected one of low, normal, high, critical", 1, 11},
    {"priority_out_of_range", "priority: 5000\n", "out of range", 1, 11},
    {"cpus_zero", "resources: {cpus: 0}\n", "it must be positive", 1, 19},
    {"memory_unknown_unit", "resources: {memory: 32XB}\n", "expected GB per node", 1, 21},
    {"workdir_git_without_url", "workdir: {ref: main}\n", "needs its repository's url", 1, 10},
    {"workdir_git_ref_like_an_option", "workdir: {url: \"https://x/r.git\", ref: --upload-pack=x}\n",
     "expected a branch, tag or commit", 1, 40},
    {"workdir_git_url_with_shell", "workdir: {url: \"https://x/r.git;rm -rf ~\"}\n", "expected a git repository URL", 1, 16},
    {"workdir_list", "workdir: [a]\n", "expected a directory or {url", 1, 10},
    {"file_mount_bad_store", "file_mounts:\n  /d: {name: b, store: dropbox}\n", "expected s3, gcs", 2, 24},
    {"file_mount_bad_mode", "file_mounts:\n  /d:\n    source: s3://b\n    mode: FAST\n", "MOUNT, COPY", 4, 11},
    // A pipeline (SkyPilot's chain DAG) is several documents: one job spec
    // refuses them, never cut to its first (ParseTaskFile takes them).
    {"pipeline_documents", "name: pipeline\n---\nname: train\nrun: x\n---\nname: eval\nrun: y\n",
     "3 YAML documents", 3, 1},
    {"two_tasks", "run: a\n---\nrun: b\n", "take a pipeline whole", 3, 1},
    // CPU is what a CPU-only job takes, never an accelerator to ask for.
    {"accelerator_cpu", "resources: {accelerators: CPU:4}\n", "CPU is not an accelerator", 1, 27},
    {"cpu_only_alternatives_apart", "resources:\n  any_of: [{infra: aws}, {infra: gcp}]\n",
     "alternatives of a CPU-only job that differ", 2, 3},
};

class SpecTableTest : public ::testing::TestWithParam<Case> {};

TEST_P(SpecTableTest, ParsesOrReportsExactly) {
  const Case& c = GetParam();
  auto r = ParseJobSpec(c.yaml, "job.yaml");
  if (c.error == nullptr) {
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    return;
  }
  ASSERT_FALSE(r.ok()) << "expected an error containing: " << c.error;
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  ASSERT_FALSE(r.status().diagnostics().empty());
  const Diagnostic& d = r.status().diagnostics().front();
  EXPECT_NE(d.message.find(c.error), std::string::npos) << "got: " << d.ToString();
  EXPECT_EQ(d.file, "job.yaml");
  if (c.line) {
    EXPECT_EQ(d.line, c.line) << d.ToString();
  }
  if (c.column) {
    EXPECT_EQ(d.column, c.column) << d.ToString();
  }
  if (c.field) {
    EXPECT_EQ(d.field, c.field);
  }
  // The summary names the file and position too.
  EXPECT_NE(r.status().message().find("job.yaml"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Specs, SpecTableTest, ::testing::ValuesIn(kCases),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(SpecTest, CaseCountCoversTheInputSpace) { EXPECT_GE(std::size(kCases), 40u); }

TEST(SpecTest, NormalizesFields) {
  auto r = ParseJobSpec(
      "name: t\nresources:\n  accelerators: [h100:8, A100-80GB:8]\n  infra: Nebius/eu-north1\n"
      "  labels: {owner: alice, team: nlp}\nnum_nodes: 2\npriority: high\ncheckpoint: {path: /c, interval: 1h30m}\n",
      "f");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const JobSpec& s = r->spec;
  ASSERT_EQ(s.accelerators.alternatives.size(), 2u);
  EXPECT_EQ(s.accelerators.alternatives[0].ToString(), "H100:8");
  EXPECT_EQ(s.accelerators.alternatives[1].ToString(), "A100-80GB:8");
  EXPECT_EQ(s.accelerators.alternatives[1].cloud, "nebius");  // the job's infra, merged into each
  EXPECT_EQ(s.accelerators.alternatives[1].region, "eu-north1");
  EXPECT_TRUE(s.accelerators.ordered);
  EXPECT_EQ(s.cloud, "nebius");
  EXPECT_EQ(s.region, "eu-north1");
  EXPECT_EQ(s.owner, "alice");
  EXPECT_EQ(s.team, "nlp");
  EXPECT_EQ(s.priority, 100);
  EXPECT_EQ(s.priority_class, "high");
  EXPECT_EQ(s.TotalGpus(), 16);
  ASSERT_TRUE(s.checkpoint.has_value());
  EXPECT_EQ(s.checkpoint->interval, Micros(5400LL * 1'000'000));
}

// As SkyPilot reads them: "k8s" is its alias of "kubernetes"; a zone given
// as `zone:` means what infra's third part means; MI300 is accepted, with a
// warning naming MI300X.
TEST(SpecTest, SkyPilotsAliasesZonesAndLooseAcceleratorNames) {
  for (const char* infra : {"infra: k8s", "cloud: k8s", "infra: Kubernetes", "cloud: kubernetes"}) {
    auto r = ParseJobSpec(std::string("name: t\nresources:\n  accelerators: H100:1\n  ") + infra + "\n", "f");
    ASSERT_TRUE(r.ok()) << infra << ": " << r.status().ToString();
    EXPECT_EQ(r->spec.cloud, "kubernetes") << infra;
  }
  auto by_infra = ParseJobSpec("name: t\nresources:\n  accelerators: H100:1\n  infra: aws/us-east-1/us-east-1a\n", "f");
  auto by_zone = ParseJobSpec("name: t\nresources:\n  accelerators: H100:1\n  cloud: aws\n  region: us-east-1\n"
                              "  zone: us-east-1a\n", "f");
  ASSERT_TRUE(by_infra.ok() && by_zone.ok()) << by_zone.status().ToString();
  EXPECT_EQ(by_zone->spec.zone, "us-east-1a");
  EXPECT_EQ(by_zone->spec.zone, by_infra->spec.zone);
  EXPECT_EQ(by_zone->spec.region, by_infra->spec.region);
  EXPECT_EQ(by_zone->spec.accelerators.alternatives[0].zone, by_infra->spec.accelerators.alternatives[0].zone);
  bool zone_warned = false;
  for (const Diagnostic& d : by_zone->warnings) zone_warned |= d.field.find("zone") != std::string::npos;
  EXPECT_FALSE(zone_warned) << "zone is read, not ignored";
  auto both = ParseJobSpec("name: t\nresources:\n  infra: aws/us-east-1/us-east-1a\n  zone: us-east-1b\n", "f");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().ToString().find("give one"), std::string::npos) << both.status().ToString();

  auto mi300 = ParseJobSpec("name: t\nresources:\n  accelerators: MI300:8\n", "f");
  ASSERT_TRUE(mi300.ok()) << mi300.status().ToString();
  EXPECT_TRUE(mi300->spec.unknown_accelerators.empty()) << "not refused offline";
  bool hinted = false;
  for (const Diagnostic& d : mi300->warnings) hinted |= d.message.find("MI300X") != std::string::npos;
  EXPECT_TRUE(hinted);
}

// SkyPilot fills envs and secrets into file_mounts (targets, sources,
// bucket names, store, mode) and workdir; those given at submission too.
TEST(SpecTest, VariablesInFileMountsAndWorkdirAreFilledAsSkyPilotFillsThem) {
  auto r = ParseJobSpec(
      "envs: {DATASET_ROOT: /data, BUCKET: team-data, DATA_BUCKET_STORE_TYPE: s3}\n"
      "secrets: {REF: v1.2}\n"
      "file_mounts:\n  ${DATASET_ROOT}/train: s3://$BUCKET/train\n"
      "  /ckpt:\n    name: ${BUCKET}-ckpt\n    store: $DATA_BUCKET_STORE_TYPE\n    mode: mount\n"
      "  /x: s3://$BUCKET_OTHER/${UNKNOWN}\n"
      "workdir: {url: https://git.example.com/team/$BUCKET.git, ref: $REF}\nrun: echo\n",
      "f");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& m = r->spec.file_mounts;
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[0].target, "/data/train");
  EXPECT_EQ(m[0].source, "s3://team-data/train");
  EXPECT_EQ(m[1].name, "team-data-ckpt");
  EXPECT_EQ(m[1].store, "s3");
  EXPECT_EQ(m[1].mode, "MOUNT");
  EXPECT_EQ(m[2].source, "s3://$BUCKET_OTHER/${UNKNOWN}") << "names not among the variables stay as written";
  EXPECT_EQ(r->spec.workdir.git_url, "https://git.example.com/team/team-data.git");
  EXPECT_EQ(r->spec.workdir.git_ref, "v1.2");

  // A variable the file leaves to submission: checked once given.
  auto pending = ParseJobSpec("envs: {BUCKET: null, STORE: null}\nfile_mounts:\n  /d: {source: s3://$BUCKET/x, store: $STORE}\n"
                              "run: echo\n", "f");
  ASSERT_TRUE(pending.ok()) << pending.status().ToString();
  ParsedJobSpec given = *pending;
  ASSERT_TRUE(ApplySpecInputs(given, SpecInputs{{{"BUCKET", "from-cli"}, {"STORE", "gcs"}}, {}}, "f").ok());
  EXPECT_EQ(given.spec.file_mounts[0].source, "s3://from-cli/x");
  EXPECT_EQ(given.spec.file_mounts[0].store, "gcs");
  ParsedJobSpec wrong = *pending;
  Status refused = ApplySpecInputs(wrong, SpecInputs{{{"BUCKET", "b"}, {"STORE", "floppy"}}, {}}, "f");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.ToString().find("file_mounts./d.store"), std::string::npos) << refused.ToString();

  // A store no variable fills is still refused where it is written.
  auto bad = ParseJobSpec("file_mounts:\n  /d: {source: s3://b/x, store: $NOPE}\nrun: echo\n", "f");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("store"), std::string::npos);

  EXPECT_EQ(FillVariables("${A}-$A-${A-$AB-$", {{"A", "x"}}), "x-x-x-$AB-$");
}

TEST(SpecTest, MapFormIsUnorderedAndCountsDefaultToOne) {
  auto r = ParseJobSpec("resources:\n  accelerators: {H100:8, L4}\n", "f");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->spec.accelerators.ordered);
  EXPECT_EQ(r->spec.accelerators.alternatives[1].ToString(), "L4:1");
}

// SkyPilot's any_of / ordered: each entry overrides the job's own resources
// for one alternative; an entry's accelerator set gives one alternative per
// member; ordered keeps the order as a preference.
TEST(SpecTest, AnyOfAndOrderedBecomeAlternativesWithTheirOwnPlacement) {
  auto r = ParseJobSpec(
      "resources:\n  accelerators: H100:8\n  use_spot: true\n  image_id: img@sha256:1\n  any_of:\n"
      "    - infra: aws/us-east-1\n    - {cloud: gcp, use_spot: false, accelerators: {A100:8, A100-80GB:4}}\n"
      "    - {image_id: other}\n",
      "f");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  const auto& alts = r->spec.accelerators.alternatives;
  ASSERT_EQ(alts.size(), 4u);
  EXPECT_FALSE(r->spec.accelerators.ordered);
  EXPECT_EQ(alts[0].Describe(), "H100:8 on aws/us-east-1 spot image img@sha256:1");
  EXPECT_EQ(alts[1].Describe(), "A100:8 on gcp image img@sha256:1");
  EXPECT_EQ(alts[2].Describe(), "A100-80GB:4 on gcp image img@sha256:1");
  EXPECT_EQ(alts[3].Describe(), "H100:8 spot image other");

  auto o = ParseJobSpec("resources:\n  accelerators: {L4: 1}\n  ordered:\n    - {infra: lambda}\n    - {infra: aws}\n", "f");
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_TRUE(o->spec.accelerators.ordered);
  ASSERT_EQ(o->spec.accelerators.alternatives.size(), 2u);
  EXPECT_EQ(o->spec.accelerators.alternatives[0].cloud, "lambda");
  EXPECT_EQ(o->spec.accelerators.alternatives[1].cloud, "aws");
}

TEST(SpecTest, OneGpuTypeAtSeveralCountsIsASetOfAlternatives) {
  auto r = ParseJobSpec("resources:\n  accelerators: {A100:4, A100:8, A100-80GB:2}\n", "f");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->spec.accelerators.alternatives.size(), 3u);
  EXPECT_EQ(r->spec.accelerators.ToString(), "A100:4|A100:8|A100-80GB:2");
}

// Accelerator names are checked against SkyPilot's catalogue: a typo is
// told what it most likely meant, within its family; the estate decides
// whether a name outside the catalogue is one of its own.
TEST(SpecTest, AcceleratorNamesOutsideTheCatalogueAreNamedWithAHint) {
  auto hint = [](const std::string& accel) {
    auto r = ParseJobSpec("resources: {accelerators: \"" + accel + "\"}\n", "f");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    std::string out;
    for (const auto& w : r->warnings) out += w.message;
    EXPECT_EQ(r->spec.unknown_accelerators.empty(), out.empty()) << accel;
    return out;
  };
  EXPECT_NE(hint("H20O:8").find("did you mean H200?"), std::string::npos) << hint("H20O:8");
  EXPECT_NE(hint("H200-8").find("did you mean H200:8?"), std::string::npos) << hint("H200-8");
  EXPECT_NE(hint("V200").find("did you mean V100?"), std::string::npos) << hint("V200");
  EXPECT_EQ(hint("V200").find("H100"), std::string::npos) << "never a hint from another family";
  for (const char* known : {"H100:8", "A100-80GB:4", "MI300X:8", "TPU-V5P-8", "TPU-V5LITEPOD-16", "L40S", "GAUDI3:8",
                            "TRAINIUM2:16", "RTX4090"}) {
    EXPECT_EQ(hint(known), "") << known;
  }
}

TEST(SpecTest, WarningsAreKeptBesideErrors) {
  auto r = ParseJobSpec("service: {replicas: 2}\nnum_nodes: 0\n", "f");
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.status().diagnostics().size(), 2u);
  EXPECT_FALSE(r.status().diagnostics()[0].warning);
  EXPECT_TRUE(r.status().diagnostics()[1].warning);
  EXPECT_EQ(r.status().diagnostics()[1].field, "service");
}

TEST(SpecTest, IgnoredFieldsAreKeptAndWarned) {
  auto r = ParseJobSpec("service: {replicas: 2}\nresources:\n  ports: 8080\nrun: x\n", "f");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->spec.ignored_fields, (std::vector<std::string>{"service", "resources.ports"}));
  ASSERT_EQ(r->warnings.size(), 2u);
  EXPECT_EQ(r->warnings[0].line, 1);
  EXPECT_NE(r->warnings[0].message.find("ignored"), std::string::npos);
}

TEST(SpecTest, ReportsEveryErrorNotJustTheFirst) {
  auto r = ParseJobSpec("nmae: x\nnum_nodes: 0\nresources:\n  accelerators: H100:0.5\n", "f");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().diagnostics().size(), 3u);
  EXPECT_NE(r.status().message().find("3 errors"), std::string::npos);
}

TEST(TaskFileTest, OneDocumentIsOneJobSpec) {
  for (const char* text : {"run: a\n", "---\nrun: a\n", "# c\n---\nrun: a\n...\n"}) {
    auto f = ParseTaskFile(text, "job.yaml");
    ASSERT_TRUE(f.ok()) << text << f.status().ToString();
    EXPECT_FALSE(f->pipeline);
    ASSERT_EQ(f->steps.size(), 1u);
    EXPECT_EQ(f->steps[0].parsed.spec.run, "a");
  }
}

TEST(TaskFileTest, APipelineIsItsStepsInOrderWithTheHeadersName) {
  const char* text =
      "name: nightly\n"
      "---\n"
      "name: prep\n"
      "resources: {accelerators: L4:1}\n"
      "run: ./prep.sh\n"
      "--- # the training\n"
      "name: train\n"
      "num_nodes: 2\n"
      "resources: {accelerators: {H100: 8}}\n"
      "envs: {MODE: full}\n"
      "run: ./train.sh\n";
  auto f = ParseTaskFile(text, "p.yaml");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE(f->pipeline);
  EXPECT_EQ(f->name, "nightly");
  ASSERT_EQ(f->steps.size(), 2u);
  EXPECT_EQ(f->steps[0].parsed.spec.name, "prep");
  EXPECT_EQ(f->steps[0].parsed.spec.accelerators.ToString(), "L4:1");
  EXPECT_EQ(f->steps[1].parsed.spec.num_nodes, 2);
  EXPECT_EQ(f->steps[1].parsed.spec.accelerators.ToString(), "H100:8");
  // Each step keeps its own document, which parses on its own.
  EXPECT_EQ(f->steps[0].yaml, "name: prep\nresources: {accelerators: L4:1}\nrun: ./prep.sh\n");
  EXPECT_EQ(f->steps[1].yaml.rfind("    # the training\nname: train\n", 0), 0u) << f->steps[1].yaml;
  for (const auto& step : f->steps) EXPECT_TRUE(ParseJobSpec(step.yaml, "step.yaml").ok()) << step.yaml;

  // Without a header: every document is a step.
  auto plain = ParseTaskFile("run: a\n---\nrun: b\n---\nrun: c\n", "p.yaml");
  ASSERT_TRUE(plain.ok()) << plain.status().ToString();
  EXPECT_TRUE(plain->pipeline);
  EXPECT_EQ(plain->name, "");
  ASSERT_EQ(plain->steps.size(), 3u);
  EXPECT_EQ(plain->steps[2].parsed.spec.run, "c");
}

TEST(TaskFileTest, EveryStepsProblemsAreReportedAtTheirLinesInTheFile) {
  const char* text =
      "name: p\n"                              // 1
      "---\n"                                  // 2
      "resources: {accelerators: H100:8}\n"    // 3
      "num_nodes: 0\n"                         // 4
      "---\n"                                  // 5
      "run: ok\n"                              // 6
      "---\n"                                  // 7
      "resources:\n"                           // 8
      "  acelerators: A100:8\n";               // 9
  auto f = ParseTaskFile(text, "p.yaml");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), Code::kInvalidArgument);
  std::vector<std::pair<int, std::string>> at;
  for (const auto& d : f.status().diagnostics()) {
    if (!d.warning) at.emplace_back(d.line, d.field);
  }
  ASSERT_EQ(at.size(), 2u) << f.status().ToString();
  EXPECT_EQ(at[0], (std::pair<int, std::string>{4, "num_nodes"}));
  EXPECT_EQ(at[1].first, 9);
}

TEST(TaskFileTest, AJobGroupIsItsTasksWithTheirRolesAndDelays) {
  const char* text =
      "name: rl-post-train\n"
      "execution: parallel\n"
      "primary_tasks: [trainer]\n"
      "termination_delay: {default: 30s, replay-buffer: 2m}\n"
      "---\n"
      "name: trainer\n"
      "resources: {accelerators: H100:8}\n"
      "run: ./train.sh\n"
      "---\n"
      "name: replay-buffer\n"
      "resources: {cpus: 16+}\n"
      "run: ./buffer.sh\n"
      "---\n"
      "name: data_server\n"
      "run: ./serve.sh\n";
  auto f = ParseTaskFile(text, "g.yaml");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_TRUE(f->pipeline);
  EXPECT_TRUE(f->job_group);
  EXPECT_EQ(f->name, "rl-post-train");
  ASSERT_EQ(f->steps.size(), 3u);
  EXPECT_FALSE(f->steps[0].auxiliary);
  EXPECT_EQ(f->steps[0].termination_delay_seconds, 0);
  EXPECT_TRUE(f->steps[1].auxiliary);
  EXPECT_EQ(f->steps[1].termination_delay_seconds, 120);
  EXPECT_TRUE(f->steps[2].auxiliary);
  EXPECT_EQ(f->steps[2].termination_delay_seconds, 30);
  // What Causeway does not do for a group is said, at the header.
  ASSERT_FALSE(f->steps[0].parsed.warnings.empty());
  EXPECT_EQ(f->steps[0].parsed.warnings.back().field, "inter_connection");
  EXPECT_EQ(f->steps[0].parsed.warnings.back().line, 1);

  // Without primary_tasks (or with an empty list) every task is primary;
  // one delay for all; inter_connection: false says no network is needed.
  for (const char* head : {"name: g\nexecution: parallel\ntermination_delay: 45\ninter_connection: false\n",
                           "name: g\nexecution: parallel\nprimary_tasks: []\ninter_connection: false\n"}) {
    auto all = ParseTaskFile(std::string(head) + "---\nname: a\nrun: a\n---\nname: b\nrun: b\n", "g.yaml");
    ASSERT_TRUE(all.ok()) << head << all.status().ToString();
    for (const auto& t : all->steps) {
      EXPECT_FALSE(t.auxiliary);
      EXPECT_TRUE(t.parsed.warnings.empty()) << t.parsed.warnings.front().ToString();
    }
  }
  auto units = ParseTaskFile(
      "name: g\nexecution: parallel\nprimary_tasks: [a]\ntermination_delay: 1H\n---\nname: a\nrun: a\n---\nname: b\nrun: b\n",
      "g.yaml");
  ASSERT_TRUE(units.ok()) << units.status().ToString();
  EXPECT_EQ(units->steps[1].termination_delay_seconds, 3600);

  // An explicit serial header is a pipeline's.
  auto serial = ParseTaskFile("name: p\nexecution: serial\n---\nrun: a\n---\nrun: b\n", "p.yaml");
  ASSERT_TRUE(serial.ok()) << serial.status().ToString();
  EXPECT_TRUE(serial->pipeline);
  EXPECT_FALSE(serial->job_group);
}

TEST(TaskFileTest, ABadJobGroupIsRefusedAtTheLineOfEachProblem) {
  const char* text =
      "name: g\n"                                          // 1
      "execution: parallel\n"                              // 2
      "primary_tasks: [trainer, ghost]\n"                  // 3
      "termination_delay: {default: soon, eval: 5m}\n"     // 4
      "---\n"                                              // 5
      "name: trainer\n"                                    // 6
      "run: a\n"                                           // 7
      "---\n"                                              // 8
      "run: b\n"                                           // 9
      "---\n"                                              // 10
      "name: trainer\n"                                    // 11
      "run: c\n"                                           // 12
      "---\n"                                              // 13
      "name: bad name\n"                                   // 14
      "run: d\n";                                          // 15
  auto f = ParseTaskFile(text, "g.yaml");
  ASSERT_FALSE(f.ok());
  std::map<int, std::string> at;
  for (const auto& d : f.status().diagnostics()) {
    if (!d.warning) at[d.line] += d.message + "|";
  }
  EXPECT_NE(at[3].find("no task of the group is named \"ghost\""), std::string::npos) << at[3];
  EXPECT_NE(at[4].find("expected a duration"), std::string::npos) << at[4];
  EXPECT_NE(at[4].find("no task of the group is named \"eval\""), std::string::npos) << at[4];
  EXPECT_NE(at[9].find("task 2 of a job group must have a name"), std::string::npos) << at[9];
  EXPECT_NE(at[11].find("used twice"), std::string::npos) << at[11];
  EXPECT_NE(at[14].find("letters, digits"), std::string::npos) << at[14];
  EXPECT_NE(f.status().message().find("invalid job group"), std::string::npos) << f.status().message();

  auto unnamed = ParseTaskFile("execution: parallel\n---\nname: a\nrun: a\n", "g.yaml");
  ASSERT_FALSE(unnamed.ok());
  EXPECT_NE(unnamed.status().ToString().find("must name the group"), std::string::npos) << unnamed.status().ToString();
  auto blank = ParseTaskFile("name: \"\"\nexecution: parallel\n---\nname: a\nrun: a\n", "g.yaml");
  ASSERT_FALSE(blank.ok());
  EXPECT_NE(blank.status().ToString().find("must name the group"), std::string::npos) << blank.status().ToString();
  auto odd = ParseTaskFile("name: g\nexecution: sideways\n---\nrun: a\n", "g.yaml");
  ASSERT_FALSE(odd.ok());
  EXPECT_NE(odd.status().ToString().find("expected parallel (a job group) or serial"), std::string::npos)
      << odd.status().ToString();
  auto stray = ParseTaskFile("name: p\nprimary_tasks: [a]\n---\nrun: a\n", "g.yaml");
  ASSERT_FALSE(stray.ok());
  EXPECT_NE(stray.status().ToString().find("only a job group's header"), std::string::npos);
  auto far = ParseTaskFile("name: g\nexecution: parallel\ntermination_delay: 31d\n---\nname: a\nrun: a\n", "g.yaml");
  ASSERT_FALSE(far.ok());
  EXPECT_NE(far.status().ToString().find("at most 30 days"), std::string::npos) << far.status().ToString();
  auto empty = ParseTaskFile("name: p\n---\n# nothing\n", "g.yaml");
  ASSERT_TRUE(empty.ok()) << "one document: a job spec named p";
  EXPECT_FALSE(empty->pipeline);
}

TEST(TaskFileTest, APipelineHasAtMostItsLimitOfSteps) {
  std::string text;
  for (size_t i = 0; i <= kMaxPipelineSteps + 1; ++i) text += "run: s" + std::to_string(i) + "\n---\n";
  auto f = ParseTaskFile(text, "big.yaml");
  ASSERT_FALSE(f.ok());
  EXPECT_NE(f.status().ToString().find("a pipeline or job group has at most 32 steps"), std::string::npos) << f.status().ToString();
  std::string fits;
  for (size_t i = 0; i < kMaxPipelineSteps; ++i) fits += "run: s" + std::to_string(i) + "\n---\n";
  auto ok = ParseTaskFile(fits, "fits.yaml");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->steps.size(), kMaxPipelineSteps);
}

TEST(SpecTest, MissingFileIsNotFound) {
  auto r = LoadJobSpecFile("/nonexistent/job.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kNotFound);
}

TEST(SpecTest, ExampleJobsAreValid) {
  for (const char* f : {"train-llama.yaml", "finetune-vision.yaml", "eval-sweep.yaml"}) {
    auto r = LoadJobSpecFile(std::string(CAUSEWAY_SOURCE_DIR) + "/examples/jobs/" + f);
    EXPECT_TRUE(r.ok()) << f << ": " << r.status().ToString();
  }
}

// SkyPilot's placeholders: a null env or secret must be given at submission
// (--env / --secret); an empty string is a value.
TEST(SpecInputsTest, NullVariablesMustBeGivenAndEmptyStringsAreValues) {
  auto r = ParseJobSpec("envs:\n  HF_HOME: null\n  EMPTY: \"\"\n  LR: 1e-4\nsecrets:\n  HF_TOKEN:\n", "job.yaml");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->spec.envs, (std::map<std::string, std::string>{{"EMPTY", ""}, {"LR", "1e-4"}}));
  EXPECT_EQ(r->spec.secrets, std::vector<std::string>{"HF_TOKEN"});
  ParsedJobSpec unapplied = *r;
  Status missing = ApplySpecInputs(unapplied, {}, "job.yaml");
  ASSERT_FALSE(missing.ok());
  ASSERT_EQ(missing.diagnostics().size(), 2u);
  EXPECT_EQ(missing.diagnostics()[0].field, "envs.HF_HOME");
  EXPECT_EQ(missing.diagnostics()[0].line, 2);
  EXPECT_NE(missing.diagnostics()[0].message.find("--env HF_HOME=VALUE"), std::string::npos);
  EXPECT_EQ(missing.diagnostics()[1].field, "secrets.HF_TOKEN");
  EXPECT_EQ(missing.diagnostics()[1].line, 6);

  SpecInputs in;
  in.envs = {{"HF_HOME", ""}, {"LR", "3e-4"}};  // "" given is a value; the input wins
  in.secrets = {{"HF_TOKEN", "hf_secret"}, {"WANDB_API_KEY", "wb_secret"}};
  ASSERT_TRUE(ApplySpecInputs(*r, in, "job.yaml").ok());
  EXPECT_EQ(r->spec.envs.at("HF_HOME"), "");
  EXPECT_EQ(r->spec.envs.at("LR"), "3e-4");
  EXPECT_EQ(r->spec.secrets, (std::vector<std::string>{"HF_TOKEN", "WANDB_API_KEY"}));
  EXPECT_EQ(r->secret_values.at("WANDB_API_KEY"), "wb_secret");
  EXPECT_FALSE(r->secrets_in_file);
  // The spec as stored and shown names the secrets, never their values.
  std::string stored = ToJson(r->spec).dump();
  EXPECT_EQ(stored.find("_secret"), std::string::npos) << stored;
  auto back = JobSpecFromJson(nlohmann::json::parse(stored));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->secrets, r->spec.secrets);
}

TEST(SpecInputsTest, RefusesANameThatIsBothEnvAndSecretAndCausewaysOwnNames) {
  auto both = ParseJobSpec("envs: {TOKEN: a}\nsecrets: {TOKEN: null}\n", "f");
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("both an env and a secret"), std::string::npos);

  auto r = ParseJobSpec("envs: {MODE: x}\nsecrets: {KEY: null}\n", "f");
  ASSERT_TRUE(r.ok());
  SpecInputs in;
  in.envs = {{"KEY", "v"}, {"1BAD", "v"}};
  in.secrets = {{"MODE", "v"}, {"CAUSEWAY_TOKEN", "v"}, {"KEY", "v"}};
  Status st = ApplySpecInputs(*r, in, "f");
  ASSERT_FALSE(st.ok());
  std::string all;
  for (const auto& d : st.diagnostics()) all += d.ToString() + "\n";
  EXPECT_NE(all.find("--env 1BAD: invalid variable name"), std::string::npos) << all;
  EXPECT_NE(all.find("KEY is a secret of this job: give it with --secret"), std::string::npos) << all;
  EXPECT_NE(all.find("MODE is an env of this job"), std::string::npos) << all;
  EXPECT_NE(all.find("CAUSEWAY_ or SKYPILOT_"), std::string::npos) << all;
  EXPECT_EQ(all.find("=v"), std::string::npos) << "no diagnostic holds a value";

  SpecInputs big;
  big.secrets = {{"KEY", std::string(kMaxSpecInputBytes + 1, 'x')}};
  EXPECT_FALSE(ApplySpecInputs(*r, big, "f").ok());
  auto fresh = ParseJobSpec("run: x\n", "f");
  SpecInputs many;  // each value within its limit, too many bytes in all
  for (const char* name : {"A", "B", "C"}) many.secrets[name] = std::string(30 << 10, 'x');
  Status total = ApplySpecInputs(*fresh, many, "f");
  ASSERT_FALSE(total.ok());
  EXPECT_NE(total.message().find("in all"), std::string::npos) << total.message();
}

TEST(SpecTest, CpusAndMemoryKeepTheirFormAndReadBack) {
  auto r = ParseJobSpec("resources:\n  cpus: 4+\n  memory: 1TB\n", "f");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->spec.cpus->ToString(), "4+");
  EXPECT_EQ(r->spec.memory_gb->value, 1024);
  EXPECT_FALSE(r->spec.memory_gb->or_more);
  auto back = JobSpecFromJson(ToJson(r->spec));
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->cpus->ToString(), "4+");
  EXPECT_EQ(back->memory_gb->ToString(), "1024");
}

// A job without accelerators is CPU-only (SkyPilot's form): the spec keeps
// no accelerators, and what it asks of a pool is its CPUs, rounded up.
TEST(SpecTest, CpuOnlyJobsAskForTheirCpus) {
  auto demand = [](const char* yaml) {
    auto r = ParseJobSpec(yaml, "f");
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(!r.ok() || r->spec.accelerators.empty());
    return r.ok() ? r->spec.Demand().ToString() : std::string();
  };
  EXPECT_EQ(demand("run: x\n"), "CPU:8");  // SkyPilot's default CPU instance
  EXPECT_EQ(demand("resources: {cpus: 16+, memory: 64+}\n"), "CPU:16");
  EXPECT_EQ(demand("resources: {cpus: 0.5}\n"), "CPU:1");
  auto r = ParseJobSpec("resources: {infra: gcp/us-central1, use_spot: true, cpus: 2}\n", "f");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->spec.cpu_only());
  EXPECT_EQ(r->spec.TotalGpus(), 0);
  Alternative cpu = r->spec.Demand().alternatives.at(0);
  EXPECT_EQ(cpu.cloud, "gcp");
  EXPECT_EQ(cpu.region, "us-central1");
  EXPECT_TRUE(cpu.use_spot);
  // A GPU job's demand is its accelerators.
  auto gpu = ParseJobSpec("resources: {accelerators: {H100:8, A100:8}, cpus: 32}\n", "f");
  ASSERT_TRUE(gpu.ok());
  EXPECT_EQ(gpu->spec.Demand().alternatives, gpu->spec.accelerators.alternatives);
}

// A file may give a secret's value itself (SkyPilot allows it): the value is
// kept apart, and what is stored of the file has it replaced by null.
TEST(SpecInputsTest, SecretValuesInTheFileAreTakenOutOfTheStoredText) {
  const char* text = "name: x  # a comment\nsecrets:\n  HF_TOKEN: hf_in_the_file\n  OTHER: null\nrun: echo\n";
  auto r = ParseJobSpec(text, "f");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->secrets_in_file);
  EXPECT_EQ(r->secret_values.at("HF_TOKEN"), "hf_in_the_file");
  std::string stored = WithoutSecretValues(text);
  EXPECT_EQ(stored.find("hf_in_the_file"), std::string::npos) << stored;
  auto again = ParseJobSpec(stored, "f");
  ASSERT_TRUE(again.ok()) << stored;
  EXPECT_EQ(again->spec.name, "x");
  EXPECT_EQ(again->spec.secrets, (std::vector<std::string>{"HF_TOKEN", "OTHER"}));
  EXPECT_TRUE(again->secret_values.empty());
  EXPECT_EQ(again->unset_secrets.size(), 2u);
}

}  // namespace
}  // namespace causeway
