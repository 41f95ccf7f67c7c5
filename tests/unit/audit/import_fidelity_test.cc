// Provider logs say what really happened: outcomes from every field each
// provider uses, sign-ins as Authentication, activities mapped per source
// (Other when unknown, never a guess), nothing invented, envelopes
// understood, and a bad line costing that line only. Each record is written
// for the test in the provider's documented format; every event is checked
// by the OCSF validator for its class.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "audit/importers.h"
#include "audit/ocsf.h"

namespace causeway::audit {
namespace {

using nlohmann::json;

// The one event `record` gives, checked by the validator.
json One(const std::string& record, LogSource source) {
  auto r = NormalizeRecord(record, ImportOptions{"prov", source});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok() || r->size() != 1) return json();
  json ev = json::parse(r->front().ocsf_json);
  Status valid = ocsf::Validate(ev);
  EXPECT_TRUE(valid.ok()) << valid.ToString() << "\n" << ev.dump(2);
  return ev;
}

class TempDir {
 public:
  TempDir() : path_(std::filesystem::temp_directory_path() / ("cw-fidelity-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string Write(const std::string& name, const std::string& text) const {
    std::string p = (path_ / name).string();
    std::ofstream(p, std::ios::binary) << text;
    return p;
  }

 private:
  std::filesystem::path path_;
};

Result<ImportStats> ImportFile(const std::string& path, LogSource source, std::map<std::string, json>& out) {
  return ImportLog(path, ImportOptions{"prov", source}, [&](std::string_view id, std::string_view text) {
    json ev = json::parse(text);
    Status valid = ocsf::Validate(ev);
    EXPECT_TRUE(valid.ok()) << valid.ToString();
    out[std::string(id)] = std::move(ev);
  });
}

const char* kFailedConsoleLogin = R"({"eventVersion":"1.08","userIdentity":{"type":"IAMUser","principalId":"AIDAEXAMPLE","accountId":"111122223333","userName":"bob"},"eventTime":"2026-11-30T08:00:00Z","eventSource":"signin.amazonaws.com","eventName":"ConsoleLogin","awsRegion":"us-east-1","sourceIPAddress":"198.51.100.7","userAgent":"Mozilla/5.0","errorMessage":"Failed authentication","requestParameters":null,"responseElements":{"ConsoleLogin":"Failure"},"additionalEventData":{"LoginTo":"https://console.aws.amazon.com","MobileVersion":"No","MFAUsed":"No"},"eventID":"e1","readOnly":false,"eventType":"AwsConsoleSignIn","recipientAccountId":"111122223333"})";

TEST(ImportFidelityTest, CloudTrailConsoleSignInsAreAuthenticationWithTheirRealOutcome) {
  json failed = One(kFailedConsoleLogin, LogSource::kCloudTrail);
  EXPECT_EQ(failed["class_uid"], ocsf::kAuthentication);
  EXPECT_EQ(failed["activity_id"], 1);  // Logon
  EXPECT_EQ(failed["status_id"], ocsf::kStatusFailure);
  EXPECT_EQ(failed["status_detail"], "Failed authentication");
  EXPECT_EQ(failed["user"]["name"], "bob");
  EXPECT_EQ(failed["is_mfa"], false);

  std::string ok = kFailedConsoleLogin;
  const std::string error_message = "\"errorMessage\":\"Failed authentication\",";
  ok.replace(ok.find(error_message), error_message.size(), "");
  ok.replace(ok.find("\"Failure\""), 9, "\"Success\"");
  json success = One(ok, LogSource::kCloudTrail);
  EXPECT_EQ(success["class_uid"], ocsf::kAuthentication);
  EXPECT_EQ(success["status_id"], ocsf::kStatusSuccess);
}

TEST(ImportFidelityTest, CloudTrailVerbsMapPerSourceAndUnknownOnesAreOther) {
  auto record = [](const std::string& name, const std::string& extra = "") {
    return R"({"eventVersion":"1.09","userIdentity":{"type":"AssumedRole","arn":"arn:aws:sts::1:assumed-role/r/s","accountId":"1")" +
           extra + R"(},"eventTime":"2026-11-30T08:00:00Z","eventSource":"sts.amazonaws.com","eventName":")" + name +
           R"(","sourceIPAddress":"sts.amazonaws.com","eventID":")" + name + R"("})";
  };
  EXPECT_EQ(One(record("AssumeRole"), LogSource::kCloudTrail)["activity_id"], 99);
  EXPECT_EQ(One(record("CopyObject"), LogSource::kCloudTrail)["activity_id"], 1);
  EXPECT_EQ(One(record("DescribeInstances"), LogSource::kCloudTrail)["activity_id"], 2);
  EXPECT_EQ(One(record("ModifyInstanceAttribute"), LogSource::kCloudTrail)["activity_id"], 3);
  // The acting service is kept as such.
  json via = One(record("Decrypt", R"(,"invokedBy":"ec2.amazonaws.com")"), LogSource::kCloudTrail);
  EXPECT_EQ(via["actor"]["invoked_by"], "ec2.amazonaws.com");
  EXPECT_EQ(via["src_endpoint"]["domain"], "sts.amazonaws.com");
}

