// One provider audit record, normalized to OCSF by each importer (the
// first byte picks the source), and the searchable columns of the result.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "audit/importers.h"

namespace audit = causeway::audit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const audit::LogSource kSources[] = {audit::LogSource::kKubernetes, audit::LogSource::kCloudTrail,
                                              audit::LogSource::kGcp,        audit::LogSource::kAzure,
                                              audit::LogSource::kOkta,       audit::LogSource::kSlurm};
  audit::ImportOptions options;
  options.provider = "fuzz";
  options.source = kSources[data[0] % 6];
  std::string_view record(reinterpret_cast<const char*>(data) + 1, size - 1);
  auto events = audit::NormalizeRecord(record, options);
  if (!events.ok()) return 0;
  for (const auto& e : *events) {
    causeway::ImportedAuditEvent row;
    if (causeway::Status st = audit::IndexEvent(e.ocsf_json, row); !st.ok()) __builtin_trap();  // its own output must index
  }
  return 0;
}
