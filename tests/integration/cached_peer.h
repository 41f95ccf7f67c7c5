// Where a test peer installed outside the repository lives
// (scripts/install-deps.sh): $`env` when set, else
// $XDG_CACHE_HOME/causeway/NAME, else ~/.cache/causeway/NAME.
#pragma once

#include <cstdlib>
#include <string>

namespace causeway::testing {

inline std::string CachedPeer(const char* env, const std::string& name) {
  if (const char* v = std::getenv(env); v && *v) return v;
  if (const char* c = std::getenv("XDG_CACHE_HOME"); c && *c) return std::string(c) + "/causeway/" + name;
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/causeway/" + name;
  return "/nonexistent/causeway/" + name;
}

}  // namespace causeway::testing
