// `causeway acceptance identity`: the identity acceptance test, run against
// the live system through its API with an admin token. A throwaway user
// and group are provisioned through SCIM, the group is bound to a
// researcher role, the user runs a real job under those permissions, is
// taken out of the group (the change must apply within a second), is
// deactivated, and nothing they held may still grant access. Each step
// passes or fails with the audit event ids that prove it; the report is
// written as JSON and as text. What it made is removed at the end.
#include "cli/acceptance.h"

#include "cli/acceptance_kit.h"

#include <chrono>
#include <deque>
#include <set>
#include <sstream>
#include <fstream>
#include <iostream>
#include <thread>

#include "causeway/clock.h"
#include "causeway/crypto.h"
#include "cli/table.h"

namespace causeway::cli {

using nlohmann::json;

namespace {

using namespace acceptance;

constexpr const char* kUserSchema = "urn:ietf:params:scim:schemas:core:2.0:User";
constexpr const char* kGroupSchema = "urn:ietf:params:scim:schemas:core:2.0:Group";
constexpr const char* kPatchOp = "urn:ietf:params:scim:api:messages:2.0:PatchOp";
constexpr auto kPropagationBound = std::chrono::milliseconds(1000);

// Steps are kept in a deque: each is filled in while later ones are added.
// Longer than the rest on purpose: it is the acceptance test's script, read
// top to bottom as a security reviewer reads the report, each step using what
// the ones before made (tokens, ids, sessions).
json RunIdentity(const Globals& g, const Options& o, Steps& steps) {
  Session admin(g, AdminToken(g));
  std::string tag = Tag();
  std::string user = "acceptance-" + tag + "@causeway.invalid";
  std::string group_name = "causeway-acceptance-" + tag;
  json made = json::object();  // what to remove at the end
  std::string scim_secret;      // the provisioning token, to remove the user and group with
  auto step = [&](std::string name) -> Step& { return AddStep(steps, std::move(name)); };
  // Whatever step the test stopped at, what it made goes away (not part of
  // the verdict): the binding, the user's and the IdP's tokens, the SCIM
  // user and group.
  auto clean_up = [&]() {
    if (made.contains("binding")) admin.Do("DELETE", "/v1/access/bindings/" + made["binding"].get<std::string>());
    if (made.contains("person_token")) {
      admin.Do("POST", "/v1/tokens/" + made["person_token"].get<std::string>() + "/revoke", json::object());
    }
    if (!scim_secret.empty()) {
      Session idp(g, scim_secret);
      if (made.contains("group")) idp.Do("DELETE", "/scim/v2/Groups/" + made["group"].get<std::string>());
      if (made.contains("user")) idp.Do("DELETE", "/scim/v2/Users/" + made["user"].get<std::string>());
    }
    if (made.contains("scim_token")) {
      admin.Do("POST", "/v1/tokens/" + made["scim_token"].get<std::string>() + "/revoke", json::object());
    }
  };
  auto finish = [&]() {
    clean_up();
    return json{{"user", user}, {"group", group_name}, {"team", o.team},
                {"summary", "throwaway user " + user + ", group " + group_name + ", team " + o.team}};
  };

  // 1. A provisioning-only token, as the IdP would hold.
  Step& s1 = step("a provisioning-only token for the IdP (scim:provision, 15m)");
  auto t = admin.Do("POST", "/v1/tokens", {{"name", "acceptance-" + tag + "-idp"}, {"scopes", {"scim:provision"}}, {"ttl", "15m"}});
  if (t.status != 201) {
    s1.detail = ErrorOf(t);
    return finish();
  }
  std::string scim_token = t.body["secret"];
  std::string scim_token_id = t.body["token"]["id"];
  made["scim_token"] = scim_token_id;
  scim_secret = scim_token;
  s1.ok = true;
  s1.evidence = Evidence(admin, "token/" + scim_token_id, "token.create");
  Session idp(g, scim_token);

  // 2. Onboard through SCIM: the user, the group with the user in it.
  Step& s2 = step("onboard " + user + " and group " + group_name + " through SCIM");
  auto u = idp.Do("POST", "/scim/v2/Users",
                  {{"schemas", {kUserSchema}}, {"userName", user}, {"name", {{"givenName", "Acceptance"}, {"familyName", tag}}},
                   {"active", true}},
                  "application/scim+json");
  if (u.status != 201) {
    s2.detail = "user: " + ErrorOf(u);
    return finish();
  }
  std::string user_id = u.body["id"];
  made["user"] = user_id;
  auto gr = idp.Do("POST", "/scim/v2/Groups",
                   {{"schemas", {kGroupSchema}}, {"displayName", group_name}, {"members", {{{"value", user_id}}}}},
                   "application/scim+json");
  if (gr.status != 201) {
    s2.detail = "group: " + ErrorOf(gr);
    return finish();
  }
  std::string group_id = gr.body["id"];
  made["group"] = group_id;
  s2.ok = true;
  s2.evidence = Evidence(admin, "user/" + user_id, "scim.user.create");
  for (int64_t seq : Evidence(admin, "group/" + group_id, "scim.group.create")) s2.evidence.push_back(seq);

  // 3. The group gets a role: researcher of the team.
  Step& s3 = step("bind " + group_name + " to researcher of team " + o.team);
  auto b = admin.Do("POST", "/v1/access/bindings", {{"group", group_name}, {"role", "researcher"}, {"team", o.team}});
  if (b.status != 201) {
    s3.detail = ErrorOf(b);
    return finish();
  }
  std::string binding = b.body["binding"]["source"];
  made["binding"] = binding.substr(binding.find('/') + 1);
  s3.ok = true;
  s3.evidence = Evidence(admin, binding, "access.bind");

  // 4. The person's credential, and what it grants.
  Step& s4 = step("the user's token grants researcher of " + o.team + " through the group, nothing more");
  auto pt = admin.Do("POST", "/v1/tokens",
                     {{"name", "acceptance-" + tag + "-user"}, {"scopes", {"jobs:read", "jobs:write"}}, {"ttl", "15m"}, {"user", user}});
  if (pt.status != 201) {
    s4.detail = ErrorOf(pt);
    return finish();
  }
  std::string person_token_id = pt.body["token"]["id"];
  made["person_token"] = person_token_id;
  Session person(g, pt.body["secret"]);
  auto me = person.Do("GET", "/v1/whoami");
  bool researcher = me.status == 200 && me.body["grants"].size() == 1 && me.body["grants"][0]["role"] == "researcher" &&
                    me.body["grants"][0]["team"] == o.team;
  auto audit_try = person.Do("GET", "/v1/audit");
  s4.ok = researcher && audit_try.status == 403;
  s4.detail = researcher ? "whoami: researcher of " + o.team + "; audit trail: HTTP " + std::to_string(audit_try.status)
                         : "whoami: " + me.body.dump();
  s4.evidence = Evidence(admin, "token/" + person_token_id, "token.create");

  // Provider accounts follow the role (where a Slurm cluster keeps accounting).
  Step& s4b = step("the user's provider accounts follow the role");
  auto held = admin.Do("GET", "/v1/people/" + net::UrlEncode(user) + "/credentials");
  if (held.status != 200) {
    s4b.detail = ErrorOf(held);
  } else {
    const json& accounts = held.body["provider_accounts"];
    s4b.ok = std::all_of(accounts.begin(), accounts.end(), [](const json& a) { return a.value("state", "") == "present"; });
    s4b.not_applicable = accounts.empty();
    s4b.detail = accounts.empty() ? "no cluster keeps accounts for people" : accounts.dump();
    for (const json& a : accounts) {
      for (int64_t seq : Evidence(admin, "cluster/" + a.value("cluster", ""), "provider.account.create", user)) {
        s4b.evidence.push_back(seq);
      }
    }
  }

  // 5. A real job under those permissions. It asks for one GPU of any type
  // the estate has: the team's policies leave out the types it may not use.
  Step& s5 = step("run a job as the user in team " + o.team);
  auto clusters = admin.Do("GET", "/v1/clusters");
  std::set<std::string> types;
  if (clusters.status == 200) {
    for (const json& c : clusters.body["clusters"]) {
      for (const json& p : c["node_pools"]) types.insert(p.value("gpu_type", ""));
    }
  }
  types.erase("");
  std::string gpu;  // "{H100: 1, L4: 1}"
  for (const std::string& type : types) gpu += (gpu.empty() ? "{" : ", ") + type + ": 1";
  gpu += gpu.empty() ? "{}" : "}";
  std::string spec = "name: acceptance-identity\nresources: {accelerators: " + gpu +
                     "}\nlabels: {team: " + o.team + "}\nrun: echo acceptance\nsim: {duration: 1m}\n";
  auto job = person.Do("POST", "/v1/jobs", {{"spec", spec}});
  std::string job_id;
  if (job.status != 201) {
    s5.detail = ErrorOf(job);
  } else {
    job_id = job.body["job"]["id"];
    std::string state;
    auto ran = TimeUntil(
        [&] {
          state = person.Do("GET", "/v1/jobs/" + job_id).body.value("state", "");
          return state == "running" || state == "succeeded";
        },
        std::chrono::seconds(o.job_timeout_s));
    s5.ok = ran.has_value() && job.body["job"]["owner"] == user;
    s5.detail = "job " + job_id + " owned by " + job.body["job"].value("owner", "") + ", " + state;
    s5.evidence = Evidence(admin, "job/" + job_id, "job.");
  }

  // 6. Outside the role: another team's queue is refused.
  Step& s6 = step("a team the user was not given is refused");
  auto queues = admin.Do("GET", "/v1/queues");
  std::string other;
  if (queues.status == 200) {
    for (const json& q : queues.body["queues"]) {
      if (q.value("team", "") != o.team && other.empty()) other = q.value("team", "");
    }
  }
  if (other.empty()) {
    s6.ok = true;
    s6.not_applicable = true;
    s6.detail = "the estate has no other team to try";
  } else {
    auto refused = person.Do("POST", "/v1/jobs", {{"spec", "name: x\nresources: {accelerators: " + gpu +
                                                               "}\nlabels: {team: " + other + "}\nrun: echo\n"}});
    s6.ok = refused.status == 403;
    s6.detail = "team " + other + ": " + ErrorOf(refused);
  }

  // 7. Group membership changes; it must apply within a second.
  Step& s7 = step("removed from the group: the team's jobs are out of reach within 1 s");
  auto removed = idp.Do("PATCH", "/scim/v2/Groups/" + group_id,
                        {{"schemas", {kPatchOp}},
                         {"Operations", {{{"op", "remove"}, {"path", "members[value eq \"" + user_id + "\"]"}}}}},
                        "application/scim+json");
  if (removed.status != 200 && removed.status != 204) {  // a group's PATCH may answer without the group
    s7.detail = ErrorOf(removed);
  } else {
    s7.ms = TimeUntil([&] { return person.Do("GET", "/v1/jobs?team=" + o.team).status == 403; }, std::chrono::seconds(10));
    s7.ok = s7.ms && std::chrono::milliseconds(*s7.ms) <= kPropagationBound;
    s7.detail = s7.ms ? "applied after " + std::to_string(*s7.ms) + " ms" : "still allowed after 10 s";
    s7.evidence = Evidence(admin, "group/" + group_id, "scim.group.update");
  }

  // 8. Access revoked: deactivated by the IdP.
  Step& s8 = step("deactivated through SCIM: the token stops within 1 s, work and accounts are carried through");
  auto off = idp.Do("PATCH", "/scim/v2/Users/" + user_id,
                    {{"schemas", {kPatchOp}}, {"Operations", {{{"op", "replace"}, {"path", "active"}, {"value", false}}}}},
                    "application/scim+json");
  if (off.status != 200) {
    s8.detail = ErrorOf(off);
  } else {
    s8.ms = TimeUntil([&] { return person.Do("GET", "/v1/whoami").status == 401; }, std::chrono::seconds(10));
    s8.ok = s8.ms && std::chrono::milliseconds(*s8.ms) <= kPropagationBound;
    s8.detail = s8.ms ? "token refused after " + std::to_string(*s8.ms) + " ms" : "token still works after 10 s";
    s8.evidence = Evidence(admin, "user/" + user_id, "scim.user.deactivate");
    for (int64_t seq : Evidence(admin, "token/" + person_token_id, "token.revoke")) s8.evidence.push_back(seq);
    for (int64_t seq : Evidence(admin, "user/" + user, "identity.deprovision")) s8.evidence.push_back(seq);
  }

  // 9. The logs tell the whole story.
  Step& s9 = step("the audit trail has every step");
  std::vector<std::pair<std::string, std::string>> wanted = {
      {"user/" + user_id, "scim.user.create"},   {"group/" + group_id, "scim.group.create"},
      {binding, "access.bind"},                  {"group/" + group_id, "scim.group.update"},
      {"user/" + user_id, "scim.user.deactivate"}, {"token/" + person_token_id, "token.revoke"},
      {"user/" + user, "identity.deprovision"}};
  if (!job_id.empty()) wanted.push_back({"job/" + job_id, "job.submit"});
  std::string missing;
  for (const auto& [resource, action] : wanted) {
    auto seqs = Evidence(admin, resource, action);
    if (seqs.empty()) missing += (missing.empty() ? "" : ", ") + action;
    for (int64_t seq : seqs) s9.evidence.push_back(seq);
  }
  auto verify = admin.Do("GET", "/v1/audit/verify");
  bool chain = verify.status == 200 && verify.body.value("ok", false);
  s9.ok = missing.empty() && chain;
  s9.detail = (missing.empty() ? "all recorded" : "missing: " + missing) + "; chain " + (chain ? "intact" : "BROKEN");

  // 10. Nothing forgotten still opens a door.
  Step& s10 = step("no credential the user held retains access");
  auto creds = admin.Do("GET", "/v1/people/" + net::UrlEncode(user) + "/credentials");
  s10.ok = creds.status == 200 && !creds.body.value("retains_access", true);
  if (creds.status == 200) {
    for (const json& a : creds.body["provider_accounts"]) {
      for (int64_t seq : Evidence(admin, "cluster/" + a.value("cluster", ""), "provider.account.remove", user)) {
        s10.evidence.push_back(seq);
      }
    }
  }
  s10.detail = creds.status == 200 ? "api tokens: " + std::to_string(creds.body["api_tokens"].size()) +
                                         ", live workload tokens: " + std::to_string(creds.body["workload_tokens"].size()) +
                                         ", provider accounts: " + creds.body["provider_accounts"].dump()
                                   : ErrorOf(creds);
  json evidence = finish();
  evidence["credentials"] = creds.body;
  return evidence;
}

}  // namespace

void AddAcceptanceCommands(CLI::App& app, const Globals& g, int& rc) {
  using namespace acceptance;
  auto* cmd = app.add_subcommand("acceptance", "acceptance tests against the live system, with evidence reports");
  cmd->require_subcommand(1);
  auto options = std::make_shared<Options>();
  // The team a test works in: --team, or the first queue's.
  auto team = [&g, &rc](Options& o) {
    if (!o.team.empty()) return true;
    Session probe(g, AdminToken(g));
    auto q = probe.Do("GET", "/v1/queues");
    if (q.status == 200 && !q.body["queues"].empty()) o.team = q.body["queues"][0].value("team", "");
    if (o.team.empty()) {
      std::cerr << "error: name a team with --team (the server listed no queues: " << ErrorOf(q) << ")\n";
      rc = kExitUsage;
      return false;
    }
    return true;
  };
  auto common = [options](CLI::App* sub) {
    sub->add_option("--team", options->team, "the team the test works in (default: the first queue's)");
    sub->add_option("--out", options->out_dir, "where the report is written (JSON and text)");
    sub->add_option("--job-timeout", options->job_timeout_s, "seconds the test's job may take to start");
  };
  auto run = [&g, &rc, options, team](const std::string& test, auto runner, bool needs_team = true) {
    Options o = *options;
    if (needs_team && !team(o)) return;
    std::string started = FormatRfc3339(RealClock().Now());
    Steps steps;
    json subject = runner(g, o, steps);
    rc = Conclude(g, o, test, started, steps, std::move(subject));
  };

  auto* identity = cmd->add_subcommand(
      "identity", "onboard a throwaway user, run a job, change their group, revoke them, prove nothing retains access");
  common(identity);
  identity->callback([run] { run("identity", RunIdentity); });

  auto* recovery = cmd->add_subcommand(
      "recovery", "run a checkpointing job, take its provider down, prove it resumes elsewhere from its latest "
                  "checkpoint within the recovery objective");
  common(recovery);
  recovery->add_option("--checkpoint-path", options->checkpoint_path,
                       "where the job checkpoints (default: an object store every cluster can read)");
  recovery->add_option("--recovery-timeout", options->recovery_timeout_s,
                       "seconds to wait for the job to resume (default: the estate's recovery objective)");
  recovery->callback([run] { run("recovery", RunRecovery); });

  auto* residency = cmd->add_subcommand(
      "residency", "bind a job to a zone, prove its checkpoints and logs stay there, a checkpoint outside is "
                   "refused, and it is never resumed outside");
  common(residency);
  residency->add_option("--zone", options->zone, "the residency zone (default: the first zone with clusters)");
  residency->add_option("--hold", options->hold_s, "seconds the job must stay in its zone while its provider is down");
  residency->callback([run] { run("residency", RunResidency); });

  auto* data = cmd->add_subcommand(
      "data", "run a dataset's loading pattern on a cluster: read throughput and time, the data's way there, and "
              "the cost per completed job with data movement");
  common(data);
  data->add_option("--dataset", options->dataset, "the version to read, NAME@VERSION")->required();
  data->add_option("--cluster", options->cluster, "where the loading pattern runs")->required();
  data->add_option("--read-command", options->read_command,
                   "the job's own read command, run in bash with the data at $CAUSEWAY_DATA_DIR (default: read "
                   "every object once, printing the bytes read)");
  data->callback([run] { run("data", RunData); });

  auto* failover = cmd->add_subcommand(
      "failover", "put a steady load on a service, take its preferred provider down, measure the time until every "
                  "request is served by its alternate and what failed, then restore it and see traffic come back");
  common(failover);
  failover->add_option("SERVICE", options->service, "the service to drill")->required();
  failover->add_option("--rate", options->rate, "requests per second on its endpoint")->capture_default_str();
  failover->add_option("--objective", options->objective_s,
                       "seconds within which every request must be served by the alternate")
      ->capture_default_str();
  failover->add_option("--fallback-timeout", options->fallback_timeout_s,
                       "seconds past the hold-down that traffic may take to come back")
      ->capture_default_str();
  failover->callback([run] { run("failover", RunFailover, false); });

  auto* list = cmd->add_subcommand("list", "each test's last run and result, as recorded on the server");
  list->callback([&g, &rc] {
    Session s(g, AdminToken(g));
    auto r = s.Do("GET", "/v1/acceptance/runs");
    if (r.status != 200) {
      std::cerr << "error: " << ErrorOf(r) << "\n";
      rc = r.status == 401 || r.status == 403 ? kExitAuth : kExitFailure;
      return;
    }
    if (g.json_output) {
      std::cout << r.body.dump(2) << "\n";
      return;
    }
    Table t({"TEST", "LAST RUN", "RESULT", "AUDIT SEQ", "DETAIL"});
    for (const json& run : r.body["runs"]) {
      if (run["seq"].is_null()) {
        t.Add({run.value("test", ""), "-", "never run", "-", ""});
        continue;
      }
      std::string detail;
      for (const json& step : run["steps"]) {
        if (step.value("result", "") == "fail" && detail.empty()) detail = step.value("step", "") + ": " + step.value("detail", "");
      }
      if (detail.empty() && run.contains("recovery_ms")) {
        int64_t ms = run["recovery_ms"].get<int64_t>();
        detail = "resumed after " + (ms < 10'000 ? std::to_string(ms) + " ms" : std::to_string(ms / 1000) + " s");
      }
      t.Add({run.value("test", ""), run.value("finished", ""), run.value("passed", false) ? "passed" : "FAILED",
             std::to_string(run["seq"].get<int64_t>()), detail});
    }
    t.Print(std::cout);
  });
}

}  // namespace causeway::cli
