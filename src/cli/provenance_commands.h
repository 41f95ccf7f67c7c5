// The commands about provenance: provenance (a job's signed record, and
// verify, diff, export), record (facts a job adds) and rerun.
#pragma once

#include "cli/command_context.h"

namespace causeway::cli {

void AddProvenanceCommands(Cli& c);

}  // namespace causeway::cli
