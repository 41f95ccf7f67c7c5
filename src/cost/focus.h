// FOCUS (FinOps Open Cost and Usage Specification) 1.0, 1.1 and 1.2 billing
// exports as CSV: the column rules, and a streaming reader that checks each
// row against them and hands out the fields cost needs, normalised.
//
// Real exports bend the specification (`NULL` literals, dates without `T` or
// `Z`, columns that are neither FOCUS nor prefixed `x_`, a byte-order mark,
// "usage" for "Usage"). The reader reports every such departure as an Issue
// with line and column; whether an import accepts them (tolerant) or refuses
// the file (strict) is the caller's choice.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/records.h"
#include "causeway/status.h"

namespace causeway::cost {

// 10 = 1.0, 11 = 1.1, 12 = 1.2.
using FocusVersion = int;
inline constexpr FocusVersion kFocusVersions[] = {10, 11, 12};
std::string FocusVersionName(FocusVersion v);
// "1.0", "1.1", "1.2"; nullopt for anything else.
std::optional<FocusVersion> ParseFocusVersion(std::string_view text);

// One departure from the specification, at a line (0: the file as a whole)
// and a column ("" when it is not about one).
struct Issue {
  int64_t line = 0;
  std::string column;
  std::string rule;     // stable id, e.g. "datetime-format", "enum-case"
  std::string message;  // what was found and what the specification expects
};

// Issues kept in full up to a limit, and counted by rule beyond it.
class IssueLog {
 public:
  static constexpr size_t kKept = 10000;
  // `message` is called only when the issue is kept: building texts for
  // millions of rows that repeat one departure would cost more than reading.
  template <typename MakeMessage>
  void Add(int64_t line, std::string_view column, std::string_view rule, MakeMessage&& message) {
    ++total_;
    auto it = by_rule_.find(rule);
    if (it == by_rule_.end()) it = by_rule_.emplace(std::string(rule), Summary{}).first;
    bool first = it->second.count++ == 0;
    if (!first && kept_.size() >= kKept) return;
    Issue issue{line, std::string(column), std::string(rule), message()};
    if (first) it->second.first = issue;
    if (kept_.size() < kKept) kept_.push_back(std::move(issue));
  }
  const std::vector<Issue>& kept() const { return kept_; }
  // Folds `other` in; kept issues end in line order.
  void Merge(const IssueLog& other);
  int64_t total() const { return total_; }
  // rule -> {count, first issue}
  struct Summary {
    int64_t count = 0;
    Issue first;
  };
  const std::map<std::string, Summary, std::less<>>& by_rule() const { return by_rule_; }

