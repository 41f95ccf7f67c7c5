// Readiness against a real server on the demo estate: controls whose owners
// are not in the directory are not in place; once the owning group is
// provisioned through SCIM the same control reads from its evidence; the
// CLI's table, --json and --fail-on-gaps agree with the API.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

constexpr const char* kGroupSchema = "urn:ietf:params:scim:schemas:core:2.0:Group";

json Finding(const json& report, const std::string& control, const std::string& provider) {
  for (const json& f : report["findings"]) {
    if (f["control"] == control && f["provider"] == provider) return f;
  }
  ADD_FAILURE() << "no finding for " << control << " at " << provider;
  return json::object();
}

TEST(ReadinessTest, AnOwnerProvisionedInTheDirectoryPutsItsControlOnItsEvidence) {
  TempDir dir("readiness");
  auto server = ServerProcess::Start(dir.path(), {"--tick-ms", "3600000"});
  auto c = server->Client();
  std::map<std::string, std::string> env = {{"CAUSEWAY_SERVER", server->url()},
                                            {"CAUSEWAY_TOKEN", server->admin_token()}};
  auto get = [&](const std::string& path) {
    auto r = c.Send("GET", path, "", Auth(server->admin_token()));
    EXPECT_TRUE(r.ok() && r->status == 200) << path << (r.ok() ? r->body : r.status().ToString());
    return json::parse(r.ok() ? r->body : "{}", nullptr, false);
  };

  json before = get("/v1/readiness");
  EXPECT_EQ(before["providers"], json({"nebius", "coreweave", "gcp"}));
  // The demo estate names "security" as the owner of audit forwarding, but
  // no such group is in the directory yet.
  json forwarding = Finding(before, "audit-forwarding", "nebius");
  EXPECT_EQ(forwarding["state"], "not_in_place");
  EXPECT_NE(forwarding["reason"].get<std::string>().find("group \"security\", is not in the directory"),
            std::string::npos)
      << forwarding.dump(2);
  EXPECT_EQ(forwarding["owner"], json({{"group", "security"}}));
  // No owner at all.
  EXPECT_NE(Finding(before, "capacity-fallback", "gcp")["reason"].get<std::string>().find("no owner"),
            std::string::npos);
  // A provider's declaration is shown as one, with its source.
  json support = Finding(before, "support-access", "nebius");
  ASSERT_EQ(support["declarations"].size(), 1u) << support.dump(2);
  EXPECT_EQ(support["declarations"][0]["source"], "master services agreement, schedule 4");
  EXPECT_EQ(support["responsible"], "provider");

  // The group is provisioned: the control now stands on its evidence (the
  // demo estate declares a retention, and nothing measures forwarding lag
  // yet: partly).
  std::string scim = json::parse(c.Send("POST", "/v1/tokens",
                                        json{{"name", "idp"}, {"scopes", {"scim:provision"}}}.dump(),
                                        Auth(server->admin_token()))
                                     ->body)["secret"];
  auto group = c.Send("POST", "/scim/v2/Groups",
                      json{{"schemas", {kGroupSchema}}, {"displayName", "security"}}.dump(), Auth(scim));
  ASSERT_TRUE(group.ok() && group->status == 201) << (group.ok() ? group->body : "");
  json after = get("/v1/readiness?provider=nebius");
  EXPECT_EQ(after["providers"], json({"nebius"}));
  forwarding = Finding(after, "audit-forwarding", "nebius");
  EXPECT_EQ(forwarding["state"], "partly") << forwarding.dump(2);
  ASSERT_FALSE(forwarding["evidence"].empty());
  EXPECT_EQ(forwarding["evidence"][0]["source"], "audit");
  EXPECT_EQ(Finding(after, "break-glass", "nebius")["state"], "in_place") << "off by default, owned by security";
  for (const json& f : after["findings"]) EXPECT_EQ(f["provider"], "nebius");

  // The CLI: a table, the same as JSON, and a scheduled check that fails on
  // the gaps.
  auto table = RunCli({"readiness", "--provider", "nebius"}, env);
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("audit-forwarding"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("not in place"), std::string::npos) << table.out;
  auto as_json = RunCli({"--json", "readiness"}, env);
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  EXPECT_EQ(json::parse(as_json.out)["findings"].size(), before["findings"].size());
  auto check = RunCli({"readiness", "--fail-on-gaps"}, env);
  EXPECT_EQ(check.exit_code, 10) << check.out << check.err;
  auto controls = RunCli({"--json", "readiness", "controls"}, env);
  ASSERT_EQ(controls.exit_code, 0) << controls.err;
  EXPECT_GE(json::parse(controls.out)["controls"].size(), 20u);
  EXPECT_EQ(RunCli({"readiness", "--provider", "nowhere"}, env).exit_code, 4);
}

}  // namespace
}  // namespace causeway::testing