TEST(ImportFidelityTest, CloudTrailWithoutEventIdIsKeyedByItsContentAndDigestFilesAreNamed) {
  std::string old = R"({"eventVersion":"1.0","userIdentity":{"type":"Root","accountId":"1"},"eventTime":"2014-03-06T21:22:54Z","eventSource":"ec2.amazonaws.com","eventName":"StartInstances","sourceIPAddress":"205.251.233.176"})";
  auto r = NormalizeRecord(old, ImportOptions{"aws", LogSource::kCloudTrail});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->front().source_id.substr(0, 7), "sha256:");
  EXPECT_EQ(r->front().source_id, NormalizeRecord(old, ImportOptions{"aws", LogSource::kCloudTrail})->front().source_id);

  auto digest = NormalizeRecord(
      R"({"awsAccountId":"1","digestStartTime":"2026-11-30T00:00:00Z","digestEndTime":"2026-11-30T01:00:00Z","digestS3Bucket":"b","logFiles":[]})",
      ImportOptions{"aws", LogSource::kCloudTrail});
  EXPECT_NE(digest.status().message().find("CloudTrail digest file"), std::string::npos) << digest.status().ToString();
}

TEST(ImportFidelityTest, GcpOutcomesVerbsLocationsAndNamesAreWhatTheEntrySays) {
  auto entry = [](const std::string& method, const std::string& payload, const std::string& labels) {
    return R"({"insertId":")" + method + R"(","logName":"projects/p/logs/cloudaudit.googleapis.com%2Factivity","timestamp":"2026-11-30T08:00:00Z","resource":{"type":"gce_instance","labels":)" +
           labels + R"(},"protoPayload":{"@type":"type.googleapis.com/google.cloud.audit.AuditLog","serviceName":"compute.googleapis.com","methodName":")" +
           method + "\"" + payload + "}}";
  };
  // Denied by IAM though the status is empty.
  json denied = One(entry("v1.compute.instances.aggregatedList",
                          R"(,"authenticationInfo":{"principalEmail":"alice@corp.example"},"authorizationInfo":[{"permission":"compute.instances.list","granted":false}])",
                          R"({"project_id":"p","zone":"us-central1-a"})"),
                    LogSource::kGcp);
  EXPECT_EQ(denied["status_id"], ocsf::kStatusFailure);
  EXPECT_EQ(denied["activity_id"], 2);  // aggregatedList reads
  EXPECT_EQ(denied["metadata"]["log_name"], "projects/p/logs/cloudaudit.googleapis.com%2Factivity");
  EXPECT_FALSE(denied.contains("log_name"));
  EXPECT_EQ(denied["cloud"]["zone"], "us-central1-a");
  EXPECT_FALSE(denied["cloud"].contains("region"));
  EXPECT_EQ(denied["actor"]["user"]["email_addr"], "alice@corp.example");
  // An unknown verb is Other; a Kubernetes name is not an email address;
  // no caller address is said as Unknown, not invented.
  json sign = One(entry("SignJwt", R"(,"authenticationInfo":{"principalEmail":"system:kube-scheduler"})",
                        R"({"location":"us-central1"})"),
                  LogSource::kGcp);
  EXPECT_EQ(sign["activity_id"], 99);
  EXPECT_EQ(sign["actor"]["user"]["name"], "system:kube-scheduler");
  EXPECT_FALSE(sign["actor"]["user"].contains("email_addr"));
  EXPECT_EQ(sign["cloud"]["region"], "us-central1");
  EXPECT_EQ(sign["src_endpoint"], json({{"type_id", 0}, {"type", "Unknown"}}));
  // No principal at all: OCSF's Unknown user, not an empty one.
  json nobody = One(entry("v1.compute.instances.get", "", R"({})"), LogSource::kGcp);
  EXPECT_EQ(nobody["actor"]["user"]["type_id"], 0);
}

