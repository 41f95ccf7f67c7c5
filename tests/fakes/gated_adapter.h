// A provider adapter whose calls can be made to hang, for tests of what a
// backend that never answers holds up. It runs the simulated estate's
// adapter behind gates: while a gate is closed, the call it guards waits
// (as a backend call that hangs would) until the test opens it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "causeway/provider.h"
#include "providers/sim/sim_provider.h"

namespace causeway::testing {

// Holds whoever calls Wait until Open (for good: later Waits pass).
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mu_);
    entered_ = true;
    cv_.notify_all();
    cv_.wait(lock, [this] { return open_; });
  }
  void WaitEntered() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return entered_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mu_);
    open_ = true;
    cv_.notify_all();
  }
  bool entered() {
    std::lock_guard<std::mutex> lock(mu_);
    return entered_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool entered_ = false, open_ = false;
};

// What the test controls and sees; shared, so that it outlives an adapter
// left to finish a hung call on its own.
struct Gates {
  std::shared_ptr<Gate> launch, poll;  // null: the call passes
  std::mutex mu;
  std::vector<std::string> launched;  // "job/attempt", in the order Launch was called
  Status restore = Status::Ok();      // what Restore answers

  std::vector<std::string> Launched() {
    std::lock_guard<std::mutex> lock(mu);
    return launched;
  }
  // Waits until every adapter made on these gates has gone (one may go on
  // a thread of its own, after a hung call); false if not within `limit`.
  bool WaitGone(std::chrono::seconds limit) {
    std::unique_lock<std::mutex> lock(mu);
    return live_cv.wait_for(lock, limit, [this] { return live == 0; });
  }
  void Made() {
    std::lock_guard<std::mutex> lock(mu);
    ++live;
  }
  void Gone() {
    std::lock_guard<std::mutex> lock(mu);
    --live;
    live_cv.notify_all();
  }

 private:
  std::condition_variable live_cv;
  int live = 0;
};

class GatedAdapter final : public ProviderAdapter {
 public:
  GatedAdapter(const Estate& estate, const Provider& provider, std::shared_ptr<Gates> gates)
      : sim_(estate, provider, 1), gates_(std::move(gates)) {
    gates_->Made();
  }
  ~GatedAdapter() override { gates_->Gone(); }

  const std::string& name() const override { return sim_.name(); }
  Result<std::string> Launch(const LaunchRequest& r, Timestamp now) override {
    if (gates_->launch) gates_->launch->Wait();
    {
      std::lock_guard<std::mutex> lock(gates_->mu);
      gates_->launched.push_back(r.job_id + "/" + std::to_string(r.attempt));
    }
    ASSIGN_OR_RETURN(std::string id, sim_.Launch(r, now));
    return "gated-" + id;
  }
  Status Restore(const LaunchRequest& r, Timestamp started_at) override {
    {
      std::lock_guard<std::mutex> lock(gates_->mu);
      RETURN_IF_ERROR(gates_->restore);
    }
    return sim_.Restore(r, started_at);
  }
  Status Cancel(const std::string& job_id, int attempt) override { return sim_.Cancel(job_id, attempt); }
  std::vector<ProviderEvent> Poll(Timestamp now) override {
    if (gates_->poll) gates_->poll->Wait();
    return sim_.Poll(now);
  }
  int ResolvePool(const std::string& cluster, const std::string& pool) const override {
    return sim_.ResolvePool(cluster, pool);
  }
  bool Fits(int pool, int gpus_per_node, int nodes) const override { return sim_.Fits(pool, gpus_per_node, nodes); }
  int FreeGpus(int pool) const override { return sim_.FreeGpus(pool); }
  bool Healthy(int pool) const override { return sim_.Healthy(pool); }
  Result<std::string> ReadLog(const std::string& cluster, const std::string& job_id, int attempt, int64_t offset,
                              int64_t max) const override {
    return sim_.ReadLog(cluster, job_id, attempt, offset, max);
  }
  std::vector<GpuSample> SampleUtilization(Timestamp now) const override { return sim_.SampleUtilization(now); }

 private:
  sim::SimProvider sim_;
  std::shared_ptr<Gates> gates_;
};

}  // namespace causeway::testing
