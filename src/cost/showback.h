// Showback over imported bills: one request shape for the CLI and the API.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
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

// Showback from the ledger rather than the bills: what each group's
// attempts cost at the estate's prices, the jobs they completed, and the
// cost per completed job.
struct MeteredLine {
  std::vector<std::string> keys;  // one per dimension
  int64_t attempts = 0;
  int64_t gpu_seconds = 0;
  int64_t cost_micros = 0;      // every attempt's, failed and preempted ones included
  int64_t completed_jobs = 0;   // jobs whose attempt succeeded in the period, counted where it ended
  int64_t wasted_micros = 0;    // attempts that ended without finishing the work
  // Moving data (docs/datasets.md): replications charged to the dataset's
  // owner, reads across regions to the job; keeping it: replicas' storage,
  // charged to the dataset's owner by the day. Both are in the total and
  // the cost per completed job.
  int64_t data_bytes = 0;
  int64_t data_micros = 0;
  int64_t storage_micros = 0;
  // Grouped by service: the requests its endpoint answered in the period
  // (its `service.usage` events; nullopt where the grouping cannot split
  // them, such as by provider), and the seconds it had a replica running.
  std::optional<int64_t> requests;
  int64_t service_seconds = 0;
};
struct MeteredShowback {
  std::vector<std::string> by;
  std::string from_day, to_day;
  std::string currency;  // the estate's
  std::vector<MeteredLine> lines;
};
// `request.by`: comma-separated team, owner, job, service, provider,
// cluster, gpu, month, day (kInvalidArgument names another); period as for
// bills. Group by provider,gpu to compare providers on the same GPU type:
// cost per GPU-hour and per completed job side by side. Grouped by service
// (a job belongs to the service that made it as a replica; "" for other
// jobs), each service's cost per hour it ran and, grouped by nothing but
// service, team, owner, month and day, per 1,000 requests answered.
Result<MeteredShowback> RunMeteredShowback(const Store& store, const Estate& estate, const ShowbackRequest& request,
                                           Timestamp now);
// {"source": "metered", "by", "from_day", "to_day", "currency", "rows": [{DIM: key, ..., "attempts",
// "gpu_hours", "cost", "data_cost", "data_bytes", "storage_cost", "total_cost", "completed_jobs",
// "cost_per_completed_job" (of the total; null without any), "wasted_cost"[, by service: "requests",
// "hours", "cost_per_hour", "cost_per_1000_requests" (null where not known)]}]}
nlohmann::json ToJson(const MeteredShowback& showback);
nlohmann::json ToJson(const BillingImport& import);
// An import's answer: the bill, whether it was there already, its rollups,
// and the departures from the specification it tolerated (by rule, and each
// one kept).
nlohmann::json ToJson(const ImportReport& report);

}  // namespace causeway::cost
