#include "causeway/resources.h"

#include <cctype>
#include <charconv>

namespace causeway {

Result<std::string> NormalizeGpuType(std::string_view type) {
  if (type.empty()) return InvalidArgument("empty GPU type: expected a name such as H200 or A100-80GB");
  std::string out;
  out.reserve(type.size());
  for (char c : type) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') {
      return InvalidArgument("invalid GPU type \"" + std::string(type) +
                             "\": expected letters, digits and '-' (e.g. H200, A100-80GB)");
    }
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (!std::isalpha(static_cast<unsigned char>(out[0]))) {
    return InvalidArgument("invalid GPU type \"" + std::string(type) +
                           "\": expected a name starting with a letter (e.g. H200)");
  }
  return out;
}

Result<GpuRequest> ParseGpuRequest(std::string_view text) {
  auto colon = text.find(':');
  std::string_view type = text.substr(0, colon);
  ASSIGN_OR_RETURN(std::string norm, NormalizeGpuType(type));
  GpuRequest req{norm, 1};
  if (colon == std::string_view::npos) return req;
  std::string_view count = text.substr(colon + 1);
  int n = 0;
  auto [ptr, ec] = std::from_chars(count.data(), count.data() + count.size(), n);
  if (ec != std::errc() || ptr != count.data() + count.size()) {
    if (count.find('.') != std::string_view::npos) {
      return InvalidArgument("invalid GPU count \"" + std::string(count) + "\" in \"" +
                             std::string(text) + "\": fractional GPUs are not supported; expected a whole number such as H200:1");
    }
    return InvalidArgument("invalid GPU count \"" + std::string(count) + "\" in \"" +
                           std::string(text) + "\": expected TYPE:COUNT such as H200:8");
  }
  if (n < 1 || n > kMaxGpusPerNode) {
    return InvalidArgument("invalid GPU count " + std::to_string(n) + " in \"" + std::string(text) +
                           "\": expected 1 to " + std::to_string(kMaxGpusPerNode) + " GPUs per node");
  }
  req.count = n;
  return req;
}

std::string Alternative::Describe() const {
  std::string out = ToString();
  if (!cloud.empty()) out += " on " + cloud + (region.empty() ? "" : "/" + region) + (zone.empty() ? "" : "/" + zone);
  if (use_spot) out += " spot";
  if (!image_id.empty()) out += " image " + image_id;
  return out;
}

std::string Accelerators::ToString() const {
  std::string out;
  for (size_t i = 0; i < alternatives.size(); ++i) {
    if (i) out += ordered ? "," : "|";
    out += alternatives[i].ToString();
  }
  return out;
}

}  // namespace causeway
