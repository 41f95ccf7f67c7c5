// Waste: what was paid for and did no work, from three places. Attempts
// that ended without finishing the work (preempted, failed, node faults),
// from the ledger; idle time the reaper caught and cancelled, from its
// audit events; commitments nobody used, from the bills.
#pragma once

#include <string>
#include <vector>

#include "causeway/estate.h"
#include "causeway/store.h"

namespace causeway::cost {

struct TeamWaste {
  std::string team;
  int64_t failed_attempts = 0;
  int64_t failed_gpu_seconds = 0;
  int64_t failed_cost_micros = 0;  // estate currency
  int64_t reaped_jobs = 0;
  int64_t idle_gpu_seconds = 0;    // all the attempt's GPUs, for as long as it was idle
  int64_t idle_cost_micros = 0;
  int64_t dry_run_reaps = 0;       // what a dry-run policy would have cancelled
};

struct WasteReport {
  std::string currency;  // the estate's
  std::vector<TeamWaste> teams;  // by team name
  // Effective cost of rows with CommitmentDiscountStatus Unused, per bill
  // currency.
  std::vector<std::pair<std::string, Picos>> unused_commitments;
};

// Over charge days [from_day, to_day) ("" = no bound).
Result<WasteReport> Waste(const Store& store, const Estate& estate, const std::string& from_day,
                          const std::string& to_day, Timestamp now);

}  // namespace causeway::cost
