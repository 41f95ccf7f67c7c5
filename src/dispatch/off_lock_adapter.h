// The dispatcher in front of an adapter whose calls may block (a remote API,
// a fork, a file on a network disk): the scheduler calls it under its lock,
// and it answers from memory at once, while the adapter itself is called only
// on a worker of its own, in the order the scheduler asked.
//
//   Launch   books the attempt's room in its own view of capacity, queues
//            the real Launch and returns "" at once; the adapter's id comes
//            back from Poll as kHandedOver, a refusal as kNotLaunched.
//   Release, Cancel, Restore
//            are queued the same way. A Cancel of a launch still waiting in
//            the queue withdraws it: the adapter never hears of either. A
//            failed Restore comes back from Poll as kNotLaunched (the job is
//            placed again, not counted as a retry).
//   Poll     queues one real Poll (never more than one waiting) and returns
//            what the worker has gathered since the last call.
//   Fits, FreeGpus, Healthy
//            answer from the capacity the adapter last reported on the
//            worker, less the room of launches still queued, plus the room
//            of cancels still queued (so a preemption can place its job at
//            once). Where the view and the adapter disagree, the adapter's
//            refusal (kNotLaunched) wins and the job is placed again.
//   ReadLog  waits for the worker up to a deadline (the caller must hold no
//            lock other work needs); SampleUtilization returns the last
//            samples and asks for fresh ones.
//
// A call that runs past `hang_after` makes every pool of the adapter
// unhealthy (the router places nothing there) and withdraws the launches
// queued behind it, reported as kNotLaunched, so their jobs go elsewhere
// (restores wait: their attempts may be running).
// The call itself is left to finish (every backend call has a deadline of
// its own); its answer is still taken. Optional capabilities of the adapter
// (providers/capabilities.h) are reached through Post, on the worker.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "causeway/estate.h"
#include "causeway/provider.h"
#include "dispatch/worker.h"

namespace causeway::dispatch {

struct OffLockOptions {
  size_t capacity = 256;  // calls waiting for the worker before Launch answers kUnavailable
  std::chrono::steady_clock::duration hang_after = std::chrono::seconds(30);
  std::chrono::steady_clock::duration read_deadline = std::chrono::seconds(10);  // ReadLog, on the wall clock
  SteadyNow now;  // how long a call has run (Clock::Steady); unset: the steady clock
};

class OffLockAdapter final : public ProviderAdapter {
 public:
  // `inner` drives the clusters of `provider` in `estate`. Its name, pools
  // and StartsOnLaunch are asked once, here; so is its first capacity.
  OffLockAdapter(std::unique_ptr<ProviderAdapter> inner, const Estate& estate, const Provider& provider,
                 OffLockOptions options = {});
  // Drops what is still queued and waits for a call in progress, unless it
  // has run past `hang_after`: then the worker is left to finish it alone,
  // and goes, with the adapter, once it has.
  ~OffLockAdapter() override;

  const std::string& name() const override;
  Result<std::string> Launch(const LaunchRequest& request, Timestamp now) override;
  void Release(const RecordedLaunch& launch) override;
  Status Restore(const LaunchRequest& request, Timestamp started_at) override;
  Status Cancel(const std::string& job_id, int attempt) override;
  std::vector<ProviderEvent> Poll(Timestamp now) override;
  bool StartsOnLaunch() const override;
  int ResolvePool(const std::string& cluster, const std::string& pool) const override;
  bool Fits(int pool, int gpus_per_node, int nodes) const override;
  int FreeGpus(int pool) const override;
  bool Healthy(int pool) const override;
  Result<std::string> ReadLog(const std::string& cluster, const std::string& job_id, int attempt, int64_t offset,
                              int64_t max) const override;
  std::vector<GpuSample> SampleUtilization(Timestamp now) const override;

  // The adapter, only to ask which optional capabilities it has: it is
  // never called from here.
  const ProviderAdapter& inner() const;
  // Runs `call` with the adapter on the worker, in order after the calls
  // queued before it, then reads its capacity afresh (a capability such as
  // an outage drill changes it).
  void Post(std::function<void(ProviderAdapter&)> call);

  // For tests: returns once the worker has nothing queued or running.
  void WaitIdle() const;

 private:
  struct State;
  std::shared_ptr<State> s_;  // shared with a worker left to finish a hung call
};

}  // namespace causeway::dispatch
