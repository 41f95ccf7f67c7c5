// Software a node pool declares (`software:` in the estate) and the
// requirements a job may set on it (`resources.cuda`, `resources.driver`).
#pragma once

#include <string>
#include <string_view>

#include "causeway/status.h"

namespace causeway {

// What a pool may declare of its nodes' software.
inline constexpr std::string_view kDeclaredSoftware[] = {"driver", "cuda", "os", "kernel", "image", "nccl",
                                                         "cudnn",  "torch"};

// A version requirement: ">=12.4", ">12", "<=12.6", "<13", "!=12.3", or a
// version alone (or after "=="), which matches that version and every
// version under it (12.4 matches 12.4 and 12.4.1; 550.54.15 only itself).
// Versions compare part by part, numerically where both parts are numbers.
struct VersionRequirement {
  std::string op;  // ">=", ">", "<=", "<", "!=", "=="
  std::string version;
  bool Matches(std::string_view version) const;
  std::string ToString() const { return (op == "==" ? "" : op) + version; }
};

// kInvalidArgument saying what is accepted.
Result<VersionRequirement> ParseVersionRequirement(std::string_view text);

// <0, 0, >0 as `a` sorts before, with or after `b` (numeric parts as numbers).
int CompareVersions(std::string_view a, std::string_view b);

}  // namespace causeway
