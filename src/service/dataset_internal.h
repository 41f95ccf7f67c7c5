// What the files of the dataset service share (dataset_service.cc: the
// registry and routing's view; dataset_charges.cc: what data costs;
// dataset_replication.cc: copies). Not for use outside them.
#pragma once

#include <string>

#include "causeway/estate.h"
#include "causeway/status.h"
#include "service/dataset_service.h"

namespace causeway::datasets_detail {

// "NAME@VERSION", as people name a version.
std::string Ref(const DatasetVersion& v);
// A storage location by its name, or by "provider/region" when exactly one
// location is there.
Result<const StorageLocation*> FindLocation(const Estate& estate, const std::string& name);

}  // namespace causeway::datasets_detail
