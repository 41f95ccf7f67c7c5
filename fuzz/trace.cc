// Planning traces (Causeway's CSV and JSON lines, Alibaba 2023 and 2025),
// read the way `causeway plan trace` reads them. The first byte picks the
// form; the rest is the file.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include "planning/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  using causeway::planning::TraceFormat;
  static const TraceFormat kForms[] = {TraceFormat::kCauseway, TraceFormat::kCauseway, TraceFormat::kAlibaba2023,
                                       TraceFormat::kAlibabaDlrm2025};
  int form = data[0] % 4;
  // The reader takes a path (and tells JSON lines by its extension): a
  // file per process and form, rewritten per input.
  static const std::string base = "/tmp/causeway-fuzz-trace-" + std::to_string(getpid());
  std::string path = base + (form == 1 ? ".jsonl" : "-" + std::to_string(form) + ".csv");
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data + 1, 1, size - 1, f);
  std::fclose(f);
  causeway::planning::TraceLimits limits;
  limits.max_jobs = 10'000;
  auto trace = causeway::planning::ReadTrace(path, kForms[form], limits);
  (void)trace;  // only crashes and hangs matter here
  return 0;
}
