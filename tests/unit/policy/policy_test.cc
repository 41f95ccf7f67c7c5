#include "policy/policy.h"
#include "providers/registry.h"
#include "service/submission_check.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace causeway::policy {
namespace {

constexpr const char* kEstate = R"(
providers: [{name: p, kind: sim, regions: [{name: r, zone: eu}]}]
clusters:
  - name: c
    provider: p
    region: r
    node_pools: [{name: h, gpu_type: H100, gpus_per_node: 8, nodes: 16}]
    inject_envs: {NCCL_IB_HCA: mlx5, SHARED: from-cluster}
teams: [{name: nlp}, {name: research}]
policies:
  - {name: cost-owner, rule: require-labels, labels: [owner]}
  - {name: pinned, rule: pinned-image}
  - {name: research-gpus, rule: allowed-gpu-types, teams: [research], gpu_types: [L4]}
  - {name: nlp-eu, rule: require-residency, teams: [nlp], zone: eu}
  - {name: size, rule: max-job-size, max_gpus: 32, max_duration: 24h}
)";

class PolicyTest : public ::testing::Test {
 protected:
  PolicyTest() : estate_(*providers::ParseEstate(kEstate, "e")), chain_(Chain::FromEstate(estate_)) {}
  Status Apply(const std::string& yaml, JobSpec* out = nullptr, std::vector<std::string>* changes = nullptr) {
    auto spec = ParseJobSpec(yaml, "job.yaml");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    std::vector<std::string> c;
    Status st = chain_->Apply(spec->spec, c);
    if (out) *out = spec->spec;
    if (changes) *changes = c;
    return st;
  }
  static void ExpectRejected(const Status& st, const std::string& rule, const std::string& field, const std::string& text) {
    EXPECT_EQ(st.code(), Code::kPolicyViolation) << st.ToString();
    EXPECT_NE(st.message().find("policy " + rule), std::string::npos) << st.message();
    EXPECT_NE(st.message().find(text), std::string::npos) << st.message();
    ASSERT_EQ(st.diagnostics().size(), 1u);
    EXPECT_EQ(st.diagnostics()[0].field, field);
  }
  Estate estate_;
  std::unique_ptr<Chain> chain_;
};

TEST_F(PolicyTest, NoOwnerNoRun) {
  ExpectRejected(Apply("resources: {accelerators: H100:1, labels: {team: nlp}}\n"), "cost-owner",
                 "resources.labels.owner", "label \"owner\" is required; add it under resources.labels");
  EXPECT_TRUE(Apply("resources: {accelerators: H100:1, labels: {owner: a, team: other}}\n").ok());
}

TEST_F(PolicyTest, ImagesMustBePinnedByDigest) {
  ExpectRejected(Apply("resources: {accelerators: H100:1, image_id: pytorch:latest, labels: {owner: a}}\n"), "pinned",
                 "resources.image_id", "not pinned by digest");
  EXPECT_TRUE(Apply("resources: {accelerators: H100:1, labels: {owner: a}, image_id: \"r/p@sha256:" +
                    std::string(64, 'a') + "\"}\n").ok());
  ExpectRejected(Apply("resources: {accelerators: H100:1, labels: {owner: a}, image_id: \"r/p@sha256:abc\"}\n"), "pinned",
                 "resources.image_id", "IMAGE@sha256:");
}

TEST_F(PolicyTest, GpuTypesAllowedPerTeam) {
  ExpectRejected(Apply("resources: {accelerators: H100:1, labels: {owner: a, team: research}}\n"), "research-gpus",
                 "resources.accelerators", "team \"research\" may not use H100; use one of L4");
  EXPECT_TRUE(Apply("resources: {accelerators: H100:1, labels: {owner: a, team: nlp}}\n").ok());
}

TEST_F(PolicyTest, ResidencyIsRequiredAndFilledIn) {
  JobSpec spec;
  std::vector<std::string> changes;
  ASSERT_TRUE(Apply("resources: {accelerators: H100:1, labels: {owner: a, team: nlp}}\n", &spec, &changes).ok());
  EXPECT_EQ(spec.residency, "eu");
  EXPECT_EQ(changes.front(), "policy nlp-eu set residency to eu");
  ExpectRejected(Apply("resources: {accelerators: H100:1, labels: {owner: a, team: nlp}}\nresidency: us\n"), "nlp-eu",
                 "residency", "must keep its data in eu");
}

