// Estate files, as platform engineers (or a hostile merge request) write them,
// read with the build's provider kinds and their own blocks.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "causeway/estate.h"
#include "providers/kubernetes/kube_settings.h"
#include "providers/local/local_settings.h"
#include "providers/sim/sim_settings.h"
#include "providers/slurm/slurm_settings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const causeway::EstateKinds kinds = {causeway::local::EstateKindOf(), causeway::sim::EstateKindOf(),
                                              causeway::slurm::EstateKindOf(), causeway::kube::EstateKindOf()};
  auto parsed = causeway::ParseEstate(std::string_view(reinterpret_cast<const char*>(data), size), "estate.yaml", kinds);
  (void)parsed;  // only crashes and hangs matter here
  return 0;
}
