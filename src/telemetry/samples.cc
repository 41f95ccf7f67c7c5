#include "telemetry/samples.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <ctime>

#include "causeway/json_input.h"
#include "causeway/text.h"

namespace causeway::telemetry {
namespace {

// Timestamps past the year 9999 are refused: they are not measurements, and
// in microseconds they would overflow.
constexpr int64_t kMaxUnixMillis = 253'402'300'799'999;

Status LineError(const std::string& source, int line, const std::string& what) {
  return InvalidArgument(source + ":" + std::to_string(line) + ": " + what,
                         {Diagnostic{source, line, 0, "", what}});
}

// A sample value as whole percent (0..100, clamped), from `value` times
// `scale`. Telemetry is a measurement, not money: rounding to whole
// percent loses nothing a threshold needs.
std::optional<int> Percent(std::string_view value, int scale) {
  double v = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (ec != std::errc() || ptr != value.data() + value.size() || !std::isfinite(v)) return std::nullopt;
  // Clamped before rounding: a huge value must not overflow the conversion.
  return static_cast<int>(std::lround(std::clamp(v * scale, 0.0, 100.0)));
}

// Parses `{a="x",b="y"}` at text[i] (i at '{'); sets i past '}'.
bool Labels(std::string_view text, size_t& i, std::map<std::string, std::string>& out) {
  if (i >= text.size() || text[i] != '{') return true;
  ++i;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i < text.size() && text[i] == '}') {
      ++i;
      return true;
    }
    size_t eq = text.find('=', i);
    if (eq == std::string_view::npos || eq + 1 >= text.size() || text[eq + 1] != '"') return false;
    std::string name = Trim(text.substr(i, eq - i));
    std::string value;
    size_t j = eq + 2;
    for (; j < text.size() && text[j] != '"'; ++j) {
      if (text[j] == '\\' && j + 1 < text.size()) {
        ++j;
        value += text[j] == 'n' ? '\n' : text[j];
      } else {
        value += text[j];
      }
    }
    if (j >= text.size()) return false;
    out[name] = value;
    i = j + 1;
  }
  return false;
}

// The sample's job, attempt and GPU from its labels; false when it has no
// job label (a GPU no Causeway job holds).
bool Attribute(const std::map<std::string, std::string>& labels, const SeriesFormat& f, GpuSample& s) {
  auto job = labels.find(f.job_label);
  if (!f.job_id.empty()) {
    s.job_id = f.job_id;
  } else if (job == labels.end() || job->second.empty()) {
    return false;
  } else {
    s.job_id = job->second;
  }
  // Out-of-range numbers count as absent (0) or as no GPU (-1): never truncated.
  auto small = [](const std::string& text, int fallback) {
    auto v = ParseInt(text);
    return v && *v >= 0 && *v <= 1'000'000 ? static_cast<int>(*v) : fallback;
  };
  if (auto a = labels.find(f.attempt_label); a != labels.end()) s.attempt = small(a->second, 0);
  if (auto g = labels.find(f.gpu_label); g != labels.end()) s.gpu = small(g->second, -1);
  return true;
}

}  // namespace

