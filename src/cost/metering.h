// What the ledger metered, set against what the bills charged.
//
// Every attempt is metered as it runs: GPU-seconds times the price that
// applied (the cluster's on-demand or spot price, or a reservation's
// committed price). Here that usage is cut at UTC day boundaries so it can
// be compared with bills day by day (reconciliation) and written out as a
// FOCUS file a FinOps tool can read (export).
#pragma once

#include <string>
#include <vector>

#include "causeway/estate.h"
#include "causeway/store.h"

namespace causeway::cost {

// One attempt's share of one UTC day.
struct MeteredDay {
  std::string day;  // YYYY-MM-DD
  std::string provider, cluster;
  const MeteredAttempt* source = nullptr;  // the attempt (valid while the input lives)
  int64_t seconds = 0;                     // wall time inside the day
  int64_t gpu_seconds = 0;  // 0 for a CPU-only attempt
  int64_t cost_micros = 0;  // the attempt's GPUs (or CPUs) x seconds at its price, in the estate's currency
};

// Cuts the attempts at day boundaries, within [from, to); an attempt
// without an end counts up to `now`. The provider comes from the estate's
// cluster ("" for a cluster the estate no longer has).
Result<std::vector<MeteredDay>> MeterByDay(const std::vector<MeteredAttempt>& attempts, const Estate& estate,
                                           Timestamp from, Timestamp to, Timestamp now);

// The attempts that ran in charge days [from_day, to_day) (YYYY-MM-DD; ""
// unbounded), cut by day: `days` point into `attempts`, so keep them
// together (moving the struct keeps them valid).
struct MeteredPeriod {
  Timestamp from, to;
  std::vector<MeteredAttempt> attempts;
  std::vector<MeteredDay> days;
};
Result<MeteredPeriod> MeterPeriod(const Store& store, const Estate& estate, const std::string& from_day,
                                  const std::string& to_day, Timestamp now);

// Whether an attempt in `state` did (or is doing) the work it was given:
// succeeded, still running or admitted, or cancelled by its owner (a
// decision, not waste). Preempted, failed, node faults... did not.
inline bool AttemptFinishedTheWork(const std::string& state) {
  return state == "succeeded" || state == "running" || state == "admitted" || state == "cancelled";
}

// One provider and day: billed against metered.
struct ReconcileLine {
  std::string provider, day, currency;
  Picos billed_gpu_hours = 0, metered_gpu_hours = 0;  // pico-hours
  Picos billed_cost = 0;                              // effective cost, picos
  Picos metered_cost = 0;
  int64_t bill_rows = 0, attempts = 0;
  bool flagged = false;
  std::string cause;  // the likely cause of a flagged difference
};

// Compares GPU-hours per provider and day over charge days [from_day,
// to_day); a difference above `threshold_percent` of the larger side is
// flagged with its likely cause. Bills are matched to the estate's
// providers by the name given at import.
Result<std::vector<ReconcileLine>> Reconcile(const Store& store, const Estate& estate, const std::string& from_day,
                                             const std::string& to_day, int threshold_percent, Timestamp now);

// Writes the metered usage of charge days [from_day, to_day) as FOCUS 1.2
// CSV, one row per attempt and day, with x_Team, x_Owner, x_JobId,
// x_Attempt and x_Outcome columns and the same attribution in Tags. The
// file passes `causeway cost import --strict`.
Status ExportFocus(const Store& store, const Estate& estate, const std::string& from_day, const std::string& to_day,
                   Timestamp now, std::ostream& out);

}  // namespace causeway::cost
