#include "planning/rows.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "causeway/json_input.h"
#include "cost/csv.h"

namespace causeway::planning {

std::optional<double> Number(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  double v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

Result<std::optional<double>> Field(const Row& row, std::string_view name, const Where& w, double lo, double hi) {
  auto s = row(name);
  if (!s || s->empty()) return std::optional<double>();
  auto v = Number(*s);
  if (!v) return w.Bad(name, "expected a number, got \"" + s->substr(0, 40) + "\"");
  if (*v < lo || *v > hi) {
    std::ostringstream range;
    range << "must be between " << lo << " and " << hi;
    return w.Bad(name, range.str());
  }
  return v;
}

Status ForEachCsvRow(const std::string& path, const TraceLimits& limits,
                     const std::function<Status(const Row&, const Where&)>& fn) {
  ASSIGN_OR_RETURN(auto chunker, cost::CsvChunker::Open(path));
  std::map<std::string, size_t, std::less<>> columns;
  std::vector<cost::CsvField> fields;
  size_t rows = 0;
  bool header = true;
  while (true) {
    ASSIGN_OR_RETURN(auto chunk, chunker->Next());
    if (!chunk) break;
    cost::CsvRecords records(path, *chunk);
    while (true) {
      ASSIGN_OR_RETURN(bool more, records.Next(fields));
      if (!more) break;
      Where w{path, records.line()};
      if (fields.size() > 256) return w.Bad("record", "more than 256 fields");
      if (header) {
        for (size_t i = 0; i < fields.size(); ++i) columns[std::string(cost::Unescape(fields[i]))] = i;
        header = false;
        continue;
      }
      if (++rows > limits.max_jobs) return w.Bad("record", "more than " + std::to_string(limits.max_jobs) + " rows");
      Row row = [&](std::string_view name) -> std::optional<std::string> {
        auto c = columns.find(name);
        if (c == columns.end() || c->second >= fields.size()) return std::nullopt;
        return std::string(cost::Unescape(fields[c->second]));
      };
      RETURN_IF_ERROR(fn(row, w));
    }
  }
  if (header) return InvalidArgument(path + ": empty (expected a header line)");
  return Status::Ok();
}

Status ForEachJsonLine(const std::string& path, const TraceLimits& limits,
                       const std::function<Status(const Row&, const Where&)>& fn) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot be read");
  std::string buf(64 * 1024, '\0'), line;
  int64_t line_no = 1;
  size_t rows = 0;
  auto one = [&]() -> Status {
    Where w{path, line_no};
    if (line.find_first_not_of(" \t\r") == std::string::npos) return Status::Ok();
    if (++rows > limits.max_jobs) return w.Bad("line", "more than " + std::to_string(limits.max_jobs) + " jobs");
    auto j = ParseUntrustedJson(line, path + ":" + std::to_string(line_no), 4);
    if (!j.ok()) return j.status();
    if (!j->is_object()) return w.Bad("line", "expected a JSON object");
    Row row = [&](std::string_view key) -> std::optional<std::string> {
      const auto& v = JsonMember(*j, key);
      if (v.is_null()) return std::nullopt;
      if (v.is_string()) return v.get<std::string>();
      if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
      if (v.is_number()) return v.dump();
      return std::string("(a ") + v.type_name() + ")";
    };
    return fn(row, w);
  };
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    std::string_view got(buf.data(), static_cast<size_t>(in.gcount()));
    while (!got.empty()) {
      size_t nl = got.find('\n');
      line.append(got.substr(0, nl));
      if (line.size() > limits.max_line) {
        return Where{path, line_no}.Bad("line", "longer than " + std::to_string(limits.max_line) + " bytes");
      }
      if (nl == std::string_view::npos) break;
      RETURN_IF_ERROR(one());
      line.clear();
      ++line_no;
      got.remove_prefix(nl + 1);
    }
  }
  return one();
}

}  // namespace causeway::planning
