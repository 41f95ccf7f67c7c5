// `causeway plan trace`: one trace replayed on each candidate estate with
// several seeds, and the report (planning/report.h).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/estate.h"
#include "planning/changes.h"
#include "planning/replay.h"
#include "planning/trace.h"

namespace causeway::planning {

struct NamedEstate {
  std::string name;
  Estate estate;
};

struct PlanRequest {
  std::vector<NamedEstate> estates;  // at least one
  // Changes on top of the first estate: a candidate of its own, after the others.
  std::vector<EstateChange> changes;
  ReplayOptions options;  // seeds run from options.seed
  int seeds = 1;          // 1 to 1000
};

// The report as JSON. kInvalidArgument for changes or options the estates
// cannot take.
Result<nlohmann::json> PlanTrace(const Trace& trace, PlanRequest request);

// The estate a trace describes (alibaba-2023's machines), parsed.
Result<Estate> TraceEstate(const Trace& trace);

}  // namespace causeway::planning
