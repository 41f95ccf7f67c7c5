// The commands about jobs: submit, jobs, job, cancel, explain, checkpoint,
// logs and cost job, all clients of the REST API.
#pragma once

#include "cli/command_context.h"

namespace causeway::cli {

void AddJobCommands(Cli& c);
void AddExplain(Cli& c);
void AddCheckpointsAndLogs(Cli& c);
void AddCostJob(Cli& c);

}  // namespace causeway::cli
