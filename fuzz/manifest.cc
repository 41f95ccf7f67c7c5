// A dataset manifest as people bring it (`dataset register --manifest`) and
// as rclone lists objects (`lsf --csv`): parsed under tight limits, and a
// manifest that parses must come back from its canonical text unchanged.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "data/manifest.h"
#include "data/rclone.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  causeway::data::ManifestLimits limits;
  limits.max_objects = 1000;
  limits.max_path = 256;
  auto m = causeway::data::ParseManifest(text, "fuzz", limits);
  if (m.ok()) {
    std::string canonical = causeway::data::CanonicalText(*m);
    auto again = causeway::data::ParseManifest(canonical, "fuzz", limits);
    if (!again.ok() || causeway::data::CanonicalText(*again) != canonical) std::abort();
    (void)causeway::data::Compare(*m, *again).Describe();
  }
  if (auto fields = causeway::data::SplitCsvRecord(text)) (void)fields->size();
  return 0;
}
