// The audit trail across providers against a real server: logs of three
// providers imported (through the API and into the database directly),
// each source event stored once however often it is imported, one person's
// actions at each provider and in Causeway itself lined up by `audit person`,
// searched with filters and pages.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include "causeway/clock.h"

#include <nlohmann/json.hpp>

#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

constexpr const char* kUserSchema = "urn:ietf:params:scim:schemas:core:2.0:User";
constexpr const char* kGroupSchema = "urn:ietf:params:scim:schemas:core:2.0:Group";

std::string Sample(const std::string& name) { return std::string(CAUSEWAY_SOURCE_DIR) + "/examples/audit/" + name; }

std::filesystem::path SlurmSample() {
  const char* env = std::getenv("CAUSEWAY_SHARED_DATA");
  std::filesystem::path root = env && *env ? std::filesystem::path(env)
                                           : std::filesystem::path(CAUSEWAY_SOURCE_DIR) / ".." / "shared" / "data";
  return root / "audit" / "slurm" / "sacct_1";
}

class AuditTrail : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_.emplace("audit-trail");
    // No scheduling cycles: the trail holds only what the test makes, so
    // pages and the whole list see the same events.
    server_ = ServerProcess::Start(dir_->path(), {"--tick-ms", "3600000"});
    client_.emplace(server_->Client());
    env_ = {{"CAUSEWAY_SERVER", server_->url()}, {"CAUSEWAY_TOKEN", server_->admin_token()}};
    std::string scim = Call("POST", "/v1/tokens", {{"name", "idp"}, {"scopes", {"scim:provision"}}}).second["secret"];
    auto user = Call("POST", "/scim/v2/Users",
                     {{"schemas", {kUserSchema}},
                      {"userName", "alice"},
                      {"emails", {{{"value", "alice@corp.example"}, {"primary", true}}}}},
                     scim);
    ASSERT_EQ(user.first, 201) << user.second;
    auto group = Call("POST", "/scim/v2/Groups",
                      {{"schemas", {kGroupSchema}}, {"displayName", "nlp-researchers"},
                       {"members", {{{"value", user.second["id"]}}}}},
                      scim);
    ASSERT_EQ(group.first, 201) << group.second;
    ASSERT_EQ(Call("POST", "/v1/access/bindings", {{"group", "nlp-researchers"}, {"role", "researcher"}, {"team", "nlp"}}).first, 201);
  }

  std::pair<int, json> Call(const std::string& method, const std::string& path, const json& body = nullptr,
                            const std::string& token = "") {
    auto r = client_->Send(method, path, body.is_null() ? "" : body.dump(),
                           Auth(token.empty() ? server_->admin_token() : token));
    EXPECT_TRUE(r.ok());
    return {r->status, json::parse(r->body, nullptr, false)};
  }

  std::optional<TempDir> dir_;
  std::unique_ptr<ServerProcess> server_;
  std::optional<net::HttpClient> client_;
  std::map<std::string, std::string> env_;
};

