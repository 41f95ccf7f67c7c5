// The provider kinds of this build: one line per provider folder.
#include <cstdio>
#include <cstdlib>

#include "providers/kubernetes/kube_provider.h"
#include "providers/local/local_provider.h"
#include "providers/registry.h"
#include "providers/sim/sim_provider.h"
#include "providers/slurm/slurm_provider.h"

namespace causeway::providers {

const Registry& BuiltInKinds() {
  static const Registry* registry = [] {
    auto* r = new Registry;
    for (Status st : {sim::Register(*r), local::Register(*r), slurm::Register(*r), kube::Register(*r)}) {
      if (!st.ok()) {  // a build that names one kind twice: stop at start
        std::fprintf(stderr, "%s\n", st.ToString().c_str());
        std::abort();
      }
    }
    return r;
  }();
  return *registry;
}

}  // namespace causeway::providers
