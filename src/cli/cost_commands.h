// `causeway cost ...`: importing bills and reading what things cost. They
// work on the database directly (--db or --data-dir), like `migrate`: a
// multi-gigabyte bill is read where it lies, not sent through the API.
#pragma once

#include <CLI/CLI.hpp>

namespace causeway::cli {

// Adds the `cost` command group to `app`; each command sets `rc`.
void AddCostCommands(CLI::App& app, const bool& json_output, int& rc);

}  // namespace causeway::cli
