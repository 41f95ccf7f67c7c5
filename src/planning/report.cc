#include "planning/report.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <sstream>

#include "causeway/clock.h"

namespace causeway::planning {
namespace {

using nlohmann::json;

double Share(double a, double b) { return b > 0 ? a / b : 0; }

json SpreadJson(const Spread& s) { return {{"median", s.median}, {"p5", s.p5}, {"p95", s.p95}}; }

// The figures a reader looks at first, in this order.
constexpr const char* kHeadline[] = {
    "jobs", "completed", "wait_p50_s", "wait_p95_s", "wait_p99_s", "completion_p50_s", "utilization", "goodput",
    "stranded_gpus", "stranded_share", "reservation_utilization", "unused_reservation_cost", "preemptions",
    "node_failures", "borrowed_gpu_hours", "cost", "cost_per_completed_job", "refused", "span_hours"};

// Up to 100 points of the distribution of waits: [seconds, share at most].
json WaitCdf(std::vector<int64_t> waits) {
  json out = json::array();
  if (waits.empty()) return out;
  std::sort(waits.begin(), waits.end());
  size_t n = waits.size();
  for (int k = 0; k <= 100; ++k) {
    size_t idx = std::min(n - 1, static_cast<size_t>(static_cast<double>(k) / 100.0 * static_cast<double>(n - 1)));
    out.push_back({waits[idx], static_cast<double>(idx + 1) / static_cast<double>(n)});
  }
  return out;
}

}  // namespace

std::map<std::string, double> Figures(RunResult& run) {
  std::map<std::string, double> f;
  double span = static_cast<double>(std::max<int64_t>(run.span_s, 1));
  for (auto& [name, g] : run.groups) {
    std::string p = name + ".";
    f[p + "jobs"] = static_cast<double>(g.jobs);
    f[p + "completed"] = static_cast<double>(g.completed);
    f[p + "failed"] = static_cast<double>(g.failed);
    f[p + "cancelled"] = static_cast<double>(g.cancelled);
    f[p + "never_started"] = static_cast<double>(g.never_started);
    f[p + "wait_p50_s"] = static_cast<double>(Percentile(g.waits_s, 50));
    f[p + "wait_p95_s"] = static_cast<double>(Percentile(g.waits_s, 95));
    f[p + "wait_p99_s"] = static_cast<double>(Percentile(g.waits_s, 99));
    f[p + "completion_p50_s"] = static_cast<double>(Percentile(g.completion_s, 50));
    f[p + "completion_p95_s"] = static_cast<double>(Percentile(g.completion_s, 95));
    f[p + "gpu_hours"] = g.allocated_gpu_s / 3600;
    if (g.available_gpu_s > 0) {
      f[p + "utilization"] = Share(g.allocated_gpu_s, g.available_gpu_s);
      f[p + "goodput"] = Share(g.goodput_gpu_s, g.available_gpu_s);
      f[p + "stranded_gpus"] = g.stranded_gpu_s / span;
      f[p + "stranded_share"] = Share(g.stranded_gpu_s, g.available_gpu_s);
    }
    f[p + "preemptions"] = static_cast<double>(g.preemptions);
    f[p + "node_failures"] = static_cast<double>(g.node_failures);
    f[p + "borrowed_gpu_hours"] = g.borrowed_gpu_s / 3600;
    f[p + "cost"] = static_cast<double>(g.cost_micros) / 1e6;
    f[p + "cost_per_completed_job"] = g.completed ? static_cast<double>(g.cost_micros) / 1e6 / static_cast<double>(g.completed) : 0;
  }
  double capacity = 0, used = 0;
  for (const auto& r : run.reservations) {
    std::string p = "reservation:" + r.name + ".";
    f[p + "utilization"] = Share(r.used_gpu_s, r.capacity_gpu_s);
    f[p + "committed_cost"] = static_cast<double>(r.committed_micros) / 1e6;
    f[p + "unused_cost"] = static_cast<double>(r.unused_micros) / 1e6;
    capacity += r.capacity_gpu_s;
    used += r.used_gpu_s;
  }
  if (!run.reservations.empty()) f["all.reservation_utilization"] = Share(used, capacity);
  f["all.unused_reservation_cost"] = static_cast<double>(run.unused_reservation_micros) / 1e6;
  f["all.refused"] = static_cast<double>(run.refused);
  f["all.span_hours"] = span / 3600;
  return f;
}

std::map<std::string, Spread> Summarise(std::vector<RunResult>& runs) {
  std::map<std::string, std::vector<double>> values;
  for (auto& r : runs) {
    for (const auto& [k, v] : Figures(r)) values[k].push_back(v);
  }
  std::map<std::string, Spread> out;
  for (auto& [k, v] : values) {
    // A figure missing from some seeds (a group a seed never saw) counts 0 there.
    v.resize(runs.size(), 0);
    out[k] = {Percentile(v, 50), Percentile(v, 5), Percentile(v, 95)};
  }
  return out;
}

namespace {

// One estate's part of the report: the headline, every group's figures,
// reservations, and the first seed's series, wait distribution and fidelity.
json EstateJson(EstateRuns& e, std::map<std::string, Spread>& summary) {
  json ej = {{"name", e.name}, {"currency", e.currency}, {"changes", e.changes}};
  json headline = json::object(), groups = json::object(), reservations = json::array();
  for (const char* h : kHeadline) {
    if (auto it = summary.find(std::string("all.") + h); it != summary.end()) headline[h] = SpreadJson(it->second);
  }
  for (const auto& [k, s] : summary) {
    size_t dot = k.rfind('.');
    std::string group = k.substr(0, dot), figure = k.substr(dot + 1);
    if (group != "all" && group.rfind("reservation:", 0) != 0) groups[group][figure] = SpreadJson(s);
  }
  ej["headline"] = headline;
  ej["groups"] = groups;
  if (e.runs.empty()) {
    ej["reservations"] = reservations;
    return ej;
  }
  RunResult& first = e.runs.front();
  for (const auto& r : first.reservations) {
    std::string p = "reservation:" + r.name + ".";
    reservations.push_back({{"name", r.name}, {"cluster", r.cluster}, {"gpu_type", r.gpu_type}, {"gpus", r.gpus},
                            {"utilization", SpreadJson(summary[p + "utilization"])},
                            {"committed_cost", SpreadJson(summary[p + "committed_cost"])},
                            {"unused_cost", SpreadJson(summary[p + "unused_cost"])}});
  }
  ej["reservations"] = reservations;
  ej["refusals"] = first.refusals;
  ej["series"] = {{"interval_s", first.series.interval_s}, {"available_gpus", first.series.available_gpus},
                  {"allocated", first.series.allocated}, {"stranded", first.series.stranded},
                  {"pending", first.series.pending}};
  ej["wait_cdf"] = WaitCdf(first.groups["all"].waits_s);
  ej["ticks"] = first.ticks;
  if (first.fidelity) {
    const Fidelity& f = *first.fidelity;
    ej["fidelity"] = {{"jobs", f.jobs}, {"attempts", f.attempts}, {"same_order", f.same_order},
                      {"same_placements", f.same_placements}, {"differences", f.differences}};
  }
  return ej;
}

// What changes from `base` to `other` (named `name`): the whole estate's
// figures first; among them changes of something there was before,
// largest relative change first, then what appears from nothing (a new
// reservation's figures). A change smaller than the figure's own unit can
// show (0.1 percentage point, one cent, one second, 0.05 GPU-hours, one
// job) is no change. Each row names the figure and its values in words, as
// the report's tables do. At most 60.
std::vector<json> Differences(const std::map<std::string, Spread>& base, const std::map<std::string, Spread>& other,
                              const std::string& name, const std::string& currency) {
  std::set<std::string> keys;
  for (const auto& [k, s] : base) keys.insert(k);
  for (const auto& [k, s] : other) keys.insert(k);
  std::vector<json> rows;
  for (const auto& k : keys) {
    double was = base.count(k) ? base.at(k).median : 0, is = other.count(k) ? other.at(k).median : 0;
    if (k == "all.span_hours" || std::abs(is - was) < FigureResolution(k)) continue;
    double relative = was != 0 ? (is - was) / std::abs(was) : (is > 0 ? 1.0 : -1.0);
    rows.push_back({{"estate", name}, {"figure", k}, {"label", FigureLabel(k)}, {"unit", FigureUnit(k, currency)},
                    {"base", was}, {"value", is}, {"change", is - was}, {"relative", relative},
                    {"base_text", FigureText(k, was, currency)}, {"value_text", FigureText(k, is, currency)}});
  }
  auto rank = [](const json& d) {
    bool whole = d["figure"].get<std::string>().rfind("all.", 0) == 0, from_nothing = d["base"].get<double>() == 0;
    return std::tuple(!whole, from_nothing, -std::abs(d["relative"].get<double>()));
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const json& a, const json& b) { return rank(a) < rank(b); });
  if (rows.size() > 60) rows.resize(60);
  return rows;
}

}  // namespace

json ReportJson(ReportInput& in) {
  json report;
  const Trace& t = *in.trace;
  report["trace"] = {{"source", t.source}, {"format", t.format}, {"jobs", t.jobs.size()},
                     {"cpu_only_skipped", t.cpu_only_skipped}, {"notes", t.notes}};
  report["seeds"] = in.seeds;
  report["first_seed"] = in.options.seed;
  report["start"] = FormatRfc3339(in.options.start);
  report["wall_seconds"] = in.wall_seconds;
  report["estates"] = json::array();
  std::vector<std::map<std::string, Spread>> summaries;
  for (auto& e : in.estates) {
    summaries.push_back(Summarise(e.runs));
    report["estates"].push_back(EstateJson(e, summaries.back()));
  }
  json diffs = json::array();
  for (size_t e = 1; e < summaries.size(); ++e) {
    for (auto& d : Differences(summaries[0], summaries[e], in.estates[e].name, report["estates"][e].value("currency", "USD"))) {
      diffs.push_back(std::move(d));
    }
  }
  report["differences"] = diffs;
  return report;
}

}  // namespace causeway::planning
