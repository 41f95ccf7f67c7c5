#include "cost/allocation.h"

#include <fnmatch.h>

#include <map>

#include "cost/billing.h"
#include "cost/metering.h"

namespace causeway::cost {

const Cluster* ClusterOfBillResource(const Estate& estate, const std::string& provider, const std::string& resource) {
  if (resource.empty()) return nullptr;
  for (const Cluster& c : estate.clusters) {
    if (c.provider != provider) continue;
    if (c.name == resource) return &c;
    for (const std::string& pattern : c.bill_resources) {
      if (fnmatch(pattern.c_str(), resource.c_str(), 0) == 0) return &c;
    }
  }
  return nullptr;
}

Result<std::vector<BillingTotal>> AllocateUntagged(const Store& store, const Estate& estate, const BillingQuery& query,
                                                   Timestamp now) {
  // The bills at the grain allocation needs, after the dimensions asked for.
  constexpr BillingDim kGrain[] = {BillingDim::kDay,   BillingDim::kProvider, BillingDim::kResource, BillingDim::kTeam,
                                   BillingDim::kOwner, BillingDim::kProject,  BillingDim::kJob};
  enum { kDay, kProvider, kResource, kTeam, kOwner, kProject, kJob };
  BillingQuery fine = query;
  fine.group_by.insert(fine.group_by.end(), std::begin(kGrain), std::end(kGrain));
  ASSIGN_OR_RETURN(std::vector<BillingTotal> rows, store.QueryBilling(fine));
  ASSIGN_OR_RETURN(MeteredPeriod metered, MeterPeriod(store, estate, query.from_day, query.to_day, now));
  std::map<std::pair<std::string, std::string>, std::vector<const MeteredDay*>> ran;  // (cluster, day)
  for (const MeteredDay& d : metered.days) {
    if (d.gpu_seconds > 0) ran[{d.cluster, d.day}].push_back(&d);
  }

  const size_t n = query.group_by.size();
  std::map<std::pair<std::vector<std::string>, std::string>, BillingTotal> merged;  // (keys, currency)
  auto add = [&](std::vector<std::string> keys, const BillingTotal& t) {
    BillingTotal& m = merged[{keys, t.currency}];
    m.keys = std::move(keys);
    m.currency = t.currency;
    m.rows += t.rows;
    auto amounts = t.Amounts();
    for (size_t a = 0; a < amounts.size(); ++a) *m.Amounts()[a] += amounts[a];
  };
  for (const BillingTotal& row : rows) {
    const std::string* grain = &row.keys[n];
    std::vector<std::string> keys(row.keys.begin(), row.keys.begin() + static_cast<std::ptrdiff_t>(n));
    bool untagged = grain[kTeam].empty() && grain[kOwner].empty() && grain[kProject].empty() && grain[kJob].empty();
    const Cluster* cluster = untagged ? ClusterOfBillResource(estate, grain[kProvider], grain[kResource]) : nullptr;
    auto users = cluster ? ran.find({cluster->name, grain[kDay]}) : ran.end();
    if (users == ran.end()) {
      add(std::move(keys), row);
      continue;
    }
    std::vector<Picos> weights;
    for (const MeteredDay* d : users->second) weights.push_back(d->gpu_seconds);
    // Row counts split as whole units (a multiple of 1000 picos splits into whole nanos).
    std::vector<Picos> rows_share = SplitExact(static_cast<Picos>(row.rows) * 1000, weights);
    std::vector<std::vector<Picos>> split;
    for (Picos amount : row.Amounts()) split.push_back(SplitExact(amount, weights));
    for (size_t i = 0; i < weights.size(); ++i) {
      const MeteredAttempt& m = *users->second[i]->source;
      BillingTotal share;
      share.keys = keys;
      for (size_t k = 0; k < n; ++k) {
        switch (query.group_by[k]) {
          case BillingDim::kTeam: share.keys[k] = m.team; break;
          case BillingDim::kOwner: share.keys[k] = m.owner; break;
          case BillingDim::kJob: share.keys[k] = m.attempt.job_id; break;
          default: break;  // the charge's own: provider, day, resource, categories...
        }
      }
      share.currency = row.currency;
      share.rows = static_cast<int64_t>(rows_share[i] / 1000);
      for (size_t a = 0; a < split.size(); ++a) *share.Amounts()[a] = split[a][i];
      add(share.keys, share);
    }
  }
  std::vector<BillingTotal> out;
  for (auto& [key, t] : merged) out.push_back(std::move(t));
  return out;
}

}  // namespace causeway::cost
