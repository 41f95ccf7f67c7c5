#include "providers/slurm/slurm_cli.h"
#include "causeway/json_input.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "causeway/subprocess.h"
#include "causeway/text.h"

namespace causeway::slurm {
namespace {

bool Contains(const std::string& s, std::string_view what) { return s.find(what) != std::string::npos; }

std::string FirstLine(const std::string& s) {
  std::string line = s.substr(0, s.find('\n'));
  return line.size() > 300 ? line.substr(0, 300) : line;
}

bool IsShellName(const std::string& k) {
  if (k.empty() || std::isdigit(static_cast<unsigned char>(k[0]))) return false;
  for (char c : k) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

}  // namespace

SlurmCli::SlurmCli(std::string conf, std::chrono::milliseconds timeout) : conf_(std::move(conf)), timeout_(timeout) {}

Result<std::string> SlurmCli::Tool(std::vector<std::string> argv, const std::string& input) {
  // A minimal environment: the tools need PATH and the cluster's config,
  // never SLURM_JWT (they would switch from munge to JWT) nor Causeway's
  // own settings. Epoch seconds make sacct's times unambiguous.
  const char* path = std::getenv("PATH");
  std::map<std::string, std::string> env = {{"PATH", path ? path : "/usr/local/bin:/usr/bin:/bin"},
                                            {"SLURM_TIME_FORMAT", "%s"}, {"TZ", "UTC"}};
  if (!conf_.empty()) {
    // The tools wait a minute for a missing file to appear; say so at once.
    if (::access(conf_.c_str(), R_OK) != 0) {
      return FailedPrecondition(Describe() + ": cannot read " + conf_ + ": " + std::strerror(errno));
    }
    env["SLURM_CONF"] = conf_;
  }
  const std::string tool = argv[0];
  auto run = RunProcess(argv, env, input, timeout_);
  if (!run.ok()) {
    if (run.status().code() == Code::kDeadlineExceeded) return run.status().WithPrefix(Describe());
    return run.status();
  }
  const std::string& err = run->err;
  if (run->exit_code == 0 && !Contains(err, "error:")) return std::move(run->out);
  std::string what = Describe() + ": " + tool + " failed: " + FirstLine(err.empty() ? run->out : err);
  if (Contains(err, "Invalid job id")) return NotFound(what);
  if (Contains(err, "Unable to contact slurm controller") || Contains(err, "Socket timed out") ||
      Contains(err, "Connection refused") || Contains(err, "Zero Bytes were transmitted") ||
      Contains(err, "Unable to establish") || Contains(err, "Slurm backup controller in standby mode")) {
    return Unavailable(what);
  }
  if (Contains(err, "Authentication") || Contains(err, "Invalid user") || Contains(err, "munge")) {
    return Unauthenticated(what);
  }
  return FailedPrecondition(what);
}

namespace {
// sacctmgr exits 1 when there was nothing to do; that is success here.
Status Idempotent(const Result<std::string>& r, std::string_view nothing) {
  if (r.ok() || Contains(r.status().message(), nothing)) return Status::Ok();
  return r.status();
}
// Account and user names sacctmgr takes: no spaces, quotes or '=' that
// would change the command's meaning.
Status CheckName(const std::string& name) {
  if (name.empty() || name.size() > 64) return InvalidArgument("invalid Slurm name \"" + name + "\"");
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) {
      return InvalidArgument("invalid Slurm name \"" + name + "\": use letters, digits, '-', '_' or '.'");
    }
  }
  return Status::Ok();
}
}  // namespace

Status SlurmCli::EnsureUser(const std::string& user, const std::string& account) {
  RETURN_IF_ERROR(CheckName(user));
  RETURN_IF_ERROR(CheckName(account));
  RETURN_IF_ERROR(Idempotent(Tool({"sacctmgr", "-i", "add", "account", account, "Description=causeway team " + account,
                                   "Organization=causeway"}),
                             "Nothing new added"));
  return Idempotent(Tool({"sacctmgr", "-i", "add", "user", user, "Account=" + account}), "Nothing new added");
}

Status SlurmCli::RemoveUser(const std::string& user, const std::string& account) {
  RETURN_IF_ERROR(CheckName(user));
  std::vector<std::string> argv = {"sacctmgr", "-i", "delete", "user", "where", "name=" + user};
  if (!account.empty()) {
    RETURN_IF_ERROR(CheckName(account));
    argv.push_back("account=" + account);
  }
  return Idempotent(Tool(argv), "Nothing deleted");
}

Result<std::vector<std::string>> SlurmCli::UserAccounts(const std::string& user) {
  RETURN_IF_ERROR(CheckName(user));
  ASSIGN_OR_RETURN(std::string out,
                   Tool({"sacctmgr", "-n", "-P", "show", "assoc", "where", "user=" + user, "format=Account"}));
  std::vector<std::string> accounts;
  size_t start = 0;
  while (start < out.size()) {
    size_t nl = out.find('\n', start);
    if (nl == std::string::npos) nl = out.size();
    std::string line = out.substr(start, nl - start);
    if (!line.empty()) accounts.push_back(line);
    start = nl + 1;
  }
  return accounts;
}

Status SlurmCli::Ping() {
  ASSIGN_OR_RETURN(std::string out, Tool({"scontrol", "ping"}));
  if (Contains(out, "is UP")) return Status::Ok();
  return Unavailable(Describe() + ": " + FirstLine(out));
}

