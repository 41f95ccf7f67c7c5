// Small text helpers shared by parsers of other programs' output (Slurm,
// backend ids, configuration values) and by what is written for a shell.
#pragma once

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace causeway {

// The whole of `text` as a decimal integer, or nullopt (empty, trailing
// junk, out of range).
inline std::optional<int64_t> ParseInt(std::string_view text) {
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

// `text` cut at every `sep`; "a,,b" gives {"a", "", "b"}, "" gives {""}.
inline std::vector<std::string> Split(std::string_view text, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == sep) {
      out.emplace_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

// `text` without leading and trailing whitespace.
inline std::string Trim(std::string_view text) {
  size_t b = 0, e = text.size();
  while (b < e && (text[b] == ' ' || text[b] == '\t' || text[b] == '\n' || text[b] == '\r')) ++b;
  while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\n' || text[e - 1] == '\r')) --e;
  return std::string(text.substr(b, e - b));
}

// `text` as one bash word: single-quoted, each ' inside closed, escaped and
// reopened; safe for any bytes but NUL.
inline std::string ShellQuote(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// At most the first `max` bytes of UTF-8 `text`, never ending inside a
// character (a cut would leave invalid UTF-8 in what is stored or shown).
inline std::string Utf8Prefix(std::string_view text, size_t max) {
  if (text.size() <= max) return std::string(text);
  size_t end = max;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end));
}

// The columns `text` takes on a terminal: one per UTF-8 character ("—" is
// three bytes and one column), not one per byte.
inline size_t Utf8Width(std::string_view text) {
  size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80 ? 1 : 0;  // continuation bytes add nothing
  return n;
}

// `text` with ASCII letters in lower case (other bytes as they are).
inline std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

}  // namespace causeway
