// The API over real HTTP against a real `causeway serve` with a temporary
// SQLite file.
#include <gtest/gtest.h>

#include <ctime>

#include <fstream>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

constexpr const char* kSpec =
    "name: train\nresources:\n  accelerators: H200:8\n  labels: {owner: alice, team: nlp}\nrun: python train.py\n";

class ApiTest : public ::testing::Test {
 protected:
  struct HttpResultJson {
    int status = 0;
    std::map<std::string, std::string> headers;
    std::string raw;
    json body;
  };
  static void SetUpTestSuite() {
    dir_ = new TempDir("api");
    server_ = ServerProcess::Start(dir_->path()).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }

  HttpResultJson Call(const std::string& method, const std::string& target, const std::string& body = "",
                      std::vector<std::pair<std::string, std::string>> headers = {}, const std::string& token = "") {
    headers.emplace_back("Authorization", "Bearer " + (token.empty() ? server_->admin_token() : token));
    auto r = client_.Send(method, target, body, headers);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    HttpResultJson out;
    out.status = r->status;
    out.headers = r->headers;
    out.raw = r->body;
    out.body = json::parse(r->body, nullptr, false);
    return out;
  }

  HttpResultJson Submit(const std::string& spec, const std::string& key = "", const std::string& token = "") {
    std::vector<std::pair<std::string, std::string>> h;
    if (!key.empty()) h.emplace_back("Idempotency-Key", key);
    return Call("POST", "/v1/jobs", json{{"spec", spec}, {"file", "train.yaml"}}.dump(), h, token);
  }

  std::string NewToken(const std::vector<std::string>& scopes) {
    auto r = Call("POST", "/v1/tokens", json{{"name", "t"}, {"scopes", scopes}}.dump());
    EXPECT_EQ(r.status, 201) << r.raw;
    return r.body["secret"].get<std::string>();
  }

  static void ExpectError(const HttpResultJson& r, int status, const std::string& code) {
    EXPECT_EQ(r.status, status) << r.raw;
    ASSERT_TRUE(r.body.is_object()) << r.raw;
    EXPECT_EQ(r.body["error"]["code"], code) << r.raw;
    EXPECT_TRUE(r.body["error"]["message"].is_string());
    EXPECT_TRUE(r.body["error"].contains("details"));
  }

  static TempDir* dir_;
  static ServerProcess* server_;
  net::HttpClient client_ = server_->Client();
};
TempDir* ApiTest::dir_ = nullptr;
ServerProcess* ApiTest::server_ = nullptr;

