#include "cli/job_commands.h"

#include "cli/spec_inputs.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "causeway/clock.h"
#include "causeway/crypto.h"
#include "causeway/job_spec.h"
#include "cli/errors.h"
#include "cli/plan_commands.h"
#include "cli/table.h"
#include "cost/focus.h"
#include "net/http_client.h"

namespace causeway::cli {

using nlohmann::json;

namespace {

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

// How an attempt's GPUs were priced: reserved capacity, spot (its flavor
// is the spot one) or on-demand.
std::string PricingOf(const json& attempt) {
  if (attempt.value("reserved", false)) return "reserved";
  std::string flavor = attempt.value("flavor", "");
  return flavor.size() > 5 && flavor.compare(flavor.size() - 5, 5, "-spot") == 0 ? "spot" : "on-demand";
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

// Whether a job's pipeline block is a job group's.
bool JobGroup(const json& p) { return Str(p, "execution") == "parallel"; }

// A task's role in its job group, in words.
std::string Role(const json& task) {
  return task.value("auxiliary", false) ? "auxiliary" : "primary";
}

// A job's pipeline or job group: its name and place, and each step or task
// (that the caller may see) with its state, `id` marked.
void PrintPipeline(const json& p, const std::string& id) {
  std::string name = Str(p, "name");
  bool group = JobGroup(p);
  std::cout << (group ? "job group: " : "pipeline:  ") << (name.empty() ? "" : name + " ") << Str(p, "id")
            << (group ? ", task " : ", step ") << Str(p, "step") << " of " << Str(p, "steps");
  if (p.contains("after") && p["after"].is_string()) std::cout << ", runs once " << Str(p, "after") << " has succeeded";
  if (group) {
    std::cout << ", " << Role(p) << "; its tasks start together";
    if (p.value("auxiliary", false)) {
      std::cout << "; ended " << FormatDuration(Micros(p.value("termination_delay_seconds", int64_t{0}) * 1'000'000))
                << " after the primary tasks succeed";
    }
  }
  std::cout << "\n";
  for (const auto& s : p.value("jobs", json::array())) {
    std::cout << (Str(s, "id") == id ? "  > " : "    ") << Str(s, "step") << ". " << Str(s, "id") << "  "
              << Str(s, "name") << "  " << Str(s, "state") << (group ? "  " + Role(s) : "") << "\n";
  }
}

}  // namespace

// submit, jobs, job, cancel.
void AddJobCommands(Cli& c) {
  CLI::App& app = c.app;
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  std::string &submit_file = c.Keep<std::string>(), &submit_key = c.Keep<std::string>();
  auto* submit = app.add_subcommand("submit", "submit a job spec");
  submit->add_option("FILE", submit_file, "job spec YAML")->required();
  submit->add_option("--idempotency-key", submit_key, "retry-safe key (default: a new random key)");
  SpecInputFlags& submit_inputs = c.Keep<SpecInputFlags>();
  AddSpecInputFlags(submit, submit_inputs);
  submit->callback([&] {
    auto body = SubmissionBody(submit_file, submit_inputs);
    if (!body.ok()) {
      rc = Fail(body.status());
      return;
    }
    if (submit_key.empty()) submit_key = HexEncode(RandomBytes(16));
    auto j = api.Call("POST", "/v1/jobs", body->dump(), rc, {{"Idempotency-Key", submit_key}});
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    for (const auto& w : (*j)["warnings"]) {
      std::string field = Str(w, "field");
      std::cerr << "warning: " << (field.empty() ? "" : field + ": ") << Str(w, "message") << "\n";
    }
    const json& job = (*j)["job"];
    bool created = (*j)["created"].get<bool>();
    if (!job.contains("pipeline")) {
      std::cout << (created ? "submitted " : "already submitted ") << Str(job, "id") << " (" << Str(job, "name")
                << ", " << Gpus(job["spec"]) << ", " << Str(job, "state") << ")\n";
      return;
    }
    const json& p = job["pipeline"];
    std::string name = Str(p, "name");
    bool group = JobGroup(p);
    std::cout << (created ? "submitted " : "already submitted ") << (group ? "job group " : "pipeline ")
              << (name.empty() ? "" : name + " ") << Str(p, "id") << ": " << Str(p, "steps")
              << (group ? " tasks, started together" : " steps, each once the one before it has succeeded") << "\n";
    const json steps = j->contains("jobs") ? (*j)["jobs"] : json::array({job});
    for (const auto& s : steps) {
      std::cout << "  " << Str(s["pipeline"], "step") << ". " << Str(s, "id") << " (" << Str(s, "name") << ", "
                << Gpus(s["spec"]) << ", " << Str(s, "state") << (group ? ", " + Role(s["pipeline"]) : "") << ")\n";
    }
  });

  // jobs
  std::string &f_state = c.Keep<std::string>(), &f_team = c.Keep<std::string>(), &f_owner = c.Keep<std::string>(), &f_cursor = c.Keep<std::string>(), &f_limit = c.Keep<std::string>(), &f_provider = c.Keep<std::string>();
  auto* jobs = app.add_subcommand("jobs", "list jobs, newest first");
  jobs->add_option("--state", f_state, "pending, admitted, running, succeeded, failed or cancelled");
  jobs->add_option("--team", f_team, "only this team's jobs");
  jobs->add_option("--owner", f_owner, "only this owner's jobs");
  jobs->add_option("--provider", f_provider, "only jobs with an attempt at this provider");
  jobs->add_option("--limit", f_limit, "page size, 1-1000 (default 100)");
  jobs->add_option("--cursor", f_cursor, "continue after this job id (next_cursor)");
  jobs->callback([&] {
    auto j = api.Call("GET", "/v1/jobs" + QueryString({{"state", f_state}, {"team", f_team}, {"owner", f_owner},
                                                       {"provider", f_provider}, {"limit", f_limit}, {"cursor", f_cursor}}), "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    PrintJobsTable((*j)["jobs"]);
    if (!(*j)["next_cursor"].is_null()) std::cout << "more: --cursor " << Str(*j, "next_cursor") << "\n";
  });

  // job ID
  std::string &job_id = c.Keep<std::string>();
  auto* job = app.add_subcommand("job", "show one job with its attempts and events");
  job->add_option("ID", job_id, "job id")->required();
  job->callback([&] {
    auto j = api.Call("GET", "/v1/jobs/" + net::UrlEncode(job_id), "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << "id:        " << Str(*j, "id") << "\nname:      " << Str(*j, "name") << "\nstate:     "
              << Str(*j, "state") << "\nteam:      " << Str(*j, "team") << "\nowner:     " << Str(*j, "owner")
              << "\ngpus:      " << Gpus((*j)["spec"]) << "\npriority:  " << Str(*j, "priority")
              << "\ncreated:   " << Str(*j, "created_at") << "\n";
    if (j->contains("pipeline")) PrintPipeline((*j)["pipeline"], Str(*j, "id"));
    std::cout << "attempts:  " << (*j)["attempts"].size() << "\nevents:\n";
    for (const auto& e : (*j)["events"]) {
      std::cout << "  " << Str(e, "time") << "  " << Str(e, "type") << "  " << Str(e, "message") << "\n";
    }
  });

  // cancel ID
  std::string &cancel_id = c.Keep<std::string>(), &cancel_reason = c.Keep<std::string>();
  auto* cancel = app.add_subcommand("cancel", "cancel a job");
  cancel->add_option("ID", cancel_id, "job id")->required();
  cancel->add_option("--reason", cancel_reason, "why (kept in the audit trail)");
  cancel->callback([&] {
    auto j = api.Call("POST", "/v1/jobs/" + net::UrlEncode(cancel_id) + "/cancel", json{{"reason", cancel_reason}}.dump(), rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << "cancelled " << cancel_id << "\n";
  });
}

// explain: why a job is where it is.
void AddExplain(Cli& c) {
  CLI::App& app = c.app;
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  std::string &explain_id = c.Keep<std::string>();
  auto* explain = app.add_subcommand("explain", "why a job is where it is: quota decision and every candidate cluster");
  explain->add_option("ID", explain_id, "job id")->required();
  explain->callback([&] {
    auto j = api.Call("GET", "/v1/jobs/" + net::UrlEncode(explain_id) + "/explain", "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << Str(*j, "job") << " (" << Str(*j, "name") << ", team " << Str(*j, "team") << ") is "
              << Str(*j, "state") << "\n";
    if (!Str(*j, "reason").empty()) std::cout << "  last: " << Str(*j, "reason") << "\n";
    if (j->contains("pipeline")) PrintPipeline((*j)["pipeline"], Str(*j, "job"));
    const json& s = (*j)["scheduler"];
    const json& attempts = (*j)["attempts"];
    if (s.is_object() && s.contains("waiting")) std::cout << "  waiting: " << Str(s, "waiting") << "\n";
    if (j->contains("expected")) PrintExpected((*j)["expected"], std::cout);
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
        std::cout << "  asks for " << Str(a, "nodes") << " x " << Str(a, "accelerators") << " ("
                  << CountOf(Str(a, "flavor"), a.value("gpus", 0LL)) << ")";
        if (a.contains("quota")) std::cout << ": quota " << Str(a["quota"], "verdict") << ": " << Str(a["quota"], "reason");
        std::cout << "\n";
      }
      std::cout << "  candidates, best first:\n";
      for (const auto& c : s["candidates"]) {
        if (c["eligible"].get<bool>()) {
          std::cout << "    ok    " << Str(c, "cluster") << " " << Str(c, "accelerators") << ": "
                    << (c["reserved"].get<bool>() ? "reserved capacity, " : "") << Str(c, "price_per_gpu_hour")
                    << (Str(c, "accelerators").rfind("CPU:", 0) == 0 ? "/CPU-h, " : "/GPU-h, ")
                    << (c.contains("data") ? Str(c, "data")
                                           : c["data_local"].get<bool>() ? "data local" : "data remote")
                    << ", "
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
}

// checkpoint register, checkpoint list, logs.
void AddCheckpointsAndLogs(Cli& c) {
  CLI::App& app = c.app;
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  auto* checkpoint = app.add_subcommand("checkpoint", "checkpoints a job registered; its next attempt resumes from the latest");
  checkpoint->require_subcommand(1);
  std::string &cp_job = c.Keep<std::string>(), &cp_path = c.Keep<std::string>();
  int64_t &cp_step = c.Keep<int64_t>(-1);
  auto* cp_register = checkpoint->add_subcommand("register", "record a checkpoint (run from inside the job)");
  cp_register->add_option("--job", cp_job, "job id (inside a job: $CAUSEWAY_JOB_ID)")->required();
  cp_register->add_option("--path", cp_path, "where it was written, e.g. s3://bucket/run/step-1000")->required();
  cp_register->add_option("--step", cp_step, "training step");
  std::string& cp_digest = c.Keep<std::string>();
  cp_register->add_option("--digest", cp_digest, "its digest, sha256:HEX: it becomes an output of the job's provenance record");
  std::string& cp_wait = c.Keep<std::string>();
  cp_register->add_option("--wait", cp_wait,
                          "while the server answers 503 (written through a MOUNT_CACHED mount and not in its bucket "
                          "yet), ask again for up to this long: 30s, 5m");
  cp_register->callback([&] {
    if (!cp_wait.empty()) {
      auto wait = ParseDuration(cp_wait);
      if (!wait.ok()) return void(rc = Fail(InvalidArgument("--wait: " + wait.status().message())));
      api.RetryUnavailableFor(std::chrono::duration_cast<std::chrono::milliseconds>(*wait));
    }
    json body = {{"path", cp_path}};
    if (cp_step >= 0) body["step"] = cp_step;
    if (!cp_digest.empty()) body["digest"] = cp_digest;
    auto j = api.Call("POST", "/v1/jobs/" + net::UrlEncode(cp_job) + "/checkpoints", body.dump(), rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    std::cout << "registered checkpoint " << Str((*j)["checkpoint"], "seq") << " of " << cp_job << ": " << cp_path << "\n";
  });
  std::string &cp_list_job = c.Keep<std::string>();
  auto* cp_list = checkpoint->add_subcommand("list", "a job's checkpoints, oldest first");
  cp_list->add_option("ID", cp_list_job, "job id")->required();
  cp_list->callback([&] {
    auto j = api.Call("GET", "/v1/jobs/" + net::UrlEncode(cp_list_job) + "/checkpoints", "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
    Table t({"seq", "attempt", "step", "path", "created"});
    for (const auto& c : (*j)["checkpoints"]) {
      t.Add({Str(c, "seq"), Str(c, "attempt"), Str(c, "step"), Str(c, "path"), Str(c, "created_at")});
    }
    t.Print(std::cout);
  });

  // logs ID
  std::string &logs_id = c.Keep<std::string>();
  int &logs_attempt = c.Keep<int>(0);
  bool &logs_follow = c.Keep<bool>(false);
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
}

// cost job (beside the cost commands of cost_commands.h).
void AddCostJob(Cli& c) {
  CLI::App& app = c.app;
  Api& api = c.api;
  Globals& g = c.g;
  int& rc = c.rc;
  std::string &cost_job_id = c.Keep<std::string>();
  auto* cost_job = app.get_subcommand("cost")->add_subcommand(
      "job", "what one job cost, attempt by attempt: failed, preempted and idle attempts count too");
  cost_job->add_option("ID", cost_job_id, "job id")->required();
  cost_job->callback([&] {
    auto j = api.Call("GET", "/v1/jobs/" + net::UrlEncode(cost_job_id), "", rc);
    if (!j) return;
    if (g.json_output) return PrintJson(*j);
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
             PricingOf(a), money(a.value("price_micros", int64_t{0})),
             hours(a.value("gpu_seconds", int64_t{0})), money(cost), busy(w, o), outcome});
    }
    t.Print(std::cout);
    // Moving its data: each charge on a line of its own.
    int64_t data = 0;
    if (j->contains("data_charges") && !(*j)["data_charges"].empty()) {
      Table d({"data", "dataset", "from", "to", "bytes", "cost"});
      for (const auto& c : (*j)["data_charges"]) {
        int64_t amount = c.value("amount_micros", int64_t{0});
        data += amount;
        d.Add({Str(c, "kind"), Str(c, "dataset"), Str(c, "from"), Str(c, "to"), Str(c, "bytes"), money(amount)});
      }
      d.Print(std::cout);
    }
    size_t n = (*j)["attempts"].size();
    std::cout << "total " << money(total + data) << " over " << n << (n == 1 ? " attempt" : " attempts");
    if (data > 0) std::cout << " (" << money(data) << " of it moving data)";
    if (wasted > 0) std::cout << "; " << money(wasted) << " of it on attempts that did not finish the work";
    if (Str(job, "state") == "succeeded") std::cout << "; cost of the completed job: " << money(total + data);
    std::cout << "\n";
    if (observed > 0) {
      // Goodput: GPU time doing work over the GPU time allocated.
      std::cout << "goodput " << busy(work, allocated) << ": " << hours(work) << " GPU-hours of work of "
                << hours(allocated) << " allocated (telemetry covered " << hours(observed) << ")\n";
    }
  });
}

}  // namespace causeway::cli
