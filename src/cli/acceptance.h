// `causeway acceptance ...`: acceptance tests run against the live system
// through its API, each writing an evidence report (JSON and text) with a
// verdict per step and the audit event ids that prove it.
#pragma once

#include <CLI/CLI.hpp>

#include "cli/api_client.h"

namespace causeway::cli {

void AddAcceptanceCommands(CLI::App& app, const Globals& g, int& rc);

}  // namespace causeway::cli
