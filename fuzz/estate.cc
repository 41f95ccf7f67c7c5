// Estate files, as platform engineers (or a hostile merge request) write them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "causeway/estate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed = causeway::ParseEstate(std::string_view(reinterpret_cast<const char*>(data), size), "estate.yaml");
  (void)parsed;  // only crashes and hangs matter here
  return 0;
}
