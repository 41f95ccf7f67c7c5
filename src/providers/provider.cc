// What the provider interface (causeway/provider.h) defines besides the
// interface itself.
#include "causeway/provider.h"

namespace causeway {

std::string_view AttemptOutcomeName(AttemptOutcome o) {
  switch (o) {
    case AttemptOutcome::kSucceeded: return "succeeded";
    case AttemptOutcome::kFailed: return "failed";
    case AttemptOutcome::kPreempted: return "preempted";
    case AttemptOutcome::kNodeFailure: return "node_failure";
    case AttemptOutcome::kTimeout: return "timeout";
    case AttemptOutcome::kProviderOutage: return "provider_outage";
    case AttemptOutcome::kCancelled: return "cancelled";
  }
  return "unknown";
}

}  // namespace causeway
