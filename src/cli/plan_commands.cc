#include "cli/plan_commands.h"

#include <cmath>
#include <filesystem>
#include <optional>
#include <iostream>

#include "causeway/estate.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/local_db.h"
#include "cli/spec_inputs.h"
#include "planning/demand.h"
#include "planning/history.h"
#include "planning/rows.h"
#include "planning/plan.h"
#include "planning/report.h"
#include "providers/registry.h"

namespace causeway::cli {
namespace {

struct TraceFlags {
  std::string file, format = "causeway", start, default_team, html, output, since = "90d";
  bool from_history = false, fidelity = false;
  DbChoice db;
  std::vector<std::string> estates, reservations, removals, prices, gpu_types;
  int seeds = 1;
  uint64_t seed = 1;
  bool any_gpu_type = false;
};

// The estates to compare: files, "trace" (the trace's own machines), or the
// embedded estate when none is named.
Result<std::vector<planning::NamedEstate>> Estates(const TraceFlags& f, const planning::Trace& trace) {
  std::vector<planning::NamedEstate> out;
  if (f.estates.empty()) {
    ASSIGN_OR_RETURN(auto e, providers::ParseEstate(DefaultEstateYaml(), "the embedded estate"));
    out.push_back({"embedded estate", std::move(e)});
  }
  for (const auto& name : f.estates) {
    if (name == "trace") {
      ASSIGN_OR_RETURN(auto e, planning::TraceEstate(trace));
      out.push_back({"trace's machines", std::move(e)});
    } else {
      ASSIGN_OR_RETURN(auto e, providers::LoadEstateFile(name));
      out.push_back({name, std::move(e)});
    }
  }
  return out;
}

Result<planning::PlanRequest> Request(const TraceFlags& f, const planning::Trace& trace) {
  planning::PlanRequest req;
  ASSIGN_OR_RETURN(req.estates, Estates(f, trace));
  using K = planning::EstateChange::Kind;
  for (auto [kind, list] : {std::pair{K::kAddReservation, &f.reservations}, {K::kRemoveCluster, &f.removals},
                            {K::kPrice, &f.prices}}) {
    for (const auto& text : *list) {
      ASSIGN_OR_RETURN(auto change, planning::ParseChange(kind, text));
      req.changes.push_back(std::move(change));
    }
  }
  req.seeds = f.seeds;
  req.options.seed = f.seed;
  req.options.default_team = f.default_team;
  req.options.any_gpu_type = f.any_gpu_type;
  for (const auto& m : f.gpu_types) {
    size_t eq = m.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == m.size()) {
      return InvalidArgument("--gpu-type " + m + ": expected FROM=TO, e.g. V100M32=A100-80GB");
    }
    req.options.gpu_types[m.substr(0, eq)] = m.substr(eq + 1);
  }
  if (!f.start.empty()) {
    ASSIGN_OR_RETURN(req.options.start, ParseRfc3339(f.start));
  } else {
    // Today, from midnight UTC: reservations dated in the estate apply as
    // they would to work starting now.
    auto now = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
    req.options.start = std::chrono::time_point_cast<Micros>(now);
  }
  return req;
}

// The ledger's jobs of the last `since`, read from the database file.
Result<planning::Trace> History(const TraceFlags& f, Timestamp& origin) {
  ASSIGN_OR_RETURN(Micros window, ParseDuration(f.since));
  if (window <= Micros(0)) return InvalidArgument("--since must be a positive duration, e.g. 90d");
  std::string path = f.db.Resolve();
  if (!std::filesystem::exists(path)) return NotFound("no database at " + path + " (give --db FILE or --data-dir DIR)");
  ASSIGN_OR_RETURN(auto store, OpenStore(path, true));
  Timestamp until = std::chrono::time_point_cast<Micros>(std::chrono::system_clock::now());
  // A recorded run's clock may run ahead of this one (--sim-speed): read up
  // to the newest job, whenever that is.
  origin = until - window;
  return planning::ReadHistory(*store, origin, Timestamp::max());
}

int PlanTraceCommand(const TraceFlags& f, bool json_output) {
  if (f.from_history == !f.file.empty()) {
    return Fail(InvalidArgument("give a trace FILE or --from-history, not both or neither"));
  }
  if (f.fidelity && !f.from_history) return Fail(InvalidArgument("--fidelity replays a recorded run: add --from-history"));
  Result<planning::Trace> trace = InvalidArgument("no trace");
  Timestamp origin;
  if (f.from_history) {
    trace = History(f, origin);
  } else {
    auto format = planning::ParseTraceFormat(f.format);
    if (!format.ok()) return Fail(format.status());
    trace = planning::ReadTrace(f.file, *format);
  }
  if (!trace.ok()) return Fail(trace.status());
  auto req = Request(f, *trace);
  if (!req.ok()) return Fail(req.status());
  if (f.from_history) req->options.start = origin;
  req->options.fidelity = f.fidelity;
  auto report = planning::PlanTrace(*trace, std::move(*req));
  if (!report.ok()) return Fail(report.status());
  if (!f.html.empty()) {
    if (Status st = WriteOut(f.html, planning::ReportHtml(*report)); !st.ok()) return Fail(st);
    std::cerr << "wrote the HTML report to " << f.html << "\n";
  }
  std::string text = json_output ? report->dump(2) + "\n" : planning::ReportTable(*report);
  if (Status st = WriteOut(f.output, text); !st.ok()) return Fail(st);
  return kExitOk;
}

struct DemandFlags {
  std::string dir, format = "helios-earth";
  std::vector<std::string> quotas;
  std::optional<int64_t> reservation;
  std::optional<double> reserved_price, on_demand_price;
};

Result<planning::DemandOptions> DemandOptionsOf(const DemandFlags& f) {
  if (f.format != "helios-earth") return InvalidArgument("--format: expected helios-earth");
  planning::DemandOptions o;
  for (const auto& q : f.quotas) {
    size_t eq = q.find('=');
    auto n = eq == std::string::npos ? std::nullopt : planning::Number(q.substr(eq + 1));
    if (eq == 0 || !n || *n < 0 || *n != std::floor(*n)) return InvalidArgument("--quota " + q + ": expected TEAM=GPUS");
    o.quotas[q.substr(0, eq)] = static_cast<int64_t>(*n);
  }
  if (f.reservation && *f.reservation < 0) return InvalidArgument("--reservation must be 0 or more GPUs");
  for (const auto& price : {f.reserved_price, f.on_demand_price}) {
    if (price && *price < 0) return InvalidArgument("prices cannot be negative");
  }
  o.reservation = f.reservation;
  o.reserved_price = f.reserved_price;
  o.on_demand_price = f.on_demand_price;
  return o;
}

int PlanDemandCommand(const DemandFlags& f, bool json_output) {
  auto o = DemandOptionsOf(f);
  if (!o.ok()) return Fail(o.status());
  auto trace = planning::ReadHeliosEarth(f.dir);
  if (!trace.ok()) return Fail(trace.status());
  auto report = planning::DemandReport(*trace, *o);
  if (!report.ok()) return Fail(report.status());
  std::cout << (json_output ? report->dump(2) + "\n" : planning::DemandTable(*report));
  return kExitOk;
}

// "in about 40 min": a forecast is no more precise than that.
std::string About(int64_t seconds) {
  if (seconds <= 30) return "now";
  if (seconds < 90) return "in about a minute";
  if (seconds < 90 * 60) return "in about " + std::to_string((seconds + 30) / 60) + " min";
  char buf[64];
  if (seconds < 48 * 3600) {
    std::snprintf(buf, sizeof buf, "in about %.1f h", static_cast<double>(seconds) / 3600);
  } else {
    std::snprintf(buf, sizeof buf, "in about %.0f days", static_cast<double>(seconds) / 86400);
  }
  return buf;
}

int PlanJobCommand(Api& api, const std::string& file, const SpecInputFlags& inputs, bool json_output) {
  auto body = SubmissionBody(file, inputs);
  if (!body.ok()) return Fail(body.status());
  int rc = kExitOk;
  auto j = api.Call("POST", "/v1/plan/job", body->dump(), rc);
  if (!j) return rc;
  if (json_output) {
    PrintJson(*j);
    return kExitOk;
  }
  for (const auto& w : (*j)["warnings"]) {
    std::string field = Str(w, "field");
    std::cerr << "warning: " << (field.empty() ? "" : field + ": ") << Str(w, "message") << "\n";
  }
  for (const auto& job : (*j)["jobs"]) {
    std::cout << "job " << Str(job, "name") << " (team " << Str(job, "team") << "), if submitted now:\n";
    PrintExpected(job, std::cout);
  }
  std::cout << "as of " << Str(*j, "as_of") << ", assuming " << Str(*j, "assumes") << "\n";
  return kExitOk;
}

}  // namespace

