// Importing bills: a FOCUS file is read once, streaming, and summed into
// rollups (per charge day and attribution: team, owner, job and project from
// the rows' Tags, resource, account, categories). Rollups, not rows, are
// stored: they are what showback, reconciliation and allocation read, and
// they keep a month of a large provider's bill small.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/records.h"
#include "causeway/store.h"
#include "cost/focus.h"

namespace causeway::cost {

// Charge days [from, to) of a period: "2026-11" (a month), "2026-11-05" (a
// day), "2026-11-01..2026-11-15" (days, end exclusive) or "" (no bound).
Result<std::pair<std::string, std::string>> PeriodDays(std::string_view period);

// "team,month" -> dimensions; kInvalidArgument names the unknown one.
Result<std::vector<BillingDim>> ParseBillingDims(std::string_view list);

// How the effective cost nobody is tagged with (unused commitments, shared
// storage, untagged resources) is shown back, as OpenCost shares idle cost:
// left as its own "(untagged)" line, or shared among the groups in
// proportion to their own effective cost, or evenly.
enum class ShareRule { kNone, kProportional, kEven };
Result<ShareRule> ParseShareRule(std::string_view text);  // none, proportional, even

struct ShowbackLine {
  BillingTotal total;
  Picos shared = 0;  // effective cost shared into this group
};

// `total` split in proportion to `weights` (each >= 0, in any unit; all
// zero: evenly), exactly: the shares add up to `total` to the pico. Shares
// are whole nanos by largest remainder; the picos below a nano go to the
// first share. |total| / 1000 times any weight must fit in 127 bits.
std::vector<Picos> SplitExact(Picos total, const std::vector<Picos>& weights);

// Shares each currency's untagged effective cost among that currency's
// groups by `rule`. Only for one attribution dimension (team, owner,
// project or job); the untagged lines are then dropped. Exact: the shares
// add up to the untagged total to the pico.
Result<std::vector<ShowbackLine>> ShareUntagged(std::vector<BillingTotal> totals, const std::vector<BillingDim>& by,
                                               ShareRule rule);

struct ImportOptions {
  std::string provider;  // the estate's provider the bill is for
  bool strict = false;   // any departure from the specification refuses the file
  std::optional<FocusVersion> version;  // unset: detected from the columns
  std::string actor;     // who imports, for the audit trail
  // What the file is called in the import's record and in every message
  // (an upload's own name rather than where the server put it); "" for its
  // path.
  std::string name;
  int threads = 0;       // parsers; 0: one per core
  // The estate's providers: when given, a bill for any other is refused
  // (a misspelt name would start a second, invisible set of charges).
  std::vector<std::string> known_providers;
};

// A file read and summed, not yet stored.
struct ReadBill {
  BillingImport import;  // id, provider, digest, counts and days filled; not imported_at/by
  std::vector<BillingRollup> rollups;
  IssueLog issues;
};

// Reads `path` (plain or gzip). Errors only for a file that cannot be read
// as FOCUS at all; departures go to issues.
Result<ReadBill> ReadFocusBill(const std::string& path, const ImportOptions& options);

struct ImportReport {
  BillingImport import;
  IssueLog issues;
  size_t rollups = 0;
  bool already_imported = false;  // the same file, nothing changed
};

// Reads and stores the file with a `cost.import` audit event, in one unit.
// Importing the same file again (same provider and bytes) changes nothing
// and says so. In strict mode a file with any issue is refused with
// kInvalidArgument whose diagnostics list the issues (up to IssueLog::kKept;
// the message gives the total); nothing is stored.
Result<ImportReport> ImportFocusBill(Store& store, const std::string& path, const ImportOptions& options,
                                     const Clock& clock);

}  // namespace causeway::cost
