// Allocating untagged cluster charges to the jobs that ran there.
//
// Some exports carry no attribution at all: CoreWeave's is per node and
// usage-only (no cost or tag fields), and any provider's nodes may be billed
// as whole machines rather than per job. Such a charge can still be put on
// the work that used it: the estate says which bill resources (ResourceId,
// e.g. node names) belong to which cluster (`bill_resources`), and the
// ledger knows which attempts ran on that cluster in each charge day.
#pragma once

#include <vector>

#include "causeway/estate.h"
#include "causeway/store.h"

namespace causeway::cost {

// The estate's cluster of `provider` whose bill_resources match `resource`
// (glob patterns; the cluster's own name always matches), or null.
const Cluster* ClusterOfBillResource(const Estate& estate, const std::string& provider, const std::string& resource);

// Billing totals like Store::QueryBilling(query), with each untagged charge
// (no team, owner, project or job) of a day on a cluster's resource split
// among the attempts that ran on that cluster that day, in proportion to
// their GPU-seconds there, and attributed to their team, owner and job.
// Every amount, the GPU-hours and the row count are split exactly (the
// shares add up to the charge to the pico). A charge on a day no attempt ran
// stays untagged: it is idle capacity.
Result<std::vector<BillingTotal>> AllocateUntagged(const Store& store, const Estate& estate, const BillingQuery& query,
                                                   Timestamp now);

}  // namespace causeway::cost
