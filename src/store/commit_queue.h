// Group commit. Units of work from many threads are queued and committed by
// one thread in batches, one durable commit per batch, so the cost of a commit
// (an fsync) is shared by every request waiting at that moment.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <thread>

#include "causeway/mutex.h"
#include "causeway/store.h"

namespace causeway {

class CommitQueue {
 public:
  struct Options {
    size_t max_pending = 20000;  // beyond this, Enqueue sheds load
    size_t max_batch = 1024;     // units per commit
  };
  using Done = std::function<void(Status)>;
  using DoneAudited = std::function<void(Committed)>;

  CommitQueue(Store& store, Options options);
  ~CommitQueue();  // commits what is queued, then stops

  // Queues `work`. `done` runs on the commit thread once the unit's batch is
  // durable (or failed); it must not block. Returns kResourceExhausted, and
  // never calls `done`, when the queue is full; kUnavailable once stopped.
  Status Enqueue(WriteFn work, Done done) EXCLUDES(mu_);
  // The same, and `done` is told the sequence numbers of the unit's audit
  // events.
  Status Enqueue(WriteFn work, DoneAudited done) EXCLUDES(mu_);

  // Queues `work` and waits for its result.
  Status Run(WriteFn work);
  // Queues `work`, waits, and returns the sequence numbers its audit events
  // were given, in the order it appended them.
  Result<std::vector<int64_t>> RunAudited(WriteFn work);
  // Queues every unit and waits for all of them; one status per unit.
  // Must not be called from a `done` callback (it would wait on itself).
  std::vector<Status> RunAll(std::vector<WriteFn> work);

  // Commits what is queued and stops the commit thread. Idempotent.
  void Stop() EXCLUDES(mu_);

  uint64_t batches() const { return batches_.load(); }
  uint64_t units() const { return units_.load(); }

 private:
  struct Item {
    WriteFn work;
    DoneAudited done;
  };
  void Loop() EXCLUDES(mu_);

  Store& store_;
  const Options options_;
  Mutex mu_;
  CondVar cv_;
  std::deque<Item> pending_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::atomic<uint64_t> batches_{0};
  std::atomic<uint64_t> units_{0};
  std::thread thread_;
};

}  // namespace causeway
