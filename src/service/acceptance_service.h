// Acceptance runs (docs/readiness.md): the identity, recovery and residency
// acceptance tests run against the live system from outside it (`causeway
// acceptance ...`) and hand their verdict back here. Each run is kept as one
// audit event (acceptance.run on acceptance/TEST), so the evidence the
// readiness report rests on is in the hash chain with everything else, and
// the latest run of each test is one indexed read away.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/store.h"
#include "store/commit_queue.h"

namespace causeway {

// The tests there are, in the order `acceptance list` shows them.
inline constexpr std::string_view kAcceptanceTests[] = {"identity", "recovery", "residency", "data", "failover"};

struct AcceptanceStep {
  std::string name;
  std::string result;  // pass, fail, not_applicable
  std::string detail;
  std::vector<int64_t> audit_seqs;  // the events that prove it
};

struct AcceptanceRun {
  std::string test;
  bool passed = false;
  Timestamp started, finished;
  std::string provider;                // the provider it exercised, where it names one (recovery)
  std::optional<int64_t> recovery_ms;  // recovery: how long until work resumed elsewhere
  std::optional<int64_t> objective_ms;  // recovery: the objective it was held to
  std::vector<AcceptanceStep> steps;
  std::string report_sha256;  // of the report the test wrote, as written
  // Once recorded: its audit event and who recorded it.
  int64_t seq = 0;
  std::string actor;
};

class AcceptanceService {
 public:
  // Bounds on what a run may carry (it comes from outside).
  static constexpr size_t kMaxSteps = 50;
  static constexpr size_t kMaxDetail = 500;  // characters of a step's detail kept
  static constexpr size_t kMaxSeqs = 50;     // audit seqs kept per step

  AcceptanceService(const Store& store, CommitQueue& queue, const Clock& clock)
      : store_(store), queue_(queue), clock_(clock) {}

  // Checks `run` (a known test, bounded steps) and records it as
  // `actor`; the recorded run, with its audit seq.
  Result<AcceptanceRun> Record(AcceptanceRun run, const std::string& actor);
  // The latest run of each test that has one.
  Result<std::map<std::string, AcceptanceRun>> Latest() const;

 private:
  const Store& store_;
  CommitQueue& queue_;
  const Clock& clock_;
};

}  // namespace causeway
