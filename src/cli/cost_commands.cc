#include "cli/cost_commands.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <iostream>
#include <nlohmann/json.hpp>

#include "api/server.h"
#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/table.h"
#include "cost/billing.h"
#include "cost/metering.h"
#include "cost/showback.h"
#include "cost/waste.h"
#include "cli/local_db.h"

namespace causeway::cli {
namespace {

using nlohmann::json;

json IssuesJson(const cost::IssueLog& log, size_t limit) {
  json by_rule = json::object();
  for (const auto& [rule, s] : log.by_rule()) {
    by_rule[rule] = {{"count", s.count}, {"first_line", s.first.line}, {"column", s.first.column},
                     {"message", s.first.message}};
  }
  json list = json::array();
  for (size_t i = 0; i < log.kept().size() && i < limit; ++i) {
    const cost::Issue& x = log.kept()[i];
    list.push_back({{"line", x.line}, {"column", x.column}, {"rule", x.rule}, {"message", x.message}});
  }
  return {{"total", log.total()}, {"by_rule", by_rule}, {"issues", list}};
}

int Import(const DbChoice& where, const std::string& file, const cost::ImportOptions& options, bool all_issues,
           bool json_output) {
  auto store = OpenStore(where.Resolve());
  if (!store.ok()) return Fail(store.status());
  auto report = cost::ImportFocusBill(**store, file, options, RealClock());
  if (!report.ok()) {
    const Status& st = report.status();
    std::cerr << "error: " << st.message() << "\n";
    size_t shown = 0;
    for (const Diagnostic& d : st.diagnostics()) {
      if (!all_issues && ++shown > 50) {
        std::cerr << "  ... " << st.diagnostics().size() - 50 << " more (--all-issues lists every one)\n";
        break;
      }
      std::cerr << "  " << d.ToString() << "\n";
    }
    return ExitFor(st.code());
  }
  if (json_output) {
    json j = cost::ToJson(report->import);
    j["already_imported"] = report->already_imported;
    j["rollups"] = report->rollups;
    j["issue_log"] = IssuesJson(report->issues, all_issues ? cost::IssueLog::kKept : 50);
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  const BillingImport& b = report->import;
  if (report->already_imported) {
    std::cout << "already imported as " << b.id << " (" << b.rows << " rows, " << b.first_day << " to " << b.last_day
              << "); nothing changed\n";
    return kExitOk;
  }
  std::cout << "imported " << b.id << ": " << b.rows << " rows of FOCUS " << b.focus_version << " for " << b.provider
            << ", " << b.first_day << " to " << b.last_day << ", " << report->rollups << " rollups";
  if (b.skipped > 0) std::cout << ", " << b.skipped << " rows skipped";
  std::cout << "\n";
  if (report->issues.total() > 0) {
    std::cout << report->issues.total() << " departures from the specification, tolerated (--strict refuses them):\n";
    for (const auto& [rule, s] : report->issues.by_rule()) {
      std::cout << "  " << rule << ": " << s.count << " (first: line " << s.first.line
                << (s.first.column.empty() ? "" : ", " + s.first.column) << ": " << s.first.message << ")\n";
    }
  }
  return kExitOk;
}

int Imports(const DbChoice& where, bool json_output) {
  auto store = OpenStore(where.Resolve(), true);
  if (!store.ok()) return Fail(store.status());
  auto list = (*store)->ListBillingImports();
  if (!list.ok()) return Fail(list.status());
  if (json_output) {
    json j = json::array();
    for (const auto& b : *list) j.push_back(cost::ToJson(b));
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  Table t({"id", "provider", "focus", "rows", "days", "issues", "imported", "file"});
  for (const auto& b : *list) {
    t.Add({b.id, b.provider, b.focus_version, std::to_string(b.rows), b.first_day + ".." + b.last_day,
           std::to_string(b.issues), FormatRfc3339(b.imported_at), b.file});
  }
  t.Print(std::cout);
  return kExitOk;
}

Result<Estate> LoadEstate(const std::string& path) {
  if (path.empty()) return ParseEstate(DefaultEstateYaml(), "(embedded estate)");
  return LoadEstateFile(path);
}

struct ShowbackArgs {
  cost::ShowbackRequest request;
  std::string format = "table";
  std::string estate;
  bool metered = false;
};

// Prints rows as a table or as CSV (a comma or quote in a cell is quoted).
void PrintRows(const std::vector<std::string>& headers, std::vector<std::vector<std::string>> rows,
               const std::string& format) {
  if (format == "csv") {
    auto cell = [](const std::string& v) {
      if (v.find_first_of(",\"\n") == std::string::npos) return v;
      std::string q = "\"";
      for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
      return q + "\"";
    };
    for (const auto* line : {&headers}) {
      std::string out;
      for (const auto& c : *line) out += (out.empty() ? "" : ",") + cell(c);
      std::cout << out << "\n";
    }
    for (const auto& row : rows) {
      std::string out;
      for (size_t i = 0; i < row.size(); ++i) out += (i ? "," : "") + cell(row[i]);
      std::cout << out << "\n";
    }
    return;
  }
  Table table(headers);
  for (auto& row : rows) table.Add(std::move(row));
  table.Print(std::cout);
}

int MeteredShowbackCommand(const DbChoice& where, const ShowbackArgs& a, bool json_output) {
  auto store = OpenStore(where.Resolve(), true);
  if (!store.ok()) return Fail(store.status());
  auto estate = LoadEstate(a.estate);
  if (!estate.ok()) return Fail(estate.status());
  auto showback = cost::RunMeteredShowback(**store, *estate, a.request, RealClock().Now());
  if (!showback.ok()) return Fail(showback.status());
  if (json_output) {
    std::cout << cost::ToJson(*showback).dump(2) << "\n";
    return kExitOk;
  }
  using cost::MicrosText;
  std::vector<std::string> headers = showback->by;
  for (const char* h : {"attempts", "gpu-hours", "cost", "completed jobs", "cost/completed job", "wasted"}) {
    headers.emplace_back(h);
  }
  std::vector<std::vector<std::string>> rows;
  for (const cost::MeteredLine& l : showback->lines) {
    std::vector<std::string> row;
    for (const auto& k : l.keys) row.push_back(k.empty() && a.format != "csv" ? "(none)" : k);
    row.push_back(std::to_string(l.attempts));
    row.push_back(cost::GpuHoursHundredths(l.gpu_seconds));
    row.push_back(MicrosText(l.cost_micros));
    row.push_back(std::to_string(l.completed_jobs));
    row.push_back(l.completed_jobs > 0 ? MicrosText(l.cost_micros / l.completed_jobs) : "-");
    row.push_back(MicrosText(l.wasted_micros));
    rows.push_back(std::move(row));
  }
  PrintRows(headers, std::move(rows), a.format);
  if (a.format != "csv") std::cout << "(metered, in " << showback->currency << ")\n";
  return kExitOk;
}

int Showback(const DbChoice& where, const ShowbackArgs& a, bool json_output) {
  if (a.metered) return MeteredShowbackCommand(where, a, json_output);
  auto store = OpenStore(where.Resolve(), true);
  if (!store.ok()) return Fail(store.status());
  auto estate = LoadEstate(a.estate);
  if (!estate.ok()) return Fail(estate.status());
  auto showback = cost::RunShowback(**store, a.request, *estate, RealClock().Now());
  if (!showback.ok()) return Fail(showback.status());
  if (json_output) {
    std::cout << cost::ToJson(*showback).dump(2) << "\n";
    return kExitOk;
  }
  const bool shared = showback->rule != cost::ShareRule::kNone;
  std::vector<std::string> headers = showback->by;
  for (const char* h : {"currency", "rows", "billed", "effective", "list", "gpu-hours"}) headers.emplace_back(h);
  if (shared) headers.insert(headers.end(), {"shared", "effective+shared"});
  std::vector<std::vector<std::string>> rows;
  for (const cost::ShowbackLine& line : showback->lines) {
    const BillingTotal& t = line.total;
    std::vector<std::string> row;
    for (const auto& k : t.keys) row.push_back(k.empty() && a.format != "csv" ? "(untagged)" : k);
    row.push_back(t.currency);
    row.push_back(std::to_string(t.rows));
    for (Picos v : {t.billed, t.effective, t.list, t.gpu_hours}) row.push_back(cost::PicosText(v));
    if (shared) {
      row.push_back(cost::PicosText(line.shared));
      row.push_back(cost::PicosText(t.effective + line.shared));
    }
    rows.push_back(std::move(row));
  }
  PrintRows(headers, std::move(rows), a.format);
  return kExitOk;
}

struct MeteringArgs {
  std::string period;
  std::string estate;
  int threshold = 5;
  std::string output;
  std::string share_unused = "none";
};

// What reconcile and export read: the days, the estate and the database.
struct MeteringInputs {
  std::pair<std::string, std::string> days;
  Estate estate;
  std::unique_ptr<Store> store;
};

Result<MeteringInputs> OpenMetering(const DbChoice& where, const MeteringArgs& a) {
  MeteringInputs in;
  ASSIGN_OR_RETURN(in.days, cost::PeriodDays(a.period));
  ASSIGN_OR_RETURN(in.estate, LoadEstate(a.estate));
  ASSIGN_OR_RETURN(in.store, OpenStore(where.Resolve(), true));
  return in;
}

int Reconcile(const DbChoice& where, const MeteringArgs& a, bool json_output) {
  auto in = OpenMetering(where, a);
  if (!in.ok()) return Fail(in.status());
  auto lines = cost::Reconcile(*in->store, in->estate, in->days.first, in->days.second, a.threshold, RealClock().Now());
  if (!lines.ok()) return Fail(lines.status());
  int flagged = 0;
  json rows = json::array();
  Table t({"provider", "day", "billed gpu-h", "metered gpu-h", "billed", "metered", "currency", "", "likely cause"});
  for (const auto& l : *lines) {
    flagged += l.flagged;
    rows.push_back({{"provider", l.provider}, {"day", l.day}, {"currency", l.currency},
                    {"billed_gpu_hours", cost::PicosText(l.billed_gpu_hours)},
                    {"metered_gpu_hours", cost::PicosText(l.metered_gpu_hours)},
                    {"billed_cost", cost::PicosText(l.billed_cost)}, {"metered_cost", cost::PicosText(l.metered_cost)},
                    {"bill_rows", l.bill_rows}, {"attempts", l.attempts}, {"flagged", l.flagged},
                    {"cause", l.cause}});
    t.Add({l.provider, l.day, cost::HundredthsText(l.billed_gpu_hours), cost::HundredthsText(l.metered_gpu_hours),
           cost::PicosText(l.billed_cost), cost::PicosText(l.metered_cost), l.currency, l.flagged ? "!" : "",
           l.cause});
  }
  if (json_output) {
    std::cout << json{{"threshold_percent", a.threshold}, {"flagged", flagged}, {"days", rows}}.dump(2) << "\n";
  } else {
    t.Print(std::cout);
    std::cout << flagged << " of " << lines->size() << " provider-days differ by more than " << a.threshold
              << "% in GPU-hours\n";
  }
  return kExitOk;
}

int Export(const DbChoice& where, const MeteringArgs& a) {
  auto in = OpenMetering(where, a);
  if (!in.ok()) return Fail(in.status());
  if (a.output.empty() || a.output == "-") {
    Status st = cost::ExportFocus(*in->store, in->estate, in->days.first, in->days.second, RealClock().Now(), std::cout);
    return st.ok() ? kExitOk : Fail(st);
  }
  std::ofstream file(a.output, std::ios::binary | std::ios::trunc);
  if (!file) return Fail(InvalidArgument(a.output + ": cannot write"));
  Status st = cost::ExportFocus(*in->store, in->estate, in->days.first, in->days.second, RealClock().Now(), file);
  file.close();
  return st.ok() ? kExitOk : Fail(st);
}

int WasteCommand(const DbChoice& where, const MeteringArgs& a, bool json_output) {
  auto in = OpenMetering(where, a);
  if (!in.ok()) return Fail(in.status());
  auto rule = cost::ParseShareRule(a.share_unused);
  if (!rule.ok()) return Fail(rule.status().WithPrefix("--share-unused"));
  auto report = cost::Waste(*in->store, in->estate, in->days.first, in->days.second, RealClock().Now(),
                            cost::WasteOptions{*rule});
  if (!report.ok()) return Fail(report.status());
  using cost::GpuHoursHundredths, cost::GpuHoursText, cost::MicrosText;
  if (json_output) {
    json teams = json::array();
    for (const auto& t : report->teams) {
      teams.push_back({{"team", t.team}, {"failed_attempts", t.failed_attempts},
                       {"failed_gpu_hours", GpuHoursText(t.failed_gpu_seconds)},
                       {"failed_cost", MicrosText(t.failed_cost_micros)}, {"reaped_jobs", t.reaped_jobs},
                       {"idle_gpu_hours", GpuHoursText(t.idle_gpu_seconds)},
                       {"idle_cost", MicrosText(t.idle_cost_micros)}, {"dry_run_reaps", t.dry_run_reaps},
                       {"unused_reserved_share", MicrosText(t.unused_reserved_share_micros)}});
    }
    json reservations = json::array();
    for (const auto& r : report->reservations) {
      reservations.push_back({{"cluster", r.cluster}, {"gpu_type", r.gpu_type}, {"reservations", r.names},
                              {"reserved_gpu_hours", GpuHoursText(r.reserved_gpu_seconds)},
                              {"used_gpu_hours", GpuHoursText(r.used_gpu_seconds)},
                              {"committed_cost", MicrosText(r.committed_micros)},
                              {"unused_cost", MicrosText(r.unused_micros)},
                              {"unallocated_cost", MicrosText(r.unallocated_micros)}});
    }
    json unused = json::array();
    for (const auto& [currency, amount] : report->unused_commitments) {
      unused.push_back({{"currency", currency}, {"effective_cost", cost::PicosText(amount)}});
    }
    std::cout << json{{"currency", report->currency}, {"share_unused", a.share_unused}, {"teams", teams},
                      {"reservations", reservations}, {"unused_commitments", unused}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  const bool shared = *rule != cost::ShareRule::kNone;
  std::vector<std::string> headers = {"team", "failed attempts", "gpu-h", "cost", "reaped jobs",
                                      "idle gpu-h", "idle cost", "dry-run reaps"};
  if (shared) headers.emplace_back("unused reserved");
  Table t(headers);
  for (const auto& w : report->teams) {
    std::vector<std::string> row = {w.team.empty() ? "(none)" : w.team, std::to_string(w.failed_attempts),
                                    GpuHoursHundredths(w.failed_gpu_seconds), MicrosText(w.failed_cost_micros),
                                    std::to_string(w.reaped_jobs), GpuHoursHundredths(w.idle_gpu_seconds),
                                    MicrosText(w.idle_cost_micros), std::to_string(w.dry_run_reaps)};
    if (shared) row.push_back(MicrosText(w.unused_reserved_share_micros));
    t.Add(std::move(row));
  }
  t.Print(std::cout);
  std::cout << "(costs in " << report->currency << ", metered)\n";
  for (const auto& r : report->reservations) {
    std::cout << "reserved " << r.gpu_type << " on " << r.cluster << ": " << GpuHoursHundredths(r.reserved_gpu_seconds)
              << " GPU-h paid for, " << GpuHoursHundredths(r.used_gpu_seconds) << " used; unused "
              << MicrosText(r.unused_micros) << " of " << MicrosText(r.committed_micros)
              << (r.unallocated_micros > 0 ? " (unallocated)" : " (shared " + a.share_unused + ")")
              << "\n";
  }
  for (const auto& [currency, amount] : report->unused_commitments) {
    std::cout << "unused commitments on the bills: " << cost::PicosText(amount) << " " << currency << "\n";
  }
  return kExitOk;
}

}  // namespace

void AddCostCommands(CLI::App& app, const bool& json_output, int& rc) {
  auto* cost_cmd = app.add_subcommand("cost", "bills, metering and showback");
  cost_cmd->require_subcommand(1);

  // The options' storage lives as long as the callbacks that read it.
  struct State {
    DbChoice where;
    std::string file, version;
    cost::ImportOptions options;
    bool all_issues = false;
    ShowbackArgs sb;
    MeteringArgs metering;
  };
  auto state = std::make_shared<State>();
  DbChoice& where = state->where;
  std::string& file = state->file;
  std::string& version = state->version;
  cost::ImportOptions& options = state->options;
  bool& all_issues = state->all_issues;
  ShowbackArgs& sb = state->sb;
  auto* import = cost_cmd->add_subcommand("import", "import a FOCUS 1.0/1.1/1.2 billing export (CSV, plain or gzip)");
  import->add_option("file", file, "the export")->required();
  import->add_option("--provider", options.provider, "the estate's provider the bill is for")->required();
  import->add_flag("--strict", options.strict, "refuse the file on any departure from the specification");
  import->add_option("--focus-version", version, "1.0, 1.1 or 1.2 (default: from the columns)");
  import->add_flag("--all-issues", all_issues, "list every issue, not the first 50");
  where.AddTo(import);
  import->callback([state, &json_output, &rc, &where, &file, &version, &options, &all_issues] {
    if (!version.empty()) {
      options.version = cost::ParseFocusVersion(version);
      if (!options.version) {
        rc = Fail(InvalidArgument("--focus-version " + version + ": expected 1.0, 1.1 or 1.2"));
        return;
      }
    }
    options.actor = LocalActor();
    rc = Import(where, file, options, all_issues, json_output);
  });

  auto* imports = cost_cmd->add_subcommand("imports", "list imported bills");
  where.AddTo(imports);
  imports->callback([state, &json_output, &rc, &where] { rc = Imports(where, json_output); });

  auto* showback = cost_cmd->add_subcommand("showback", "billed cost grouped by team, owner, provider, month, ...");
  showback->add_option("--by", sb.request.by, "comma-separated: team, owner, project, job, provider, provider-name, day, "
                                       "month, service-category, charge-category, pricing-category, resource, "
                                       "sub-account, region")
      ->capture_default_str();
  showback->add_option("--period", sb.request.period, "YYYY-MM, YYYY-MM-DD or FROM..TO (end exclusive); default: all");
  showback->add_option("--provider", sb.request.provider, "only this provider's bills");
  showback->add_option("--share", sb.request.share,
                       "untagged effective cost (unused commitments, shared storage): none (its own line), "
                       "proportional or even across the groups; with --by team, owner, project or job")
      ->capture_default_str();
  showback->add_flag("--allocate", sb.request.allocate,
                     "put untagged charges on a cluster's bill resources (per-node, usage-only exports) on the jobs "
                     "that ran there each day, by GPU-seconds");
  showback->add_flag("--metered", sb.metered,
                     "from the ledger instead of the bills: attempts, GPU-hours, cost, completed jobs and cost per "
                     "completed job by team, owner, job, provider, cluster, gpu, month or day");
  showback->add_option("--estate", sb.estate,
                       "estate YAML, for clusters' bill resources and prices (default: the embedded one)");
  showback->add_option("--format", sb.format, "table or csv")->check(CLI::IsMember({"table", "csv"}))->capture_default_str();
  where.AddTo(showback);
  showback->callback([state, &json_output, &rc, &where, &sb] { rc = Showback(where, sb, json_output); });

  MeteringArgs& m = state->metering;
  auto* reconcile = cost_cmd->add_subcommand(
      "reconcile", "billed against metered GPU-hours per provider and day; differences flagged with their likely cause");
  reconcile->add_option("--period", m.period, "YYYY-MM, YYYY-MM-DD or FROM..TO (end exclusive); default: all");
  reconcile->add_option("--threshold", m.threshold, "flag differences above this percent")->capture_default_str();
  reconcile->add_option("--estate", m.estate, "estate YAML, for each cluster's provider (default: the embedded one)");
  where.AddTo(reconcile);
  reconcile->callback([state, &json_output, &rc, &where, &m] { rc = Reconcile(where, m, json_output); });

  auto* export_cmd = cost_cmd->add_subcommand(
      "export", "metered usage as FOCUS 1.2 CSV with x_Team, x_Owner and x_JobId, one row per attempt and day");
  export_cmd->add_option("--period", m.period, "YYYY-MM, YYYY-MM-DD or FROM..TO (end exclusive); default: all");
  export_cmd->add_option("--estate", m.estate, "estate YAML, for each cluster's provider (default: the embedded one)");
  export_cmd->add_option("-o,--output", m.output, "write to FILE instead of standard output");
  where.AddTo(export_cmd);
  export_cmd->callback([state, &rc, &where, &m] { rc = Export(where, m); });

  auto* waste = app.add_subcommand(
      "waste", "paid for and no work done: failed and preempted attempts, idle time the reaper caught, unused "
               "commitments");
  waste->add_option("--period", m.period, "YYYY-MM, YYYY-MM-DD or FROM..TO (end exclusive); default: all");
  waste->add_option("--estate", m.estate, "estate YAML, for prices and clusters (default: the embedded one)");
  waste->add_option("--share-unused", m.share_unused,
                    "unused reservation cost: none (unallocated), proportional (to each team's use of the "
                    "reservation) or even (across the estate's teams)")
      ->capture_default_str();
  where.AddTo(waste);
  waste->callback([state, &json_output, &rc, &where, &m] { rc = WasteCommand(where, m, json_output); });
}

}  // namespace causeway::cli
