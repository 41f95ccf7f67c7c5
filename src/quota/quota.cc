#include "quota/quota.h"

#include <algorithm>

namespace causeway::quota {

QuotaBook::QuotaBook(const std::vector<QueueConfig>& queues) : queues_(queues) {
  for (const auto& q : queues_) {
    configs_.push_back(&q);
    queue_index_[q.name] = static_cast<int>(configs_.size()) - 1;
    for (const auto& fq : q.quotas) {
      if (flavor_index_.emplace(fq.flavor, static_cast<int>(flavors_.size())).second) flavors_.push_back(fq.flavor);
    }
  }
  size_t nf = flavors_.size();
  cells_.resize(queues_.size() * nf);
  std::map<std::string, int> cohort_index;
  for (size_t qi = 0; qi < queues_.size(); ++qi) {
    const auto& q = queues_[qi];
    int c = -1;
    if (!q.cohort.empty()) {
      auto [it, inserted] = cohort_index.emplace(q.cohort, static_cast<int>(cohorts_.size()));
      if (inserted) cohorts_.push_back(Cohort{{}, std::vector<int64_t>(nf, 0), std::vector<int64_t>(nf, 0)});
      c = it->second;
      cohorts_[static_cast<size_t>(c)].members.push_back(static_cast<int>(qi));
    }
    cohort_of_.push_back(c);
    solo_.push_back({static_cast<int>(qi)});
    for (const auto& fq : q.quotas) {
      Cell& cell = At(static_cast<int>(qi), flavor_index_[fq.flavor]);
      cell.nominal = fq.nominal;
      cell.borrowing_limit = fq.borrowing_limit.value_or(-1);
      // Outside a cohort nothing is lent or borrowed.
      cell.lendable = c < 0 ? 0 : std::min(fq.lending_limit.value_or(fq.nominal), fq.nominal);
      if (c >= 0) cohorts_[static_cast<size_t>(c)].pool[static_cast<size_t>(flavor_index_[fq.flavor])] += cell.lendable;
    }
  }
}

int QuotaBook::QueueIndex(const std::string& name) const {
  auto it = queue_index_.find(name);
  return it == queue_index_.end() ? -1 : it->second;
}

int QuotaBook::FlavorIndex(const std::string& flavor) const {
  auto it = flavor_index_.find(flavor);
  return it == flavor_index_.end() ? -1 : it->second;
}

const std::vector<int>& QuotaBook::CohortMembers(int q) const {
  int c = cohort_of_[static_cast<size_t>(q)];
  return c < 0 ? solo_[static_cast<size_t>(q)] : cohorts_[static_cast<size_t>(c)].members;
}

QuotaBook::Check QuotaBook::Evaluate(int q, int f, int64_t gpus, bool explain) const {
  Check out;
  const std::string& queue = configs_[static_cast<size_t>(q)]->name;  // only for reasons
  if (f < 0) {
    if (explain) out.reason = "queue " + queue + " has no quota for this flavor";
    out.shortfall = gpus;
    return out;
  }
  const Cell& cell = At(q, f);
  const std::string& flavor = flavors_[static_cast<size_t>(f)];
  int64_t after = cell.used + gpus;
  std::string usage =
      explain ? std::to_string(after) + " of its nominal " + CountOf(flavor, cell.nominal) : "";
  int c = cohort_of_[static_cast<size_t>(q)];
  if (c < 0) {
    if (after <= cell.nominal) {
      out.verdict = Verdict::kFits;
      if (explain) out.reason = "queue " + queue + " would use " + usage;
    } else {
      out.shortfall = after - cell.nominal;
      if (explain) out.reason = "queue " + queue + " would use " + usage + " and is in no cohort to borrow from";
    }
    return out;
  }
  if (cell.borrowing_limit >= 0 && after > cell.nominal + cell.borrowing_limit) {
    out.shortfall = after - cell.nominal - cell.borrowing_limit;
    if (explain) out.reason = "queue " + queue + " would use " + usage + ", beyond its borrowing limit of " +
                 std::to_string(cell.borrowing_limit);
    return out;
  }
  const Cohort& cohort = cohorts_[static_cast<size_t>(c)];
  int64_t new_over = after > cell.Guaranteed() ? after - cell.Guaranteed() : 0;
  int64_t total_over = cohort.over[static_cast<size_t>(f)] - cell.Over() + new_over;
  int64_t pool = cohort.pool[static_cast<size_t>(f)];
  const std::string& cohort_name = configs_[static_cast<size_t>(q)]->cohort;
  if (total_over <= pool) {
    out.borrowed = after > cell.nominal ? after - cell.nominal : 0;
    out.verdict = out.borrowed > 0 ? Verdict::kBorrows : Verdict::kFits;
    if (explain) out.reason = "queue " + queue + " would use " + usage +
                 (out.borrowed > 0 ? ", borrowing " + std::to_string(out.borrowed) + " from cohort " + cohort_name : "");
    return out;
  }
  out.shortfall = total_over - pool;
  if (after <= cell.nominal) {
    out.verdict = Verdict::kNeedsReclaim;
    if (explain) out.reason = "queue " + queue + " would use " + usage + ", but other queues of cohort " + cohort_name +
                 " are borrowing it: " + CountOf(flavor, out.shortfall) + " must be reclaimed";
  } else {
    int64_t unused = std::max<int64_t>(0, pool - cohort.over[static_cast<size_t>(f)]);
    if (explain) out.reason = "queue " + queue + " would use " + usage + ", and cohort " + cohort_name + " has " +
                 std::to_string(unused) + " of its " + std::to_string(pool) + " lendable " + UnitName(flavor, pool) +
                 " unused, " + std::to_string(new_over - cell.Over()) + " needed";
  }
  return out;
}

void QuotaBook::Add(int q, int f, int64_t gpus) {
  Cell& cell = At(q, f);
  int c = cohort_of_[static_cast<size_t>(q)];
  int64_t before = cell.Over();
  cell.used += gpus;
  if (c >= 0) cohorts_[static_cast<size_t>(c)].over[static_cast<size_t>(f)] += cell.Over() - before;
}

void QuotaBook::Remove(int q, int f, int64_t gpus) { Add(q, f, -gpus); }

int64_t QuotaBook::DominantShare(int q) const {
  int c = cohort_of_[static_cast<size_t>(q)];
  if (c < 0) return 0;
  const Cohort& cohort = cohorts_[static_cast<size_t>(c)];
  int64_t best = 0;
  for (size_t f = 0; f < flavors_.size(); ++f) {
    const Cell& cell = At(q, static_cast<int>(f));
    if (cell.used <= cell.nominal || cohort.pool[f] == 0) continue;
    best = std::max(best, (cell.used - cell.nominal) * 1'000'000 / cohort.pool[f]);
  }
  return best / configs_[static_cast<size_t>(q)]->weight;
}

}  // namespace causeway::quota