std::string SlurmCli::ScriptWithEnvironment(const SubmitRequest& r) {
  std::string script = r.script;
  size_t body = 0;
  std::string shebang = "#!/bin/bash\n";
  if (script.rfind("#!", 0) == 0) {
    body = script.find('\n');
    body = body == std::string::npos ? script.size() : body + 1;
    shebang = script.substr(0, body);
  }
  std::string exports;
  for (const auto& [k, v] : r.environment) {
    if (IsShellName(k)) exports += "export " + k + "=" + ShellQuote(v) + "\n";
  }
  return shebang + exports + script.substr(body);
}

Result<int64_t> SlurmCli::Submit(const SubmitRequest& r) {
  std::vector<std::string> argv = {"sbatch", "--parsable", "--no-requeue", "--export=ALL",
                                   "--job-name=" + r.name, "--nodes=" + std::to_string(r.nodes),
                                   "--chdir=" + r.working_directory, "--output=" + r.output, "--error=" + r.output};
  if (!r.partition.empty()) argv.push_back("--partition=" + r.partition);
  if (!r.gres.empty()) argv.push_back("--gres=" + r.gres);
  if (r.time_limit_minutes) argv.push_back("--time=" + std::to_string(*r.time_limit_minutes));
  if (r.cpus_per_task) argv.push_back("--cpus-per-task=" + std::to_string(*r.cpus_per_task));
  if (r.memory_mb) argv.push_back("--mem=" + std::to_string(*r.memory_mb) + "M");
  ASSIGN_OR_RETURN(std::string out, Tool(argv, ScriptWithEnvironment(r)));
  // "ID" or "ID;CLUSTER"
  auto id = ParseInt(Split(FirstLine(out), ';')[0]);
  if (!id) return Unavailable(Describe() + ": sbatch printed no job id: " + FirstLine(out));
  return *id;
}

Result<std::vector<JobInfo>> SlurmCli::ListJobs() {
  ASSIGN_OR_RETURN(std::string out, Tool({"squeue", "--json", "--states=all"}));
  nlohmann::json j = ParseUntrustedJson(out, "squeue output").value_or(nlohmann::json::value_t::discarded);
  if (j.is_discarded()) return Unavailable(Describe() + ": squeue --json printed something that is not JSON");
  RETURN_IF_ERROR(SlurmErrors(j));
  std::vector<JobInfo> jobs;
  for (const auto& job : JsonArray(j, "jobs")) jobs.push_back(ParseJob(job));
  return jobs;
}

Status SlurmCli::Cancel(int64_t id) {
  // Without -v, scancel says nothing about a job it does not know.
  ASSIGN_OR_RETURN(std::string out, Tool({"scancel", "-v", std::to_string(id)}));
  (void)out;
  return Status::Ok();
}

Result<std::vector<JobInfo>> SlurmCli::ParseSacct(const std::string& out) {
  std::vector<JobInfo> jobs;
  int line_no = 0;
  for (const std::string& line : Split(out, '\n')) {
    ++line_no;
    if (line.empty()) continue;
    auto f = Split(line, '|');
    if (f.size() != 7) {
      return Unavailable("sacct output line " + std::to_string(line_no) + ": expected 7 fields separated by |, found " +
                         std::to_string(f.size()));
    }
    JobInfo info;
    auto id = ParseInt(f[0]);
    if (!id) return Unavailable("sacct output line " + std::to_string(line_no) + ": JobIDRaw is not a number");
    info.id = *id;
    info.name = f[1];
    // "CANCELLED by 0" -> CANCELLED
    info.state = f[2].substr(0, f[2].find(' '));
    // ExitCode is "code:signal".
    auto exit = Split(f[3], ':');
    if (exit.size() == 2 && ParseInt(exit[0]) && ParseInt(exit[1])) {
      info.exit_code = static_cast<int>(*ParseInt(exit[0]));
      info.signal = static_cast<int>(*ParseInt(exit[1]));
    }
    // Epoch seconds (SLURM_TIME_FORMAT=%s), or "Unknown" before it starts.
    if (auto t = ParseInt(f[4]); t && *t > 0) info.start = FromUnixMicros(*t * 1'000'000);
    if (auto t = ParseInt(f[5]); t && *t > 0) info.end = FromUnixMicros(*t * 1'000'000);
    for (const std::string& tres : Split(f[6], ',')) {
      if (tres.rfind("gres/gpu=", 0) != 0) continue;
      if (auto n = ParseInt(std::string_view(tres).substr(9))) info.gpus = static_cast<int>(*n);
    }
    jobs.push_back(std::move(info));
  }
  return jobs;
}

Result<std::vector<JobInfo>> SlurmCli::Accounting(const std::vector<int64_t>& ids) {
  if (ids.empty()) return std::vector<JobInfo>{};
  std::string list;
  for (int64_t id : ids) list += (list.empty() ? "" : ",") + std::to_string(id);
  // JSON from sacct 22.05 reports every exit code as 0, so the parsable
  // text form is read instead.
  ASSIGN_OR_RETURN(std::string out, Tool({"sacct", "-P", "-n", "-X", "-D", "-o",
                                          "JobIDRaw,JobName,State,ExitCode,Start,End,AllocTRES", "-j", list}));
  return ParseSacct(out);
}

}  // namespace causeway::slurm
