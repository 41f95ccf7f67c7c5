// What-if changes to an estate for planning, so that "should we sign a
// 12-month reservation of 128 H200s?" is one command:
//   --add-reservation CLUSTER:GPU_TYPE:COUNT:TERM:PRICE
//       COUNT more GPUs of the type on the cluster (whole nodes of its pool
//       of that type, rounded up), all reserved for TERM (12mo, 1y, 90d)
//       from the replay's start at PRICE per GPU-hour, paid used or not
//   --remove-cluster CLUSTER
//       the cluster, its prices and reservations gone
//   --price CLUSTER:GPU_TYPE:ON_DEMAND[:SPOT]
//       the cluster's price per GPU-hour for the type
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/status.h"

namespace causeway::planning {

struct EstateChange {
  enum class Kind { kAddReservation, kRemoveCluster, kPrice } kind = Kind::kPrice;
  std::string cluster, gpu_type;
  int count = 0;
  int months = 0, days = 0;  // the term
  std::string price, spot;   // decimal amounts
  std::string text;          // as given
};

// kInvalidArgument naming the flag and what was expected.
Result<EstateChange> ParseChange(EstateChange::Kind kind, std::string_view text);

// Applies `changes` in order; a reservation's term starts at `start`.
// Returns each change in words. kInvalidArgument for a cluster or GPU type
// the estate does not have.
Result<std::vector<std::string>> ApplyChanges(Estate& estate, const std::vector<EstateChange>& changes, Timestamp start);

}  // namespace causeway::planning