TEST_F(PolicyTest, MaximumSizeAndDuration) {
  ExpectRejected(Apply("resources: {accelerators: H100:8, labels: {owner: a}}\nnum_nodes: 5\n"), "size",
                 "resources.accelerators", "asks for 40 GPUs (5 nodes x H100:8), more than the limit of 32");
  ExpectRejected(Apply("resources: {accelerators: H100:8, labels: {owner: a}}\ntime_limit: 2d\n"), "size", "time_limit",
                 "time_limit 2d is over the limit of 1d");
  JobSpec spec;
  std::vector<std::string> changes;
  ASSERT_TRUE(Apply("resources: {accelerators: H100:8, labels: {owner: a}}\n", &spec, &changes).ok());
  ASSERT_TRUE(spec.time_limit.has_value());
  EXPECT_EQ(*spec.time_limit, std::chrono::hours(24));
  EXPECT_EQ(changes.back(), "policy size set time_limit to 1d");
}

TEST_F(PolicyTest, EveryRuleSpeaksSoOneRoundTripSuffices) {
  // Both the owner and the image are wrong: both rules say so, in file order.
  Status st = Apply("resources: {accelerators: H100:1, image_id: x:latest}\n");
  EXPECT_EQ(st.code(), Code::kPolicyViolation);
  EXPECT_NE(st.message().find("2 policies reject the job; first: policy cost-owner"), std::string::npos) << st.message();
  ASSERT_EQ(st.diagnostics().size(), 2u);
  EXPECT_EQ(st.diagnostics()[0].field, "resources.labels.owner");
  EXPECT_EQ(st.diagnostics()[1].field, "resources.image_id");
  EXPECT_NE(st.diagnostics()[1].message.find("policy pinned"), std::string::npos) << st.diagnostics()[1].message;
}

// A portable file lists alternatives a team may not use beside one it may:
// those are left out with a note, and the job stands.
TEST_F(PolicyTest, ForbiddenOrOversizedAlternativesAreLeftOutNotFatal) {
  JobSpec spec;
  std::vector<std::string> changes;
  ASSERT_TRUE(Apply("resources: {accelerators: {H100:1, L4:1}, labels: {owner: a, team: research}}\n", &spec, &changes).ok());
  ASSERT_EQ(spec.accelerators.alternatives.size(), 1u);
  EXPECT_EQ(spec.accelerators.alternatives[0].type, "L4");
  ASSERT_FALSE(changes.empty());
  EXPECT_NE(changes.front().find("left out alternative H100:1"), std::string::npos) << changes.front();

  changes.clear();
  ASSERT_TRUE(Apply("resources: {accelerators: [H100:8, H100:4], labels: {owner: a}}\nnum_nodes: 5\n", &spec, &changes).ok());
  ASSERT_EQ(spec.accelerators.alternatives.size(), 1u);
  EXPECT_EQ(spec.accelerators.alternatives[0].count, 4);
  EXPECT_NE(changes.front().find("left out alternative H100:8: 40 GPUs"), std::string::npos) << changes.front();
}

// A submission hears every policy and estate problem in one answer.
TEST_F(PolicyTest, PolicyAndEstateProblemsAreReportedTogether) {
  JobSpec spec = ParseJobSpec("resources: {accelerators: H100:1, image_id: x:latest}\nresidency: mars\n", "job.yaml")->spec;
  std::vector<Diagnostic> warnings;
  placement::Router router(estate_);
  Status st = CheckSubmission(spec, chain_.get(), estate_, router, "job.yaml", warnings);
  EXPECT_EQ(st.code(), Code::kPolicyViolation);
  EXPECT_NE(st.message().find("3 problems; first: policy cost-owner"), std::string::npos) << st.message();
  ASSERT_EQ(st.diagnostics().size(), 3u) << st.ToString();
  EXPECT_EQ(st.diagnostics()[2].field, "residency");
  for (const auto& d : st.diagnostics()) EXPECT_EQ(d.file, "job.yaml");
}

