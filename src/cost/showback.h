// Showback over imported bills: one request shape for the CLI and the API.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "causeway/store.h"
#include "causeway/estate.h"
#include "cost/billing.h"

namespace causeway::cost {

struct ShowbackRequest {
  std::string by = "team";  // comma-separated kBillingDims names
  std::string period;       // PeriodDays syntax; "" = all
  std::string provider;     // "" = every provider
  std::string share = "none";
  // Untagged charges on a cluster's bill resources go to the jobs that ran
  // there that day (AllocateUntagged); what is left untagged is shared by
  // `share`.
  bool allocate = false;
};

struct Showback {
  std::vector<std::string> by;  // dimension names, in order
  std::string from_day, to_day;
  ShareRule rule = ShareRule::kNone;
  bool allocated = false;
  std::vector<ShowbackLine> lines;
};

// kInvalidArgument names the bad field (by, period, share). `estate` and
// `now` serve allocation (which clusters bill resources belong to, and
// attempts still running).
Result<Showback> RunShowback(const Store& store, const ShowbackRequest& request, const Estate& estate, Timestamp now);

// {"by": [...], "from_day", "to_day", "share", "rows": [{DIM: key, ...,
// "currency", "rows", "billed_cost", "effective_cost", "list_cost",
// "contracted_cost", "gpu_hours"[, "shared_cost", "total_effective_cost"]}],
// "allocated": bool}
// with amounts as exact decimal strings.
nlohmann::json ToJson(const Showback& showback);
nlohmann::json ToJson(const BillingImport& import);

}  // namespace causeway::cost
