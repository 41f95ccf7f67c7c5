// Waste: what was paid for and did no work, from four places. Attempts
// that ended without finishing the work (preempted, failed, node faults),
// from the ledger; idle time the reaper caught and cancelled, from its
// audit events; the estate's reservations against the reserved attempts
// that ran on them; commitments nobody used, from the bills.
#pragma once

#include <string>
#include <vector>

#include "causeway/estate.h"
#include "causeway/store.h"
#include "cost/billing.h"

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
  int64_t unused_reserved_share_micros = 0;  // its share of unused reservations (WasteOptions::share)
};

// The estate's reservations of one GPU type on one cluster over the period
// (up to now, or the last attempt's end if later), against the reserved
// attempts that ran on them.
struct ReservationUse {
  std::string cluster, gpu_type;
  std::vector<std::string> names;    // the estate's reservations
  int64_t reserved_gpu_seconds = 0;  // each reservation's GPUs for its time within the period
  int64_t used_gpu_seconds = 0;
  int64_t committed_micros = 0;      // what the reserved time costs, used or not
  int64_t unused_micros = 0;         // the unused part of it (at the average committed price)
  int64_t unallocated_micros = 0;    // what the share rule left on no team
};

struct WasteOptions {
  // How each reservation's unused cost is put on teams, as OpenCost shares
  // idle cost: kNone leaves it unallocated; kProportional shares it by each
  // team's reserved GPU-seconds on that reservation (none used it:
  // unallocated); kEven shares it equally among the estate's teams.
  ShareRule share = ShareRule::kNone;
};

struct WasteReport {
  std::string currency;  // the estate's
  std::vector<TeamWaste> teams;  // by team name
  std::vector<ReservationUse> reservations;  // by cluster and GPU type
  // Effective cost of rows with CommitmentDiscountStatus Unused, per bill
  // currency.
  std::vector<std::pair<std::string, Picos>> unused_commitments;
};

// Over charge days [from_day, to_day) ("" = no bound).
Result<WasteReport> Waste(const Store& store, const Estate& estate, const std::string& from_day,
                          const std::string& to_day, Timestamp now, const WasteOptions& options = {});

}  // namespace causeway::cost
