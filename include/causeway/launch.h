// The launch protocol, as types: hold, record, mint, release. An attempt
// reaches a backend that runs something real only in that order, each step
// made only from the one before, so code that skips one (a new backend, a
// new caller) does not compile:
//
//   HeldLaunch      the scheduler's engine asked ProviderAdapter::Launch with
//                   LaunchRequest::held: the attempt's room is taken, nothing
//                   runs. Only the engine makes one.
//   (recorded, minted) the launch's record and audit event are written, and
//                   only then is the attempt's credential minted and its hash
//                   written, in the same unit (service/launch_record.h:
//                   minting takes a proof that the record is written).
//   RecordedLaunch  that unit committed. Only the launch's record, once its
//                   write committed, makes one; it alone carries what the
//                   attempt is given (its credential, its workload token, its
//                   opened secrets).
//   Release         ProviderAdapter::Release takes a RecordedLaunch: the
//                   backend receives the attempt only now.
//
// So no attempt runs that a successor scheduler does not know of, and none
// runs without its credential, or with a credential the server does not know;
// one write per dispatch.
#pragma once

#include <map>
#include <string>
#include <utility>

namespace causeway {

namespace scheduler {
class Engine;
}
class LaunchRecord;
struct LaunchTestPeer;  // tests of backends, which stand in for the engine and the record

// Step one: an attempt whose room its backend holds.
class HeldLaunch {
 public:
  const std::string& job_id() const { return job_id_; }
  int attempt() const { return attempt_; }
  const std::string& cluster() const { return cluster_; }

 private:
  friend class scheduler::Engine;
  friend struct LaunchTestPeer;
  HeldLaunch(std::string job_id, int attempt, std::string cluster)
      : job_id_(std::move(job_id)), attempt_(attempt), cluster_(std::move(cluster)) {}
  std::string job_id_;
  int attempt_ = 0;
  std::string cluster_;
};

// Step two: a held launch recorded durably, with what the attempt carries.
class RecordedLaunch {
 public:
  const std::string& job_id() const { return job_id_; }
  int attempt() const { return attempt_; }
  // Added to the attempt's environment at release (what its request set
  // wins): credentials and secrets. Never logged.
  const std::map<std::string, std::string>& env() const { return env_; }

 private:
  friend class LaunchRecord;
  // An engine whose owner keeps no durable record (planning, replays, the
  // simulated estate's own runs) releases the launches it held itself: its
  // book is the only record there is, and the attempt carries nothing.
  friend class scheduler::Engine;
  friend struct LaunchTestPeer;
  RecordedLaunch(const HeldLaunch& held, std::map<std::string, std::string> env)
      : job_id_(held.job_id()), attempt_(held.attempt()), env_(std::move(env)) {}
  std::string job_id_;
  int attempt_ = 0;
  std::map<std::string, std::string> env_;
};

}  // namespace causeway
