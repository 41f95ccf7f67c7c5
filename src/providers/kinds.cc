// The provider kinds of this build: one line per provider folder.
#include "providers/local/local_provider.h"
#include "providers/registry.h"
#include "providers/sim/sim_provider.h"
#include "providers/slurm/slurm_provider.h"

namespace causeway::providers {

const Registry& BuiltInKinds() {
  static const Registry* registry = [] {
    auto* r = new Registry;
    sim::Register(*r);
    local::Register(*r);
    slurm::Register(*r);
    return r;
  }();
  return *registry;
}

}  // namespace causeway::providers
