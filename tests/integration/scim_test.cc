// The SCIM 2.0 service provider over real HTTP against a real `causeway
// serve`: what an Okta or Microsoft Entra provisioning client does, and
// every failure with its SCIM error body.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

constexpr const char* kUser = "urn:ietf:params:scim:schemas:core:2.0:User";
constexpr const char* kGroup = "urn:ietf:params:scim:schemas:core:2.0:Group";
constexpr const char* kPatchOp = "urn:ietf:params:scim:api:messages:2.0:PatchOp";

class ScimTest : public ::testing::Test {
 protected:
  struct Reply {
    int status = 0;
    std::map<std::string, std::string> headers;
    std::string raw;
    json body;
  };
  static void SetUpTestSuite() {
    dir_ = new TempDir("scim");
    server_ = ServerProcess::Start(dir_->path()).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
  }
  void SetUp() override {
    if (scim_token_.empty()) {
      auto r = Call("POST", "/v1/tokens", json{{"name", "okta-provisioning"}, {"scopes", {"scim:provision"}}}.dump(),
                    server_->admin_token());
      ASSERT_EQ(r.status, 201) << r.raw;
      scim_token_ = r.body["secret"];
    }
  }

  Reply Call(const std::string& method, const std::string& target, const std::string& body = "",
             const std::string& token = "", std::vector<std::pair<std::string, std::string>> headers = {}) {
    if (token != "none") headers.emplace_back("Authorization", "Bearer " + (token.empty() ? scim_token_ : token));
    headers.emplace_back("Content-Type", "application/scim+json");
    auto r = client_.Send(method, target, body, headers);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    Reply out;
    out.status = r->status;
    out.headers = r->headers;
    out.raw = r->body;
    out.body = json::parse(r->body, nullptr, false);
    return out;
  }

  // An RFC 7644 error: the status twice (HTTP and body) and the scimType.
  static void ExpectScimError(const Reply& r, int status, const std::string& scim_type) {
    EXPECT_EQ(r.status, status) << r.raw;
    ASSERT_TRUE(r.body.is_object()) << r.raw;
    EXPECT_EQ(r.body["schemas"], json::array({"urn:ietf:params:scim:api:messages:2.0:Error"})) << r.raw;
    EXPECT_EQ(r.body["status"], std::to_string(status)) << r.raw;
    EXPECT_TRUE(r.body["detail"].is_string()) << r.raw;
    if (!scim_type.empty()) {
      EXPECT_EQ(r.body.value("scimType", ""), scim_type) << r.raw;
    }
    EXPECT_EQ(r.headers.at("content-type"), "application/scim+json");
  }

  json NewUser(const std::string& user_name, const std::string& external_id = "") {
    json body = {{"schemas", {kUser}},
                 {"userName", user_name},
                 {"name", {{"givenName", "Test"}, {"familyName", user_name}}},
                 {"emails", {{{"primary", true}, {"value", user_name}, {"type", "work"}}}},
                 {"active", true}};
    if (!external_id.empty()) body["externalId"] = external_id;
    auto r = Call("POST", "/scim/v2/Users", body.dump());
    EXPECT_EQ(r.status, 201) << r.raw;
    return r.body;
  }

  static std::string Filter(const std::string& f) {
    std::string out;
    for (unsigned char c : f) {
      if (std::isalnum(c) || c == '.' || c == '-' || c == '_') {
        out += static_cast<char>(c);
      } else {
        char buf[4];
        std::snprintf(buf, sizeof buf, "%%%02X", c);
        out += buf;
      }
    }
    return out;
  }

  static TempDir* dir_;
  static ServerProcess* server_;
  static std::string scim_token_;
  net::HttpClient client_ = server_->Client();
};
TempDir* ScimTest::dir_ = nullptr;
ServerProcess* ScimTest::server_ = nullptr;
std::string ScimTest::scim_token_;

