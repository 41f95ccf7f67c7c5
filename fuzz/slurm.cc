// Slurm's JSON answers (squeue --json, slurmrestd job and accounting
// listings), as the adapter reads them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "causeway/json_input.h"
#include "providers/slurm/slurm_api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto j = causeway::ParseUntrustedJson(std::string_view(reinterpret_cast<const char*>(data), size), "answer");
  if (!j.ok()) return 0;
  (void)causeway::slurm::SlurmErrors(*j);
  if (j->is_object() && j->contains("jobs") && (*j)["jobs"].is_array()) {
    for (const auto& job : (*j)["jobs"]) {
      (void)causeway::slurm::ParseJob(job);
      (void)causeway::slurm::ParseAccountingJob(job);
    }
  }
  return 0;
}
