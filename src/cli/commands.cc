#include "cli/commands.h"
#include "providers/registry.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "net/http_client.h"
#include "api/server.h"
#include "store/audit_chain.h"
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
#include "service/reports_json.h"
#include "service/submission_check.h"
#include "spec/service_spec.h"
#include "cli/errors.h"
#include "cli/identity_commands.h"
#include "cli/job_commands.h"
#include "cli/provenance_commands.h"
#include "cli/plan_commands.h"
#include "cli/readiness_commands.h"
#include "cli/dataset_commands.h"
#include "cli/service_commands.h"
#include "cli/local_db.h"
#include "cli/spec_inputs.h"
#include "cli/table.h"
#include "placement/router.h"
#include "policy/policy.h"
#include "spec/spec_json.h"

namespace causeway::cli {
namespace {

using nlohmann::json;


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
              << Str(j, "unsigned_events") << " events since); " << Str(j, "imported_events")
              << " imported provider events match their imports\n";
  } else if (j.contains("first_bad_seq")) {
    std::cout << "broken at seq " << Str(j, "first_bad_seq") << ": " << Str(j, "reason") << "\n";
  } else if (j.contains("checkpoint_error")) {
    std::cout << "chain intact, but " << Str(j, "checkpoint_error") << "\n";
  } else {
    std::cout << "chain intact, but " << Str(j, "import_error") << "\n";
  }
  return ok ? kExitOk : kExitAuditBroken;
}

// Verifies the chain and its checkpoints straight from a database, without
// a server; with `public_key`, checkpoints are checked against that key
// alone rather than the keys the database holds.
int VerifyOffline(const std::string& db_path, const std::string& public_key, bool json_output) {
  std::optional<identity::jwt::KeySet> keys;
  if (!public_key.empty()) {
    auto loaded = LoadPublicKeys(public_key);
    if (!loaded.ok()) return Fail(loaded.status());
    keys = std::move(*loaded);
  }
  auto db = DbChoice::ExistingDb(db_path);
  if (!db.ok()) return Fail(db.status());
  auto store = OpenStore(*db, true);
  if (!store.ok()) return Fail(store.status());
  auto report = VerifyTrail(**store, keys ? &*keys : nullptr);
  if (!report.ok()) return Fail(report.status());
  return PrintVerify(ToJson(*report), json_output);
}

// serve: the API server, scheduler and reconcilers.
void AddServe(Cli& c) {
  CLI::App& app = c.app;
  int& rc = c.rc;
  api::ServeOptions &so = c.Keep<api::ServeOptions>();
  auto* serve = app.add_subcommand("serve", "run the API server, scheduler and reconcilers");
  serve->add_option("--listen", so.listen, "HOST:PORT to listen on (port 0 picks one)")->capture_default_str();
  serve->add_option("--data-dir", so.data_dir, "directory for the database and admin token")->capture_default_str();
  if (const char* db = std::getenv("CAUSEWAY_DB")) so.db_path = db;
  serve->add_option("--db", so.db_path,
                    "database: a SQLite file (default DATA_DIR/causeway.db) or postgresql://USER:PASS@HOST/DB "
                    "(env CAUSEWAY_DB)");
  serve->add_option("--estate", so.estate_path, "estate YAML (default: the embedded simulated estate)");
  if (const char* key = std::getenv("CAUSEWAY_SECRETS_KEY")) so.secrets_key = key;
  serve->add_option("--secrets-key", so.secrets_key,
                    "file of the key jobs' secrets are sealed with, made on the first start (default "
                    "DATA_DIR/secrets.key; env CAUSEWAY_SECRETS_KEY; replicas share it)");
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
  serve->add_option("--readiness-interval", so.readiness_check_s,
                    "seconds between evaluations of readiness that record controls whose state changed (0: never)")
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
  serve->add_option("--service-host", so.service_host,
                    "the IPv4 address services' endpoints listen on (each service's HAProxy)")
      ->capture_default_str();
  serve->add_option("--haproxy", so.haproxy, "the HAProxy binary that serves services' endpoints")
      ->capture_default_str();
  serve->callback([&] {
    Status st = api::Serve(so);
    if (!st.ok()) rc = Fail(st);
  });
}