TEST_F(ScimTest, EveryScimRouteNeedsAProvisioningTokenAndAnswersInScim) {
  auto jobs_token = Call("POST", "/v1/tokens", json{{"name", "ci"}, {"scopes", {"jobs:write"}}}.dump(),
                         server_->admin_token());
  ASSERT_EQ(jobs_token.status, 201);
  for (const char* path : {"/scim/v2/Users", "/scim/v2/Groups", "/scim/v2/ServiceProviderConfig", "/scim/v2/Schemas",
                           "/scim/v2/ResourceTypes", "/scim/v2/Users/usr_x"}) {
    auto anonymous = Call("GET", path, "", "none");
    ExpectScimError(anonymous, 401, "");
    EXPECT_EQ(anonymous.headers["www-authenticate"], "Bearer");
    ExpectScimError(Call("GET", path, "", jobs_token.body["secret"]), 403, "");
  }
  // The provisioning token reaches nothing else.
  EXPECT_EQ(Call("GET", "/v1/jobs").status, 403);
  EXPECT_EQ(Call("GET", "/v1/audit").status, 403);
  // A path no route matches, or a method a route lacks: authenticated
  // first, then a SCIM error (RFC 7644 §3.12), never Causeway's own body.
  ExpectScimError(Call("GET", "/scim/v2/Nonesuch", "", "none"), 401, "");
  ExpectScimError(Call("GET", "/scim/v2/Nonesuch", "", jobs_token.body["secret"]), 403, "");
  ExpectScimError(Call("GET", "/scim/v2/Nonesuch"), 404, "");
  ExpectScimError(Call("GET", "/scim/v2/Users/usr_x/extra"), 404, "");
  auto wrong_method = Call("DELETE", "/scim/v2/ServiceProviderConfig");
  ExpectScimError(wrong_method, 405, "");
  EXPECT_EQ(wrong_method.headers["allow"], "GET");
}

TEST_F(ScimTest, DiscoveryEndpointsDescribeTheService) {
  auto config = Call("GET", "/scim/v2/ServiceProviderConfig");
  ASSERT_EQ(config.status, 200) << config.raw;
  EXPECT_TRUE(config.body["patch"]["supported"]);
  EXPECT_TRUE(config.body["etag"]["supported"]);
  EXPECT_EQ(config.body["authenticationSchemes"][0]["type"], "oauthbearertoken");
  auto types = Call("GET", "/scim/v2/ResourceTypes");
  ASSERT_EQ(types.status, 200);
  EXPECT_EQ(types.body["totalResults"], 2);
  EXPECT_EQ(Call("GET", "/scim/v2/ResourceTypes/User").body["endpoint"], "/Users");
  auto schema = Call("GET", std::string("/scim/v2/Schemas/") + kUser);
  ASSERT_EQ(schema.status, 200) << schema.raw;
  EXPECT_EQ(schema.body["id"], kUser);
  ExpectScimError(Call("GET", "/scim/v2/Schemas/urn:nope"), 404, "");
}

