// People's access end to end against a real server: every API route
// against every role (the authorization matrix), break-glass with an
// approver and a real webhook receiver, and a scan showing that no token
// or secret reaches a log line, an error body or the audit trail.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "causeway/crypto.h"
#include "causeway/estate.h"
#include "node_peer.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

constexpr const char* kUserSchema = "urn:ietf:params:scim:schemas:core:2.0:User";
constexpr const char* kGroupSchema = "urn:ietf:params:scim:schemas:core:2.0:Group";
constexpr const char* kRoles[] = {"admin", "platform", "team-admin", "researcher", "finance", "auditor", "viewer"};

// A server whose estate binds one group per role, and a person in each.
class People {
 public:
  explicit People(TempDir& dir, const std::string& extra_identity = "") {
    std::string estate = std::string(DefaultEstateYaml()) + "\naccess:\n";
    for (const char* role : kRoles) {
      bool team_scoped = std::string(role) == "team-admin" || std::string(role) == "researcher";
      estate += std::string("  - {group: ") + role + "s, role: " + role + (team_scoped ? ", team: nlp" : "") + "}\n";
    }
    if (!extra_identity.empty()) estate += "identity:\n" + extra_identity;
    std::ofstream(dir.path() + "/estate.yaml") << estate;
    server_ = ServerProcess::Start(dir.path() + "/data", {"--estate", dir.path() + "/estate.yaml"});
    client_.emplace(server_->Client());
    scim_ = Call(admin(), "POST", "/v1/tokens", {{"name", "idp"}, {"scopes", {"scim:provision"}}}).second["secret"];
    secrets_.push_back(scim_);
    for (const char* role : kRoles) {
      std::string user = std::string(role) + "@corp.example";
      auto u = Call(scim_, "POST", "/scim/v2/Users",
                    {{"schemas", {kUserSchema}}, {"userName", user}, {"password", "pw-" + user + "-S3cret!"}});
      EXPECT_EQ(u.first, 201) << u.second;
      secrets_.push_back("pw-" + user + "-S3cret!");
      auto g = Call(scim_, "POST", "/scim/v2/Groups",
                    {{"schemas", {kGroupSchema}}, {"displayName", std::string(role) + "s"},
                     {"members", {{{"value", u.second["id"]}}}}});
      EXPECT_EQ(g.first, 201) << g.second;
      // A token acting for the person: whatever their roles allow.
      auto t = Call(admin(), "POST", "/v1/tokens", {{"name", std::string(role) + "-cli"}, {"scopes", {"admin"}}, {"user", user}});
      EXPECT_EQ(t.first, 201) << t.second;
      tokens_[role] = t.second["secret"];
      secrets_.push_back(tokens_[role]);
    }
  }
  std::pair<int, json> Call(const std::string& token, const std::string& method, const std::string& path,
                            const json& body = nullptr) {
    auto r = client_->Send(method, path, body.is_null() ? "" : body.dump(), Auth(token));
    EXPECT_TRUE(r.ok());
    bodies_.push_back(r->body);
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  const std::string& admin() const { return server_->admin_token(); }
  const std::string& token(const std::string& role) { return tokens_[role]; }
  ServerProcess& server() { return *server_; }
  std::vector<std::string>& secrets() { return secrets_; }
  const std::vector<std::string>& bodies() const { return bodies_; }

 private:
  std::unique_ptr<ServerProcess> server_;
  std::optional<net::HttpClient> client_;
  std::string scim_;
  std::map<std::string, std::string> tokens_;
  std::vector<std::string> secrets_;
  std::vector<std::string> bodies_;
};

// What each role may reach, written out here independently of the
// implementation's tables: the scope a route needs, the roles that have it.
const std::map<std::string, std::set<std::string>>& RolesWithScope() {
  static const std::map<std::string, std::set<std::string>> m = {
      {"", {"admin", "platform", "team-admin", "researcher", "finance", "auditor", "viewer"}},
      {"jobs:read", {"admin", "platform", "team-admin", "researcher", "auditor", "viewer"}},
      {"jobs:write", {"admin", "platform", "team-admin", "researcher"}},
      {"clusters:read", {"admin", "platform", "team-admin", "researcher", "finance", "auditor", "viewer"}},
      {"metrics:read", {"admin", "platform", "auditor"}},
      {"cost:read", {"admin", "finance", "auditor"}},
      {"audit:read", {"admin", "auditor"}},
      {"telemetry:write", {"admin", "platform"}},
      {"providers:write", {"admin", "platform"}},
      {"scim:provision", {"admin"}},
      {"admin", {"admin"}},
  };
  return m;
}

struct RouteCase {
  const char* method;
  const char* path;
  const char* scope;
};

const std::vector<RouteCase>& Routes() {
  static const std::vector<RouteCase> routes = {
      {"GET", "/v1/whoami", ""},
      {"GET", "/metrics", "metrics:read"},
      {"POST", "/v1/jobs", "jobs:write"},
      {"GET", "/v1/jobs?team=nlp", "jobs:read"},
      {"GET", "/v1/jobs/job_none", "jobs:read"},
      {"POST", "/v1/jobs/job_none/cancel", "jobs:write"},
      {"GET", "/v1/jobs/job_none/explain", "jobs:read"},
      {"POST", "/v1/jobs/job_none/checkpoints", "jobs:write"},
      {"GET", "/v1/jobs/job_none/logs", "jobs:read"},
      {"GET", "/v1/jobs/job_none/checkpoints", "jobs:read"},
      {"GET", "/v1/jobs/job_none/provenance", "jobs:read"},
      {"POST", "/v1/jobs/job_none/facts", "jobs:write"},
      {"GET", "/v1/jobs/job_none/rerun", "jobs:read"},
      {"GET", "/v1/provenance/keys", ""},
      {"GET", "/v1/provenance/export", "audit:read"},
      {"GET", "/v1/readiness", "audit:read"},
      {"GET", "/v1/readiness/controls", "audit:read"},
      {"GET", "/v1/readiness/oscal", "audit:read"},
      {"GET", "/v1/readiness/questions", "audit:read"},
      {"POST", "/v1/acceptance/runs", "admin"},
      {"GET", "/v1/acceptance/runs", "audit:read"},
      {"GET", "/v1/queues", "jobs:read"},
      {"POST", "/v1/providers/nebius/outage", "providers:write"},
      {"GET", "/v1/clusters", "clusters:read"},
      {"GET", "/v1/cost/showback", "cost:read"},
      {"GET", "/v1/cost/bills", "cost:read"},
      {"POST", "/v1/telemetry", "telemetry:write"},
      {"POST", "/v1/jobs/job_none/telemetry", "telemetry:write"},
      {"GET", "/v1/audit", "audit:read"},
      {"GET", "/v1/audit/verify", "audit:read"},
      {"POST", "/v1/tokens", "admin"},
      {"GET", "/v1/tokens", "admin"},
      {"POST", "/v1/tokens/tok_none/revoke", "admin"},
      {"POST", "/v1/jobs/job_none/workload-token", "admin"},
      {"POST", "/v1/identity/keys/rotate", "admin"},
      {"GET", "/v1/people/nobody@corp.example/credentials", "audit:read"},
      {"POST", "/v1/people/nobody@corp.example/sync", "admin"},
      {"POST", "/v1/people/nobody@corp.example/deactivate", "admin"},
      {"GET", "/v1/access/explain?user=x&action=read", "audit:read"},
      {"GET", "/v1/breakglass", "audit:read"},
      {"POST", "/v1/breakglass/bg_none/approve", "admin"},  // an admin through a group
      {"POST", "/v1/breakglass/bg_none/revoke", ""},
      {"POST", "/v1/breakglass/bg_none/credential", ""},
      {"POST", "/v1/tokens/tok_none/rotate", "admin"},
      {"POST", "/v1/tokens/tok_none/reassign", "admin"},
      {"GET", "/v1/access/bindings", "audit:read"},
      {"POST", "/v1/access/bindings", "admin"},
      {"DELETE", "/v1/access/bindings/bnd_none", "admin"},
      {"POST", "/v1/access/bindings/bnd_none/confirm", "admin"},
      {"POST", "/v1/breakglass", ""},
      {"POST", "/v1/audit/imports?source=k8s&provider=x", "admin"},
      {"GET", "/v1/audit/search", "audit:read"},
      {"GET", "/v1/audit/people/nobody@corp.example", "audit:read"},
      {"GET", "/v1/audit/links", "audit:read"},
      {"POST", "/v1/audit/links", "admin"},
      {"DELETE", "/v1/audit/links/lnk_none", "admin"},
      {"POST", "/v1/audit/checkpoints", "admin"},
      {"GET", "/v1/audit/keys", "audit:read"},
      {"GET", "/v1/audit/coverage", "audit:read"},
      {"GET", "/scim/v2/Users", "scim:provision"},
      {"POST", "/scim/v2/Users", "scim:provision"},
      {"GET", "/scim/v2/Users/usr_none", "scim:provision"},
      {"PUT", "/scim/v2/Users/usr_none", "scim:provision"},
      {"PATCH", "/scim/v2/Users/usr_none", "scim:provision"},
      {"DELETE", "/scim/v2/Users/usr_none", "scim:provision"},
      {"GET", "/scim/v2/Groups", "scim:provision"},
      {"POST", "/scim/v2/Groups", "scim:provision"},
      {"GET", "/scim/v2/Groups/grp_none", "scim:provision"},
      {"PUT", "/scim/v2/Groups/grp_none", "scim:provision"},
      {"PATCH", "/scim/v2/Groups/grp_none", "scim:provision"},
      {"DELETE", "/scim/v2/Groups/grp_none", "scim:provision"},
      {"GET", "/scim/v2/ServiceProviderConfig", "scim:provision"},
      {"GET", "/scim/v2/Schemas", "scim:provision"},
      {"GET", "/scim/v2/Schemas/urn:ietf:params:scim:schemas:core:2.0:User", "scim:provision"},
      {"GET", "/scim/v2/ResourceTypes", "scim:provision"},
      {"GET", "/scim/v2/ResourceTypes/User", "scim:provision"},
  };
  return routes;
}

TEST(IdentityTest, AuthorizationMatrixEveryRouteByEveryRole) {
  TempDir dir("matrix");
  People people(dir);
  const std::vector<RouteCase>& routes = Routes();
  int checked = 0;
  for (const RouteCase& route : routes) {
    for (const char* role : kRoles) {
      auto r = people.Call(people.token(role), route.method, route.path, json::object());
      bool allowed = RolesWithScope().at(route.scope).count(role) > 0;
      if (allowed) {
        EXPECT_NE(r.first, 401) << role << " " << route.method << " " << route.path << ": " << r.second;
        EXPECT_NE(r.first, 403) << role << " " << route.method << " " << route.path << ": " << r.second;
      } else {
        EXPECT_EQ(r.first, 403) << role << " " << route.method << " " << route.path << ": " << r.second;
      }
      ++checked;
    }
    // No token at all: refused everywhere.
    auto anonymous = people.Call("", route.method, route.path, json::object());
    EXPECT_EQ(anonymous.first, 401) << route.method << " " << route.path;
  }
  EXPECT_EQ(checked, static_cast<int>(routes.size() * std::size(kRoles)));
  // The only routes open to anyone: health, and what clouds read to trust
  // workload tokens (not configured here, so not found).
  for (const char* open : {"/healthz", "/.well-known/openid-configuration", "/jwks"}) {
    auto r = people.Call("", "GET", open);
    EXPECT_NE(r.first, 401) << open;
  }
}

// The grant's own credential from an approved request.
std::string CredentialOf(People& people, const std::string& requester, const std::string& id) {
  auto c = people.Call(requester, "POST", "/v1/breakglass/" + id + "/credential");
  EXPECT_EQ(c.first, 201) << c.second;
  std::string secret = c.second.value("secret", "");
  people.secrets().push_back(secret);
  return secret;
}

TEST(IdentityTest, BreakglassIsOffUnlessConfiguredAndNeverHandsOutAdminByDefault) {
  TempDir dir("breakglass-off");
  People people(dir);
  // A person in no group at all, with a token narrowed to jobs:read.
  auto narrow = people.Call(people.admin(), "POST", "/v1/tokens",
                            {{"name", "narrow"}, {"scopes", {"jobs:read"}}, {"user", "viewer@corp.example"}});
  ASSERT_EQ(narrow.first, 201);
  std::string token = narrow.second["secret"];
  auto asked = people.Call(token, "POST", "/v1/breakglass", {{"role", "admin"}, {"reason", "incident INC-4711 triage"}});
  EXPECT_EQ(asked.first, 409) << asked.second;
  EXPECT_EQ(asked.second["error"]["code"], "failed_precondition");
  EXPECT_NE(asked.second["error"]["message"].get<std::string>().find("break-glass is off"), std::string::npos);
  EXPECT_EQ(people.Call(token, "POST", "/v1/tokens", {{"name", "x"}, {"scopes", {"admin"}}}).first, 403);
  EXPECT_EQ(people.Call(token, "POST", "/v1/access/bindings", {{"group", "viewers"}, {"role", "admin"}}).first, 403);
}

TEST(IdentityTest, BreakglassNeedsAnApproverWorksOnlyThroughItsCredentialAndEveryUseIsAuditedAndAnnounced) {
  if (std::string why = PeersMissing(); !why.empty()) GTEST_SKIP() << "identity peers unavailable: " << why;
  TempDir dir("breakglass");
  std::string received = dir.path() + "/webhook.jsonl";
  NodePeer hook("webhook.mjs", {received});
  std::string url = hook.first_line().substr(hook.first_line().find(' ') + 1);
  People people(dir, "  breakglass: {max_duration: 2h, roles: [admin, auditor], groups: [viewers, researchers], webhook: " +
                         url + "}\n");
  const std::string viewer = people.token("viewer");
  ASSERT_EQ(people.Call(viewer, "GET", "/v1/audit").first, 403);

  // Asked for with too little reason, an unoffered role, too long: refused.
  EXPECT_EQ(people.Call(viewer, "POST", "/v1/breakglass", {{"role", "auditor"}, {"reason", "pls"}}).first, 400);
  EXPECT_EQ(people.Call(viewer, "POST", "/v1/breakglass", {{"role", "platform"}, {"reason", "incident INC-4711 triage"}}).first, 400);
  EXPECT_EQ(people.Call(viewer, "POST", "/v1/breakglass",
                        {{"role", "auditor"}, {"reason", "incident INC-4711 triage"}, {"duration", "3h"}})
                .first,
            400);
  // A service token is nobody, and a person outside the configured groups
  // may not ask.
  EXPECT_EQ(people.Call(people.admin(), "POST", "/v1/breakglass",
                        {{"role", "auditor"}, {"reason", "incident INC-4711 triage"}})
                .first,
            403);
  EXPECT_EQ(people.Call(people.token("finance"), "POST", "/v1/breakglass",
                        {{"role", "auditor"}, {"reason", "incident INC-4711 triage"}})
                .first,
            403);

  auto asked = people.Call(viewer, "POST", "/v1/breakglass",
                           {{"role", "admin"}, {"reason", "incident INC-4711 triage"}, {"duration", "1h"}});
  ASSERT_EQ(asked.first, 201) << asked.second;
  std::string id = asked.second["breakglass"]["id"];
  EXPECT_TRUE(asked.second["breakglass"]["expires_at"].is_null());  // waits for its approver
  EXPECT_FALSE(asked.second.contains("credential"));
  EXPECT_EQ(people.Call(viewer, "POST", "/v1/breakglass/" + id + "/credential").first, 409);  // not approved
  EXPECT_EQ(people.Call(viewer, "POST", "/v1/breakglass/" + id + "/approve").first, 403);  // not their own
  EXPECT_EQ(people.Call(people.token("platform"), "POST", "/v1/breakglass/" + id + "/approve").first, 403);
  // The list says where the grant stands and whether the caller may approve it.
  auto listed = people.Call(people.token("admin"), "GET", "/v1/breakglass");
  ASSERT_EQ(listed.first, 200) << listed.second;
  ASSERT_EQ(listed.second["breakglass"].size(), 1u);
  EXPECT_EQ(listed.second["breakglass"][0]["state"], "requested");
  EXPECT_TRUE(listed.second["breakglass"][0]["can_approve"]);
  // An admin through a group, with a token narrowed to jobs:read: it gets
  // 403 on /v1/tokens, and approves nothing either.
  auto narrow = people.Call(people.admin(), "POST", "/v1/tokens",
                            {{"name", "narrow-admin"}, {"scopes", {"jobs:read"}}, {"user", "admin@corp.example"}});
  ASSERT_EQ(narrow.first, 201) << narrow.second;
  const std::string narrowed = narrow.second["secret"];
  EXPECT_EQ(people.Call(narrowed, "GET", "/v1/tokens").first, 403);
  auto refused = people.Call(narrowed, "POST", "/v1/breakglass/" + id + "/approve");
  EXPECT_EQ(refused.first, 403) << refused.second;
  auto approved = people.Call(people.token("admin"), "POST", "/v1/breakglass/" + id + "/approve");
  ASSERT_EQ(approved.first, 200) << approved.second;
  EXPECT_EQ(approved.second["breakglass"]["approved_by"], "admin@corp.example");
  EXPECT_EQ(approved.second["breakglass"]["state"], "active");

  // The requester's own token is not widened, now or later.
  EXPECT_EQ(people.Call(viewer, "GET", "/v1/audit").first, 403);
  EXPECT_EQ(people.Call(viewer, "POST", "/v1/tokens", {{"name", "x"}, {"scopes", {"admin"}}}).first, 403);
  // Only the requester receives the credential, once.
  EXPECT_EQ(people.Call(people.token("admin"), "POST", "/v1/breakglass/" + id + "/credential").first, 403);
  std::string credential = CredentialOf(people, viewer, id);
  EXPECT_EQ(people.Call(viewer, "POST", "/v1/breakglass/" + id + "/credential").first, 409);  // issued already
  auto me = people.Call(credential, "GET", "/v1/whoami");
  ASSERT_EQ(me.second["grants"].size(), 1u) << me.second;  // the granted role, nothing else
  EXPECT_EQ(me.second["grants"][0]["source"], "breakglass/" + id);
  // A grant's credential cannot approve, nor ask for more.
  EXPECT_EQ(people.Call(credential, "POST", "/v1/breakglass", {{"role", "admin"}, {"reason", "incident INC-4711 again"}}).first, 403);

  // Elevated work: a token and a role binding made with the credential.
  auto minted = people.Call(credential, "POST", "/v1/tokens", {{"name", "made-elevated"}, {"scopes", {"admin"}}});
  ASSERT_EQ(minted.first, 201) << minted.second;
  std::string minted_secret = minted.second["secret"];
  people.secrets().push_back(minted_secret);
  EXPECT_EQ(minted.second["token"]["breakglass"], id);
  EXPECT_EQ(minted.second["token"]["creator"], "viewer@corp.example");
  EXPECT_EQ(people.Call(minted_secret, "GET", "/v1/audit").first, 200);
  auto bound = people.Call(credential, "POST", "/v1/access/bindings", {{"group", "viewers"}, {"role", "admin"}});
  ASSERT_EQ(bound.first, 201) << bound.second;
  EXPECT_EQ(bound.second["binding"]["confirmed"], false);
  std::string binding = bound.second["binding"]["source"].get<std::string>().substr(8);  // "binding/"
  // Listed in the grant's record, flagged, and reported by coverage.
  auto list = people.Call(people.admin(), "GET", "/v1/breakglass");
  json created;
  for (const json& g : list.second["breakglass"]) {
    if (g["id"] == id) created = g["created"];
  }
  EXPECT_EQ(created["tokens"].size(), 2u) << created;  // the credential and the token it made
  ASSERT_EQ(created["bindings"].size(), 1u) << created;
  EXPECT_EQ(created["bindings"][0]["confirmed"], false);
  auto coverage = people.Call(people.token("auditor"), "GET", "/v1/audit/coverage");
  bool flagged = false;
  for (const json& f : coverage.second["findings"]) flagged |= f["kind"] == "breakglass-binding-unconfirmed";
  EXPECT_TRUE(flagged) << coverage.second;

  auto uses = people.Call(people.admin(), "GET", "/v1/audit?action=breakglass.use");
  ASSERT_GE(uses.second["events"].size(), 3u) << uses.second;
  EXPECT_EQ(uses.second["events"][0]["details"]["user"], "viewer@corp.example");
  EXPECT_EQ(uses.second["events"][0]["resource"], "breakglass/" + id);

  // Revoked: the credential and everything made under it stop at once.
  ASSERT_EQ(people.Call(viewer, "POST", "/v1/breakglass/" + id + "/revoke").first, 200);
  EXPECT_EQ(people.Call(credential, "GET", "/v1/whoami").first, 401);
  EXPECT_EQ(people.Call(minted_secret, "GET", "/v1/whoami").first, 401);
  EXPECT_EQ(people.Call(viewer, "GET", "/v1/audit").first, 403);
  // The binding stays flagged until an admin (not its maker) confirms it.
  EXPECT_EQ(people.Call(viewer, "POST", "/v1/access/bindings/" + binding + "/confirm").first, 403);
  auto confirmed = people.Call(people.token("admin"), "POST", "/v1/access/bindings/" + binding + "/confirm");
  ASSERT_EQ(confirmed.first, 200) << confirmed.second;
  EXPECT_EQ(confirmed.second["binding"]["confirmed"], true);

  // A short grant's credential expires with it.
  auto brief = people.Call(people.token("researcher"), "POST", "/v1/breakglass",
                           {{"role", "auditor"}, {"reason", "incident INC-4712 triage"}, {"duration", "3s"}});
  std::string brief_id = brief.second["breakglass"]["id"];
  ASSERT_EQ(people.Call(people.token("admin"), "POST", "/v1/breakglass/" + brief_id + "/approve").first, 200);
  std::string brief_credential = CredentialOf(people, people.token("researcher"), brief_id);
  EXPECT_EQ(people.Call(brief_credential, "GET", "/v1/audit").first, 200);
  EXPECT_TRUE(Eventually([&] { return people.Call(brief_credential, "GET", "/v1/audit").first == 401; }));

  // The webhook heard of each kind of event.
  std::set<std::string> events;
  ASSERT_TRUE(Eventually([&] {
    std::ifstream in(received);
    std::string line;
    while (std::getline(in, line)) events.insert(json::parse(line, nullptr, false).value("event", ""));
    return events.count("breakglass.revoke") > 0;
  }));
  for (const char* e : {"breakglass.request", "breakglass.approve", "breakglass.use", "breakglass.revoke"}) {
    EXPECT_TRUE(events.count(e)) << e;
  }
}

// Every route, by the requester's own token and by the grant's credential,
// before a grant is approved, while it lasts and after it ends: the own
// token never gains anything; the credential has exactly the granted role,
// and nothing at all once the grant is over.
TEST(IdentityTest, AuthorizationMatrixThroughEveryBreakglassState) {
  TempDir dir("matrix-breakglass");
  People people(dir, "  breakglass: {roles: [auditor], groups: [viewers]}\n");
  const std::string viewer = people.token("viewer");
  std::string credential_;
  auto check = [&](const std::string& token, const std::string& role, const std::string& state) {
    for (const RouteCase& route : Routes()) {
      auto r = people.Call(token, route.method, route.path, json::object());
      std::string what = state + ": " + role + " " + route.method + " " + route.path + ": " + r.second.dump();
      std::string path = route.path;
      bool asks_for_more = path == "/v1/breakglass" || path.find("/credential") != std::string::npos;
      if (role.empty()) {
        EXPECT_EQ(r.first, 401) << what;
      } else if (token == credential_ && asks_for_more && route.method == std::string("POST")) {
        EXPECT_EQ(r.first, 403) << what;  // a grant's credential never gets another
      } else if (RolesWithScope().at(route.scope).count(role) > 0) {
        EXPECT_NE(r.first, 401) << what;
        EXPECT_NE(r.first, 403) << what;
      } else {
        EXPECT_EQ(r.first, 403) << what;
      }
    }
  };
  auto asked = people.Call(viewer, "POST", "/v1/breakglass", {{"role", "auditor"}, {"reason", "incident INC-4711 triage"}});
  ASSERT_EQ(asked.first, 201) << asked.second;
  std::string id = asked.second["breakglass"]["id"];
  check(viewer, "viewer", "requested");
  ASSERT_EQ(people.Call(people.token("admin"), "POST", "/v1/breakglass/" + id + "/approve").first, 200);
  check(viewer, "viewer", "approved");
  std::string credential = CredentialOf(people, viewer, id);
  credential_ = credential;
  check(credential, "auditor", "active");
  ASSERT_EQ(people.Call(people.token("admin"), "POST", "/v1/breakglass/" + id + "/revoke").first, 200);
  check(viewer, "viewer", "revoked");
  check(credential, "", "revoked");
}

TEST(IdentityTest, NoTokenOrSecretReachesALogLineAnErrorBodyOrTheAuditTrail) {
  TempDir dir("secrets");
  People people(dir);
  // More secrets going through every path: a token made and revoked, bad
  // tokens of every shape, a SCIM password replaced.
  auto made = people.Call(people.admin(), "POST", "/v1/tokens", {{"name", "ci"}, {"scopes", {"jobs:read"}}});
  std::string ci = made.second["secret"];
  people.secrets().push_back(ci);
  people.Call(people.admin(), "POST", "/v1/tokens/" + made.second["token"]["id"].get<std::string>() + "/revoke");
  EXPECT_EQ(people.Call(ci, "GET", "/v1/whoami").first, 401);
  std::string forged = "cw_" + std::string(52, 'q');
  people.secrets().push_back(forged);
  EXPECT_EQ(people.Call(forged, "GET", "/v1/jobs").first, 401);
  std::string jwt = "eyJhbGciOiJub25lIn0.eyJzdWIiOiJyb290In0.c2lnbmF0dXJl";
  people.secrets().push_back(jwt);
  EXPECT_EQ(people.Call(jwt, "GET", "/v1/jobs").first, 401);

  std::string everything;
  for (const std::string& b : people.bodies()) everything += b + "\n";
  for (json cursor = "0";;) {
    auto page = people.Call(people.admin(), "GET", "/v1/audit?limit=1000&cursor=" + cursor.get<std::string>());
    everything += page.second.dump();
    if (page.second["next_cursor"].is_null()) break;
    cursor = page.second["next_cursor"];
  }
  people.server().Stop(SIGTERM);
  std::ifstream log(dir.path() + "/data/server.log");
  std::string log_text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(log_text.empty());
  // Everything but the token-creation answers themselves, which hand the
  // secret over once, by design.
  for (const std::string& secret : people.secrets()) {
    EXPECT_EQ(log_text.find(secret), std::string::npos) << "a secret in the server's log";
    size_t handed = 0;
    for (const std::string& b : people.bodies()) {
      json j = json::parse(b, nullptr, false);
      if (j.is_object() && j.value("secret", "") == secret) ++handed;
    }
    size_t seen = 0;
    for (size_t at = everything.find(secret); at != std::string::npos; at = everything.find(secret, at + 1)) ++seen;
    EXPECT_EQ(seen, handed) << "a secret in an error body or the audit trail";
  }
}


TEST(IdentityTest, TheAcceptanceCommandPassesAndWritesItsEvidence) {
  TempDir dir("acceptance");
  auto server = ServerProcess::Start(dir.path() + "/data");
  auto run = RunCli({"acceptance", "identity", "--out", dir.path()},
                    {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", server->admin_token()}});
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("PASSED"), std::string::npos) << run.out;
  // Both reports are written; the JSON names the audit events of each step.
  std::string json_file, text_file;
  for (const auto& f : std::filesystem::directory_iterator(dir.path())) {
    std::string name = f.path().filename();
    if (name.rfind("acceptance-identity-", 0) != 0) continue;
    (name.size() > 5 && name.substr(name.size() - 5) == ".json" ? json_file : text_file) = f.path();
  }
  ASSERT_FALSE(json_file.empty());
  ASSERT_FALSE(text_file.empty());
  std::ifstream in(json_file);
  json report = json::parse(in, nullptr, false);
  ASSERT_TRUE(report.is_object());
  EXPECT_TRUE(report["passed"]);
  int with_evidence = 0;
  for (const json& step : report["steps"]) with_evidence += !step["audit_seqs"].empty();
  EXPECT_GE(with_evidence, 7) << report.dump(2);
  // The verdict is recorded on the server, and `acceptance list` shows it.
  auto listed_runs = RunCli({"--json", "acceptance", "list"},
                            {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", server->admin_token()}});
  ASSERT_EQ(listed_runs.exit_code, 0) << listed_runs.err;
  json runs = json::parse(listed_runs.out, nullptr, false);
  ASSERT_TRUE(runs.is_object()) << listed_runs.out;
  EXPECT_EQ(runs["runs"][0]["test"], "identity");
  EXPECT_TRUE(runs["runs"][0]["passed"]) << runs.dump(2);
  std::ifstream again(json_file);
  std::string written((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
  EXPECT_EQ(runs["runs"][0]["report_sha256"], Sha256Hex(written)) << "names the report as written";
  EXPECT_TRUE(runs["runs"][1]["seq"].is_null()) << "no recovery run yet";
  // What it made is gone: the throwaway user is not in the directory.
  auto creds = server->Client().Send("GET", "/v1/people/" + report["user"].get<std::string>() + "/credentials", "",
                                     Auth(server->admin_token()));
  EXPECT_EQ(json::parse(creds->body)["directory"]["state"], "not in the directory");

  // A team whose policy forbids some of the estate's GPU types passes too:
  // the job asks for any type, and the policy leaves out the forbidden ones.
  auto research = RunCli({"--json", "acceptance", "identity", "--team", "research", "--out", dir.path()},
                         {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", server->admin_token()}});
  EXPECT_EQ(research.exit_code, 0) << research.out << research.err;
  json r = json::parse(research.out, nullptr, false);
  ASSERT_TRUE(r.is_object()) << research.out;
  for (const json& step : r["steps"]) {
    // What it could not check is said, not passed off as a pass.
    if (step["step"].get<std::string>().find("provider accounts") != std::string::npos) {
      EXPECT_EQ(step["result"], "not_applicable") << step;
    }
  }

  // An early failure still removes what the test made.
  auto broken = RunCli({"--json", "acceptance", "identity", "--team", "no-such-team", "--out", dir.path()},
                       {{"CAUSEWAY_SERVER", server->url()}, {"CAUSEWAY_TOKEN", server->admin_token()}});
  EXPECT_EQ(broken.exit_code, 1) << broken.out << broken.err;
  json b = json::parse(broken.out, nullptr, false);
  ASSERT_TRUE(b.is_object()) << broken.out;
  auto gone = server->Client().Send("GET", "/v1/people/" + b["user"].get<std::string>() + "/credentials", "",
                                    Auth(server->admin_token()));
  json g = json::parse(gone->body);
  EXPECT_EQ(g["directory"]["state"], "not in the directory") << g;
  for (const json& t : g["api_tokens"]) EXPECT_NE(t["state"], "active") << t;
  auto tokens = server->Client().Send("GET", "/v1/tokens", "", Auth(server->admin_token()));
  json listed = json::parse(tokens->body);
  for (const json& t : listed["tokens"]) {
    if (t.value("name", "").rfind("acceptance-", 0) != 0) continue;
    EXPECT_FALSE(t["revoked_at"].is_null()) << t;
  }
}


TEST(IdentityTest, TheCommandLineExplainsElevatesListsAndDeprovisions) {
  TempDir dir("identity-cli");
  // Self-approval, said explicitly: the grant is active at once.
  People people(dir, "  breakglass: {roles: [auditor], groups: [viewers], self_approval: true}\n");
  auto as = [&](const std::string& token) {
    return std::map<std::string, std::string>{{"CAUSEWAY_SERVER", people.server().url()}, {"CAUSEWAY_TOKEN", token}};
  };
  auto explain = RunCli({"access", "explain", "viewer@corp.example", "audit"}, as(people.admin()));
  EXPECT_EQ(explain.exit_code, 5) << explain.out << explain.err;
  EXPECT_NE(explain.out.find("DENIED"), std::string::npos) << explain.out;
  EXPECT_NE(explain.out.find("auditors"), std::string::npos) << explain.out;  // the binding that would allow it
  auto allowed = RunCli({"access", "explain", "researcher@corp.example", "submit", "nlp"}, as(people.admin()));
  EXPECT_EQ(allowed.exit_code, 0) << allowed.out << allowed.err;
  EXPECT_NE(allowed.out.find("ALLOWED"), std::string::npos);

  auto me = RunCli({"whoami"}, as(people.token("researcher")));
  EXPECT_NE(me.out.find("researcher of team nlp through researchers"), std::string::npos) << me.out;

  auto asked = RunCli({"breakglass", "request", "--role", "auditor", "--reason", "INC-4711 queue stuck", "--duration", "10m"},
                      as(people.token("viewer")));
  EXPECT_EQ(asked.exit_code, 0) << asked.out << asked.err;
  EXPECT_NE(asked.out.find("active until"), std::string::npos) << asked.out;  // self-approved
  EXPECT_NE(asked.out.find("secret (shown once"), std::string::npos) << asked.out;
  auto coverage = RunCli({"--json", "audit", "coverage"}, as(people.admin()));
  EXPECT_NE(coverage.out.find("breakglass-self-approval"), std::string::npos) << coverage.out;
  auto listed = RunCli({"breakglass", "list"}, as(people.admin()));
  EXPECT_NE(listed.out.find("INC-4711 queue stuck"), std::string::npos) << listed.out;

  auto held = RunCli({"credentials", "--user", "viewer@corp.example"}, as(people.admin()));
  EXPECT_EQ(held.exit_code, 0) << held.err;
  EXPECT_NE(held.out.find("RETAINS ACCESS"), std::string::npos) << held.out;
  auto off = RunCli({"people", "deactivate", "viewer@corp.example"}, as(people.admin()));
  EXPECT_EQ(off.exit_code, 0) << off.out << off.err;
  EXPECT_NE(off.out.find("token.revoke"), std::string::npos) << off.out;
  EXPECT_NE(off.out.find("breakglass.revoke"), std::string::npos) << off.out;
  auto after = RunCli({"credentials", "--user", "viewer@corp.example"}, as(people.admin()));
  EXPECT_NE(after.out.find("nothing Causeway knows of grants viewer@corp.example access"), std::string::npos) << after.out;
  EXPECT_EQ(RunCli({"whoami"}, as(people.token("viewer"))).exit_code, 5);
}


// identity.deprovision: {queued: reassign, running: finish}: a leaver's
// queued job goes to the named person, the running one is left to end.
TEST(IdentityTest, DeprovisioningReassignsQueuedWorkAndLetsRunningWorkFinishByPolicy) {
  TempDir dir("reassign");
  std::ofstream(dir.path() + "/estate.yaml") << R"(
providers: [{name: lab, kind: sim, regions: [{name: r1, zone: eu}]}]
clusters:
  - {name: small, provider: lab, region: r1, node_pools: [{name: h100, gpu_type: H100, gpus_per_node: 8, nodes: 1}]}
prices: [{cluster: small, gpu_type: H100, on_demand: "2.00"}]
teams: [{name: nlp}]
queues: [{name: nlp, team: nlp, quotas: [{flavor: H100, nominal: 8}]}]
access: [{group: nlp-researchers, role: researcher, team: nlp}]
identity:
  deprovision: {queued: reassign, reassign_to: lead@corp.example, running: finish}
)";
  auto server = ServerProcess::Start(dir.path() + "/data", {"--estate", dir.path() + "/estate.yaml", "--tick-ms", "50"});
  auto client = server->Client();
  auto call = [&](const std::string& token, const std::string& method, const std::string& path, const json& body) {
    auto r = client.Send(method, path, body.is_null() ? "" : body.dump(), Auth(token));
    return std::make_pair(r->status, json::parse(r->body, nullptr, false));
  };
  const std::string admin = server->admin_token();
  std::string scim = call(admin, "POST", "/v1/tokens", {{"name", "idp"}, {"scopes", {"scim:provision"}}}).second["secret"];
  auto user = call(scim, "POST", "/scim/v2/Users", {{"schemas", {kUserSchema}}, {"userName", "leaver@corp.example"}});
  ASSERT_EQ(user.first, 201);
  ASSERT_EQ(call(scim, "POST", "/scim/v2/Groups",
                 {{"schemas", {kGroupSchema}}, {"displayName", "nlp-researchers"}, {"members", {{{"value", user.second["id"]}}}}})
                .first,
            201);
  std::string token = call(admin, "POST", "/v1/tokens",
                           {{"name", "leaver"}, {"scopes", {"jobs:read", "jobs:write"}}, {"user", "leaver@corp.example"}})
                          .second["secret"];
  auto submit = [&] {
    auto r = call(token, "POST", "/v1/jobs",
                  {{"spec", "name: big\nresources: {accelerators: H100:8}\nlabels: {team: nlp}\nrun: train\nsim: {duration: 5h}\n"}});
    EXPECT_EQ(r.first, 201) << r.second;
    return r.second["job"]["id"].get<std::string>();
  };
  std::string running = submit();
  ASSERT_TRUE(Eventually([&] { return call(admin, "GET", "/v1/jobs/" + running, nullptr).second["state"] == "running"; }));
  std::string queued = submit();  // the cluster is full: it waits
  EXPECT_EQ(call(admin, "GET", "/v1/jobs/" + queued, nullptr).second["state"], "pending");

  auto off = call(admin, "POST", "/v1/people/leaver@corp.example/deactivate", json::object());
  ASSERT_EQ(off.first, 200) << off.second;
  EXPECT_TRUE(off.second["ok"]) << off.second.dump(2);
  json queued_now = call(admin, "GET", "/v1/jobs/" + queued, nullptr).second;
  EXPECT_EQ(queued_now["owner"], "lead@corp.example");
  EXPECT_EQ(queued_now["state"], "pending");
  EXPECT_EQ(call(admin, "GET", "/v1/jobs/" + running, nullptr).second["state"], "running");  // left to finish
  auto events = call(admin, "GET", "/v1/audit?action=job.reassign&resource=job/" + queued, nullptr).second["events"];
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["details"]["to"], "lead@corp.example");
}

}  // namespace
}  // namespace causeway::testing