TEST_F(ApiTest, FirstStartStoresTheAdminTokenPrivatelyAndPrintsOnlyWhere) {
  // Standard output is often shipped to central logging: the secret stays
  // in the file (--print-admin-token prints it too).
  EXPECT_EQ(server_->banner().find(server_->admin_token()), std::string::npos) << server_->banner();
  EXPECT_NE(server_->banner().find(dir_->path() + "/admin.token"), std::string::npos) << server_->banner();
  EXPECT_EQ(server_->admin_token().substr(0, 3), "cw_");
  auto perms = std::filesystem::status(dir_->path() + "/admin.token").permissions();
  EXPECT_EQ(perms, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

TEST_F(ApiTest, EveryRouteButHealthzNeedsAToken) {
  auto health = client_.Send("GET", "/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 200);
  const std::pair<const char*, const char*> routes[] = {
      {"GET", "/metrics"},           {"GET", "/v1/whoami"},        {"POST", "/v1/jobs"},
      {"GET", "/v1/jobs"},           {"GET", "/v1/jobs/job_x"},    {"POST", "/v1/jobs/job_x/cancel"},
      {"GET", "/v1/clusters"},       {"GET", "/v1/audit"},         {"GET", "/v1/audit/verify"},
      {"POST", "/v1/tokens"},        {"GET", "/v1/tokens"},        {"POST", "/v1/tokens/tok_x/revoke"},
      {"GET", "/v1/cost/showback"},  {"GET", "/v1/cost/bills"},  {"POST", "/v1/telemetry"},
      {"POST", "/v1/jobs/job_x/telemetry"},
  };
  for (auto [method, path] : routes) {
    auto r = client_.Send(method, path, "{}");
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, 401) << method << " " << path;
    EXPECT_EQ(json::parse(r->body)["error"]["code"], "unauthenticated") << path;
    EXPECT_EQ(r->headers["www-authenticate"], "Bearer");
    auto bad = client_.Send(method, path, "{}", Auth("cw_" + std::string(52, 'x')));
    EXPECT_EQ(bad->status, 401) << path;
  }
}

TEST_F(ApiTest, CostShowbackNeedsCostReadAndNamesBadFields) {
  // A bill imported beside the running server, into its database.
  std::string bill = dir_->path() + "/bill.csv";
  std::ofstream(bill) << "ChargePeriodStart,BilledCost,EffectiveCost,Tags\n"
                         "2026-11-02T00:00:00Z,3.5,3.5,\"{\"\"causeway-team\"\": \"\"nlp\"\"}\"\n"
                         "2026-11-03T00:00:00Z,1.5,1.5,\n";
  auto imported = RunCli({"cost", "import", bill, "--provider", "nebius", "--data-dir", dir_->path()});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;

  auto r = Call("GET", "/v1/cost/showback?by=team&period=2026-11&share=even");
  ASSERT_EQ(r.status, 200) << r.raw;
  ASSERT_EQ(r.body["rows"].size(), 1u) << r.raw;
  EXPECT_EQ(r.body["rows"][0]["team"], "nlp");
  EXPECT_EQ(r.body["rows"][0]["total_effective_cost"], "5.00") << "the untagged 1.50 shared into the only team";
  auto bills = Call("GET", "/v1/cost/bills");
  ASSERT_EQ(bills.status, 200);
  EXPECT_EQ(bills.body["bills"][0]["provider"], "nebius");

  ExpectError(Call("GET", "/v1/cost/showback?by=colour"), 400, "invalid_argument");
  ExpectError(Call("GET", "/v1/cost/showback?period=soon"), 400, "invalid_argument");
  ExpectError(Call("GET", "/v1/cost/showback?allocate=maybe"), 400, "invalid_argument");
  ExpectError(Call("GET", "/v1/cost/showback?source=guess"), 400, "invalid_argument");
  ExpectError(Call("GET", "/v1/cost/showback?source=metered&by=project"), 400, "invalid_argument");
  auto metered = Call("GET", "/v1/cost/showback?source=metered&by=team,provider");
  ASSERT_EQ(metered.status, 200) << metered.raw;
  EXPECT_EQ(metered.body["source"], "metered");
  EXPECT_TRUE(metered.body["rows"].is_array());
  auto allocated = Call("GET", "/v1/cost/showback?period=2026-11&allocate=true");
  ASSERT_EQ(allocated.status, 200) << allocated.raw;
  EXPECT_EQ(allocated.body["allocated"], true) << "no cluster claims these resources: nothing moves";
  EXPECT_EQ(allocated.body["rows"].size(), 2u) << allocated.raw;
  ExpectError(Call("GET", "/v1/cost/showback", "", {}, NewToken({"jobs:read"})), 403, "permission_denied");
  EXPECT_EQ(Call("GET", "/v1/cost/showback", "", {}, NewToken({"cost:read"})).status, 200);
}

TEST_F(ApiTest, TelemetryPushesAreParsedAndAuthorized) {
  const std::vector<std::pair<std::string, std::string>> plain = {{"Content-Type", "text/plain"}};
  // Samples are kept only for a running attempt: one, for a long while.
  auto submitted = Submit("name: long\nresources: {accelerators: H200:2}\nlabels: {owner: alice, team: nlp}\n"
                          "run: train\nsim: {duration: 10h}\n");
  ASSERT_EQ(submitted.status, 201) << submitted.raw;
  std::string job = submitted.body["job"]["id"];
  ASSERT_TRUE(Eventually([&] { return Call("GET", "/v1/jobs/" + job).body["state"] == "running"; }));
  // The jobs list counts what a running job has cost so far, as the queues' spend does.
  EXPECT_TRUE(Eventually([&] {
    json listed = Call("GET", "/v1/jobs?state=running").body;
    for (const json& j : listed["jobs"]) {
      if (j["id"] == job && j.value("running_cost_micros", int64_t{0}) > 0 && j.value("cost_micros", int64_t{0}) > 0) {
        return true;
      }
    }
    return false;
  })) << "a running job's accrued cost is in the list";
  auto pushed = Call("POST", "/v1/telemetry",
                     "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n"
                     "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",causeway_job=\"" + job + "\",causeway_attempt=\"1\"} 3\n"
                     "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",causeway_job=\"" + job + "\",causeway_attempt=\"1\"} 4\n"
                     "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\",causeway_job=\"job_gone\",causeway_attempt=\"1\"} 4\n"
                     "DCGM_FI_DEV_GPU_UTIL{gpu=\"2\"} 99\n",
                     plain);
  ASSERT_EQ(pushed.status, 202) << pushed.raw;
  EXPECT_EQ(pushed.body["accepted"], 2) << "the series without a job, and the unknown job's, are not kept";
  EXPECT_EQ(pushed.body["rejected"]["unknown_attempt"], 1) << pushed.raw;
  // nvidia-smi output under the job's path, stamped now (UTC).
  std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y/%m/%d %H:%M:%S", std::gmtime(&now));
  auto smi = Call("POST", "/v1/jobs/" + job + "/telemetry?format=nvidia-smi&attempt=1",
                  std::string("timestamp, index, utilization.gpu [%]\n") + stamp + ".000, 0, 5 %\n", plain);
  ASSERT_EQ(smi.status, 202) << smi.raw;
  EXPECT_EQ(smi.body["accepted"], 1) << smi.raw;
  ExpectError(Call("POST", "/v1/jobs/job_gone/telemetry?format=nvidia-smi&attempt=1",
                   std::string("timestamp, index, utilization.gpu [%]\n") + stamp + ".000, 0, 5 %\n", plain),
              404, "not_found");
  // Plain DCGM-exporter output from the job itself: no causeway_job label,
  // and under its path every series is its own.
  auto dcgm = Call("POST", "/v1/jobs/" + job + "/telemetry?attempt=1",
                   "# TYPE DCGM_FI_DEV_GPU_UTIL gauge\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-1\",Hostname=\"n1\"} 7\n",
                   plain);
  ASSERT_EQ(dcgm.status, 202) << dcgm.raw;
  EXPECT_EQ(dcgm.body["accepted"], 1) << dcgm.raw;
  auto bad = Call("POST", "/v1/jobs/" + job + "/telemetry?format=nvidia-smi", "12:00, zero, lots\n", plain);
  ExpectError(bad, 400, "invalid_argument");
  EXPECT_NE(bad.raw.find("nvidia-smi:1:"), std::string::npos) << bad.raw;
  ExpectError(Call("POST", "/v1/telemetry?format=csv", "", plain), 400, "invalid_argument");
  ExpectError(Call("POST", "/v1/telemetry", "", plain, NewToken({"jobs:read"})), 403, "permission_denied");
  EXPECT_EQ(Call("POST", "/v1/telemetry", "", plain, NewToken({"telemetry:write"})).status, 202);
}

TEST_F(ApiTest, SubmitGetAndList) {
  auto r = Submit(kSpec);
  ASSERT_EQ(r.status, 201) << r.raw;
  const json& job = r.body["job"];
  std::string id = job["id"];
  EXPECT_EQ(id.substr(0, 4), "job_");
  EXPECT_EQ(job["state"], "pending");
  EXPECT_EQ(job["team"], "nlp");
  EXPECT_EQ(job["owner"], "alice");
  EXPECT_EQ(job["spec"]["accelerators"][0]["type"], "H200");
  EXPECT_EQ(r.headers["location"], "/v1/jobs/" + id);

  auto got = Call("GET", "/v1/jobs/" + id);
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.body["spec_yaml"], kSpec);
  EXPECT_TRUE(got.body["attempts"].is_array());
  ASSERT_GE(got.body["events"].size(), 1u);  // the scheduler may have dispatched it since
  EXPECT_EQ(got.body["events"][0]["type"], "submitted");

  auto list = Call("GET", "/v1/jobs?team=nlp&limit=1000");
  bool found = false;
  for (const auto& j : list.body["jobs"]) found |= j["id"] == id;
  EXPECT_TRUE(found);
  ExpectError(Call("GET", "/v1/jobs/job_nope"), 404, "not_found");
}

TEST_F(ApiTest, AcceptsRawYamlAndJsonObjects) {
  auto yaml = Call("POST", "/v1/jobs", kSpec, {{"Content-Type", "application/yaml"}});
  EXPECT_EQ(yaml.status, 201) << yaml.raw;
  json obj = {{"spec",
               {{"name", "obj"},
                {"resources", {{"accelerators", "L4:1"}, {"labels", {{"owner", "o"}, {"team", "research"}}}}},
                {"run", "x"}}}};
  auto j = Call("POST", "/v1/jobs", obj.dump());
  EXPECT_EQ(j.status, 201) << j.raw;
  ExpectError(Call("POST", "/v1/jobs", "x", {{"Content-Type", "text/csv"}}), 400, "invalid_argument");
}

TEST_F(ApiTest, IdempotencyKeyReturnsTheSameJob) {
  auto first = Submit(kSpec, "key-1");
  ASSERT_EQ(first.status, 201);
  auto again = Submit(kSpec, "key-1");
  EXPECT_EQ(again.status, 200) << again.raw;
  EXPECT_EQ(again.body["job"]["id"], first.body["job"]["id"]);
  EXPECT_FALSE(again.body["created"].get<bool>());
  EXPECT_EQ(again.headers["idempotent-replayed"], "true");
  ExpectError(Submit(std::string(kSpec) + "num_nodes: 2\n", "key-1"), 409, "conflict");
  // Keys belong to the token that used them.
  auto other = Submit(kSpec, "key-1", NewToken({"jobs:write"}));
  EXPECT_EQ(other.status, 201);
  EXPECT_NE(other.body["job"]["id"], first.body["job"]["id"]);
}

TEST_F(ApiTest, InvalidSpecsAreExplainedWithPositions) {
  auto r = Submit("name: x\nresources:\n  accelerator: H100:8\nnum_nodes: 0\n");
  ExpectError(r, 400, "invalid_argument");
  const json& diags = r.body["error"]["details"]["diagnostics"];
  ASSERT_EQ(diags.size(), 2u);
  EXPECT_EQ(diags[0]["file"], "train.yaml");
  EXPECT_EQ(diags[0]["line"], 3);
  EXPECT_EQ(diags[0]["column"], 3);
  EXPECT_EQ(diags[0]["field"], "resources.accelerator");
  EXPECT_NE(diags[0]["message"].get<std::string>().find("did you mean \"accelerators\""), std::string::npos);

  auto estate = Submit("resources:\n  accelerators: H300:8\n  labels: {owner: o, team: nlp}\n");
  ExpectError(estate, 400, "invalid_argument");
  EXPECT_NE(estate.body["error"]["message"].get<std::string>().find("H200"), std::string::npos);

  auto yaml = Submit("name: [unclosed\n");
  ExpectError(yaml, 400, "invalid_argument");
  EXPECT_EQ(yaml.body["error"]["details"]["diagnostics"][0]["line"], 2);
}

TEST_F(ApiTest, MalformedJsonGetsTheParserPosition) {
  auto r = Call("POST", "/v1/jobs", "{\n  \"spec\": \"run: x\",\n  oops\n}");
  ExpectError(r, 400, "invalid_argument");
  const json& d = r.body["error"]["details"]["diagnostics"][0];
  EXPECT_EQ(d["line"], 3);
  EXPECT_EQ(d["column"], 3);
  ExpectError(Call("POST", "/v1/jobs", "[]"), 400, "invalid_argument");
  auto missing = Call("POST", "/v1/jobs", "{}");
  ExpectError(missing, 400, "invalid_argument");
  EXPECT_NE(missing.body["error"]["message"].get<std::string>().find("is missing"), std::string::npos) << missing.raw;
  // There, with the wrong type: named as such, not as missing.
  auto number = Call("POST", "/v1/jobs", R"({"spec": 42})");
  ExpectError(number, 400, "invalid_argument");
  EXPECT_EQ(number.body["error"]["message"].get<std::string>().find("missing"), std::string::npos) << number.raw;
  EXPECT_NE(number.body["error"]["message"].get<std::string>().find("number"), std::string::npos) << number.raw;
}

TEST_F(ApiTest, OversizedBodiesAreRefused) {
  std::string huge(2 << 20, 'a');
  auto r = client_.Send("POST", "/v1/jobs", huge, Auth(server_->admin_token()));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->status, 413);
  EXPECT_EQ(json::parse(r->body)["error"]["code"], "payload_too_large");
  EXPECT_EQ(json::parse(r->body)["error"]["details"]["retryable"], false) << "the same shape as every error answer";
}

