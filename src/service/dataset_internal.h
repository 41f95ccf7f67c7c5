// What the files of the dataset service share (dataset_service.cc: the
// registry and routing's view; dataset_charges.cc: what data costs;
// dataset_replication.cc: copies). Not for use outside them.
#pragma once

#include <optional>
#include <string>

#include "causeway/estate.h"
#include "causeway/money.h"
#include "causeway/records.h"
#include "causeway/status.h"
#include "service/dataset_service.h"

namespace causeway::datasets_detail {

// "NAME@VERSION", as people name a version.
std::string Ref(const DatasetVersion& v);
// A storage location by its name, or by "provider/region" when exactly one
// location is there.
Result<const StorageLocation*> FindLocation(const Estate& estate, const std::string& name);

// What a replication that moved `bytes` from `from_place` to `to_place`
// costs (nullopt where no price covers the pair), who pays (the team of the
// job that asked for the copy, else the dataset's owner), and its charge:
// every byte moved is recorded, at 0 where no price covers the pair; none
// when nothing moved (dataset_charges.cc, with the other charges).
struct ReplicationCharge {
  std::optional<Money> cost;
  std::string team;
  std::optional<DataCharge> charge;
};
ReplicationCharge ChargeReplication(const Estate& estate, const DatasetVersion& version, const std::string& from_place,
                                    const std::string& to_place, int64_t bytes, const std::string& charge_team,
                                    const std::string& charge_job, Timestamp now);

}  // namespace causeway::datasets_detail