void PrintExpected(const nlohmann::json& f, std::ostream& out) {
  if (f.contains("error")) {
    out << "  expected start: not known (" << Str(f["error"], "message") << ")\n";
    return;
  }
  if (f.contains("position")) {
    out << "  position " << Str(f["position"], "position") << " of " << Str(f["position"], "queued") << " in queue "
        << Str(f, "queue") << "\n";
  }
  if (!f.value("starts", false)) {
    out << "  not expected to start: " << Str(f, "waiting") << "\n";
    return;
  }
  const nlohmann::json& p = f["placement"];
  int64_t precision = f.value("precision_seconds", int64_t{0});
  out << "  expected start " << About(f.value("start_in_seconds", int64_t{0})) << " (" << Str(f, "start")
      << (precision >= 120 ? ", to within " + std::to_string(precision / 60) + " min" : "") << ") on "
      << Str(p, "cluster") << " (" << Str(p, "provider") << ", " << Str(p, "zone") << "; " << Str(p, "gpus") << " "
      << Str(p, "flavor") << (p.value("reserved", false) ? ", reserved" : "") << " at " << Str(p, "price_per_gpu_hour")
      << " " << Str(f["expected_cost"], "currency") << "/GPU-h)\n";
  out << "  expected cost " << Str(f["expected_cost"], "amount") << " " << Str(f["expected_cost"], "currency")
      << " for an expected run of " << FormatDuration(Micros(f.value("expected_run_seconds", int64_t{0}) * 1'000'000))
      << "\n";
}

