// What a job's probe wrote on a node (the job's environment may write
// anything there), and an attempt's facts as stored, read back; version
// requirements as jobs and estates write them.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "provenance/facts.h"
#include "provenance/probe.h"
#include "spec/software.h"

using namespace causeway;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  provenance::NodeFacts node = provenance::ParseProbe(text);
  // The bounds the reader promises.
  if (node.facts.size() > provenance::kMaxFactsPerNode + 1 || node.gpus.size() > provenance::kMaxGpusPerNode) std::abort();
  for (const auto& [name, fact] : node.facts) {
    if (fact.value.size() > provenance::kMaxFactValueBytes) std::abort();
    for (char c : fact.value) {
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) std::abort();
    }
  }
  // Stored and read back: the same facts.
  provenance::AttemptFacts facts;
  provenance::AddProbe(facts, {std::string(text)}, true, "fuzz");
  std::string stored = provenance::ToJson(facts).dump();
  if (provenance::ToJson(provenance::FactsFromJson(stored)).dump() != stored) std::abort();
  (void)provenance::FactsFromJson(std::string(text));
  if (auto r = ParseVersionRequirement(text); r.ok()) (void)r->Matches(text);
  return 0;
}
