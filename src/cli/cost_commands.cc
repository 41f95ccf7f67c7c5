#include "cli/cost_commands.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "causeway/clock.h"
#include "causeway/store.h"
#include "cli/errors.h"
#include "cli/local_db.h"
#include "cli/table.h"
#include "cost/billing.h"
#include "cost/focus.h"
#include "cost/showback.h"
#include "providers/registry.h"

namespace causeway::cli {
namespace {

using nlohmann::json;

// A decimal the API answered with, to the hundredth for a table ("8.33");
// as it came when it is not a number.
std::string Hundredths(const std::string& decimal) {
  std::optional<Picos> v = cost::ParsePicos(decimal);
  return v ? cost::HundredthsText(*v) : decimal;
}

bool Positive(const std::string& decimal) {
  std::optional<Picos> v = cost::ParsePicos(decimal);
  return v && *v > 0;
}

// What `cost import` prints: its report as JSON, or lines for people.
void PrintImport(const json& report, bool all_issues, bool json_output) {
  if (json_output) {
    json j = report;
    json& list = j["issue_log"]["issues"];
    if (!all_issues && list.is_array() && list.size() > 50) list.erase(list.begin() + 50, list.end());
    std::cout << j.dump(2) << "\n";
    return;
  }
  const std::string days = Str(report, "first_day") + " to " + Str(report, "last_day");
  if (report.value("already_imported", false)) {
    std::cout << "already imported as " << Str(report, "id") << " for " << Str(report, "provider") << " ("
              << Str(report, "rows") << " rows, " << days << "); nothing changed\n";
    return;
  }
  std::cout << "imported " << Str(report, "id") << ": " << Str(report, "rows") << " rows of FOCUS "
            << Str(report, "focus_version") << " for " << Str(report, "provider") << ", " << days << ", "
            << Str(report, "rollups") << " rollups";
  if (report.value("skipped", int64_t{0}) > 0) std::cout << ", " << Str(report, "skipped") << " rows skipped";
  std::cout << "\n";
  const json log = report.value("issue_log", json::object());
  const json by_rule = log.value("by_rule", json::object());
  if (log.value("total", int64_t{0}) > 0) {
    std::cout << Str(log, "total") << " departures from the specification, tolerated (--strict refuses them):\n";
    for (const auto& [rule, s] : by_rule.items()) {
      std::string column = Str(s, "column");
      std::cout << "  " << rule << ": " << Str(s, "count") << " (first: line " << Str(s, "first_line")
                << (column.empty() ? "" : ", " + column) << ": " << Str(s, "message") << ")\n";
    }
  }
}

// Straight into a database no server is using: the report, or the
// refusal with every diagnostic (the first 50 unless `all_issues`).
int ImportIntoDb(const DbChoice& where, const std::string& file, const cost::ImportOptions& options, bool all_issues,
                 json& report) {
  auto db = where.ForLoading();
  if (!db.ok()) return Fail(db.status());
  auto store = OpenStore(*db);
  if (!store.ok()) return Fail(store.status());
  auto imported = cost::ImportFocusBill(**store, file, options, RealClock());
  if (!imported.ok()) {
    const Status& st = imported.status();
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
  report = cost::ToJson(*imported);
  return kExitOk;
}

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
    auto line = [&cell](const std::vector<std::string>& cells) {
      std::string out;
      for (size_t i = 0; i < cells.size(); ++i) out += (i ? "," : "") + cell(cells[i]);
      std::cout << out << "\n";
    };
    line(headers);
    for (const auto& row : rows) line(row);
    return;
  }
  Table table(headers);
  for (auto& row : rows) table.Add(std::move(row));
  table.Print(std::cout);
}

struct ShowbackArgs {
  cost::ShowbackRequest request;
  std::string format = "table";
  bool metered = false;
};

// The showback's rows as printed: its grouping columns (`empty` for an
// empty key) and then `columns` of each row.
std::vector<std::vector<std::string>> ShowbackRows(const json& answer, const std::vector<std::string>& columns,
                                                   const std::string& empty) {
  std::vector<std::vector<std::string>> rows;
  for (const json& r : answer["rows"]) {
    std::vector<std::string> row;
    for (const json& key : answer["by"]) {
      std::string v = Str(r, key.get<std::string>().c_str());
      row.push_back(v.empty() ? empty : v);
    }
    for (const std::string& c : columns) row.push_back(r[c].is_null() ? "-" : Str(r, c.c_str()));
    rows.push_back(std::move(row));
  }
  return rows;
}

void Showback(Cli& c, const ShowbackArgs& a) {
  const cost::ShowbackRequest& r = a.request;
  auto j = c.api.Call("GET",
                      "/v1/cost/showback" + QueryString({{"by", r.by},
                                                         {"period", r.period},
                                                         {"provider", r.provider},
                                                         {"share", r.share},
                                                         {"allocate", r.allocate ? "true" : ""},
                                                         {"source", a.metered ? "metered" : ""}}),
                      "", c.rc);
  if (!j) return;
  if (c.g.json_output) return PrintJson(*j);
  std::vector<std::string> headers;
  for (const json& key : (*j)["by"]) headers.push_back(key.get<std::string>());
  const bool csv = a.format == "csv";
  if (a.metered) {
    for (const char* h :
         {"attempts", "gpu-hours", "cost", "data", "storage", "completed jobs", "cost/completed job", "wasted"}) {
      headers.emplace_back(h);
    }
    std::vector<std::string> columns = {"attempts",       "gpu_hours",      "cost", "data_cost",
                                        "storage_cost",   "completed_jobs", "cost_per_completed_job",
                                        "wasted_cost"};
    // By service: what it answered, and what it cost per hour and per 1,000 requests.
    const bool by_service = std::find(headers.begin(), headers.end(), "service") != headers.end();
    if (by_service) {
      for (const char* h : {"requests", "hours", "cost/hour", "cost/1000 requests"}) headers.emplace_back(h);
      columns.insert(columns.end(), {"requests", "hours", "cost_per_hour", "cost_per_1000_requests"});
    }
    auto rows = ShowbackRows(*j, columns, csv ? "" : "(none)");
    const size_t gpu_hours = (*j)["by"].size() + 1;
    for (auto& row : rows) row[gpu_hours] = Hundredths(row[gpu_hours]);
    for (auto& row : rows) {
      if (by_service) row[gpu_hours + 8] = Hundredths(row[gpu_hours + 8]);  // hours
    }
    PrintRows(headers, std::move(rows), a.format);
    if (!csv) std::cout << "(metered, in " << Str(*j, "currency") << ")\n";
    return;
  }
  std::vector<std::string> columns = {"currency", "rows", "billed_cost", "effective_cost", "list_cost", "gpu_hours"};
  for (const char* h : {"currency", "rows", "billed", "effective", "list", "gpu-hours"}) headers.emplace_back(h);
  if (Str(*j, "share") != "none") {
    headers.insert(headers.end(), {"shared", "effective+shared"});
    columns.insert(columns.end(), {"shared_cost", "total_effective_cost"});
  }
  PrintRows(headers, ShowbackRows(*j, columns, csv ? "" : "(untagged)"), a.format);
}

void Imports(Cli& c) {
  auto j = c.api.Call("GET", "/v1/cost/bills", "", c.rc);
  if (!j) return;
  if (c.g.json_output) return PrintJson((*j)["bills"]);
  Table t({"id", "provider", "focus", "rows", "days", "issues", "imported", "file"});
  for (const json& b : (*j)["bills"]) {
    t.Add({Str(b, "id"), Str(b, "provider"), Str(b, "focus_version"), Str(b, "rows"),
           Str(b, "first_day") + ".." + Str(b, "last_day"), Str(b, "issues"), Str(b, "imported_at"), Str(b, "file")});
  }
  t.Print(std::cout);
}

struct MeteringArgs {
  std::string period;
  int threshold = 5;
  std::string output;
  std::string share_unused = "none";
};

void Reconcile(Cli& c, const MeteringArgs& a) {
  auto j = c.api.Call("GET",
                      "/v1/cost/reconcile" +
                          QueryString({{"period", a.period}, {"threshold", std::to_string(a.threshold)}}),
                      "", c.rc);
  if (!j) return;
  if (c.g.json_output) return PrintJson(*j);
  Table t({"provider", "day", "billed gpu-h", "metered gpu-h", "billed", "metered", "currency", "", "likely cause"});
  for (const json& l : (*j)["days"]) {
    t.Add({Str(l, "provider"), Str(l, "day"), Hundredths(Str(l, "billed_gpu_hours")),
           Hundredths(Str(l, "metered_gpu_hours")), Str(l, "billed_cost"), Str(l, "metered_cost"),
           Str(l, "currency"), l.value("flagged", false) ? "!" : "", Str(l, "cause")});
  }
  t.Print(std::cout);
  std::cout << Str(*j, "flagged") << " of " << (*j)["days"].size() << " provider-days differ by more than "
            << a.threshold << "% in GPU-hours\n";
}

void Export(Cli& c, const MeteringArgs& a) {
  auto res = c.api.Raw("GET", "/v1/cost/export" + QueryString({{"period", a.period}}), "", c.rc);
  if (!res) return;
  if (a.output.empty() || a.output == "-") {
    std::cout << res->body;
    std::cout.flush();
    if (!std::cout) c.rc = Fail(Unavailable("cannot write to standard output"));
    return;
  }
  std::ofstream file(a.output, std::ios::binary | std::ios::trunc);
  file << res->body;
  file.close();
  if (!file) c.rc = Fail(InvalidArgument(a.output + ": cannot write"));
}

void Waste(Cli& c, const MeteringArgs& a) {
  auto j = c.api.Call("GET", "/v1/cost/waste" + QueryString({{"period", a.period}, {"share_unused", a.share_unused}}),
                      "", c.rc);
  if (!j) return;
  if (c.g.json_output) return PrintJson(*j);
  const bool shared = a.share_unused != "none";
  std::vector<std::string> headers = {"team",       "failed attempts", "gpu-h",        "cost",
                                      "reaped jobs", "idle gpu-h",     "idle cost",    "dry-run reaps"};
  if (shared) headers.emplace_back("unused reserved");
  Table t(headers);
  for (const json& w : (*j)["teams"]) {
    std::string team = Str(w, "team");
    std::vector<std::string> row = {team.empty() ? "(none)" : team, Str(w, "failed_attempts"),
                                    Hundredths(Str(w, "failed_gpu_hours")), Str(w, "failed_cost"),
                                    Str(w, "reaped_jobs"), Hundredths(Str(w, "idle_gpu_hours")),
                                    Str(w, "idle_cost"), Str(w, "dry_run_reaps")};
    if (shared) row.push_back(Str(w, "unused_reserved_share"));
    t.Add(std::move(row));
  }
  t.Print(std::cout);
  std::cout << "(costs in " << Str(*j, "currency") << ", metered)\n";
  for (const json& r : (*j)["reservations"]) {
    const bool unallocated = Positive(Str(r, "unallocated_cost"));
    std::cout << "reserved " << Str(r, "gpu_type") << " on " << Str(r, "cluster") << ": "
              << Hundredths(Str(r, "reserved_gpu_hours")) << " GPU-h paid for, "
              << Hundredths(Str(r, "used_gpu_hours")) << " used; unused " << Str(r, "unused_cost") << " of "
              << Str(r, "committed_cost") << (unallocated ? " (unallocated)" : " (shared " + a.share_unused + ")")
              << "\n";
  }
  for (const json& u : (*j)["unused_commitments"]) {
    std::cout << "unused commitments on the bills: " << Str(u, "effective_cost") << " " << Str(u, "currency") << "\n";
  }
}

struct ImportArgs {
  DbChoice where;
  std::string file, version, estate;
  cost::ImportOptions options;
  bool all_issues = false;
};

void Import(Cli& c, ImportArgs& a) {
  if (!a.version.empty() && !cost::ParseFocusVersion(a.version)) {
    c.rc = Fail(InvalidArgument("--focus-version " + a.version + ": expected 1.0, 1.1 or 1.2"));
    return;
  }
  json report;
  // Only an explicit --db or --data-dir opens a database: CAUSEWAY_DB
  // alone (the server's setting) never takes a command past the front door.
  if (a.where.given()) {
    a.options.version = a.version.empty() ? std::nullopt : cost::ParseFocusVersion(a.version);
    a.options.actor = LocalActor();
    if (!a.estate.empty()) {  // the server checks the provider against its estate; here, when given one
      auto estate = providers::LoadEstateFile(a.estate);
      if (!estate.ok()) {
        c.rc = Fail(estate.status());
        return;
      }
      for (const auto& p : estate->providers) a.options.known_providers.push_back(p.name);
    }
    c.rc = ImportIntoDb(a.where, a.file, a.options, a.all_issues, report);
    if (c.rc != kExitOk) return;
  } else {
    // Through the server: the file is the request body, up to its body limit.
    auto data = ReadFile(a.file);
    if (!data.ok()) {
      c.rc = Fail(data.status());
      return;
    }
    auto j = c.api.Call("POST",
                        "/v1/cost/bills" + QueryString({{"provider", a.options.provider},
                                                        {"strict", a.options.strict ? "true" : ""},
                                                        {"focus_version", a.version},
                                                        {"name", std::filesystem::path(a.file).filename().string()}}),
                        *data, c.rc, {{"Content-Type", "application/octet-stream"}});
    if (!j) return;
    report = std::move(*j);
  }
  PrintImport(report, a.all_issues, c.g.json_output);
}

}  // namespace

