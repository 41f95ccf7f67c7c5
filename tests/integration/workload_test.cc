// Causeway as an OpenID Connect issuer for workloads: a real attempt (the
// local executor) gets a signed token in its environment, and the jose
// library from npm, reading Causeway's discovery document and JWKS the way
// a cloud's STS does, accepts it for its audience and refuses it otherwise.
// Keys rotate with overlap; tokens refresh only while the attempt runs.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "causeway/subprocess.h"
#include "identity/jwt.h"
#include "node_peer.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

std::string Estate(const std::string& out, const std::string& alg) {
  return "providers: [{name: here, kind: local, regions: [{name: r1, zone: eu}]}]\n"
         "clusters:\n  - name: laptop\n    provider: here\n    region: r1\n"
         "    node_pools: [{name: h200, gpu_type: H200, gpus_per_node: 2, nodes: 1}]\n"
         "    local: {output_dir: " + out + "}\n"
         "teams: [{name: nlp}]\n"
         "identity:\n  workload:\n    audiences: [sts.amazonaws.com, vault]\n    lifetime: 15m\n    alg: " + alg + "\n";
}

// jose's verdict on `token` for `audience`, fetching Causeway's documents.
json JoseVerify(const std::string& issuer, const std::string& audience, const std::string& token) {
  auto r = RunProcess({"node", PeersDir() + "/verify.mjs", issuer, audience, token}, {}, "", std::chrono::seconds(60));
  EXPECT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->err : r.status().ToString());
  return json::parse(r.ok() ? r->out : "{}", nullptr, false);
}

class WorkloadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::string why = PeersMissing(); !why.empty()) GTEST_SKIP() << "identity peers unavailable: " << why;
  }
  // The token the job printed on its first output line.
  static std::string TokenOf(EstateServer& s, const std::string& job) {
    EXPECT_TRUE(Eventually([&] { return s.Get("/v1/jobs/" + job)["state"] == "succeeded"; }))
        << s.Get("/v1/jobs/" + job).dump(2);
    auto logs = RunCli({"logs", job}, {{"CAUSEWAY_SERVER", s.process().url()}, {"CAUSEWAY_TOKEN", s.process().admin_token()}});
    std::string token = logs.out.substr(0, logs.out.find('\n'));
    EXPECT_EQ(std::count(token.begin(), token.end(), '.'), 2) << logs.out << logs.err;
    return token;
  }
};

constexpr const char* kPrintToken =
    "resources: {accelerators: H200:1}\nlabels: {team: nlp, owner: alice@corp.example, project: llm-7b}\n"
    "run: echo \"$CAUSEWAY_WORKLOAD_TOKEN\"\n";

