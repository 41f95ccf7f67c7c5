// Job specs as the API takes them: YAML, or a JSON object (which the API
// writes out and parses as YAML, reporting positions), or task files of
// several documents (pipelines); then what a submission does with each
// spec that parses.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "causeway/json_input.h"
#include "causeway/job_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  if (!text.empty() && text.front() == '{') {
    auto j = causeway::ParseUntrustedJson(text, "request body");
    if (!j.ok() || !j->is_object()) return 0;
    auto parsed = causeway::ParseJobSpec(j->dump(), "spec.json");
    (void)parsed;  // only crashes and hangs matter here
    return 0;
  }
  // A task file: one spec, or a pipeline or job group of several documents.
  auto file = causeway::ParseTaskFile(text, "job.yaml");
  if (!file.ok()) return 0;
  for (auto& step : file->steps) {
    // Each step's own document parses alone, as it is stored.
    auto own = causeway::ParseJobSpec(step.yaml, "step.yaml");
    if (!own.ok()) __builtin_trap();
    // What a submission does next: the spec stored without the file's
    // secret values (which must parse again), and the null placeholders checked.
    if (step.parsed.secrets_in_file) {
      auto stored = causeway::ParseJobSpec(causeway::WithoutSecretValues(step.yaml), "stored.yaml");
      if (!stored.ok() || !stored->secret_values.empty()) __builtin_trap();
    }
    (void)causeway::ApplySpecInputs(step.parsed, {}, "job.yaml");
    // A job group that passed names every task, and no delay is past its
    // bound or on a primary task.
    if (file->job_group && (step.parsed.spec.name.empty() || step.termination_delay_seconds < 0 ||
                            step.termination_delay_seconds > 30 * 86400 ||
                            (!step.auxiliary && step.termination_delay_seconds != 0))) {
      __builtin_trap();
    }
  }
  return 0;
}
