#include "cli/cost_commands.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <iostream>
#include <nlohmann/json.hpp>

#include "causeway/clock.h"
#include "causeway/store.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "cli/table.h"
#include "cost/billing.h"

namespace causeway::cli {
namespace {

using nlohmann::json;

// Where the cost commands find the database.
struct DbChoice {
  std::string db;
  std::string data_dir;
  std::string Resolve() const {
    if (!db.empty()) return db;
    if (!data_dir.empty()) {
      std::error_code ignored;  // OpenStore reports a folder it cannot use
      std::filesystem::create_directories(data_dir, ignored);
      return data_dir + "/causeway.db";
    }
    if (const char* env = std::getenv("CAUSEWAY_DB"); env && *env) return env;
    return ".data/causeway.db";
  }
  void AddTo(CLI::App* cmd) {
    cmd->add_option("--db", db, "SQLite file or postgresql:// URL (env CAUSEWAY_DB)");
    cmd->add_option("--data-dir", data_dir, "use DATA_DIR/causeway.db (default .data)");
  }
};

// Who runs a local command, for the audit trail: the operating-system user.
std::string LocalActor() {
  const char* user = std::getenv("USER");
  if (user && *user) return std::string("local:") + user;
  return "local:uid" + std::to_string(::getuid());
}

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

json ImportJson(const BillingImport& b) {
  return {{"id", b.id},       {"provider", b.provider},   {"file", b.file},         {"digest", b.digest},
          {"focus_version", b.focus_version}, {"rows", b.rows}, {"skipped", b.skipped}, {"issues", b.issues},
          {"first_day", b.first_day}, {"last_day", b.last_day}, {"imported_by", b.imported_by},
          {"imported_at", FormatRfc3339(b.imported_at)}};
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
    json j = ImportJson(report->import);
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
    for (const auto& b : *list) j.push_back(ImportJson(b));
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

struct ShowbackArgs {
  std::string by = "team";
  std::string period;
  std::string provider;
  std::string format = "table";
  std::string share = "none";
};

int Showback(const DbChoice& where, const ShowbackArgs& a, bool json_output) {
  auto dims = cost::ParseBillingDims(a.by);
  if (!dims.ok()) return Fail(dims.status());
  auto days = cost::PeriodDays(a.period);
  if (!days.ok()) return Fail(days.status());
  auto store = OpenStore(where.Resolve(), true);
  if (!store.ok()) return Fail(store.status());
  BillingQuery q{*dims, days->first, days->second, a.provider};
  auto totals = (*store)->QueryBilling(q);
  if (!totals.ok()) return Fail(totals.status());
  auto rule = cost::ParseShareRule(a.share);
  if (!rule.ok()) return Fail(rule.status());
  auto lines = cost::ShareUntagged(std::move(*totals), *dims, *rule);
  if (!lines.ok()) return Fail(lines.status());
  const bool shared = *rule != cost::ShareRule::kNone;
  std::vector<std::string> names;
  for (BillingDim d : *dims) {
    for (const auto& [dim, name] : kBillingDims) {
      if (dim == d) names.emplace_back(name);
    }
  }
  if (json_output) {
    json rows = json::array();
    for (const cost::ShowbackLine& line : *lines) {
      const BillingTotal& t = line.total;
      json r = json::object();
      for (size_t i = 0; i < names.size(); ++i) r[names[i]] = t.keys[i];
      r["currency"] = t.currency;
      r["rows"] = t.rows;
      r["billed_cost"] = cost::PicosText(t.billed);
      r["effective_cost"] = cost::PicosText(t.effective);
      r["list_cost"] = cost::PicosText(t.list);
      r["contracted_cost"] = cost::PicosText(t.contracted);
      r["gpu_hours"] = cost::PicosText(t.gpu_hours);
      if (shared) {
        r["shared_cost"] = cost::PicosText(line.shared);
        r["total_effective_cost"] = cost::PicosText(t.effective + line.shared);
      }
      rows.push_back(std::move(r));
    }
    std::cout << json{{"by", names}, {"from_day", q.from_day}, {"to_day", q.to_day}, {"share", a.share}, {"rows", rows}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::vector<std::string> headers = names;
  for (const char* h : {"currency", "rows", "billed", "effective", "list", "gpu-hours"}) headers.emplace_back(h);
  if (shared) headers.insert(headers.end(), {"shared", "effective+shared"});
  if (a.format == "csv") {
    std::cout << [&] {
      std::string line;
      for (const auto& h : headers) line += (line.empty() ? "" : ",") + h;
      return line;
    }() << "\n";
  }
  Table table(headers);
  for (const cost::ShowbackLine& line : *lines) {
    const BillingTotal& t = line.total;
    std::vector<std::string> row;
    for (const auto& k : t.keys) row.push_back(k.empty() ? "(untagged)" : k);
    row.push_back(t.currency);
    row.push_back(std::to_string(t.rows));
    for (Picos v : {t.billed, t.effective, t.list, t.gpu_hours}) row.push_back(cost::PicosText(v));
    if (shared) {
      row.push_back(cost::PicosText(line.shared));
      row.push_back(cost::PicosText(t.effective + line.shared));
    }
    if (a.format == "csv") {
      std::string line;
      for (const auto& c : row) line += (line.empty() ? "" : ",") + c;
      std::cout << line << "\n";
    } else {
      table.Add(std::move(row));
    }
  }
  if (a.format != "csv") table.Print(std::cout);
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
  showback->add_option("--by", sb.by, "comma-separated: team, owner, project, job, provider, provider-name, day, "
                                       "month, service-category, charge-category, pricing-category, resource, "
                                       "sub-account, region")
      ->capture_default_str();
  showback->add_option("--period", sb.period, "YYYY-MM, YYYY-MM-DD or FROM..TO (end exclusive); default: all");
  showback->add_option("--provider", sb.provider, "only this provider's bills");
  showback->add_option("--share", sb.share,
                       "untagged effective cost (unused commitments, shared storage): none (its own line), "
                       "proportional or even across the groups; with --by team, owner, project or job")
      ->capture_default_str();
  showback->add_option("--format", sb.format, "table or csv")->check(CLI::IsMember({"table", "csv"}))->capture_default_str();
  where.AddTo(showback);
  showback->callback([state, &json_output, &rc, &where, &sb] { rc = Showback(where, sb, json_output); });
}

}  // namespace causeway::cli