TEST(ImportFidelityTest, AzureOutcomesActionsAndEntraSignIns) {
  json keys = One(R"({"time":"2026-11-30T08:00:00Z","resourceId":"/SUBSCRIPTIONS/S/RESOURCEGROUPS/G/PROVIDERS/MICROSOFT.STORAGE/STORAGEACCOUNTS/A","operationName":"MICROSOFT.STORAGE/STORAGEACCOUNTS/LISTKEYS/ACTION","category":"Administrative","resultType":"Success","correlationId":"c1","callerIpAddress":"203.0.113.5","identity":{"claims":{"name":"alice@corp.example"}},"level":"Information"})",
                  LogSource::kAzure);
  EXPECT_EQ(keys["activity_id"], 2);  // listKeys reads
  EXPECT_EQ(keys["status_id"], ocsf::kStatusSuccess);

  std::string sign_in = R"({"time":"2026-11-30T08:05:00Z","resourceId":"/tenants/t/providers/Microsoft.aadiam","operationName":"Sign-in activity","category":"SignInLogs","resultType":"RESULT","resultDescription":"DESCRIPTION","callerIpAddress":"198.51.100.20","correlationId":"c2","identity":"Alice Example","location":"FR","level":"4","properties":{"id":"ID","userPrincipalName":"alice@corp.example","userId":"u-1","appDisplayName":"Azure Portal","ipAddress":"198.51.100.20","status":{"errorCode":0}}})";
  auto with = [&](std::string s, const std::string& result, const std::string& id) {
    s.replace(s.find("RESULT"), 6, result);
    s.replace(s.find("\"ID\""), 4, "\"" + id + "\"");
    return s;
  };
  json ok = One(with(sign_in, "0", "s1"), LogSource::kAzure);
  EXPECT_EQ(ok["class_uid"], ocsf::kAuthentication);
  EXPECT_EQ(ok["activity_id"], 1);
  EXPECT_EQ(ok["status_id"], ocsf::kStatusSuccess);
  EXPECT_EQ(ok["user"]["name"], "alice@corp.example");
  EXPECT_EQ(ok["actor"]["user"]["name"], "alice@corp.example");
  EXPECT_EQ(ok["metadata"]["uid"], "s1");
  EXPECT_FALSE(ok["cloud"].contains("region"));  // FR is a country
  json bad = One(with(sign_in, "50126", "s2"), LogSource::kAzure);
  EXPECT_EQ(bad["status_id"], ocsf::kStatusFailure);
  EXPECT_EQ(bad["status_code"], "50126");
}

