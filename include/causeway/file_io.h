// Small file helpers on descriptors, for code that must control how a file
// is opened (mode, O_APPEND) but not repeat the loop around write(2).
#pragma once

#include <string_view>

#include "causeway/status.h"

namespace causeway {

// Writes all of `data` to `fd`, going on after short writes and EINTR.
// kUnavailable naming `what` (a path, say) and the system's reason on failure.
Status WriteAll(int fd, std::string_view data, std::string_view what);

}  // namespace causeway