TEST_F(ApiTest, UnknownRoutesAndMethods) {
  ExpectError(Call("GET", "/v1/nothing"), 404, "not_found");
  auto r = Call("DELETE", "/v1/jobs");
  EXPECT_EQ(r.status, 405);
  EXPECT_EQ(r.body["error"]["code"], "method_not_allowed");
  EXPECT_EQ(r.headers["allow"], "GET, POST");
}

TEST_F(ApiTest, ListFiltersPaginatesAndValidates) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) {
    auto r = Submit("name: page\nresources: {accelerators: L4:1, labels: {owner: pager, team: research}}\n");
    ASSERT_EQ(r.status, 201);
    ids.push_back(r.body["job"]["id"]);
  }
  std::vector<std::string> seen;
  std::string cursor;
  for (int page = 0; page < 10; ++page) {
    auto r = Call("GET", "/v1/jobs?owner=pager&limit=2" + (cursor.empty() ? "" : "&cursor=" + cursor));
    ASSERT_EQ(r.status, 200);
    for (const auto& j : r.body["jobs"]) seen.push_back(j["id"]);
    if (r.body["next_cursor"].is_null()) break;
    cursor = r.body["next_cursor"];
  }
  EXPECT_EQ(seen, std::vector<std::string>(ids.rbegin(), ids.rend()));
  ExpectError(Call("GET", "/v1/jobs?state=sleeping"), 400, "invalid_argument");
  ExpectError(Call("GET", "/v1/jobs?limit=0"), 400, "invalid_argument");
  ExpectError(Call("GET", "/v1/jobs?limit=abc"), 400, "invalid_argument");
}

