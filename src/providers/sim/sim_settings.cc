#include "providers/sim/sim_settings.h"

#include <memory>

namespace causeway::sim {
namespace {

double Rate(SettingsReader& r, std::string_view key) {
  static constexpr std::string_view kExpected = "expected a rate per hour from 0 to 100, such as 0.05";
  std::optional<double> v = r.Number(key, kExpected);
  if (!v) return 0.0;
  if (!(*v >= 0.0 && *v <= 100.0)) {
    r.Error(key, std::string(kExpected));
    return 0.0;
  }
  return *v;
}

}  // namespace

EstateKind EstateKindOf() {
  EstateKind k;
  k.name = "sim";
  k.provider_key = "sim";
  k.honours.everything = true;
  k.honours.backend = "the simulated estate";
  k.parse_provider = [](SettingsReader& r) -> std::shared_ptr<const KindSettings> {
    if (!r.CheckKeys({"spot_preemption_per_hour", "node_failure_per_hour"})) return nullptr;
    auto s = std::make_shared<SimBehaviour>();
    s->spot_preemption_per_hour = Rate(r, "spot_preemption_per_hour");
    s->node_failure_per_hour = Rate(r, "node_failure_per_hour");
    return s;
  };
  return k;
}

}  // namespace causeway::sim
