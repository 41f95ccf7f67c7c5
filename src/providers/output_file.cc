#include "providers/output_file.h"
#include "provenance/probe.h"

#include <algorithm>
#include <fstream>

namespace causeway {

Result<std::string> ReadOutputRange(const std::string& path, int64_t offset, int64_t max) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return NotFound("no output yet (" + path + ")");
  std::streamoff size = in.tellg();
  if (offset >= size) return std::string();
  std::streamoff n = std::min<std::streamoff>(max, size - offset);
  in.seekg(offset);
  std::string out(static_cast<size_t>(n), '\0');
  in.read(out.data(), static_cast<std::streamsize>(n));
  return out;
}

std::string ReadOutputTail(const std::string& path, int64_t bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  std::streamoff size = in.tellg();
  auto tail = ReadOutputRange(path, std::max<std::streamoff>(0, size - bytes), bytes);
  return tail.ok() ? *tail : "";
}

std::vector<std::string> ReadNodeFacts(const std::string& facts_file) {
  std::vector<std::string> out;
  for (int node = 0; node < provenance::kMaxProbedNodes; ++node) {
    auto text = ReadOutputRange(facts_file + "." + std::to_string(node), 0, provenance::kMaxFactsFileBytes);
    if (!text.ok()) break;
    out.push_back(std::move(*text));
  }
  return out;
}

}  // namespace causeway
