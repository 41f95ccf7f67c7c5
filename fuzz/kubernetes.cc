// A Kubernetes API server's objects (a Job, a list of pods, a Kueue
// Workload, a node), as the adapter reads them from its watches.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "causeway/json_input.h"
#include "provenance/probe.h"
#include "providers/kubernetes/kube_objects.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto j = causeway::ParseUntrustedJson(std::string_view(reinterpret_cast<const char*>(data), size), "object");
  if (!j.ok()) return 0;
  causeway::kube::JobView view = causeway::kube::ViewOf(*j);
  view.outcome = causeway::AttemptOutcome::kFailed;
  causeway::kube::ClassifyFromPods(*j, view);
  (void)causeway::kube::WaitingReason(*j);
  (void)causeway::kube::EvictionReason(*j);
  causeway::kube::KubeSettings settings;
  (void)causeway::provenance::ParseProbe(causeway::kube::NodeFacts(*j, settings, "image"));
  return 0;
}