TEST_F(AuditTrail, OnePersonAcrossTwoProvidersAndCausewayInAuditPerson) {
  // Causeway itself: alice submits a job with a token acting for her.
  auto token = Call("POST", "/v1/tokens", {{"name", "alice-cli"}, {"scopes", {"jobs:write", "jobs:read"}}, {"user", "alice"}});
  ASSERT_EQ(token.first, 201) << token.second;
  auto job = Call("POST", "/v1/jobs",
                  {{"spec", "name: tokenizer\nresources:\n  accelerators: H100:1\n  labels: {team: nlp}\nrun: python t.py\n"}},
                  token.second["secret"]);
  ASSERT_EQ(job.first, 201) << job.second;

  // CoreWeave's Kubernetes audit log through the API; AWS CloudTrail into
  // the database directly (as for files larger than a request).
  auto k8s = RunCli({"audit", "import", Sample("k8s-audit.jsonl"), "--source", "k8s", "--provider", "coreweave"}, env_);
  ASSERT_EQ(k8s.exit_code, 0) << k8s.err;
  EXPECT_NE(k8s.err.find("4 events"), std::string::npos) << k8s.err;
  EXPECT_NE(k8s.err.find("4 stored, 0 stored before"), std::string::npos) << k8s.err;
  auto trail = RunCli({"audit", "import", Sample("cloudtrail.json"), "--source", "cloudtrail", "--provider", "aws",
                       "--data-dir", dir_->path()});
  ASSERT_EQ(trail.exit_code, 0) << trail.err;
  EXPECT_NE(trail.err.find("3 stored"), std::string::npos) << trail.err;
  // The same log again (a redelivered file): nothing new is stored.
  auto again = RunCli({"--json", "audit", "import", Sample("k8s-audit.jsonl"), "--source", "k8s", "--provider", "coreweave"}, env_);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  json again_report = json::parse(again.err);
  EXPECT_EQ(again_report["stored"], 0);
  EXPECT_EQ(again_report["already_stored"], 4);
  bool slurm = std::filesystem::exists(SlurmSample());
  if (slurm) {
    // A POSIX user on a Slurm cluster, linked to alice by hand.
    auto link = RunCli({"audit", "link", "cedar", "nobody", "alice"}, env_);
    ASSERT_EQ(link.exit_code, 0) << link.err;
    auto sacct = RunCli({"audit", "import", SlurmSample().string(), "--source", "slurm", "--provider", "cedar"}, env_);
    ASSERT_EQ(sacct.exit_code, 0) << sacct.err;
  }

  // By her email, her userName or her AWS role session: the same person.
  for (const char* who : {"alice@corp.example", "alice"}) {
    auto person = RunCli({"--json", "audit", "person", who}, env_);
    ASSERT_EQ(person.exit_code, 0) << person.err;
    json p = json::parse(person.out);
    EXPECT_EQ(p["person"]["userName"], "alice");
    EXPECT_EQ(p["events_by_provider"]["coreweave"], 2) << p["events_by_provider"];  // the pod, the AKS exec
    EXPECT_EQ(p["events_by_provider"]["aws"], 1);                                   // GetObject as her session
    EXPECT_GE(p["events_by_provider"]["causeway"].get<int>(), 1);                   // job.submit at least
    if (slurm) {
      EXPECT_EQ(p["events_by_provider"]["cedar"], 2);  // job 10 submitted, started
    }
    // What she could do: researcher of nlp, through her group.
    ASSERT_EQ(p["grants"].size(), 1u) << p["grants"];
    EXPECT_EQ(p["grants"][0]["role"], "researcher");
    EXPECT_EQ(p["grants"][0]["team"], "nlp");
    EXPECT_EQ(p["credentials"].size(), 1u);
    // In time order, and every event OCSF.
    int64_t last = 0;
    bool submitted = false;
    for (const json& ev : p["events"]) {
      EXPECT_GE(ev["time"].get<int64_t>(), last);
      last = ev["time"];
      EXPECT_TRUE(ev.contains("class_uid") && ev.contains("metadata") && ev.contains("raw_data")) << ev;
      submitted |= ev["class_uid"] == 1006 && ev["cloud"]["provider"] == "causeway";
    }
    EXPECT_TRUE(submitted);
  }
  auto human = RunCli({"audit", "person", "alice@corp.example"}, env_);
  EXPECT_NE(human.out.find("researcher of nlp (through nlp-researchers)"), std::string::npos) << human.out;
  EXPECT_NE(human.out.find("GetObject"), std::string::npos) << human.out;
  EXPECT_EQ(RunCli({"audit", "person", "nobody-at-all@corp.example"}, env_).exit_code, 4);

  // Search: who deleted what at AWS.
  auto deletes = RunCli({"--json", "audit", "search", "--provider", "aws", "--action", "delete", "--since", "3650d"}, env_);
  ASSERT_EQ(deletes.exit_code, 0) << deletes.err;
  json d = json::parse(deletes.out);
  ASSERT_EQ(d["events"].size(), 1u) << d;
  EXPECT_EQ(d["events"][0]["api"]["operation"], "DeleteAccessKey");
  EXPECT_EQ(d["events"][0]["actor"]["user"]["name"], "bob");
  auto bobs = RunCli({"--json", "audit", "search", "--actor", "bob@corp.example"}, env_);
  EXPECT_EQ(json::parse(bobs.out)["events"].size(), 1u);  // the secrets read at CoreWeave; AWS knows him as "bob"

  // Every event, a page of two at a time: the same events, each once.
  auto all = Call("GET", "/v1/audit/search?limit=1000");
  ASSERT_EQ(all.first, 200) << all.second;
  std::vector<std::string> paged;
  std::string cursor;
  for (int pages = 0; pages < 100; ++pages) {
    auto page = Call("GET", "/v1/audit/search?limit=2" + (cursor.empty() ? "" : "&cursor=" + cursor));
    ASSERT_EQ(page.first, 200) << page.second;
    for (const json& ev : page.second["events"]) paged.push_back(ev["metadata"]["uid"]);
    if (page.second["next_cursor"].is_null()) break;
    cursor = page.second["next_cursor"];
  }
  std::vector<std::string> whole;
  for (const json& ev : all.second["events"]) whole.push_back(ev["metadata"]["uid"]);
  EXPECT_EQ(paged, whole);
  EXPECT_EQ(std::set<std::string>(whole.begin(), whole.end()).size(), whole.size());
  EXPECT_EQ(Call("GET", "/v1/audit/search?cursor=garbage").second["error"]["code"], "invalid_argument");

  // Imports, links and all are in the chain, which still verifies.
  auto verify = RunCli({"audit", "verify"}, env_);
  EXPECT_EQ(verify.exit_code, 0) << verify.out << verify.err;
  auto imports = Call("GET", "/v1/audit?action=audit.import");
  EXPECT_EQ(imports.second["events"].size(), slurm ? 4u : 3u);
}

