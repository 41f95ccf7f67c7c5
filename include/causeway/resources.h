// GPU resources: a type (normalized upper case, e.g. "H200", "A100-80GB") and a
// count of whole GPUs per node.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "causeway/status.h"

namespace causeway {

struct GpuRequest {
  std::string type;
  int count = 1;

  // "H200:8".
  std::string ToString() const { return type + ":" + std::to_string(count); }
  bool operator==(const GpuRequest&) const = default;
};

// Largest count accepted per node; no node sold today carries more.
inline constexpr int kMaxGpusPerNode = 64;

// CPU-only pools and jobs. Their unit is one CPU, and they go by this name
// wherever a GPU type is named (pools, quota flavors "CPU" and "CPU-spot",
// prices per CPU-hour, reservations), so admission, quotas, routing and cost
// treat them as they treat GPUs. It is never an accelerator a job may ask for.
inline constexpr std::string_view kCpuType = "CPU";
// CPUs per node of a CPU-only job that does not set resources.cpus: the size
// of SkyPilot's default CPU instance.
inline constexpr int kDefaultCpusPerNode = 8;
// Largest CPU count of one CPU-only node.
inline constexpr int kMaxCpusPerNode = 1024;

// Whether a quota flavor (an attempt's) counts CPUs: "CPU" or "CPU-spot".
inline bool IsCpuFlavor(std::string_view flavor) { return flavor == kCpuType || flavor == "CPU-spot"; }

// What `n` units of a GPU type or quota flavor are called: "H100 GPUs",
// "H100-spot GPU", and for kCpuType "CPUs", "spot CPU".
inline std::string UnitName(std::string_view type, long long n) {
  std::string plural = n == 1 ? "" : "s";
  if (type == kCpuType) return "CPU" + plural;
  if (type == "CPU-spot") return "spot CPU" + plural;
  return std::string(type) + " GPU" + plural;
}

// `n` of them in words: "8 H100 GPUs", "8 CPUs".
inline std::string CountOf(std::string_view type, long long n) { return std::to_string(n) + " " + UnitName(type, n); }

// Normalizes and checks a GPU type name: letters, digits and '-', upper-cased.
Result<std::string> NormalizeGpuType(std::string_view type);

// Parses "H200:8", "h200" (count 1) or "A100-80GB:4". Fractional or
// non-positive counts are rejected with a message saying what is accepted.
Result<GpuRequest> ParseGpuRequest(std::string_view text);

// One way a job may run: a GPU request and where and how. A job file with
// several (an accelerator set or list, SkyPilot's `any_of` / `ordered`
// entries) has one per combination; the parser fills every field, the job's
// own infra, use_spot and image_id merged into the entries that do not
// override them, so consumers never look further.
struct Alternative : GpuRequest {
  std::string cloud;   // provider; "" = any
  std::string region;  // "" = any
  std::string zone;    // "" = any
  bool use_spot = false;
  std::string image_id;  // "" = the cluster's default image

  // "H100:8", then " on aws/us-east-1", " spot" and " image …" when set.
  std::string Describe() const;
  bool operator==(const Alternative&) const = default;
};

// A job's accelerator demand: one or more alternatives. With `ordered` the
// first alternative is preferred, then the next; otherwise any will do.
struct Accelerators {
  std::vector<Alternative> alternatives;
  bool ordered = false;

  bool empty() const { return alternatives.empty(); }
  // "H200:8" or "H100:8|A100-80GB:8" ("," instead of "|" when ordered).
  std::string ToString() const;
};

}  // namespace causeway
