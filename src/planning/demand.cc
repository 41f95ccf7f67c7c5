#include "planning/demand.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "planning/replay.h"
#include "planning/rows.h"

namespace causeway::planning {
namespace {

using nlohmann::json;

// Nearest-rank percentile of a copy.
int64_t Pct(std::vector<int32_t> v, double p) { return Percentile(v, p); }

double Mean(const std::vector<int32_t>& v) {
  double sum = 0;
  for (int32_t x : v) sum += x;
  return v.empty() ? 0 : sum / static_cast<double>(v.size());
}

// How a reservation of `n` GPUs would serve `demand`: its utilization, and
// GPU-hours unused and above it.
json Reservation(const std::vector<int32_t>& demand, int64_t n, double step_h) {
  double used = 0, unused = 0, above = 0;
  for (int32_t d : demand) {
    used += static_cast<double>(std::min<int64_t>(d, n));
    unused += static_cast<double>(std::max<int64_t>(0, n - d));
    above += static_cast<double>(std::max<int64_t>(0, d - n));
  }
  double capacity = static_cast<double>(n) * static_cast<double>(demand.size());
  return {{"gpus", n}, {"utilization", capacity > 0 ? used / capacity : 0}, {"unused_gpu_hours", unused * step_h},
          {"above_gpu_hours", above * step_h}};
}

json DemandFigures(const std::vector<int32_t>& demand) {
  return {{"mean", Mean(demand)}, {"p50", Pct(demand, 50)}, {"p95", Pct(demand, 95)}, {"max", Pct(demand, 100)}};
}

}  // namespace

Result<DemandTrace> ReadHeliosEarth(const std::string& dir, const TraceLimits& limits) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(dir)) return NotFound(dir + ": no such directory (expected Helios' Earth_vcs)");
  DemandTrace t;
  t.source = dir;
  std::vector<fs::path> teams;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_directory() && fs::exists(e.path() / "cluster_sequence_vc.csv.gz")) teams.push_back(e.path());
  }
  std::sort(teams.begin(), teams.end());
  if (teams.empty()) return InvalidArgument(dir + ": no <vc>/cluster_sequence_vc.csv.gz inside");
  if (teams.size() > 1000) return InvalidArgument(dir + ": more than 1,000 teams");
  for (const auto& team : teams) {
    DemandCurve c;
    c.team = team.filename().string();
    std::string file = (team / "cluster_sequence_vc.csv.gz").string();
    RETURN_IF_ERROR(ForEachCsvRow(file, limits, [&](const Row& r, const Where& w) -> Status {
      ASSIGN_OR_RETURN(auto running, Field(r, "running_gpu_num", w, 0, 1e7));
      ASSIGN_OR_RETURN(auto pending, Field(r, "pending_gpu_num", w, 0, 1e7));
      ASSIGN_OR_RETURN(auto quota, Field(r, "total_gpu_num", w, 0, 1e7));
      if (!running || !pending) return w.Bad("running_gpu_num", "missing (and pending_gpu_num)");
      c.running.push_back(static_cast<int32_t>(*running));
      c.demand.push_back(static_cast<int32_t>(*running + *pending));
      c.quota = std::max<int64_t>(c.quota, static_cast<int64_t>(quota.value_or(0)));
      return Status::Ok();
    }));
    t.teams.push_back(std::move(c));
  }
  return t;
}

