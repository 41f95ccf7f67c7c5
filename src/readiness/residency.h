// Where a location lives, as the estate tells it: a checkpoint, log or
// artifact location is in a residency zone when the clusters whose storage
// covers it are all in that zone (a path local to a cluster lives on the
// cluster that wrote it). The job service refuses a zone-bound job's
// checkpoint outside its zone with this; readiness counts what landed
// outside before.
#pragma once

#include <string>

#include "causeway/estate.h"
#include "causeway/records.h"

namespace causeway::readiness {

// Why `path`, written by a job bound to `zone` whose latest attempt ran on
// cluster `written_on` ("" if none yet), is not shown to be in the zone, or
// "" when it is. A location no cluster declares, or that clusters of
// several zones share, cannot be shown to stay in the zone. A path under a
// storage location's url (data.locations) is in that location's zone.
std::string ResidencyBreach(const Estate& estate, const std::string& zone, const std::string& path,
                            const std::string& written_on);
// The same for a path `job` writes (a checkpoint, an artifact): "" when the
// job is bound to no zone (its stored spec's `residency`).
std::string ResidencyBreach(const Estate& estate, const JobRecord& job, const std::string& path);

}  // namespace causeway::readiness
