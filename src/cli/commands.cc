#include "cli/commands.h"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "net/http_client.h"
#include "api/server.h"
#include "audit/chain.h"
#include "causeway/crypto.h"
#include "causeway/estate.h"
#include "causeway/job_spec.h"
#include "causeway/store.h"
#include "store/db_admin.h"
#include "cli/cost_commands.h"
#include "cost/focus.h"
#include "cli/acceptance.h"
#include "cli/api_client.h"
#include "cli/audit_commands.h"
#include "service/checkpoint_service.h"
#include "cli/errors.h"
#include "cli/identity_commands.h"
#include "cli/table.h"
#include "placement/router.h"
#include "policy/policy.h"
#include "spec/spec_json.h"

namespace causeway::cli {
namespace {

using nlohmann::json;


std::string Gpus(const json& spec) {
  std::string out;
  if (!spec.is_object() || !spec.contains("accelerators")) return "-";
  for (const auto& a : spec["accelerators"]) {
    out += (out.empty() ? "" : "|") + a.value("type", "") + ":" + std::to_string(a.value("count", 0));
  }
  if (out.empty()) return "-";
  int nodes = spec.value("num_nodes", 1);
  return nodes > 1 ? std::to_string(nodes) + "x" + out : out;
}

std::string Fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

void PrintJobsTable(const json& jobs) {
  Table t({"id", "name", "team", "owner", "state", "gpus", "cluster", "attempts", "gpu-h", "cost"});
  for (const auto& j : jobs) {
    double cost = static_cast<double>(j.value("cost_micros", int64_t{0})) / 1e6;
    t.Add({Str(j, "id"), Str(j, "name"), Str(j, "team"), Str(j, "owner"), Str(j, "state"), Gpus(j["spec"]),
           Str(j, "cluster").empty() ? "-" : Str(j, "cluster"), Str(j, "attempts"),
           Fixed(j.value("gpu_hours", 0.0), 1), Fixed(cost, 2)});
  }
  t.Print(std::cout);
}

// Prints what `migrate`, `db check` and `db copy` found; exit 8 when the
// chain is broken.
int PrintDbReport(const Result<DbReport>& r, bool json_output) {
  if (!r.ok()) return Fail(r.status());
  if (json_output) {
    json j = {{"db", r->db},
              {"schema_version", r->schema_version},
              {"latest_version", r->latest_version},
              {"jobs", r->jobs},
              {"audit", {{"ok", r->chain.ok}, {"events", r->chain.events}}}};
    if (!r->chain.ok) {
      j["audit"]["first_bad_seq"] = r->chain.first_bad_seq;
      j["audit"]["reason"] = r->chain.reason;
    }
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "database: " << r->db << "\n"
              << "schema:   version " << r->schema_version
              << (r->schema_version == r->latest_version ? " (current)"
                                                         : " (this causeway writes " + std::to_string(r->latest_version) +
                                                               ": run causeway migrate)")
              << "\n"
              << "jobs:     " << r->jobs << "\n"
              << "audit:    "
              << (r->chain.ok ? std::to_string(r->chain.events) + " events, chain intact"
                              : "broken at seq " + std::to_string(r->chain.first_bad_seq) + ": " + r->chain.reason)
              << "\n";
  }
  return r->chain.ok ? kExitOk : kExitAuditBroken;
}

// Prints what `audit verify` found (the server's answer or the offline
// check's, the same JSON); exit 8 when the chain or a checkpoint is bad.
int PrintVerify(const json& j, bool json_output) {
  bool ok = j.value("ok", false);
  if (json_output) {
    std::cout << j.dump(2) << "\n";
  } else if (ok) {
    std::cout << "ok: " << Str(j, "events") << " events, chain intact; " << Str(j, "checkpoints")
              << " signed checkpoints verified, the last at seq " << Str(j, "last_signed_seq") << " ("
              << Str(j, "unsigned_events") << " events since)\n";
  } else if (j.contains("first_bad_seq")) {
    std::cout << "broken at seq " << Str(j, "first_bad_seq") << ": " << Str(j, "reason") << "\n";
  } else {
    std::cout << "chain intact, but " << Str(j, "checkpoint_error") << "\n";
  }
  return ok ? kExitOk : kExitAuditBroken;
}

// Verifies the chain and its checkpoints straight from a database, without
// a server; with `public_key`, checkpoints are checked against that key
// alone rather than the keys the database holds.
int VerifyOffline(const std::string& db_path, const std::string& public_key, bool json_output) {
  std::optional<identity::jwt::KeySet> keys;
  if (!public_key.empty()) {
    auto loaded = LoadAuditKeys(public_key);
    if (!loaded.ok()) return Fail(loaded.status());
    keys = std::move(*loaded);
  }
  auto store = OpenStore(db_path, true);
  if (!store.ok()) return Fail(store.status());
  auto report = VerifyTrail(**store, keys ? &*keys : nullptr);
  if (!report.ok()) return Fail(report.status());
  return PrintVerify(ToJson(*report), json_output);
}

}  // namespace

int Main(int argc, char** argv) {
  CLI::App app{"Causeway: put rented GPU capacity to governed, productive work.", "causeway"};
  app.require_subcommand(1);
  app.fallthrough();  // global options may follow the subcommand: `causeway jobs --json`
  Globals g;
  if (const char* s = std::getenv("CAUSEWAY_SERVER")) g.server = s;
  if (const char* t = std::getenv("CAUSEWAY_TOKEN")) g.token = t;
  if (const char* f = std::getenv("CAUSEWAY_TOKEN_FILE")) g.token_file = f;
  app.add_option("--server", g.server, "API server URL (env CAUSEWAY_SERVER)")->capture_default_str();
  app.add_option("--token", g.token, "API token (env CAUSEWAY_TOKEN)");
  app.add_option("--token-file", g.token_file, "file holding the API token (env CAUSEWAY_TOKEN_FILE)");
  app.add_flag("--json", g.json_output, "print JSON for machines instead of tables");
  Api api(g);
  int rc = kExitOk;
  auto print_json = [&](const json& j) { std::cout << j.dump(2) << "\n"; };

  // serve
  api::ServeOptions so;
  auto* serve = app.add_subcommand("serve", "run the API server, scheduler and reconcilers");
  serve->add_option("--listen", so.listen, "HOST:PORT to listen on (port 0 picks one)")->capture_default_str();
  serve->add_option("--data-dir", so.data_dir, "directory for the database and admin token")->capture_default_str();
  if (const char* db = std::getenv("CAUSEWAY_DB")) so.db_path = db;
  serve->add_option("--db", so.db_path,
                    "database: a SQLite file (default DATA_DIR/causeway.db) or postgresql://USER:PASS@HOST/DB "
                    "(env CAUSEWAY_DB)");
  serve->add_option("--estate", so.estate_path, "estate YAML (default: the embedded simulated estate)");
  serve->add_option("--threads", so.threads, "HTTP threads (default: one per core)");
  serve->add_option("--sim-speed", so.sim_speed, "run simulated providers this many times faster than real time")
      ->capture_default_str();
  serve->add_option("--sim-seed", so.sim_seed, "seed for simulated preemptions and failures")->capture_default_str();
  serve->add_option("--tick-ms", so.tick_ms, "scheduling cycle in real milliseconds")->capture_default_str();
  serve->add_option("--replica", so.replica, "this replica's name among servers on one database (default host:pid:random)");
  serve->add_option("--lease-ttl-ms", so.lease_ttl_ms,
                    "how long the scheduler lease lasts unrenewed: the bound on a takeover after a leader dies")
      ->capture_default_str();
  serve->add_option("--audit-checkpoint-interval", so.audit_checkpoint_s,
                    "seconds between signed checkpoints of the audit chain's head (0: only on request)")
      ->capture_default_str();
  serve->add_option("--header-timeout", so.header_timeout_s, "seconds a client has to send a request's headers")
      ->capture_default_str();
  serve->add_option("--idle-timeout", so.idle_timeout_s, "seconds a kept-alive connection may wait for its next request")
      ->capture_default_str();
  serve->add_option("--max-connections", so.max_connections,
                    "connections kept open at most (also bounded by the open-file limit)")
      ->capture_default_str();
  serve->add_option("--body-limit", so.body_limit, "largest request body, in bytes")->capture_default_str();
  serve->add_option("--telemetry-max-age", so.telemetry_max_age, "pushed GPU samples older than this are refused")
      ->capture_default_str();
  serve->add_option("--telemetry-max-ahead", so.telemetry_max_ahead,
                    "pushed GPU samples stamped this far in the future are refused")
      ->capture_default_str();
  serve->add_option("--telemetry-max-points", so.telemetry_max_points,
                    "GPU utilization points held in memory at most (16-32 bytes each); past it pushes get 429")
      ->capture_default_str();
  serve->add_flag("--print-admin-token", so.print_admin_token,
                  "on the first start, also print the admin token's secret (it is always in DATA_DIR/admin.token)");
  serve->add_option("--advertise-url", so.advertise_url,
                    "how jobs reach this server, given to them as CAUSEWAY_SERVER (default http://LISTEN)");
  serve->callback([&] {
    Status st = api::Serve(so);
    if (!st.ok()) rc = Fail(st);
  });

  // validate
  std::string validate_file, validate_estate;
  auto* validate = app.add_subcommand("validate", "check a job spec offline");
  validate->add_option("FILE", validate_file, "job spec YAML")->required();
  validate->add_option("--estate", validate_estate, "also check it against this estate");
  validate->callback([&] {
    auto parsed = LoadJobSpecFile(validate_file);
    if (!parsed.ok()) {
      if (g.json_output) {
        json diags = json::array();
        for (const auto& d : parsed.status().diagnostics()) diags.push_back(ToJson(d));
        print_json({{"valid", false}, {"message", parsed.status().message()}, {"diagnostics", diags}});
        rc = ExitFor(parsed.status().code());
      } else {
        std::cerr << "error: " << validate_file << " is not a valid job spec\n";
        PrintDiagnostics(parsed.status().diagnostics());
        if (parsed.status().diagnostics().empty()) std::cerr << "  " << parsed.status().message() << "\n";
        rc = ExitFor(parsed.status().code());
      }
      return;
    }
    if (!validate_estate.empty()) {
      // The same checks as a submission: the estate's policies, then the estate.
      auto estate = LoadEstateFile(validate_estate);
      if (!estate.ok()) {
        rc = Fail(estate.status());
        return;
      }
      std::vector<std::string> changes;
      Status st = policy::Chain::FromEstate(*estate)->Apply(parsed->spec, changes);
      if (st.ok()) st = CheckJobAgainstEstate(parsed->spec, *estate, validate_file);
      if (st.ok()) st = placement::CheckFeasible(placement::Router(*estate), parsed->spec, validate_file);
      if (!st.ok()) {
        rc = Fail(st);
        return;
      }
      for (auto& c : changes) parsed->warnings.push_back(Diagnostic{validate_file, 0, 0, "", c});
    }
    json warnings = json::array();
    for (const auto& w : parsed->warnings) warnings.push_back(ToJson(w));
    if (g.json_output) {
      print_json({{"valid", true}, {"spec", ToJson(parsed->spec)}, {"warnings", warnings}});
    } else {
      for (const auto& w : parsed->warnings) std::cerr << "warning: " << w.ToString() << "\n";
      std::cout << validate_file << ": valid (" << (parsed->spec.accelerators.empty() ? "no GPUs" : parsed->spec.accelerators.ToString())
                << ", " << parsed->spec.num_nodes << (parsed->spec.num_nodes == 1 ? " node" : " nodes") << ")\n";
    }
  });

  // submit
  std::string submit_file, submit_key;
  auto* submit = app.add_subcommand("submit", "submit a job spec");
  submit->add_option("FILE", submit_file, "job spec YAML")->required();
  submit->add_option("--idempotency-key", submit_key, "retry-safe key (default: a new random key)");
  submit->callback([&] {
    auto text = ReadFile(submit_file);
    if (!text.ok()) {
      rc = Fail(text.status());
      return;
    }
    if (submit_key.empty()) submit_key = HexEncode(RandomBytes(16));
    json body = {{"spec", *text}, {"file", submit_file}};
    auto j = api.Call("POST", "/v1/jobs", body.dump(), rc, {{"Idempotency-Key", submit_key}});
    if (!j) return;
    if (g.json_output) return print_json(*j);
    for (const auto& w : (*j)["warnings"]) {
      std::string field = Str(w, "field");
      std::cerr << "warning: " << (field.empty() ? "" : field + ": ") << Str(w, "message") << "\n";
    }
    const json& job = (*j)["job"];
    std::cout << ((*j)["created"].get<bool>() ? "submitted " : "already submitted ") << Str(job, "id") << " ("
              << Str(job, "name") << ", " << Gpus(job["spec"]) << ", " << Str(job, "state") << ")\n";
  });

  // jobs
  std::string f_state, f_team, f_owner, f_cursor, f_limit;
  auto* jobs = app.add_subcommand("jobs", "list jobs, newest first");
  jobs->add_option("--state", f_state, "pending, admitted, running, succeeded, failed or cancelled");
  jobs->add_option("--team", f_team, "only this team's jobs");
  jobs->add_option("--owner", f_owner, "only this owner's jobs");
  jobs->add_option("--limit", f_limit, "page size, 1-1000 (default 100)");
  jobs->add_option("--cursor", f_cursor, "continue after this job id (next_cursor)");
  jobs->callback([&] {
    auto j = api.Call("GET", "/v1/jobs" + QueryString({{"state", f_state}, {"team", f_team}, {"owner", f_owner},
                                                       {"limit", f_limit}, {"cursor", f_cursor}}), "", rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    PrintJobsTable((*j)["jobs"]);
    if (!(*j)["next_cursor"].is_null()) std::cout << "more: --cursor " << Str(*j, "next_cursor") << "\n";
  });

  // job ID
  std::string job_id;
  auto* job = app.add_subcommand("job", "show one job with its attempts and events");
  job->add_option("ID", job_id, "job id")->required();
  job->callback([&] {
    auto j = api.Call("GET", "/v1/jobs/" + net::UrlEncode(job_id), "", rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    std::cout << "id:        " << Str(*j, "id") << "\nname:      " << Str(*j, "name") << "\nstate:     "
              << Str(*j, "state") << "\nteam:      " << Str(*j, "team") << "\nowner:     " << Str(*j, "owner")
              << "\ngpus:      " << Gpus((*j)["spec"]) << "\npriority:  " << Str(*j, "priority")
              << "\ncreated:   " << Str(*j, "created_at") << "\n";
    std::cout << "attempts:  " << (*j)["attempts"].size() << "\nevents:\n";
    for (const auto& e : (*j)["events"]) {
      std::cout << "  " << Str(e, "time") << "  " << Str(e, "type") << "  " << Str(e, "message") << "\n";
    }
  });

  // cancel ID
  std::string cancel_id, cancel_reason;
  auto* cancel = app.add_subcommand("cancel", "cancel a job");
  cancel->add_option("ID", cancel_id, "job id")->required();
  cancel->add_option("--reason", cancel_reason, "why (kept in the audit trail)");
  cancel->callback([&] {
    auto j = api.Call("POST", "/v1/jobs/" + net::UrlEncode(cancel_id) + "/cancel", json{{"reason", cancel_reason}}.dump(), rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    std::cout << "cancelled " << cancel_id << "\n";
  });

  // clusters
  auto* clusters = app.add_subcommand("clusters", "list the estate's clusters");
  clusters->callback([&] {
    auto j = api.Call("GET", "/v1/clusters", "", rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    Table t({"cluster", "provider", "region", "zone", "pools", "gpus", "on-demand/gpu-h"});
    for (const auto& c : (*j)["clusters"]) {
      std::string pools, prices;
      for (const auto& p : c["node_pools"]) {
        pools += (pools.empty() ? "" : " ") + std::to_string(p.value("nodes", 0)) + "x" +
                 std::to_string(p.value("gpus_per_node", 0)) + "x" + p.value("gpu_type", "");
        if (p.contains("price_per_gpu_hour")) {
          prices += (prices.empty() ? "" : " ") + p.value("gpu_type", "") + "=" +
                    p["price_per_gpu_hour"].value("on_demand", "") + " " + p["price_per_gpu_hour"].value("currency", "");
        }
      }
      t.Add({Str(c, "name"), Str(c, "provider"), Str(c, "region"), Str(c, "zone"), pools, Str(c, "total_gpus"), prices});
    }
    t.Print(std::cout);
  });

  // audit log / verify
  auto* audit_cmd = app.add_subcommand("audit", "the audit trail");
  audit_cmd->require_subcommand(1);
  std::string a_actor, a_action, a_resource, a_since, a_limit, a_cursor;
  auto* audit_log = audit_cmd->add_subcommand("log", "list audit events, oldest first");
  audit_log->add_option("--actor", a_actor, "token id or system");
  audit_log->add_option("--action", a_action, "exact action, or a prefix ending in '.' (job.)");
  audit_log->add_option("--resource", a_resource, "e.g. job/job_01...");
  audit_log->add_option("--since", a_since, "a duration (30d) or a timestamp");
  audit_log->add_option("--limit", a_limit, "page size, 1-1000 (default 100)");
  audit_log->add_option("--cursor", a_cursor, "continue after this sequence number");
  bool a_follow = false;
  audit_log->add_flag("--follow,-f", a_follow, "keep printing new events as they happen (until interrupted)");
  audit_log->callback([&] {
    if (a_follow) {
      // Polls with the cursor; one line per event with its message.
      for (;;) {
        auto j = api.Call("GET", "/v1/audit" + QueryString({{"actor", a_actor}, {"action", a_action},
                                                            {"resource", a_resource}, {"since", a_since},
                                                            {"limit", "1000"}, {"cursor", a_cursor}}), "", rc);
        if (!j) return;
        for (const auto& e : (*j)["events"]) {
          a_cursor = Str(e, "seq");
          if (g.json_output) {
            std::cout << e.dump() << "\n";
            continue;
          }
          std::string message = e["details"].is_object() ? Str(e["details"], "message") : "";
          if (message.empty() && e["details"].is_object() && e["details"].contains("name")) {
            message = Str(e["details"], "name");
          }
          std::cout << Str(e, "time").substr(11, 8) << "  " << Str(e, "action") << "  " << Str(e, "resource")
                    << (message.empty() ? "" : "  " + message) << std::endl;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
      }
    }
    auto j = api.Call("GET", "/v1/audit" + QueryString({{"actor", a_actor}, {"action", a_action},
                                                        {"resource", a_resource}, {"since", a_since},
                                                        {"limit", a_limit}, {"cursor", a_cursor}}), "", rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    Table t({"seq", "time", "actor", "action", "resource"});
    for (const auto& e : (*j)["events"]) {
      t.Add({Str(e, "seq"), Str(e, "time"), Str(e, "actor"), Str(e, "action"), Str(e, "resource")});
    }
    t.Print(std::cout);
    if (!(*j)["next_cursor"].is_null()) std::cout << "more: --cursor " << Str(*j, "next_cursor") << "\n";
  });
  AddAuditCommands(*audit_cmd, g, api, rc);
  std::string verify_db, verify_dir, verify_key;
  auto* audit_verify = audit_cmd->add_subcommand(
      "verify", "check the audit hash chain and its signed checkpoints; exit 8 if either is bad");
  audit_verify->add_option("--db", verify_db, "check this database (SQLite file or postgresql:// URL) directly, without a server");
  audit_verify->add_option("--data-dir", verify_dir, "check DATA_DIR/causeway.db directly, without a server");
  audit_verify->add_option("--public-key", verify_key,
                           "with --db/--data-dir: check checkpoints against this JWKS or JWK (from `audit keys`) "
                           "instead of the keys in the database");
  audit_verify->callback([&] {
    if (!verify_db.empty() || !verify_dir.empty()) {
      rc = VerifyOffline(verify_db.empty() ? verify_dir + "/causeway.db" : verify_db, verify_key, g.json_output);
      return;
    }
    if (!verify_key.empty()) {
      rc = Fail(InvalidArgument("--public-key checks a copy of the database: give it with --db or --data-dir"));
      return;
    }
    auto j = api.Call("GET", "/v1/audit/verify", "", rc);
    if (!j) return;
    rc = PrintVerify(*j, g.json_output);
  });

  // token create/list/revoke
  auto* token = app.add_subcommand("token", "API tokens (admin)");
  token->require_subcommand(1);
  std::string t_name, t_ttl;
  std::vector<std::string> t_scopes;
  std::string t_user;
  auto* token_create = token->add_subcommand("create", "create a token; the secret is shown once");
  token_create->add_option("--name", t_name, "what the token is for")->required();
  token_create->add_option("--scope", t_scopes,
                           "admin, jobs:read, jobs:write, jobs:manage, audit:read, clusters:read, metrics:read, "
                           "cost:read, telemetry:write, providers:write, scim:provision (repeatable)")
      ->required();
  token_create->add_option("--ttl", t_ttl, "lifetime such as 30d (default: no expiry)");
  token_create->add_option("--user", t_user,
                           "the person it acts for (a directory userName): their roles, narrowed to the scopes");
  token_create->callback([&] {
    json body = {{"name", t_name}, {"scopes", t_scopes}};
    if (!t_ttl.empty()) body["ttl"] = t_ttl;
    if (!t_user.empty()) body["user"] = t_user;
    auto j = api.Call("POST", "/v1/tokens", body.dump(), rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    std::cout << "created " << Str((*j)["token"], "id") << " (" << t_name << ")\n"
              << "secret (shown once, store it now): " << Str(*j, "secret") << "\n";
  });
  auto* token_list = token->add_subcommand("list", "list tokens (never their secrets)");
  token_list->callback([&] {
    auto j = api.Call("GET", "/v1/tokens", "", rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    Table t({"id", "name", "scopes", "created", "expires", "revoked"});
    for (const auto& tok : (*j)["tokens"]) {
      std::string scopes;
      for (const auto& s : tok["scopes"]) scopes += (scopes.empty() ? "" : ",") + s.get<std::string>();
      t.Add({Str(tok, "id"), Str(tok, "name"), scopes, Str(tok, "created_at"), Str(tok, "expires_at"),
             Str(tok, "revoked_at")});
    }
    t.Print(std::cout);
  });
  std::string revoke_id;
  auto* token_revoke = token->add_subcommand("revoke", "revoke a token now");
  token_revoke->add_option("ID", revoke_id, "token id (tok_...)")->required();
  token_revoke->callback([&] {
    auto j = api.Call("POST", "/v1/tokens/" + net::UrlEncode(revoke_id) + "/revoke", "", rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    std::cout << "revoked " << revoke_id << "\n";
  });
  std::string rotate_id;
  auto* token_rotate = token->add_subcommand("rotate", "a new secret for a token; the old one is revoked at once");
  token_rotate->add_option("ID", rotate_id, "token id (tok_...)")->required();
  token_rotate->callback([&] {
    auto j = api.Call("POST", "/v1/tokens/" + net::UrlEncode(rotate_id) + "/rotate", "", rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    std::cout << "revoked " << rotate_id << ", created " << Str((*j)["token"], "id") << "\n"
              << "secret (shown once, store it now): " << Str(*j, "secret") << "\n";
  });

  std::string reassign_id, reassign_to;
  auto* token_reassign =
      token->add_subcommand("reassign", "make another person answer for a token (it then survives its creator leaving)");
  token_reassign->add_option("ID", reassign_id, "token id (tok_...)")->required();
  token_reassign->add_option("--to", reassign_to, "the userName who answers for it from now on")->required();
  token_reassign->callback([&] {
    json body = {{"to", reassign_to}};
    auto j = api.Call("POST", "/v1/tokens/" + net::UrlEncode(reassign_id) + "/reassign", body.dump(), rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    std::cout << reassign_id << " is now " << reassign_to << "'s to answer for\n";
  });

  // explain ID
  std::string explain_id;
  auto* explain = app.add_subcommand("explain", "why a job is where it is: quota decision and every candidate cluster");
  explain->add_option("ID", explain_id, "job id")->required();
  explain->callback([&] {
    auto j = api.Call("GET", "/v1/jobs/" + net::UrlEncode(explain_id) + "/explain", "", rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    std::cout << Str(*j, "job") << " (" << Str(*j, "name") << ", team " << Str(*j, "team") << ") is "
              << Str(*j, "state") << "\n";
    if (!Str(*j, "reason").empty()) std::cout << "  last: " << Str(*j, "reason") << "\n";
    const json& s = (*j)["scheduler"];
    const json& attempts = (*j)["attempts"];
    if (s.is_object() && s.contains("waiting")) std::cout << "  waiting: " << Str(s, "waiting") << "\n";
    // Where it runs: the scheduler's live decision, or, for a job the
    // scheduler no longer holds, its last attempt's, so a finished job
    // still says where it ran and why.
    json placed = s.is_object() && s.contains("placement") ? s["placement"]
                  : attempts.is_array() && !attempts.empty() && attempts.back().is_object()
                      ? attempts.back().value("placement", json::object())
                                                             : json::object();
    if (placed.is_object() && placed.contains("cluster")) {
      std::cout << "  placed on " << Str(placed, "cluster") << " (" << Str(placed, "provider") << ", "
                << Str(placed, "zone") << "): " << Str(placed, "why") << "\n";
    }
    if (s.is_object()) {
      for (const auto& a : s["alternatives"]) {
        std::cout << "  asks for " << Str(a, "nodes") << " x " << Str(a, "accelerators") << " (" << Str(a, "gpus")
                  << " " << Str(a, "flavor") << " GPUs)";
        if (a.contains("quota")) std::cout << ": quota " << Str(a["quota"], "verdict") << ": " << Str(a["quota"], "reason");
        std::cout << "\n";
      }
      std::cout << "  candidates, best first:\n";
      for (const auto& c : s["candidates"]) {
        if (c["eligible"].get<bool>()) {
          std::cout << "    ok    " << Str(c, "cluster") << " " << Str(c, "accelerators") << ": "
                    << (c["reserved"].get<bool>() ? "reserved capacity, " : "") << Str(c, "price_per_gpu_hour")
                    << "/GPU-h, " << (c["data_local"].get<bool>() ? "data local" : "data remote") << ", "
                    << Str(c, "load_percent") << "% full\n";
        } else {
          std::cout << "    no    " << Str(c, "cluster") << " " << Str(c, "accelerators") << ": " << Str(c, "reason") << "\n";
        }
      }
    }
    for (const auto& a : attempts) {
      std::cout << "  attempt " << Str(a, "number") << " on " << Str(a, "cluster") << ": " << Str(a, "state");
      if (a["placement"].contains("why")) std::cout << " (chosen: " << Str(a["placement"], "why") << ")";
      std::cout << "\n";
    }
  });

  auto* queues = app.add_subcommand("queues", "team queues: quota use, borrowing, pending work, budgets");
  queues->callback([&] {
    auto j = api.Call("GET", "/v1/queues", "", rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    Table t({"queue", "cohort", "flavor", "used/nominal", "borrowing", "running", "pending", "budget spent"});
    for (const auto& q : (*j)["queues"]) {
      bool first = true;
      std::string budget = q.contains("budget") ? Str(q["budget"], "spent") + " of " + Str(q["budget"], "monthly") + " " +
                                                      Str(q["budget"], "currency")
                                                : "-";
      for (const auto& f : q["flavors"]) {
        t.Add({first ? Str(q, "name") : "", first ? Str(q, "cohort") : "", Str(f, "flavor"),
               Str(f, "used") + "/" + Str(f, "nominal"), Str(f, "borrowing"), first ? Str(q, "running") : "",
               first ? Str(q, "pending") : "", first ? budget : ""});
        first = false;
      }
    }
    t.Print(std::cout);
  });

  auto* provider = app.add_subcommand("provider", "providers of the estate");
  provider->require_subcommand(1);
  std::string outage_name, outage_state;
  auto* outage = provider->add_subcommand("outage", "switch a simulated provider's outage on or off (admin)");
  outage->add_option("NAME", outage_name, "provider name")->required();
  outage->add_option("STATE", outage_state, "on or off")->required()->check(CLI::IsMember({"on", "off"}));
  outage->callback([&] {
    auto j = api.Call("POST", "/v1/providers/" + net::UrlEncode(outage_name) + "/outage",
                      json{{"down", outage_state == "on"}}.dump(), rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    std::cout << "provider " << outage_name << (outage_state == "on" ? " is down" : " is back") << "\n";
  });

  auto* checkpoint = app.add_subcommand("checkpoint", "checkpoints a job registered; its next attempt resumes from the latest");
  checkpoint->require_subcommand(1);
  std::string cp_job, cp_path;
  int64_t cp_step = -1;
  auto* cp_register = checkpoint->add_subcommand("register", "record a checkpoint (run from inside the job)");
  cp_register->add_option("--job", cp_job, "job id (inside a job: $CAUSEWAY_JOB_ID)")->required();
  cp_register->add_option("--path", cp_path, "where it was written, e.g. s3://bucket/run/step-1000")->required();
  cp_register->add_option("--step", cp_step, "training step");
  cp_register->callback([&] {
    json body = {{"path", cp_path}};
    if (cp_step >= 0) body["step"] = cp_step;
    auto j = api.Call("POST", "/v1/jobs/" + net::UrlEncode(cp_job) + "/checkpoints", body.dump(), rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    std::cout << "registered checkpoint " << Str((*j)["checkpoint"], "seq") << " of " << cp_job << ": " << cp_path << "\n";
  });
  std::string cp_list_job;
  auto* cp_list = checkpoint->add_subcommand("list", "a job's checkpoints, oldest first");
  cp_list->add_option("ID", cp_list_job, "job id")->required();
  cp_list->callback([&] {
    auto j = api.Call("GET", "/v1/jobs/" + net::UrlEncode(cp_list_job) + "/checkpoints", "", rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    Table t({"seq", "attempt", "step", "path", "created"});
    for (const auto& c : (*j)["checkpoints"]) {
      t.Add({Str(c, "seq"), Str(c, "attempt"), Str(c, "step"), Str(c, "path"), Str(c, "created_at")});
    }
    t.Print(std::cout);
  });

  // logs ID
  std::string logs_id;
  int logs_attempt = 0;
  bool logs_follow = false;
  auto* logs = app.add_subcommand("logs", "a job's output (the latest attempt unless --attempt)");
  logs->add_option("ID", logs_id, "job id")->required();
  logs->add_option("--attempt", logs_attempt, "which attempt (1, 2, ...)");
  logs->add_flag("--follow,-f", logs_follow, "keep printing output until the attempt ends");
  logs->callback([&] {
    int64_t offset = 0;
    for (;;) {
      std::string target = "/v1/jobs/" + net::UrlEncode(logs_id) + "/logs?offset=" + std::to_string(offset);
      if (logs_attempt > 0) target += "&attempt=" + std::to_string(logs_attempt);
      auto res = api.Raw("GET", target, "", rc);
      if (!res) {
        // Output may not exist yet while the attempt is starting.
        if (logs_follow && rc == kExitNotFound) {
          std::this_thread::sleep_for(std::chrono::milliseconds(500));
          continue;
        }
        return;
      }
      std::cout << res->body << std::flush;
      offset = std::strtoll(res->headers["x-causeway-next-offset"].c_str(), nullptr, 10);
      if (logs_attempt == 0) logs_attempt = std::atoi(res->headers["x-causeway-attempt"].c_str());
      if (!logs_follow || (res->body.empty() && res->headers["x-causeway-attempt-state"] != "running")) return;
      if (res->body.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
  });

  auto* whoami = app.add_subcommand("whoami", "show the token in use");
  whoami->callback([&] {
    auto j = api.Call("GET", "/v1/whoami", "", rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    std::cout << Str(*j, "token_id") << " (" << Str(*j, "name") << ") scopes: " << (*j)["scopes"].dump() << "\n";
    if (j->contains("user")) {
      std::cout << "user " << Str(*j, "user") << " in groups " << (*j)["groups"].dump() << "\n";
      for (const auto& grant : (*j)["grants"]) {
        std::cout << "  " << Str(grant, "role") << " of " << (grant["team"].is_null() ? "every team" : "team " + Str(grant, "team"))
                  << " through " << Str(grant, "group") << " (" << Str(grant, "source") << ")\n";
      }
    }
  });

  // migrate, db check, db copy: straight on a database, no server.
  std::string db_url;
  if (const char* db = std::getenv("CAUSEWAY_DB")) db_url = db;
  AddCostCommands(app, g.json_output, rc);
  AddIdentityCommands(app, api, g, rc);
  AddAcceptanceCommands(app, g, rc);
  std::string cost_job_id;
  auto* cost_job = app.get_subcommand("cost")->add_subcommand(
      "job", "what one job cost, attempt by attempt: failed, preempted and idle attempts count too");
  cost_job->add_option("ID", cost_job_id, "job id")->required();
  cost_job->callback([&] {
    auto j = api.Call("GET", "/v1/jobs/" + net::UrlEncode(cost_job_id), "", rc);
    if (!j) return;
    if (g.json_output) return print_json(*j);
    auto money = [](int64_t micros) { return cost::HundredthsText(cost::MicrosToPicos(micros)); };
    auto hours = cost::GpuHoursHundredths;
    const json& job = (*j)["job"].is_object() ? (*j)["job"] : *j;
    std::cout << Str(job, "id") << " (" << Str(job, "name") << ", team " << Str(job, "team") << ", owner "
              << Str(job, "owner") << ") is " << Str(job, "state") << "\n";
    Table t({"attempt", "cluster", "flavor", "gpus", "capacity", "price/gpu-h", "gpu-h", "cost", "busy", "outcome"});
    int64_t total = 0, wasted = 0, allocated = 0, observed = 0, work = 0;
    // Busy: the work GPU telemetry saw (utilization integrated over time)
    // over the GPU time it covered; "-" without telemetry.
    auto busy = [](int64_t work_s, int64_t observed_s) {
      return observed_s > 0 ? std::to_string((work_s * 100 + observed_s / 2) / observed_s) + "%" : std::string("-");
    };
    for (const auto& a : (*j)["attempts"]) {
      int64_t cost = a.value("cost_micros", int64_t{0});
      total += cost;
      int64_t o = a.value("observed_gpu_seconds", int64_t{0}), w = a.value("work_gpu_seconds", int64_t{0});
      observed += o;
      work += w;
      allocated += a.value("gpu_seconds", int64_t{0});
      std::string outcome = Str(a, "state");
      if (!Str(a, "failure_class").empty()) outcome += " (" + Str(a, "failure_class") + ")";
      if (outcome != "succeeded" && outcome != "running" && outcome != "admitted") wasted += cost;
      t.Add({Str(a, "number"), Str(a, "cluster"), Str(a, "flavor"), Str(a, "gpus"),
             a.value("reserved", false) ? "reserved" : "on-demand", money(a.value("price_micros", int64_t{0})),
             hours(a.value("gpu_seconds", int64_t{0})), money(cost), busy(w, o), outcome});
    }
    t.Print(std::cout);
    size_t n = (*j)["attempts"].size();
    std::cout << "total " << money(total) << " over " << n << (n == 1 ? " attempt" : " attempts");
    if (wasted > 0) std::cout << "; " << money(wasted) << " of it on attempts that did not finish the work";
    if (Str(job, "state") == "succeeded") std::cout << "; cost of the completed job: " << money(total);
    std::cout << "\n";
    if (observed > 0) {
      // Goodput: GPU time doing work over the GPU time allocated.
      std::cout << "goodput " << busy(work, allocated) << ": " << hours(work) << " GPU-hours of work of "
                << hours(allocated) << " allocated (telemetry covered " << hours(observed) << ")\n";
    }
  });

  auto* migrate = app.add_subcommand("migrate", "bring a database's schema up to date (safe while replicas run)");
  migrate->add_option("--db", db_url, "SQLite file or postgresql:// URL (env CAUSEWAY_DB)")->required();
  migrate->callback([&] { rc = PrintDbReport(Migrate(db_url), g.json_output); });
  auto* db_cmd = app.add_subcommand("db", "database administration");
  db_cmd->require_subcommand(1);
  auto* db_check = db_cmd->add_subcommand("check", "connectivity, schema version and audit chain integrity");
  db_check->add_option("--db", db_url, "SQLite file or postgresql:// URL (env CAUSEWAY_DB)")->required();
  db_check->callback([&] { rc = PrintDbReport(CheckDb(db_url), g.json_output); });
  std::string copy_from, copy_to;
  auto* db_copy = db_cmd->add_subcommand("copy", "copy everything into an empty database, chain intact");
  db_copy->add_option("--from", copy_from, "source: sqlite:PATH, a SQLite file or postgresql:// URL")->required();
  db_copy->add_option("--to", copy_to, "target, empty: a postgresql:// URL or a SQLite file")->required();
  db_copy->callback([&] {
    rc = PrintDbReport(CopyDb(copy_from, copy_to, [](const std::string& what) { std::cerr << what << "\n"; }),
                       g.json_output);
  });

  auto* version = app.add_subcommand("version", "print the version");
  version->callback([&] { std::cout << "causeway 0.1.0\n"; });

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }
  return rc;
}

}  // namespace causeway::cli