TEST_F(ApiTest, CancelOnceThenConflict) {
  std::string id = Submit(kSpec).body["job"]["id"];
  auto r = Call("POST", "/v1/jobs/" + id + "/cancel", json{{"reason", "wrong data"}}.dump());
  ASSERT_EQ(r.status, 200) << r.raw;
  EXPECT_EQ(r.body["job"]["state"], "cancelled");
  ExpectError(Call("POST", "/v1/jobs/" + id + "/cancel"), 409, "failed_precondition");
  ExpectError(Call("POST", "/v1/jobs/job_nope/cancel"), 404, "not_found");
  auto audit = Call("GET", "/v1/audit?resource=job/" + id);
  std::vector<std::string> actions;
  for (const auto& e : audit.body["events"]) {
    actions.push_back(e["action"]);
    if (e["action"] == "job.cancel") {
      EXPECT_EQ(e["details"]["reason"], "wrong data");
    }
  }
  // Submitted, perhaps dispatched (and then its attempt stopped), cancelled.
  ASSERT_GE(actions.size(), 2u);
  EXPECT_EQ(actions.front(), "job.submit");
  EXPECT_NE(std::find(actions.begin(), actions.end(), "job.cancel"), actions.end());
}

TEST_F(ApiTest, ScopedTokensAreEnforcedAndRevocable) {
  std::string reader = NewToken({"jobs:read"});
  EXPECT_EQ(Call("GET", "/v1/jobs", "", {}, reader).status, 200);
  ExpectError(Submit(kSpec, "", reader), 403, "permission_denied");
  ExpectError(Call("GET", "/v1/tokens", "", {}, reader), 403, "permission_denied");
  ExpectError(Call("GET", "/v1/audit", "", {}, reader), 403, "permission_denied");

  auto who = Call("GET", "/v1/whoami", "", {}, reader);
  std::string id = who.body["token_id"];
  auto listed = Call("GET", "/v1/tokens");
  EXPECT_EQ(listed.raw.find(reader), std::string::npos) << "a secret was listed";
  EXPECT_EQ(listed.raw.find("hash"), std::string::npos);
  ASSERT_EQ(Call("POST", "/v1/tokens/" + id + "/revoke").status, 200);
  ExpectError(Call("GET", "/v1/jobs", "", {}, reader), 401, "unauthenticated");
  ExpectError(Call("POST", "/v1/tokens/" + id + "/revoke"), 409, "failed_precondition");

  ExpectError(Call("POST", "/v1/tokens", json{{"name", "x"}, {"scopes", {"root"}}}.dump()), 400, "invalid_argument");
  ExpectError(Call("POST", "/v1/tokens", json{{"name", "x"}, {"scopes", {"jobs:read"}}, {"ttl", "soon"}}.dump()), 400,
              "invalid_argument");
}

