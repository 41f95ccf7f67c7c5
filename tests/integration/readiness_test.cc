// Readiness against a real server on the demo estate: controls whose owners
// are not in the directory are not in place; once the owning group is
// provisioned through SCIM the same control reads from its evidence; the
// CLI's table, --json and --fail-on-gaps agree with the API.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <fstream>

#include "causeway/estate.h"
#include "causeway/job_spec.h"
#include "node_peer.h"
#include "server_process.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

constexpr const char* kGroupSchema = "urn:ietf:params:scim:schemas:core:2.0:Group";

// Provisions group `name` through SCIM, as the company's IdP would.
void ProvisionGroup(ServerProcess& server, const std::string& name) {
  auto c = server.Client();
  auto token = c.Send("POST", "/v1/tokens", json{{"name", "idp"}, {"scopes", {"scim:provision"}}}.dump(),
                      Auth(server.admin_token()));
  ASSERT_TRUE(token.ok() && token->status == 201) << (token.ok() ? token->body : "");
  std::string scim = json::parse(token->body)["secret"];
  auto group = c.Send("POST", "/scim/v2/Groups", json{{"schemas", {kGroupSchema}}, {"displayName", name}}.dump(),
                      Auth(scim));
  ASSERT_TRUE(group.ok() && group->status == 201) << (group.ok() ? group->body : "");
}

json Finding(const json& report, const std::string& control, const std::string& provider) {
  for (const json& f : report["findings"]) {
    if (f["control"] == control && f["provider"] == provider) return f;
  }
  ADD_FAILURE() << "no finding for " << control << " at " << provider;
  return json::object();
}

