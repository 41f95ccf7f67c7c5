// `causeway cost ...` and `causeway waste`: bills imported and what things
// cost, through the API and its authorization like every other command.
// Only `cost import --db` (or --data-dir) writes into a database directly,
// for a database no server is using (a first load, a bill larger than the
// server's body limit).
#pragma once

#include "cli/command_context.h"

namespace causeway::cli {

// Adds the `cost` command group and `waste` to the CLI; each command sets `rc`.
void AddCostCommands(Cli& c);

}  // namespace causeway::cli