TEST_F(ScimTest, OktaStyleUserLifecycle) {
  // Okta looks the user up first, then creates it.
  auto none = Call("GET", "/scim/v2/Users?filter=" + Filter(R"(userName eq "okta.user@corp.example")") +
                              "&startIndex=1&count=100");
  ASSERT_EQ(none.status, 200) << none.raw;
  EXPECT_EQ(none.body["totalResults"], 0);
  EXPECT_EQ(none.body["schemas"][0], "urn:ietf:params:scim:api:messages:2.0:ListResponse");

  json created = NewUser("okta.user@corp.example", "00uOKTA1");
  std::string id = created["id"];
  EXPECT_EQ(created["meta"]["resourceType"], "User");
  EXPECT_NE(created["meta"]["location"].get<std::string>().find("/scim/v2/Users/" + id), std::string::npos);
  EXPECT_TRUE(created["active"]);
  EXPECT_FALSE(created.contains("password"));

  auto found = Call("GET", "/scim/v2/Users?filter=" + Filter(R"(userName eq "OKTA.USER@corp.example")"));
  ASSERT_EQ(found.body["totalResults"], 1) << found.raw;
  EXPECT_EQ(found.body["Resources"][0]["id"], id);

  // The same userName in another case is taken.
  auto dup = Call("POST", "/scim/v2/Users", json{{"schemas", {kUser}}, {"userName", "Okta.User@Corp.Example"}}.dump());
  ExpectScimError(dup, 409, "uniqueness");

  // PUT replaces; a password is accepted and never stored or returned.
  json replaced = created;
  replaced["name"]["givenName"] = "Renamed";
  replaced["password"] = "Sup3r-secret!";
  auto put = Call("PUT", "/scim/v2/Users/" + id, replaced.dump());
  ASSERT_EQ(put.status, 200) << put.raw;
  EXPECT_EQ(put.body["name"]["givenName"], "Renamed");
  EXPECT_EQ(put.raw.find("Sup3r-secret!"), std::string::npos);

  // Deactivation the Okta way: a path-less replace.
  auto patch = Call("PATCH", "/scim/v2/Users/" + id,
                    json{{"schemas", {kPatchOp}}, {"Operations", {{{"op", "replace"}, {"value", {{"active", false}}}}}}}.dump());
  ASSERT_EQ(patch.status, 200) << patch.raw;
  EXPECT_FALSE(patch.body["active"]);
  auto inactive = Call("GET", "/scim/v2/Users?filter=" + Filter("active eq false"));
  ASSERT_EQ(inactive.status, 200);
  bool listed = false;
  for (const json& u : inactive.body["Resources"]) listed |= u["id"] == id;
  EXPECT_TRUE(listed);

  // The audit trail has each step, and never the password.
  auto audit = Call("GET", "/v1/audit?resource=user/" + id, "", server_->admin_token());
  ASSERT_EQ(audit.status, 200) << audit.raw;
  std::vector<std::string> actions;
  for (const json& e : audit.body["events"]) actions.push_back(e["action"]);
  EXPECT_EQ(actions, (std::vector<std::string>{"scim.user.create", "scim.user.update", "scim.user.deactivate"}));
  EXPECT_EQ(audit.raw.find("Sup3r-secret!"), std::string::npos);

  ASSERT_EQ(Call("DELETE", "/scim/v2/Users/" + id).status, 204);
  ExpectScimError(Call("GET", "/scim/v2/Users/" + id), 404, "");
  ExpectScimError(Call("DELETE", "/scim/v2/Users/" + id), 404, "");
}