TEST(ReadinessTest, AnOwnerProvisionedInTheDirectoryPutsItsControlOnItsEvidence) {
  TempDir dir("readiness");
  auto server = ServerProcess::Start(dir.path(), {"--tick-ms", "3600000", "--readiness-interval", "1"});
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

  // Every state is recorded once, as an audit event, before it changes.
  auto changed = [&](const std::string& key, const std::string& from, const std::string& to) {
    json events = get("/v1/audit?action=readiness.change&limit=1000")["events"];
    for (const json& e : events) {
      for (const json& c : e["details"]["changes"]) {
        if (c["control"].get<std::string>() + "@" + c["provider"].get<std::string>() == key && c["from"] == from &&
            c["to"] == to) {
          return true;
        }
      }
    }
    return false;
  };
  ASSERT_TRUE(Eventually([&] { return changed("audit-forwarding@nebius", "unrecorded", "not_in_place"); }));

  // The group is provisioned: the control now stands on its evidence (the
  // demo estate declares a retention, and no export has read the trail
  // yet: partly).
  ASSERT_NO_FATAL_FAILURE(ProvisionGroup(*server, "security"));
  json after = get("/v1/readiness?provider=nebius");
  EXPECT_EQ(after["providers"], json({"nebius"}));
  forwarding = Finding(after, "audit-forwarding", "nebius");
  EXPECT_EQ(forwarding["state"], "partly") << forwarding.dump(2);
  ASSERT_FALSE(forwarding["evidence"].empty());
  EXPECT_EQ(forwarding["evidence"][0]["source"], "audit");
  EXPECT_EQ(Finding(after, "break-glass", "nebius")["state"], "in_place") << "off by default, owned by security";
  for (const json& f : after["findings"]) EXPECT_EQ(f["provider"], "nebius");

  // The change is an audit event: audit-forwarding at nebius went from not
  // in place to partly.
  EXPECT_TRUE(Eventually([&] { return changed("audit-forwarding@nebius", "not_in_place", "partly"); }));

  // The trail exported to a SIEM (a file here): forwarding is measured, and
  // in place while the export keeps up.
  auto exported = RunCli({"audit", "export", "--to", "file:" + dir.path() + "/siem.jsonl", "--cursor",
                          dir.path() + "/siem.cursor"},
                         env);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  forwarding = Finding(get("/v1/readiness?provider=nebius"), "audit-forwarding", "nebius");
  EXPECT_EQ(forwarding["state"], "in_place") << forwarding.dump(2);
  EXPECT_EQ(forwarding["evidence"].back()["source"], "audit feed") << forwarding.dump(2);
  EXPECT_TRUE(Eventually([&] { return changed("audit-forwarding@nebius", "partly", "in_place"); }));

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

// The OSCAL export, validated against NIST's published OSCAL 1.1.3 schema
// (tests/data/oscal, with its source) by ajv 8; provisioning the owning group
// changes that control's finding in the next export.
TEST(ReadinessTest, TheOscalExportIsValidAssessmentResultsAndFollowsTheEvidence) {
  if (std::string why = PeersMissing(); !why.empty()) GTEST_SKIP() << why;
  TempDir dir("readiness-oscal");
  auto server = ServerProcess::Start(dir.path(), {"--tick-ms", "3600000"});
  std::map<std::string, std::string> env = {{"CAUSEWAY_SERVER", server->url()},
                                            {"CAUSEWAY_TOKEN", server->admin_token()}};
  std::string schema = std::string(CAUSEWAY_SOURCE_DIR) + "/tests/data/oscal/oscal_complete_schema-1.1.3.json";
  auto export_and_validate = [&](const std::string& file) {
    auto exported = RunCli({"readiness", "export", "--oscal", "-o", file}, env);
    EXPECT_EQ(exported.exit_code, 0) << exported.err;
    auto valid = RunProcess({"node", PeersDir() + "/validate-oscal.mjs", schema, file}, {}, "", std::chrono::seconds(120));
    EXPECT_TRUE(valid.ok() && valid->exit_code == 0)
        << (valid.ok() ? valid->out + valid->err : valid.status().ToString());
    auto text = ReadFile(file);
    return json::parse(text.ok() ? *text : "{}", nullptr, false);
  };
  auto finding = [](const json& doc, const std::string& control, const std::string& provider) {
    for (const json& f : doc["assessment-results"]["results"][0]["findings"]) {
      std::map<std::string, std::string> props;
      for (const json& p : f["props"]) props[p["name"]] = p["value"];
      if (props["control"] == control && props["provider"] == provider) return f;
    }
    ADD_FAILURE() << "no finding for " << control << " at " << provider;
    return json::object();
  };

  json before = export_and_validate(dir.path() + "/before.json");
  const json& ar = before["assessment-results"];
  EXPECT_EQ(ar["metadata"]["oscal-version"], "1.1.3");
  json forwarding = finding(before, "audit-forwarding", "nebius");
  EXPECT_EQ(forwarding["target"]["status"]["state"], "not-satisfied");
  EXPECT_EQ(forwarding["target"]["status"]["reason"], "fail");
  // The owner is a responsible party of the control's role.
  bool security_party = false;
  for (const json& p : ar["metadata"]["parties"]) security_party |= p["name"] == "group security";
  EXPECT_TRUE(security_party) << ar["metadata"].dump(2);
  // Each finding points at its observation, whose evidence links the API.
  std::string observation = forwarding["related-observations"][0]["observation-uuid"];
  bool linked = false;
  for (const json& o : ar["results"][0]["observations"]) {
    if (o["uuid"] == observation) linked = o["relevant-evidence"][0]["href"] == "/v1/audit/verify";
  }
  EXPECT_TRUE(linked);

  ASSERT_NO_FATAL_FAILURE(ProvisionGroup(*server, "security"));
  json after = export_and_validate(dir.path() + "/after.json");
  json changed = finding(after, "audit-forwarding", "nebius");
  EXPECT_EQ(changed["uuid"], forwarding["uuid"]) << "the same subject keeps its UUID";
  EXPECT_NE(after["assessment-results"]["uuid"], ar["uuid"]) << "each export is a document of its own";
  EXPECT_EQ(changed["target"]["implementation-status"]["state"], "partial") << changed.dump(2);
  EXPECT_NE(changed["description"], forwarding["description"]);
}

// The recovery and residency acceptance tests on the simulated estate:
// each passes, writes its reports, is recorded in the audit trail, shows in
// `acceptance list`, and becomes the evidence of its control; recovery that
// is impossible (a checkpoint only the lost cluster can read) fails with the
// scheduler's reason, and the job and the outage are cleaned up.
TEST(ReadinessTest, RecoveryAndResidencyAcceptanceTestsPassOnTheSimulatedEstateAndFeedReadiness) {
  TempDir dir("acceptance-recovery");
  auto server = ServerProcess::Start(dir.path() + "/data");
  std::map<std::string, std::string> env = {{"CAUSEWAY_SERVER", server->url()},
                                            {"CAUSEWAY_TOKEN", server->admin_token()}};
  auto get = [&](const std::string& path) {
    auto r = server->Client().Send("GET", path, "", Auth(server->admin_token()));
    return json::parse(r.ok() ? r->body : "{}", nullptr, false);
  };
  // A job handed a static cloud key in its environment: workload identity
  // at its provider is not in place, naming the job and the variable (never
  // the value).
  auto keyed = server->Client().Send(
      "POST", "/v1/jobs",
      json{{"spec", "name: keyed\nresources: {accelerators: {H100: 1, A100-80GB: 1}}\nlabels: {team: vision, owner: "
                    "alice@corp.example}\nenvs: {AWS_SECRET_ACCESS_KEY: wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY}\n"
                    "run: sleep 3600\nsim: {duration: 2h}\n"}}
          .dump(),
      Auth(server->admin_token()));
  ASSERT_TRUE(keyed.ok() && keyed->status == 201) << (keyed.ok() ? keyed->body : "");
  std::string keyed_id = json::parse(keyed->body)["job"]["id"];
  std::string keyed_cluster;
  ASSERT_TRUE(Eventually([&] {
    json j = get("/v1/jobs/" + keyed_id);
    keyed_cluster = j.value("state", "") == "running" ? j["attempts"].back().value("cluster", "") : "";
    return !keyed_cluster.empty();
  }));
  std::string keyed_provider;
  json clusters = get("/v1/clusters");
  for (const json& cl : clusters["clusters"]) {
    if (cl["name"] == keyed_cluster) keyed_provider = cl["provider"];
  }
  json keyed_finding = Finding(get("/v1/readiness"), "workload-identity", keyed_provider);
  EXPECT_NE(keyed_finding.dump().find(keyed_id + ": AWS_SECRET_ACCESS_KEY (AWS secret key)"), std::string::npos)
      << keyed_finding.dump(2);
  EXPECT_EQ(keyed_finding.dump().find("wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"), std::string::npos);
  EXPECT_TRUE(server->Client().Send("POST", "/v1/jobs/" + keyed_id + "/cancel", "{}", Auth(server->admin_token())).ok());

  auto list = RunCli({"acceptance", "list"}, env);
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("never run"), std::string::npos) << list.out;
  EXPECT_NE(Finding(get("/v1/readiness?provider=nebius"), "restore-rehearsal", "nebius")["reason"]
                .get<std::string>()
                .find("no recovery or failover acceptance run"),
            std::string::npos);

  auto recovery = RunCli({"--json", "acceptance", "recovery", "--team", "vision", "--out", dir.path()}, env);
  EXPECT_EQ(recovery.exit_code, 0) << recovery.out << recovery.err;
  json r = json::parse(recovery.out, nullptr, false);
  ASSERT_TRUE(r.is_object()) << recovery.out;
  EXPECT_TRUE(r["passed"]) << r.dump(2);
  EXPECT_TRUE(r["recorded"].is_number_integer()) << r.dump(2);
  EXPECT_EQ(r["objective_ms"], 30 * 60 * 1000);
  EXPECT_LE(r["recovery_ms"].get<int64_t>(), 30 * 60 * 1000);
  std::string lost = r["provider"];
  // Cleaned up: the job is cancelled and the provider back.
  EXPECT_TRUE(Eventually([&] { return get("/v1/jobs/" + r["job"].get<std::string>())["state"] == "cancelled"; }));

  auto residency = RunCli({"--json", "acceptance", "residency", "--team", "nlp", "--zone", "eu", "--hold", "2",
                           "--out", dir.path()},
                          env);
  EXPECT_EQ(residency.exit_code, 0) << residency.out << residency.err;
  json z = json::parse(residency.out, nullptr, false);
  ASSERT_TRUE(z.is_object()) << residency.out;
  for (const json& step : z["steps"]) {
    EXPECT_EQ(step["result"], "pass") << step;
    if (step["step"].get<std::string>().find("outside eu is refused") != std::string::npos) {
      EXPECT_NE(step["detail"].get<std::string>().find("bound to residency zone eu"), std::string::npos) << step;
    }
  }

  // Recorded: `acceptance list` and the readiness evidence name the runs.
  json runs = get("/v1/acceptance/runs");
  std::map<std::string, json> by;
  for (const json& run : runs["runs"]) by[run["test"]] = run;
  EXPECT_TRUE(by["recovery"]["passed"]);
  EXPECT_EQ(by["recovery"]["seq"], r["recorded"]);
  EXPECT_EQ(by["recovery"]["provider"], lost);
  EXPECT_TRUE(by["residency"]["passed"]);
  EXPECT_TRUE(by["identity"]["seq"].is_null());
  auto table = RunCli({"acceptance", "list"}, env);
  EXPECT_NE(table.out.find("passed"), std::string::npos) << table.out;
  json report = get("/v1/readiness");
  json rehearsal = Finding(report, "restore-rehearsal", lost);
  bool cited = false;
  for (const json& e : rehearsal["evidence"]) cited |= e.value("last_seq", 0) == r["recorded"].get<int64_t>();
  EXPECT_TRUE(cited) << rehearsal.dump(2);
  EXPECT_NE(rehearsal["reason"].get<std::string>().find("recovery acceptance run passed"), std::string::npos)
      << rehearsal.dump(2);
  for (std::string p : {"nebius", "coreweave", "gcp"}) {
    if (p == lost) continue;
    EXPECT_NE(Finding(report, "restore-rehearsal", p)["reason"].get<std::string>().find("rehearsed losing " + lost),
              std::string::npos);
  }

  // Impossible recovery: the checkpoint is a path only the lost cluster
  // can read. The test fails, says why, and still cleans up.
  auto impossible = RunCli({"--json", "acceptance", "recovery", "--team", "vision", "--checkpoint-path",
                            "/local/scratch", "--recovery-timeout", "3", "--out", dir.path()},
                           env);
  EXPECT_EQ(impossible.exit_code, 1) << impossible.out << impossible.err;
  json f = json::parse(impossible.out, nullptr, false);
  ASSERT_TRUE(f.is_object()) << impossible.out;
  EXPECT_FALSE(f["passed"]);
  std::string why;
  for (const json& step : f["steps"]) {
    if (step["result"] == "fail") why = step["detail"];
  }
  EXPECT_NE(why.find("not resumed after 3 s"), std::string::npos) << f.dump(2);
  EXPECT_TRUE(Eventually([&] { return get("/v1/jobs/" + f["job"].get<std::string>())["state"] == "cancelled"; }));
  // The failed run is now the latest: restore rehearsal is not in place.
  json after = Finding(get("/v1/readiness"), "restore-rehearsal", f["provider"]);
  EXPECT_NE(after["reason"].get<std::string>().find("failed"), std::string::npos) << after.dump(2);

  // The default team (the first queue's, nlp, which the estate's policy
  // binds to eu), no flags: the checkpoint goes to the storage the embedded
  // estate declares in eu, and the test passes.
  auto nlp = RunCli({"--json", "acceptance", "recovery", "--out", dir.path()}, env);
  EXPECT_EQ(nlp.exit_code, 0) << nlp.out << nlp.err;
  json n = json::parse(nlp.out, nullptr, false);
  ASSERT_TRUE(n.is_object()) << nlp.out;
  EXPECT_TRUE(n["passed"]) << n.dump(2);
  EXPECT_EQ(n.value("checkpoint", "").rfind("s3://causeway-checkpoints-eu/", 0), 0u) << n.dump(2);
  EXPECT_TRUE(Eventually([&] { return get("/v1/jobs/" + n["job"].get<std::string>())["state"] == "cancelled"; }));
}

