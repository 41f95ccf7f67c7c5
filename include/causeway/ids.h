// Sortable unique ids: a type prefix and a ULID ("job_01JDQ4…"): 48 bits of
// millisecond time then 80 random bits, Crockford base32. Ids made by one
// process sort in creation order, even within the same millisecond.
#pragma once

#include <string>
#include <string_view>

#include "causeway/clock.h"

namespace causeway {

// Returns prefix + "_" + a new ULID for time `now`. Thread-safe.
std::string NewId(std::string_view prefix, Timestamp now);

// True when `id` is prefix + "_" + 26 Crockford base32 characters.
bool IsValidId(std::string_view id, std::string_view prefix);

}  // namespace causeway
