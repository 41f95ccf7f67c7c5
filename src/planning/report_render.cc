// The report as a table and as an HTML page (planning/report.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "planning/report.h"
#include "causeway/text.h"

namespace causeway::planning {
namespace {

using nlohmann::json;

std::string Fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

// Fixed, with thousands separators: 1,204.50.
std::string Grouped(double v, int digits) {
  std::string s = Fixed(v, digits);
  size_t start = s[0] == '-' ? 1 : 0;
  size_t dot = s.find('.');
  size_t end = dot == std::string::npos ? s.size() : dot;
  for (size_t i = end; i > start + 3; i -= 3) s.insert(i - 3, ",");
  return s;
}

std::string Seconds(double s) {
  if (s < 60) return Fixed(s, 0) + "s";
  if (s < 3600) return Fixed(s / 60, s < 600 ? 1 : 0) + "m";
  if (s < 86400) return Fixed(s / 3600, 1) + "h";
  return Fixed(s / 86400, 1) + "d";
}

// A figure's value in words, by what its name says it is.
std::string Value(const std::string& figure, double v, const std::string& currency) {
  auto ends = [&](const char* s) { return figure.size() >= std::strlen(s) && figure.ends_with(s); };
  if (ends("_s")) return Seconds(v);
  if (ends("utilization") || ends("goodput") || ends("share")) return Fixed(v * 100, 1) + "%";
  if (ends("cost") || ends("cost_per_completed_job")) return Grouped(v, 2) + " " + currency;
  if (ends("hours") || ends("gpus")) return Grouped(v, 1);
  return Grouped(v, v == std::floor(v) ? 0 : 2);
}

std::string SpreadText(const std::string& figure, const json& s, const std::string& currency) {
  double m = s.value("median", 0.0), lo = s.value("p5", 0.0), hi = s.value("p95", 0.0);
  std::string out = Value(figure, m, currency);
  if (lo != hi) out += " (" + Value(figure, lo, currency) + "–" + Value(figure, hi, currency) + ")";
  return out;
}

const char* kLabels[][2] = {
    {"jobs", "jobs"},
    {"completed", "completed"},
    {"wait_p50_s", "queue wait p50"},
    {"wait_p95_s", "queue wait p95"},
    {"wait_p99_s", "queue wait p99"},
    {"completion_p50_s", "completion time p50"},
    {"utilization", "GPU utilization (allocated)"},
    {"goodput", "goodput"},
    {"stranded_gpus", "stranded GPUs (mean)"},
    {"stranded_share", "stranded share of capacity"},
    {"reservation_utilization", "reservation utilization"},
    {"unused_reservation_cost", "unused reservation cost"},
    {"preemptions", "preemptions"},
    {"node_failures", "node failures"},
    {"borrowed_gpu_hours", "borrowed GPU-hours"},
    {"cost", "cost"},
    {"cost_per_completed_job", "cost per completed job (with unused reservations)"},
    {"refused", "refused by the scheduler"},
    {"span_hours", "span (first submission to last end), hours"},
};

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

// A figure's own name: its part after the group.
std::string FigureName(const std::string& figure) {
  size_t dot = figure.rfind('.');
  return dot == std::string::npos ? figure : figure.substr(dot + 1);
}

const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

struct Line {
  std::string name, color;
  std::vector<std::pair<double, double>> points;
};

// An SVG line chart; x and y from 0 to their maxima.
// Lines on one plot. With `log_minutes`, x is minutes on a logarithmic
// axis (1 min, 10 min, 1 h, 10 h, 1 d, 10 d), so a long tail of waits does
// not squash the rest of the curve into the left edge. The legend is below
// the plot, each name whole.
std::string LineChart(const std::string& title, const std::string& x_label, const std::string& y_label,
                      const std::vector<Line>& lines, double y_max_floor = 0, bool log_minutes = false) {
  const double w = 640, l = 60, r = 20, t = 30, b = 40;
  const double plot_h = 220;
  const int per_row = 2;
  const double legend_h = 16.0 * static_cast<double>((lines.size() + per_row - 1) / per_row);
  const double h = plot_h + legend_h + 10;
  double xmax = 0, ymax = y_max_floor;
  for (const auto& line : lines) {
    for (auto [x, y] : line.points) xmax = std::max(xmax, x), ymax = std::max(ymax, y);
  }
  if (xmax <= 0) xmax = 1;
  if (ymax <= 0) ymax = 1;
  auto X = [&](double x) {
    double share = log_minutes ? std::log10(1 + std::max(0.0, x)) / std::log10(1 + xmax) : x / xmax;
    return l + (w - l - r) * share;
  };
  const double bottom = plot_h - b;
  std::ostringstream s;
  s << "<figure><svg role=\"img\" aria-label=\"" << Escape(title) << "\" class=\"plot\" viewBox=\"0 0 " << w << " " << h
    << "\" width=\"" << w << "\" height=\"" << h << "\" xmlns=\"http://www.w3.org/2000/svg\">";
  s << "<text x=\"" << l << "\" y=\"18\" font-size=\"14\" font-weight=\"bold\">" << Escape(title) << "</text>";
  s << "<line x1=\"" << l << "\" y1=\"" << bottom << "\" x2=\"" << w - r << "\" y2=\"" << bottom << "\" stroke=\"#333\"/>";
  s << "<line x1=\"" << l << "\" y1=\"" << t << "\" x2=\"" << l << "\" y2=\"" << bottom << "\" stroke=\"#333\"/>";
  for (int k = 0; k <= 4; ++k) {
    double y = t + (bottom - t) * (1 - k / 4.0);
    s << "<text x=\"" << l - 6 << "\" y=\"" << y + 4 << "\" font-size=\"10\" text-anchor=\"end\">"
      << Grouped(ymax * k / 4, ymax < 10 ? 2 : 0) << "</text>";
  }
  std::vector<std::pair<double, std::string>> ticks;
  if (log_minutes) {
    for (auto [m, text] : {std::pair{1.0, "1 min"}, {10.0, "10 min"}, {60.0, "1 h"}, {600.0, "10 h"}, {1440.0, "1 d"},
                           {14400.0, "10 d"}, {144000.0, "100 d"}}) {
      if (m <= xmax * 1.0001) ticks.emplace_back(m, text);
    }
  } else {
    for (int k = 0; k <= 4; ++k) ticks.emplace_back(xmax * k / 4, Grouped(xmax * k / 4, xmax < 10 ? 2 : 0));
  }
  for (const auto& [x, text] : ticks) {
    s << "<line x1=\"" << Fixed(X(x), 1) << "\" y1=\"" << bottom << "\" x2=\"" << Fixed(X(x), 1) << "\" y2=\"" << bottom + 4
      << "\" stroke=\"#333\"/><text x=\"" << Fixed(X(x), 1) << "\" y=\"" << bottom + 14
      << "\" font-size=\"10\" text-anchor=\"middle\">" << Escape(text) << "</text>";
  }
  s << "<text x=\"" << (l + w - r) / 2 << "\" y=\"" << plot_h - 8 << "\" font-size=\"11\" text-anchor=\"middle\">"
    << Escape(x_label) << "</text>";
  s << "<text x=\"12\" y=\"" << (t + bottom) / 2 << "\" font-size=\"11\" text-anchor=\"middle\" transform=\"rotate(-90 12 "
    << (t + bottom) / 2 << ")\">" << Escape(y_label) << "</text>";
  int legend = 0;
  for (const auto& line : lines) {
    s << "<polyline class=\"series\" fill=\"none\" stroke-width=\"1.5\" stroke=\"" << line.color << "\" points=\"";
    for (auto [x, y] : line.points) s << Fixed(X(x), 1) << "," << Fixed(bottom - (bottom - t) * y / ymax, 1) << " ";
    s << "\"/>";
    double lx = l + (w - l) / per_row * (legend % per_row), ly = plot_h + 6 + 16.0 * (legend / per_row);
    ++legend;
    s << "<rect x=\"" << lx << "\" y=\"" << ly << "\" width=\"10\" height=\"10\" fill=\"" << line.color
      << "\"/><text x=\"" << lx + 14 << "\" y=\"" << ly + 9 << "\" font-size=\"10\">" << Escape(line.name) << "</text>";
  }
  s << "</svg></figure>\n";
  return s.str();
}

// Bars with p5-p95 whiskers.
std::string BarChart(const std::string& title, const std::vector<std::pair<std::string, json>>& bars,
                     const std::string& unit) {
  const double w = 640, h = 240, l = 70, t = 30, b = 50;
  double ymax = 0;
  for (const auto& [name, s] : bars) ymax = std::max({ymax, s.value("median", 0.0), s.value("p95", 0.0)});
  if (ymax <= 0) ymax = 1;
  std::ostringstream s;
  s << "<figure><svg role=\"img\" aria-label=\"" << Escape(title) << "\" class=\"plot\" viewBox=\"0 0 " << w << " " << h
    << "\" width=\"" << w << "\" height=\"" << h << "\" xmlns=\"http://www.w3.org/2000/svg\">";
  s << "<text x=\"" << l << "\" y=\"18\" font-size=\"14\" font-weight=\"bold\">" << Escape(title) << "</text>";
  double slot = (w - l - 20) / std::max<size_t>(bars.size(), 1);
  auto Y = [&](double v) { return h - b - (h - t - b) * v / ymax; };
  for (size_t i = 0; i < bars.size(); ++i) {
    const auto& [name, sp] = bars[i];
    double x = l + slot * static_cast<double>(i) + slot * 0.2, bw = slot * 0.6, m = sp.value("median", 0.0);
    s << "<rect class=\"series\" x=\"" << Fixed(x, 1) << "\" y=\"" << Fixed(Y(m), 1) << "\" width=\"" << Fixed(bw, 1)
      << "\" height=\"" << Fixed(h - b - Y(m), 1) << "\" fill=\"" << kColors[i % 8] << "\"/>";
    double cx = x + bw / 2;
    s << "<line x1=\"" << Fixed(cx, 1) << "\" y1=\"" << Fixed(Y(sp.value("p5", m)), 1) << "\" x2=\"" << Fixed(cx, 1)
      << "\" y2=\"" << Fixed(Y(sp.value("p95", m)), 1) << "\" stroke=\"#000\"/>";
    s << "<text x=\"" << Fixed(cx, 1) << "\" y=\"" << Fixed(Y(m) - 4, 1) << "\" font-size=\"11\" text-anchor=\"middle\">"
      << Fixed(m, 2) << " " << Escape(unit) << "</text>";
    s << "<text x=\"" << Fixed(cx, 1) << "\" y=\"" << h - b + 16 << "\" font-size=\"10\" text-anchor=\"middle\">"
      << Escape(name.substr(0, 28)) << "</text>";
  }
  s << "<line x1=\"" << l << "\" y1=\"" << h - b << "\" x2=\"" << w - 20 << "\" y2=\"" << h - b << "\" stroke=\"#333\"/>";
  s << "</svg></figure>\n";
  return s.str();
}

}  // namespace

std::string FigureLabel(const std::string& figure) {
  std::string name = FigureName(figure);
  std::string group = figure.size() > name.size() ? figure.substr(0, figure.size() - name.size() - 1) : "";
  std::string label = name;
  for (const auto& [key, words] : kLabels) {
    if (name == key) label = words;
  }
  if (label == name) std::replace(label.begin(), label.end(), '_', ' ');
  // Groups other than the whole estate count their own attempts only.
  if (name == "cost_per_completed_job" && group != "all") label = "cost per completed job (own attempts)";
  return group.empty() || group == "all" ? label : group + ": " + label;
}

std::string FigureUnit(const std::string& figure, const std::string& currency) {
  std::string name = FigureName(figure);
  auto ends = [&](const char* s) { return name.ends_with(s); };
  if (ends("_s")) return "s";
  if (ends("utilization") || ends("goodput") || ends("share")) return "%";
  if (ends("cost") || ends("cost_per_completed_job")) return currency;
  if (ends("hours")) return "GPU-hours";
  if (ends("gpus")) return "GPUs";
  return "";
}

std::string FigureText(const std::string& figure, double value, const std::string& currency) {
  return Value(FigureName(figure), value, currency);
}

double FigureResolution(const std::string& figure) {
  std::string unit = FigureUnit(figure, "$");
  if (unit == "%") return 0.001;  // a tenth of a percentage point
  if (unit == "$") return 0.005;  // a cent
  if (unit == "s") return 1;
  if (unit == "GPU-hours" || unit == "GPUs") return 0.05;
  return 0.5;  // counts
}

std::vector<std::vector<std::string>> HeadlineRows(const json& report) {
  const json& estates = report["estates"];
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> head{"figure"};
  for (const auto& e : estates) head.push_back(e.value("name", ""));
  rows.push_back(head);
  for (const auto& [key, label] : kLabels) {
    std::vector<std::string> row{label};
    bool any = false;
    for (const auto& e : estates) {
      const json& h = e["headline"];
      if (h.contains(key)) {
        row.push_back(SpreadText(key, h[key], e.value("currency", "USD")));
        any = true;
      } else {
        row.push_back("—");
      }
    }
    if (any) rows.push_back(row);
  }
  return rows;
}

namespace {

std::string HeadlineTable(const json& report, bool html) {
  std::vector<std::vector<std::string>> rows = HeadlineRows(report);
  std::ostringstream s;
  if (html) {
    s << "<table><thead><tr>";
    for (const auto& c : rows[0]) s << "<th scope=\"col\">" << Escape(c) << "</th>";
    s << "</tr></thead><tbody>";
    for (size_t i = 1; i < rows.size(); ++i) {
      s << "<tr><th scope=\"row\">" << Escape(rows[i][0]) << "</th>";
      for (size_t c = 1; c < rows[i].size(); ++c) s << "<td>" << Escape(rows[i][c]) << "</td>";
      s << "</tr>";
    }
    s << "</tbody></table>\n";
    return s.str();
  }
  std::vector<size_t> width(rows[0].size(), 0);
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) width[c] = std::max(width[c], Utf8Width(r[c]));
  }
  for (const auto& r : rows) {
    for (size_t c = 0; c < r.size(); ++c) {
      s << r[c] << std::string(width[c] - Utf8Width(r[c]) + (c + 1 < r.size() ? 2 : 0), ' ');
    }
    s << "\n";
  }
  return s.str();
}

