#include "providers/registry.h"

namespace causeway::providers {

void Registry::Register(std::string name, Kind kind) { kinds_[std::move(name)] = std::move(kind); }

const Kind* Registry::Find(std::string_view name) const {
  auto it = kinds_.find(name);
  return it == kinds_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> out;
  for (const auto& [name, kind] : kinds_) out.push_back(name);
  return out;
}

}  // namespace causeway::providers