// A cluster's audit log soon outgrows one request (1 MiB by default): the
// CLI sends JSON lines in parts, and the report reads as one import, each
// unreadable record at its line in the whole file.
TEST_F(AuditTrail, ALogLargerThanARequestIsImportedInPartsAsOne) {
  std::ifstream sample(Sample("k8s-audit.jsonl"));
  std::string line;
  for (int i = 0; i < 2 && std::getline(sample, line);) ++i;  // a ResponseComplete record
  const std::string id = "6f8e2c1a-1b2c-4d5e-9f00-111111111111";
  ASSERT_NE(line.find(id), std::string::npos);
  std::string path = dir_->path() + "/big-audit.jsonl";
  {
    std::ofstream big(path);
    for (int i = 1; i <= 3000; ++i) {
      if (i == 2500) {
        big << "{\"kind\": \"Event\", \"auditID\": \n";  // cut short
        continue;
      }
      std::string record = line;
      char uid[40];
      std::snprintf(uid, sizeof uid, "00000000-0000-4000-8000-%012d", i);
      record.replace(record.find(id), id.size(), uid);
      big << record << "\n";
    }
  }
  ASSERT_GT(std::filesystem::file_size(path), 2u << 20);
  auto first = RunCli({"--json", "audit", "import", path, "--source", "k8s", "--provider", "coreweave"}, env_);
  EXPECT_EQ(first.exit_code, 9) << first.err;  // stored, one record refused
  json report = json::parse(first.err, nullptr, false);
  EXPECT_EQ(report["records"], 3000) << first.err;
  EXPECT_EQ(report["stored"], 2999) << first.err;
  EXPECT_EQ(report["issues"], 1) << first.err;
  ASSERT_EQ(report["first_issues"].size(), 1u) << first.err;
  EXPECT_EQ(report["first_issues"][0]["line"], 2500) << first.err;
  EXPECT_EQ(report["first_issues"][0]["file"], "big-audit.jsonl");
  auto again = RunCli({"--json", "audit", "import", path, "--source", "k8s", "--provider", "coreweave"}, env_);
  report = json::parse(again.err, nullptr, false);
  EXPECT_EQ(report["stored"], 0) << again.err;
  EXPECT_EQ(report["already_stored"], 2999) << again.err;
}

TEST_F(AuditTrail, BadImportsAreRefusedWithAReason) {
  auto no_source = Call("POST", "/v1/audit/imports?provider=aws", json::object());
  EXPECT_EQ(no_source.first, 400);
  EXPECT_NE(no_source.second["error"]["message"].get<std::string>().find("expected k8s, cloudtrail"), std::string::npos);
  auto link = Call("POST", "/v1/audit/links", {{"provider", "aws"}, {"identity", "x"}, {"person", "nobody"}});
  EXPECT_EQ(link.first, 400);
  ASSERT_EQ(Call("POST", "/v1/audit/links", {{"provider", "aws"}, {"identity", "ARN:aws:iam::1:user/Alice"}, {"person", "alice"}}).first, 201);
  auto twice = Call("POST", "/v1/audit/links", {{"provider", "aws"}, {"identity", "arn:aws:iam::1:user/alice"}, {"person", "alice"}});
  EXPECT_EQ(twice.first, 409) << twice.second;
}