std::string ChangeText(const json& d, const std::string& currency) {
  std::string figure = d.value("figure", "");
  double rel = d.value("relative", 0.0);
  return FigureLabel(figure) + ": " + FigureText(figure, d.value("base", 0.0), currency) + " → " +
         FigureText(figure, d.value("value", 0.0), currency) + " (" + (rel >= 0 ? "+" : "") + Fixed(rel * 100, 1) + "%)";
}

// The four plots: the wait distribution, utilization and stranded GPUs
// over time (the first seed's), and cost per completed job with its spread.
std::string Plots(const json& estates) {
  std::ostringstream s;
  std::vector<Line> waits, util, stranded;
  std::vector<std::pair<std::string, json>> cost;
  for (size_t i = 0; i < estates.size(); ++i) {
    const json& e = estates[i];
    std::string name = e.value("name", ""), color = kColors[i % 8];
    Line w{name, color, {}};
    for (const auto& p : e["wait_cdf"]) w.points.push_back({p[0].get<double>() / 60, p[1].get<double>()});
    waits.push_back(std::move(w));
    const json& series = e["series"];
    double interval_h = series.value("interval_s", 60) / 3600.0, avail = series.value("available_gpus", 0);
    Line u{name, color, {}}, st{name, color, {}};
    size_t k = 0;
    for (const auto& v : series["allocated"]) u.points.push_back({interval_h * static_cast<double>(k++), avail > 0 ? v.get<double>() / avail : 0});
    k = 0;
    for (const auto& v : series["stranded"]) st.points.push_back({interval_h * static_cast<double>(k++), v.get<double>()});
    util.push_back(std::move(u));
    stranded.push_back(std::move(st));
    if (e["headline"].contains("cost_per_completed_job")) cost.push_back({name, e["headline"]["cost_per_completed_job"]});
  }
  s << "<h2>Plots</h2>\n";
  s << LineChart("Queue wait: share of jobs started within", "wait (log scale)", "share of jobs", waits, 1.0, true);
  s << LineChart("GPU utilization over time (allocated / available)", "hours since the first submission", "utilization", util, 1.0);
  s << LineChart("Stranded GPUs over time", "hours since the first submission", "GPUs", stranded);
  s << BarChart("Cost per completed job", cost, estates.empty() ? "" : estates[0].value("currency", "USD"));
  return s.str();
}