TEST(ImportFidelityTest, OktaPolicyEvaluationIsNotASecondLogon) {
  auto event = [](const std::string& type, const std::string& id) {
    return R"({"uuid":")" + id + R"(","published":"2026-11-30T08:00:00.000Z","eventType":")" + type +
           R"(","severity":"INFO","actor":{"id":"00u1","type":"User","alternateId":"alice@corp.example"},"client":{"ipAddress":"198.51.100.9"},"outcome":{"result":"ALLOW"}})";
  };
  json policy = One(event("policy.evaluate_sign_on", "o1"), LogSource::kOkta);
  EXPECT_EQ(policy["class_uid"], ocsf::kAuthentication);
  EXPECT_EQ(policy["activity_id"], 99);
  EXPECT_EQ(One(event("user.session.start", "o2"), LogSource::kOkta)["activity_id"], 1);
}

// Account and group changes are filed as what they are, with the account
// and the group outside raw_data (so search shows them), in classes the
// declared schema version has; "null" is no address; a userIdentity that
// is not an object is the documented Unknown actor.
TEST(ImportFidelityTest, AccountAndGroupChangesAreIdentityClassesWithTheirTargets) {
  auto iam = [](const std::string& name, const std::string& params) {
    return R"({"eventVersion":"1.08","userIdentity":{"type":"IAMUser","principalId":"AID","arn":"arn:aws:iam::1:user/admin","accountId":"1","userName":"admin"},"eventTime":"2026-11-30T08:00:00Z","eventSource":"iam.amazonaws.com","eventName":")" +
           name + R"(","awsRegion":"us-east-1","sourceIPAddress":"198.51.100.7","requestParameters":)" + params +
           R"(,"eventID":")" + name + R"(","readOnly":false,"eventType":"AwsApiCall","recipientAccountId":"1"})";
  };
  struct Case {
    std::string record;
    LogSource source;
    int class_uid, activity;
    std::string subject, resource;  // as search indexes them
  };
  const Case cases[] = {
      {iam("CreateUser", R"({"userName":"newbie"})"), LogSource::kCloudTrail, ocsf::kAccountChange, 1, "newbie", ""},
      {iam("AttachUserPolicy", R"({"userName":"newbie","policyArn":"arn:aws:iam::aws:policy/AdministratorAccess"})"),
       LogSource::kCloudTrail, ocsf::kAccountChange, 7, "newbie", ""},
      {iam("AddUserToGroup", R"({"userName":"newbie","groupName":"admins"})"), LogSource::kCloudTrail,
       ocsf::kGroupManagement, 3, "newbie", "admins"},
      {iam("RemoveUserFromGroup", R"({"userName":"newbie","groupName":"admins"})"), LogSource::kCloudTrail,
       ocsf::kGroupManagement, 4, "newbie", "admins"},
      {R"({"insertId":"g1","timestamp":"2026-11-30T08:00:00Z","logName":"projects/p/logs/cloudaudit.googleapis.com%2Factivity","protoPayload":{"serviceName":"iam.googleapis.com","methodName":"google.iam.admin.v1.CreateServiceAccount","resourceName":"projects/p/serviceAccounts/1234","authenticationInfo":{"principalEmail":"admin@corp.example"},"requestMetadata":{"callerIp":"203.0.113.5"},"response":{"email":"trainer@p.iam.gserviceaccount.com"}}})",
       LogSource::kGcp, ocsf::kAccountChange, 1, "trainer@p.iam.gserviceaccount.com", ""},
      {R"({"insertId":"g2","timestamp":"2026-11-30T08:00:00Z","protoPayload":{"serviceName":"cloudresourcemanager.googleapis.com","methodName":"SetIamPolicy","resourceName":"projects/p","authenticationInfo":{"principalEmail":"admin@corp.example"},"serviceData":{"policyDelta":{"bindingDeltas":[{"action":"ADD","role":"roles/owner","member":"user:mallory@corp.example"}]}}}})",
       LogSource::kGcp, ocsf::kUserAccess, 1, "mallory@corp.example", ""},
      {R"({"uuid":"o1","published":"2026-11-30T08:00:00Z","eventType":"group.user_membership.add","actor":{"alternateId":"admin@corp.example"},"client":{"ipAddress":"null"},"outcome":{"result":"SUCCESS"},"target":[{"type":"User","alternateId":"bob@corp.example","id":"00u2"},{"type":"UserGroup","displayName":"ml-admins","id":"00g1"}]})",
       LogSource::kOkta, ocsf::kGroupManagement, 3, "bob@corp.example", "ml-admins"},
      {R"({"uuid":"o2","published":"2026-11-30T08:00:00Z","eventType":"user.lifecycle.deactivate","actor":{"alternateId":"admin@corp.example"},"client":{"ipAddress":"null"},"outcome":{"result":"SUCCESS"},"target":[{"type":"User","alternateId":"bob@corp.example","id":"00u2"}]})",
       LogSource::kOkta, ocsf::kAccountChange, 5, "bob@corp.example", ""},
  };
  for (const Case& c : cases) {
    json ev = One(c.record, c.source);
    ASSERT_TRUE(ev.is_object()) << c.record;
    EXPECT_EQ(ev["class_uid"], c.class_uid) << c.record;
    EXPECT_EQ(ev["activity_id"], c.activity) << c.record;
    EXPECT_EQ(ev["metadata"]["version"], ocsf::kSchemaVersion);
    ImportedAuditEvent row;
    ASSERT_TRUE(IndexEvent(ev.dump(), row).ok());
    EXPECT_EQ(row.subject, c.subject) << c.record;
    if (!c.resource.empty()) {
      EXPECT_EQ(row.resource, c.resource) << c.record;
    }
    if (ev.contains("src_endpoint")) {
      EXPECT_FALSE(ev["src_endpoint"].contains("domain")) << ev["src_endpoint"];
    }
  }
  // A userIdentity given as a string: the Unknown actor.
  json odd = One(R"({"eventVersion":"1.08","userIdentity":"arn:aws:iam::1:user/x","eventTime":"2026-11-30T08:00:00Z","eventSource":"ec2.amazonaws.com","eventName":"StartInstances","eventID":"s1","sourceIPAddress":"198.51.100.7"})",
                 LogSource::kCloudTrail);
  EXPECT_EQ(odd["actor"]["user"]["type"], "Unknown") << odd.dump(2);
  EXPECT_EQ(odd["actor"]["user"]["type_id"], 0);
}

