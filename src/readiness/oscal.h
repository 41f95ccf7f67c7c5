// The readiness report as an OSCAL 1.1 assessment-results document (NIST's
// Open Security Controls Assessment Language), for GRC tools that read
// OSCAL: one result per report, one finding and one observation per control
// and provider, the evidence as links, the owners as responsible parties.
// An edge serializer: it reads a Report, nothing else.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "readiness/evaluate.h"

namespace causeway::readiness {

inline constexpr std::string_view kOscalVersion = "1.1.3";

// A stable UUID for `name` (a control and provider, an owner): the same
// subject keeps its UUID across exports, as OSCAL asks. Derived from the
// SHA-256 of the name, in RFC 4122's shape with version 5.
std::string NameUuid(std::string_view name);

// "AC-2" -> "ac-2", "AC-2(3)" -> "ac-2.3": NIST's ids as OSCAL catalogs
// spell them.
std::string OscalControlId(std::string_view nist_id);

// `document_uuid` identifies this export (a fresh one each time);
// `product_version` is Causeway's.
nlohmann::json ToOscalAssessmentResults(const Report& report, const std::string& document_uuid,
                                        const std::string& product_version);

}  // namespace causeway::readiness
