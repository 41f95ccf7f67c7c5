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
#include "identity/tokens.h"
#include "identity/workload.h"
#include "secrets/broker.h"

namespace causeway {

// What an attempt carries to its backend besides its own credential, made
// for its held launch off the scheduler's lock
// (SchedulerService::PrepareLaunches): its opened secrets and its workload
// token (a JWT clouds verify; only its id is recorded).
struct LaunchCargo {
  bool real = false;  // a backend that runs something: credentials
  std::string owner, submitted_by;
  std::optional<identity::WorkloadToken> workload;
  // A token per federated identity (policy::FederationsFor), by its name.
  std::vector<std::pair<std::string, identity::WorkloadToken>> federated;
  std::map<std::string, std::string> env;  // secrets: never written, never logged
  // Each secret reference read for it (secrets::Broker), as audited: no value.
  std::vector<secrets::SecretRead> secret_reads;
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
  // token it carries: ids, never tokens), then the attempt's own credential,
  // minted only now that the launch is written (MintCredential), its hash
  // written in the same unit. Runs again, minting again, if the unit is
  // retried: what the last run minted is what committed.
  Status WriteIn(WriteTx& tx, Timestamp time, const std::string& actor) const;

  // The launch, ready to release, once the write that holds WriteIn
  // committed (`commit`: what the commit queue answered for that write),
  // with its credential in CAUSEWAY_TOKEN. kFailedPrecondition when it did
  // not commit, when WriteIn never ran in it, or when the launch was refused.
  Result<RecordedLaunch> Committed(const Status& commit) const;

  // The id of the credential WriteIn minted ("" before, or for an attempt
  // that runs nothing real).
  const std::string& credential_id() const { return credential_id_; }

 private:
  // Proof that this launch's record is written in the unit being built:
  // made only by WriteIn, after WriteTx::RecordLaunch succeeded.
  class Written {
    friend class LaunchRecord;
    Written() = default;
  };
  // The attempt's credential: only a written launch has one.
  identity::MintedToken MintCredential(const Written& proof, Timestamp time) const;

  HeldLaunch held_;
  LaunchCargo cargo_;
  // What the last WriteIn minted: read once its unit committed (Committed,
  // after the commit queue answered) or later in the same unit.
  mutable std::string credential_id_, credential_secret_;
  // Set by a WriteIn that got through (release: publishes the credential);
  // a write that ran it and then failed leaves it set, but its commit's
  // status says so.
  mutable std::atomic<bool> written_{false};
};

}  // namespace causeway
