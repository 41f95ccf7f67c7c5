#include "spec/settings_reader.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace causeway::spec {

bool BlockReader::CheckKeys(const std::vector<std::string_view>& keys) {
  return r_.CheckMap(node_, field_, KeySet{keys});
}

bool BlockReader::Has(std::string_view key) const {
  YAML::Node n = YamlReader::Child(node_, key);
  return n.IsDefined() && !n.IsNull();
}

std::string BlockReader::String(std::string_view key, bool required) {
  YAML::Node n = YamlReader::Child(node_, key);
  if (!n.IsDefined() || n.IsNull()) {
    if (required) r_.Error(node_, JoinField(field_, key), "missing required field \"" + std::string(key) + "\"");
    return "";
  }
  return r_.String(n, JoinField(field_, key)).value_or("");
}

std::optional<bool> BlockReader::Bool(std::string_view key) {
  YAML::Node n = YamlReader::Child(node_, key);
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  return r_.Bool(n, JoinField(field_, key));
}

std::optional<double> BlockReader::Number(std::string_view key, std::string_view expected) {
  YAML::Node n = YamlReader::Child(node_, key);
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  auto s = r_.String(n, JoinField(field_, key));
  if (!s) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s->c_str(), &end);
  if (s->empty() || end != s->c_str() + s->size() || !std::isfinite(v)) {
    r_.Error(n, JoinField(field_, key), std::string(expected));
    return std::nullopt;
  }
  return v;
}

std::optional<std::vector<std::string>> BlockReader::Strings(std::string_view key, std::string_view example) {
  const YAML::Node n = YamlReader::Child(node_, key);
  if (!n.IsDefined()) return std::nullopt;
  std::vector<std::string> out;
  if (!n.IsSequence() || n.size() == 0) {
    r_.Error(n, JoinField(field_, key), "expected a list such as " + std::string(example));
    return out;
  }
  for (size_t i = 0; i < n.size(); ++i) {
    if (auto v = r_.String(n[i], JoinField(field_, key) + "[" + std::to_string(i) + "]")) out.push_back(*v);
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> BlockReader::StringMap(std::string_view key,
                                                                                      std::string_view example) {
  const YAML::Node n = YamlReader::Child(node_, key);
  if (!n.IsDefined() || n.IsNull()) return std::nullopt;
  const std::string field = JoinField(field_, key);
  std::vector<std::pair<std::string, std::string>> out;
  if (!n.IsMap() || n.size() == 0) {
    r_.Error(n, field, "expected a mapping such as " + std::string(example));
    return out;
  }
  for (const auto& kv : n) {
    std::optional<std::string> k = r_.String(kv.first, field);
    if (!k) continue;
    if (std::any_of(out.begin(), out.end(), [&](const auto& p) { return p.first == *k; })) {
      r_.Error(kv.first, JoinField(field, *k), "\"" + *k + "\" is given twice");
      continue;
    }
    if (std::optional<std::string> v = r_.String(kv.second, JoinField(field, *k))) out.emplace_back(*k, *v);
  }
  return out;
}

void BlockReader::Error(std::string_view key, std::string message) {
  YAML::Node n = key.empty() ? node_ : YamlReader::Child(node_, key);
  r_.Error(n.IsDefined() ? n : node_, key.empty() ? field_ : JoinField(field_, key), std::move(message));
}

void BlockReader::ItemError(std::string_view key, size_t index, std::string message) {
  const YAML::Node n = YamlReader::Child(node_, key);
  const YAML::Node item = n.IsSequence() && index < n.size() ? n[index] : node_;
  r_.Error(item, JoinField(field_, key) + "[" + std::to_string(index) + "]", std::move(message));
}

}  // namespace causeway::spec