TEST_F(ScimTest, EntraStyleGroupsAndMembership) {
  json a = NewUser("entra.a@corp.example");
  json b = NewUser("entra.b@corp.example");
  // Entra matches a user by work email before it creates one, and sends
  // the enterprise manager as a plain id, in POST and in PATCH.
  auto matched = Call("GET", "/scim/v2/Users?filter=" + Filter(R"(emails[type eq "work"].value eq "entra.a@corp.example")"));
  ASSERT_EQ(matched.status, 200) << matched.raw;
  ASSERT_EQ(matched.body["totalResults"], 1) << matched.raw;
  EXPECT_EQ(matched.body["Resources"][0]["id"], a["id"]);
  const std::string ent = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
  auto managed = Call("POST", "/scim/v2/Users",
                      json{{"schemas", {kUser, ent}}, {"userName", "entra.c@corp.example"}, {ent, {{"manager", a["id"]}}}}.dump());
  ASSERT_EQ(managed.status, 201) << managed.raw;
  EXPECT_EQ(managed.body[ent]["manager"]["value"], a["id"]);
  auto remanaged = Call("PATCH", "/scim/v2/Users/" + managed.body["id"].get<std::string>(),
                        json{{"schemas", {kPatchOp}},
                             {"Operations", {{{"op", "Replace"}, {"path", ent + ":manager"}, {"value", b["id"]}}}}}.dump());
  ASSERT_EQ(remanaged.status, 200) << remanaged.raw;
  EXPECT_EQ(remanaged.body[ent]["manager"]["value"], b["id"]);
  auto group = Call("POST", "/scim/v2/Groups",
                    json{{"schemas", {kGroup}}, {"displayName", "ml-researchers"}, {"externalId", "e-grp-1"},
                         {"members", json::array()}}.dump());
  ASSERT_EQ(group.status, 201) << group.raw;
  std::string gid = group.body["id"];
  EXPECT_EQ(group.headers["etag"], group.body["meta"]["version"]);

  // Entra: capitalised ops, several in one request; asking for attributes
  // gets the group back (200).
  auto add = Call("PATCH", "/scim/v2/Groups/" + gid + "?attributes=displayName,members",
                  json{{"schemas", {kPatchOp}},
                       {"Operations",
                        {{{"op", "Add"}, {"path", "members"}, {"value", {{{"value", a["id"]}}, {{"value", b["id"]}}}}},
                         {{"op", "Replace"}, {"path", "displayName"}, {"value", "ML Researchers"}}}}}
                      .dump());
  ASSERT_EQ(add.status, 200) << add.raw;
  EXPECT_EQ(add.body["displayName"], "ML Researchers");
  ASSERT_EQ(add.body["members"].size(), 2u);
  EXPECT_EQ(add.body["members"][0]["type"], "User");
  EXPECT_EQ(add.body["members"][0]["display"], "entra.a@corp.example");

  // A user shows the groups it is in; the group filter by member works.
  auto user_a = Call("GET", "/scim/v2/Users/" + a["id"].get<std::string>());
  ASSERT_EQ(user_a.body["groups"].size(), 1u) << user_a.raw;
  EXPECT_EQ(user_a.body["groups"][0]["value"], gid);
  auto by_member = Call("GET", "/scim/v2/Groups?filter=" + Filter("members[value eq \"" + b["id"].get<std::string>() + "\"]") +
                                   "&excludedAttributes=members");
  ASSERT_EQ(by_member.body["totalResults"], 1) << by_member.raw;
  EXPECT_FALSE(by_member.body["Resources"][0].contains("members"));

  // Entra removes members by value list; Okta by filter.
  auto remove = Call("PATCH", "/scim/v2/Groups/" + gid,
                     json{{"schemas", {kPatchOp}},
                          {"Operations", {{{"op", "Remove"}, {"path", "members"}, {"value", {{{"value", a["id"]}}}}}}}}
                         .dump());
  // Without attributes a group's PATCH answers 204 with no body (Microsoft
  // advises against returning every member of a large group), and its ETag.
  ASSERT_EQ(remove.status, 204) << remove.raw;
  EXPECT_TRUE(remove.raw.empty()) << remove.raw;
  EXPECT_FALSE(remove.headers["etag"].empty());
  ASSERT_EQ(Call("GET", "/scim/v2/Groups/" + gid).body["members"].size(), 1u);
  EXPECT_FALSE(Call("GET", "/scim/v2/Users/" + a["id"].get<std::string>()).body.contains("groups"));

  // A member that does not exist is refused; the group is unchanged.
  auto ghost = Call("PATCH", "/scim/v2/Groups/" + gid,
                    json{{"schemas", {kPatchOp}},
                         {"Operations", {{{"op", "add"}, {"path", "members"}, {"value", {{{"value", "usr_ghost"}}}}}}}}
                        .dump());
  ExpectScimError(ghost, 400, "invalidValue");
  EXPECT_EQ(Call("GET", "/scim/v2/Groups/" + gid).body["members"].size(), 1u);

  // The audit trail names who joined and left.
  auto audit = Call("GET", "/v1/audit?resource=group/" + gid, "", server_->admin_token());
  ASSERT_EQ(audit.body["events"].size(), 3u) << audit.raw;
  EXPECT_EQ(audit.body["events"][1]["details"]["members_added"], json::array({a["id"], b["id"]}));
  EXPECT_EQ(audit.body["events"][2]["details"]["members_removed"], json::array({a["id"]}));

  // Deleting a user takes it out of its groups.
  ASSERT_EQ(Call("DELETE", "/scim/v2/Users/" + b["id"].get<std::string>()).status, 204);
  EXPECT_FALSE(Call("GET", "/scim/v2/Groups/" + gid).body.contains("members"));
}

