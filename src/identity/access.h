// Roles, and their bindings to the identity provider's groups. A person's
// rights are the scopes of the roles their groups are bound to, each for
// one team or for all; nothing is granted to a person directly, so a change
// of group membership (SCIM or the IdP's token) is a change of rights.
//
//   admin       everything
//   platform    every team's jobs (read, submit, cancel any), clusters,
//               metrics, telemetry, provider outages
//   team-admin  the team's jobs (read, submit, cancel any)
//   researcher  the team's jobs (read, submit), cancel their own
//   finance     costs and bills, clusters (cost reports cover every team:
//               a cost role bound to one team is refused them)
//   auditor     the audit trail, every job (read), costs, clusters, metrics
//   viewer      jobs (read), clusters
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "causeway/estate.h"
#include "identity/tokens.h"

namespace causeway::identity {

// A role bound to a group (its display name, compared ignoring case), for
// one team ("" for every team); the roles are causeway::kRoleNames.
using Binding = AccessBinding;

bool IsRole(std::string_view role);
// The scopes `role` confers; empty for an unknown role.
std::vector<std::string> ScopesOfRole(std::string_view role);

// The grants of someone in `groups` under `bindings`.
std::vector<Grant> GrantsFor(const std::vector<Binding>& bindings, const std::vector<std::string>& groups);

// A person's principal: `actor` names them in the audit trail.
Principal PersonPrincipal(std::string actor, std::string user, std::string user_id, std::vector<std::string> groups,
                          const std::vector<Binding>& bindings);

// One line of `access explain`: a binding and what it decides.
struct Reason {
  std::string source;
  std::string group;
  std::string role;
  std::string team;
  bool member = false;    // the person is in the group
  bool confers = false;   // the role has the scope the action needs
  bool in_scope = false;  // the binding's team covers the resource's
  bool allows() const { return member && confers && in_scope; }
};
struct Explanation {
  bool allowed = false;
  std::string scope;  // what the action needs
  std::vector<Reason> reasons;
};
// Why `groups` may or may not perform `action` (a scope such as
// jobs:write, or a verb: submit, read, cancel, cancel-any, audit, cost,
// provision) on `team`'s resources ("" for none in particular).
Result<Explanation> Explain(const std::vector<Binding>& bindings, const std::vector<std::string>& groups,
                            std::string_view action, std::string_view team);

}  // namespace causeway::identity