TEST_F(WorkloadTest, AttemptsCarryTokensThatJoseAcceptsForTheirAudienceOnly) {
  TempDir dir("workload");
  EstateServer s(dir, Estate(dir.path() + "/out", "ES256"));
  std::string issuer = s.process().url();
  auto discovery = s.Get("/.well-known/openid-configuration");
  EXPECT_EQ(discovery["issuer"], issuer);
  EXPECT_EQ(discovery["jwks_uri"], issuer + "/jwks");

  std::string job = s.Submit(kPrintToken);
  std::string token = TokenOf(s, job);
  json ok = JoseVerify(issuer, "sts.amazonaws.com", token);
  ASSERT_TRUE(ok.value("ok", false)) << ok.dump();
  EXPECT_EQ(ok["alg"], "ES256");
  EXPECT_EQ(ok["payload"]["sub"], "job:" + job);
  EXPECT_EQ(ok["payload"]["team"], "nlp");
  EXPECT_EQ(ok["payload"]["owner"], "alice@corp.example");
  EXPECT_EQ(ok["payload"]["project"], "llm-7b");
  EXPECT_EQ(ok["payload"]["cluster"], "laptop");
  EXPECT_EQ(ok["payload"]["attempt"], 1);
  const int64_t lifetime = ok["payload"]["exp"].get<int64_t>() - ok["payload"]["iat"].get<int64_t>();
  EXPECT_EQ(lifetime, 15 * 60);
  // An attempt that must end sooner gets a token that ends with it.
  std::string bounded = TokenOf(s, s.Submit(std::string(kPrintToken) + "time_limit: 2m\n"));
  json short_lived = JoseVerify(issuer, "sts.amazonaws.com", bounded);
  ASSERT_TRUE(short_lived.value("ok", false)) << short_lived.dump();
  EXPECT_EQ(short_lived["payload"]["exp"].get<int64_t>() - short_lived["payload"]["iat"].get<int64_t>(), 120);

  // Another audience, a tampered payload: jose refuses.
  json other = JoseVerify(issuer, "https://iam.googleapis.com/projects/1/pools/p", token);
  EXPECT_FALSE(other.value("ok", true)) << other.dump();
  EXPECT_EQ(other["code"], "ERR_JWT_CLAIM_VALIDATION_FAILED");
  size_t p1 = token.find('.'), p2 = token.rfind('.');
  json claims = json::parse(*identity::jwt::Base64UrlDecode(token.substr(p1 + 1, p2 - p1 - 1)));
  claims["team"] = "vision";
  std::string tampered = token.substr(0, p1 + 1) + identity::jwt::Base64UrlEncode(claims.dump()) + token.substr(p2);
  json bad = JoseVerify(issuer, "sts.amazonaws.com", tampered);
  EXPECT_EQ(bad["code"], "ERR_JWS_SIGNATURE_VERIFICATION_FAILED") << bad.dump();

  // The launch is audited with the token's id, never the token.
  auto audit = s.Get("/v1/audit?resource=job/" + job);
  bool recorded = false;
  for (const json& e : audit["events"]) {
    if (e["action"] == "job.launch") recorded = e["details"]["workload_token"]["jti"] == ok["payload"]["jti"];
  }
  EXPECT_TRUE(recorded) << audit.dump(2);
  EXPECT_EQ(audit.dump().find(token.substr(p2 + 1)), std::string::npos);

  // Rotation: the old key stays published while its tokens live; new
  // tokens carry the new key.
  auto c = s.process().Client();
  auto rotated = c.Send("POST", "/v1/identity/keys/rotate", "{}", Auth(s.process().admin_token()));
  ASSERT_EQ(rotated->status, 200) << rotated->body;
  EXPECT_EQ(json::parse(rotated->body)["keys"].size(), 2u);
  EXPECT_TRUE(JoseVerify(issuer, "vault", token).value("ok", false));
  std::string fresh = TokenOf(s, s.Submit(kPrintToken));
  json after = JoseVerify(issuer, "vault", fresh);
  ASSERT_TRUE(after.value("ok", false)) << after.dump();
  EXPECT_NE(after["kid"], ok["kid"]);
}

TEST_F(WorkloadTest, TokensRefreshWhileTheAttemptRunsAndDieWithIt) {
  TempDir dir("workload-refresh");
  std::string out = dir.path() + "/out";
  EstateServer s(dir, Estate(out, "RS256"));
  // The job hands its own attempt credential to the test, then waits.
  std::string job = s.Submit(
      "resources: {accelerators: H200:1}\nlabels: {team: nlp, owner: bob@corp.example}\n"
      "run: echo \"$CAUSEWAY_TOKEN\" > credential.txt; sleep 300\n");
  std::string credential;
  ASSERT_TRUE(Eventually([&] {
    std::ifstream f(out + "/credential.txt");
    return static_cast<bool>(std::getline(f, credential)) && credential.size() > 10;
  }));
  auto c = s.process().Client();
  auto refresh = [&](const std::string& who, const std::string& audience) {
    return c.Send("POST", "/v1/jobs/" + job + "/workload-token", json{{"audience", audience}}.dump(), Auth(who));
  };
  // The credential is recorded with the dispatch, a moment after the
  // attempt starts.
  auto r = refresh(credential, "vault");
  ASSERT_TRUE(Eventually([&] {
    r = refresh(credential, "vault");
    return r->status == 200;
  })) << r->body;
  json minted = json::parse(r->body);
  json verdict = JoseVerify(s.process().url(), "vault", minted["token"]);
  ASSERT_TRUE(verdict.value("ok", false)) << verdict.dump();
  EXPECT_EQ(verdict["alg"], "RS256");
  EXPECT_EQ(verdict["payload"]["aud"], "vault");
  // Only audiences the estate names.
  EXPECT_EQ(refresh(credential, "https://evil.example")->status, 403);
  // Another job's credential cannot ask for this job's token.
  EXPECT_EQ(refresh("cw_" + std::string(52, 'a'), "vault")->status, 401);

  ASSERT_EQ(s.Post("/v1/jobs/" + job + "/cancel"), 200);
  ASSERT_TRUE(Eventually([&] { return refresh(credential, "vault")->status == 401; }));
  auto by_admin = refresh(s.process().admin_token(), "vault");
  EXPECT_EQ(by_admin->status, 409) << by_admin->body;  // no running attempt: nothing to sign for
}

