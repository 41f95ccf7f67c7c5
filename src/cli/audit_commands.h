// `causeway audit import|search|person|link|links|unlink`: providers' audit
// logs normalized to OCSF, stored, and searched beside Causeway's own trail.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/api_client.h"

namespace causeway::cli {

// Adds the commands under the `audit` group; each sets `rc`.
void AddAuditCommands(CLI::App& audit, const Globals& g, Api& api, int& rc);

}  // namespace causeway::cli
