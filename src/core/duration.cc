#include <cctype>
#include <string>

#include "causeway/clock.h"

namespace causeway {
namespace {
// Longer durations are refused: they would overflow microseconds past the
// year 2262, and no lifetime, window or deadline here is meant to be that long.
constexpr int64_t kMaxDurationSeconds = 100LL * 366 * 86400;
}  // namespace

Result<Micros> ParseDuration(std::string_view text) {
  auto bad = [&] {
    return InvalidArgument("invalid duration \"" + std::string(text) +
                           "\": expected a number of seconds or units like 90s, 30m, 1h30m, 2d");
  };
  if (text.empty()) return bad();
  int64_t total = 0;
  size_t pos = 0;
  bool any_unit = false;
  while (pos < text.size()) {
    int64_t n = 0;
    size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      n = n * 10 + (text[pos] - '0');
      if (n > 100'000'000'000LL) return bad();
      ++pos;
    }
    if (pos == start) return bad();
    if (pos == text.size()) {
      if (any_unit) return bad();  // "1h30" is ambiguous
      total += n;
      break;
    }
    int64_t unit;
    switch (text[pos]) {
      case 's': unit = 1; break;
      case 'm': unit = 60; break;
      case 'h': unit = 3600; break;
      case 'd': unit = 86400; break;
      default: return bad();
    }
    ++pos;
    any_unit = true;
    total += n * unit;
    if (total > kMaxDurationSeconds) {
      return InvalidArgument("duration \"" + std::string(text) + "\" is out of range: at most 100 years");
    }
  }
  if (total > kMaxDurationSeconds) {
    return InvalidArgument("duration \"" + std::string(text) + "\" is out of range: at most 100 years");
  }
  return Micros(total * 1'000'000);
}

std::string FormatDuration(Micros d) {
  int64_t s = d.count() / 1'000'000;
  if (s == 0) return "0s";
  std::string out;
  const std::pair<int64_t, char> units[] = {{86400, 'd'}, {3600, 'h'}, {60, 'm'}, {1, 's'}};
  for (auto [size, letter] : units) {
    if (s >= size) {
      out += std::to_string(s / size) + letter;
      s %= size;
    }
  }
  return out;
}

}  // namespace causeway
