// The middle step of the launch protocol (causeway/launch.h): a held launch,
// with what its attempt will carry, recorded durably; only once its write
// committed may it be released.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "causeway/clock.h"
#include "causeway/launch.h"
#include "causeway/records.h"
#include "causeway/status.h"
#include "causeway/store.h"
#include "identity/workload.h"

namespace causeway {

// What an attempt carries to its backend, minted for its held launch off the
// scheduler's lock (SchedulerService::PrepareLaunches).
struct LaunchCargo {
  bool real = false;  // a backend that runs something: credentials
  std::string owner, submitted_by;
  std::optional<TokenRecord> credential;  // its hash is written with the launch
  std::optional<identity::WorkloadToken> workload;
  std::map<std::string, std::string> env;  // secrets: never written, never logged
  // Why it must not run (its secrets cannot be opened): never released, and
  // the job is cancelled with this reason.
  std::string refused;
};

class LaunchRecord {
 public:
  LaunchRecord(HeldLaunch held, LaunchCargo cargo) : held_(std::move(held)), cargo_(std::move(cargo)) {}

  const HeldLaunch& held() const { return held_; }
  // Everything but the environment's values is read by the launch's write.
  const LaunchCargo& cargo() const { return cargo_; }

  // Writes the launch into `tx`, decided at `time` by `actor`: its record
  // (WriteTx::RecordLaunch, so that a successor never launches the number
  // again), its audit event (who its credentials are for, which workload
  // token it carries: ids, never tokens), and its credential's hash.
  Status WriteIn(WriteTx& tx, Timestamp time, const std::string& actor) const;

  // The launch, recordable as released, once the write that holds WriteIn
  // committed (`commit`: what the commit queue answered for that write).
  // kFailedPrecondition when it did not commit, when WriteIn never ran in
  // it, or when the launch was refused.
  Result<RecordedLaunch> Committed(const Status& commit) const;

 private:
  HeldLaunch held_;
  LaunchCargo cargo_;
  // Set by a WriteIn that got through; a write that ran it and then failed
  // leaves it set, but its commit's status says so.
  mutable std::atomic<bool> written_{false};
};

}  // namespace causeway