TEST_F(PolicyTest, AnAlternativesOwnImageMustBePinnedToo) {
  ExpectRejected(Apply("resources: {accelerators: H100:1, labels: {owner: a}, any_of: [{image_id: \"x:latest\"}]}\n"),
                 "pinned", "resources.image_id", "image \"x:latest\" is not pinned");
}

TEST_F(PolicyTest, ClusterSettingsAreInjectedAndTheJobWins) {
  JobSpec spec = ParseJobSpec("envs: {SHARED: from-job}\ncheckpoint: {path: /ckpt}\n", "j")->spec;
  auto env = LaunchEnv(spec, estate_.clusters[0], "job_1", 2, 4);
  EXPECT_EQ(env["NCCL_IB_HCA"], "mlx5");
  EXPECT_EQ(env["SHARED"], "from-job");
  EXPECT_EQ(env["CAUSEWAY_JOB_ID"], "job_1");
  EXPECT_EQ(env["CAUSEWAY_ATTEMPT"], "2");
  EXPECT_EQ(env["CAUSEWAY_CLUSTER"], "c");
  EXPECT_EQ(env["CAUSEWAY_CHECKPOINT_DIR"], "/ckpt");
  // SkyPilot's run-time variables, as task files use them ($SKYPILOT_NUM_NODES).
  EXPECT_EQ(env["SKYPILOT_NUM_NODES"], "1");
  EXPECT_EQ(env["SKYPILOT_NUM_GPUS_PER_NODE"], "4");
  EXPECT_EQ(env["SKYPILOT_NODE_RANK"], "0");
  EXPECT_EQ(env["SKYPILOT_NODE_IPS"], "127.0.0.1");
  EXPECT_EQ(env["SKYPILOT_TASK_ID"], "causeway-job_1-2");
}

TEST(PolicyConfigTest, UnknownRulesAndMissingParametersAreEstateErrors) {
  auto bad = providers::ParseEstate("policies: [{name: x, rule: require-label}]\n", "e.yaml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().diagnostics()[0].message.find("did you mean \"require-labels\""), std::string::npos);
  auto missing = providers::ParseEstate("policies: [{name: x, rule: max-job-size}]\n", "e.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().diagnostics()[0].message.find("needs max_gpus"), std::string::npos);
}

// The lines that prepare a workspace: mounts linked from the cluster's
// storage, a git workdir cloned at its ref, everything quoted for bash.
TEST(WorkspaceScriptTest, LinksMountsClonesAndEntersTheWorkdir) {
  JobSpec spec = ParseJobSpec(
      "workdir: {url: \"file:///srv/repo.git\", ref: v1.2}\nfile_mounts: {~/.netrc: /shared/netrc, /data: \"/shared/it's\"}\n",
      "j")->spec;
  std::string script = WorkspaceScript(spec, "job_1", 2);
  EXPECT_NE(script.find("ln -sfn -- '/shared/netrc' \"$HOME\"/'.netrc'\n"), std::string::npos) << script;
  EXPECT_NE(script.find("ln -sfn -- '/shared/it'\\''s' '/data'\n"), std::string::npos) << script;
  EXPECT_NE(script.find("git clone --quiet -- 'file:///srv/repo.git' \"$PWD\"/'workdir-job_1-2'\n"), std::string::npos)
      << script;
  EXPECT_NE(script.find("checkout --quiet 'v1.2' --\n"), std::string::npos) << script;
  EXPECT_NE(script.find("cd -- \"$PWD\"/'workdir-job_1-2'"), std::string::npos) << script;
  EXPECT_EQ(WorkspaceScript(ParseJobSpec("run: x\n", "j")->spec, "job_1", 1), "");
}

