// `causeway service`: services run by the server, each a task with a
// `service:` section kept at its replicas behind one endpoint
// (docs/services.md).
#pragma once

#include "cli/command_context.h"

namespace causeway::cli {

void AddServiceCommands(Cli& c);

}  // namespace causeway::cli