// Per estate, each team's, GPU type's and zone's headline figures.
std::string GroupTables(const json& estates) {
  std::ostringstream s;
  s << "<h2>Per team, GPU type and zone</h2>\n";
  for (const auto& e : estates) {
    s << "<h3>" << Escape(e.value("name", "")) << "</h3><table><thead><tr><th scope=\"col\">group</th>"
         "<th scope=\"col\">jobs</th><th scope=\"col\">wait p50</th><th scope=\"col\">wait p95</th><th scope=\"col\">wait p99</th>"
         "<th scope=\"col\">utilization</th><th scope=\"col\">stranded GPUs</th>"
         "<th scope=\"col\">cost per completed job (own attempts; all: with unused reservations)</th>"
         "</tr></thead><tbody>";
    int shown = 0;
    for (const auto& [group, f] : e["groups"].items()) {
      if (shown++ >= 200) break;
      auto cell = [&](const char* k) {
        return f.contains(k) ? Escape(SpreadText(k, f[k], e.value("currency", "USD"))) : std::string("—");
      };
      s << "<tr><th scope=\"row\">" << Escape(group) << "</th><td>" << cell("jobs") << "</td><td>" << cell("wait_p50_s")
        << "</td><td>" << cell("wait_p95_s") << "</td><td>" << cell("wait_p99_s") << "</td><td>" << cell("utilization")
        << "</td><td>" << cell("stranded_gpus") << "</td><td>" << cell("cost_per_completed_job") << "</td></tr>";
    }
    s << "</tbody></table>\n";
  }
  s << "<p>A group's cost per completed job counts its own attempts. The whole estate's (the row <em>all</em>, and the "
       "headline) also counts the reservations left unused, which no group used, so it is higher than the groups' "
       "figures suggest.</p>\n";
  return s.str();
}

}  // namespace