// Every check a submission makes of one job spec: `inputs` applied, an
// accelerator outside the catalogue refused when there is no estate to
// sell it, the estate's policies and the estate itself when given. The
// refusal holds every error, warnings beside them.
Status CheckSpec(ParsedJobSpec& parsed, const SpecInputs& inputs, const std::string& file, const Estate* estate) {
  auto with_warnings = [&](const Status& st) {
    std::vector<Diagnostic> all = st.diagnostics();
    all.insert(all.end(), parsed.warnings.begin(), parsed.warnings.end());
    return Status(st.code(), st.message(), std::move(all));
  };
  // --env / --secret as a submission would apply them: a variable left
  // null in the file and not given here is an error.
  if (Status st = ApplySpecInputs(parsed, inputs, file); !st.ok()) return with_warnings(st);
  if (!estate && !parsed.spec.unknown_accelerators.empty()) {
    // No estate to say whether it sells such a type: a name outside the
    // catalogue is most likely a typo, and is refused here.
    std::vector<Diagnostic> all;
    const auto& unknown = parsed.spec.unknown_accelerators;
    for (const auto& w : parsed.warnings) {
      // The parser's note on each unknown name becomes the error here.
      bool names_one = std::any_of(unknown.begin(), unknown.end(),
                                   [&](const std::string& t) { return w.message.rfind(t + " is not an accelerator", 0) == 0; });
      all.push_back(w);
      all.back().warning = !names_one;
    }
    std::stable_partition(all.begin(), all.end(), [](const Diagnostic& d) { return !d.warning; });
    return InvalidArgument("unknown accelerator " + unknown.front() + " (give --estate FILE if the estate sells it)",
                           std::move(all));
  }
  if (estate) {
    // The same checks as a submission: the estate's policies, then the estate.
    auto chain = policy::Chain::FromEstate(*estate);
    Status st = CheckSubmission(parsed.spec, chain.get(), *estate, placement::Router(*estate), file, parsed.warnings);
    if (!st.ok()) return with_warnings(st);
  }
  return Status::Ok();
}

// What validate says of a task file that passed: its warnings, then the
// spec (or each step of a pipeline), as JSON or in words.
void PrintValid(const std::string& file, const TaskFile& tasks, const std::optional<spec::ServiceSpec>& service,
                bool json_output) {
  json warnings = json::array();
  json steps = json::array();
  for (const auto& step : tasks.steps) {
    for (const auto& w : step.parsed.warnings) warnings.push_back(ToJson(w));
    steps.push_back(ToJson(step.parsed.spec));
  }
  if (json_output) {
    json out = {{"valid", true}, {"spec", steps.front()}, {"warnings", warnings}};
    if (service) out["service"] = spec::ToJson(*service);
    if (tasks.pipeline) {
      out["pipeline"] = {{"name", tasks.name}, {"execution", tasks.job_group ? "parallel" : "serial"}, {"steps", steps}};
    }
    if (tasks.job_group) {
      json roles = json::array();
      for (const auto& step : tasks.steps) {
        roles.push_back({{"name", step.parsed.spec.name},
                         {"auxiliary", step.auxiliary},
                         {"termination_delay_seconds", step.termination_delay_seconds}});
      }
      out["pipeline"]["tasks"] = roles;
    }
    return PrintJson(out);
  }
  auto describe = [](const JobSpec& spec) {
    return (spec.cpu_only() ? "CPU-only, " + CountOf(kCpuType, spec.Demand().alternatives.front().count) + " per node"
                            : spec.accelerators.ToString()) +
           ", " +
           std::to_string(spec.num_nodes) + (spec.num_nodes == 1 ? " node" : " nodes");
  };
  for (const auto& step : tasks.steps) {
    for (const auto& w : step.parsed.warnings) std::cerr << "warning: " << w.ToString() << "\n";
  }
  if (!tasks.pipeline) {
    std::cout << file << ": valid (" << describe(tasks.steps.front().parsed.spec) << ")\n";
    if (service) {
      const spec::ReplicaPolicy& p = service->replicas;
      std::cout << "  a service of " << p.min_replicas
                << (p.max_replicas ? " to " + std::to_string(*p.max_replicas) : std::string()) << " replicas"
                << (service->port ? " on port " + std::to_string(*service->port) : std::string())
                << ", ready when " << service->readiness.path << " answers, balanced by "
                << service->load_balancing_policy << "\n";
    }
    return;
  }
  if (tasks.job_group) {
    std::cout << file << ": valid job group " << tasks.name << " of " << tasks.steps.size()
              << (tasks.steps.size() == 1 ? " task" : " tasks") << ", started together\n";
  } else {
    std::cout << file << ": valid pipeline" << (tasks.name.empty() ? "" : " " + tasks.name) << " of "
              << tasks.steps.size() << (tasks.steps.size() == 1 ? " step" : " steps") << ", each after the one before\n";
  }
  for (size_t i = 0; i < tasks.steps.size(); ++i) {
    const TaskFile::Step& step = tasks.steps[i];
    const JobSpec& spec = step.parsed.spec;
    std::string role;
    if (tasks.job_group) {
      role = step.auxiliary ? ", auxiliary: ended " + FormatDuration(Micros(step.termination_delay_seconds * 1'000'000)) +
                                  " after the primary tasks succeed"
                            : ", primary";
    }
    std::cout << "  " << i + 1 << ". " << (spec.name.empty() ? "(unnamed)" : spec.name) << " (" << describe(spec)
              << role << ")\n";
  }
}

