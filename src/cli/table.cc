#include "cli/table.h"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "causeway/text.h"

namespace causeway::cli {

size_t DisplayWidth(std::string_view text) { return Utf8Width(text); }

void Table::Print(std::ostream& out) const {
  std::vector<size_t> width(headers_.size(), 0);
  for (size_t i = 0; i < headers_.size(); ++i) width[i] = DisplayWidth(headers_[i]);
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size() && i < width.size(); ++i) width[i] = std::max(width[i], DisplayWidth(row[i]));
  }
  auto print_row = [&](const std::vector<std::string>& row, bool upper) {
    std::string line;
    for (size_t i = 0; i < width.size(); ++i) {
      std::string cell = i < row.size() ? row[i] : "";
      if (upper) std::transform(cell.begin(), cell.end(), cell.begin(), [](unsigned char c) { return std::toupper(c); });
      line += cell;
      if (i + 1 < width.size()) line += std::string(width[i] - DisplayWidth(cell) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  print_row(headers_, true);
  for (const auto& row : rows_) print_row(row, false);
}

}  // namespace causeway::cli
