// `causeway audit import`: providers' audit logs normalized to OCSF.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/api_client.h"

namespace causeway::cli {

// Adds `import` under the `audit` command group; each command sets `rc`.
void AddAuditImport(CLI::App& audit, const Globals& g, int& rc);

}  // namespace causeway::cli
