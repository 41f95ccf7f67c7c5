#include "causeway/input.h"

#include <vector>

namespace causeway {

TextPosition PositionOf(std::string_view text, size_t offset) {
  TextPosition p;
  p.offset = offset;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

namespace {

// The length of the UTF-8 sequence at `i`, or 0 when it is malformed.
size_t Utf8SequenceAt(std::string_view s, size_t i) {
  auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char c = b(i);
  if (c < 0x80) return 1;
  size_t n;
  unsigned char lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;        // overlong
    if (c == 0xED) hi = 0x9F;        // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;        // overlong
    if (c == 0xF4) hi = 0x8F;        // past U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  }
  return n;
}

}  // namespace

std::optional<TextPosition> FindInvalidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t n = Utf8SequenceAt(text, i);
    if (n == 0) return PositionOf(text, i);
    i += n;
  }
  return std::nullopt;
}

Status CheckJsonNesting(std::string_view text, std::string_view what, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // whatever is escaped cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) {
        TextPosition p = PositionOf(text, i);
        return InvalidArgument(std::string(what) + " nests deeper than the limit of " + std::to_string(max_depth) +
                                   " arrays and objects",
                               {Diagnostic{std::string(what), p.line, p.column, "",
                                           "nesting deeper than " + std::to_string(max_depth) + " levels"}});
      }
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    }
  }
  return Status::Ok();
}

namespace {
bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r'; }
}  // namespace

Status CheckYamlNesting(std::string_view text, std::string_view what, int max_depth) {
  auto too_deep = [&](size_t at) {
    TextPosition p = PositionOf(text, at);
    return InvalidArgument(std::string(what) + " nests deeper than the limit of " + std::to_string(max_depth) + " levels",
                           {Diagnostic{std::string(what), p.line, p.column, "",
                                       "nesting deeper than " + std::to_string(max_depth) + " levels"}});
  };
  std::vector<size_t> indents;  // the block levels open, by indentation
  int flow = 0;                 // [ and { open
  char quote = 0;               // the quoted scalar being read: ' or ", else 0
  long block_scalar = -1;       // the indentation a block scalar's content is deeper than, else -1
  size_t i = 0;
  while (i < text.size()) {
    // A line: its indentation first.
    size_t start = i, indent = 0;
    while (i < text.size() && text[i] == ' ') ++i, ++indent;
    size_t eol = text.find('\n', i);
    if (eol == std::string_view::npos) eol = text.size();
    bool blank = i == eol || text[i] == '#' || (text[i] == '\r' && i + 1 == eol);
    if (block_scalar >= 0 && (blank || static_cast<long>(indent) > block_scalar)) {
      i = eol + 1;  // content of a | or > scalar
      continue;
    }
    block_scalar = -1;
    int depth = 0;
    if (!quote && flow == 0 && !blank) {
      while (!indents.empty() && indents.back() >= indent) indents.pop_back();
      indents.push_back(indent);
      if (indents.size() > static_cast<size_t>(max_depth)) return too_deep(i);
    }
    depth = static_cast<int>(indents.size());
    // Whether the next character starts a value: only there does a quote
    // open a quoted scalar, or (outside [ and {) a bracket a collection.
    bool value_start = true;
    for (; i < eol; ++i) {
      char c = text[i];
      if (quote == '\'') {
        if (c == '\'') {
          if (i + 1 < eol && text[i + 1] == '\'') ++i;  // '' is a quote inside
          else quote = 0, value_start = false;
        }
        continue;
      }
      if (quote == '"') {
        if (c == '\\') ++i;
        else if (c == '"') quote = 0, value_start = false;
        continue;
      }
      if (IsSpace(c)) continue;
      if (c == '#' && (i == start || IsSpace(text[i - 1]))) break;  // a comment
      if (value_start && (c == '\'' || c == '"')) {
        quote = c;
        continue;
      }
      if (c == '[' || c == '{') {
        if (flow > 0 || value_start) {
          ++flow;
          if (depth + flow > max_depth) return too_deep(i);
          value_start = true;
          continue;
        }
      } else if ((c == ']' || c == '}') && flow > 0) {
        --flow;
        value_start = false;
        continue;
      } else if (c == ',' && flow > 0) {
        value_start = true;
        continue;
      } else if ((c == '-' || c == '?' || c == ':') && (i + 1 == eol || IsSpace(text[i + 1]) || (flow > 0 && c == ':'))) {
        // "- " and "? " open a level (compact nesting: "- - x"); ": " starts a value.
        if (c != ':' && flow == 0) {
          if (++depth + flow > max_depth) return too_deep(i);
        }
        value_start = true;
        continue;
      } else if ((c == '|' || c == '>') && value_start && flow == 0) {
        block_scalar = static_cast<long>(indent);
        break;
      } else if ((c == '&' || c == '!' || c == '*') && value_start) {
        while (i + 1 < eol && !IsSpace(text[i + 1])) ++i;  // an anchor, tag or alias: a value may follow
        continue;
      }
      value_start = false;
    }
    i = eol + 1;
  }
  return Status::Ok();
}

Status CheckName(std::string_view value, std::string_view field, size_t max_bytes) {
  std::string f(field);
  if (value.empty()) return InvalidArgument("field \"" + f + "\" is empty");
  if (value.size() > max_bytes) {
    return InvalidArgument("field \"" + f + "\" is longer than " + std::to_string(max_bytes) + " bytes");
  }
  if (auto bad = FindInvalidUtf8(value)) {
    return InvalidArgument("field \"" + f + "\" is not valid UTF-8 (byte " + std::to_string(bad->offset + 1) + ")");
  }
  for (size_t i = 0; i < value.size(); ++i) {
    auto c = static_cast<unsigned char>(value[i]);
    bool c1 = c == 0xC2 && i + 1 < value.size() && static_cast<unsigned char>(value[i + 1]) <= 0x9F;  // U+0080-U+009F
    if (c < 0x20 || c == 0x7F || c1) {
      return InvalidArgument("field \"" + f + "\" contains a control character (byte " + std::to_string(i + 1) +
                             "): names may not contain NUL, newlines or other control characters");
    }
  }
  return Status::Ok();
}

}  // namespace causeway