// Buckets under a storage location: copied (COPY, `target: url`) or
// mounted (a storage object) with the nodes' rclone config, unmounted when
// the script ends.
TEST(WorkspaceScriptTest, BucketsAreCopiedOrMountedWithTheNodesRcloneConfig) {
  DataConfig data;
  data.node_rclone_config = "/shared/rclone read.conf";
  data.locations.push_back(StorageLocation{"eu", "neb", "eu-n", "eu", "eu:bucket", "s3://bucket", std::nullopt});
  JobSpec spec = ParseJobSpec(
      "file_mounts:\n  /data: s3://bucket/c4/2024-05\n  /ckpt: {source: s3://bucket/ckpt, mode: MOUNT_CACHED}\n"
      "  /other: s3://elsewhere/x\n",
      "j")->spec;
  std::string script = WorkspaceScript(spec, "job_1", 1, &data);
  EXPECT_NE(script.find("mkdir -p -- '/data' && rclone --config '/shared/rclone read.conf' copy --checksum -- "
                        "'eu:bucket/c4/2024-05' '/data'\n"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("causeway_cache_0=$(mktemp -d) && mkdir -p -- '/ckpt' && rclone --config "
                        "'/shared/rclone read.conf' mount --daemon --vfs-cache-mode full --cache-dir "
                        "\"$causeway_cache_0\" -- 'eu:bucket/ckpt' '/ckpt'\n"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("causeway_unmount() { causeway_unmount_cached \"$causeway_cache_0\" '/ckpt'; }\n"
                        "trap 'causeway_unmount' EXIT\n"),
            std::string::npos)
      << script;

  // MOUNT_CACHED paths map to the bucket; the others do not.
  auto ckpt = MountedBucketPath(spec, data, "/ckpt/step-10", "MOUNT_CACHED");
  ASSERT_TRUE(ckpt);
  EXPECT_EQ(ckpt->url, "s3://bucket/ckpt/step-10");
  EXPECT_EQ(ckpt->remote, "eu:bucket/ckpt/step-10");
  EXPECT_EQ(ckpt->location->name, "eu");
  EXPECT_EQ(MountedBucketPath(spec, data, "s3://bucket/ckpt/step-10", "MOUNT_CACHED")->remote, "eu:bucket/ckpt/step-10");
  EXPECT_EQ(MountedBucketPath(spec, data, "/ckpt", "MOUNT_CACHED")->remote, "eu:bucket/ckpt");
  EXPECT_FALSE(MountedBucketPath(spec, data, "/ckpt2/step-10", "MOUNT_CACHED"));
  EXPECT_FALSE(MountedBucketPath(spec, data, "/data/x", "MOUNT_CACHED"));  // copied, not a cached mount
  DataConfig undelivered = data;
  undelivered.node_rclone_config.clear();
  EXPECT_FALSE(MountedBucketPath(spec, undelivered, "/ckpt/step-10", "MOUNT_CACHED"));
  // Not under a storage location: linked, as a path would be (routing
  // refuses such a job before it gets here).
  EXPECT_NE(script.find("ln -sfn -- 's3://elsewhere/x' '/other'"), std::string::npos) << script;
}

// The end of the script unmounts a MOUNT_CACHED mount only once rclone
// has written every file back: run in bash with a cache holding one file
// rclone marks dirty, one whose close it has not seen yet (data, no
// metadata) and one whose metadata it is rewriting in place (truncated,
// empty), and a fusermount3 that notes what the cache said when it ran.
// The script's `sleep` stands in for time passing: at its first call
// rclone has written step-1 back, at its second it has seen final's close
// and written it back too, at its third it has finished mid's metadata.
// No real time passes.
TEST(WorkspaceScriptTest, ACachedMountIsUnmountedOnlyOnceItsCacheIsClean) {
  DataConfig data;
  data.node_rclone_config = "/r.conf";
  data.locations.push_back(StorageLocation{"eu", "neb", "eu-n", "eu", "eu:bucket", "s3://bucket", std::nullopt});
  JobSpec spec = ParseJobSpec("file_mounts:\n  /ckpt: {source: s3://bucket/ckpt, mode: MOUNT_CACHED}\n", "j")->spec;
  std::string script = WorkspaceScript(spec, "job_1", 1, &data);
  size_t from = script.find("causeway_cache_dirty() {"), to = script.find("causeway_unmount() {", from);
  ASSERT_NE(from, std::string::npos);
  ASSERT_NE(to, std::string::npos);
  std::string fns = script.substr(from, to - from);

  std::string dir = ::testing::TempDir() + "/unmount-cached-" + std::to_string(::getpid());
  std::string vfs = dir + "/cache/vfs/eu/bucket/ckpt", meta = dir + "/cache/vfsMeta/eu/bucket/ckpt";
  std::filesystem::create_directories(vfs);
  std::filesystem::create_directories(meta);
  std::filesystem::create_directories(dir + "/bin");
  std::ofstream(vfs + "/step-1") << "weights";
  std::ofstream(vfs + "/final") << "last";
  std::ofstream(vfs + "/mid") << "half";
  std::ofstream(meta + "/step-1") << "{\n\t\"Size\": 7,\n\t\"Dirty\": true\n}\n";  // no metadata for final yet
  std::ofstream(meta + "/mid") << "";                                         // truncated, not yet rewritten
  std::ofstream(dir + "/bin/fusermount3") << "#!/bin/sh\ncat " << meta << "/step-1 " << meta << "/final " << meta << "/mid > " << dir
                                          << "/seen 2>&1\n";
  std::ofstream(dir + "/bin/sleep") << "#!/bin/sh\n"
                                     << "n=$(($(cat " << dir << "/sleeps 2>/dev/null || echo 0) + 1)); echo $n > " << dir
                                     << "/sleeps\n"
                                     << "case $n in 1) f=step-1 ;; 2) f=final ;; *) f=mid ;; esac\n"
                                     << "[ $n -le 3 ] && printf '{\\n\\t\"Dirty\": false\\n}\\n' > " << meta
                                     << "/$f.new && mv " << meta << "/$f.new " << meta << "/$f\n"
                                     << "exit 0\n";
  for (const char* tool : {"/bin/fusermount3", "/bin/sleep"}) {
    std::filesystem::permissions(dir + tool, std::filesystem::perms::owner_all);
  }
  std::ofstream(dir + "/run.sh") << "PATH=" << dir << "/bin:$PATH\n" << fns << "causeway_unmount_cached " << dir
                                 << "/cache /ckpt\n";
  int rc = std::system(("bash " + dir + "/run.sh").c_str());
  EXPECT_EQ(rc, 0);
  std::ifstream seen(dir + "/seen");
  std::string when((std::istreambuf_iterator<char>(seen)), std::istreambuf_iterator<char>());
  const std::string clean = "{\n\t\"Dirty\": false\n}\n";
  EXPECT_EQ(when, clean + clean + clean) << "unmounted while pending";
  EXPECT_FALSE(std::filesystem::exists(dir + "/cache"));  // clean, so removed
  std::ifstream sleeps(dir + "/sleeps");
  std::string waited((std::istreambuf_iterator<char>(sleeps)), std::istreambuf_iterator<char>());
  EXPECT_EQ(waited, "3\n");  // it waited for all three, and no longer
  std::filesystem::remove_all(dir);
}

// Federated identities: the token each arrived with written to a 0600 file
// in a 0700 folder and unset, the variables each cloud's SDK reads set (a
// GCP external_account configuration that reads the file), the tokens
// refreshed in the background with the attempt's credential, and all of it
// gone when the script ends. Run in bash with curl replaced.
TEST(WorkspaceScriptTest, FederatedIdentitiesAreFilesAndTheVariablesTheSdksRead) {
  auto estate = providers::ParseEstate(R"(providers: [{name: n, kind: sim, regions: [{name: r, zone: eu}]}]
clusters: [{name: c, provider: n, region: r, node_pools: [{name: p, gpu_type: H100, gpus_per_node: 8, nodes: 1}]}]
teams: [{name: nlp}, {name: vision}]
identity:
  workload: {audiences: [sts.amazonaws.com, "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/ml/providers/cw", api://AzureADTokenExchange]}
  federations:
    - {name: aws-data, kind: aws, role_arn: "arn:aws:iam::123456789012:role/training", sts_endpoint: "http://127.0.0.1:9", teams: [nlp], default: true}
    - {name: gcp-ml, kind: gcp, audience: "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/ml/providers/cw", service_account: trainer@p.iam.gserviceaccount.com}
    - {name: azure-ml, kind: azure, tenant_id: tenant-1, client_id: client-1, default: true}
)", "estate.yaml");
  ASSERT_TRUE(estate.ok()) << estate.status().ToString();
  const IdentityConfig& identity = estate->identity;
  const CloudFederation& gcp = identity.federations[1];
  auto names = [&](const std::string& yaml) {
    std::vector<std::string> out;
    for (const CloudFederation* f : FederationsFor(ParseJobSpec(yaml + "run: x\n", "j")->spec, identity)) out.push_back(f->name);
    return out;
  };
  EXPECT_EQ(names("labels: {team: nlp}\n"), (std::vector<std::string>{"aws-data", "azure-ml"})) << "the team's defaults";
  EXPECT_EQ(names("labels: {team: vision}\n"), std::vector<std::string>{"azure-ml"});
  EXPECT_EQ(names("labels: {team: vision}\nidentities: [gcp-ml]\n"), std::vector<std::string>{"gcp-ml"})
      << "named: only those";

  std::vector<const CloudFederation*> all = {&identity.federations[0], &identity.federations[1], &identity.federations[2]};
  std::string script = WorkspaceScript(ParseJobSpec("run: x\n", "j")->spec, "job_1", 2, nullptr, all, Micros(1'000'000));
  const std::string dir = ::testing::TempDir() + "/identity-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir + "/bin");
  std::ofstream(dir + "/bin/curl") << "#!/bin/sh\necho \"$@\" >> " << dir << "/curl.log\nprintf fresh\n";
  // Time passes twenty times faster: the refresher's second is 50 ms.
  std::ofstream(dir + "/bin/sleep") << "#!/bin/sh\nexec /bin/sleep 0.05\n";
  for (const char* tool : {"/bin/curl", "/bin/sleep"}) {
    std::filesystem::permissions(dir + tool, std::filesystem::perms::owner_all);
  }
  std::ofstream(dir + "/run.sh") << "set -e\nPATH=" << dir << "/bin:$PATH\nTMPDIR=" << dir << "\n" << script
                                 << "echo \"$AWS_WEB_IDENTITY_TOKEN_FILE\" > " << dir << "/file\n"
                                 << "cat \"$AWS_WEB_IDENTITY_TOKEN_FILE\" > " << dir << "/first\n"
                                 << "stat -c %a \"$AWS_WEB_IDENTITY_TOKEN_FILE\" \"$(dirname \"$AWS_WEB_IDENTITY_TOKEN_FILE\")\" > "
                                 << dir << "/modes\n"
                                 << "cp \"$GOOGLE_APPLICATION_CREDENTIALS\" " << dir << "/gcp.json\n"
                                 << "env > " << dir << "/env\n"
                                 << "echo \"$causeway_identity_refresher\" > " << dir << "/refresher\n"
                                 << "for i in $(seq 400); do [ \"$(cat \"$AZURE_FEDERATED_TOKEN_FILE\")\" = fresh ] && break; "
                                    "sleep 1; done\n"
                                 << "cat \"$AZURE_FEDERATED_TOKEN_FILE\" > " << dir << "/later\n"
                                 << "stat -c %a \"$AZURE_FEDERATED_TOKEN_FILE\" >> " << dir << "/later\n";
  int rc = std::system(("env CAUSEWAY_FEDERATED_TOKEN_AWS=tok-aws CAUSEWAY_FEDERATED_TOKEN_GCP=tok-gcp "
                        "CAUSEWAY_FEDERATED_TOKEN_AZURE=tok-azure CAUSEWAY_TOKEN=cw_attempt CAUSEWAY_SERVER=http://cw "
                        "CAUSEWAY_JOB_ID=job_1 bash " + dir + "/run.sh").c_str());
  ASSERT_EQ(rc, 0) << script;
  auto read = [&](const std::string& name) {
    std::ifstream in(dir + "/" + name);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(read("first"), "tok-aws");
  EXPECT_EQ(read("modes"), "600\n700\n");
  EXPECT_EQ(read("later"), "fresh600\n") << "refreshed in the background, and still the job's alone";
  const std::string env = read("env");
  EXPECT_NE(env.find("AWS_ROLE_ARN=arn:aws:iam::123456789012:role/training\n"), std::string::npos) << env;
  EXPECT_NE(env.find("AWS_ROLE_SESSION_NAME=causeway-job_1-2\n"), std::string::npos);
  EXPECT_NE(env.find("AWS_ENDPOINT_URL_STS=http://127.0.0.1:9\n"), std::string::npos);
  EXPECT_NE(env.find("AZURE_CLIENT_ID=client-1\n"), std::string::npos);
  EXPECT_NE(env.find("AZURE_TENANT_ID=tenant-1\n"), std::string::npos);
  EXPECT_EQ(env.find("CAUSEWAY_FEDERATED_TOKEN_"), std::string::npos) << "the tokens only in their files";
  nlohmann::json config = nlohmann::json::parse(read("gcp.json"), nullptr, false);
  ASSERT_TRUE(config.is_object()) << read("gcp.json");
  EXPECT_EQ(config["type"], "external_account");
  EXPECT_EQ(config["audience"], gcp.audience);
  EXPECT_EQ(config["subject_token_type"], "urn:ietf:params:oauth:token-type:jwt");
  EXPECT_EQ(config["credential_source"]["file"].get<std::string>().substr(0, dir.size()), dir);
  EXPECT_NE(config["service_account_impersonation_url"].get<std::string>().find("trainer@p.iam.gserviceaccount.com:generateAccessToken"),
            std::string::npos);
  const std::string calls = read("curl.log");
  EXPECT_NE(calls.find("Authorization: Bearer cw_attempt"), std::string::npos) << calls;
  EXPECT_NE(calls.find("{\"audience\":\"api://AzureADTokenExchange\"}"), std::string::npos) << calls;
  EXPECT_NE(calls.find("http://cw/v1/jobs/job_1/workload-token"), std::string::npos) << calls;
  // Gone with the script: the folder, and the refresher.
  std::string file = read("file");
  file.pop_back();
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(file).parent_path()));
  // The refresher is gone (killed; a zombie where nothing reaps it), so
  // the calls are all it made.
  const pid_t refresher = std::stoi(read("refresher"));
  auto gone = [&] {
    std::ifstream stat("/proc/" + std::to_string(refresher) + "/stat");
    std::string fields((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const size_t paren = fields.rfind(')');
    return ::kill(refresher, 0) != 0 || (paren != std::string::npos && fields.compare(paren + 2, 1, "Z") == 0);
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!gone() && std::chrono::steady_clock::now() < deadline) {
  }
  const auto calls_then = read("curl.log").size();
  EXPECT_TRUE(gone()) << "the refresher outlived the script";
  EXPECT_EQ(read("curl.log").size(), calls_then) << "the refresher outlived the script";
  std::filesystem::remove_all(dir);
}

// A secret the spec asks for as a file: the broker's value arrives in its
// variable, lands in a 0600 file of a 0700 folder, the variable then holds
// the path, and the folder is gone when the script ends; one asked for in
// the environment stays as it came.
TEST(WorkspaceScriptTest, ASecretAskedForAsAFileIsAFileOnlyTheJobReadsUntilTheEnd) {
  auto spec = ParseJobSpec("secrets:\n  CERT: {from: aws-sm://prod/tls, as: file}\n  DB: aws-sm://prod/db#password\nrun: x\n", "j");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  const std::string script = WorkspaceScript(spec->spec, "job_1", 1, nullptr, {}, Micros(1'000'000));
  const std::string dir = ::testing::TempDir() + "/secret-files-" + std::to_string(::getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/run.sh") << "set -e\nTMPDIR=" << dir << "\n" << script
                                 << "echo \"$CERT\" > " << dir << "/path\n"
                                 << "cat \"$CERT\" > " << dir << "/cert\n"
                                 << "printf '%s' \"$DB\" > " << dir << "/db\n"
                                 << "stat -c %a \"$CERT\" \"$(dirname \"$CERT\")\" > " << dir << "/modes\n";
  ASSERT_EQ(std::system(("env 'CERT=-----BEGIN KEY-----\nline two' DB=pw bash " + dir + "/run.sh").c_str()), 0) << script;
  auto read = [&](const std::string& name) {
    std::ifstream in(dir + "/" + name);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(read("cert"), "-----BEGIN KEY-----\nline two");
  EXPECT_EQ(read("db"), "pw");
  EXPECT_EQ(read("modes"), "600\n700\n");
  std::string path = read("path");
  path.pop_back();
  EXPECT_EQ(path.rfind(dir + "/causeway-secrets.", 0), 0u) << path;
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(path).parent_path())) << "removed when the script ends";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace causeway::policy
