// OCSF normalization (src/audit): Causeway's own events and the providers'
// logs (examples/audit/) become events whose class's required attributes and
// enum values are all there; bad records are reported and skipped.
#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "audit/importers.h"
#include "audit/ocsf.h"
#include <filesystem>
#include <unistd.h>

namespace causeway::audit {
namespace {

using nlohmann::json;

std::string Sample(const std::string& name) { return std::string(CAUSEWAY_SOURCE_DIR) + "/examples/audit/" + name; }

AuditEvent Own(const std::string& action, const std::string& resource, json details = json::object()) {
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
      {"scim.user.create", "user/usr_1", ocsf::kUserManagement, 1},
      {"scim.user.deactivate", "user/usr_1", ocsf::kUserManagement, 5},
      {"scim.user.reactivate", "user/usr_1", ocsf::kUserManagement, 4},
      {"identity.deprovision", "user/alice@corp.example", ocsf::kUserManagement, 5},
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
  EXPECT_NE(stats.issues[1].reason.find("needs eventID"), std::string::npos);
  EXPECT_EQ(again.at("aa11bb22-cc33-dd44-ee55-ff6677889900")["api"], events.at("aa11bb22-cc33-dd44-ee55-ff6677889900")["api"]);
  std::filesystem::remove_all(dir);
}

TEST(ImportTest, RecordsOfTheWrongKindAreReportedNotGuessed) {
  std::string id;
  auto k8s_as_trail = NormalizeRecord(R"({"kind":"Event","auditID":"x","verb":"get"})",
                                      ImportOptions{"aws", LogSource::kCloudTrail}, &id);
  EXPECT_EQ(k8s_as_trail.status().code(), Code::kInvalidArgument);
  auto trail_as_k8s = NormalizeRecord(R"({"eventID":"x","eventName":"GetObject"})",
                                      ImportOptions{"aws", LogSource::kKubernetes}, &id);
  EXPECT_NE(trail_as_k8s.status().message().find("not a Kubernetes audit event"), std::string::npos);
  auto bad_time = NormalizeRecord(R"({"kind":"Event","auditID":"x","verb":"get","stageTimestamp":"soon"})",
                                  ImportOptions{"k", LogSource::kKubernetes}, &id);
  EXPECT_NE(bad_time.status().message().find("stageTimestamp"), std::string::npos);
  auto not_object = NormalizeRecord("[1, 2]", ImportOptions{"k", LogSource::kKubernetes}, &id);
  EXPECT_NE(not_object.status().message().find("JSON object"), std::string::npos);
  auto escaped = NormalizeRecord("{\"kind\":\"Event\",\"auditID\":\"q\\\"\",\"verb\":\"get\",\"requestURI\":\"/a\\nb\","
                                 "\"stageTimestamp\":\"2026-11-30T00:00:00Z\"}",
                                 ImportOptions{"k", LogSource::kKubernetes}, &id);
  ASSERT_TRUE(escaped.ok()) << escaped.status().ToString();
  json ev = json::parse(*escaped);  // still valid JSON with quotes and newlines inside
  EXPECT_EQ(ev["metadata"]["uid"], "q\"");
  EXPECT_EQ(ev["http_request"]["url"]["path"], "/a\nb");
  EXPECT_EQ(ParseLogSource("okta").status().code(), Code::kInvalidArgument);
}

}  // namespace
}  // namespace causeway::audit
