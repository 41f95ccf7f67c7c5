#include "cli/audit_commands.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string_view>
#include <vector>

#include "audit/importers.h"
#include "causeway/clock.h"
#include "causeway/store.h"
#include "cli/bulk_file.h"
#include "cli/local_db.h"
#include "cli/table.h"
#include "service/audit_service.h"
#include "service/export_service.h"
#include "store/commit_queue.h"

namespace causeway::cli {

using nlohmann::json;

namespace {

struct ImportArgs {
  std::string file, source, provider, out;
  bool strict = false;
  DbChoice where;
};

void PrintImportReport(const json& j, bool json_output) {
  if (json_output) {
    std::cerr << j.dump() << "\n";  // stdout may be the events themselves
    return;
  }
  std::fprintf(stderr, "%lld records: %lld events, %lld earlier stages skipped, %lld duplicates, %lld conflicts, %lld unreadable",
               static_cast<long long>(j.value("records", int64_t{0})), static_cast<long long>(j.value("events", int64_t{0})),
               static_cast<long long>(j.value("skipped", int64_t{0})), static_cast<long long>(j.value("duplicates", int64_t{0})),
               static_cast<long long>(j.value("conflicts", int64_t{0})),
               static_cast<long long>(j.value("issues", int64_t{0}) - j.value("conflicts", int64_t{0})));
  if (j.contains("stored")) {
    std::fprintf(stderr, "; %lld stored, %lld stored before", static_cast<long long>(j.value("stored", int64_t{0})),
                 static_cast<long long>(j.value("already_stored", int64_t{0})));
  }
  if (j.contains("seconds")) std::fprintf(stderr, " (%.2f s)", j.value("seconds", 0.0));
  std::fprintf(stderr, "\n");
  for (const json& i : j.value("first_issues", json::array())) {
    std::fprintf(stderr, "  %s:%lld: %s\n", i.value("file", "").c_str(), static_cast<long long>(i.value("line", int64_t{0})),
                 i.value("reason", "").c_str());
  }
  int64_t shown = static_cast<int64_t>(j.value("first_issues", json::array()).size());
  if (j.value("issues", int64_t{0}) > shown) {
    std::fprintf(stderr, "  (and %lld more)\n", static_cast<long long>(j.value("issues", int64_t{0}) - shown));
  }
}

// A JSON-lines log is sent to the server in parts of whole lines of at
// most this many bytes (a longer line on its own), each part an import of
// its own: a cluster's audit log outgrows one request body (--body-limit,
// 1 MiB by default) within hours.
constexpr size_t kPartBytes = 512 << 10;

// Where `data` may be cut into parts: after each line, for a plain (not
// gzip) file whose first line is a whole JSON value (JSON lines, not one
// document across lines). One part otherwise, or when it is small.
std::vector<std::string_view> PartsOf(const std::string& data) {
  std::vector<std::string_view> parts;
  const bool gzip = data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
                    static_cast<unsigned char>(data[1]) == 0x8b;
  const size_t first_end = std::min(data.find('\n'), data.size());
  if (data.size() <= kPartBytes || gzip || !json::accept(data.begin(), data.begin() + static_cast<std::ptrdiff_t>(first_end))) {
    parts.emplace_back(data);
    return parts;
  }
  size_t from = 0;
  while (from < data.size()) {
    size_t to = data.size();
    if (data.size() - from > kPartBytes) {
      size_t nl = data.rfind('\n', from + kPartBytes - 1);
      if (nl == std::string::npos || nl < from) nl = data.find('\n', from + kPartBytes);  // a longer line, alone
      if (nl != std::string::npos) to = nl + 1;
    }
    parts.emplace_back(data.data() + from, to - from);
    from = to;
  }
  return parts;
}

// The reports of a log's parts as one: counts summed, and each issue at
// its line in the whole file (`lines_before` each part).
void AddPartReport(json& total, const json& part, int64_t lines_before) {
  for (const char* key : {"records", "events", "stored", "already_stored", "duplicates", "conflicts", "skipped", "issues"}) {
    if (part.contains(key)) total[key] = total.value(key, int64_t{0}) + part.value(key, int64_t{0});
  }
  if (!total.contains("first_issues")) total["first_issues"] = json::array();
  for (json issue : part.value("first_issues", json::array())) {
    if (total["first_issues"].size() >= 1000) break;
    issue["line"] = issue.value("line", int64_t{0}) + lines_before;
    total["first_issues"].push_back(std::move(issue));
  }
}

json StatsJson(const audit::ImportStats& stats, const std::string& file) {
  json issues = json::array();
  for (const auto& i : stats.issues) issues.push_back({{"file", file}, {"line", i.line}, {"reason", i.reason}});
  return {{"records", stats.records}, {"events", stats.events}, {"skipped", stats.skipped},
          {"duplicates", stats.duplicates}, {"conflicts", stats.conflicts}, {"issues", stats.issues_total},
          {"first_issues", issues}};
}

// Normalizes to OCSF JSON lines in a file (or standard output); stores nothing.
Result<json> ImportToFile(const ImportArgs& a, audit::LogSource source) {
  auto start = std::chrono::steady_clock::now();
  Result<audit::ImportStats> stats = audit::ImportStats{};
  if (a.out == "-") {
    std::vector<char> buffer(1 << 20);
    std::setvbuf(stdout, buffer.data(), _IOFBF, buffer.size());
    stats = audit::ImportLog(a.file, audit::ImportOptions{a.provider, source}, [](std::string_view, std::string_view event) {
      std::fwrite(event.data(), 1, event.size(), stdout);
      std::fputc('\n', stdout);
    });
    if (std::fflush(stdout) != 0) return Unavailable("cannot write to standard output");
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
  } else {
    ASSIGN_OR_RETURN(auto out, BulkFile::Create(a.out));
    stats = audit::ImportLog(a.file, audit::ImportOptions{a.provider, source}, [&out](std::string_view, std::string_view event) {
      out->Write(event);
      out->Write("\n");
    });
    RETURN_IF_ERROR(out->Close());
  }
  if (!stats.ok()) return stats.status();
  json j = StatsJson(*stats, a.file);
  j["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return j;
}

// Stores the events in the database directly: for files larger than the
// API takes in one request.
Result<json> ImportToDb(const ImportArgs& a, audit::LogSource source) {
  ASSIGN_OR_RETURN(std::string db, a.where.ForLoading());
  ASSIGN_OR_RETURN(auto store, OpenStore(db));
  CommitQueue queue(*store, CommitQueue::Options{});
  RealClock clock;
  AuditService service(*store, queue, clock);
  std::string label = std::filesystem::path(a.file).filename().string();
  ASSIGN_OR_RETURN(auto report, service.Import(a.file, audit::ImportOptions{a.provider, source}, label, LocalActor()));
  json j = StatsJson(report.stats, a.file);
  j["stored"] = report.stored;
  j["already_stored"] = report.already;
  return j;
}

std::string TimeOf(const json& ev) {
  int64_t ms = ev.value("time", int64_t{0});
  return FormatRfc3339(FromUnixMicros(ms * 1000)).substr(0, 19) + "Z";
}

std::string ProviderOf(const json& ev) {
  return ev.contains("cloud") ? ev["cloud"].value("provider", "") : "";
}

std::string ActorOf(const json& ev) {
  if (!ev.contains("actor") || !ev["actor"].contains("user")) return "";
  const json& u = ev["actor"]["user"];
  std::string name = Str(u, "name");
  return name.empty() ? Str(u, "uid") : name;
}

std::string ResourceOf(const json& ev) {
  if (!ev.contains("resources") || ev["resources"].empty()) return "";
  const json& r = ev["resources"][0];
  std::string uid = Str(r, "uid");
  return uid.empty() ? Str(r, "name") : uid;
}

void PrintEvents(const json& events) {
  Table t({"time", "provider", "actor", "operation", "resource", "status"});
  for (const json& ev : events) {
    std::string op = ev.contains("api") ? Str(ev["api"], "operation") : "";
    if (op.empty()) op = Str(ev, "message");
    int status = ev.value("status_id", 0);
    t.Add({TimeOf(ev), ProviderOf(ev), ActorOf(ev), op, ResourceOf(ev),
           status == 1 ? "success" : status == 2 ? "failure" : "unknown"});
  }
  t.Print(std::cout);
}

std::atomic<bool> export_stop{false};
void StopExport(int) { export_stop = true; }

// The trail as the server hands it over (GET /v1/audit/feed), under the
// caller's token: export reads through the API like every other command.
class ApiAuditFeed final : public AuditFeed {
 public:
  explicit ApiAuditFeed(Api& api) : api_(api) {}
  Result<Batch> Own(int64_t after, int limit) override { return Page("own", after, limit); }
  Result<Batch> Imported(int64_t after, int limit) override { return Page("imported", after, limit); }
  // The exit code of the last failed page (its error already printed).
  int exit_code() const { return exit_code_; }

 private:
  Result<Batch> Page(const char* source, int64_t after, int limit) {
    auto res = api_.Raw("GET",
                        "/v1/audit/feed" + QueryString({{"source", source},
                                                        {"after", std::to_string(after)},
                                                        {"limit", std::to_string(limit)}}),
                        "", exit_code_);
    if (!res) return Unavailable("the server did not hand over the trail");
    Batch b{{}, after};
    auto last = res->headers.find("x-causeway-last");
    if (last == res->headers.end()) return Internal("the server's answer says not where the page ends");
    try {
      b.last = std::stoll(last->second);
    } catch (const std::exception&) {
      return Internal("the server's answer says not where the page ends");
    }
    std::string_view body = res->body;
    while (!body.empty()) {
      size_t nl = body.find('\n');
      std::string_view line = body.substr(0, nl);
      if (!line.empty()) b.events.emplace_back(line);
      body = nl == std::string_view::npos ? std::string_view() : body.substr(nl + 1);
    }
    return b;
  }

  Api& api_;
  int exit_code_ = kExitOk;
};

struct ExportArgs {
  audit::SinkOptions sink;
  std::string cursor, token_file;
  ExportOptions options;
  int max_attempts = -1;  // -1: 5 for one pass, unbounded with --follow
};

int RunExport(const ExportArgs& a, Api& api, bool json_output) {
  ExportArgs args = a;
  if (!args.token_file.empty()) {
    auto token = ReadTokenFile(args.token_file);
    if (!token.ok()) return Fail(token.status());
    args.sink.bearer_token = *token;
  } else if (const char* env = std::getenv("CAUSEWAY_SIEM_TOKEN"); env && *env) {
    args.sink.bearer_token = env;
  }
  args.options.max_attempts = args.max_attempts >= 0 ? args.max_attempts : (args.options.follow ? 0 : 5);
  auto sink = audit::OpenSink(args.sink);
  if (!sink.ok()) return Fail(sink.status());
  ApiAuditFeed feed(api);
  std::signal(SIGINT, StopExport);
  std::signal(SIGTERM, StopExport);
  auto stats = ExportAudit(feed, **sink, args.cursor, args.options, export_stop, [&](const Status& st) {
    std::cerr << "retrying: " << st.message() << "\n";
  });
  if (!stats.ok()) {
    std::cerr << "export to " << (*sink)->Describe() << " stopped; the cursor in " << args.cursor
              << " is where it was, and the next run sends from there\n";
    // A page the server refused was reported as it came; its exit code stands.
    return feed.exit_code() != kExitOk ? feed.exit_code() : Fail(stats.status());
  }
  json j = {{"own_events", stats->own}, {"imported_events", stats->imported}, {"batches", stats->batches},
            {"retries", stats->retries}, {"cursor", {{"seq", stats->cursor.seq}, {"imported_id", stats->cursor.imported_id}}}};
  if (json_output) {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << "exported " << stats->own << " Causeway events and " << stats->imported << " imported events to "
              << (*sink)->Describe() << " in " << stats->batches << " batches (" << stats->retries
              << " retries); cursor at seq " << stats->cursor.seq << ", imported " << stats->cursor.imported_id << "\n";
  }
  return kExitOk;
}

// audit import: a provider's log as OCSF, through the server, into a database, or to a file.
void AddImport(CLI::App& audit, const Globals& g, Api& api, int& rc) {
  auto a = std::make_shared<ImportArgs>();
  auto* import = audit.add_subcommand(
      "import", "import a provider's audit log (k8s, cloudtrail, gcp, azure, okta, slurm; plain or gzip) as OCSF events");
  import->add_option("FILE", a->file, "the log: JSON lines, a JSON array, or one object holding the records")->required();
  import->add_option("--source", a->source, "k8s, cloudtrail, gcp, azure, okta or slurm")->required();
  import->add_option("--provider", a->provider, "the estate's provider the log is from")->required();
  import->add_option("-o,--out", a->out, "write the OCSF events to this file, one per line (- for standard output), and store nothing");
  import->add_flag("--strict", a->strict, "exit 3 (not 9) when any record could not be read");
  a->where.AddTo(import);
  import->callback([&g, &api, &rc, a] {
    auto source = audit::ParseLogSource(a->source);
    if (!source.ok()) {
      rc = Fail(source.status());
      return;
    }
    Result<json> report = json();
    if (!a->out.empty()) {
      report = ImportToFile(*a, *source);
    } else if (a->where.given()) {  // explicitly; CAUSEWAY_DB alone never skips the server
      report = ImportToDb(*a, *source);
    } else {
      // Through the server: the file is the request body, or for JSON
      // lines, the bodies of its parts (PartsOf).
      auto data = ReadFile(a->file);
      if (!data.ok()) {
        rc = Fail(data.status());
        return;
      }
      std::string label = std::filesystem::path(a->file).filename().string();
      json total = json::object();
      int64_t lines_before = 0;
      for (std::string_view part : PartsOf(*data)) {
        auto j = api.Call("POST", "/v1/audit/imports" + QueryString({{"source", a->source}, {"provider", a->provider},
                                                                      {"name", label}}),
                          std::string(part), rc, {{"Content-Type", "application/octet-stream"}});
        if (!j) return;  // what was sent before stays imported: a second run stores only the rest
        AddPartReport(total, *j, lines_before);
        lines_before += static_cast<int64_t>(std::count(part.begin(), part.end(), '\n'));
      }
      report = std::move(total);
    }
    if (!report.ok()) {
      rc = Fail(report.status());
      return;
    }
    PrintImportReport(*report, g.json_output);
    // Refused records never pass unnoticed: 9 (the rest is imported), or
    // 3 under --strict.
    bool refused = report->value("issues", int64_t{0}) > 0;
    rc = !refused ? kExitOk : a->strict ? kExitInvalid : kExitPartial;
  });
}

// audit search and audit person: the trail across providers, and one person's part in it.
void AddSearch(CLI::App& audit, const Globals& g, Api& api, int& rc) {
  struct SearchArgs {
    std::string actor, provider, action, since, until, cursor, limit;
    bool newest = false;
  };
  auto s = std::make_shared<SearchArgs>();
  auto* search = audit.add_subcommand("search", "search the trail across providers: Causeway's events and imported ones");
  search->add_option("--actor", s->actor, "a person (userName or email) or an identity at a provider");
  search->add_option("--provider", s->provider, "a provider, or causeway for Causeway's own events");
  search->add_option("--action", s->action, "create, read, update, delete, start, logon, ... or an operation name");
  search->add_option("--since", s->since, "a duration (30d) or a timestamp");
  search->add_option("--until", s->until, "a duration (1d) or a timestamp");
  search->add_option("--limit", s->limit, "page size, 1-1000 (default 100)");
  search->add_option("--cursor", s->cursor, "continue from a previous page");
  search->add_flag("--newest", s->newest, "newest first (default: oldest first)");
  search->callback([&g, &api, &rc, s] {
    auto j = api.Call("GET", "/v1/audit/search" + QueryString({{"actor", s->actor}, {"provider", s->provider},
                                                               {"action", s->action}, {"since", s->since},
                                                               {"until", s->until}, {"limit", s->limit},
                                                               {"cursor", s->cursor},
                                                               {"order", s->newest ? "newest" : ""}}),
                      "", rc);
    if (!j) return;
    if (g.json_output) {
      std::cout << j->dump(2) << "\n";
      return;
    }
    PrintEvents((*j)["events"]);
    if (!(*j)["next_cursor"].is_null()) std::cout << "more: --cursor " << Str(*j, "next_cursor") << "\n";
  });

  auto who = std::make_shared<std::pair<std::string, std::string>>();
  auto* person = audit.add_subcommand("person", "everything a person did or could do, across providers");
  person->add_option("PERSON", who->first, "userName, email, or a linked identity")->required();
  person->add_option("--since", who->second, "a duration (90d) or a timestamp");
  person->callback([&g, &api, &rc, who] {
    auto j = api.Call("GET", "/v1/audit/people/" + net::UrlEncode(who->first) + QueryString({{"since", who->second}}),
                      "", rc);
    if (!j) return;
    if (g.json_output) {
      std::cout << j->dump(2) << "\n";
      return;
    }
    const json& p = (*j)["person"];
    std::cout << Str(p, "userName") << (p.value("active", true) ? "" : " (deactivated)") << "\n";
    if (p.value("unlinked", false)) {
      std::cout << "an identity at a provider that no person is linked to (causeway audit link PROVIDER IDENTITY "
                   "PERSON); its own events follow\n";
    }
    std::cout << "groups:      " << (p.contains("groups") ? p["groups"].dump() : "[]") << "\n";
    std::cout << "known as:    " << (*j)["identities"].dump() << "\n";
    std::cout << "could do:\n";
    for (const json& gr : (*j)["grants"]) {
      std::cout << "  " << Str(gr, "role") << " of " << (gr["team"].is_null() ? "every team" : Str(gr, "team"))
                << " (through " << Str(gr, "group") << ")\n";
    }
    if ((*j)["grants"].empty()) std::cout << "  nothing in Causeway\n";
    std::cout << "credentials: " << (*j)["credentials"].size() << "\n";
    std::cout << "events by provider: " << (*j)["events_by_provider"].dump() << "\n";
    PrintEvents((*j)["events"]);
  });
}

// audit link, links and unlink: a person's identities at the providers.
void AddLinks(CLI::App& audit, const Globals& g, Api& api, int& rc) {
  auto l = std::make_shared<std::array<std::string, 3>>();
  auto* link = audit.add_subcommand("link", "link an identity at a provider (an ARN, POSIX user, email) to a person");
  link->add_option("PROVIDER", (*l)[0], "the provider, or * for every provider")->required();
  link->add_option("IDENTITY", (*l)[1], "the identity there")->required();
  link->add_option("PERSON", (*l)[2], "the directory's userName")->required();
  link->callback([&g, &api, &rc, l] {
    json body = {{"provider", (*l)[0]}, {"identity", (*l)[1]}, {"person", (*l)[2]}};
    auto j = api.Call("POST", "/v1/audit/links", body.dump(), rc, {{"Content-Type", "application/json"}});
    if (!j) return;
    if (g.json_output) {
      std::cout << j->dump(2) << "\n";
      return;
    }
    std::cout << "linked " << Str((*j)["link"], "identity") << " at " << Str((*j)["link"], "provider") << " to "
              << Str((*j)["link"], "person") << " (" << Str((*j)["link"], "id") << ")\n";
  });
  auto* links = audit.add_subcommand("links", "list identity links");
  links->callback([&g, &api, &rc] {
    auto j = api.Call("GET", "/v1/audit/links", "", rc);
    if (!j) return;
    if (g.json_output) {
      std::cout << j->dump(2) << "\n";
      return;
    }
    Table t({"id", "provider", "identity", "person"});
    for (const json& x : (*j)["links"]) t.Add({Str(x, "id"), Str(x, "provider"), Str(x, "identity"), Str(x, "person")});
    t.Print(std::cout);
  });
  auto unlink_id = std::make_shared<std::string>();
  auto* unlink = audit.add_subcommand("unlink", "remove an identity link");
  unlink->add_option("ID", *unlink_id, "the link's id")->required();
  unlink->callback([&g, &api, &rc, unlink_id] {
    auto j = api.Call("DELETE", "/v1/audit/links/" + net::UrlEncode(*unlink_id), "", rc);
    if (!j) return;
    if (g.json_output) std::cout << j->dump(2) << "\n";
    else std::cout << "removed " << *unlink_id << "\n";
  });
}

// audit checkpoint, keys and coverage: the chain signed, its keys, and what the trail misses.
void AddChainCommands(CLI::App& audit, const Globals& g, Api& api, int& rc) {
  auto* checkpoint = audit.add_subcommand("checkpoint", "sign the audit chain's head now (the server also does every few minutes)");
  checkpoint->callback([&g, &api, &rc] {
    auto j = api.Call("POST", "/v1/audit/checkpoints", "{}", rc, {{"Content-Type", "application/json"}});
    if (!j) return;
    if (g.json_output) {
      std::cout << j->dump(2) << "\n";
    } else if ((*j)["checkpoint"].is_null()) {
      std::cout << "nothing new since the last checkpoint\n";
    } else {
      const json& c = (*j)["checkpoint"];
      std::cout << "signed seq " << Str(c, "signed_seq") << " (hash " << Str(c, "hash").substr(0, 16) << "...) with key "
                << Str(c, "kid") << "; the checkpoint is event " << Str(c, "seq") << "\n";
    }
  });
  auto* keys = audit.add_subcommand("keys", "print the public keys (JWKS) that verify the audit checkpoints");
  keys->callback([&api, &rc] {
    auto j = api.Call("GET", "/v1/audit/keys", "", rc);
    if (j) std::cout << j->dump(2) << "\n";
  });

  auto fail_on_findings = std::make_shared<bool>(false);
  auto* coverage = audit.add_subcommand(
      "coverage", "what the trail does not cover: dark buckets, log sources not imported lately, short retention");
  coverage->add_flag("--fail-on-findings", *fail_on_findings, "exit 1 when there is any finding");
  coverage->callback([&g, &api, &rc, fail_on_findings] {
    auto j = api.Call("GET", "/v1/audit/coverage", "", rc);
    if (!j) return;
    if (g.json_output) {
      std::cout << j->dump(2) << "\n";
    } else {
      Table buckets({"provider", "bucket", "state", "holds"});
      for (const json& b : (*j)["buckets"]) buckets.Add({Str(b, "provider"), Str(b, "name"), Str(b, "state"), Str(b, "holds")});
      buckets.Print(std::cout);
      std::cout << "\n";
      Table sources({"provider", "source", "state", "events", "last import"});
      for (const json& s : (*j)["log_sources"]) {
        sources.Add({Str(s, "provider"), Str(s, "source"), Str(s, "state"), Str(s, "events"), Str(s, "last_import")});
      }
      sources.Print(std::cout);
      std::cout << "\n" << (*j)["findings"].size() << " findings\n";
      for (const json& f : (*j)["findings"]) {
        std::cout << "  " << Str(f, "kind") << "  " << Str(f, "provider") << "/" << Str(f, "name") << ": " << Str(f, "detail")
                  << "\n";
      }
    }
    if (*fail_on_findings && !(*j)["findings"].empty()) rc = kExitFailure;
  });
}

// audit export: the trail to a SIEM.
void AddExport(CLI::App& audit, const Globals& g, Api& api, int& rc) {
  auto ex = std::make_shared<ExportArgs>();
  auto* exp = audit.add_subcommand("export", "send the trail (OCSF) to a SIEM over HTTP, to syslog, or to rotated files");
  exp->add_option("--to", ex->sink.url, "http(s)://COLLECTOR, tcp://HOST:PORT or tls://HOST:PORT (syslog, RFC 5424), or file:PATH")
      ->required();
  exp->add_option("--cursor", ex->cursor, "file recording how far delivery got (made on first use)")->required();
  exp->add_flag("--follow,-f", ex->options.follow, "keep exporting new events until interrupted");
  exp->add_option("--batch", ex->options.batch, "events per request, 1-10000")->capture_default_str();
  exp->add_option("--max-attempts", ex->max_attempts, "tries per batch before giving up (default 5; with --follow, unlimited)");
  exp->add_option("--retry-min-ms", ex->options.retry_min, "first wait before a retry (doubles up to 30 s)");
  exp->add_option("--token-file", ex->token_file, "the collector's bearer token (or env CAUSEWAY_SIEM_TOKEN)");
  exp->add_option("--ca", ex->sink.ca_file, "TLS: also trust this CA certificate (PEM)");
  exp->add_option("--rotate-bytes", ex->sink.rotate_bytes, "file: start a new file past this size")->capture_default_str();
  exp->add_option("--keep", ex->sink.keep, "file: rotated files kept")->capture_default_str();
  exp->callback([&g, &api, &rc, ex] { rc = RunExport(*ex, api, g.json_output); });
}

}  // namespace

void AddAuditCommands(CLI::App& audit, const Globals& g, Api& api, int& rc) {
  AddImport(audit, g, api, rc);
  AddSearch(audit, g, api, rc);
  AddLinks(audit, g, api, rc);
  AddChainCommands(audit, g, api, rc);
  AddExport(audit, g, api, rc);
}

}  // namespace causeway::cli
