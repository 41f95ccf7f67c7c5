// What `causeway audit coverage` finds wrong: one gap in what the audit trail
// can show, from whichever service sees it.
#pragma once

#include <string>

namespace causeway {

struct CoverageFinding {
  std::string kind;      // "bucket-dark", "source-stale", "breakglass-self-approval", ...
  std::string provider;  // whose gap it is ("causeway" for Causeway's own)
  std::string name;      // the bucket, log source, setting or binding concerned
  std::string detail;    // what is wrong and what to do about it
};

}  // namespace causeway
