// `causeway dataset`: register versions of a dataset (content manifests
// named by their digest), list and show them with their replicas, verify
// a replica, and replicate a version with rclone (docs/datasets.md).
#pragma once

#include "cli/command_context.h"

namespace causeway::cli {

void AddDatasetCommands(Cli& c);

}  // namespace causeway::cli
