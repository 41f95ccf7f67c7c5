// Runs the scheduler engine in the server: recovers active jobs from the
// store at start, ticks on its own thread, and writes every transition (job
// state, attempt, event and audit event, in one transaction each) through the
// commit queue. Simulated providers are built from the estate.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "providers/sim/sim_provider.h"
#include "scheduler/engine.h"
#include "store/commit_queue.h"

namespace causeway {

class SchedulerService {
 public:
  SchedulerService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock, uint64_t seed);
  ~SchedulerService();

  // Loads every pending and running job from the store into the engine.
  // Running attempts are re-adopted by their providers.
  Status Recover();
  // Ticks every `interval` of real time on a thread of its own until Stop.
  void Start(std::chrono::milliseconds interval);
  void Stop();
  // One cycle: tick the engine and persist what happened (durably) before
  // returning.
  Status TickOnce();

  // Hooks for JobService, called once the submission or cancellation is
  // committed; they never wait for a commit.
  void OnSubmitted(const JobRecord& job, const JobSpec& spec);
  void OnCancelled(const std::string& job_id);
  void OnCheckpoint(const std::string& job_id, const std::string& path);

  // The engine's explanation, or null for a job it does not hold.
  nlohmann::json Explain(const std::string& job_id);
  nlohmann::json Queues();
  // An attempt's output from the provider that ran it on `cluster`.
  Result<std::string> ReadLog(const std::string& cluster, const std::string& job_id, int attempt, int64_t offset,
                              int64_t max);
  // Where attempts reach the API (CAUSEWAY_SERVER in their environment).
  void SetServerUrl(std::string url);

  // Takes a simulated provider down or brings it back; audited.
  Status SetOutage(const std::string& provider, bool down, const std::string& actor);

 private:
  using Minted = std::map<std::pair<std::string, int>, TokenRecord>;  // (job, attempt) -> credential
  // `minted`: credentials of the attempts dispatched, stored with them.
  std::vector<WriteFn> Persist(const std::vector<scheduler::Transition>& transitions, Minted minted = {});

  Store& store_;
  CommitQueue& queue_;
  const Estate& estate_;
  const Clock& clock_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<sim::SimProvider>> sims_;  // guarded by mu_
  std::vector<std::unique_ptr<ProviderAdapter>> others_;           // guarded by mu_: real backends
  std::map<std::string, ProviderAdapter*> adapters_;               // guarded by mu_: by provider name
  std::unique_ptr<scheduler::Engine> engine_;                      // guarded by mu_
  std::string server_url_;                                         // guarded by mu_
  Minted minted_;                                                  // guarded by mu_: since the last Persist
  std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stopping_ = false;  // guarded by stop_mu_
  std::thread thread_;
};

}  // namespace causeway
