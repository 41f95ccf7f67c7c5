// `causeway access explain`, `credentials`, `people ...`, `identity ...`,
// `breakglass ...` and `acceptance identity`: who may do what, what a
// person holds, and the proofs. Clients of the API.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/api_client.h"

namespace causeway::cli {

// Adds the identity commands to `app`; each sets `rc`.
void AddIdentityCommands(CLI::App& app, Api& api, const Globals& g, int& rc);

}  // namespace causeway::cli
