// Failure recovery: what kind of failure ended an attempt, who owns the next
// action, and whether to run the job again. Classification reads the
// backend's signals: the attempt outcome, the exit code, the backend's reason
// (Slurm state and reason, NVIDIA XID codes) and the tail of the job's log.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/clock.h"
#include "causeway/job_spec.h"
#include "causeway/provider.h"
#include "causeway/status.h"

namespace causeway::recovery {

enum class FailureClass {
  kNone,            // it succeeded
  kPreemption,      // capacity taken back (spot, a higher-priority job, an operator)
  kNodeFault,       // node or GPU failure (Slurm NODE_FAIL, NVIDIA XID errors)
  kOutOfMemory,     // host or GPU memory exhausted
  kTimeout,         // ran past its time limit
  kStorageFull,     // no space left on a device
  kDataPath,        // I/O errors reading or writing data (stale handles, transport errors)
  kProviderOutage,  // the provider went down
  kUserError,       // the program exited non-zero for its own reasons
  kCancelled,       // cancelled by a person or by policy
};
// Stable snake_case names, as used in specs, the API and the audit trail.
std::string_view FailureClassName(FailureClass c);
std::optional<FailureClass> ParseFailureClass(std::string_view name);

// Who has to act next.
enum class Owner { kNobody, kResearcher, kPlatform, kProvider };
std::string_view OwnerName(Owner o);
// Who acts next after a failure of class `c` (what Classify decides with it).
Owner OwnerOf(FailureClass c);

struct Classification {
  FailureClass failure = FailureClass::kNone;
  Owner owner = Owner::kNobody;
  std::string evidence;  // the signal that decided it, e.g. "NVIDIA XID 79"
};

// `reason` is the backend's account of the end; `log_tail` the last lines of
// the job's output when the backend can read them ("" otherwise).
Classification Classify(AttemptOutcome outcome, int exit_code, const std::string& reason, const std::string& log_tail);

// A job's recovery policy: `recovery: {max_restarts, on: [...], backoff}`.
struct Policy {
  int max_restarts = 5;
  std::set<FailureClass> retry_on = {FailureClass::kPreemption, FailureClass::kNodeFault,
                                     FailureClass::kProviderOutage, FailureClass::kDataPath};
  Micros backoff{0};  // wait before the next attempt; doubles with each restart
};

struct Decision {
  bool retry = false;
  Micros wait{0};  // before the next attempt
  std::string why;  // in words
};

// The job's policy: Causeway's defaults, overridden by its `recovery`.
Policy PolicyFor(const JobSpec& spec);

// Whether to run the job again after its `attempts`-th attempt failed as `c`.
Decision Decide(const Policy& policy, const Classification& c, int attempts);

}  // namespace causeway::recovery