 private:
  std::vector<Issue> kept_;
  std::map<std::string, Summary, std::less<>> by_rule_;
  int64_t total_ = 0;
};

// Money and quantities are fixed-point, never floating point. Stored sums
// are nano-units (1e-9). Each row is read in pico-units (1e-12, 128 bits):
// bills carry prices with ten and more decimals, and rounding every row of
// millions to nanos would drift; only each rollup's sum is rounded (half to
// even), so a stored total is within half a nano per rollup of the exact one.
using Nanos = int64_t;
using causeway::Picos;
// Parses a FOCUS decimal ("12.5", "-0.0000008", "1e-3") to pico-units;
// digits past the twelfth are rounded half to even, and `*rounded` (when
// given) says whether that changed the value. nullopt if it is not a number
// or is beyond ±1e20.
std::optional<Picos> ParsePicos(std::string_view text, bool* rounded = nullptr);
// Money as spreadsheets write it: "$10,000.00 ", "(5.00)" (negative).
std::optional<Picos> ParseSpreadsheetMoney(std::string_view text);
// Exact decimal text of pico-units: at least two decimals, at most twelve,
// no trailing zeros past two ("12.50", "0.0000008").
std::string PicosText(Picos v);
// Two decimals, rounded half away from zero, for tables ("12.35").
std::string HundredthsText(Picos v);
// Micro-units (money as the ledger keeps it) and GPU-seconds as Picos.
inline Picos MicrosToPicos(int64_t micros) { return static_cast<Picos>(micros) * 1000000; }
inline Picos GpuSecondsToPicoHours(int64_t seconds) { return static_cast<Picos>(seconds) * 1000000000000LL / 3600; }
// For reports: micro-units of money exactly ("12.345678"), GPU-seconds as
// GPU-hours exactly or to the hundredth.
inline std::string MicrosText(int64_t micros) { return PicosText(MicrosToPicos(micros)); }
inline std::string GpuHoursText(int64_t gpu_seconds) { return PicosText(GpuSecondsToPicoHours(gpu_seconds)); }
inline std::string GpuHoursHundredths(int64_t gpu_seconds) { return HundredthsText(GpuSecondsToPicoHours(gpu_seconds)); }
// Picos to nanos, rounded half to even; nullopt outside int64.
std::optional<Nanos> PicosToNanos(Picos v);
// Parses an ISO 8601 date-time to Unix microseconds. `exact` is set when the
// text has the form FOCUS requires (YYYY-MM-DDTHH:mm:ssZ).
std::optional<int64_t> ParseFocusTime(std::string_view text, bool* exact);

// "YYYY-MM-DD" (UTC) of a Unix time in microseconds.
std::string DayOf(int64_t unix_us);

// The fields of one row that cost uses. Views are valid until the next
// call to FocusReader::Next. An absent or null column reads as empty (text)
// or 0 with has_* false (numbers).
struct FocusRow {
  int64_t charge_start_us = 0, charge_end_us = 0, billing_period_start_us = 0;
  std::string_view provider_name, billing_account_id, sub_account_id, region_id, resource_id, resource_type,
      service_category, service_name, charge_category, charge_class, pricing_category, commitment_discount_id,
      commitment_discount_status, consumed_unit, pricing_unit, currency, sku_id;
  Picos billed = 0, effective = 0, list = 0, contracted = 0, consumed = 0;
  bool has_consumed = false;
  // From Tags: causeway-team / causeway-owner / causeway-job /
  // causeway-project, which Causeway sets on what it launches; team, owner
  // and project fall back to the plain keys many companies tag with.
  std::string_view team, owner, job, project;
  // The FOCUS columns whose text may differ from the previous row's (the
  // previous row the same thread passed to its sink; after a skipped row,
  // all), as FocusColumnBit bits, among the watched ones. A reader that
  // keys on a few columns can skip its work when none changed.
  uint64_t changed = ~uint64_t{0};
};

// The bit of a FOCUS column (its spelling in the specification) in
// FocusRow::changed; 0 for a name that is not a FOCUS column.
uint64_t FocusColumnBit(std::string_view column);

struct FocusOptions {
  std::optional<FocusVersion> version;  // unset: detected from the columns
  int threads = 0;                      // parsers; 0: one per core
  // The columns (FocusColumnBit) whose changes the sinks look at in
  // FocusRow::changed; the others' bits are left unset, which spares
  // comparing each row's text with the previous row's.
  uint64_t watched = ~uint64_t{0};
};

// Receives the rows one parsing thread reads, in file order within each
// chunk (chunks go to threads in no fixed order).
class RowSink {
 public:
  virtual ~RowSink() = default;
  virtual void Add(const FocusRow& row) = 0;
};

struct FocusScan {
  FocusVersion version = 12;
  IssueLog issues;        // in line order
  int64_t rows = 0;       // rows handed to sinks
  int64_t skipped = 0;    // rows that could not be used (also in issues)
};

// Reads the FOCUS file at `path` (plain or gzip) with options.threads
// parsers; parser i hands its rows to sinks[i] (sinks.size() parsers are
// used, at least one). Errors only for a file that cannot be read as FOCUS
// at all (no header, a duplicated column, no ChargePeriodStart or cost, a
// broken quote); every tolerable departure goes to issues.
Result<FocusScan> ScanFocusFile(const std::string& path, const FocusOptions& options,
                                const std::vector<RowSink*>& sinks);

// How many parsers options.threads asks for.
int FocusThreads(const FocusOptions& options);

}  // namespace causeway::cost
