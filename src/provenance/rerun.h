// A rerun: the job's spec pinned to what its record says it ran on, so that
// the new job runs on the same hardware and software or not at all.
#pragma once

#include <string>
#include <vector>

#include "causeway/estate.h"
#include "causeway/status.h"
#include "provenance/statement.h"

namespace causeway::provenance {

struct Pin {
  std::string field;  // the spec's field, e.g. "resources.cuda"
  std::string value;
  std::string from;   // where the value comes from: "probe", "estate", "record"
};

struct RerunPlan {
  std::string yaml;  // the job's own spec with the pins written in
  std::vector<Pin> pins;
  std::vector<std::string> unpinned;  // what could not be pinned, and why
};

// The spec of `history`'s job pinned to its last attempt (the one that
// succeeded, when one did): GPU type and count per node, nodes, the image
// by digest, the datasets as recorded, the git commit of its workdir, the
// CUDA version and driver its nodes reported (or its pool declared). With
// `on`, also the provider and region of that cluster of `estate`.
// kFailedPrecondition when the job never ran; kNotFound for an unknown
// cluster.
Result<RerunPlan> PlanRerun(const JobHistory& history, const Estate& estate, const std::string& on);

}  // namespace causeway::provenance