TEST_F(ScimTest, ListsPageAndProject) {
  for (int i = 0; i < 5; ++i) NewUser("page" + std::to_string(i) + "@corp.example");
  std::string filter = "&filter=" + Filter(R"(userName sw "page")");
  auto first = Call("GET", "/scim/v2/Users?startIndex=1&count=2&attributes=userName" + filter);
  ASSERT_EQ(first.status, 200) << first.raw;
  EXPECT_EQ(first.body["totalResults"], 5);
  EXPECT_EQ(first.body["itemsPerPage"], 2);
  EXPECT_EQ(first.body["Resources"][0]["userName"], "page0@corp.example");
  EXPECT_TRUE(first.body["Resources"][0].contains("id"));
  EXPECT_FALSE(first.body["Resources"][0].contains("emails"));
  auto last = Call("GET", "/scim/v2/Users?startIndex=5&count=2" + filter);
  ASSERT_EQ(last.body["itemsPerPage"], 1);
  EXPECT_EQ(last.body["startIndex"], 5);
  EXPECT_EQ(last.body["Resources"][0]["userName"], "page4@corp.example");
  auto count_only = Call("GET", "/scim/v2/Users?count=0" + filter);
  EXPECT_EQ(count_only.body["totalResults"], 5);
  EXPECT_TRUE(count_only.body["Resources"].empty());
}

TEST_F(ScimTest, BadRequestsGetScimErrors) {
  ExpectScimError(Call("GET", "/scim/v2/Users?filter=" + Filter("userName eq")), 400, "invalidFilter");
  ExpectScimError(Call("GET", "/scim/v2/Users?filter=" + Filter(R"(shoeSize eq "9")")), 400, "invalidFilter");
  ExpectScimError(Call("GET", "/scim/v2/Users?count=ten"), 400, "invalidValue");
  ExpectScimError(Call("GET", "/scim/v2/Users?attributes=shoeSize"), 400, "invalidPath");
  ExpectScimError(Call("POST", "/scim/v2/Users", "{not json"), 400, "invalidSyntax");
  ExpectScimError(Call("POST", "/scim/v2/Users", json{{"userName", "no-schemas"}}.dump()), 400, "invalidSyntax");
  ExpectScimError(Call("POST", "/scim/v2/Users", json{{"schemas", {kUser}}, {"displayName", "x"}}.dump()), 400,
                  "invalidValue");
  ExpectScimError(Call("POST", "/scim/v2/Users", json{{"schemas", {kUser}}, {"userName", "x"}, {"active", "maybe"}}.dump()),
                  400, "invalidValue");
  json u = NewUser("errors@corp.example");
  std::string path = "/scim/v2/Users/" + u["id"].get<std::string>();
  ExpectScimError(Call("PATCH", path, json{{"schemas", {kPatchOp}}, {"Operations", {{{"op", "remove"}}}}}.dump()), 400,
                  "noTarget");
  ExpectScimError(Call("PATCH", path,
                       json{{"schemas", {kPatchOp}},
                            {"Operations", {{{"op", "replace"}, {"path", "meta.created"}, {"value", "2000-01-01T00:00:00Z"}}}}}
                           .dump()),
                  400, "mutability");
  ExpectScimError(Call("PUT", path, json{{"schemas", {kUser}}, {"id", "usr_other"}, {"userName", "x@y"}}.dump()), 400,
                  "mutability");
  // A stale ETag is refused with 412 and changes nothing.
  auto stale = Call("PUT", path, json{{"schemas", {kUser}}, {"userName", "errors@corp.example"}, {"title", "x"}}.dump(), "",
                    {{"If-Match", "W/\"999\""}});
  ExpectScimError(stale, 412, "");
  EXPECT_FALSE(Call("GET", path).body.contains("title"));
  auto fresh = Call("PUT", path, json{{"schemas", {kUser}}, {"userName", "errors@corp.example"}, {"title", "x"}}.dump(), "",
                    {{"If-Match", u["meta"]["version"].get<std::string>()}});
  EXPECT_EQ(fresh.status, 200) << fresh.raw;
  EXPECT_EQ(fresh.body["meta"]["version"], "W/\"2\"");
}

}  // namespace
}  // namespace causeway::testing
