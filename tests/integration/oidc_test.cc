// People sign in with tokens from a real OpenID Connect provider
// (oauth2-mock-server from npm, started on loopback): Causeway verifies
// them against the provider's discovery document and JWKS, maps the groups
// to roles, and enforces them on the job API. Bad tokens of every kind are
// refused; the SCIM directory overrides what a token still claims.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "causeway/estate.h"
#include "identity/jwt.h"
#include "node_peer.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

std::string SpecFor(const std::string& team, const std::string& owner = "") {
  std::string labels = "team: " + team + (owner.empty() ? "" : ", owner: " + owner);
  return "name: train\nresources:\n  accelerators: H100:1\n  labels: {" + labels + "}\nrun: python train.py\n";
}

class OidcTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    missing_ = new std::string(PeersMissing());
    if (!missing_->empty()) return;
    idp_ = new NodePeer("idp.mjs", {"0"});
    issuer_ = new std::string(idp_->first_line().substr(idp_->first_line().find(' ') + 1));
    dir_ = new TempDir("oidc");
    std::ofstream(dir_->path() + "/estate.yaml") << DefaultEstateYaml() << R"(
identity:
  oidc:
    issuer: )" << *issuer_ << R"(
    audience: causeway
access:
  - {group: nlp-researchers, role: researcher, team: nlp}
  - {group: nlp-leads, role: team-admin, team: nlp}
  - {group: security, role: auditor}
)";
    server_ = ServerProcess::Start(dir_->path() + "/data", {"--estate", dir_->path() + "/estate.yaml"}).release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete dir_;
    delete idp_;
    delete issuer_;
    delete missing_;
  }
  void SetUp() override {
    if (!missing_->empty()) GTEST_SKIP() << "identity peers unavailable: " << *missing_;
  }

  // A token from the provider for `email` in `groups`.
  static std::string IdpToken(const std::string& email, const json& groups, const std::string& extra = "") {
    auto [host, port] = *net::ParseServerUrl(*issuer_);
    net::HttpClient idp(host, port);
    std::string form = "grant_type=client_credentials&email=" + net::UrlEncode(email) +
                       "&groups=" + net::UrlEncode(groups.dump()) + extra;
    auto r = idp.Send("POST", "/token", form, {{"Content-Type", "application/x-www-form-urlencoded"}});
    EXPECT_TRUE(r.ok() && r->status == 200) << (r.ok() ? r->body : r.status().ToString());
    return json::parse(r->body)["access_token"];
  }

  struct Reply {
    int status = 0;
    std::string raw;
    json body;
  };
  Reply Call(const std::string& token, const std::string& method, const std::string& target,
             const std::string& body = "") {
    auto r = client_.Send(method, target, body, Auth(token));
    EXPECT_TRUE(r.ok());
    return Reply{r->status, r->body, json::parse(r->body, nullptr, false)};
  }
  Reply Submit(const std::string& token, const std::string& spec) {
    return Call(token, "POST", "/v1/jobs", json{{"spec", spec}}.dump());
  }

  static std::string* missing_;
  static std::string* issuer_;
  static NodePeer* idp_;
  static TempDir* dir_;
  static ServerProcess* server_;
  net::HttpClient client_ = server_ ? server_->Client() : net::HttpClient("127.0.0.1", 1);
};
std::string* OidcTest::missing_ = nullptr;
std::string* OidcTest::issuer_ = nullptr;
NodePeer* OidcTest::idp_ = nullptr;
TempDir* OidcTest::dir_ = nullptr;
ServerProcess* OidcTest::server_ = nullptr;

TEST_F(OidcTest, AResearcherWorksInTheirTeamOnly) {
  std::string alice = IdpToken("alice@corp.example", {"nlp-researchers"});
  auto me = Call(alice, "GET", "/v1/whoami");
  ASSERT_EQ(me.status, 200) << me.raw;
  EXPECT_EQ(me.body["user"], "alice@corp.example");
  EXPECT_EQ(me.body["token_id"], "user:alice@corp.example");
  ASSERT_EQ(me.body["grants"].size(), 1u);
  EXPECT_EQ(me.body["grants"][0]["role"], "researcher");
  EXPECT_EQ(me.body["grants"][0]["team"], "nlp");

  // Submits to nlp as herself; not to vision, not as someone else.
  auto mine = Submit(alice, SpecFor("nlp"));
  ASSERT_EQ(mine.status, 201) << mine.raw;
  EXPECT_EQ(mine.body["job"]["owner"], "alice@corp.example");
  EXPECT_EQ(Submit(alice, SpecFor("vision")).status, 403);
  auto as_bob = Submit(alice, SpecFor("nlp", "bob@corp.example"));
  EXPECT_EQ(as_bob.status, 403) << as_bob.raw;

  // Another team's job is not even visible; the list is her team's.
  auto vision = Submit(server_->admin_token(), SpecFor("vision", "carol@corp.example"));
  ASSERT_EQ(vision.status, 201) << vision.raw;
  std::string vision_id = vision.body["job"]["id"];
  EXPECT_EQ(Call(alice, "GET", "/v1/jobs/" + vision_id).status, 404);
  auto list = Call(alice, "GET", "/v1/jobs");
  ASSERT_EQ(list.status, 200) << list.raw;
  for (const json& j : list.body["jobs"]) EXPECT_EQ(j["team"], "nlp");
  EXPECT_EQ(Call(alice, "GET", "/v1/jobs?team=vision").status, 403);

  // She cancels her own job, not a colleague's; the team admin can.
  auto bobs = Submit(server_->admin_token(), SpecFor("nlp", "bob@corp.example"));
  std::string bobs_id = bobs.body["job"]["id"];
  EXPECT_EQ(Call(alice, "POST", "/v1/jobs/" + bobs_id + "/cancel").status, 403);
  EXPECT_EQ(Call(alice, "POST", "/v1/jobs/" + mine.body["job"]["id"].get<std::string>() + "/cancel").status, 200);
  std::string lead = IdpToken("lead@corp.example", {"nlp-leads"});
  EXPECT_EQ(Call(lead, "POST", "/v1/jobs/" + bobs_id + "/cancel").status, 200);

  // No audit trail for a researcher; the auditor reads it, and sees who.
  EXPECT_EQ(Call(alice, "GET", "/v1/audit").status, 403);
  std::string auditor = IdpToken("sec@corp.example", {"security"});
  auto audit = Call(auditor, "GET", "/v1/audit?actor=user:alice@corp.example");
  ASSERT_EQ(audit.status, 200) << audit.raw;
  EXPECT_GE(audit.body["events"].size(), 2u);  // her submit and her cancel
  // Nobody in a bound group: a valid token, no rights.
  std::string stranger = IdpToken("eve@corp.example", {"marketing"});
  EXPECT_EQ(Call(stranger, "GET", "/v1/whoami").status, 200);
  EXPECT_EQ(Call(stranger, "GET", "/v1/jobs").status, 403);
}

