// `causeway cost ...` as people run it: importing a FOCUS export into a data
// folder, the answers and exit codes for good and bad input, and showback.
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

TEST(CostCliTest, ImportAgainChangesNothingAndShowbackGroups) {
  TempDir dir("cost-cli");
  std::string bill = WriteFile(dir.path() + "/bill.csv", kBill);
  std::string data = dir.path() + "/data";
  auto first = RunCli({"cost", "import", bill, "--provider", "nimbus", "--data-dir", data});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("imported bill_"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("3 rows of FOCUS"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("mandatory-column"), std::string::npos) << "a partial file is tolerated, with warnings";

  auto again = RunCli({"cost", "import", bill, "--provider", "nimbus", "--data-dir", data});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("already imported"), std::string::npos) << again.out;

  auto list = RunCli({"--json", "cost", "imports", "--data-dir", data});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  ASSERT_EQ(json::parse(list.out).size(), 1u);

  auto showback = RunCli({"--json", "cost", "showback", "--by", "team,month", "--data-dir", data});
  ASSERT_EQ(showback.exit_code, 0) << showback.err;
  json rows = json::parse(showback.out)["rows"];
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0]["team"], "nlp");
  EXPECT_EQ(rows[0]["month"], "2026-11");
  EXPECT_EQ(rows[0]["billed_cost"], "10.50");
  EXPECT_EQ(rows[0]["gpu_hours"], "8.00");

  auto november = RunCli({"--json", "cost", "showback", "--by", "team", "--period", "2026-11", "--data-dir", data});
  ASSERT_EQ(november.exit_code, 0) << november.err;
  EXPECT_EQ(json::parse(november.out)["rows"].size(), 2u);

  auto table = RunCli({"cost", "showback", "--by", "job", "--data-dir", data});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("(untagged)"), std::string::npos) << table.out;
}

TEST(CostCliTest, BadInputGetsItsExitCodeAndPlace) {
  TempDir dir("cost-cli-bad");
  std::string data = dir.path() + "/data";
  auto missing = RunCli({"cost", "import", dir.path() + "/nope.csv", "--provider", "nimbus", "--data-dir", data});
  EXPECT_EQ(missing.exit_code, 4) << missing.err;
  EXPECT_NE(missing.err.find("no such file"), std::string::npos);

  std::string messy = std::string(kBill);
  messy.replace(messy.find("2026-11-02T01:00:00Z,2026-11-02T02"), 20, "2026-11-02 01:00:00");
  std::string path = WriteFile(dir.path() + "/messy.csv", messy);
  auto strict = RunCli({"cost", "import", path, "--provider", "nimbus", "--strict", "--data-dir", data});
  EXPECT_EQ(strict.exit_code, 3) << strict.err;
  EXPECT_NE(strict.err.find("messy.csv:3: ChargePeriodStart: '2026-11-02 01:00:00' read as UTC"), std::string::npos)
      << strict.err;
  auto none = RunCli({"--json", "cost", "imports", "--data-dir", data});
  EXPECT_EQ(json::parse(none.out).size(), 0u) << "strict imported nothing";

  auto bad_by = RunCli({"cost", "showback", "--by", "colour", "--data-dir", data});
  EXPECT_EQ(bad_by.exit_code, 3);
  EXPECT_NE(bad_by.err.find("cannot group by 'colour'"), std::string::npos) << bad_by.err;
  auto bad_period = RunCli({"cost", "showback", "--period", "Nov", "--data-dir", data});
  EXPECT_EQ(bad_period.exit_code, 3);
  auto not_focus = RunCli({"cost", "import", WriteFile(dir.path() + "/x.csv", "a,b\n1,2\n"), "--provider", "n",
                           "--data-dir", data});
  EXPECT_EQ(not_focus.exit_code, 3);
  EXPECT_NE(not_focus.err.find("x.csv:1: not a FOCUS file"), std::string::npos) << not_focus.err;
}

}  // namespace
}  // namespace causeway::testing
