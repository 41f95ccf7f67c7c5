// The controls catalog (docs/readiness.md): the controls a business already
// trusts for a GPU workload, each with its NIST SP 800-53 rev5 mapping and
// how Causeway evidences it. Built in; an estate adds controls of its own
// and may override a built-in control's text and mapping (readiness:
// controls), never how Causeway evidences it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace causeway::readiness {

// How a control's state is found: each kind is computed by Evaluate from
// what Causeway knows (readiness/evaluate.h). kDeclared: a control the
// estate added, evidenced by its owner and the providers' declarations
// alone.
enum class Evidence {
  kIdentityFederation,
  kGroupRoleMapping,
  kDeprovisioning,
  kLeastPrivilege,
  kWorkloadIdentity,
  kSecretsDistribution,
  kAuditForwarding,
  kDataPlaneLogging,
  kResidency,
  kSupportAccess,
  kPatching,
  kPrivilegedAccessReview,
  kBreakglass,
  kOnCall,
  kRestoreRehearsal,
  kCapacityFallback,
  kImagePinning,
  kCostLabels,
  kIdleReaping,
  kReproducibility,
  kDeclared,
};

struct Control {
  std::string id;                 // "identity-federation"
  std::string title;              // "Identity federation"
  std::string description;        // what must be true
  std::vector<std::string> nist;  // NIST SP 800-53 rev5 control ids: "AC-2", "IA-2"
  std::string how;                // how Causeway evidences it, in words
  Evidence evidence = Evidence::kDeclared;
};

// The built-in controls, in the order reports list them.
const std::vector<Control>& BuiltinCatalog();

// The built-in control with this id, or null.
const Control* FindBuiltin(std::string_view id);

// A NIST SP 800-53 rev5 control id: two letters, "-", a number, and an
// optional enhancement in parentheses ("AC-2", "AC-2(3)").
bool IsNistId(std::string_view id);

}  // namespace causeway::readiness
