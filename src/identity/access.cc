#include "identity/access.h"

#include <algorithm>
#include <map>

#include "identity/scim/scim_schema.h"

namespace causeway::identity {

namespace {

const std::map<std::string_view, std::vector<std::string_view>>& RoleTable() {
  static const std::map<std::string_view, std::vector<std::string_view>> table = {
      {"admin", {kScopeAdmin}},
      {"platform",
       {kScopeJobsRead, kScopeJobsWrite, kScopeJobsManage, kScopeClustersRead, kScopeMetricsRead, kScopeTelemetryWrite,
        kScopeProvidersWrite, kScopeDatasetsWrite}},
      {"team-admin", {kScopeJobsRead, kScopeJobsWrite, kScopeJobsManage, kScopeClustersRead}},
      {"researcher", {kScopeJobsRead, kScopeJobsWrite, kScopeClustersRead}},
      {"finance", {kScopeCostRead, kScopeClustersRead}},
      {"auditor", {kScopeAuditRead, kScopeJobsRead, kScopeCostRead, kScopeClustersRead, kScopeMetricsRead}},
      {"viewer", {kScopeJobsRead, kScopeClustersRead}},
  };
  return table;
}

bool InGroups(const std::vector<std::string>& groups, const std::string& group) {
  return std::any_of(groups.begin(), groups.end(),
                     [&](const std::string& g) { return scim::EqualsIgnoreCase(g, group); });
}

// The scope an `access explain` action needs.
Result<std::string> ScopeOfAction(std::string_view action) {
  static const std::map<std::string_view, std::string_view> verbs = {
      {"submit", kScopeJobsWrite},  {"read", kScopeJobsRead},        {"cancel", kScopeJobsWrite},
      {"cancel-any", kScopeJobsManage}, {"audit", kScopeAuditRead},  {"cost", kScopeCostRead},
      {"provision", kScopeScimProvision}, {"outage", kScopeProvidersWrite}, {"metrics", kScopeMetricsRead},
  };
  if (auto it = verbs.find(action); it != verbs.end()) return std::string(it->second);
  if (std::find(std::begin(kAllScopes), std::end(kAllScopes), action) != std::end(kAllScopes)) {
    return std::string(action);
  }
  std::string list;
  for (const auto& [verb, scope] : verbs) list += (list.empty() ? "" : ", ") + std::string(verb);
  return InvalidArgument("unknown action \"" + std::string(action) + "\": expected a scope or one of " + list);
}

}  // namespace

bool IsRole(std::string_view role) { return RoleTable().count(role) > 0; }

std::vector<std::string> ScopesOfRole(std::string_view role) {
  auto it = RoleTable().find(role);
  if (it == RoleTable().end()) return {};
  return std::vector<std::string>(it->second.begin(), it->second.end());
}

std::vector<Grant> GrantsFor(const std::vector<Binding>& bindings, const std::vector<std::string>& groups) {
  std::vector<Grant> grants;
  for (const Binding& b : bindings) {
    if (!InGroups(groups, b.group)) continue;
    grants.push_back(Grant{b.role, b.team, b.group, b.source, ScopesOfRole(b.role)});
  }
  return grants;
}

Principal PersonPrincipal(std::string actor, std::string user, std::string user_id, std::vector<std::string> groups,
                          const std::vector<Binding>& bindings) {
  Principal p;
  p.token_id = std::move(actor);
  p.name = user;
  p.user = std::move(user);
  p.user_id = std::move(user_id);
  p.grants = GrantsFor(bindings, groups);
  p.groups = std::move(groups);
  for (const Grant& g : p.grants) {
    for (const std::string& s : g.scopes) {
      if (std::find(p.scopes.begin(), p.scopes.end(), s) == p.scopes.end()) p.scopes.push_back(s);
    }
  }
  return p;
}

Result<Explanation> Explain(const std::vector<Binding>& bindings, const std::vector<std::string>& groups,
                            std::string_view action, std::string_view team) {
  Explanation out;
  ASSIGN_OR_RETURN(out.scope, ScopeOfAction(action));
  for (const Binding& b : bindings) {
    Reason r{b.source, b.group, b.role, b.team};
    r.member = InGroups(groups, b.group);
    std::vector<std::string> scopes = ScopesOfRole(b.role);
    r.confers = std::any_of(scopes.begin(), scopes.end(),
                            [&](const std::string& s) { return s == out.scope || s == kScopeAdmin; });
    r.in_scope = b.team.empty() || team.empty() || b.team == team;
    out.allowed |= r.allows();
    out.reasons.push_back(std::move(r));
  }
  return out;
}

}  // namespace causeway::identity