TEST(ImportFidelityTest, KubernetesEnvelopesAndWrongSources) {
  const std::string ev =
      R"({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"ID","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/ml/pods","verb":"list","user":{"username":"alice@corp.example"},"objectRef":{"resource":"pods","namespace":"ml","apiVersion":"v1"},"responseStatus":{"code":200},"stageTimestamp":"2026-11-30T08:00:00.000000Z"})";
  auto with_id = [&](const std::string& id) {
    std::string s = ev;
    s.replace(s.find("\"ID\""), 4, "\"" + id + "\"");
    return s;
  };
  // AKS with the event as an object in properties.log; no source address.
  json aks = One(R"({"category":"kube-audit","properties":{"log":)" + with_id("a1") + "}}", LogSource::kKubernetes);
  EXPECT_EQ(aks["metadata"]["uid"], "a1");
  EXPECT_EQ(aks["src_endpoint"]["type_id"], 0);
  // A GKE LogEntry given as k8s is told where it belongs.
  auto gke = NormalizeRecord(R"({"insertId":"x","protoPayload":{"serviceName":"k8s.io","methodName":"io.k8s.core.v1.pods.list"}})",
                             ImportOptions{"gke", LogSource::kKubernetes});
  EXPECT_NE(gke.status().message().find("--source gcp"), std::string::npos) << gke.status().ToString();

  TempDir dir;
  std::map<std::string, json> events;
  // The webhook backend's EventList, pretty-printed.
  json list = {{"kind", "EventList"}, {"apiVersion", "audit.k8s.io/v1"},
               {"items", {json::parse(with_id("l1")), json::parse(with_id("l2"))}}};
  auto stats = ImportFile(dir.Write("list.json", list.dump(2)), LogSource::kKubernetes, events);
  ASSERT_TRUE(stats.ok());
  EXPECT_EQ(stats->events, 2);
  EXPECT_EQ(stats->issues_total, 0);
  // ... and on one line.
  events.clear();
  stats = ImportFile(dir.Write("list1.json", list.dump()), LogSource::kKubernetes, events);
  EXPECT_EQ(stats->events, 2);
}