// validate: the job spec (or each step of a pipeline) on its own, or (with
// an estate) every check a submission passes. A refusal lists every
// problem of every step, warnings beside errors.
int Validate(const std::string& file, const std::string& estate_file, const SpecInputFlags& flags, bool json_output) {
  auto refuse = [&](const Status& st) {
    if (!json_output) return Fail(st);
    json diags = json::array();
    for (const auto& d : st.diagnostics()) diags.push_back(ToJson(d));
    PrintJson({{"valid", false}, {"message", st.message()}, {"diagnostics", diags}});
    return ExitFor(st.code());
  };
  auto text = ReadFile(file);
  auto tasks = text.ok() ? ParseTaskFile(*text, file) : Result<TaskFile>(text.status());
  if (!tasks.ok()) {
    if (json_output) return refuse(tasks.status());
    std::cerr << "error: " << file << " is not a valid job spec\n";
    PrintDiagnostics(tasks.status().diagnostics());
    if (tasks.status().diagnostics().empty()) std::cerr << "  " << tasks.status().message() << "\n";
    return ExitFor(tasks.status().code());
  }
  auto inputs = ReadSpecInputs(flags);
  if (!inputs.ok()) return refuse(inputs.status());
  std::optional<Estate> estate;
  if (!estate_file.empty()) {
    auto loaded = providers::LoadEstateFile(estate_file);
    if (!loaded.ok()) return Fail(loaded.status());
    estate = std::move(*loaded);
  }
  Status failed = Status::Ok();
  std::vector<Diagnostic> problems;
  for (auto& step : tasks->steps) {
    Status st = CheckSpec(step.parsed, *inputs, file, estate ? &*estate : nullptr);
    if (st.ok()) continue;
    if (failed.ok()) failed = st;
    problems.insert(problems.end(), st.diagnostics().begin(), st.diagnostics().end());
  }
  if (!failed.ok()) return refuse(Status(failed.code(), failed.message(), std::move(problems)));

  // A service section was read with the task; read again, for what it says.
  std::optional<spec::ServiceSpec> service;
  if (!tasks->pipeline) {
    auto read = spec::ParseServiceSection(*text, file);
    if (!read.ok()) return refuse(read.status());
    service = std::move(*read);
  }
  PrintValid(file, *tasks, service, json_output);
  return kExitOk;
}

// validate: a job spec checked offline, against an estate if given.
void AddValidate(Cli& c) {
  CLI::App& app = c.app;
  Globals& g = c.g;
  int& rc = c.rc;
  std::string &validate_file = c.Keep<std::string>(), &validate_estate = c.Keep<std::string>();
  auto* validate = app.add_subcommand("validate", "check a job spec offline");
  validate->add_option("FILE", validate_file, "job spec YAML")->required();
  validate->add_option("--estate", validate_estate, "also check it against this estate");
  SpecInputFlags& inputs = c.Keep<SpecInputFlags>();
  AddSpecInputFlags(validate, inputs);
  validate->callback([&] { rc = Validate(validate_file, validate_estate, inputs, g.json_output); });
}

