#include "planning/plan.h"

#include <chrono>

#include "planning/report.h"
#include "providers/registry.h"

namespace causeway::planning {

Result<Estate> TraceEstate(const Trace& trace) {
  if (trace.estate_yaml.empty()) {
    return InvalidArgument("the " + trace.format + " trace " + trace.source + " describes no machines: give --estate FILE");
  }
  return providers::ParseEstate(trace.estate_yaml, trace.source + " (its machines)");
}

Result<nlohmann::json> PlanTrace(const Trace& trace, PlanRequest request) {
  if (request.estates.empty()) return InvalidArgument("no estate to plan on");
  if (request.seeds < 1 || request.seeds > 1000) return InvalidArgument("--seeds must be from 1 to 1000");
  std::vector<std::string> said;
  if (!request.changes.empty()) {
    NamedEstate changed{request.estates.front().name + " + changes", request.estates.front().estate};
    ASSIGN_OR_RETURN(said, ApplyChanges(changed.estate, request.changes, request.options.start));
    request.estates.push_back(std::move(changed));
  }
  auto start = std::chrono::steady_clock::now();
  ReportInput in;
  in.trace = &trace;
  in.options = request.options;
  in.seeds = request.seeds;
  for (size_t e = 0; e < request.estates.size(); ++e) {
    const NamedEstate& named = request.estates[e];
    EstateRuns runs{named.name, named.estate.currency, {}, {}};
    if (!said.empty() && e + 1 == request.estates.size()) runs.changes = said;
    for (int s = 0; s < request.seeds; ++s) {
      ReplayOptions o = request.options;
      o.seed = request.options.seed + static_cast<uint64_t>(s);
      ASSIGN_OR_RETURN(auto run, Replay(named.estate, trace, o));
      runs.runs.push_back(std::move(run));
    }
    in.estates.push_back(std::move(runs));
  }
  in.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return ReportJson(in);
}

}  // namespace causeway::planning
