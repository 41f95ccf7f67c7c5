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
