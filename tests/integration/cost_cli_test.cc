// `causeway cost ...` as people run it, against a running server: importing
// a FOCUS export through the API, the answers and exit codes for good and
// bad input, showback, reconciliation, waste and export; the direct import
// into a database no server is using; and who may do which.
#include <filesystem>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

constexpr const char* kBill =
    "BilledCost,EffectiveCost,BillingCurrency,ChargePeriodStart,ChargePeriodEnd,BillingPeriodStart,ChargeCategory,"
    "ProviderName,ResourceId,ConsumedQuantity,ConsumedUnit,Tags\n"
    "10.50,10.50,USD,2026-11-02T00:00:00Z,2026-11-02T01:00:00Z,2026-11-01T00:00:00Z,Usage,Nimbus,node-1,8,GPU-Hours,"
    "\"{\"\"causeway-team\"\": \"\"nlp\"\", \"\"causeway-job\"\": \"\"job_a\"\"}\"\n"
    "4.25,4.25,USD,2026-11-02T01:00:00Z,2026-11-02T02:00:00Z,2026-11-01T00:00:00Z,Usage,Nimbus,node-2,8,GPU-Hours,"
    "\"{\"\"causeway-team\"\": \"\"vision\"\"}\"\n"
    "1.00,1.00,USD,2026-12-01T00:00:00Z,2026-12-01T01:00:00Z,2026-12-01T00:00:00Z,Usage,Nimbus,node-1,8,GPU-Hours,"
    "\"{\"\"causeway-team\"\": \"\"nlp\"\"}\"\n";

std::string WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

class CostCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = dir_.path() + "/data";
    server_ = ServerProcess::Start(data_);
    ASSERT_NE(server_, nullptr);
    env_ = {{"CAUSEWAY_SERVER", server_->url()}, {"CAUSEWAY_TOKEN", server_->admin_token()}};
  }
  CliResult Cli(const std::vector<std::string>& args) { return RunCli(args, env_); }

  TempDir dir_{"cost-cli"};
  std::string data_;
  std::unique_ptr<ServerProcess> server_;
  std::map<std::string, std::string> env_;
};

