// A provider kind's block of an estate entry (`slurm:` on a cluster, say)
// read through the SettingsReader interface (causeway/estate.h), so the
// kind's own parser never sees yaml-cpp and its errors carry the file,
// line, column and field like every other. Internal to src/spec.
#pragma once

#include <string>

#include "causeway/estate.h"
#include "spec/yaml_reader.h"

namespace causeway::spec {

class BlockReader final : public SettingsReader {
 public:
  // Reads `node`, found at `field`; problems go to `r`.
  BlockReader(YamlReader& r, YAML::Node node, std::string field)
      : r_(r), node_(std::move(node)), field_(std::move(field)) {}

  bool CheckKeys(const std::vector<std::string_view>& keys) override;
  bool Has(std::string_view key) const override;
  std::string String(std::string_view key, bool required) override;
  std::optional<bool> Bool(std::string_view key) override;
  std::optional<double> Number(std::string_view key, std::string_view expected) override;
  std::optional<std::vector<std::string>> Strings(std::string_view key, std::string_view example) override;
  std::optional<std::vector<std::pair<std::string, std::string>>> StringMap(std::string_view key,
                                                                           std::string_view example) override;
  void Error(std::string_view key, std::string message) override;
  void ItemError(std::string_view key, size_t index, std::string message) override;

 private:
  YamlReader& r_;
  const YAML::Node node_;
  const std::string field_;
};

}  // namespace causeway::spec
