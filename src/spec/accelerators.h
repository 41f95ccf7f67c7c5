// The accelerator names job files use, as SkyPilot's catalogue names them:
// NVIDIA and AMD GPUs, Google TPUs, AWS Trainium and Inferentia, Intel
// Gaudi. A name outside it is most often a typo ("H20O", "H200-8"), so a
// file naming one is told what it probably meant, within the same family
// (a V-something is never told "did you mean H100").
#pragma once

#include <string>
#include <string_view>

namespace causeway::spec {

// Whether `type` (upper case, as NormalizeGpuType gives it) is known.
bool KnownAccelerator(std::string_view type);

// The letters a name starts with ("H" for H200, "MI" for MI300X, "TPU-V"
// for TPU slices): hints stay within a family.
std::string_view AcceleratorFamily(std::string_view type);

// Names SkyPilot accepts that stand for a more precise one of the
// catalogue ("MI300" for "MI300X"): the precise name, or "" when `type` is
// not such a name. A file naming one is accepted, with a warning.
std::string_view PreciseAccelerator(std::string_view type);

// For an unknown name, the likely intended one ("H200:8" for "H200-8",
// "H200" for "H20O"), or "" when nothing in its family is close.
std::string AcceleratorHint(std::string_view type);

}  // namespace causeway::spec