// The embedded estate's audit section: GCP's organisation-wide data access
// logging began after the checkpoint bucket was made, so it is dark; the
// CoreWeave log keeps 90 days against a policy of 365; an import makes a
// source current. Simulated time running 100,000 times faster does not age
// it: the trail's own dates, like credentials' expiry, follow the real clock.
TEST(AuditCoverageTest, DarkBucketsStaleSourcesAndShortRetention) {
  TempDir dir("audit-coverage");
  auto server = ServerProcess::Start(dir.path(), {"--sim-speed", "100000"});  // a simulated day in under a second
  std::map<std::string, std::string> env = {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", server->admin_token()}};
  auto report = [&] {
    auto r = RunCli({"--json", "audit", "coverage"}, env);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  };
  auto kinds = [](const json& j, const std::string& name) {
    std::set<std::string> out;
    for (const json& f : j["findings"]) {
      if (f["name"] == name) out.insert(f["kind"]);
    }
    return out;
  };
  json before = report();
  EXPECT_EQ(kinds(before, "llama-checkpoints"), std::set<std::string>{"bucket-dark"});
  EXPECT_TRUE(kinds(before, "tokenized-corpus").empty());  // made after the organisation turned logging on
  EXPECT_TRUE(kinds(before, "eval-results").empty());      // its own setting
  EXPECT_EQ(kinds(before, "k8s"), (std::set<std::string>{"source-never-imported", "retention-short"}));
  EXPECT_EQ(kinds(before, "gcp"), std::set<std::string>{"source-never-imported"});
  for (const json& f : before["findings"]) {
    if (f["name"] == "llama-checkpoints") {
      EXPECT_NE(f["detail"].get<std::string>().find("before gcp's organisation-wide data-plane logging began on 2025-06-01"),
                std::string::npos) << f;
      EXPECT_NE(f["detail"].get<std::string>().find("holds checkpoints"), std::string::npos) << f;
    }
  }
  auto human = RunCli({"audit", "coverage", "--fail-on-findings"}, env);
  EXPECT_EQ(human.exit_code, 1);
  EXPECT_NE(human.out.find("bucket-dark  gcp/llama-checkpoints"), std::string::npos) << human.out;

  auto k8s = RunCli({"audit", "import", Sample("k8s-audit.jsonl"), "--source", "k8s", "--provider", "coreweave"}, env);
  ASSERT_EQ(k8s.exit_code, 0) << k8s.err;
  json after = report();
  EXPECT_EQ(kinds(after, "k8s"), std::set<std::string>{"retention-short"});
  // A token that lives two minutes, used after simulated days have passed.
  auto made = RunCli({"--json", "token", "create", "--name", "short", "--scope", "audit:read", "--ttl", "2m"}, env);
  ASSERT_EQ(made.exit_code, 0) << made.err;
  std::string secret = json::parse(made.out).value("secret", "");
  ASSERT_FALSE(secret.empty()) << made.out;
  // Each command below takes far longer than the 1.2 ms of real time in
  // which two simulated minutes pass at this speed: by the time the token
  // is used, its two minutes are long over in simulated time.
  EXPECT_EQ(kinds(report(), "k8s"), std::set<std::string>{"retention-short"}) << "not stale: simulated hours are not real ones";
  auto used = RunCli({"--json", "audit", "coverage"}, {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", secret}});
  EXPECT_EQ(used.exit_code, 0) << "a 2-minute token still works after simulated hours: " << used.err;
  // The trail's dates are real ones, not the simulated estate's.
  auto trail = RunCli({"--json", "audit", "log", "--limit", "1000"}, env);
  ASSERT_EQ(trail.exit_code, 0) << trail.err;
  json events = json::parse(trail.out);
  if (events.is_object() && events.contains("events")) events = events["events"];
  const auto wall_now = std::chrono::system_clock::now();
  for (const json& e : events) {
    if (e.value("action", "") != "token.create" && e.value("action", "") != "audit.import") continue;
    auto t = ParseRfc3339(e.value("time", ""));
    ASSERT_TRUE(t.ok()) << e;
    EXPECT_LT(std::chrono::abs(*t - std::chrono::time_point_cast<Micros>(wall_now)), std::chrono::minutes(5)) << e;
  }
}

}  // namespace
}  // namespace causeway::testing
