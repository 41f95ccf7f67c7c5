// Reading a job's output file, shared by the providers that write one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "causeway/status.h"

namespace causeway {

// Up to `max` bytes of `path` from byte `offset` ("" at or past the end);
// kNotFound when the file cannot be read.
Result<std::string> ReadOutputRange(const std::string& path, int64_t offset, int64_t max);

// The last `bytes` of `path`, or "" when it cannot be read: the evidence a
// failure classifier looks at.
std::string ReadOutputTail(const std::string& path, int64_t bytes = 4096);

// What an attempt's probe wrote on each node ("FACTS_FILE.0", ".1", …, up
// to the first missing, each cut at provenance::kMaxFactsFileBytes): the
// texts for ProviderEvent::node_facts.
std::vector<std::string> ReadNodeFacts(const std::string& facts_file);

}  // namespace causeway