TEST_F(CostCliTest, ImportAgainChangesNothingAndShowbackGroups) {
  std::string bill = WriteFile(dir_.path() + "/bill.csv", kBill);
  auto first = Cli({"cost", "import", bill, "--provider", "nebius"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("imported bill_"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("3 rows of FOCUS"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("mandatory-column"), std::string::npos) << "a partial file is tolerated, with warnings";

  auto again = Cli({"cost", "import", bill, "--provider", "nebius"});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("already imported"), std::string::npos) << again.out;
  // The same charges under another of the estate's providers: still one bill.
  auto renamed = Cli({"cost", "import", bill, "--provider", "coreweave"});
  ASSERT_EQ(renamed.exit_code, 0) << renamed.err;
  EXPECT_NE(renamed.out.find("already imported as bill_"), std::string::npos) << renamed.out;
  EXPECT_NE(renamed.out.find(" for nebius"), std::string::npos) << renamed.out;
  // A provider the estate lacks is refused.
  auto unknown = Cli({"cost", "import", bill, "--provider", "nimbus"});
  EXPECT_EQ(unknown.exit_code, 3) << unknown.err;
  EXPECT_NE(unknown.err.find("unknown provider \"nimbus\""), std::string::npos) << unknown.err;

  auto list = Cli({"--json", "cost", "imports"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  json bills = json::parse(list.out);
  ASSERT_EQ(bills.size(), 1u);
  EXPECT_EQ(bills[0]["file"], "bill.csv") << "the upload is recorded by its own name, not where the server put it";
  EXPECT_EQ(bills[0]["imported_by"].get<std::string>().rfind("local:", 0), std::string::npos)
      << "imported as the caller's credential, not the machine's user";

  auto showback = Cli({"--json", "cost", "showback", "--by", "team,month"});
  ASSERT_EQ(showback.exit_code, 0) << showback.err;
  json rows = json::parse(showback.out)["rows"];
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["team"], "nlp");
  EXPECT_EQ(rows[0]["month"], "2026-11");
  EXPECT_EQ(rows[0]["billed_cost"], "10.50");
  EXPECT_EQ(rows[0]["gpu_hours"], "8.00");

  auto november = Cli({"--json", "cost", "showback", "--by", "team", "--period", "2026-11"});
  ASSERT_EQ(november.exit_code, 0) << november.err;
  EXPECT_EQ(json::parse(november.out)["rows"].size(), 2u);

  auto table = Cli({"cost", "showback", "--by", "job"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("(untagged)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("job_a"), std::string::npos) << table.out;

  auto csv = Cli({"cost", "showback", "--by", "team", "--period", "2026-11", "--format", "csv"});
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\n')), "team,currency,rows,billed,effective,list,gpu-hours") << csv.out;
  EXPECT_NE(csv.out.find("nlp,USD,1,10.50,10.50,"), std::string::npos) << csv.out;

  // Billed against metered: the bill's provider has no attempts here, so
  // each billed day is flagged.
  auto reconcile = Cli({"--json", "cost", "reconcile", "--period", "2026-11"});
  ASSERT_EQ(reconcile.exit_code, 0) << reconcile.err;
  json r = json::parse(reconcile.out);
  EXPECT_EQ(r["threshold_percent"], 5);
  ASSERT_EQ(r["days"].size(), 1u) << reconcile.out;
  EXPECT_EQ(r["days"][0]["day"], "2026-11-02");
  EXPECT_EQ(r["days"][0]["billed_gpu_hours"], "16.00");
  EXPECT_EQ(r["flagged"], 1);

  auto waste = Cli({"--json", "waste", "--share-unused", "proportional"});
  ASSERT_EQ(waste.exit_code, 0) << waste.err;
  EXPECT_EQ(json::parse(waste.out)["share_unused"], "proportional");

  std::string out = dir_.path() + "/usage.csv";
  auto exported = Cli({"cost", "export", "-o", out});
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::ifstream in(out);
  std::string header;
  std::getline(in, header);
  EXPECT_NE(header.find("x_JobId"), std::string::npos) << header;
}

// `cost job` says how each attempt's GPUs were priced: a spot attempt is
// "spot", at the spot price, an on-demand one "on-demand".
TEST_F(CostCliTest, CostJobLabelsSpotAttemptsSpot) {
  std::map<bool, std::string> ids;
  for (bool spot : {true, false}) {
    std::string file = WriteFile(dir_.path() + (spot ? "/spot.yaml" : "/ondemand.yaml"),
                                 std::string("resources:\n  accelerators: H100:1\n  use_spot: ") + (spot ? "true" : "false") +
                                     "\n  labels: {owner: dan@example.com, team: vision}\nrun: train\n");
    auto submitted = Cli({"--json", "submit", file});
    ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
    ids[spot] = json::parse(submitted.out)["job"]["id"];
  }
  for (bool spot : {true, false}) {
    std::string out;
    ASSERT_TRUE(Eventually([&] {
      out = Cli({"cost", "job", ids[spot]}).out;
      return out.find("coreweave-us-h100") != std::string::npos;
    })) << out;
    EXPECT_NE(out.find(spot ? " spot " : " on-demand "), std::string::npos) << out;
    EXPECT_NE(out.find(spot ? "2.10" : "4.25"), std::string::npos) << out;
    if (spot) {
      EXPECT_EQ(out.find("on-demand"), std::string::npos) << out;
    }
  }
}

TEST_F(CostCliTest, BadInputGetsItsExitCodeAndPlace) {
  auto missing = Cli({"cost", "import", dir_.path() + "/nope.csv", "--provider", "nebius"});
  EXPECT_EQ(missing.exit_code, 4) << missing.err;
  EXPECT_NE(missing.err.find("no such file"), std::string::npos);

  std::string messy = std::string(kBill);
  messy.replace(messy.find("2026-11-02T01:00:00Z,2026-11-02T02"), 20, "2026-11-02 01:00:00");
  std::string path = WriteFile(dir_.path() + "/messy.csv", messy);
  auto strict = Cli({"cost", "import", path, "--provider", "nebius", "--strict"});
  EXPECT_EQ(strict.exit_code, 3) << strict.err;
  EXPECT_NE(strict.err.find("messy.csv:3: ChargePeriodStart: '2026-11-02 01:00:00' read as UTC"), std::string::npos)
      << strict.err;
  EXPECT_EQ(strict.err.find("causeway-upload"), std::string::npos) << "the server's own path stays there: " << strict.err;
  auto none = Cli({"--json", "cost", "imports"});
  EXPECT_EQ(json::parse(none.out).size(), 0u) << "strict imported nothing";

  auto bad_by = Cli({"cost", "showback", "--by", "colour"});
  EXPECT_EQ(bad_by.exit_code, 3);
  EXPECT_NE(bad_by.err.find("cannot group by 'colour'"), std::string::npos) << bad_by.err;
  auto bad_period = Cli({"cost", "showback", "--period", "Nov"});
  EXPECT_EQ(bad_period.exit_code, 3);
  auto not_focus = Cli({"cost", "import", WriteFile(dir_.path() + "/x.csv", "a,b\n1,2\n"), "--provider", "nebius"});
  EXPECT_EQ(not_focus.exit_code, 3);
  EXPECT_NE(not_focus.err.find("x.csv:1: not a FOCUS file"), std::string::npos) << not_focus.err;
  EXPECT_EQ(not_focus.err.find("causeway-upload"), std::string::npos) << not_focus.err;
}

// Reports go through the API's authorization: no token, no report; a token
// without cost:read, no report; importing a bill takes admin.
TEST_F(CostCliTest, EveryCostCommandIsAuthorizedByTheServer) {
  auto anonymous = RunCli({"cost", "showback"}, {{"CAUSEWAY_SERVER", server_->url()}});
  EXPECT_EQ(anonymous.exit_code, 5) << anonymous.err;
  auto c = server_->Client();
  auto made = c.Send("POST", "/v1/tokens", json{{"name", "ci"}, {"scopes", {"jobs:read", "cost:read"}}}.dump(),
                     Auth(server_->admin_token()));
  ASSERT_EQ(made->status, 201) << made->body;
  std::string reader = json::parse(made->body)["secret"];
  made = c.Send("POST", "/v1/tokens", json{{"name", "jobs"}, {"scopes", {"jobs:read"}}}.dump(),
                Auth(server_->admin_token()));
  std::string jobs_only = json::parse(made->body)["secret"];

  std::map<std::string, std::string> as_reader = {{"CAUSEWAY_SERVER", server_->url()}, {"CAUSEWAY_TOKEN", reader}};
  std::map<std::string, std::string> as_jobs = {{"CAUSEWAY_SERVER", server_->url()}, {"CAUSEWAY_TOKEN", jobs_only}};
  for (const std::vector<std::string>& report : {std::vector<std::string>{"cost", "showback"},
                                                 {"cost", "imports"}, {"cost", "reconcile"}, {"cost", "export"},
                                                 {"waste"}}) {
    EXPECT_EQ(RunCli(report, as_reader).exit_code, 0) << report[report.size() - 1];
    auto denied = RunCli(report, as_jobs);
    EXPECT_EQ(denied.exit_code, 5) << report[report.size() - 1] << ": " << denied.err;
    EXPECT_NE(denied.err.find("cost:read"), std::string::npos) << denied.err;
  }
  std::string bill = WriteFile(dir_.path() + "/bill.csv", kBill);
  auto import = RunCli({"cost", "import", bill, "--provider", "nebius"}, as_reader);
  EXPECT_EQ(import.exit_code, 5) << import.err;
  EXPECT_NE(import.err.find("\"admin\" scope"), std::string::npos) << import.err;
}

// `cost import --db` writes into a database no server is using (here, one
// of its own), without a server or a token; reports still need the server.
TEST(CostCliDirectTest, ImportIntoADatabaseNoServerUses) {
  TempDir dir("cost-cli-db");
  std::string bill = WriteFile(dir.path() + "/bill.csv", kBill);
  std::string db = dir.path() + "/offline.db";
  auto imported = RunCli({"--json", "cost", "import", bill, "--provider", "nimbus", "--db", db});
  ASSERT_EQ(imported.exit_code, 0) << imported.err;
  json report = json::parse(imported.out);
  EXPECT_EQ(report["rows"], 3);
  EXPECT_EQ(report["file"], bill);
  EXPECT_FALSE(report["already_imported"].get<bool>());

  // A mistyped --data-dir is refused, not created; reading a database that
  // is not there is "not found" (exit 4).
  auto typo = RunCli({"cost", "import", bill, "--provider", "nimbus", "--data-dir", dir.path() + "/dta"});
  EXPECT_EQ(typo.exit_code, 4) << typo.err;
  EXPECT_NE(typo.err.find("is not a directory"), std::string::npos) << typo.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/dta"));
  auto missing = RunCli({"audit", "verify", "--data-dir", dir.path() + "/dta"});
  EXPECT_EQ(missing.exit_code, 4) << missing.err;
  EXPECT_NE(missing.err.find("no database at"), std::string::npos) << missing.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/dta"));

  auto server = ServerProcess::Start(dir.path() + "/data", {"--db", db});
  ASSERT_NE(server, nullptr);
  auto list = RunCli({"--json", "cost", "imports"},
                     {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", server->admin_token()}});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(json::parse(list.out).size(), 1u) << "the server reads what was loaded before it started";
}

}  // namespace
}  // namespace causeway::testing
