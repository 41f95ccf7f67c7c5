// The FOCUS reader and bill import: CSV edge cases, the specification's
// rules in tolerant and strict mode, exact sums, and idempotent imports on
// every store backend. Tests over the real samples in shared/data/focus are
// in focus_samples_test.cc.
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "causeway/clock.h"
#include "providers/registry.h"
#include "cost/allocation.h"
#include "cost/billing.h"
#include "cost/csv.h"
#include "cost/focus.h"
#include "cost/metering.h"
#include "cost/showback.h"
#include "cost/waste.h"
#include "causeway/estate.h"
#include <sstream>
#include "unit/temp_db.h"

namespace causeway::cost {
namespace {

namespace fs = std::filesystem;

// A file under a fresh temporary folder, removed with it.
class Files {
 public:
  Files() {
    dir_ = fs::temp_directory_path() / ("cw-cost-" + std::to_string(::getpid()) + "-" + std::to_string(++count_));
    fs::create_directories(dir_);
  }
  ~Files() { fs::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string WriteGzip(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
    return path;
  }

 private:
  static inline int count_ = 0;
  fs::path dir_;
};

// Every record of a file, through the chunker and the record parser.
std::vector<std::pair<int64_t, std::vector<std::string>>> Records(const std::string& path) {
  auto chunker = CsvChunker::Open(path);
  EXPECT_TRUE(chunker.ok()) << chunker.status().ToString();
  std::vector<std::pair<int64_t, std::vector<std::string>>> out;
  while (true) {
    auto chunk = (*chunker)->Next();
    EXPECT_TRUE(chunk.ok()) << chunk.status().ToString();
    if (!chunk.ok() || !*chunk) break;
    CsvRecords records(path, **chunk);
    std::vector<CsvField> fields;
    while (true) {
      auto more = records.Next(fields);
      EXPECT_TRUE(more.ok()) << more.status().ToString();
      if (!more.ok() || !*more) break;
      std::vector<std::string> texts;
      for (CsvField& f : fields) texts.emplace_back(Unescape(f));
      out.emplace_back(records.line(), texts);
    }
  }
  return out;
}

TEST(CsvTest, QuotesLineBreaksCrlfAndByteOrderMark) {
  Files files;
  std::string path = files.Write("a.csv",
                                 "\xEF\xBB\xBF" "a,b,c\r\n"
                                 "1,\"x, \"\"quoted\"\"\",3\r\n"
                                 "\n"
                                 "2,\"two\nlines\",\r\n"
                                 "3,,last");
  auto records = Records(path);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[0].second, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(records[1].second, (std::vector<std::string>{"1", "x, \"quoted\"", "3"}));
  EXPECT_EQ(records[2].first, 4) << "the blank line 3 is not a record";
  EXPECT_EQ(records[2].second, (std::vector<std::string>{"2", "two\nlines", ""}));
  EXPECT_EQ(records[3].first, 6);
  EXPECT_EQ(records[3].second, (std::vector<std::string>{"3", "", "last"}));
}

// Fields longer than the 64 bytes the reader looks at at once: separators,
// doubled quotes and line breaks on either side of those boundaries.
TEST(CsvTest, LongFieldsAcrossTheReadersWindows) {
  std::string long_plain(150, 'p');
  std::string long_quoted;
  for (int i = 0; i < 40; ++i) long_quoted += i % 7 == 3 ? "\"\"" : i % 11 == 5 ? "\n" : i % 5 == 1 ? "," : "abc";
  std::string expected_quoted;
  for (int i = 0; i < 40; ++i) expected_quoted += i % 7 == 3 ? "\"" : i % 11 == 5 ? "\n" : i % 5 == 1 ? "," : "abc";
  int breaks = 0;
  for (int i = 0; i < 40; ++i) breaks += i % 7 != 3 && i % 11 == 5;
  Files files;
  std::string path = files.Write("long.csv", "a,b\n" + long_plain + ",\"" + long_quoted + "\"\r\n" +
                                                 std::string(63, 'x') + "," + std::string(1, 'y') + "\nz,\"\"\n");
  auto records = Records(path);
  ASSERT_EQ(records.size(), 4u);
  EXPECT_EQ(records[1].second, (std::vector<std::string>{long_plain, expected_quoted}));
  EXPECT_EQ(records[2].first, 3 + breaks) << "line breaks inside the quoted field count";
  EXPECT_EQ(records[2].second, (std::vector<std::string>{std::string(63, 'x'), "y"}));
  EXPECT_EQ(records[3].second, (std::vector<std::string>{"z", ""}));
}

TEST(CsvTest, GzipIsRecognisedByItsBytes) {
  Files files;
  std::string path = files.WriteGzip("bill.csv", "a,b\n1,2\n");
  auto records = Records(path);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[1].second, (std::vector<std::string>{"1", "2"}));
}

TEST(CsvTest, RecordsAcrossBlocksKeepTheirLines) {
  // Blocks are 4 MiB: 60,000 records of ~100 bytes cross several, and one
  // quoted field of 9 MiB spans whole blocks.
  Files files;
  std::string text = "n,text\n";
  for (int i = 0; i < 60000; ++i) text += std::to_string(i) + ",\"" + std::string(90, 'a' + i % 26) + "\"\n";
  text += "big,\"" + std::string(9 << 20, 'z') + "\nend\"\n";
  text += "after,1\n";
  std::string path = files.Write("big.csv", text);
  auto records = Records(path);
  ASSERT_EQ(records.size(), 60003u);
  for (int i = 0; i < 60000; i += 997) {
    EXPECT_EQ(records[i + 1].second[0], std::to_string(i));
    EXPECT_EQ(records[i + 1].first, i + 2);
  }
  EXPECT_EQ(records[60001].second[1].size(), (9u << 20) + 4);
  EXPECT_EQ(records[60002].first, 60004) << "the line break inside the big field counts";
}

TEST(CsvTest, UnterminatedQuoteNamesFileAndLine) {
  Files files;
  std::string path = files.Write("bad.csv", "a,b\n1,2\n3,\"open\n4,5\n");
  auto chunker = CsvChunker::Open(path);
  ASSERT_TRUE(chunker.ok());
  Status error;
  while (error.ok()) {
    auto chunk = (*chunker)->Next();
    ASSERT_TRUE(chunk.ok());
    if (!*chunk) break;
    CsvRecords records(path, **chunk);
    std::vector<CsvField> fields;
    while (true) {
      auto more = records.Next(fields);
      if (!more.ok()) {
        error = more.status();
        break;
      }
      if (!*more) break;
    }
  }
  EXPECT_EQ(error.code(), Code::kInvalidArgument);
  EXPECT_NE(error.message().find("bad.csv:3:"), std::string::npos) << error.message();
}

TEST(CsvTest, TruncatedGzipIsAnErrorNotAShortFile) {
  Files files;
  std::string text = "n,text\n";
  for (int64_t i = 0; i < 50000; ++i) text += std::to_string(i * 7919) + "," + std::to_string(i * 104729) + "\n";
  std::string whole = files.WriteGzip("whole.csv.gz", text);
  std::ifstream in(whole, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_GT(bytes.size(), 1000u);
  std::string cut = files.Write("cut.csv.gz", bytes.substr(0, bytes.size() / 2));
  auto chunker = CsvChunker::Open(cut);
  ASSERT_TRUE(chunker.ok());
  Status error;
  while (error.ok()) {
    auto chunk = (*chunker)->Next();
    if (!chunk.ok()) error = chunk.status();
    else if (!*chunk) break;
  }
  EXPECT_EQ(error.code(), Code::kInvalidArgument);
  EXPECT_NE(error.message().find("ends early"), std::string::npos) << error.message();
}

TEST(CsvTest, MissingFileIsNotFound) {
  auto chunker = CsvChunker::Open("/nonexistent/bill.csv");
  EXPECT_EQ(chunker.status().code(), Code::kNotFound);
}

TEST(FocusValuesTest, DecimalsAreExactPicos) {
  EXPECT_EQ(*ParsePicos("12.5"), static_cast<Picos>(12500000000000LL));
  EXPECT_EQ(*ParsePicos("-0.0000008"), static_cast<Picos>(-800000));
  EXPECT_EQ(*ParsePicos("0.00000080000"), static_cast<Picos>(800000));
  EXPECT_EQ(*ParsePicos("1e-3"), static_cast<Picos>(1000000000));
  EXPECT_EQ(*ParsePicos("2.5E2"), static_cast<Picos>(250) * 1000000000000LL);
  EXPECT_EQ(*ParsePicos("0.0000000000005"), static_cast<Picos>(0)) << "half to even";
  EXPECT_EQ(*ParsePicos("0.0000000000015"), static_cast<Picos>(2));
  EXPECT_FALSE(ParsePicos("1,000.00"));
  EXPECT_FALSE(ParsePicos("$3"));
  EXPECT_FALSE(ParsePicos(""));
  EXPECT_EQ(PicosText(*ParsePicos("18.0066386184")), "18.0066386184");
  EXPECT_EQ(PicosText(*ParsePicos("-3")), "-3.00");
  EXPECT_EQ(*ParsePicos("1e7"), static_cast<Picos>(10000000) * 1000000000000LL);
  EXPECT_EQ(*ParsePicos("0e400"), 0) << "zero at any scale";
  EXPECT_FALSE(ParsePicos("1e30")) << "beyond 10^20 units";
  EXPECT_FALSE(ParsePicos("1e400"));
  EXPECT_EQ(*ParsePicos("123456789012345678901234567890e-20"), static_cast<Picos>(123456789012345678LL) * 10000)
      << "eighteen significant digits are kept";
  // Whether the reading dropped digits is said, so an import can report it.
  bool rounded = true;
  EXPECT_EQ(*ParsePicos("0.123456789012", &rounded), static_cast<Picos>(123456789012));
  EXPECT_FALSE(rounded);
  EXPECT_EQ(*ParsePicos("0.1234567890125", &rounded), static_cast<Picos>(123456789012));
  EXPECT_TRUE(rounded);
  EXPECT_EQ(*ParsePicos("1.000000000000000", &rounded), static_cast<Picos>(1000000000000));
  EXPECT_FALSE(rounded) << "trailing zeros drop nothing";
  ParsePicos("123456789012345678901234567890e-20", &rounded);
  EXPECT_TRUE(rounded) << "digits past the eighteenth";
  EXPECT_EQ(*PicosToNanos(1500), 2) << "half to even";
  EXPECT_EQ(*PicosToNanos(2500), 2);
  EXPECT_EQ(*PicosToNanos(-1500), -2);
}

TEST(FocusValuesTest, DateTimesInEveryShapeBillsUse) {
  bool exact = false;
  EXPECT_EQ(*ParseFocusTime("2024-09-18T22:00:00Z", &exact), 1726696800000000);
  EXPECT_TRUE(exact);
  EXPECT_EQ(*ParseFocusTime("2024-09-18 22:00:00", &exact), 1726696800000000);
  EXPECT_FALSE(exact);
  EXPECT_EQ(*ParseFocusTime("2024-09-19T00:00:00+02:00", &exact), 1726696800000000);
  EXPECT_EQ(*ParseFocusTime("2024-09-18T22:00:00.123Z", &exact), 1726696800000000);
  EXPECT_EQ(*ParseFocusTime("2024-09-18", &exact), 1726617600000000);
  EXPECT_EQ(*ParseFocusTime("9/18/24", &exact), 1726617600000000) << "month/day/year, as spreadsheets write";
  EXPECT_FALSE(ParseFocusTime("18.09.2024", &exact));
  EXPECT_FALSE(ParseFocusTime("2024-13-01", &exact));
  EXPECT_EQ(DayOf(1726696800000000), "2024-09-18");
  EXPECT_EQ(DayOf(-1), "1969-12-31");
}

using Days = std::pair<std::string, std::string>;

TEST(FocusValuesTest, Periods) {
  EXPECT_EQ(*PeriodDays("2026-11"), Days("2026-11-01", "2026-12-01"));
  EXPECT_EQ(*PeriodDays("2026-12"), Days("2026-12-01", "2027-01-01"));
  EXPECT_EQ(*PeriodDays("2026-02-28"), Days("2026-02-28", "2026-03-01"));
  EXPECT_EQ(*PeriodDays("2026-11-01..2026-11-15"), Days("2026-11-01", "2026-11-15"));
  EXPECT_EQ(PeriodDays("November").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(PeriodDays("2026-11-15..2026-11-01").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ParseBillingDims("team, month")->size(), 2u);
  auto bad = ParseBillingDims("team,colour");
  EXPECT_NE(bad.status().message().find("'colour'"), std::string::npos);
}

constexpr const char* kHeader =
    "BilledCost,BillingAccountId,BillingAccountName,BillingCurrency,BillingPeriodEnd,BillingPeriodStart,"
    "ChargeCategory,ChargeClass,ChargeDescription,ChargePeriodEnd,ChargePeriodStart,ContractedCost,EffectiveCost,"
    "InvoiceIssuerName,ListCost,PricingQuantity,PricingUnit,ProviderName,PublisherName,ServiceCategory,ServiceName,"
    "ResourceId,ConsumedQuantity,ConsumedUnit,Tags,x_Note\n";

// One clean FOCUS 1.0 row.
std::string Row(const std::string& billed, const std::string& start, const std::string& tags,
                const std::string& category = "Usage", const std::string& unit = "GPU-Hours") {
  return billed + ",acct,Acme,USD,2024-10-01T00:00:00Z,2024-09-01T00:00:00Z," + category + ",,GPU hour," +
         start.substr(0, 11) + "23:59:59Z," + start + "," + billed + "," + billed + ",Nimbus," + billed +
         ",1,Hour,Nimbus,Nimbus,Compute,GPU,node-1,8," + unit + "," + tags + ",note\n";
}

struct Collected : RowSink {
  std::vector<std::map<std::string, std::string>> rows;
  void Add(const FocusRow& r) override {
    rows.push_back({{"team", std::string(r.team)},
                    {"owner", std::string(r.owner)},
                    {"job", std::string(r.job)},
                    {"project", std::string(r.project)},
                    {"billed", PicosText(r.billed)},
                    {"category", std::string(r.charge_category)}});
  }
};

TEST(FocusReaderTest, CleanFileHasNoIssuesAndTagsAttribute) {
  Files files;
  std::string path = files.Write(
      "clean.csv", std::string(kHeader) +
                       Row("2.5", "2024-09-02T10:00:00Z",
                           R"("{""causeway-team"": ""nlp"", ""team"": ""ignored"", ""causeway-owner"": ""ada"", )"
                           R"(""causeway-job"": ""job_1"", ""project"": ""p\""1"", ""n"": 3, ""x"": {""a"": [1]}}")") +
                       Row("1", "2024-09-02T11:00:00Z", R"("{""team"": ""vision""}")"));
  Collected sink;
  auto scan = ScanFocusFile(path, {}, {&sink});
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  EXPECT_EQ(scan->issues.total(), 0) << scan->issues.kept()[0].message;
  EXPECT_EQ(scan->version, 10);
  ASSERT_EQ(sink.rows.size(), 2u);
  EXPECT_EQ(sink.rows[0]["team"], "nlp") << "causeway-team wins over team";
  EXPECT_EQ(sink.rows[0]["owner"], "ada");
  EXPECT_EQ(sink.rows[0]["job"], "job_1");
  EXPECT_EQ(sink.rows[0]["project"], "p\"1");
  EXPECT_EQ(sink.rows[0]["billed"], "2.50");
  EXPECT_EQ(sink.rows[1]["team"], "vision");
}

TEST(FocusReaderTest, EveryDepartureIsReportedWithLineAndColumn) {
  Files files;
  std::string header = kHeader;
  header.replace(header.find("BilledCost"), 10, "billedcost");   // column case
  header.replace(header.find("x_Note"), 6, "Id");                // not x_-prefixed
  std::string text = header +
                     Row("1", "2024-09-02T10:00:00Z", "NULL") +                           // line 2: clean (NULL is null)
                     Row("1", "2024-09-02 10:00:00", "NULL") +                            // 3: no T, no Z
                     Row("1", "2024-09-02T10:00:00Z", "NULL", "usage") +                  // 4: enum case
                     Row("1", "2024-09-02T10:00:00Z", "NULL", "Refund") +                 // 5: not an allowed value
                     Row("1,000", "2024-09-02T10:00:00Z", "NULL") +                       // 6: 7 fields too many? no: splits
                     Row("1", "2024-09-02T10:00:00Z", "\"{not json\"") +                  // 7: bad Tags
                     Row("1", "yesterday", "NULL");                                       // 8: unusable
  std::string path = files.Write("messy.csv", text);
  Collected sink;
  auto scan = ScanFocusFile(path, {}, {&sink});
  ASSERT_TRUE(scan.ok()) << scan.status().ToString();
  std::map<std::string, std::vector<int64_t>> lines;  // rule -> lines
  for (const Issue& i : scan->issues.kept()) lines[i.rule].push_back(i.line);
  EXPECT_EQ(lines["column-case"], (std::vector<int64_t>{1}));
  EXPECT_EQ(lines["custom-column-prefix"], (std::vector<int64_t>{1}));
  EXPECT_EQ(lines["datetime-format"], (std::vector<int64_t>{3, 3, 8, 8})) << "ChargePeriodEnd and Start";
  EXPECT_EQ(lines["enum-case"], (std::vector<int64_t>{4}));
  EXPECT_EQ(lines["enum-value"], (std::vector<int64_t>{5}));
  EXPECT_EQ(lines["field-count"], (std::vector<int64_t>{6}));
  EXPECT_EQ(lines["json-format"], (std::vector<int64_t>{7}));
  EXPECT_EQ(lines["unusable-row"], (std::vector<int64_t>{8}));
  EXPECT_EQ(lines.count("not-nullable"), 0u);
  for (const Issue& i : scan->issues.kept()) {
    if (i.rule == "enum-case") {
      EXPECT_EQ(i.column, "ChargeCategory");
      EXPECT_NE(i.message.find("'usage' is spelled 'Usage'"), std::string::npos) << i.message;
    }
  }
  EXPECT_EQ(scan->rows, 5);
  EXPECT_EQ(scan->skipped, 2);
  // Tolerant reading normalises the case variant.
  EXPECT_EQ(sink.rows[2]["category"], "Usage");
}

TEST(FocusReaderTest, MissingMandatoryColumnsAndUnreadableHeaders) {
  Files files;
  auto scan = ScanFocusFile(files.Write("min.csv", "ChargePeriodStart,BilledCost\n2024-09-01T00:00:00Z,1\n"), {},
                            {std::make_unique<Collected>().get()});
  ASSERT_TRUE(scan.ok());
  EXPECT_EQ(scan->issues.by_rule().at("mandatory-column").count, 19) << "1.0 has 21 mandatory columns; 2 present";
  auto twice = ScanFocusFile(files.Write("twice.csv", "BilledCost,ChargePeriodStart,BilledCost\n"), {},
                             {std::make_unique<Collected>().get()});
  EXPECT_EQ(twice.status().code(), Code::kInvalidArgument);
  EXPECT_NE(twice.status().message().find("appears twice"), std::string::npos);
  auto not_focus = ScanFocusFile(files.Write("other.csv", "name,amount\nx,1\n"), {},
                                 {std::make_unique<Collected>().get()});
  EXPECT_NE(not_focus.status().message().find("not a FOCUS file"), std::string::npos);
  auto empty = ScanFocusFile(files.Write("empty.csv", ""), {}, {std::make_unique<Collected>().get()});
  EXPECT_NE(empty.status().message().find("empty"), std::string::npos);
}

// A bill of many rows, several days, teams and amounts with many decimals.
std::string GeneratedBill(int rows, std::map<std::string, Picos>* billed_by_team) {
  std::string text = kHeader;
  for (int i = 0; i < rows; ++i) {
    std::string team = "team-" + std::to_string(i % 7);
    std::string amount = std::to_string(i % 13) + "." + std::to_string(100000000000LL + i * 7919LL % 99999999999LL);
    char start[32];
    std::snprintf(start, sizeof start, "2024-09-%02dT%02d:00:00Z", 1 + (i / 24) % 28, i % 24);
    text += Row(amount, start, "\"{\"\"causeway-team\"\": \"\"" + team + "\"\"}\"");
    (*billed_by_team)[team] += *ParsePicos(amount);
  }
  return text;
}

TEST(BillTest, ASeparatorByteInAValueCannotShiftTheKey) {
  Files files;
  std::string path = files.Write(
      "sep.csv", std::string(kHeader) + Row("1", "2024-09-02T10:00:00Z", R"("{""causeway-team"": ""nlp\u001fx""}")"));
  ImportOptions o;
  o.provider = "nimbus";
  auto bill = ReadFocusBill(path, o);
  ASSERT_TRUE(bill.ok()) << bill.status().ToString();
  ASSERT_EQ(bill->rollups.size(), 1u);
  EXPECT_EQ(bill->rollups[0].team, "nlp x");
  EXPECT_EQ(bill->rollups[0].currency, "USD");
  EXPECT_EQ(bill->rollups[0].resource_id, "node-1");
}

// A row skipped after it was read (no cost) must not become the "previous
// row" a rollup key is compared with: the next row with its key is its own.
TEST(BillTest, ASkippedRowDoesNotCarryItsKeyToTheNextRow) {
  auto on = [](std::string row, const std::string& node) { return row.replace(row.find("node-1"), 6, node); };
  std::string tags = R"("{""causeway-team"": ""nlp""}")";
  Files files;
  std::string path = files.Write("skip.csv", std::string(kHeader) + Row("1", "2024-09-02T10:00:00Z", tags) +
                                                 on(Row("", "2024-09-02T10:00:00Z", tags), "node-2") +  // skipped
                                                 on(Row("2", "2024-09-02T10:00:00Z", tags), "node-2"));
  ImportOptions o;
  o.provider = "nimbus";
  o.threads = 1;
  auto bill = ReadFocusBill(path, o);
  ASSERT_TRUE(bill.ok()) << bill.status().ToString();
  EXPECT_EQ(bill->import.skipped, 1);
  std::map<std::string, std::string> billed;
  for (const BillingRollup& r : bill->rollups) billed[r.resource_id] = PicosText(r.billed);
  EXPECT_EQ(billed, (std::map<std::string, std::string>{{"node-1", "1.00"}, {"node-2", "2.00"}}));
}

TEST(BillTest, SumsAreExactAndTheSameOnAnyNumberOfThreads) {
  Files files;
  std::map<std::string, Picos> expected;
  std::string path = files.Write("bill.csv", GeneratedBill(20000, &expected));
  std::map<int, std::string> digests;
  for (int threads : {1, 2, 3}) {
    ImportOptions o;
    o.provider = "nimbus";
    o.threads = threads;
    auto bill = ReadFocusBill(path, o);
    ASSERT_TRUE(bill.ok()) << bill.status().ToString();
    EXPECT_EQ(bill->import.rows, 20000);
    std::map<std::string, Picos> got;
    Picos gpu_hours = 0;
    for (const BillingRollup& r : bill->rollups) {
      got[r.team] += r.billed;
      gpu_hours += r.gpu_hours;
    }
    EXPECT_EQ(got, expected) << threads << " threads";
    EXPECT_EQ(gpu_hours, static_cast<Picos>(8) * 20000 * 1000000000000LL);
    EXPECT_EQ(bill->import.first_day, "2024-09-01");
    EXPECT_EQ(bill->import.last_day, "2024-09-28");
    digests[threads] = bill->import.digest;
  }
  EXPECT_EQ(digests[1], digests[2]);
  EXPECT_EQ(digests[1], digests[3]);
}

BillingTotal Total(const std::string& team, const std::string& effective, const std::string& currency = "USD") {
  BillingTotal t;
  t.keys = {team};
  t.currency = currency;
  t.effective = *ParsePicos(effective);
  return t;
}

TEST(ShareTest, SplitExactIsProportionalToAnyWeights) {
  auto units = [](std::vector<Picos> v) {
    std::vector<std::string> out;
    for (Picos p : v) out.push_back(PicosText(p));
    return out;
  };
  // GPU-seconds as weights: 1500 and 1000 are 60 % and 40 %.
  EXPECT_EQ(units(SplitExact(*ParsePicos("10"), {1500, 1000})), (std::vector<std::string>{"6.00", "4.00"}));
  EXPECT_EQ(units(SplitExact(*ParsePicos("-10"), {1, 3})), (std::vector<std::string>{"-2.50", "-7.50"}));
  EXPECT_EQ(units(SplitExact(*ParsePicos("1"), {0, 0, 0})),
            (std::vector<std::string>{"0.333333334", "0.333333333", "0.333333333"}))
      << "no weight: evenly, the last nano by largest remainder";
  EXPECT_EQ(units(SplitExact(*ParsePicos("0.000000000007"), {1, 1})),
            (std::vector<std::string>{"0.000000000007", "0.00"}))
      << "picos below a nano go to the first";
}

TEST(ShareTest, UntaggedCostIsSharedExactly) {
  std::vector<BillingTotal> totals = {Total("", "100.000000000001"), Total("a", "1"), Total("b", "2"),
                                      Total("c", "0"), Total("", "7", "EUR"), Total("x", "3", "EUR")};
  auto proportional = ShareUntagged(totals, {BillingDim::kTeam}, ShareRule::kProportional);
  ASSERT_TRUE(proportional.ok()) << proportional.status().ToString();
  ASSERT_EQ(proportional->size(), 4u) << "the untagged lines are gone";
  std::map<std::string, Picos> shared;
  for (const auto& l : *proportional) shared[l.total.keys[0]] = l.shared;
  EXPECT_EQ(shared["a"] + shared["b"] + shared["c"], *ParsePicos("100.000000000001")) << "to the pico";
  EXPECT_EQ(PicosText(shared["b"]), "66.666666667") << "twice a's share, largest remainder";
  EXPECT_EQ(shared["c"], 0) << "no effective cost, no proportional share";
  EXPECT_EQ(shared["x"], *ParsePicos("7")) << "currencies are shared separately";

  auto even = ShareUntagged(totals, {BillingDim::kTeam}, ShareRule::kEven);
  ASSERT_TRUE(even.ok());
  for (const auto& l : *even) shared[l.total.keys[0]] = l.shared;
  EXPECT_EQ(shared["a"] + shared["b"] + shared["c"], *ParsePicos("100.000000000001"));
  EXPECT_EQ(PicosText(shared["c"]), "33.333333333");

  auto none = ShareUntagged(totals, {BillingDim::kTeam}, ShareRule::kNone);
  EXPECT_EQ(none->size(), totals.size());
  EXPECT_EQ(ShareUntagged(totals, {BillingDim::kTeam, BillingDim::kMonth}, ShareRule::kEven).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(ParseShareRule("fair").status().code(), Code::kInvalidArgument);
}

class BillImportTest : public ::testing::TestWithParam<std::string> {
 protected:
  BillImportTest() : db_(GetParam()) {}
  void SetUp() override {
    if (!db_.skip().empty()) GTEST_SKIP() << db_.skip();
    store_ = db_.Open();
  }
  testing::TempDb db_;
  std::unique_ptr<Store> store_;
  ManualClock clock_;
  Files files_;
};

TEST_P(BillImportTest, ImportIsIdempotentAndShowbackGroups) {
  std::map<std::string, Picos> expected;
  std::string text = GeneratedBill(3000, &expected);
  std::string path = files_.Write("bill.csv", text);
  ImportOptions o;
  o.provider = "nimbus";
  o.actor = "local:test";
  auto first = ImportFocusBill(*store_, path, o, clock_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_FALSE(first->already_imported);
  // The same charges again, gzipped: the same bill.
  auto again = ImportFocusBill(*store_, files_.WriteGzip("bill.csv.gz", text), o, clock_);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_TRUE(again->already_imported);
  EXPECT_EQ(again->import.id, first->import.id);
  // Under another provider's name it is still the same bill: the charges
  // are counted once, never twice in a team's showback.
  o.provider = "crusoe";
  auto renamed = ImportFocusBill(*store_, path, o, clock_);
  ASSERT_TRUE(renamed.ok()) << renamed.status().ToString();
  EXPECT_TRUE(renamed->already_imported);
  EXPECT_EQ(renamed->import.provider, "nimbus");
  // A provider the estate lacks is refused.
  o.known_providers = {"nimbus", "crusoe"};
  o.provider = "nimbsu";
  auto unknown = ImportFocusBill(*store_, path, o, clock_);
  EXPECT_EQ(unknown.status().code(), Code::kInvalidArgument);
  EXPECT_NE(unknown.status().message().find("unknown provider \"nimbsu\""), std::string::npos);

  auto imports = store_->ListBillingImports();
  ASSERT_TRUE(imports.ok());
  ASSERT_EQ(imports->size(), 1u);
  EXPECT_EQ((*imports)[0].rows, 3000);
  EXPECT_EQ((*imports)[0].imported_by, "local:test");
  auto rollups = store_->ListBillingRollups(first->import.id);
  ASSERT_TRUE(rollups.ok());
  EXPECT_EQ(rollups->size(), first->rollups);

  auto totals = store_->QueryBilling(BillingQuery{{BillingDim::kTeam}, "", "", "nimbus"});
  ASSERT_TRUE(totals.ok()) << totals.status().ToString();
  ASSERT_EQ(totals->size(), expected.size());
  for (const BillingTotal& t : *totals) {
    EXPECT_EQ(t.billed, expected[t.keys[0]]) << t.keys[0];
    EXPECT_EQ(t.currency, "USD");
  }
  // Days bound the query: 2024-09-01 only holds hours 0-23 of rows 0-23.
  auto day = store_->QueryBilling(BillingQuery{{BillingDim::kDay}, "2024-09-01", "2024-09-02", ""});
  ASSERT_TRUE(day.ok());
  ASSERT_EQ(day->size(), 1u);
  EXPECT_EQ((*day)[0].rows, 24 * 5) << "one bill: 24 hours in each of 5 four-week rounds";

  // The import is in the audit trail.
  bool seen = false;
  ASSERT_TRUE(store_->ScanAudit([&](const AuditEvent& e) {
                      if (e.action == "cost.import" && e.resource == "bill/" + first->import.id) seen = true;
                      return true;
                    }).ok());
  EXPECT_TRUE(seen);
}

TEST_P(BillImportTest, StrictRefusesAndStoresNothing) {
  std::string path = files_.Write("bill.csv", std::string(kHeader) + Row("1", "2024-09-02 10:00:00", "NULL"));
  ImportOptions o;
  o.provider = "nimbus";
  o.strict = true;
  auto r = ImportFocusBill(*store_, path, o, clock_);
  ASSERT_EQ(r.status().code(), Code::kInvalidArgument);
  ASSERT_EQ(r.status().diagnostics().size(), 2u);
  for (const Diagnostic& d : r.status().diagnostics()) {
    EXPECT_EQ(d.line, 2);
    EXPECT_NE(d.message.find("[datetime-format]"), std::string::npos) << d.message;
  }
  EXPECT_EQ(r.status().diagnostics()[1].field, "ChargePeriodStart");
  EXPECT_TRUE(store_->ListBillingImports()->empty());
  o.strict = false;
  auto tolerant = ImportFocusBill(*store_, path, o, clock_);
  ASSERT_TRUE(tolerant.ok());
  EXPECT_EQ(tolerant->import.issues, 2);
}

Timestamp At(const std::string& text) {
  bool exact = false;
  return FromUnixMicros(*ParseFocusTime(text, &exact));
}

// Jobs with attempts, written as the scheduler writes them.
void AddJobWithAttempt(Store& store, const std::string& id, const std::string& team, const std::string& cluster,
                       int gpus, const std::string& start, const std::string& end, JobState state,
                       const std::string& flavor = "H100", bool reserved = false) {
  JobRecord j;
  j.id = id;
  j.name = id;
  j.team = team;
  j.owner = team + "-owner";
  j.state = state;
  j.spec_yaml = "run: x";
  j.spec_json = "{}";
  j.created_at = j.updated_at = At(start);
  Attempt a;
  a.job_id = id;
  a.number = 1;
  a.cluster = cluster;
  a.state = state == JobState::kSucceeded ? "succeeded" : "preempted";
  a.started_at = At(start);
  a.ended_at = At(end);
  a.flavor = flavor;
  a.reserved = reserved;
  a.gpus = gpus;
  a.price_micros = 2300000;
  ASSERT_TRUE(store.Write([&](WriteTx& tx) -> Status {
                       RETURN_IF_ERROR(tx.InsertJob(j));
                       RETURN_IF_ERROR(tx.PutAttempt(a));
                       AuditEvent e;
                       e.time = j.created_at;
                       e.actor = "test";
                       e.action = "job.submit";
                       e.resource = "job/" + id;
                       return tx.AppendAudit(e);
                     }).ok());
}

TEST_P(BillImportTest, ReconcileFlagsEachKindOfDifferenceAndExportPassesStrict) {
  auto estate = providers::ParseEstate(DefaultEstateYaml(), "estate");
  ASSERT_TRUE(estate.ok());
  // 8 GPUs on nebius across midnight: 4 hours on each of two days.
  AddJobWithAttempt(*store_, "job_a", "nlp", "nebius-eu-h200", 8, "2026-11-02T20:00:00Z", "2026-11-03T04:00:00Z",
                    JobState::kSucceeded);
  // On coreweave, which sent no bill.
  AddJobWithAttempt(*store_, "job_b", "vision", "coreweave-us-h100", 2, "2026-11-02T10:00:00Z",
                    "2026-11-02T11:30:00Z", JobState::kFailed);
  std::string bill = "ChargePeriodStart,BilledCost,EffectiveCost,ConsumedQuantity,ConsumedUnit\n"
                     "2026-11-02T00:00:00Z,73.6,73.6,32,GPU-Hours\n"   // matches
                     "2026-11-03T00:00:00Z,92,92,40,GPU-Hours\n"       // 8 more than used
                     "2026-11-04T00:00:00Z,36.8,36.8,16,GPU-Hours\n";  // nothing ran
  ImportOptions o;
  o.provider = "nebius";
  ASSERT_TRUE(ImportFocusBill(*store_, files_.Write("nebius.csv", bill), o, clock_).ok());

  auto lines = Reconcile(*store_, *estate, "2026-11-01", "2026-12-01", 5, At("2026-11-20T00:00:00Z"));
  ASSERT_TRUE(lines.ok()) << lines.status().ToString();
  std::map<std::string, ReconcileLine> by;
  for (const auto& l : *lines) by[l.provider + " " + l.day] = l;
  ASSERT_EQ(by.size(), 4u);
  EXPECT_FALSE(by["nebius 2026-11-02"].flagged);
  EXPECT_EQ(PicosText(by["nebius 2026-11-02"].metered_gpu_hours), "32.00");
  EXPECT_EQ(PicosText(by["nebius 2026-11-02"].metered_cost), "73.60");
  EXPECT_TRUE(by["nebius 2026-11-03"].flagged);
  EXPECT_NE(by["nebius 2026-11-03"].cause.find("idle nodes"), std::string::npos);
  EXPECT_NE(by["nebius 2026-11-04"].cause.find("no attempt ran"), std::string::npos);
  EXPECT_NE(by["coreweave 2026-11-02"].cause.find("no bill"), std::string::npos);
  EXPECT_EQ(PicosText(by["coreweave 2026-11-02"].metered_gpu_hours), "3.00");

  // The export reads back, strictly, to the same cost per job.
  std::ostringstream csv;
  ASSERT_TRUE(ExportFocus(*store_, *estate, "2026-11-01", "2026-12-01", At("2026-11-20T00:00:00Z"), csv).ok());
  ImportOptions strict;
  strict.provider = "causeway-export";
  strict.strict = true;
  auto back = ImportFocusBill(*store_, files_.Write("export.csv", csv.str()), strict, clock_);
  ASSERT_TRUE(back.ok()) << back.status().ToString() << "\n" << csv.str();
  EXPECT_EQ(back->import.rows, 3) << "job_a on two days, job_b on one";
  auto per_job = store_->QueryBilling(BillingQuery{{BillingDim::kJob}, "", "", "causeway-export"});
  ASSERT_TRUE(per_job.ok());
  ASSERT_EQ(per_job->size(), 2u);
  EXPECT_EQ((*per_job)[0].keys[0], "job_a");
  EXPECT_EQ(PicosText((*per_job)[0].billed), "147.20") << "64 GPU-hours at 2.30";
  EXPECT_EQ(PicosText((*per_job)[1].billed), "6.90");

  // Waste: job_b's preempted attempt; an unused commitment on another bill.
  std::string unused = "ChargePeriodStart,BilledCost,EffectiveCost,CommitmentDiscountStatus\n"
                       "2026-11-05T00:00:00Z,0,120.5,Unused\n2026-11-05T00:00:00Z,0,10,Used\n";
  o.provider = "nebius-commitments";
  ASSERT_TRUE(ImportFocusBill(*store_, files_.Write("unused.csv", unused), o, clock_).ok());
  auto waste = Waste(*store_, *estate, "2026-11-01", "2026-12-01", At("2026-11-20T00:00:00Z"));
  ASSERT_TRUE(waste.ok()) << waste.status().ToString();
  ASSERT_EQ(waste->teams.size(), 1u);
  EXPECT_EQ(waste->teams[0].team, "vision");
  EXPECT_EQ(waste->teams[0].failed_attempts, 1);
  EXPECT_EQ(waste->teams[0].failed_gpu_seconds, 2 * 5400);
  EXPECT_EQ(waste->teams[0].failed_cost_micros, 6900000);
  ASSERT_EQ(waste->unused_commitments.size(), 1u);
  EXPECT_EQ(PicosText(waste->unused_commitments[0].second), "120.50");
}

// A per-node export with no attribution (as CoreWeave's): each node's
// charges of a day go to the jobs that ran on its cluster that day, by
// GPU-seconds, exactly; what nobody ran on stays untagged.
TEST_P(BillImportTest, UntaggedNodeChargesAreAllocatedToTheJobsThatRanThere) {
  auto estate = providers::ParseEstate(DefaultEstateYaml(), "estate");
  ASSERT_TRUE(estate.ok());
  for (Cluster& c : estate->clusters) {
    if (c.name == "coreweave-us-h100") c.bill_resources = {"cw-node-*"};
  }
  ASSERT_NE(ClusterOfBillResource(*estate, "coreweave", "cw-node-07"), nullptr);
  EXPECT_EQ(ClusterOfBillResource(*estate, "coreweave", "coreweave-us-h100")->name, "coreweave-us-h100");
  EXPECT_EQ(ClusterOfBillResource(*estate, "nebius", "cw-node-07"), nullptr) << "another provider's node";
  EXPECT_EQ(ClusterOfBillResource(*estate, "coreweave", "storage-bucket"), nullptr);

  // 48 and 24 GPU-hours on 2026-11-02: shares of 2/3 and 1/3.
  AddJobWithAttempt(*store_, "job_a", "nlp", "coreweave-us-h100", 8, "2026-11-02T00:00:00Z", "2026-11-02T06:00:00Z",
                    JobState::kSucceeded);
  AddJobWithAttempt(*store_, "job_b", "vision", "coreweave-us-h100", 2, "2026-11-02T10:00:00Z",
                    "2026-11-02T22:00:00Z", JobState::kSucceeded);
  std::string bill =
      "ChargePeriodStart,BilledCost,EffectiveCost,ConsumedQuantity,ConsumedUnit,ResourceId,Tags\n"
      "2026-11-02T00:00:00Z,100,100,80,GPU-Hours,cw-node-01,\n"
      "2026-11-02T00:00:00Z,0,0,9,GPU-Hours,cw-node-02,\n"                      // usage only
      "2026-11-03T00:00:00Z,50,50,40,GPU-Hours,cw-node-01,\n"                    // nothing ran
      "2026-11-02T00:00:00Z,7,7,0,GPU-Hours,storage-bucket,\n"                   // not a node
      "2026-11-02T00:00:00Z,11,11,4,GPU-Hours,cw-node-03,\"{\"\"causeway-team\"\":\"\"ml\"\"}\"\n";  // tagged
  ImportOptions o;
  o.provider = "coreweave";
  ASSERT_TRUE(ImportFocusBill(*store_, files_.Write("coreweave.csv", bill), o, clock_).ok());

  Timestamp now = At("2026-11-20T00:00:00Z");
  auto by_team = AllocateUntagged(*store_, *estate, BillingQuery{{BillingDim::kTeam}, "2026-11-01", "2026-12-01", ""}, now);
  ASSERT_TRUE(by_team.ok()) << by_team.status().ToString();
  std::map<std::string, BillingTotal> team;
  Picos billed = 0;
  int64_t rows = 0;
  for (const BillingTotal& t : *by_team) {
    team[t.keys[0]] = t;
    billed += t.billed;
    rows += t.rows;
  }
  ASSERT_EQ(team.size(), 4u);
  EXPECT_EQ(PicosText(team["nlp"].billed), "66.666666667");
  EXPECT_EQ(PicosText(team["vision"].billed), "33.333333333");
  EXPECT_EQ(PicosText(team["nlp"].gpu_hours), "59.333333333") << "2/3 of 80 + 9";
  EXPECT_EQ(PicosText(team["vision"].gpu_hours), "29.666666667");
  EXPECT_EQ(PicosText(team[""].billed), "57.00") << "the idle day and the bucket";
  EXPECT_EQ(PicosText(team["ml"].billed), "11.00");
  EXPECT_EQ(PicosText(billed), "168.00") << "nothing lost or made up";
  EXPECT_EQ(rows, 5);

  auto by_job = AllocateUntagged(*store_, *estate, BillingQuery{{BillingDim::kJob, BillingDim::kDay}, "", "", ""}, now);
  ASSERT_TRUE(by_job.ok());
  std::map<std::string, Picos> job;
  for (const BillingTotal& t : *by_job) job[t.keys[0] + " " + t.keys[1]] += t.effective;
  EXPECT_EQ(PicosText(job["job_a 2026-11-02"]), "66.666666667");
  EXPECT_EQ(PicosText(job[" 2026-11-03"]), "50.00");

  // Through showback: allocated first, then the rest shared.
  ShowbackRequest r;
  r.period = "2026-11";
  r.allocate = true;
  r.share = "proportional";
  auto shown = RunShowback(*store_, r, *estate, now);
  ASSERT_TRUE(shown.ok()) << shown.status().ToString();
  EXPECT_TRUE(shown->allocated);
  ASSERT_EQ(shown->lines.size(), 3u) << "nlp, vision, ml; the untagged rest shared among them";
  Picos total = 0;
  for (const ShowbackLine& line : shown->lines) total += line.total.effective + line.shared;
  EXPECT_EQ(PicosText(total), "168.00");
  EXPECT_EQ(ToJson(*shown)["allocated"], true);
}

// A reservation's unused time is cost: reported, and put on teams by a rule.
TEST_P(BillImportTest, UnusedReservationIsReportedAndSharedByRule) {
  auto estate = providers::ParseEstate(DefaultEstateYaml(), "estate");
  ASSERT_TRUE(estate.ok());
  // 8 H200s for one day at 2.00: 192 GPU-hours, 384.00 committed.
  estate->reservations = {Reservation{"day-pass", "nebius-eu-h200", "H200", 8, At("2026-11-02T00:00:00Z"),
                                      At("2026-11-03T00:00:00Z"), *Money::Parse("2.00", "USD")}};
  AddJobWithAttempt(*store_, "job_a", "nlp", "nebius-eu-h200", 8, "2026-11-02T00:00:00Z", "2026-11-02T06:00:00Z",
                    JobState::kSucceeded, "H200", true);  // 48 GPU-hours
  AddJobWithAttempt(*store_, "job_b", "vision", "nebius-eu-h200", 2, "2026-11-02T12:00:00Z", "2026-11-02T18:00:00Z",
                    JobState::kSucceeded, "H200", true);  // 12
  AddJobWithAttempt(*store_, "job_c", "vision", "nebius-eu-h200", 8, "2026-11-02T06:00:00Z", "2026-11-02T07:00:00Z",
                    JobState::kSucceeded, "H200", false);  // on demand: not the reservation's
  Timestamp now = At("2026-11-20T00:00:00Z");
  auto none = Waste(*store_, *estate, "2026-11-01", "2026-12-01", now);
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  ASSERT_EQ(none->reservations.size(), 1u);
  const ReservationUse& r = none->reservations[0];
  EXPECT_EQ(r.reserved_gpu_seconds, 192 * 3600);
  EXPECT_EQ(r.used_gpu_seconds, 60 * 3600);
  EXPECT_EQ(r.committed_micros, 384'000'000);
  EXPECT_EQ(r.unused_micros, 264'000'000) << "132 unused GPU-hours at 2.00";
  EXPECT_EQ(r.unallocated_micros, 264'000'000);

  auto by_team = [](const WasteReport& w) {
    std::map<std::string, int64_t> out;
    for (const TeamWaste& t : w.teams) out[t.team] = t.unused_reserved_share_micros;
    return out;
  };
  auto proportional = Waste(*store_, *estate, "2026-11-01", "2026-12-01", now, WasteOptions{ShareRule::kProportional});
  ASSERT_TRUE(proportional.ok());
  EXPECT_EQ(by_team(*proportional)["nlp"], 211'200'000) << "48 of the 60 used";
  EXPECT_EQ(by_team(*proportional)["vision"], 52'800'000);
  EXPECT_EQ(proportional->reservations[0].unallocated_micros, 0);
  auto even = Waste(*store_, *estate, "2026-11-01", "2026-12-01", now, WasteOptions{ShareRule::kEven});
  ASSERT_TRUE(even.ok());
  int64_t total = 0;
  for (const auto& [team, share] : by_team(*even)) total += share;
  EXPECT_EQ(total, 264'000'000) << "exact";
  EXPECT_EQ(by_team(*even)["research"], 88'000'000) << "a third each: nlp, vision, research";

  // Before the reservation started nothing was paid for.
  auto early = Waste(*store_, *estate, "2026-11-01", "2026-11-02", now);
  EXPECT_TRUE(early->reservations.empty());
  // A reservation nobody used stays unallocated under the proportional rule.
  estate->reservations.push_back(Reservation{"idle-pass", "coreweave-us-h100", "H100", 8, At("2026-11-05T00:00:00Z"),
                                             At("2026-11-06T00:00:00Z"), *Money::Parse("1.00", "USD")});
  auto with_idle = Waste(*store_, *estate, "2026-11-01", "2026-12-01", now, WasteOptions{ShareRule::kProportional});
  ASSERT_TRUE(with_idle.ok());
  ASSERT_EQ(with_idle->reservations.size(), 2u);
  EXPECT_EQ(with_idle->reservations[0].cluster, "coreweave-us-h100");
  EXPECT_EQ(with_idle->reservations[0].unallocated_micros, 192'000'000);
  EXPECT_EQ(by_team(*with_idle)["nlp"], 211'200'000) << "unchanged";
  estate->reservations.pop_back();
  // Up to now; when the ledger runs ahead of now (a simulated estate's
  // clock), up to its last attempt's end: here 18:00, 144 GPU-hours.
  auto midway = Waste(*store_, *estate, "", "", At("2026-11-02T12:00:00Z"));
  ASSERT_EQ(midway->reservations.size(), 1u);
  EXPECT_EQ(midway->reservations[0].reserved_gpu_seconds, 144 * 3600);
  EXPECT_EQ(midway->reservations[0].used_gpu_seconds, 60 * 3600);
}

// Showback from the ledger: cost per completed job, failed attempts as
// waste, providers side by side on the same GPU type.
TEST_P(BillImportTest, MeteredShowbackCountsCompletedJobsAndTheirCost) {
  auto estate = providers::ParseEstate(DefaultEstateYaml(), "estate");
  ASSERT_TRUE(estate.ok());
  // nlp: one job done in one attempt (8 GPU-h at 2.30), one failed attempt
  // (2 GPU-h); vision: one job done on another provider (4 GPU-h).
  AddJobWithAttempt(*store_, "job_a", "nlp", "nebius-eu-h200", 8, "2026-11-02T10:00:00Z", "2026-11-02T11:00:00Z",
                    JobState::kSucceeded);
  AddJobWithAttempt(*store_, "job_b", "nlp", "nebius-eu-h200", 2, "2026-11-03T10:00:00Z", "2026-11-03T11:00:00Z",
                    JobState::kFailed);
  AddJobWithAttempt(*store_, "job_c", "vision", "coreweave-us-h100", 4, "2026-11-03T23:00:00Z", "2026-11-04T00:00:00Z",
                    JobState::kSucceeded);
  Timestamp now = At("2026-11-20T00:00:00Z");
  ShowbackRequest r;
  r.by = "team";
  r.period = "2026-11";
  auto by_team = RunMeteredShowback(*store_, *estate, r, now);
  ASSERT_TRUE(by_team.ok()) << by_team.status().ToString();
  ASSERT_EQ(by_team->lines.size(), 2u);
  const MeteredLine& nlp = by_team->lines[0];
  EXPECT_EQ(nlp.keys, std::vector<std::string>{"nlp"});
  EXPECT_EQ(nlp.attempts, 2);
  EXPECT_EQ(nlp.gpu_seconds, 10 * 3600);
  EXPECT_EQ(nlp.cost_micros, 23'000'000);
  EXPECT_EQ(nlp.completed_jobs, 1);
  EXPECT_EQ(nlp.wasted_micros, 4'600'000);
  auto json = ToJson(*by_team);
  EXPECT_EQ(json["rows"][0]["cost_per_completed_job"], "23.00") << "the failed attempt is part of the price";
  EXPECT_EQ(json["rows"][1]["completed_jobs"], 1) << "counted on the day it ended (2026-11-03, not the 4th)";

  r.by = "provider,gpu,day";
  auto compare = RunMeteredShowback(*store_, *estate, r, now);
  ASSERT_TRUE(compare.ok());
  std::map<std::string, int64_t> completed;
  for (const MeteredLine& l : compare->lines) completed[l.keys[0] + " " + l.keys[2]] += l.completed_jobs;
  EXPECT_EQ(completed["coreweave 2026-11-03"], 1);
  EXPECT_EQ(completed["nebius 2026-11-02"], 1);
  r.by = "project";
  EXPECT_EQ(RunMeteredShowback(*store_, *estate, r, now).status().code(), Code::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Backends, BillImportTest, ::testing::Values("sqlite", "postgresql"),
                         [](const ::testing::TestParamInfo<std::string>& p) { return p.param; });

}  // namespace
}  // namespace causeway::cost
