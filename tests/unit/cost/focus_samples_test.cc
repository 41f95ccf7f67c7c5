// Bills from the real world: the FinOps Foundation's FOCUS 1.0 sample (AWS,
// Microsoft and Oracle rows with their quirks) and the FOCUS 1.2
// specification's worked examples, from shared/data/focus. Totals are
// checked against sums computed here independently of the reader (a plain
// CSV split and decimal arithmetic of their own). Skipped when the data is
// absent: set CAUSEWAY_SHARED_DATA to the data folder.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "causeway/clock.h"
#include "cost/billing.h"
#include "unit/temp_db.h"

namespace causeway::cost {
namespace {

namespace fs = std::filesystem;

fs::path FocusData() {
  const char* env = std::getenv("CAUSEWAY_SHARED_DATA");
  fs::path root = env && *env ? fs::path(env) : fs::path(CAUSEWAY_SOURCE_DIR) / ".." / "shared" / "data";
  return root / "focus";
}

// The records of a small CSV file, split without the product's reader.
std::vector<std::vector<std::string>> SplitCsv(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);
  std::vector<std::vector<std::string>> out(1);
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.back().push_back(field), field.clear();
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      out.back().push_back(field), field.clear();
      out.emplace_back();
    } else {
      field += c;
    }
  }
  if (!field.empty() || !out.back().empty()) out.back().push_back(field);
  while (!out.empty() && (out.back().empty() || (out.back().size() == 1 && out.back()[0].empty()))) out.pop_back();
  return out;
}

// "12.345" -> pico-units, by digit string alone; "" and NULL are 0. The
// SaaS examples write money as "$10,000.00 ": symbols, separators and
// spaces are dropped.
Picos IndependentPicos(std::string raw) {
  std::string s;
  for (char c : raw) {
    if (c != '$' && c != ',' && c != ' ') s += c;
  }
  if (s.empty() || s == "NULL") return 0;
  bool negative = s[0] == '-';
  if (negative) s.erase(0, 1);
  size_t dot = s.find('.');
  std::string whole = s.substr(0, dot), frac = dot == std::string::npos ? "" : s.substr(dot + 1);
  EXPECT_LE(frac.size(), 12u) << s;
  frac.resize(12, '0');
  Picos v = 0;
  for (char c : whole + frac) v = v * 10 + (c - '0');
  return negative ? -v : v;
}

struct Totals {
  Picos billed = 0, effective = 0;
  bool operator==(const Totals&) const = default;
};

// Column `group` -> BilledCost and EffectiveCost sums, from the file itself.
std::map<std::string, Totals> ExpectedTotals(const fs::path& path, const std::string& group) {
  auto records = SplitCsv(path);
  std::map<std::string, int> col;
  for (size_t i = 0; i < records[0].size(); ++i) col[records[0][i]] = static_cast<int>(i);
  std::map<std::string, Totals> out;
  for (size_t r = 1; r < records.size(); ++r) {
    const auto& rec = records[r];
    if (rec.size() == 1 && rec[0].empty()) continue;  // a blank line
    EXPECT_EQ(rec.size(), records[0].size()) << path << " record " << r;
    if (rec.size() != records[0].size()) continue;
    std::string key = rec[col.at(group)];
    if (col.count("BilledCost")) out[key].billed += IndependentPicos(rec[col.at("BilledCost")]);
    if (col.count("EffectiveCost")) out[key].effective += IndependentPicos(rec[col.at("EffectiveCost")]);
  }
  return out;
}

class FocusSamplesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(FocusData())) GTEST_SKIP() << "no FOCUS samples at " << FocusData() << " (set CAUSEWAY_SHARED_DATA)";
    store_ = db_.Open();
  }
  // Imports `path` and returns the totals by `dim` from the store.
  std::map<std::string, Totals> ImportedTotals(const fs::path& path, BillingDim dim, const std::string& provider) {
    ImportOptions o;
    o.provider = provider;
    o.actor = "local:test";
    auto r = ImportFocusBill(*store_, path.string(), o, clock_);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    auto totals = store_->QueryBilling(BillingQuery{{dim}, "", "", provider});
    EXPECT_TRUE(totals.ok());
    std::map<std::string, Totals> out;
    for (const BillingTotal& t : *totals) {
      out[t.keys[0]].billed += t.billed;
      out[t.keys[0]].effective += t.effective;
    }
    return out;
  }

  testing::TempDb db_;
  std::unique_ptr<Store> store_;
  ManualClock clock_;
};

TEST_F(FocusSamplesTest, Focus10SampleTotalsByProviderMatch) {
  fs::path path = FocusData() / "focus-1.0-sample" / "focus_sample.csv";
  auto got = ImportedTotals(path, BillingDim::kProviderName, "sample");
  auto want = ExpectedTotals(path, "ProviderName");
  EXPECT_EQ(got, want);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(PicosText(got["AWS"].billed), "18.0066386184");
}

TEST_F(FocusSamplesTest, Focus10SampleQuirksAreNamedAndStrictRefusesIt) {
  fs::path path = FocusData() / "focus-1.0-sample" / "focus_sample.csv";
  ImportOptions o;
  o.provider = "sample";
  auto bill = ReadFocusBill(path.string(), o);
  ASSERT_TRUE(bill.ok());
  EXPECT_EQ(bill->import.focus_version, "1.0");
  EXPECT_EQ(bill->import.rows, 1000);
  const auto& rules = bill->issues.by_rule();
  ASSERT_TRUE(rules.count("custom-column-prefix"));
  EXPECT_EQ(rules.at("custom-column-prefix").first.column, "Id");
  ASSERT_TRUE(rules.count("datetime-format")) << "dates without T and Z";
  EXPECT_EQ(rules.at("datetime-format").first.line, 2);
  ASSERT_TRUE(rules.count("enum-case")) << "mixed-case values";
  o.strict = true;
  auto strict = ImportFocusBill(*store_, path.string(), o, clock_);
  EXPECT_EQ(strict.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(store_->ListBillingImports()->empty());
}

TEST_F(FocusSamplesTest, SpecificationWorkedExamplesTotalByChargeCategory) {
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(FocusData() / "focus-1.2-spec-examples")) {
    if (entry.path().extension() != ".csv") continue;
    ++files;
    std::string provider = "example-" + std::to_string(files);
    auto got = ImportedTotals(entry.path(), BillingDim::kChargeCategory, provider);
    auto want = ExpectedTotals(entry.path(), "ChargeCategory");
    EXPECT_EQ(got, want) << entry.path();
  }
  EXPECT_GE(files, 20);
}

TEST_F(FocusSamplesTest, CommitmentUsedAndUnusedAmortisation) {
  // The specification's usage scenario: the commitment's amortised cost
  // shows as EffectiveCost on usage rows that bill nothing themselves.
  fs::path dir = FocusData() / "focus-1.2-spec-examples" / "commitment_discount_scenarios";
  auto got = ImportedTotals(dir / "commitment_discount_usage_scenario_1.csv", BillingDim::kChargeCategory, "cd");
  ASSERT_TRUE(got.count("Usage"));
  EXPECT_EQ(got["Usage"].billed, 0);
  EXPECT_EQ(PicosText(got["Usage"].effective), "1.00");
}

}  // namespace
}  // namespace causeway::cost
