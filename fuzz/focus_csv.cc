// FOCUS billing exports (CSV, plain or gzip), read the way `cost import` reads them.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "cost/focus.h"

namespace {
class CountingSink final : public causeway::cost::RowSink {
 public:
  void Add(const causeway::cost::FocusRow& row) override { total_ += row.billed; }
  causeway::cost::Picos total_ = 0;
};
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The reader takes a path: a file per process, rewritten per input.
  static const std::string path = "/tmp/causeway-fuzz-focus-" + std::to_string(getpid()) + ".csv";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  CountingSink sink;
  causeway::cost::FocusOptions options;
  options.threads = 1;
  auto scan = causeway::cost::ScanFocusFile(path, options, {&sink});
  (void)scan;  // only crashes and hangs matter here
  return 0;
}