TEST_F(ApiTest, RotatingATokenRevokesTheOldSecretAndKeepsItsPurpose) {
  auto made = Call("POST", "/v1/tokens", json{{"name", "ci"}, {"scopes", {"jobs:read"}}, {"ttl", "30d"}}.dump());
  ASSERT_EQ(made.status, 201) << made.raw;
  std::string old_secret = made.body["secret"], old_id = made.body["token"]["id"];
  auto rotated = Call("POST", "/v1/tokens/" + old_id + "/rotate");
  ASSERT_EQ(rotated.status, 201) << rotated.raw;
  EXPECT_NE(rotated.body["token"]["id"], old_id);
  EXPECT_EQ(rotated.body["token"]["name"], "ci");
  EXPECT_EQ(rotated.body["token"]["scopes"], json::array({"jobs:read"}));
  EXPECT_FALSE(rotated.body["token"]["expires_at"].is_null());
  EXPECT_EQ(Call("GET", "/v1/whoami", "", {}, old_secret).status, 401);
  EXPECT_EQ(Call("GET", "/v1/jobs", "", {}, rotated.body["secret"]).status, 200);
  EXPECT_EQ(Call("POST", "/v1/tokens/" + old_id + "/rotate").status, 409);  // revoked: nothing to rotate
  EXPECT_EQ(Call("POST", "/v1/tokens/tok_none/rotate").status, 404);
}

