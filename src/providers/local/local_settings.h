// Where the local executor writes a cluster's job output: the `local:` block
// of a cluster whose provider is of kind local.
#pragma once

#include <string>

#include "causeway/estate.h"

namespace causeway::local {

struct LocalSettings final : KindSettings {
  std::string output_dir;
};

// The estate's view of the local kind: its cluster block and how it is read.
EstateKind EstateKindOf();

}  // namespace causeway::local