std::string ReportTable(const json& report) {
  std::ostringstream s;
  const json& trace = report["trace"];
  s << "Trace " << trace.value("source", "") << " (" << trace.value("format", "") << "): " << trace.value("jobs", 0)
    << " GPU jobs; " << report.value("seeds", 1) << " seed(s) from " << report.value("first_seed", 1) << "; replayed in "
    << Fixed(report.value("wall_seconds", 0.0), 2) << " s\n";
  for (const auto& n : trace["notes"]) s << "  note: " << n.get<std::string>() << "\n";
  for (const auto& e : report["estates"]) {
    for (const auto& c : e["changes"]) s << "  " << e.value("name", "") << ": " << c.get<std::string>() << "\n";
  }
  s << "\n" << HeadlineTable(report, false);
  s << "(median across seeds; 5th–95th percentile in brackets where they differ)\n";
  for (const auto& e : report["estates"]) {
    for (const auto& r : e["reservations"]) {
      s << "reservation " << r.value("name", "") << " (" << r.value("gpus", 0) << " " << r.value("gpu_type", "") << " on "
        << r.value("cluster", "") << ") in " << e.value("name", "") << ": used "
        << SpreadText("utilization", r["utilization"], "") << ", unused "
        << SpreadText("cost", r["unused_cost"], e.value("currency", "USD")) << "\n";
    }
    if (e.contains("fidelity")) {
      const json& f = e["fidelity"];
      s << "replay of the recorded run on " << e.value("name", "") << ": " << f.value("jobs", 0) << " jobs, "
        << f.value("attempts", 0) << " attempts; admission order "
        << (f.value("same_order", false) ? "identical" : "DIFFERS") << "; placements "
        << (f.value("same_placements", false) ? "identical" : "DIFFER") << "\n";
      for (const auto& d : f["differences"]) s << "  " << d.get<std::string>() << "\n";
    }
    for (const auto& [reason, n] : e["refusals"].items()) {
      s << "refused in " << e.value("name", "") << ": " << n.get<int64_t>() << " jobs: " << reason << "\n";
    }
  }
  const json& diffs = report["differences"];
  if (!diffs.empty()) {
    s << "\nLargest changes against " << report["estates"][0].value("name", "") << ":\n";
    int shown = 0;
    for (const auto& d : diffs) {
      if (shown++ >= 15) break;
      s << "  " << d.value("estate", "") << ": " << ChangeText(d, report["estates"][0].value("currency", "USD")) << "\n";
    }
  }
  return s.str();
}

