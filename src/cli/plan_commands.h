// `causeway plan trace`: a trace replayed through the scheduler on candidate
// estates, compared (docs/planning.md). Runs offline, on this machine.
#pragma once

#include "cli/command_context.h"

namespace causeway::cli {

void AddPlanCommands(Cli& c);

}  // namespace causeway::cli