// clusters.
void AddClusters(Cli& c) {
  CLI::App& app = c.app;
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  auto* clusters = app.add_subcommand("clusters", "list the estate's clusters");
  clusters->callback([&] {
    auto j = api.Call("GET", "/v1/clusters", "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    Table t({"cluster", "provider", "region", "zone", "pools", "gpus", "on-demand/gpu-h (cpu-h)"});
    for (const auto& c : (*j)["clusters"]) {
      std::string pools, prices;
      for (const auto& p : c["node_pools"]) {
        bool cpu_only = p.value("cpu_only", false);  // "4x32cpu", priced per CPU-hour
        pools += (pools.empty() ? "" : " ") + std::to_string(p.value("nodes", 0)) + "x" +
                 (cpu_only ? std::to_string(p.value("cpus", 0)) + "cpu"
                           : std::to_string(p.value("gpus_per_node", 0)) + "x" + p.value("gpu_type", ""));
        const char* key = cpu_only ? "price_per_cpu_hour" : "price_per_gpu_hour";
        if (p.contains(key)) {
          prices += (prices.empty() ? "" : " ") + (cpu_only ? std::string("CPU") : p.value("gpu_type", "")) + "=" +
                    p[key].value("on_demand", "") + " " + p[key].value("currency", "");
        }
      }
      t.Add({Str(c, "name"), Str(c, "provider"), Str(c, "region"), Str(c, "zone"), pools, Str(c, "total_gpus"), prices});
    }
    t.Print(std::cout);
  });
}

// audit log, the audit commands of audit_commands.h, audit verify.
void AddAuditLogAndVerify(Cli& c) {
  CLI::App& app = c.app;
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  auto* audit_cmd = app.add_subcommand("audit", "the audit trail");
  audit_cmd->require_subcommand(1);
  std::string &a_actor = c.Keep<std::string>(), &a_action = c.Keep<std::string>(), &a_resource = c.Keep<std::string>(), &a_since = c.Keep<std::string>(), &a_limit = c.Keep<std::string>(), &a_cursor = c.Keep<std::string>();
  auto* audit_log = audit_cmd->add_subcommand("log", "list audit events, oldest first");
  audit_log->add_option("--actor", a_actor, "token id or system");
  audit_log->add_option("--action", a_action, "exact action, or a prefix ending in '.' (job.)");
  audit_log->add_option("--resource", a_resource, "e.g. job/job_01...");
  audit_log->add_option("--since", a_since, "a duration (30d) or a timestamp");
  audit_log->add_option("--limit", a_limit, "page size, 1-1000 (default 100)");
  audit_log->add_option("--cursor", a_cursor, "continue after this sequence number");
  bool &a_follow = c.Keep<bool>(false);
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
    if (g.json_output) return PrintJson(*j);
    Table t({"seq", "time", "actor", "action", "resource"});
    for (const auto& e : (*j)["events"]) {
      t.Add({Str(e, "seq"), Str(e, "time"), Str(e, "actor"), Str(e, "action"), Str(e, "resource")});
    }
    t.Print(std::cout);
    if (!(*j)["next_cursor"].is_null()) std::cout << "more: --cursor " << Str(*j, "next_cursor") << "\n";
  });
  AddAuditCommands(*audit_cmd, g, api, rc);
  std::string &verify_db = c.Keep<std::string>(), &verify_dir = c.Keep<std::string>(), &verify_key = c.Keep<std::string>();
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
}