Result<json> DemandReport(const DemandTrace& trace, const DemandOptions& o) {
  for (const auto& [team, q] : o.quotas) {
    if (std::none_of(trace.teams.begin(), trace.teams.end(), [&](const DemandCurve& c) { return c.team == team; })) {
      return InvalidArgument("--quota " + team + ": no such team in " + trace.source);
    }
  }
  double step_h = static_cast<double>(trace.step_s) / 3600;
  size_t steps = 0;
  for (const auto& c : trace.teams) steps = std::max(steps, c.demand.size());
  std::vector<int32_t> total(steps, 0);
  json teams = json::array();
  for (const auto& c : trace.teams) {
    int64_t quota = o.quotas.count(c.team) ? o.quotas.at(c.team) : c.quota;
    double over = 0, unmet = 0, idle = 0;
    for (size_t k = 0; k < c.demand.size(); ++k) {
      total[k] += c.demand[k];
      over += c.demand[k] > quota;
      unmet += static_cast<double>(std::max<int64_t>(0, c.demand[k] - quota));
      idle += static_cast<double>(std::max<int64_t>(0, quota - c.running[k]));
    }
    double n = static_cast<double>(std::max<size_t>(c.demand.size(), 1));
    teams.push_back({{"team", c.team}, {"quota", quota}, {"demand", DemandFigures(c.demand)}, {"running_mean", Mean(c.running)},
                     {"over_quota_share", over / n}, {"unmet_gpu_hours", unmet * step_h},
                     {"idle_quota_gpu_hours", idle * step_h}, {"quota_for_95_percent", Pct(c.demand, 95)}});
  }
  json report = {{"source", trace.source}, {"step_s", trace.step_s}, {"steps", steps}, {"teams", teams},
                 {"demand", DemandFigures(total)}};
  if (o.reservation) {
    json r = Reservation(total, *o.reservation, step_h);
    if (o.reserved_price && o.on_demand_price) {
      double reserved_cost = static_cast<double>(*o.reservation) * static_cast<double>(steps) * step_h * *o.reserved_price;
      r["cost"] = reserved_cost + r["above_gpu_hours"].get<double>() * *o.on_demand_price;
      r["unused_cost"] = r["unused_gpu_hours"].get<double>() * *o.reserved_price;
    }
    report["reservation"] = r;
  }
  json sizes = json::array();
  for (double p : {10.0, 25.0, 50.0, 75.0, 90.0, 100.0}) {
    json r = Reservation(total, Pct(total, p), step_h);
    r["demand_percentile"] = p;
    sizes.push_back(r);
  }
  report["reservation_sizes"] = sizes;
  if (o.reserved_price && o.on_demand_price && *o.on_demand_price > 0) {
    // The N-th reserved GPU pays for itself when demand reaches N at least
    // the price ratio of the time: the largest such N.
    double ratio = *o.reserved_price / *o.on_demand_price;
    int64_t n = ratio >= 1 ? 0 : Pct(total, std::max(0.0, (1 - ratio) * 100));
    json r = Reservation(total, n, step_h);
    r["price_ratio"] = ratio;
    report["break_even_reservation"] = r;
  }
  return report;
}

std::string DemandTable(const json& report) {
  std::ostringstream s;
  char buf[256];
  s << "Demand " << report.value("source", "") << ": " << report.value("steps", 0) << " steps of "
    << report.value("step_s", 60) << " s\n\n";
  std::snprintf(buf, sizeof buf, "%-10s %7s %8s %6s %6s %6s %11s %12s %12s %12s\n", "team", "quota", "mean", "p50", "p95",
                "max", "over quota", "unmet GPU-h", "idle GPU-h", "quota for 95%");
  s << buf;
  for (const auto& t : report["teams"]) {
    const json& d = t["demand"];
    std::snprintf(buf, sizeof buf, "%-10s %7lld %8.1f %6lld %6lld %6lld %10.1f%% %12.0f %12.0f %12lld\n",
                  t.value("team", "").substr(0, 10).c_str(), static_cast<long long>(t.value("quota", 0)),
                  d.value("mean", 0.0), static_cast<long long>(d.value("p50", 0)), static_cast<long long>(d.value("p95", 0)),
                  static_cast<long long>(d.value("max", 0)), t.value("over_quota_share", 0.0) * 100,
                  t.value("unmet_gpu_hours", 0.0), t.value("idle_quota_gpu_hours", 0.0),
                  static_cast<long long>(t.value("quota_for_95_percent", 0)));
    s << buf;
  }
  const json& d = report["demand"];
  std::snprintf(buf, sizeof buf, "\nall teams: mean %.1f, p50 %lld, p95 %lld, max %lld GPUs\n", d.value("mean", 0.0),
                static_cast<long long>(d.value("p50", 0)), static_cast<long long>(d.value("p95", 0)),
                static_cast<long long>(d.value("max", 0)));
  s << buf;
  auto line = [&](const char* what, const json& r) {
    std::snprintf(buf, sizeof buf, "%s %lld GPUs: %.1f%% used, %.0f GPU-hours unused, %.0f GPU-hours above it\n", what,
                  static_cast<long long>(r.value("gpus", 0)), r.value("utilization", 0.0) * 100,
                  r.value("unused_gpu_hours", 0.0), r.value("above_gpu_hours", 0.0));
    s << buf;
  };
  if (report.contains("reservation")) line("a reservation of", report["reservation"]);
  for (const auto& r : report["reservation_sizes"]) {
    std::string what = "  at demand's p" + std::to_string(static_cast<int>(r.value("demand_percentile", 0.0))) + ":";
    line(what.c_str(), r);
  }
  if (report.contains("break_even_reservation")) line("break-even reservation:", report["break_even_reservation"]);
  return s.str();
}

}  // namespace causeway::planning
