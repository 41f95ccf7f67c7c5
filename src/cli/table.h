// Aligned plain-text tables for people; --json output bypasses them.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace causeway::cli {

// The columns `text` takes on a terminal (UTF-8 characters, not bytes).
size_t DisplayWidth(std::string_view text);

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void Add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  // Columns padded to their widest cell (by DisplayWidth), two spaces
  // apart, headers in capitals.
  void Print(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace causeway::cli