// A person who leaves takes their work's new credentials with them: with
// `deprovision.running: finish` their running job goes on, but its attempt
// gets no new token once the directory deactivates them.
TEST_F(WorkloadTest, ADeactivatedOwnersRunningWorkGetsNoNewTokens) {
  TempDir dir("workload-leaver");
  std::string out = dir.path() + "/out";
  EstateServer s(dir, Estate(out, "ES256") + "  deprovision: {running: finish}\n");
  auto c = s.process().Client();
  const std::string admin = s.process().admin_token();
  auto send = [&](const char* method, const std::string& path, const json& body, const std::string& token) {
    auto headers = Auth(token);
    headers.emplace_back("Content-Type", path.rfind("/scim/", 0) == 0 ? "application/scim+json" : "application/json");
    auto r = c.Send(method, path, body.dump(), headers);
    EXPECT_TRUE(r.ok());
    return r.ok() ? std::make_pair(r->status, json::parse(r->body, nullptr, false)) : std::make_pair(0, json());
  };
  auto idp = send("POST", "/v1/tokens", {{"name", "idp"}, {"scopes", {"scim:provision"}}}, admin);
  ASSERT_EQ(idp.first, 201) << idp.second.dump();
  auto carol = send("POST", "/scim/v2/Users",
                    {{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:User"}}, {"userName", "carol@corp.example"},
                     {"active", true}},
                    idp.second["secret"]);
  ASSERT_EQ(carol.first, 201) << carol.second.dump();
  std::string job = s.Submit("resources: {accelerators: H200:1}\nlabels: {team: nlp, owner: carol@corp.example}\n"
                             "run: echo \"$CAUSEWAY_TOKEN\" > credential.txt; sleep 300\n");
  std::string credential;
  ASSERT_TRUE(Eventually([&] {
    std::ifstream f(out + "/credential.txt");
    return static_cast<bool>(std::getline(f, credential)) && credential.size() > 10;
  }));
  auto refresh = [&] { return send("POST", "/v1/jobs/" + job + "/workload-token", {{"audience", "vault"}}, credential); };
  ASSERT_TRUE(Eventually([&] { return refresh().first == 200; }));

  auto left = send("PATCH", "/scim/v2/Users/" + carol.second["id"].get<std::string>(),
                   {{"schemas", {"urn:ietf:params:scim:api:messages:2.0:PatchOp"}},
                    {"Operations", {{{"op", "replace"}, {"path", "active"}, {"value", false}}}}},
                   idp.second["secret"]);
  ASSERT_EQ(left.first, 200) << left.second.dump();
  auto refused = refresh();
  EXPECT_EQ(refused.first, 403) << refused.second.dump();
  EXPECT_NE(refused.second.dump().find("carol@corp.example is deactivated"), std::string::npos) << refused.second.dump();
  EXPECT_EQ(s.Get("/v1/jobs/" + job)["state"], "running") << "running work is let finish";
  EXPECT_EQ(s.Post("/v1/jobs/" + job + "/cancel"), 200);
}

}  // namespace
}  // namespace causeway::testing