void AddPlanCommands(Cli& c) {
  auto* plan = c.app.add_subcommand("plan", "planning: replay traces through the scheduler on candidate estates");
  plan->require_subcommand(1);
  auto* trace = plan->add_subcommand("trace", "replay a trace on one or more estates and compare them (offline)");
  TraceFlags& f = c.Keep<TraceFlags>();
  trace->add_option("FILE", f.file, "the trace (or --from-history)");
  trace->add_flag("--from-history", f.from_history, "the ledger's own jobs (read from the database) as the trace");
  trace->add_option("--since", f.since, "with --from-history: jobs submitted in the last DURATION (default 90d)");
  trace->add_option("--db", f.db.db, "with --from-history: the database file (default: the server's)");
  trace->add_option("--data-dir", f.db.data_dir, "with --from-history: the server's data directory");
  trace->add_flag("--fidelity", f.fidelity,
                  "with --from-history: replay the recorded run itself and say whether the scheduler made the same "
                  "decisions (admission order, placements)");
  trace->add_option("--format", f.format, "causeway (CSV or JSON lines), alibaba-2023, alibaba-dlrm-2025");
  trace->add_option("--estate", f.estates,
                    "an estate to replay on (repeat to compare; \"trace\": the trace's own machines; default: the "
                    "embedded estate)");
  trace->add_option("--add-reservation", f.reservations,
                    "CLUSTER:GPU_TYPE:COUNT:TERM:PRICE, e.g. nebius-eu-h200:H200:128:12mo:2.30 (a candidate: the first "
                    "estate with these changes)");
  trace->add_option("--remove-cluster", f.removals, "CLUSTER (a change, as --add-reservation)");
  trace->add_option("--price", f.prices, "CLUSTER:GPU_TYPE:ON_DEMAND[:SPOT] per GPU-hour (a change)");
  trace->add_option("--seeds", f.seeds, "replays per estate, each with its own seed (median and 5th-95th percentile)");
  trace->add_option("--seed", f.seed, "the first seed (default 1)");
  trace->add_option("--start", f.start, "when the trace's time 0 is, RFC 3339 (default: today, 00:00 UTC)");
  trace->add_option("--default-team", f.default_team, "the team of jobs whose team has no queue in the estate");
  trace->add_option("--gpu-type", f.gpu_types, "FROM=TO: the trace's GPU type FROM runs as the estate's TO");
  trace->add_flag("--any-gpu-type", f.any_gpu_type, "every job may use any GPU type of the estate");
  trace->add_option("--html", f.html, "also write a self-contained HTML report with plots");
  trace->add_option("-o,--output", f.output, "write the table (or --json) to this file (default: stdout)");
  int& rc = c.rc;
  Globals& g = c.g;
  trace->callback([&] { rc = PlanTraceCommand(f, g.json_output); });

  auto* demand = plan->add_subcommand(
      "demand", "per-team demand curves (Helios Earth) against quotas and a reservation (offline)");
  DemandFlags& d = c.Keep<DemandFlags>();
  demand->add_option("DIR", d.dir, "the curves: Helios' Earth_vcs folder")->required();
  demand->add_option("--format", d.format, "helios-earth (the only form so far)");
  demand->add_option("--quota", d.quotas, "TEAM=GPUS in place of the source's quota (repeat)");
  demand->add_option("--reservation", d.reservation, "GPUs reserved for the whole demand");
  demand->add_option("--reserved-price", d.reserved_price, "per GPU-hour of the reservation");
  demand->add_option("--on-demand-price", d.on_demand_price, "per GPU-hour beyond it (with --reserved-price: the break-even size)");
  demand->callback([&] { rc = PlanDemandCommand(d, g.json_output); });

  auto* job = plan->add_subcommand(
      "job", "when a job would likely start, where, and what it would cost (asks the server; submits nothing)");
  std::string& job_file = c.Keep<std::string>();
  job->add_option("FILE", job_file, "job spec YAML")->required();
  SpecInputFlags& job_inputs = c.Keep<SpecInputFlags>();
  AddSpecInputFlags(job, job_inputs);
  Api& api = c.api;
  job->callback([&] { rc = PlanJobCommand(api, job_file, job_inputs, g.json_output); });
}

}  // namespace causeway::cli