TEST_F(ApiTest, NoSecretReachesTheAuditTrail) {
  std::string secret = NewToken({"jobs:read"});
  auto audit = Call("GET", "/v1/audit?action=token.&limit=1000");
  ASSERT_EQ(audit.status, 200);
  EXPECT_GE(audit.body["events"].size(), 1u);
  EXPECT_EQ(audit.raw.find(secret), std::string::npos);
  EXPECT_EQ(audit.raw.find(server_->admin_token()), std::string::npos);
  ASSERT_EQ(Submit("name: s\nenvs: {API_KEY: hunter2}\nresources: {accelerators: L4:1, labels: {owner: o, team: research}}\n")
                .status,
            201);
  EXPECT_EQ(Call("GET", "/v1/audit?limit=1000").raw.find("hunter2"), std::string::npos);
}

TEST_F(ApiTest, AuditIsPagedAndVerifies) {
  for (int i = 0; i < 3; ++i) Submit(kSpec);
  auto first = Call("GET", "/v1/audit?limit=2");
  ASSERT_EQ(first.body["events"].size(), 2u);
  EXPECT_EQ(first.body["events"][0]["seq"], 1);
  auto next = Call("GET", "/v1/audit?limit=2&cursor=" + first.body["next_cursor"].get<std::string>());
  EXPECT_EQ(next.body["events"][0]["seq"], 3);
  EXPECT_EQ(Call("GET", "/v1/audit?since=1h").status, 200);
  ExpectError(Call("GET", "/v1/audit?since=whenever"), 400, "invalid_argument");
  auto verify = Call("GET", "/v1/audit/verify");
  EXPECT_TRUE(verify.body["ok"].get<bool>()) << verify.raw;
  // Newest first, paged back.
  auto newest = Call("GET", "/v1/audit?limit=2&order=newest");
  ASSERT_EQ(newest.body["events"].size(), 2u);
  const int64_t head = newest.body["events"][0]["seq"].get<int64_t>();
  EXPECT_EQ(newest.body["events"][1]["seq"], head - 1);
  auto older = Call("GET", "/v1/audit?limit=2&order=newest&cursor=" + newest.body["next_cursor"].get<std::string>());
  EXPECT_EQ(older.body["events"][0]["seq"], head - 2);
  ExpectError(Call("GET", "/v1/audit?order=sideways"), 400, "invalid_argument");
  // A report under 30 s old is served again; fresh=true reads the chain again.
  Submit(kSpec);
  auto again = Call("GET", "/v1/audit/verify");
  EXPECT_EQ(again.body["verified_at"], verify.body["verified_at"]);
  EXPECT_EQ(again.body["events"], verify.body["events"]);
  auto fresh = Call("GET", "/v1/audit/verify?fresh=true");
  EXPECT_GT(fresh.body["events"].get<int64_t>(), verify.body["events"].get<int64_t>()) << fresh.raw;
  EXPECT_TRUE(fresh.body["ok"].get<bool>());
}

TEST_F(ApiTest, ClustersAndMetrics) {
  auto c = Call("GET", "/v1/clusters");
  ASSERT_EQ(c.status, 200);
  ASSERT_EQ(c.body["clusters"].size(), 5u);
  EXPECT_EQ(c.body["clusters"][0]["name"], "nebius-eu-h200");
  EXPECT_EQ(c.body["clusters"][0]["node_pools"][0]["price_per_gpu_hour"]["on_demand"], "3.50");
  auto m = Call("GET", "/metrics");
  ASSERT_EQ(m.status, 200);
  EXPECT_EQ(m.headers["content-type"], "text/plain; version=0.0.4");
  EXPECT_NE(m.raw.find("causeway_http_requests_total{method=\"GET\",route=\"/v1/clusters\",code=\"200\"}"),
            std::string::npos);
  EXPECT_NE(m.raw.find("causeway_http_request_duration_seconds_bucket"), std::string::npos);
  EXPECT_NE(m.raw.find("causeway_store_commits_total"), std::string::npos);
  ExpectError(Call("GET", "/metrics", "", {}, NewToken({"jobs:read"})), 403, "permission_denied");
}

}  // namespace
}  // namespace causeway::testing
