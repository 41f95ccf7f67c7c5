// Team quotas on the Kueue model. Each queue has a nominal quota per flavor
// (a GPU type, "-spot" for spot capacity). Queues in a cohort lend what they
// do not use and borrow what others do not use, within their limits:
//
//   lendable(q)   = lending_limit, or the whole nominal when unset
//   guaranteed(q) = nominal - lendable: kept for q alone
//   over(q)       = max(0, used(q) - guaranteed(q))
//
// and a cohort is within quota while sum(over) <= sum(lendable), with each
// queue at most nominal + borrowing_limit. O(1) checks; not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "causeway/estate.h"

namespace causeway::quota {

class QuotaBook {
 public:
  explicit QuotaBook(const std::vector<QueueConfig>& queues);

  // Index of the queue named `name`, or -1.
  int QueueIndex(const std::string& name) const;
  // Index of `flavor`, or -1 if no queue has a quota for it.
  int FlavorIndex(const std::string& flavor) const;
  size_t queues() const { return queues_.size(); }
  const QueueConfig& config(int q) const { return *configs_[static_cast<size_t>(q)]; }

  enum class Verdict {
    kFits,          // within the queue's own nominal quota
    kBorrows,       // fits by borrowing unused quota from the cohort
    kNeedsReclaim,  // within nominal, but others borrowed it: their borrowed work must be preempted
    kNoFit,         // over the queue's limits, or the cohort has nothing left to lend
  };
  struct Check {
    Verdict verdict = Verdict::kNoFit;
    int64_t borrowed = 0;  // GPUs beyond nominal the admission would use
    int64_t shortfall = 0; // for kNeedsReclaim/kNoFit: GPUs missing
    std::string reason;    // in words, for `causeway explain`
  };

  // Could queue `q` admit `gpus` more of flavor `f`? The reason is put into
  // words only when `explain` is set: this is on the scheduler's hot path.
  Check Evaluate(int q, int f, int64_t gpus, bool explain = false) const;

  void Add(int q, int f, int64_t gpus);
  void Remove(int q, int f, int64_t gpus);

  int64_t Used(int q, int f) const { return At(q, f).used; }
  int64_t Nominal(int q, int f) const { return At(q, f).nominal; }
  // Whether the queue uses more of `f` than its nominal quota.
  bool Borrowing(int q, int f) const { return At(q, f).used > At(q, f).nominal; }
  const std::string& flavor_name(int f) const { return flavors_[static_cast<size_t>(f)]; }
  size_t flavors() const { return flavors_.size(); }
  // Dominant resource share for fair sharing: the largest fraction of a
  // cohort's lendable quota this queue borrows, divided by its weight, in
  // millionths. Zero for a queue within its nominal quota.
  int64_t DominantShare(int q) const;
  // Queues in the same cohort as `q`, `q` included.
  const std::vector<int>& CohortMembers(int q) const;

 private:
  struct Cell {
    int64_t nominal = 0;
    int64_t borrowing_limit = -1;  // -1: none
    int64_t lendable = 0;
    int64_t used = 0;
    int64_t Guaranteed() const { return nominal - lendable; }
    int64_t Over() const { return used > Guaranteed() ? used - Guaranteed() : 0; }
  };
  struct Cohort {
    std::vector<int> members;
    std::vector<int64_t> pool;  // per flavor: sum of lendable
    std::vector<int64_t> over;  // per flavor: sum of over
  };
  const Cell& At(int q, int f) const { return cells_[static_cast<size_t>(q) * flavors_.size() + static_cast<size_t>(f)]; }
  Cell& At(int q, int f) { return cells_[static_cast<size_t>(q) * flavors_.size() + static_cast<size_t>(f)]; }

  std::vector<const QueueConfig*> configs_;
  std::vector<QueueConfig> queues_;
  std::vector<std::string> flavors_;
  std::map<std::string, int> flavor_index_;
  std::map<std::string, int> queue_index_;
  std::vector<Cell> cells_;      // queue-major
  std::vector<int> cohort_of_;   // queue -> cohort index, -1 for none
  std::vector<Cohort> cohorts_;
  std::vector<std::vector<int>> solo_;  // a queue without a cohort is its own member list
};

}  // namespace causeway::quota