// An estate that binds a team to a zone and declares no storage there:
// the recovery test fails at once, saying so, and makes nothing.
TEST(ReadinessTest, RecoveryAcceptanceSaysWhenTheZoneHasNoStorage) {
  TempDir dir("acceptance-no-storage");
  std::string estate(DefaultEstateYaml());
  for (size_t at; (at = estate.find("    storage: [s3://causeway-checkpoints-")) != std::string::npos;) {
    estate.erase(at, estate.find('\n', at) - at + 1);
  }
  std::ofstream(dir.path() + "/estate.yaml") << estate;
  auto server = ServerProcess::Start(dir.path() + "/data", {"--estate", dir.path() + "/estate.yaml"});
  std::map<std::string, std::string> env = {{"CAUSEWAY_SERVER", server->url()},
                                            {"CAUSEWAY_TOKEN", server->admin_token()}};
  auto run = RunCli({"--json", "acceptance", "recovery", "--team", "nlp", "--out", dir.path()}, env);
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("this estate declares no storage in zone eu"), std::string::npos) << run.out;
  auto jobs = server->Client().Send("GET", "/v1/jobs", "", Auth(server->admin_token()));
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE(json::parse(jobs->body)["jobs"].empty()) << "nothing was submitted";
}

}  // namespace
}  // namespace causeway::testing