TEST(ImportFidelityTest, AzureRestPageIsUnderstood) {
  TempDir dir;
  json page = {{"value",
                {json::parse(R"({"eventTimestamp":"2026-11-30T08:00:00Z","operationName":{"value":"Microsoft.Compute/virtualMachines/delete"},"status":{"value":"Succeeded"},"eventDataId":"r1","caller":"bob@corp.example","httpRequest":{"clientIpAddress":"203.0.113.1"}})")}},
               {"nextLink", nullptr}};
  std::map<std::string, json> events;
  auto stats = ImportFile(dir.Write("page.json", page.dump()), LogSource::kAzure, events);
  ASSERT_TRUE(stats.ok());
  ASSERT_EQ(events.count("r1"), 1u);
  EXPECT_EQ(events["r1"]["activity_id"], 4);
  EXPECT_EQ(events["r1"]["status_id"], ocsf::kStatusSuccess);
}

// A damaged start must not cost the file: a BOM, garbage, a NUL, a
// truncated record or a blank line before the first record.
TEST(ImportFidelityTest, ABadFirstLineCostsThatLineOnly) {
  const std::string good1 = R"({"uuid":"g1","published":"2026-11-30T08:00:00Z","eventType":"user.session.start","actor":{"alternateId":"a@x"},"client":{"ipAddress":"1.2.3.4"},"outcome":{"result":"SUCCESS"}})";
  const std::string good2 = R"({"uuid":"g2","published":"2026-11-30T08:01:00Z","eventType":"user.session.end","actor":{"alternateId":"a@x"},"client":{"ipAddress":"1.2.3.4"},"outcome":{"result":"SUCCESS"}})";
  struct Case {
    const char* name;
    std::string first;
    int64_t bad_line;  // 0: no issue
  };
  const Case cases[] = {
      {"bom", "\xEF\xBB\xBF" + good1, 0},
      {"garbage", "this is not JSON\n" + good1, 1},
      {"nul", std::string("{\"uuid\":\0\"x\"}\n", 14) + good1, 1},
      {"truncated", R"({"uuid":"t","published":"2026-11-30T08:00:00Z","eventTy)" "\n" + good1, 1},
      {"blank_then_garbage", "\n\n%%%\n" + good1, 3},
  };
  TempDir dir;
  for (const Case& c : cases) {
    std::map<std::string, json> events;
    auto stats = ImportFile(dir.Write(std::string(c.name) + ".jsonl", c.first + "\n" + good2 + "\n"), LogSource::kOkta, events);
    ASSERT_TRUE(stats.ok()) << c.name;
    EXPECT_EQ(events.count("g1"), 1u) << c.name;
    EXPECT_EQ(events.count("g2"), 1u) << c.name;
    EXPECT_EQ(stats->issues_total, c.bad_line ? 1 : 0) << c.name;
    if (c.bad_line && !stats->issues.empty()) {
      EXPECT_EQ(stats->issues[0].line, c.bad_line) << c.name;
    }
  }
}

