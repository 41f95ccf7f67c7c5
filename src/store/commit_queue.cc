#include "store/commit_queue.h"

#include <future>

namespace causeway {

CommitQueue::CommitQueue(Store& store, Options options)
    : store_(store), options_(options), thread_([this] { Loop(); }) {}

CommitQueue::~CommitQueue() { Stop(); }

void CommitQueue::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.NotifyAll();
  if (thread_.joinable()) thread_.join();
}

Status CommitQueue::Enqueue(WriteFn work, Done done) {
  return Enqueue(std::move(work), [done = std::move(done)](Committed c) { done(std::move(c.status)); });
}

Status CommitQueue::Enqueue(WriteFn work, DoneAudited done) {
  {
    MutexLock lock(mu_);
    if (stopping_) return Unavailable("the server is shutting down");
    if (pending_.size() >= options_.max_pending) {
      return ResourceExhausted("too many writes waiting to commit; retry shortly");
    }
    pending_.push_back(Item{std::move(work), std::move(done)});
  }
  cv_.NotifyOne();
  return Status::Ok();
}

Result<std::vector<int64_t>> CommitQueue::RunAudited(WriteFn work) {
  std::promise<Committed> promise;
  auto future = promise.get_future();
  RETURN_IF_ERROR(Enqueue(std::move(work), [&promise](Committed c) { promise.set_value(std::move(c)); }));
  Committed c = future.get();
  if (!c.status.ok()) return c.status;
  return std::move(c.audit_seqs);
}

Status CommitQueue::Run(WriteFn work) { return RunAudited(std::move(work)).status(); }

std::vector<Status> CommitQueue::RunAll(std::vector<WriteFn> work) {
  std::vector<std::promise<Status>> promises(work.size());
  std::vector<Status> out(work.size());
  std::vector<bool> queued(work.size(), false);
  for (size_t i = 0; i < work.size(); ++i) {
    Status st = Enqueue(std::move(work[i]), [&promises, i](Status s) { promises[i].set_value(std::move(s)); });
    if (st.ok()) {
      queued[i] = true;
    } else {
      out[i] = st;
    }
  }
  for (size_t i = 0; i < work.size(); ++i) {
    if (queued[i]) out[i] = promises[i].get_future().get();
  }
  return out;
}

void CommitQueue::Loop() {
  std::vector<Item> batch;
  std::vector<const WriteFn*> fns;
  for (;;) {
    {
      MutexLock lock(mu_);
      while (!stopping_ && pending_.empty()) cv_.Wait(mu_);
      if (pending_.empty()) return;  // stopping, and everything is committed
      while (!pending_.empty() && batch.size() < options_.max_batch) {
        batch.push_back(std::move(pending_.front()));
        pending_.pop_front();
      }
    }
    fns.clear();
    for (const auto& item : batch) fns.push_back(&item.work);
    std::vector<Committed> results = store_.CommitBatch(fns);
    batches_.fetch_add(1);
    units_.fetch_add(batch.size());
    for (size_t i = 0; i < batch.size(); ++i) batch[i].done(std::move(results[i]));
    batch.clear();
  }
}

}  // namespace causeway
