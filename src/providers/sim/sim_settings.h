// How a simulated provider misbehaves: the `sim:` block of a provider of
// kind sim. Rates are expected events per hour of one running attempt.
#pragma once

#include "causeway/estate.h"

namespace causeway::sim {

struct SimBehaviour final : KindSettings {
  double spot_preemption_per_hour = 0.0;
  double node_failure_per_hour = 0.0;
};

// The estate's view of the sim kind: its provider block and how it is read.
EstateKind EstateKindOf();

}  // namespace causeway::sim
