#include "readiness/catalog.h"

#include <cctype>

namespace causeway::readiness {

const std::vector<Control>& BuiltinCatalog() {
  static const std::vector<Control> kCatalog = {
      {"identity-federation", "Identity federation",
       "People sign in with the company's identity provider; no local accounts are kept for them.",
       {"IA-2", "IA-8", "AC-2"},
       "the estate's identity.oidc issuer, and the people provisioned from the directory (SCIM)",
       Evidence::kIdentityFederation},
      {"group-role-mapping", "Group to role mapping",
       "Rights come from directory groups bound to roles, not from grants to individuals.",
       {"AC-2", "AC-3", "AC-6"},
       "the estate's access bindings of directory groups to roles",
       Evidence::kGroupRoleMapping},
      {"deprovisioning", "Deprovisioning",
       "A person who leaves loses every token, session and queued job at once.",
       {"AC-2", "PS-4"},
       "the deprovisioning policy (identity.deprovision) and the latest identity acceptance run",
       Evidence::kDeprovisioning},
      {"least-privilege", "Least privilege",
       "Each person and credential holds only the scopes its work needs.",
       {"AC-6"},
       "bindings scoped to teams rather than the whole estate, and service tokens without the admin scope",
       Evidence::kLeastPrivilege},
      {"workload-identity", "Workload identity without static keys",
       "Jobs reach clouds and secret stores with short-lived workload tokens, never long-lived keys in their "
       "environment.",
       {"IA-5", "IA-9", "SC-12"},
       "the workload token issuer (identity.workload)",
       Evidence::kWorkloadIdentity},
      {"secrets-distribution", "Secrets distribution",
       "Secrets reach jobs sealed, are never stored or shown in clear, and are named, not valued, in the trail.",
       {"IA-5", "SC-12", "SC-28"},
       "secrets sealed with AES-256-GCM under a key kept outside the database",
       Evidence::kSecretsDistribution},
      {"audit-forwarding", "Audit forwarding to the SIEM",
       "Control-plane and data-plane events reach the enterprise SIEM, with a known retention.",
       {"AU-6", "AU-9", "AU-11"},
       "the audit trail's hash chain, signed checkpoints, and the retention the estate's audit section declares",
       Evidence::kAuditForwarding},
      {"data-plane-logging", "Data-plane logging per bucket",
       "Object-level access to every bucket holding training data or checkpoints is logged.",
       {"AU-2", "AU-12"},
       "the buckets and organisation-wide data logging the estate's audit section declares (audit coverage)",
       Evidence::kDataPlaneLogging},
      {"residency", "Residency of data, checkpoints, logs, artifacts and backups",
       "Work bound to a residency zone keeps its data, checkpoints, logs, artifacts and backups in that zone.",
       {"SA-9", "CP-9"},
       "require-residency policies, and the residency zone of every region the provider offers",
       Evidence::kResidency},
      {"support-access", "Where support staff can access the environment",
       "It is known from where, and under what approval, the provider's support staff can reach the environment.",
       {"SA-9", "MA-4", "AC-17"},
       "the provider's own declaration of its support-staff locations, with its source and date",
       Evidence::kSupportAccess},
      {"patching", "OS and driver patching",
       "Operating systems, GPU drivers and CUDA on the nodes are known and kept current.",
       {"SI-2", "CM-2"},
       "the OS, driver and CUDA each pool declares, and what the provenance probe found on the nodes",
       Evidence::kPatching},
      {"privileged-access-review", "Privileged access review",
       "Who holds admin rights is reviewed, and the review is recorded.",
       {"AC-2", "AC-6"},
       "the bindings to the admin and platform roles, reviewed by the control's owner",
       Evidence::kPrivilegedAccessReview},
      {"break-glass", "Break-glass access",
       "Emergency access is off until configured, approved by another person, time-bound and audited.",
       {"AC-2", "AU-6"},
       "identity.breakglass: enabled, approvers, self-approval and the longest grant",
       Evidence::kBreakglass},
      {"on-call", "On-call owner and escalation per provider",
       "Each provider has a named on-call owner and an escalation path.",
       {"IR-4", "IR-7"},
       "the control's owner per provider, and the provider's declared support and escalation terms",
       Evidence::kOnCall},
      {"restore-rehearsal", "Restore rehearsal",
       "Recovery onto other capacity is rehearsed and meets its objective: batch work resuming from a checkpoint, "
       "and services serving traffic from their alternate place.",
       {"CP-4", "CP-9", "CP-10"},
       "the recovery and failover acceptance runs, and the recovery-time objective the estate declares",
       Evidence::kRestoreRehearsal},
      {"capacity-fallback", "Capacity fallback",
       "Work can resume on another provider when one goes down.",
       {"CP-2", "CP-7", "CP-10"},
       "other providers' pools with the same GPU type",
       Evidence::kCapacityFallback},
      {"image-pinning", "Image pinning",
       "Jobs run container images pinned by digest, not by a mutable tag.",
       {"CM-2", "SI-7"},
       "admission policies that require pinned images",
       Evidence::kImagePinning},
      {"cost-labels", "Cost-owner labels",
       "Every GPU-hour has a team and an owner who answers for its cost.",
       {"CM-8", "PM-3"},
       "admission policies that require owner labels, and the teams with budgets",
       Evidence::kCostLabels},
      {"idle-reaping", "Idle-GPU reaping",
       "GPUs held idle are found and released.",
       {"CM-8", "PM-3"},
       "the reaper policies and the GPU telemetry they read",
       Evidence::kIdleReaping},
      {"reproducibility", "Reproducibility records",
       "Every run leaves a signed record of what ran, where, on what and from which data.",
       {"CM-2", "CM-3", "AU-10"},
       "signed provenance records, sealed when each job ends",
       Evidence::kReproducibility},
  };
  return kCatalog;
}

const Control* FindBuiltin(std::string_view id) {
  for (const Control& c : BuiltinCatalog()) {
    if (c.id == id) return &c;
  }
  return nullptr;
}

bool IsNistId(std::string_view id) {
  if (id.size() < 4 || !std::isupper(static_cast<unsigned char>(id[0])) ||
      !std::isupper(static_cast<unsigned char>(id[1])) || id[2] != '-') {
    return false;
  }
  size_t i = 3, digits = 0;
  while (i < id.size() && std::isdigit(static_cast<unsigned char>(id[i]))) ++i, ++digits;
  if (digits == 0 || digits > 2) return false;
  if (i == id.size()) return true;
  if (id[i] != '(' || id.back() != ')') return false;
  std::string_view inner = id.substr(i + 1, id.size() - i - 2);
  if (inner.empty() || inner.size() > 2) return false;
  for (char c : inner) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace causeway::readiness
