#include "spec/accelerators.h"

#include <algorithm>
#include <iterator>
#include <utility>
#include <cctype>
#include <vector>

#include "spec/yaml_reader.h"

namespace causeway::spec {

namespace {

// Upper-cased as job specs are normalized; the commonest first, so that a
// tie in a hint goes to the likelier name.
constexpr std::string_view kCatalogue[] = {
    // NVIDIA data-centre
    "H200", "H100", "A100", "A100-80GB", "L4", "L40S", "L40", "B200", "B100", "B300", "GB200", "GB300", "GH200",
    "H100-MEGA", "H100-SXM", "H100-NVL", "H20", "H800", "A800", "A10G", "A10", "A16", "A2", "A30", "A40", "T4", "T4G",
    "V100", "V100-32GB", "P100", "P40", "P4", "K80", "M60", "K520",
    // NVIDIA workstation and consumer
    "RTX6000", "RTX6000-ADA", "RTXPRO6000", "RTXA6000", "RTXA5000", "RTXA4000", "A6000", "A5000", "A4000", "A4500",
    "RTX4090", "RTX4080", "RTX4070", "RTX3090", "RTX3080", "RTX3070", "RTX3060", "RTX5090", "RTX5080",
    // AMD
    "MI300X", "MI325X", "MI355X", "MI300A", "MI250X", "MI250", "MI210", "MI100", "RADEON-PRO-V520",
    // Intel Gaudi
    "GAUDI", "GAUDI2", "GAUDI3", "HL-205",
    // AWS
    "TRAINIUM", "TRAINIUM2", "INFERENTIA", "INFERENTIA2", "TRN1", "TRN2", "INF1", "INF2",
    // Google TPU slices are matched by shape below; the bare generations:
    "TPU-V2", "TPU-V3", "TPU-V4", "TPU-V5E", "TPU-V5P", "TPU-V6E",
};

// "TPU-V5P-8", "TPU-V5LITEPOD-16", "TPU-V6E-256": a TPU generation and a
// slice size (SkyPilot's names for TPU slices).
bool TpuSlice(std::string_view t) {
  if (t.substr(0, 5) != "TPU-V") return false;
  size_t dash = t.rfind('-');
  if (dash <= 5 || dash + 1 == t.size()) return false;
  std::string_view size = t.substr(dash + 1);
  if (!std::all_of(size.begin(), size.end(), [](unsigned char c) { return std::isdigit(c); })) return false;
  std::string_view gen = t.substr(5, dash - 5);  // "5P", "5LITEPOD", "6E", "4"
  return !gen.empty() && std::isdigit(static_cast<unsigned char>(gen[0])) &&
         std::all_of(gen.begin(), gen.end(), [](unsigned char c) { return std::isalnum(c); });
}

}  // namespace

std::string_view AcceleratorFamily(std::string_view t) {
  size_t i = 0;
  while (i < t.size() && (std::isalpha(static_cast<unsigned char>(t[i])) || (t[i] == '-' && i + 1 < t.size() &&
                                                                             std::isalpha(static_cast<unsigned char>(t[i + 1]))))) {
    ++i;
  }
  return t.substr(0, i);
}

bool KnownAccelerator(std::string_view type) {
  return std::find(std::begin(kCatalogue), std::end(kCatalogue), type) != std::end(kCatalogue) || TpuSlice(type);
}

std::string_view PreciseAccelerator(std::string_view type) {
  // SkyPilot's Kubernetes and AMD catalogues name the MI300X "MI300".
  static constexpr std::pair<std::string_view, std::string_view> kLoose[] = {{"MI300", "MI300X"}};
  for (const auto& [loose, precise] : kLoose) {
    if (type == loose) return precise;
  }
  return {};
}

std::string AcceleratorHint(std::string_view type) {
  // "H200-8": a count after a dash instead of a colon.
  size_t dash = type.rfind('-');
  if (dash != std::string_view::npos && dash + 1 < type.size() && KnownAccelerator(type.substr(0, dash)) &&
      std::all_of(type.begin() + static_cast<long>(dash) + 1, type.end(), [](unsigned char c) { return std::isdigit(c); })) {
    return std::string(type.substr(0, dash)) + ":" + std::string(type.substr(dash + 1));
  }
  std::string_view family = AcceleratorFamily(type);
  std::vector<std::string_view> same;
  for (std::string_view k : kCatalogue) {
    if (AcceleratorFamily(k) == family) same.push_back(k);
  }
  return ClosestMatch(type, same);
}

}  // namespace causeway::spec
