#include "providers/registry.h"

namespace causeway::providers {

Status Registry::Register(std::string name, Kind kind) {
  if (kinds_.count(name)) return AlreadyExists("provider kind " + name + " is registered twice");
  Replace(std::move(name), std::move(kind));
  return Status::Ok();
}

void Registry::Replace(std::string name, Kind kind) {
  kind.estate.name = name;
  kinds_[std::move(name)] = std::move(kind);
}

const Kind* Registry::Find(std::string_view name) const {
  auto it = kinds_.find(name);
  return it == kinds_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> out;
  for (const auto& [name, kind] : kinds_) out.push_back(name);
  return out;
}

EstateKinds Registry::Estate() const {
  EstateKinds out;
  for (const auto& [name, kind] : kinds_) out.push_back(kind.estate);
  return out;
}

Result<causeway::Estate> ParseEstate(std::string_view yaml_text, const std::string& file, const Registry& kinds) {
  return causeway::ParseEstate(yaml_text, file, kinds.Estate());
}

Result<causeway::Estate> LoadEstateFile(const std::string& path, const Registry& kinds) {
  return causeway::LoadEstateFile(path, kinds.Estate());
}

}  // namespace causeway::providers
