// A planning report: the replays of one trace on each candidate estate, one
// per seed, summarised as the median and the 5th-95th percentile across
// seeds of every figure, per estate and per team, GPU type and zone, with
// the differences from the first estate largest first. As JSON (the API and
// --json), a table (the terminal) and a self-contained HTML page whose plots
// are inline SVG (no script, no network).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planning/replay.h"

namespace causeway::planning {

struct EstateRuns {
  std::string name;         // as the reader calls it: the file, or "current + changes"
  std::string currency = "USD";
  std::vector<std::string> changes;  // what was changed on top of the base, in words
  std::vector<RunResult> runs;  // one per seed
};

// One figure across seeds.
struct Spread {
  double median = 0, p5 = 0, p95 = 0;
};

// The figures of one run, flat: "GROUP.FIGURE" (groups as in RunResult,
// reservations as "reservation:NAME"). Waits and times are seconds, costs
// in the estate's currency, utilization and shares in [0, 1].
std::map<std::string, double> Figures(RunResult& run);

// Every figure of `runs` across its seeds.
std::map<std::string, Spread> Summarise(std::vector<RunResult>& runs);

struct ReportInput {
  const Trace* trace = nullptr;
  std::vector<EstateRuns> estates;
  ReplayOptions options;  // of the first seed
  int seeds = 1;
  double wall_seconds = 0;
};

nlohmann::json ReportJson(ReportInput& in);

// A figure ("GROUP.FIGURE") as people read it: its name in words with its
// group ("team:nlp: queue wait p95"), its unit ("%", the currency, "s",
// "GPU-hours", "" for counts), its value in words ("12.5%", "3.4h",
// "1,204.50 USD"), and the smallest change its unit can show (smaller ones
// are no change).
std::string FigureLabel(const std::string& figure);
std::string FigureUnit(const std::string& figure, const std::string& currency);
std::string FigureText(const std::string& figure, double value, const std::string& currency);
double FigureResolution(const std::string& figure);
// The JSON report as a table for the terminal: the headline figures per
// estate, then the largest changes.
std::string ReportTable(const nlohmann::json& report);
// The headline figures as rows of text: a header (figure, then each
// estate's name), then one row per figure any estate has, as the table
// shows them (median, with the 5th-95th percentile where they differ).
std::vector<std::vector<std::string>> HeadlineRows(const nlohmann::json& report);
// A self-contained HTML page with the report and its plots.
std::string ReportHtml(const nlohmann::json& report);

}  // namespace causeway::planning