std::string ReportHtml(const json& report) {
  std::ostringstream s;
  const json& estates = report["estates"];
  s << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
       "<title>Causeway planning report</title><style>"
       "body{font-family:system-ui,sans-serif;margin:2rem;max-width:1100px;color:#222}"
       "table{border-collapse:collapse;margin:1rem 0}th,td{border:1px solid #ccc;padding:4px 8px;text-align:left}"
       "thead th{background:#f0f0f0}figure{margin:1rem 0}svg{max-width:100%;height:auto}"
       "</style></head><body>\n<main>\n<h1>Planning report</h1>\n";
  const json& trace = report["trace"];
  s << "<p>Trace <code>" << Escape(trace.value("source", "")) << "</code> (" << Escape(trace.value("format", "")) << "), "
    << trace.value("jobs", 0) << " GPU jobs, " << report.value("seeds", 1) << " seed(s) from "
    << report.value("first_seed", 1) << ", starting " << Escape(report.value("start", "")) << ".</p>\n<ul>";
  for (const auto& n : trace["notes"]) s << "<li>" << Escape(n.get<std::string>()) << "</li>";
  for (const auto& e : estates) {
    for (const auto& c : e["changes"]) s << "<li>" << Escape(e.value("name", "") + ": " + c.get<std::string>()) << "</li>";
  }
  s << "</ul>\n<h2>Estates</h2>\n" << HeadlineTable(report, true)
    << "<p>Median across seeds; the 5th–95th percentile in brackets where they differ.</p>\n";

  s << Plots(estates);

  s << "<h2>Reservations</h2>\n<table><thead><tr><th scope=\"col\">estate</th><th scope=\"col\">reservation</th>"
       "<th scope=\"col\">GPUs</th><th scope=\"col\">used</th><th scope=\"col\">unused cost</th></tr></thead><tbody>";
  for (const auto& e : estates) {
    for (const auto& r : e["reservations"]) {
      s << "<tr><td>" << Escape(e.value("name", "")) << "</td><td>" << Escape(r.value("name", "")) << "</td><td>"
        << r.value("gpus", 0) << " " << Escape(r.value("gpu_type", "")) << "</td><td>"
        << Escape(SpreadText("utilization", r["utilization"], "")) << "</td><td>"
        << Escape(SpreadText("cost", r["unused_cost"], e.value("currency", "USD"))) << "</td></tr>";
    }
  }
  s << "</tbody></table>\n";
  if (!report["differences"].empty()) {
    s << "<h2>Largest changes</h2>\n<ol>";
    int shown = 0;
    for (const auto& d : report["differences"]) {
      if (shown++ >= 30) break;
      s << "<li>" << Escape(d.value("estate", "") + ": " + ChangeText(d, estates[0].value("currency", "USD"))) << "</li>";
    }
    s << "</ol>\n";
  }
  s << GroupTables(estates);
  s << "</main></body></html>\n";
  return s.str();
}

}  // namespace causeway::planning