TEST(ImportFidelityTest, TheSameIdWithOtherContentIsAConflictNotADuplicate) {
  TempDir dir;
  std::string a = R"({"uuid":"u1","published":"2026-11-30T08:00:00Z","eventType":"user.session.start","actor":{"alternateId":"a@x"},"outcome":{"result":"SUCCESS"}})";
  std::string b = a;
  b.replace(b.find("SUCCESS"), 7, "FAILURE");
  std::map<std::string, json> events;
  auto stats = ImportFile(dir.Write("c.jsonl", a + "\n" + a + "\n" + b + "\n"), LogSource::kOkta, events);
  ASSERT_TRUE(stats.ok());
  // Both versions are kept (the second under its conflict id), and the
  // conflict is reported: never one silently lost.
  EXPECT_EQ(stats->events, 2);
  EXPECT_EQ(stats->duplicates, 1);
  EXPECT_EQ(stats->conflicts, 1);
  ASSERT_EQ(stats->issues_total, 1);
  EXPECT_EQ(stats->issues[0].line, 3);
  EXPECT_NE(stats->issues[0].reason.find("already read (line 1) with different content; both are kept"), std::string::npos)
      << stats->issues[0].reason;
  EXPECT_EQ(events.count("u1"), 1u);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events.rbegin()->first.rfind("u1~", 0), 0u) << events.rbegin()->first;
  EXPECT_EQ(events.rbegin()->first.size(), 3u + 12u);
  EXPECT_EQ(events["u1"]["status_id"], ocsf::kStatusSuccess) << "the first keeps its id";
}

// Every shape a provider's file comes in costs only what is damaged: a
// first line holding an array, one array per line, a truncated envelope,
// a deeply nested first line.
TEST(ImportFidelityTest, EveryShapeOfDamageCostsOnlyWhatIsDamaged) {
  TempDir dir;
  auto trail = [](const std::string& id) {
    return R"({"eventVersion":"1.08","userIdentity":{"type":"IAMUser","principalId":"AID","accountId":"1","userName":"bob"},"eventTime":"2026-11-30T08:00:00Z","eventSource":"ec2.amazonaws.com","eventName":"RunInstances","awsRegion":"us-east-1","sourceIPAddress":"198.51.100.7","eventID":")" +
           id + R"(","readOnly":false,"eventType":"AwsApiCall","recipientAccountId":"1"})";
  };
  struct Case {
    const char* name;
    std::string text;
    std::vector<std::string> ids;  // kept
    int64_t issues;
  };
  std::string deep = std::string(5000, '[') + std::string(5000, ']');
  const Case cases[] = {
      {"array_first_line", "[1,2]\n" + trail("c1") + "\n" + trail("c2") + "\n", {"c1", "c2"}, 2},
      {"array_per_line", "[" + trail("a1") + "," + trail("a2") + "]\n[" + trail("a3") + "]\n", {"a1", "a2", "a3"}, 0},
      {"records_per_line", "{\"Records\":[" + trail("r1") + "]}\n{\"Records\":[" + trail("r2") + "]}\n", {"r1", "r2"}, 0},
      {"truncated_envelope", "{\"Records\": [\n" + trail("t1") + ",\n" + trail("t2") + ",\n" + trail("t3").substr(0, 80),
       {"t1", "t2"}, 1},
      {"truncated_array", "[\n  " + trail("b1") + ",\n  " + trail("b2") + ",\n  {\"eventID\": \"b3", {"b1", "b2"}, 1},
      {"deep_first_line", deep + "\n" + trail("d1") + "\n", {"d1"}, 1},
      {"deep_unclosed_first_line", std::string(5000, '[') + "\n" + trail("e1") + "\n", {"e1"}, 1},
  };
  for (const Case& c : cases) {
    std::map<std::string, json> events;
    auto stats = ImportFile(dir.Write(std::string(c.name) + ".json", c.text), LogSource::kCloudTrail, events);
    ASSERT_TRUE(stats.ok()) << c.name << ": " << stats.status().ToString();
    for (const std::string& id : c.ids) EXPECT_EQ(events.count(id), 1u) << c.name << ": " << id;
    EXPECT_EQ(events.size(), c.ids.size()) << c.name;
    EXPECT_EQ(stats->issues_total, c.issues) << c.name << (stats->issues.empty() ? "" : ": " + stats->issues[0].reason);
  }
}

}  // namespace
}  // namespace causeway::audit