TEST_F(OidcTest, BadTokensAreRefusedWithTheReason) {
  auto refused = [&](const std::string& token, const std::string& why) {
    auto r = Call(token, "GET", "/v1/whoami");
    EXPECT_EQ(r.status, 401) << why << ": " << r.raw;
    EXPECT_NE(r.body["error"]["message"].get<std::string>().find(why), std::string::npos) << r.raw;
    EXPECT_EQ(r.raw.find(token), std::string::npos) << "the token must not be echoed";
  };
  refused(IdpToken("a@corp.example", {"nlp-researchers"}, "&expires_in=-600"), "expired");
  refused(IdpToken("a@corp.example", {"nlp-researchers"}, "&audience=someone-else"), "audience");
  refused(IdpToken("a@corp.example", {"nlp-researchers"}, "&issuer=https://evil.example"), "issuer");

  std::string good = IdpToken("a@corp.example", {"nlp-researchers"});
  size_t p1 = good.find('.'), p2 = good.rfind('.');
  json claims = json::parse(*identity::jwt::Base64UrlDecode(good.substr(p1 + 1, p2 - p1 - 1)));
  claims["groups"] = json::array({"security"});
  refused(good.substr(0, p1 + 1) + identity::jwt::Base64UrlEncode(claims.dump()) + good.substr(p2), "signature");
  json header = json::parse(*identity::jwt::Base64UrlDecode(good.substr(0, p1)));
  header["alg"] = "none";
  refused(identity::jwt::Base64UrlEncode(header.dump()) + good.substr(p1, p2 - p1) + ".", "\"none\"");
  header["alg"] = "HS256";
  refused(identity::jwt::Base64UrlEncode(header.dump()) + good.substr(p1), "symmetric");
  // A key the provider never published (same kid): the signature fails.
  auto forger = identity::jwt::SigningKey::Generate(identity::jwt::Alg::kRS256, header.value("kid", ""));
  refused(*forger->Sign(claims), "signature");
}

TEST_F(OidcTest, TheDirectoryOverridesWhatATokenStillClaims) {
  auto scim_token = Call(server_->admin_token(), "POST", "/v1/tokens",
                         json{{"name", "idp"}, {"scopes", {"scim:provision"}}}.dump());
  std::string scim = scim_token.body["secret"];
  auto user = Call(scim, "POST", "/scim/v2/Users",
                   json{{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:User"}}, {"userName", "dan@corp.example"}}
                       .dump());
  ASSERT_EQ(user.status, 201) << user.raw;
  std::string uid = user.body["id"];
  auto group = Call(scim, "POST", "/scim/v2/Groups",
                    json{{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:Group"}},
                         {"displayName", "nlp-researchers"},
                         {"members", {{{"value", uid}}}}}
                        .dump());
  ASSERT_EQ(group.status, 201) << group.raw;

  // The token claims no group; the directory's membership counts.
  std::string dan = IdpToken("dan@corp.example", json::array());
  auto me = Call(dan, "GET", "/v1/whoami");
  ASSERT_EQ(me.status, 200) << me.raw;
  EXPECT_EQ(me.body["user_id"], uid);
  EXPECT_EQ(me.body["groups"], json::array({"nlp-researchers"}));
  EXPECT_EQ(Submit(dan, SpecFor("nlp")).status, 201);

  // Removed from the group: the same token loses the rights, although the
  // token never changed (the resolved person is kept at most 500 ms).
  std::string gid = group.body["id"];
  ASSERT_EQ(Call(scim, "PATCH", "/scim/v2/Groups/" + gid,
                 json{{"schemas", {"urn:ietf:params:scim:api:messages:2.0:PatchOp"}},
                      {"Operations", {{{"op", "remove"}, {"path", "members[value eq \"" + uid + "\"]"}}}}}
                     .dump())
                .status,
            204);
  EXPECT_TRUE(Eventually([&] { return Submit(dan, SpecFor("nlp")).status == 403; }, std::chrono::seconds(10)));
  // Deactivated: the token stops working altogether.
  ASSERT_EQ(Call(scim, "PATCH", "/scim/v2/Users/" + uid,
                 json{{"schemas", {"urn:ietf:params:scim:api:messages:2.0:PatchOp"}},
                      {"Operations", {{{"op", "replace"}, {"path", "active"}, {"value", "False"}}}}}
                     .dump())
                .status,
            200);
  EXPECT_TRUE(Eventually([&] { return Call(dan, "GET", "/v1/whoami").status == 401; }, std::chrono::seconds(10)));
}

}  // namespace
}  // namespace causeway::testing
