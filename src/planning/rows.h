// Reading planning's inputs row by row, with bounds and errors that name
// the file, line and field: CSV with a header (plain or gzip) and JSON
// lines, each record seen through one accessor by column name or key.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "causeway/status.h"
#include "planning/trace.h"

namespace causeway::planning {

// One record: a field by column name (CSV) or key (JSON lines); nullopt
// when the record has none.
using Row = std::function<std::optional<std::string>(std::string_view)>;

// Where a record is, for its errors.
struct Where {
  const std::string& file;
  int64_t line;
  Status Bad(std::string_view field, const std::string& what) const {
    return InvalidArgument(file + ":" + std::to_string(line) + ": " + std::string(field) + ": " + what);
  }
};

// A decimal number, spaces around allowed; nullopt for anything else.
std::optional<double> Number(std::string_view s);

// A number field within [lo, hi]; nullopt (no error) when absent or empty.
Result<std::optional<double>> Field(const Row& row, std::string_view name, const Where& w, double lo, double hi);

// Every record of a CSV file with a header (at most limits.max_jobs, 256
// fields each), given to `fn` in order; the first error stops the read.
Status ForEachCsvRow(const std::string& path, const TraceLimits& limits,
                     const std::function<Status(const Row&, const Where&)>& fn);

// Every line of a JSON-lines file, each an object of at most
// limits.max_line bytes nested at most 4 deep; blank lines are skipped.
Status ForEachJsonLine(const std::string& path, const TraceLimits& limits,
                       const std::function<Status(const Row&, const Where&)>& fn);

}  // namespace causeway::planning
