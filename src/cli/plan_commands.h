// `causeway plan trace`: a trace replayed through the scheduler on candidate
// estates, compared (docs/planning.md), offline, on this machine; `plan
// demand` likewise; `plan job`: when a job would likely start, asked of the
// server.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "cli/command_context.h"

namespace causeway::cli {

void AddPlanCommands(Cli& c);

// One job's forecast (an element of the plan routes' `jobs`, or explain's
// `expected`) in words: its place in its queue, when and where it would
// likely start, and what that attempt would cost; each line indented.
void PrintExpected(const nlohmann::json& forecast, std::ostream& out);

}  // namespace causeway::cli
