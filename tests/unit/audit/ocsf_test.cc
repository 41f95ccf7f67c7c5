// OCSF normalization (src/audit): Causeway's own events and the providers'
// logs (examples/audit/) become events whose class's required attributes and
// enum values are all there; bad records are reported and skipped.
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <map>
#include <random>

#include <nlohmann/json.hpp>

#include "store/audit_chain.h"
#include "audit/importers.h"
#include "audit/ocsf.h"
#include <filesystem>
#include <unistd.h>

namespace causeway::audit {
namespace {

using nlohmann::json;

std::string Sample(const std::string& name) { return std::string(CAUSEWAY_SOURCE_DIR) + "/examples/audit/" + name; }

AuditEvent Own(const std::string& action, const std::string& resource, Details details = {}) {
  AuditEvent e;
  e.seq = 42;
  e.time = FromUnixMicros(1'800'000'000'123'456);
  e.actor = "user:alice@corp.example";
  e.action = action;
  e.resource = resource;
  e.details = std::move(details);
  return e;
}

TEST(OcsfTest, CausewaysOwnEventsMapToTheirClassesAndValidate) {
  struct Case {
    const char* action;
    const char* resource;
    int class_uid;
    int activity;
  };
  const Case cases[] = {
      {"job.submit", "job/job_1", ocsf::kScheduledJobActivity, 1},
      {"job.launch", "job/job_1", ocsf::kScheduledJobActivity, 6},
      {"job.cancel", "job/job_1", ocsf::kScheduledJobActivity, 3},
      {"scim.user.create", "user/usr_1", ocsf::kAccountChange, 1},
      {"scim.user.deactivate", "user/usr_1", ocsf::kAccountChange, 5},
      {"scim.user.reactivate", "user/usr_1", ocsf::kAccountChange, 2},
      {"scim.user.delete", "user/usr_1", ocsf::kAccountChange, 6},
      {"identity.deprovision", "user/alice@corp.example", ocsf::kAccountChange, 5},
      {"scim.group.create", "group/grp_1", ocsf::kGroupManagement, 6},
      {"token.create", "token/tok_1", ocsf::kApiActivity, 1},
      {"token.revoke", "token/tok_1", ocsf::kApiActivity, 4},
      {"breakglass.use", "breakglass/bg_1", ocsf::kApiActivity, 2},
      {"provider.outage", "provider/nebius", ocsf::kApiActivity, 3},
  };
  for (const Case& c : cases) {
    json ev = ocsf::FromCauseway(Own(c.action, c.resource, {{"userName", "alice@corp.example"}}), "eu-north1");
    EXPECT_TRUE(ocsf::Validate(ev).ok()) << c.action << ": " << ocsf::Validate(ev).ToString() << "\n" << ev.dump(2);
    EXPECT_EQ(ev["class_uid"], c.class_uid) << c.action;
    EXPECT_EQ(ev["activity_id"], c.activity) << c.action;
    EXPECT_EQ(ev["type_uid"], c.class_uid * 100 + c.activity) << c.action;
    EXPECT_EQ(ev["time"], 1'800'000'000'123) << c.action;  // milliseconds
    EXPECT_EQ(ev["metadata"]["uid"], "causeway:42");
    EXPECT_EQ(ev["cloud"]["region"], "eu-north1");
    EXPECT_NE(ev["raw_data"].get<std::string>().find("\"seq\":42"), std::string::npos);  // the chained original
  }
  json bg = ocsf::FromCauseway(Own("breakglass.use", "breakglass/bg_1"));
  EXPECT_EQ(bg["severity_id"], ocsf::kSeverityMedium);
  EXPECT_EQ(bg["actor"]["user"]["name"], "alice@corp.example");
}

TEST(OcsfTest, ValidationNamesWhatAClassLacks) {
  json good = ocsf::FromCauseway(Own("token.create", "token/tok_1"));
  ASSERT_TRUE(ocsf::Validate(good).ok());
  auto broken = [&](const std::function<void(json&)>& edit, const char* says) {
    json ev = good;
    edit(ev);
    Status st = ocsf::Validate(ev);
    EXPECT_FALSE(st.ok()) << says;
    EXPECT_NE(st.message().find(says), std::string::npos) << st.message();
  };
  broken([](json& e) { e.erase("class_uid"); }, "class_uid is required");
  broken([](json& e) { e["class_uid"] = 4001; }, "is not one Causeway produces");
  broken([](json& e) { e["category_uid"] = 3; }, "category_uid must be 6");
  broken([](json& e) { e["activity_id"] = 7; }, "not in the class's enum");
  broken([](json& e) { e["type_uid"] = 600399; }, "type_uid must be");
  broken([](json& e) { e["severity_id"] = 9; }, "severity_id");
  broken([](json& e) { e["status_id"] = 5; }, "status_id");
  broken([](json& e) { e["time"] = "yesterday"; }, "time");
  broken([](json& e) { e["metadata"].erase("product"); }, "metadata.product");
  broken([](json& e) { e["metadata"].erase("version"); }, "metadata.version");
  broken([](json& e) { e["cloud"].erase("provider"); }, "cloud.provider");
  broken([](json& e) { e.erase("actor"); }, "actor is required");
  broken([](json& e) { e["api"].erase("operation"); }, "api.operation");
  broken([](json& e) { e.erase("src_endpoint"); }, "src_endpoint");
  json user = ocsf::FromCauseway(Own("scim.user.create", "user/usr_1"));
  user.erase("user");
  EXPECT_NE(ocsf::Validate(user).message().find("user is required"), std::string::npos);
  json job = ocsf::FromCauseway(Own("job.submit", "job/j"));
  job["job"].erase("name");
  EXPECT_NE(ocsf::Validate(job).message().find("job.name"), std::string::npos);
  json auth = good;
  auth["class_uid"] = ocsf::kAuthentication;
  auth["category_uid"] = 3;
  auth["activity_id"] = 1;
  auth["type_uid"] = 300201;
  auth["user"] = {{"name", "alice"}};
  EXPECT_NE(ocsf::Validate(auth).message().find("service or dst_endpoint"), std::string::npos);
  auth["service"] = {{"name", "causeway"}};
  EXPECT_TRUE(ocsf::Validate(auth).ok()) << ocsf::Validate(auth).ToString();
}

// Every event a file yields, by source id.
std::map<std::string, json> ImportAll(const std::string& path, LogSource source, ImportStats* stats = nullptr) {
  std::map<std::string, json> out;
  auto result = ImportLog(path, ImportOptions{"coreweave", source}, [&](std::string_view id, std::string_view text) {
    out[std::string(id)] = json::parse(text);
  });
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  if (stats && result.ok()) *stats = *result;
  return out;
}

TEST(ImportTest, KubernetesAuditEventsIncludingAksEnvelopes) {
  ImportStats stats;
  auto events = ImportAll(Sample("k8s-audit.jsonl"), LogSource::kKubernetes, &stats);
  EXPECT_EQ(stats.records, 5);
  EXPECT_EQ(stats.skipped, 1);  // the RequestReceived stage
  EXPECT_EQ(stats.events, 4);
  EXPECT_EQ(stats.issues_total, 0);
  for (const auto& [id, ev] : events) EXPECT_TRUE(ocsf::Validate(ev).ok()) << id << ": " << ocsf::Validate(ev).ToString();

  const json& create = events.at("6f8e2c1a-1b2c-4d5e-9f00-111111111111");
  EXPECT_EQ(create["activity_id"], 1);
  EXPECT_EQ(create["status_id"], ocsf::kStatusSuccess);
  EXPECT_EQ(create["time"], 1'796'030'102'184);  // 2026-11-30T09:15:02.184512Z
  EXPECT_EQ(create["actor"]["user"]["name"], "alice@corp.example");
  EXPECT_EQ(create["actor"]["user"]["groups"][0]["name"], "ml-researchers");
  EXPECT_EQ(create["src_endpoint"]["ip"], "10.20.30.40");
  EXPECT_EQ(create["api"]["operation"], "create");
  EXPECT_EQ(create["resources"][0], json({{"type", "pods"}, {"name", "train-llama-0"}, {"namespace", "ml"}}));
  EXPECT_EQ(create["cloud"]["provider"], "coreweave");
  EXPECT_EQ(json::parse(create["raw_data"].get<std::string>())["auditID"], "6f8e2c1a-1b2c-4d5e-9f00-111111111111");

  const json& forbidden = events.at("0b7d9c3e-7a61-4c2b-8d1e-222222222222");
  EXPECT_EQ(forbidden["activity_id"], 2);
  EXPECT_EQ(forbidden["status_id"], ocsf::kStatusFailure);
  const json& deleted = events.at("a41c7e55-0d2f-4a9b-b3c4-333333333333");
  EXPECT_EQ(deleted["activity_id"], 4);
  EXPECT_EQ(deleted["api"]["service"]["name"], "batch");
  // AKS: the event inside properties.log, the envelope kept as raw_data.
  const json& exec = events.at("c9a0e1f2-5b6c-4d7e-8f90-555555555555");
  EXPECT_EQ(exec["actor"]["user"]["name"], "alice@corp.example");
  EXPECT_EQ(json::parse(exec["raw_data"].get<std::string>())["category"], "kube-audit");

  // Impersonated: the request acted as the impersonated user (the one a
  // person's search finds); who impersonated them is invoked_by.
  auto as = NormalizeRecord(
      R"({"kind":"Event","auditID":"imp-1","stage":"ResponseComplete","verb":"list","requestURI":"/apis/batch/v1/namespaces/ml/jobs",)"
      R"("user":{"username":"platform-admin","groups":["system:masters"]},)"
      R"("impersonatedUser":{"username":"oidc:bob@corp.example","groups":["nlp"]},)"
      R"("responseStatus":{"code":200},"stageTimestamp":"2026-11-30T00:00:00Z"})",
      ImportOptions{"coreweave", LogSource::kKubernetes});
  ASSERT_TRUE(as.ok()) << as.status().ToString();
  json impersonated = json::parse(as->at(0).ocsf_json);
  EXPECT_TRUE(ocsf::Validate(impersonated).ok()) << ocsf::Validate(impersonated).ToString();
  EXPECT_EQ(impersonated["actor"]["user"]["name"], "oidc:bob@corp.example");
  EXPECT_EQ(impersonated["actor"]["user"]["groups"][0]["name"], "nlp");
  EXPECT_EQ(impersonated["actor"]["invoked_by"], "platform-admin");

  // Whom an object is for, where the request is logged: a RoleBinding's
  // User subject, a Causeway Job's owner; kept as the resource's owner (and
  // so the event's subject, found by a person's search).
  auto bound = NormalizeRecord(
      R"({"kind":"Event","auditID":"rb-1","stage":"ResponseComplete","verb":"create","user":{"username":"causeway"},)"
      R"("objectRef":{"resource":"rolebindings","namespace":"ml","name":"causeway-researcher-1a2b","apiGroup":"rbac.authorization.k8s.io"},)"
      R"("requestObject":{"kind":"RoleBinding","subjects":[{"kind":"Group","name":"g"},{"kind":"User","name":"oidc:bob@corp.example"}]},)"
      R"("responseStatus":{"code":201},"stageTimestamp":"2026-11-30T00:00:00Z"})",
      ImportOptions{"coreweave", LogSource::kKubernetes});
  ASSERT_TRUE(bound.ok()) << bound.status().ToString();
  json binding = json::parse(bound->at(0).ocsf_json);
  EXPECT_TRUE(ocsf::Validate(binding).ok()) << ocsf::Validate(binding).ToString();
  EXPECT_EQ(binding["resources"][0]["owner"]["name"], "oidc:bob@corp.example");
  auto job = NormalizeRecord(
      R"({"kind":"Event","auditID":"job-1","stage":"ResponseComplete","verb":"create","user":{"username":"causeway"},)"
      R"("objectRef":{"resource":"jobs","namespace":"ml","name":"cw-job-1","apiGroup":"batch"},)"
      R"("requestObject":{"kind":"Job","metadata":{"annotations":{"causeway.dev/owner":"bob@corp.example"}}},)"
      R"("responseStatus":{"code":201},"stageTimestamp":"2026-11-30T00:00:00Z"})",
      ImportOptions{"coreweave", LogSource::kKubernetes});
  ASSERT_TRUE(job.ok()) << job.status().ToString();
  EXPECT_EQ(json::parse(job->at(0).ocsf_json)["resources"][0]["owner"]["name"], "bob@corp.example");
}

TEST(ImportTest, CloudTrailRecordsArrayAndJsonLines) {
  ImportStats stats;
  auto events = ImportAll(Sample("cloudtrail.json"), LogSource::kCloudTrail, &stats);
  ASSERT_EQ(stats.events, 3) << (stats.issues.empty() ? "" : stats.issues[0].reason);
  for (const auto& [id, ev] : events) EXPECT_TRUE(ocsf::Validate(ev).ok()) << id << ": " << ocsf::Validate(ev).ToString();
  const json& get = events.at("f4c1e8a2-9b3d-4e7f-a1b2-c3d4e5f60718");
  EXPECT_EQ(get["activity_id"], 2);
  EXPECT_EQ(get["actor"]["user"]["name"], "ml-researcher");  // the role behind the session
  EXPECT_EQ(get["actor"]["user"]["uid"], "arn:aws:sts::111122223333:assumed-role/ml-researcher/alice@corp.example");
  EXPECT_EQ(get["cloud"]["region"], "us-east-1");
  EXPECT_EQ(get["cloud"]["account"]["uid"], "111122223333");
  EXPECT_EQ(get["src_endpoint"]["ip"], "203.0.113.24");
  EXPECT_EQ(get["resources"].size(), 2u);
  EXPECT_EQ(get["api"]["service"]["name"], "s3.amazonaws.com");
  const json& denied = events.at("9d8c7b6a-5f4e-3d2c-1b0a-998877665544");
  EXPECT_EQ(denied["activity_id"], 4);
  EXPECT_EQ(denied["status_id"], ocsf::kStatusFailure);
  EXPECT_EQ(denied["status_code"], "AccessDenied");
  EXPECT_EQ(denied["actor"]["user"]["name"], "bob");
  const json& run = events.at("aa11bb22-cc33-dd44-ee55-ff6677889900");
  EXPECT_EQ(run["activity_id"], 1);
  EXPECT_EQ(run["src_endpoint"]["domain"], "autoscaling.amazonaws.com");

  // The same records as JSON lines, gzip-compressed, one twice and one broken.
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("cw-ocsf-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ifstream in(Sample("cloudtrail.json"));
  json doc = json::parse(in);
  std::string lines;
  for (const json& r : doc["Records"]) lines += r.dump() + "\n";
  lines += doc["Records"][0].dump() + "\n";
  lines += "{\"eventVersion\": \"1.09\", \"eventName\": \n";
  lines += "{\"eventVersion\": \"1.09\", \"eventName\": \"GetObject\"}\n";
  std::string gz = (dir / "trail.jsonl.gz").string();
  gzFile f = gzopen(gz.c_str(), "wb");
  gzwrite(f, lines.data(), static_cast<unsigned>(lines.size()));
  gzclose(f);
  auto again = ImportAll(gz, LogSource::kCloudTrail, &stats);
  EXPECT_EQ(again.size(), 3u);
  EXPECT_EQ(stats.duplicates, 1);
  ASSERT_EQ(stats.issues_total, 2);
  EXPECT_EQ(stats.issues[0].line, 5);
  EXPECT_EQ(stats.issues[0].file, gz);
  EXPECT_NE(stats.issues[0].reason.find("malformed JSON"), std::string::npos);
  EXPECT_EQ(stats.issues[1].line, 6);
  EXPECT_NE(stats.issues[1].reason.find("eventTime"), std::string::npos);
  EXPECT_EQ(again.at("aa11bb22-cc33-dd44-ee55-ff6677889900")["api"], events.at("aa11bb22-cc33-dd44-ee55-ff6677889900")["api"]);
  std::filesystem::remove_all(dir);
}

TEST(ImportTest, GcpCloudAuditLogEntries) {
  ImportStats stats;
  auto events = ImportAll(Sample("gcp-audit.json"), LogSource::kGcp, &stats);
  ASSERT_EQ(stats.events, 3) << (stats.issues.empty() ? "" : stats.issues[0].reason);
  for (const auto& [id, ev] : events) EXPECT_TRUE(ocsf::Validate(ev).ok()) << id << ": " << ocsf::Validate(ev).ToString();
  const json& del = events.at("1q2w3e4r5t6y7u8i");
  EXPECT_EQ(del["activity_id"], 4);
  EXPECT_EQ(del["status_id"], ocsf::kStatusSuccess);
  EXPECT_EQ(del["actor"]["user"]["name"], "alice@corp.example");
  EXPECT_EQ(del["api"]["service"]["name"], "storage.googleapis.com");
  EXPECT_EQ(del["cloud"]["region"], "us-central1");
  EXPECT_EQ(del["cloud"]["project_uid"], "corp-ml-prod");
  EXPECT_EQ(del["resources"][0]["type"], "gcs_bucket");
  const json& denied = events.at("-abc123def456");
  EXPECT_EQ(denied["activity_id"], 1);  // instances.insert
  EXPECT_EQ(denied["status_id"], ocsf::kStatusFailure);
  EXPECT_EQ(denied["status_code"], "7");
  EXPECT_EQ(denied["severity_id"], ocsf::kSeverityMedium);
  EXPECT_EQ(denied["time"], 1'796'050'920'000);  // 10:02 at -05:00 is 15:02Z
  EXPECT_EQ(denied["cloud"]["zone"], "us-central1-a");  // a zone, not a region
  EXPECT_FALSE(denied["cloud"].contains("region"));
  const json& gke = events.at("7c0f1a2b-gke-0001");
  EXPECT_EQ(gke["src_endpoint"]["domain"], "gce-internal-ip");
  EXPECT_EQ(gke["api"]["service"]["name"], "k8s.io");
}

TEST(ImportTest, AzureActivityLogDiagnosticAndRestForms) {
  ImportStats stats;
  auto events = ImportAll(Sample("azure-activity.jsonl"), LogSource::kAzure, &stats);
  ASSERT_EQ(stats.events, 3) << (stats.issues.empty() ? "" : stats.issues[0].reason);
  for (const auto& [id, ev] : events) EXPECT_TRUE(ocsf::Validate(ev).ok()) << id << ": " << ocsf::Validate(ev).ToString();
  // A write's Start and Success records are two events of one operation.
  int deletes = 0;
  for (const auto& [id, ev] : events) {
    if (ev["api"]["operation"] != "MICROSOFT.STORAGE/STORAGEACCOUNTS/DELETE") continue;
    ++deletes;
    EXPECT_EQ(ev["activity_id"], 4);
    EXPECT_EQ(ev["actor"]["user"]["name"], "alice@corp.example");
    EXPECT_EQ(ev["actor"]["user"]["uid"], "a1b2c3d4-0000-4000-8000-000000000001");
    EXPECT_EQ(ev["api"]["request"]["uid"], "5e0c1b2a-9f8e-4d7c-b6a5-443322110099");
    EXPECT_EQ(ev["status_id"], ev["status_detail"] == "Success" ? ocsf::kStatusSuccess : ocsf::kStatusUnknown);
  }
  EXPECT_EQ(deletes, 2);
  const json& vm = events.at("d8a1f2e3-4b5c-6d7e-8f90-a1b2c3d4e5f6");
  EXPECT_EQ(vm["activity_id"], 3);  // write
  EXPECT_EQ(vm["status_id"], ocsf::kStatusFailure);
  EXPECT_EQ(vm["actor"]["user"]["name"], "carol@corp.example");
  EXPECT_EQ(vm["src_endpoint"]["ip"], "203.0.113.9");
  EXPECT_EQ(vm["time"], 1'796'033'720'000);  // 11:15:20+01:00 is 10:15:20Z
  EXPECT_EQ(vm["cloud"]["account"]["uid"], "0f8e1d2c-3b4a-5968-7a6b-5c4d3e2f1a0b");

  // An Event Hubs batch: {"records": [...]}.
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("cw-azure-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ifstream in(Sample("azure-activity.jsonl"));
  json batch = {{"records", json::array()}};
  for (std::string line; std::getline(in, line);) batch["records"].push_back(json::parse(line));
  batch["records"].push_back({{"time", "2026-11-30T09:00:00Z"}});
  std::ofstream(dir / "batch.json") << batch.dump(2);
  auto again = ImportAll((dir / "batch.json").string(), LogSource::kAzure, &stats);
  EXPECT_EQ(again.size(), 3u);
  ASSERT_EQ(stats.issues_total, 1);
  EXPECT_EQ(stats.issues[0].line, 4);
  EXPECT_NE(stats.issues[0].reason.find("operationName"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST(ImportTest, OktaSystemLogSignInsLifecycleAndTheRest) {
  ImportStats stats;
  auto events = ImportAll(Sample("okta-system-log.json"), LogSource::kOkta, &stats);
  ASSERT_EQ(stats.events, 4) << (stats.issues.empty() ? "" : stats.issues[0].reason);
  for (const auto& [id, ev] : events) EXPECT_TRUE(ocsf::Validate(ev).ok()) << id << ": " << ocsf::Validate(ev).ToString();
  const json& login = events.at("2a6c1f10-af11-11ef-9d1c-0b1a2c3d4e5f");
  EXPECT_EQ(login["class_uid"], ocsf::kAuthentication);
  EXPECT_EQ(login["activity_id"], 1);
  EXPECT_EQ(login["user"]["name"], "alice@corp.example");
  const json& failed = events.at("3b7d2e21-af11-11ef-9d1c-0b1a2c3d4e5f");
  EXPECT_EQ(failed["status_id"], ocsf::kStatusFailure);
  EXPECT_EQ(failed["status_detail"], "INVALID_CREDENTIALS");
  EXPECT_EQ(failed["severity_id"], ocsf::kSeverityLow);
  const json& off = events.at("4c8e3f32-af11-11ef-9d1c-0b1a2c3d4e5f");
  EXPECT_EQ(off["class_uid"], ocsf::kAccountChange);
  EXPECT_EQ(off["activity_id"], 5);  // Disable
  EXPECT_EQ(off["user"]["name"], "alice@corp.example");  // the account acted on
  EXPECT_EQ(off["actor"]["user"]["name"], "it-admin@corp.example");
  const json& group = events.at("5d9f4043-af11-11ef-9d1c-0b1a2c3d4e5f");
  // A membership change is Group Management: the group and the member
  // outside raw_data.
  EXPECT_EQ(group["class_uid"], ocsf::kGroupManagement);
  EXPECT_EQ(group["activity_id"], ocsf::kGroupRemoveUser);
  EXPECT_EQ(group["group"]["name"], "causeway-nlp-researchers");
  EXPECT_EQ(group["user"]["name"], "alice@corp.example");
  EXPECT_EQ(group["resources"].size(), 2u);
}

std::filesystem::path SlurmData() {
  const char* env = std::getenv("CAUSEWAY_SHARED_DATA");
  std::filesystem::path root = env && *env ? std::filesystem::path(env)
                                           : std::filesystem::path(CAUSEWAY_SOURCE_DIR) / ".." / "shared" / "data";
  return root / "audit" / "slurm";
}

TEST(ImportTest, SlurmAccountingFromRealSacctJson) {
  std::filesystem::path sample = SlurmData() / "sacct_1";
  if (!std::filesystem::exists(sample)) GTEST_SKIP() << "real Slurm samples not found at " << sample << " (set CAUSEWAY_SHARED_DATA)";
  ImportStats stats;
  auto events = ImportAll(sample.string(), LogSource::kSlurm, &stats);
  EXPECT_EQ(stats.records, 2);
  EXPECT_EQ(stats.issues_total, 0) << (stats.issues.empty() ? "" : stats.issues[0].reason);
  // Job 10 (array task 1_7): submitted and started, still running (end 0).
  // Job 20 (array task 2_0): submitted, started, ended as REQUEUED.
  ASSERT_EQ(events.size(), 5u);
  for (const auto& [id, ev] : events) EXPECT_TRUE(ocsf::Validate(ev).ok()) << id << ": " << ocsf::Validate(ev).ToString();
  const json& submit = events.at("slurm:cedar:1_7:submit");
  EXPECT_EQ(submit["class_uid"], ocsf::kScheduledJobActivity);
  EXPECT_EQ(submit["activity_id"], 1);
  EXPECT_EQ(submit["time"], int64_t{1680193479} * 1000);
  EXPECT_EQ(submit["actor"]["user"]["name"], "nobody");
  EXPECT_EQ(submit["job"]["name"], "1_7");
  EXPECT_EQ(submit["job"]["desc"], "test-job-1");
  EXPECT_EQ(submit["resources"][0]["group"], "def-cerise-rrg");
  EXPECT_EQ(events.at("slurm:cedar:1_7:start")["activity_id"], 6);
  EXPECT_FALSE(events.count("slurm:cedar:1_7:end"));
  const json& end = events.at("slurm:cedar:2_0:end");
  EXPECT_EQ(end["time"], int64_t{1680215981} * 1000);
  EXPECT_EQ(end["status_detail"], "REQUEUED");
  EXPECT_EQ(end["actor"]["user"]["name"], "nobody2");
  EXPECT_EQ(json::parse(end["raw_data"].get<std::string>())["job_id"], 20);
}

TEST(ImportTest, SlurmRestListingOfLaterVersions) {
  // slurmdbd's REST listing (v0.0.40): numbers as {set, infinite, number},
  // the state a list; a cancelled job ends as Delete.
  json listing = {{"jobs",
                   {{{"job_id", 4242},
                     {"user", "alice"},
                     {"account", "nlp"},
                     {"cluster", "coreweave-h100"},
                     {"name", "finetune"},
                     {"array", {{"job_id", 0}, {"task_id", {{"set", false}, {"infinite", false}, {"number", 0}}}}},
                     {"state", {{"current", {"CANCELLED"}}, {"reason", "None"}}},
                     {"time",
                      {{"submission", 1796000000},
                       {"start", {{"set", true}, {"infinite", false}, {"number", 1796000060}}},
                       {"end", {{"set", true}, {"infinite", false}, {"number", 1796003600}}}}}},
                    {{"job_id", 4243}, {"user", "bob"}, {"time", {{"submission", "yesterday"}}}}}}};
  auto events = NormalizeRecord(listing["jobs"][0].dump(), ImportOptions{"coreweave", LogSource::kSlurm});
  ASSERT_TRUE(events.ok()) << events.status().ToString();
  ASSERT_EQ(events->size(), 3u);
  json end = json::parse(events->at(2).ocsf_json);
  EXPECT_EQ(events->at(2).source_id, "slurm:coreweave-h100:4242:end");
  EXPECT_EQ(end["activity_id"], 3);
  EXPECT_EQ(end["time"], int64_t{1796003600} * 1000);
  EXPECT_TRUE(ocsf::Validate(end).ok()) << ocsf::Validate(end).ToString();
  auto bad = NormalizeRecord(listing["jobs"][1].dump(), ImportOptions{"coreweave", LogSource::kSlurm});
  EXPECT_NE(bad.status().message().find("time.submission"), std::string::npos) << bad.status().ToString();
}

// Escaping in the writer (sixteen bytes at a time) against nlohmann's
// reading: every ASCII byte, control characters included, at every
// position and length around the sixteen-byte blocks.
TEST(ImportTest, EveryByteSurvivesTheWriterEscaping) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string value;
    size_t n = static_cast<size_t>(rng() % 70);
    for (size_t i = 0; i < n; ++i) {
      int pick = static_cast<int>(rng() % 10);
      value += pick < 3 ? '"' : pick < 4 ? '\\' : pick < 5 ? static_cast<char>(1 + rng() % 31) : static_cast<char>(32 + rng() % 95);
    }
    json record = {{"kind", "Event"}, {"auditID", "a" + std::to_string(round)}, {"verb", "get"},
                   {"requestURI", value}, {"stageTimestamp", "2026-11-30T00:00:00Z"}};
    std::string line = record.dump();
    auto events = NormalizeRecord(line, ImportOptions{"k", LogSource::kKubernetes});
    ASSERT_TRUE(events.ok()) << events.status().ToString();
    json ev = json::parse(events->at(0).ocsf_json);
    ASSERT_EQ(ev["http_request"]["url"]["path"], value) << round;
    ASSERT_EQ(ev["raw_data"], line) << round;
  }
}

// JSON lines are read a chunk at a time: every chunk size, even one
// smaller than a line (which then grows the buffer), gives the same events,
// issues and line numbers as reading the file whole; gzip the same.
TEST(ImportTest, StreamingInChunksOfAnySizeGivesTheSameResult) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / ("cw-chunks-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ifstream in(Sample("k8s-audit.jsonl"));
  std::string text((std::istreambuf_iterator<char>(in)), {});
  text += "\n  \n{\"kind\": \"Event\", broken\n";
  text += text;  // every id again: duplicates
  text += "{\"kind\":\"Event\",\"auditID\":\"last\",\"verb\":\"get\",\"stageTimestamp\":\"2026-11-30T00:00:00Z\"}";  // no final newline
  std::string plain = (dir / "k8s.jsonl").string(), gz = (dir / "k8s.jsonl.gz").string();
  std::ofstream(plain) << text;
  gzFile f = gzopen(gz.c_str(), "wb");
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
  auto run = [&](const std::string& path, size_t chunk) {
    ImportOptions o{"coreweave", LogSource::kKubernetes};
    o.chunk_bytes = chunk;
    std::vector<std::string> ids;
    auto stats = ImportLog(path, o, [&](std::string_view id, std::string_view) { ids.emplace_back(id); });
    EXPECT_TRUE(stats.ok());
    std::string summary = std::to_string(stats->records) + "/" + std::to_string(stats->events) + "/" +
                          std::to_string(stats->duplicates) + "/" + std::to_string(stats->skipped) + "/";
    for (const auto& i : stats->issues) summary += std::to_string(i.line) + ",";
    for (const auto& id : ids) summary += id + ";";
    return summary;
  };
  std::string whole = run(plain, 1 << 20);
  EXPECT_NE(whole.find("last;"), std::string::npos) << whole;
  for (size_t chunk : {1, 7, 64, 333, 1000, 4096}) {
    EXPECT_EQ(run(plain, chunk), whole) << chunk;
    EXPECT_EQ(run(gz, chunk), whole) << chunk;
  }
  // A one-document file (a Records array, pretty-printed) is read whole
  // whatever the chunk.
  ImportOptions small{"aws", LogSource::kCloudTrail};
  small.chunk_bytes = 7;
  auto trail = ImportLog(Sample("cloudtrail.json"), small, [](std::string_view, std::string_view) {});
  ASSERT_TRUE(trail.ok());
  EXPECT_EQ(trail->events, 3);
  EXPECT_EQ(trail->issues_total, 0);
  std::filesystem::remove_all(dir);
}

TEST(ImportTest, RecordsOfTheWrongKindAreReportedNotGuessed) {
  auto k8s_as_trail = NormalizeRecord(R"({"kind":"Event","auditID":"x","verb":"get"})",
                                      ImportOptions{"aws", LogSource::kCloudTrail});
  EXPECT_EQ(k8s_as_trail.status().code(), Code::kInvalidArgument);
  auto trail_as_k8s = NormalizeRecord(R"({"eventID":"x","eventName":"GetObject"})",
                                      ImportOptions{"aws", LogSource::kKubernetes});
  EXPECT_NE(trail_as_k8s.status().message().find("not a Kubernetes audit event"), std::string::npos);
  auto bad_time = NormalizeRecord(R"({"kind":"Event","auditID":"x","verb":"get","stageTimestamp":"soon"})",
                                  ImportOptions{"k", LogSource::kKubernetes});
  EXPECT_NE(bad_time.status().message().find("stageTimestamp"), std::string::npos);
  auto not_object = NormalizeRecord("[1, 2]", ImportOptions{"k", LogSource::kKubernetes});
  EXPECT_NE(not_object.status().message().find("JSON object"), std::string::npos);
  auto escaped = NormalizeRecord("{\"kind\":\"Event\",\"auditID\":\"q\\\"\",\"verb\":\"get\",\"requestURI\":\"/a\\nb\","
                                 "\"stageTimestamp\":\"2026-11-30T00:00:00Z\"}",
                                 ImportOptions{"k", LogSource::kKubernetes});
  ASSERT_TRUE(escaped.ok()) << escaped.status().ToString();
  ASSERT_EQ(escaped->size(), 1u);
  json ev = json::parse(escaped->at(0).ocsf_json);  // still valid JSON with quotes and newlines inside
  EXPECT_EQ(ev["metadata"]["uid"], "q\"");
  EXPECT_EQ(ev["http_request"]["url"]["path"], "/a\nb");
  EXPECT_EQ(ParseLogSource("splunk").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace causeway::audit

namespace causeway::audit {
namespace {

// Verification's fast path rebuilds each event's canonical JSON from the
// stored columns; it must be byte for byte what the hash was taken over,
// whatever the strings hold.
TEST(ChainTest, TheCanonicalJsonFromStoredColumnsIsTheHashedOne) {
  const char* strings[] = {"job.submit", "user:alice@corp.example", "quote\"back\\slash", "tab\tnew\nline\x01",
                           "caf\xc3\xa9 \xe2\x9c\x93", "bad \xff utf-8", "del\x7f", ""};
  int64_t seq = 1;
  for (const char* a : strings) {
    for (const char* b : strings) {
      AuditEvent e;
      e.seq = seq++;
      e.time = FromUnixMicros(1796000000123456);
      e.actor = a;
      e.action = b;
      e.resource = std::string("job/") + a;
      e.details = {{"name", b}, {"n", 42}, {"nested", Details{{"z", a}, {"a", DetailValue::List{1, "x"}}}}};
      e.prev_hash = std::string(64, 'a');
      e.hash = ComputeHash(e);
      std::string details = CanonicalDetails(e.details);
      RawAuditEvent raw{e.seq, ToUnixMicros(e.time), e.actor, e.action, e.resource, details, e.prev_hash, e.hash};
      std::string rebuilt;
      AppendCanonicalJson(raw, rebuilt);
      EXPECT_EQ(rebuilt, CanonicalJson(e)) << a << " / " << b;
    }
  }
  // Through the verifier: a good event passes; one whose details were
  // stored as other (non-canonical) text of the same JSON passes the same
  // way the parsing path does; a changed one is caught.
  AuditEvent e;
  e.seq = 1;
  e.time = FromUnixMicros(1796000000000000);
  e.actor = "user:alice";
  e.action = "job.submit";
  e.resource = "job/j1";
  e.details = {{"b", 1}, {"a", "x"}};
  e.prev_hash = kGenesisHash;
  e.hash = ComputeHash(e);
  std::string spaced = "{ \"b\": 1, \"a\": \"x\" }";
  ChainVerifier loose;
  EXPECT_TRUE(loose.AddRaw(RawAuditEvent{1, ToUnixMicros(e.time), e.actor, e.action, e.resource, spaced, e.prev_hash, e.hash}));
  ChainVerifier strict;
  std::string changed = "{\"a\":\"y\",\"b\":1}";
  EXPECT_FALSE(strict.AddRaw(RawAuditEvent{1, ToUnixMicros(e.time), e.actor, e.action, e.resource, changed, e.prev_hash, e.hash}));
  EXPECT_EQ(strict.Finish(ChainHead{1, e.hash}).first_bad_seq, 1);
}

}  // namespace
}  // namespace causeway::audit
