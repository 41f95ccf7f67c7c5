// Durations, timestamps and GPU requests as users and bills write them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "causeway/clock.h"
#include "causeway/resources.h"
#include "cost/focus.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto d = causeway::ParseDuration(text); d.ok()) (void)causeway::FormatDuration(*d);
  if (auto t = causeway::ParseRfc3339(text); t.ok()) (void)causeway::FormatRfc3339(*t);
  bool exact = false;
  (void)causeway::cost::ParseFocusTime(text, &exact);
  (void)causeway::cost::ParsePicos(text);
  (void)causeway::cost::ParseSpreadsheetMoney(text);
  auto gpu = causeway::ParseGpuRequest(text);
  (void)gpu;  // only crashes and hangs matter here
  return 0;
}
