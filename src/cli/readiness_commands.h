// `causeway readiness`: every control per provider with its state, owner
// and reason (the table), `--fail-on-gaps` for a scheduled check, and
// `readiness controls` (the catalog as the estate has it).
#pragma once

#include "cli/command_context.h"

namespace causeway::cli {

void AddReadinessCommands(Cli& c);

}  // namespace causeway::cli