void AddCostCommands(Cli& c) {
  auto* cost_cmd = c.app.add_subcommand("cost", "bills, metering and showback");
  cost_cmd->require_subcommand(1);

  auto& in = c.Keep<ImportArgs>();
  auto* import = cost_cmd->add_subcommand("import", "import a FOCUS 1.0/1.1/1.2 billing export (CSV, plain or gzip)");
  import->add_option("file", in.file, "the export")->required();
  import->add_option("--provider", in.options.provider, "the estate's provider the bill is for")->required();
  import->add_flag("--strict", in.options.strict, "refuse the file on any departure from the specification");
  import->add_option("--focus-version", in.version, "1.0, 1.1 or 1.2 (default: from the columns)");
  import->add_flag("--all-issues", in.all_issues, "list every issue, not the first 50");
  import->add_option("--db", in.where.db,
                     "write straight into this database (SQLite file or postgresql:// URL) instead of through the "
                     "server: only one no server is using");
  import->add_option("--data-dir", in.where.data_dir, "write straight into DATA_DIR/causeway.db (see --db)");
  import->add_option("--estate", in.estate,
                     "with --db or --data-dir: refuse a provider this estate lacks (the server always checks its own)");
  import->callback([&c, &in] { Import(c, in); });

  auto* imports = cost_cmd->add_subcommand("imports", "list imported bills");
  imports->callback([&c] { Imports(c); });

  auto& sb = c.Keep<ShowbackArgs>();
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
                     "completed job by team, owner, job, service, provider, cluster, gpu, month or day (by service: requests "
                     "answered, cost per hour and per 1,000 requests)");
  showback->add_option("--format", sb.format, "table or csv")->check(CLI::IsMember({"table", "csv"}))->capture_default_str();
  showback->callback([&c, &sb] { Showback(c, sb); });

  auto& m = c.Keep<MeteringArgs>();
  auto* reconcile = cost_cmd->add_subcommand(
      "reconcile", "billed against metered GPU-hours per provider and day; differences flagged with their likely cause");
  reconcile->add_option("--period", m.period, "YYYY-MM, YYYY-MM-DD or FROM..TO (end exclusive); default: all");
  reconcile->add_option("--threshold", m.threshold, "flag differences above this percent")->capture_default_str();
  reconcile->callback([&c, &m] { Reconcile(c, m); });

  auto* export_cmd = cost_cmd->add_subcommand(
      "export", "metered usage as FOCUS 1.2 CSV with x_Team, x_Owner and x_JobId, one row per attempt and day");
  export_cmd->add_option("--period", m.period, "YYYY-MM, YYYY-MM-DD or FROM..TO (end exclusive); default: all");
  export_cmd->add_option("-o,--output", m.output, "write to FILE instead of standard output");
  export_cmd->callback([&c, &m] { Export(c, m); });

  auto* waste = c.app.add_subcommand(
      "waste", "paid for and no work done: failed and preempted attempts, idle time the reaper caught, unused "
               "commitments");
  waste->add_option("--period", m.period, "YYYY-MM, YYYY-MM-DD or FROM..TO (end exclusive); default: all");
  waste->add_option("--share-unused", m.share_unused,
                    "unused reservation cost: none (unallocated), proportional (to each team's use of the "
                    "reservation) or even (across the estate's teams)")
      ->check(CLI::IsMember({"none", "proportional", "even"}))
      ->capture_default_str();
  waste->callback([&c, &m] { Waste(c, m); });
}

}  // namespace causeway::cli
