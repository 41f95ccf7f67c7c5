#include "spec/yaml_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>

#include "causeway/input.h"
#include <yaml-cpp/depthguard.h>

namespace causeway::spec {

std::string JoinField(std::string_view a, std::string_view b) {
  if (a.empty()) return std::string(b);
  return std::string(a) + "." + std::string(b);
}

std::vector<DocumentSpan> DocumentSpans(std::string_view text) {
  std::vector<DocumentSpan> out;
  DocumentSpan current;
  bool content = false;  // the current document has some
  int line = 0;
  for (size_t at = 0; at <= text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(at, end - at);
    size_t line_start = at;
    ++line;
    at = end + 1;
    if (l.substr(0, 3) == "---" && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r')) {
      // A new document; what follows the marker on its line is its content.
      if (content) {
        current.end = line_start;
        out.push_back(current);
      }
      current = DocumentSpan{line_start, text.size(), line, 0, true};
      content = false;
      l.remove_prefix(3);
    }
    size_t first = l.find_first_not_of(" \t\r");
    if (first == std::string_view::npos || l[first] == '#' || l.substr(first) == "..." || content) continue;
    content = true;
    current.content_line = line;
  }
  if (content) {
    current.end = text.size();
    out.push_back(current);
  }
  return out;
}

std::string DocumentText(std::string_view text, const DocumentSpan& span, bool keep_positions) {
  std::string_view body = text.substr(span.begin, span.end - span.begin);
  if (keep_positions) {
    std::string out(static_cast<size_t>(span.first_line - 1), '\n');
    size_t at = out.size();
    out.append(body);
    if (span.marker) out.replace(at, 3, "   ");
    return out;
  }
  if (span.marker) {
    // The marker's line goes when nothing but blanks follows the marker;
    // else the marker becomes blanks, so what follows keeps its column.
    size_t nl = body.find('\n');
    std::string_view rest = body.substr(3, nl == std::string_view::npos ? std::string_view::npos : nl - 3);
    if (rest.find_first_not_of(" \t\r") == std::string_view::npos) {
      body.remove_prefix(nl == std::string_view::npos ? body.size() : nl + 1);
    } else {
      return "   " + std::string(body.substr(3));
    }
  }
  return std::string(body);
}

namespace {

// How many documents of `text` hold something, and the line where the
// second such one's content starts (0 when there is none).
std::pair<int, int> CountDocuments(std::string_view text) {
  std::vector<DocumentSpan> spans = DocumentSpans(text);
  return {static_cast<int>(spans.size()), spans.size() > 1 ? spans[1].content_line : 0};
}

// yaml-cpp's parser messages, in words a person fixing the file can act
// on; the original follows in parentheses.
std::string SyntaxInWords(const std::string& msg) {
  static const std::pair<std::string_view, std::string_view> kWords[] = {
      {"end of map not found",
       "a mapping ends where it should not: check the indentation of this line against the lines above it"},
      {"end of map flow not found", "a '{' mapping is not closed with '}'"},
      {"end of sequence not found",
       "a list ends where it should not: check the indentation of its '- ' items"},
      {"end of sequence flow not found", "a '[' list is not closed with ']'"},
      {"illegal EOF in scalar", "a quoted string is not closed: the file ends before its closing quote"},
      {"illegal map value",
       "a ':' where a value cannot start: put the value on the key's line, or quote a value that contains ': '"},
      {"illegal block entry", "a '- ' list item where a mapping is expected: check its indentation"},
      {"illegal tab when looking for indentation", "a tab in the indentation: YAML indents with spaces only"},
      {"unknown escape character", "an unknown escape in a double-quoted string: use single quotes, or write \\\\"},
      {"illegal character in scalar", "a character that cannot start a plain value (such as '@' or '`'): quote the value"},
      {"illegal flow end", "a ']' or '}' with nothing open before it"},
      {"invalid character in single-quoted string", "a character that cannot be in a single-quoted string"},
      {"the referenced anchor is not defined", "an alias (*name) refers to an anchor (&name) that is not defined"},
      {"illegal document indicator in scalar", "a '---' or '...' inside a value: quote the value"},
  };
  for (const auto& [yaml_cpp, words] : kWords) {
    if (msg.rfind(yaml_cpp, 0) == 0) return std::string(words) + " (" + msg + ")";
  }
  return msg;
}

}  // namespace

Result<YAML::Node> LoadYaml(std::string_view text, const std::string& file) {
  // yaml-cpp hands bytes through unchecked, and a string that is not UTF-8
  // cannot be written back as JSON: refuse it here, where the position is known.
  if (auto bad = FindInvalidUtf8(text)) {
    Diagnostic d{file, bad->line, bad->column, "", "invalid UTF-8 (byte " + std::to_string(bad->offset + 1) + "): the document must be UTF-8 text"};
    return InvalidArgument("malformed YAML: " + d.ToString(), {d});
  }
  // yaml-cpp recurses once per level and gives up only at 2,000 (which
  // needs megabytes of stack): bounded far lower, before it starts.
  if (Status st = CheckYamlNesting(text, file); !st.ok()) {
    Diagnostic d = st.diagnostics().front();
    d.message = "the document nests deeper than the limit of " + std::to_string(kMaxNesting) + " levels";
    return InvalidArgument("malformed YAML: " + d.ToString(), {d});
  }
  try {
    // Every document counts, so that none is dropped without a word: a
    // SkyPilot pipeline or job group is several documents separated by
    // "---" (ParseTaskFile splits them; one is expected here).
    auto [documents, second_line] = CountDocuments(text);
    if (documents > 1) {
      Diagnostic d{file, second_line, 1, "",
                   "the file holds " + std::to_string(documents) +
                       " YAML documents separated by \"---\" (a SkyPilot pipeline or job group); one job "
                       "spec is expected here (causeway submit and validate take a pipeline whole)"};
      return InvalidArgument("several documents: " + d.ToString(), {d});
    }
    YAML::Node node = YAML::Load(std::string(text));
    if (!node.IsDefined() || node.IsNull()) {
      Diagnostic d{file, 1, 1, "", "the document is empty: expected a mapping"};
      return InvalidArgument("empty document: " + d.ToString(), {d});
    }
    return node;
  } catch (const YAML::DeepRecursion& e) {
    // yaml-cpp's own bound on its recursive descent (depthguard.h).
    Diagnostic d{file, e.mark.line + 1, e.mark.column + 1, "",
                 "the document nests deeper than the limit of " + std::to_string(e.depth() - 1) + " levels"};
    return InvalidArgument("malformed YAML: " + d.ToString(), {d});
  } catch (const YAML::Exception& e) {
    Diagnostic d{file, e.mark.line + 1, e.mark.column + 1, "", "YAML syntax error: " + SyntaxInWords(e.msg)};
    return InvalidArgument("malformed YAML: " + d.ToString(), {d});
  }
}

namespace {

// Edit distance counting a swap of two neighbouring letters as one edit
// (optimal string alignment), case-insensitive: "nmae" is one edit from "name".
size_t EditDistance(std::string_view a, std::string_view b) {
  auto eq = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  };
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (eq(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && eq(a[i - 1], b[j - 2]) && eq(a[i - 2], b[j - 1])) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

bool IsQuoted(const YAML::Node& node) { return node.Tag() == "!"; }

}  // namespace

std::string ClosestMatch(std::string_view word, const std::vector<std::string_view>& candidates) {
  // The distance table is |word| x |candidate|: an unknown key a megabyte
  // long is not a misspelling worth that memory.
  if (word.size() > 64) return "";
  std::string best;
  size_t best_d = 3;
  for (auto c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best_d && d * 2 < std::max(word.size(), c.size())) {
      best_d = d;
      best = std::string(c);
    }
  }
  return best;
}

Diagnostic YamlReader::At(const YAML::Node& at, std::string_view field, std::string message) const {
  YAML::Mark m = at.Mark();
  // Nodes made by yaml-cpp itself (not from the text) carry a null mark.
  int line = m.line >= 0 ? m.line + 1 : 0;
  int col = m.column >= 0 ? m.column + 1 : 0;
  return Diagnostic{file_, line, col, std::string(field), std::move(message)};
}

void YamlReader::Error(const YAML::Node& at, std::string_view field, std::string message) {
  errors_.push_back(At(at, field, std::move(message)));
}

void YamlReader::Warning(const YAML::Node& at, std::string_view field, std::string message) {
  warnings_.push_back(At(at, field, std::move(message)));
  warnings_.back().warning = true;
}

bool YamlReader::CheckMap(const YAML::Node& node, std::string_view field, const KeySet& keys) {
  if (!node.IsMap()) {
    Error(node, field, "expected a mapping of keys to values");
    return false;
  }
  std::map<std::string, int> seen;  // key -> line of first occurrence
  for (auto it = node.begin(); it != node.end(); ++it) {
    YAML::Node key = it->first;  // by value: it-> yields a temporary proxy
    if (!key.IsScalar()) {
      Error(key, field, "expected a plain string key");
      continue;
    }
    std::string name = key.Scalar();
    std::string path = JoinField(field, name);
    auto [pos, inserted] = seen.emplace(name, key.Mark().line + 1);
    if (!inserted) {
      Error(key, path, "duplicate key \"" + name + "\" (first defined on line " +
                           std::to_string(pos->second) + ")");
      continue;
    }
    if (std::find(keys.known.begin(), keys.known.end(), name) != keys.known.end()) continue;
    if (std::find(keys.ignored.begin(), keys.ignored.end(), name) != keys.ignored.end()) {
      Warning(key, path, "\"" + name + "\" is understood but not used by Causeway; it is kept and ignored");
      continue;
    }
    std::string msg = "unknown key \"" + name + "\"";
    std::string hint = ClosestMatch(name, keys.known);
    if (!hint.empty()) {
      msg += "; did you mean \"" + hint + "\"?";
    } else {
      std::string list;
      for (auto k : keys.known) list += (list.empty() ? "" : ", ") + std::string(k);
      msg += "; expected one of: " + list;
    }
    Error(key, path, msg);
  }
  return true;
}

YAML::Node YamlReader::Child(const YAML::Node& map, std::string_view key) {
  if (!map.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return it->second;
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

std::optional<std::string> YamlReader::String(const YAML::Node& node, std::string_view field) {
  if (!node.IsScalar()) {
    Error(node, field, node.IsNull() ? "expected a string, got nothing" : "expected a string");
    return std::nullopt;
  }
  return node.Scalar();
}

std::optional<int64_t> YamlReader::Int(const YAML::Node& node, std::string_view field, int64_t min,
                                       int64_t max) {
  std::string range = " from " + std::to_string(min) + " to " + std::to_string(max);
  if (!node.IsScalar() || IsQuoted(node)) {
    Error(node, field, "expected an integer" + range + (IsQuoted(node) ? ", got a quoted string" : ""));
    return std::nullopt;
  }
  const std::string& s = node.Scalar();
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    Error(node, field, "expected an integer" + range + ", got \"" + s + "\"");
    return std::nullopt;
  }
  if (v < min || v > max) {
    Error(node, field, "value " + s + " is out of range: expected an integer" + range);
    return std::nullopt;
  }
  return v;
}

std::optional<bool> YamlReader::Bool(const YAML::Node& node, std::string_view field) {
  if (node.IsScalar() && !IsQuoted(node)) {
    std::string s = node.Scalar();
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    if (s == "true") return true;
    if (s == "false") return false;
  }
  Error(node, field, "expected true or false");
  return std::nullopt;
}

std::optional<std::map<std::string, std::string>> YamlReader::StringMap(const YAML::Node& node,
                                                                        std::string_view field) {
  if (node.IsNull()) return std::map<std::string, std::string>{};
  if (!node.IsMap()) {
    Error(node, field, "expected a mapping of names to values");
    return std::nullopt;
  }
  std::map<std::string, std::string> out;
  bool ok = true;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) {
      Error(it->first, field, "expected a plain string key");
      ok = false;
      continue;
    }
    std::string key = it->first.Scalar();
    std::string path = JoinField(field, key);
    if (out.count(key)) {
      Error(it->first, path, "duplicate key \"" + key + "\"");
      ok = false;
      continue;
    }
    if (!it->second.IsScalar()) {
      // A missing value has no position of its own: point at its key.
      if (it->second.IsNull()) {
        Error(it->first, path, "has no value: expected a string, number or boolean");
      } else {
        Error(it->second, path, "expected a string, number or boolean");
      }
      ok = false;
      continue;
    }
    out.emplace(key, it->second.Scalar());
  }
  if (!ok) return std::nullopt;
  return out;
}

Status YamlReader::Finish(std::string_view what) const {
  if (errors_.empty()) return Status::Ok();
  std::string msg = std::string(what) + " has " + std::to_string(errors_.size()) +
                    (errors_.size() == 1 ? " error" : " errors");
  msg += ": " + errors_.front().ToString();
  // The warnings ride along: fixing the errors should not reveal new notes.
  std::vector<Diagnostic> all = errors_;
  all.insert(all.end(), warnings_.begin(), warnings_.end());
  return InvalidArgument(msg, std::move(all));
}

}  // namespace causeway::spec
