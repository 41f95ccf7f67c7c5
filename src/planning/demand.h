// Demand curves (`causeway plan demand`): per team, GPUs running and
// waiting over time, as Helios Earth publishes them (16 virtual clusters
// of a real GPU datacenter, one row a minute for May 2020). No jobs to
// replay, but exactly what a per-team quota and a reservation are checked
// against: how often each team's demand passes its quota and by how much,
// how much of its quota stands idle, and how much of a reservation of N
// GPUs the whole demand would use.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/status.h"
#include "planning/trace.h"

namespace causeway::planning {

struct DemandCurve {
  std::string team;
  int64_t quota = 0;              // GPUs, as the source gives it (its largest value)
  std::vector<int32_t> running;   // GPUs held, per step
  std::vector<int32_t> demand;    // running plus waiting, per step
};

struct DemandTrace {
  std::string source;
  int64_t step_s = 60;
  std::vector<DemandCurve> teams;  // by name
};

// Helios Earth: DIR holds one folder per virtual cluster, each with
// cluster_sequence_vc.csv.gz (plain or gzip). kInvalidArgument names the
// file, line and column.
Result<DemandTrace> ReadHeliosEarth(const std::string& dir, const TraceLimits& limits = {});

struct DemandOptions {
  std::map<std::string, int64_t> quotas;  // TEAM -> GPUs, in place of the source's
  std::optional<int64_t> reservation;     // GPUs reserved for the whole demand
  // Per GPU-hour; with both, the reservation size that pays for itself.
  std::optional<double> reserved_price, on_demand_price;
};

// Per team: its quota, demand (mean, p50, p95, max), the share of time
// demand passed the quota, unmet GPU-hours above it, idle quota GPU-hours,
// and the quota that would have covered 95 % of minutes. For the whole:
// the same demand figures; with a reservation, its utilization, unused
// and above-reservation GPU-hours (and costs with prices); with prices,
// the break-even size (the largest N whose last GPU is wanted at least the
// price ratio of the time) and the utilization of reservations at the
// demand's percentiles. kInvalidArgument for a quota of an unknown team.
Result<nlohmann::json> DemandReport(const DemandTrace& trace, const DemandOptions& options);
std::string DemandTable(const nlohmann::json& report);

}  // namespace causeway::planning