Result<std::vector<GpuSample>> ParseExposition(std::string_view text, const SeriesFormat& format, Timestamp now) {
  std::vector<GpuSample> out;
  int line_no = 0;
  for (const std::string& raw : Split(text, '\n')) {
    ++line_no;
    std::string line = Trim(raw);
    if (line.empty() || line[0] == '#') continue;
    size_t i = 0;
    while (i < line.size() && line[i] != '{' && line[i] != ' ') ++i;
    std::string name = line.substr(0, i);
    auto metric = format.metrics.find(name);
    if (metric == format.metrics.end()) continue;
    std::map<std::string, std::string> labels;
    if (!Labels(line, i, labels)) return LineError("exposition", line_no, "malformed labels in '" + line + "'");
    std::vector<std::string> rest;
    for (const std::string& part : Split(Trim(std::string_view(line).substr(i)), ' ')) {
      if (!part.empty()) rest.push_back(part);
    }
    if (rest.empty() || rest.size() > 2) {
      return LineError("exposition", line_no, "expected 'name{labels} value [timestamp_ms]', got '" + line + "'");
    }
    auto percent = Percent(rest[0], metric->second);
    if (!percent) return LineError("exposition", line_no, "'" + rest[0] + "' is not a number");
    GpuSample s;
    if (!Attribute(labels, format, s)) continue;
    s.utilization_percent = *percent;
    s.time = now;
    if (rest.size() == 2) {
      auto ms = ParseInt(rest[1]);
      if (!ms || *ms < 0 || *ms > kMaxUnixMillis) {
        return LineError("exposition", line_no, "'" + rest[1] + "' is not a timestamp in milliseconds since 1970 (before the year 10000)");
      }
      s.time = FromUnixMicros(*ms * 1000);
    }
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<GpuSample>> ParseNvidiaSmiCsv(std::string_view text, const std::string& job_id, int attempt) {
  std::vector<GpuSample> out;
  int time_col = 0, index_col = 1, util_col = 2;
  int line_no = 0;
  for (const std::string& raw : Split(text, '\n')) {
    ++line_no;
    std::string line = Trim(raw);
    if (line.empty()) continue;
    std::vector<std::string> cells;
    for (const std::string& c : Split(line, ',')) cells.push_back(Trim(c));
    if (cells[0] == "timestamp") {  // the header names the columns
      for (int c = 0; c < static_cast<int>(cells.size()); ++c) {
        if (cells[c] == "timestamp") time_col = c;
        if (cells[c] == "index") index_col = c;
        if (cells[c].rfind("utilization.gpu", 0) == 0) util_col = c;
      }
      continue;
    }
    int needed = std::max({time_col, index_col, util_col});
    if (static_cast<int>(cells.size()) <= needed) {
      return LineError("nvidia-smi", line_no, "expected timestamp, index and utilization.gpu, got '" + line + "'");
    }
    // "2026/11/30 12:00:00.123"
    std::tm tm{};
    const std::string& ts = cells[time_col];
    const char* end = strptime(ts.c_str(), "%Y/%m/%d %H:%M:%S", &tm);
    if (!end) return LineError("nvidia-smi", line_no, "timestamp '" + ts + "' is not YYYY/MM/DD HH:MM:SS");
    int64_t seconds = static_cast<int64_t>(timegm(&tm));
    if (seconds < 0 || seconds > kMaxUnixMillis / 1000) {
      return LineError("nvidia-smi", line_no, "timestamp '" + ts + "' is out of range");
    }
    int64_t micros = seconds * 1000000;
    if (*end == '.') micros += static_cast<int64_t>(std::clamp(std::atof(end), 0.0, 0.999999) * 1e6);
    std::string util = cells[util_col];
    if (util.size() > 1 && util.back() == '%') util = Trim(util.substr(0, util.size() - 1));
    auto percent = Percent(util, 1);
    auto index = ParseInt(cells[index_col]);
    if (!percent || !index || *index < 0 || *index > 1'000'000) {
      return LineError("nvidia-smi", line_no, "expected a GPU index and a utilization percent, got '" + line + "'");
    }
    GpuSample s;
    s.job_id = job_id;
    s.attempt = attempt;
    s.gpu = static_cast<int>(*index);
    s.time = FromUnixMicros(micros);
    s.utilization_percent = *percent;
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::vector<GpuSample>> ParsePrometheusMatrix(const nlohmann::json& answer, const SeriesFormat& format) {
  // The answer is another program's: read through JsonMember and JsonString
  // (a const operator[] on a missing key is undefined, value() throws).
  if (JsonString(answer, "status") != "success") {
    return Unavailable("Prometheus answered: " + JsonString(answer, "error", "no success status"));
  }
  const nlohmann::json& result = JsonMember(JsonMember(answer, "data"), "result");
  if (!result.is_array()) return InvalidArgument("Prometheus answer: data.result is not a matrix");
  std::vector<GpuSample> out;
  for (const auto& series : result) {
    std::map<std::string, std::string> labels;
    const nlohmann::json& metric_labels = JsonMember(series, "metric");
    if (!metric_labels.is_object()) return InvalidArgument("Prometheus answer: a series has no metric labels");
    for (const auto& [k, v] : metric_labels.items()) {
      if (v.is_string()) labels[k] = v.get<std::string>();
    }
    auto metric = format.metrics.find(labels["__name__"]);
    int scale = metric == format.metrics.end() ? 1 : metric->second;
    GpuSample proto;
    if (!Attribute(labels, format, proto)) continue;
    const nlohmann::json& values = JsonMember(series, "values");
    if (!values.is_array()) return InvalidArgument("Prometheus answer: a series has no values");
    for (const auto& point : values) {
      if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_string()) {
        return InvalidArgument("Prometheus answer: a value is not [time, \"number\"]");
      }
      auto percent = Percent(point[1].get<std::string>(), scale);
      if (!percent) continue;  // NaN: no sample
      double seconds = point[0].get<double>();
      if (!std::isfinite(seconds) || seconds < 0 || seconds > kMaxUnixMillis / 1000.0) {
        return InvalidArgument("Prometheus answer: a sample time is out of range");
      }
      GpuSample s = proto;
      s.time = FromUnixMicros(static_cast<int64_t>(std::llround(seconds * 1e6)));
      s.utilization_percent = *percent;
      out.push_back(std::move(s));
    }
  }
  return out;
}

SampleStore::Added SampleStore::Add(const std::vector<GpuSample>& samples) {
  Added out;
  for (const GpuSample& s : samples) {
    Key key{s.job_id, s.attempt, s.gpu};
    Point p{ToUnixMicros(s.time), s.utilization_percent};
    auto it = series_.find(key);
    // Pruning folds the oldest points away, so only a sample no later than
    // the oldest kept one can be older than what was folded.
    if (it == series_.end() || p.time_us <= it->second.front().time_us) {
      if (auto f = folded_.find(key); f != folded_.end() && p.time_us <= f->second.last.time_us) {
        ++out.stale;
        continue;
      }
    }
    if (it == series_.end()) {
      if (series_.size() >= limits_.max_series || points_ >= limits_.max_points) {
        ++out.full;
        continue;
      }
      it = series_.emplace(key, std::vector<Point>{}).first;
    }
    std::vector<Point>& points = it->second;
    if (!points.empty() && p.time_us < points.back().time_us - retention_.count()) {
      ++out.stale;
      continue;
    }
    auto at = std::lower_bound(points.begin(), points.end(), p.time_us,
                               [](const Point& a, int64_t t) { return a.time_us < t; });
    if (at != points.end() && at->time_us == p.time_us) {  // the same moment again
      *at = p;
      ++out.kept;
      continue;
    }
    if (points_ >= limits_.max_points || points.size() >= max_points_per_series_) {
      ++out.full;
      continue;
    }
    points.insert(at, p);
    ++points_;
    ++out.kept;
  }
  return out;
}

void SampleStore::Integrate(const Point& a, const Point& b, Utilization& u) const {
  int64_t dt = b.time_us - a.time_us;
  if (dt <= 0 || dt > max_gap_.count()) return;  // not observed in between
  u.observed_gpu_us += dt;
  u.work_percent_us += dt * std::clamp(a.percent, 0, 100);
}

void SampleStore::Prune(Timestamp now) {
  const int64_t oldest = ToUnixMicros(now) - retention_.count();
  for (auto it = series_.begin(); it != series_.end();) {
    auto& points = it->second;
    auto keep = std::lower_bound(points.begin(), points.end(), oldest,
                                 [](const Point& a, int64_t t) { return a.time_us < t; });
    if (keep != points.begin()) {
      auto [f, fresh] = folded_.try_emplace(it->first);
      for (auto p = points.begin(); p != keep; ++p) {
        if (!fresh) Integrate(f->second.last, *p, f->second.sum);
        f->second.last = *p;
        fresh = false;
      }
    }
    points_ -= static_cast<size_t>(keep - points.begin());
    points.erase(points.begin(), keep);
    it = points.empty() ? series_.erase(it) : std::next(it);
  }
  // Utilization nobody asked for within a day is forgotten; looked for
  // hourly, not every cycle.
  constexpr int64_t kDay = 86'400'000'000, kHour = 3'600'000'000;
  if (ToUnixMicros(now) < next_sweep_us_) return;
  next_sweep_us_ = ToUnixMicros(now) + kHour;
  for (auto it = folded_.begin(); it != folded_.end();) {
    it = it->second.last.time_us < ToUnixMicros(now) - kDay && !series_.count(it->first) ? folded_.erase(it)
                                                                                        : std::next(it);
  }
}

Utilization SampleStore::AttemptUtilization(const std::string& job_id, int attempt) const {
  Utilization total;
  const Key first{job_id, attempt, INT_MIN};
  auto same = [&](const Key& k) { return k.job_id == job_id && k.attempt == attempt; };
  for (auto it = folded_.lower_bound(first); it != folded_.end() && same(it->first); ++it) {
    total += it->second.sum;
  }
  for (auto it = series_.lower_bound(first); it != series_.end() && same(it->first); ++it) {
    const std::vector<Point>& points = it->second;
    auto f = folded_.find(it->first);
    for (size_t i = 0; i < points.size(); ++i) {
      if (i > 0) Integrate(points[i - 1], points[i], total);
      else if (f != folded_.end()) Integrate(f->second.last, points[0], total);
    }
  }
  return total;
}

std::map<int, const std::vector<SampleStore::Point>*> SampleStore::Attempt(const std::string& job_id,
                                                                           int attempt) const {
  std::map<int, const std::vector<Point>*> out;
  for (auto it = series_.lower_bound(Key{job_id, attempt, INT_MIN});
       it != series_.end() && it->first.job_id == job_id && it->first.attempt == attempt; ++it) {
    out[it->first.gpu] = &it->second;
  }
  return out;
}

}  // namespace causeway::telemetry