// token create, list, revoke, rotate, reassign.
void AddTokenCommands(Cli& c) {
  CLI::App& app = c.app;
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  auto* token = app.add_subcommand("token", "API tokens (admin)");
  token->require_subcommand(1);
  std::string &t_name = c.Keep<std::string>(), &t_ttl = c.Keep<std::string>();
  std::vector<std::string> &t_scopes = c.Keep<std::vector<std::string>>();
  std::string &t_user = c.Keep<std::string>();
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
    if (g.json_output) return PrintJson(*j);
    std::cout << "created " << Str((*j)["token"], "id") << " (" << t_name << ")\n"
              << "secret (shown once, store it now): " << Str(*j, "secret") << "\n";
  });
  auto* token_list = token->add_subcommand("list", "list tokens (never their secrets)");
  token_list->callback([&] {
    auto j = api.Call("GET", "/v1/tokens", "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    Table t({"id", "name", "scopes", "created", "expires", "revoked"});
    for (const auto& tok : (*j)["tokens"]) {
      std::string scopes;
      for (const auto& s : tok["scopes"]) scopes += (scopes.empty() ? "" : ",") + s.get<std::string>();
      t.Add({Str(tok, "id"), Str(tok, "name"), scopes, Str(tok, "created_at"), Str(tok, "expires_at"),
             Str(tok, "revoked_at")});
    }
    t.Print(std::cout);
  });
  std::string &revoke_id = c.Keep<std::string>();
  auto* token_revoke = token->add_subcommand("revoke", "revoke a token now");
  token_revoke->add_option("ID", revoke_id, "token id (tok_...)")->required();
  token_revoke->callback([&] {
    auto j = api.Call("POST", "/v1/tokens/" + net::UrlEncode(revoke_id) + "/revoke", "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << "revoked " << revoke_id << "\n";
  });
  std::string &rotate_id = c.Keep<std::string>();
  auto* token_rotate = token->add_subcommand("rotate", "a new secret for a token; the old one is revoked at once");
  token_rotate->add_option("ID", rotate_id, "token id (tok_...)")->required();
  token_rotate->callback([&] {
    auto j = api.Call("POST", "/v1/tokens/" + net::UrlEncode(rotate_id) + "/rotate", "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << "revoked " << rotate_id << ", created " << Str((*j)["token"], "id") << "\n"
              << "secret (shown once, store it now): " << Str(*j, "secret") << "\n";
  });

  std::string &reassign_id = c.Keep<std::string>(), &reassign_to = c.Keep<std::string>();
  auto* token_reassign =
      token->add_subcommand("reassign", "make another person answer for a token (it then survives its creator leaving)");
  token_reassign->add_option("ID", reassign_id, "token id (tok_...)")->required();
  token_reassign->add_option("--to", reassign_to, "the userName who answers for it from now on")->required();
  token_reassign->callback([&] {
    json body = {{"to", reassign_to}};
    auto j = api.Call("POST", "/v1/tokens/" + net::UrlEncode(reassign_id) + "/reassign", body.dump(), rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << reassign_id << " is now " << reassign_to << "'s to answer for\n";
  });
}

// queues, provider outage.
void AddQueuesAndProviders(Cli& c) {
  CLI::App& app = c.app;
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  auto* queues = app.add_subcommand("queues", "team queues: quota use, borrowing, pending work, budgets");
  std::string &queue_name = c.Keep<std::string>(), &queue_offset = c.Keep<std::string>(), &queue_limit = c.Keep<std::string>();
  queues->add_option("NAME", queue_name, "one queue: its waiting jobs in the order they will be tried");
  queues->add_option("--offset", queue_offset, "with NAME: start after this many positions");
  queues->add_option("--limit", queue_limit, "with NAME: how many, 1-1000 (default 100)");
  queues->callback([&] {
    if (!queue_name.empty()) {
      auto j = api.Call("GET", "/v1/queues/" + net::UrlEncode(queue_name) + "/jobs" +
                                   QueryString({{"offset", queue_offset}, {"limit", queue_limit}}), "", rc);
      if (!j) return;
      if (g.json_output) return PrintJson(*j);
      std::cout << Str(*j, "queued") << " waiting in " << queue_name << ", in admission order (priority, then age):\n";
      Table t({"position", "job", "name", "owner", "priority", "submitted"});
      for (const auto& q : (*j)["jobs"]) {
        t.Add({Str(q, "position"), Str(q, "id"), Str(q, "name"), Str(q, "owner"), Str(q, "priority"), Str(q, "submitted_at")});
      }
      t.Print(std::cout);
      return;
    }
    auto j = api.Call("GET", "/v1/queues", "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
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
  std::string &outage_name = c.Keep<std::string>(), &outage_state = c.Keep<std::string>();
  auto* outage = provider->add_subcommand("outage", "switch a provider's outage drill on or off: simulated, local and Slurm providers (admin)");
  outage->add_option("NAME", outage_name, "provider name")->required();
  outage->add_option("STATE", outage_state, "on or off")->required()->check(CLI::IsMember({"on", "off"}));
  outage->callback([&] {
    auto j = api.Call("POST", "/v1/providers/" + net::UrlEncode(outage_name) + "/outage",
                      json{{"down", outage_state == "on"}}.dump(), rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << "provider " << outage_name << (outage_state == "on" ? " is down" : " is back") << "\n";
  });
}

// whoami.
void AddWhoami(Cli& c) {
  CLI::App& app = c.app;
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  auto* whoami = app.add_subcommand("whoami", "show the token in use");
  whoami->callback([&] {
    auto j = api.Call("GET", "/v1/whoami", "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << Str(*j, "token_id") << " (" << Str(*j, "name") << ") scopes: " << (*j)["scopes"].dump() << "\n";
    if (j->contains("user")) {
      std::cout << "user " << Str(*j, "user") << " in groups " << (*j)["groups"].dump() << "\n";
      for (const auto& grant : (*j)["grants"]) {
        std::cout << "  " << Str(grant, "role") << " of " << (grant["team"].is_null() ? "every team" : "team " + Str(grant, "team"))
                  << " through " << Str(grant, "group") << " (" << Str(grant, "source") << ")\n";
      }
    }
  });
}

// migrate, db check, db copy (straight on a database, no server), version.
void AddDbCommands(Cli& c) {
  CLI::App& app = c.app;
  Globals& g = c.g;
  int& rc = c.rc;
  std::string& db_url = c.Keep<std::string>();
  if (const char* db = std::getenv("CAUSEWAY_DB")) db_url = db;
  auto* migrate = app.add_subcommand("migrate", "bring a database's schema up to date (safe while replicas run)");
  migrate->add_option("--db", db_url, "SQLite file or postgresql:// URL (env CAUSEWAY_DB)")->required();
  migrate->callback([&] { rc = PrintDbReport(Migrate(db_url), g.json_output); });
  auto* db_cmd = app.add_subcommand("db", "database administration");
  db_cmd->require_subcommand(1);
  auto* db_check = db_cmd->add_subcommand("check", "connectivity, schema version and audit chain integrity");
  db_check->add_option("--db", db_url, "SQLite file or postgresql:// URL (env CAUSEWAY_DB)")->required();
  db_check->callback([&] { rc = PrintDbReport(CheckDb(db_url), g.json_output); });
  std::string &copy_from = c.Keep<std::string>(), &copy_to = c.Keep<std::string>();
  auto* db_copy = db_cmd->add_subcommand("copy", "copy everything into an empty database, chain intact");
  db_copy->add_option("--from", copy_from, "source: sqlite:PATH, a SQLite file or postgresql:// URL")->required();
  db_copy->add_option("--to", copy_to, "target, empty: a postgresql:// URL or a SQLite file")->required();
  db_copy->callback([&] {
    rc = PrintDbReport(CopyDb(copy_from, copy_to, [](const std::string& what) { std::cerr << what << "\n"; }),
                       g.json_output);
  });

  auto* version = app.add_subcommand("version", "print the version");
  version->callback([&] { std::cout << "causeway 0.1.0\n"; });
}

// After a failed parse at a command that has commands of its own: the word
// that named none of them ("causeway frobnicate", "causeway cost frob"),
// or that none was given, with the list, rather than CLI11's "A subcommand
// is required"; "" when the failure was a command's own options.
std::string UnknownCommand(CLI::App& app) {
  CLI::App* at = &app;
  for (CLI::App* next = at; next != nullptr;) {
    at = next;
    next = nullptr;
    for (CLI::App* sub : at->get_subcommands()) next = sub;  // the one parsed at this level, if any
  }
  auto commands = at->get_subcommands([](CLI::App*) { return true; });
  if (commands.empty()) return "";  // a command's own options: CLI11 says what is wrong
  std::string names;
  for (CLI::App* c : commands) names += (names.empty() ? "" : ", ") + c->get_name();
  std::string where = at == &app ? "causeway" : "causeway " + at->get_name();
  // Words a command did not take fall through to the ones above it.
  for (const std::string& word : app.remaining(true)) {
    if (word.rfind("-", 0) != 0) return "unknown command \"" + word + "\" for " + where + ": expected one of " + names;
  }
  return where + " needs a command: one of " + names;
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
  Cli c{app, api, g, rc, {}};

  AddServe(c);
  AddValidate(c);
  AddJobCommands(c);
  AddClusters(c);
  AddAuditLogAndVerify(c);
  AddTokenCommands(c);
  AddExplain(c);
  AddQueuesAndProviders(c);
  AddCheckpointsAndLogs(c);
  AddProvenanceCommands(c);
  AddReadinessCommands(c);
  AddDatasetCommands(c);
  AddServiceCommands(c);
  AddPlanCommands(c);
  AddWhoami(c);
  AddCostCommands(c);
  AddIdentityCommands(app, api, g, rc);
  AddAcceptanceCommands(app, g, rc);
  AddCostJob(c);
  AddDbCommands(c);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (std::string unknown = UnknownCommand(app); !unknown.empty()) {
      std::cerr << "error: " << unknown << "\nRun with --help for more information.\n";
      return kExitUsage;
    }
    app.exit(e);
    return kExitUsage;
  }
  return rc;
}

// Writes `text` to `path` ("" or "-": stdout), as a whole.
Status WriteOut(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text;
    return Status::Ok();
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return Unavailable("cannot write " + path);
  return Status::Ok();
}

}  // namespace causeway::cli
