#include "cli/audit_commands.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>

#include "audit/importers.h"

namespace causeway::cli {

void AddAuditImport(CLI::App& audit, const Globals& g, int& rc) {
  struct State {
    std::string file, source, provider, out = "-";
    bool strict = false;
  };
  auto st = std::make_shared<State>();
  auto* import = audit.add_subcommand(
      "import", "normalize a provider's audit log (k8s, cloudtrail, gcp, azure, okta, slurm; plain or gzip) to OCSF JSON lines");
  import->add_option("FILE", st->file, "the log: JSON lines, a JSON array, or one object holding the records (Records, records, jobs)")->required();
  import->add_option("--source", st->source, "k8s, cloudtrail, gcp, azure, okta or slurm")->required();
  import->add_option("--provider", st->provider, "the estate's provider the log is from")->required();
  import->add_option("-o,--out", st->out, "where the OCSF events go, one per line (default: standard output)");
  import->add_flag("--strict", st->strict, "exit 3 when any record could not be read");
  import->callback([&g, &rc, st] {
    auto source = audit::ParseLogSource(st->source);
    if (!source.ok()) {
      rc = Fail(source.status());
      return;
    }
    std::FILE* out = st->out == "-" ? stdout : std::fopen(st->out.c_str(), "wb");
    if (!out) {
      rc = Fail(InvalidArgument("cannot write " + st->out));
      return;
    }
    std::vector<char> buffer(1 << 20);
    std::setvbuf(out, buffer.data(), _IOFBF, buffer.size());
    auto start = std::chrono::steady_clock::now();
    auto stats = audit::ImportLog(st->file, audit::ImportOptions{st->provider, *source},
                                  [out](std::string_view, std::string_view event) {
                                    std::fwrite(event.data(), 1, event.size(), out);
                                    std::fputc('\n', out);
                                  });
    if (out != stdout) std::fclose(out);
    else std::fflush(out);
    if (!stats.ok()) {
      rc = Fail(stats.status());
      return;
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    // The report goes to stderr: stdout may be the events themselves.
    std::FILE* report = stderr;
    if (g.json_output) {
      nlohmann::json issues = nlohmann::json::array();
      for (const auto& i : stats->issues) issues.push_back({{"file", i.file}, {"line", i.line}, {"reason", i.reason}});
      nlohmann::json j = {{"records", stats->records}, {"events", stats->events}, {"skipped", stats->skipped},
                          {"duplicates", stats->duplicates}, {"issues", stats->issues_total}, {"seconds", secs},
                          {"first_issues", issues}};
      std::fprintf(report, "%s\n", j.dump().c_str());
    } else {
      std::fprintf(report, "%lld records: %lld events, %lld earlier stages skipped, %lld duplicates, %lld unreadable (%.2f s)\n",
                   static_cast<long long>(stats->records), static_cast<long long>(stats->events),
                   static_cast<long long>(stats->skipped), static_cast<long long>(stats->duplicates),
                   static_cast<long long>(stats->issues_total), secs);
      for (const auto& i : stats->issues) {
        std::fprintf(report, "  %s:%lld: %s\n", i.file.c_str(), static_cast<long long>(i.line), i.reason.c_str());
      }
      if (stats->issues_total > static_cast<int64_t>(stats->issues.size())) {
        std::fprintf(report, "  (and %lld more)\n",
                     static_cast<long long>(stats->issues_total - static_cast<int64_t>(stats->issues.size())));
      }
    }
    rc = st->strict && stats->issues_total > 0 ? kExitInvalid : kExitOk;
  });
}

}  // namespace causeway::cli
