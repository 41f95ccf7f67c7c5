// Walking a YAML document while collecting precise diagnostics. Internal to
// src/spec: the public spec headers do not expose yaml-cpp.
//
// yaml-cpp accepts duplicate keys silently and its non-const operator[]
// inserts, so every access here goes through const nodes and CheckMap, which
// reports duplicates and unknown keys (with a "did you mean" hint).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/status.h"

namespace causeway::spec {

// Parses `text` as one YAML document. Syntax errors become kInvalidArgument
// with the file, line and column of the problem.
Result<YAML::Node> LoadYaml(std::string_view text, const std::string& file);

// Where one YAML document of a text is: bytes [begin, end), the line it
// starts on (its "---" marker's, if any), and the line its content starts
// on. Only documents that hold something count (not only blank lines,
// comments and "...").
struct DocumentSpan {
  size_t begin = 0, end = 0;
  int first_line = 1;
  int content_line = 0;
  bool marker = false;  // starts with a "---" line
};
// The documents of `text`, found from the text alone (a "---" at the start
// of a line always starts one; yaml-cpp's LoadAll can loop forever on
// hostile input).
std::vector<DocumentSpan> DocumentSpans(std::string_view text);
// One document's text without its "---" marker. With `keep_positions`, the
// lines before it are kept blank and the marker turned into spaces, so that
// lines and columns in it are those of `text`; else it starts at its first
// line of content.
std::string DocumentText(std::string_view text, const DocumentSpan& span, bool keep_positions);

// The closest of `candidates` to `word` if it is a plausible misspelling
// (edit distance at most 2, and less than half the word), else "".
std::string ClosestMatch(std::string_view word, const std::vector<std::string_view>& candidates);

// Key names a map accepts. `ignored` keys are understood but not used: they
// produce a warning, not an error.
struct KeySet {
  std::vector<std::string_view> known;
  std::vector<std::string_view> ignored = {};
};

class YamlReader {
 public:
  explicit YamlReader(std::string file) : file_(std::move(file)) {}

  void Error(const YAML::Node& at, std::string_view field, std::string message);
  void Warning(const YAML::Node& at, std::string_view field, std::string message);

  // Checks that `node` is a mapping whose keys are unique strings from `keys`.
  // Reports each problem; returns false only when `node` is not a mapping.
  bool CheckMap(const YAML::Node& node, std::string_view field, const KeySet& keys);

  // The value under `key` in a mapping, or an undefined node.
  static YAML::Node Child(const YAML::Node& map, std::string_view key);

  // Scalar readers: report a type error and return nullopt when the node is
  // not the expected kind. Quoted scalars are strings, never numbers/bools.
  std::optional<std::string> String(const YAML::Node& node, std::string_view field);
  std::optional<int64_t> Int(const YAML::Node& node, std::string_view field, int64_t min,
                             int64_t max);
  std::optional<bool> Bool(const YAML::Node& node, std::string_view field);
  // A mapping of string keys to scalar values (numbers and bools as written).
  std::optional<std::map<std::string, std::string>> StringMap(const YAML::Node& node,
                                                              std::string_view field);

  // OK when no error was reported, else kInvalidArgument with every error.
  Status Finish(std::string_view what) const;

  const std::vector<Diagnostic>& warnings() const { return warnings_; }
  size_t error_count() const { return errors_.size(); }
  const std::string& file() const { return file_; }
  // A diagnostic pointing at `at`, reported nowhere (for the caller to keep).
  Diagnostic At(const YAML::Node& at, std::string_view field, std::string message) const;

 private:

  std::string file_;
  std::vector<Diagnostic> errors_;
  std::vector<Diagnostic> warnings_;
};

// "a.b" joined, or just `b` when `a` is empty.
std::string JoinField(std::string_view a, std::string_view b);

}  // namespace causeway::spec
