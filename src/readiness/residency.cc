#include "readiness/residency.h"

#include <set>

#include <nlohmann/json.hpp>

#include "causeway/text.h"
#include "spec/spec_json.h"

namespace causeway::readiness {

std::string ResidencyBreach(const Estate& estate, const std::string& zone, const std::string& path,
                            const std::string& written_on) {
  std::set<std::string> zones;
  for (const Cluster& c : estate.clusters) {
    if (!c.storage) continue;
    for (const std::string& prefix : *c.storage) {
      if (!prefix.empty() && path.rfind(prefix, 0) == 0) zones.insert(c.zone);
    }
  }
  // A storage location of the estate's `data:` lives in its region's zone.
  if (const StorageLocation* l = estate.data.LocationOfUrl(path)) zones.insert(l->zone);
  bool local = path.find("://") == std::string::npos || path.rfind("file://", 0) == 0;
  if (const Cluster* c = estate.FindCluster(written_on); c && local) zones.insert(c->zone);
  if (zones.size() == 1 && *zones.begin() == zone) return "";
  std::string where = zones.empty() ? "storage no cluster of the estate declares" : "storage of clusters in zone";
  for (const std::string& z : zones) where += " " + z;
  return "the job is bound to residency zone " + zone + ", and " + Utf8Prefix(path, 256) + " is " + where +
         "; keep checkpoints and artifacts in storage the clusters of " + zone +
         " declare (clusters[].storage) or to a storage location there (data.locations)";
}

std::string ResidencyBreach(const Estate& estate, const JobRecord& job, const std::string& path) {
  // Fail closed: a spec that cannot be read may bind the job to a zone.
  auto spec = StoredSpec(job);
  if (!spec.ok()) return "the job's residency cannot be read (" + spec.status().message() + "): nothing is written for it";
  if (spec->residency.empty()) return "";
  return ResidencyBreach(estate, spec->residency, path, job.cluster);
}

}  // namespace causeway::readiness
