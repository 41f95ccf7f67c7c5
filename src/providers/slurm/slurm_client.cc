#include "providers/slurm/slurm_client.h"
#include "causeway/json_input.h"

#include <cstdlib>

#include "causeway/job_spec.h"
#include "causeway/subprocess.h"
#include "causeway/text.h"

extern char** environ;

namespace causeway::slurm {

SlurmClient::SlurmClient(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}

namespace {

std::map<std::string, std::string> OwnEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string_view::npos) env[std::string(kv.substr(0, eq))] = std::string(kv.substr(eq + 1));
  }
  return env;
}

}  // namespace

Result<std::string> SlurmClient::Token(bool refresh) {
  if (endpoint_.token_command.empty()) {
    ASSIGN_OR_RETURN(std::string token, ReadFile(endpoint_.token_file));
    return Trim(token);
  }
  auto now = std::chrono::steady_clock::now();
  if (!refresh && !cached_token_.empty() && now - token_at_ < endpoint_.token_refresh) return cached_token_;
  auto run = RunProcess({"/bin/sh", "-c", endpoint_.token_command}, OwnEnvironment(), "", endpoint_.timeout);
  if (!run.ok()) return run.status().WithPrefix("token command for " + endpoint_.url);
  if (run->exit_code != 0) {
    // Its stderr may say why; its stdout might hold a secret, so not that.
    return Unauthenticated("the token command for " + endpoint_.url + " exited " + std::to_string(run->exit_code) +
                           ": " + Trim(run->err.substr(0, 200)));
  }
  std::string token = Trim(run->out);
  if (token.rfind("SLURM_JWT=", 0) == 0) token = token.substr(10);
  if (token.empty()) return Unauthenticated("the token command for " + endpoint_.url + " printed no token");
  cached_token_ = token;
  token_at_ = now;
  return token;
}

Result<nlohmann::json> SlurmClient::Call(const std::string& method, const std::string& path, const std::string& body) {
  auto res = CallOnce(method, path, body);
  // A token from a command may have expired: get a fresh one, once.
  if (!res.ok() && res.status().code() == Code::kUnauthenticated && !endpoint_.token_command.empty()) {
    cached_token_.clear();
    return CallOnce(method, path, body);
  }
  return res;
}

Result<nlohmann::json> SlurmClient::CallOnce(const std::string& method, const std::string& path, const std::string& body) {
  if (!http_) {
    ASSIGN_OR_RETURN(auto hp, net::ParseServerUrl(endpoint_.url));
    http_.emplace(hp.first, hp.second, endpoint_.timeout);
  }
  ASSIGN_OR_RETURN(std::string token, Token(false));
  auto res = http_->Send(method, path, body,
                         {{"X-SLURM-USER-NAME", endpoint_.user}, {"X-SLURM-USER-TOKEN", token},
                          {"Content-Type", "application/json"}});
  if (!res.ok()) {
    // Never the token: the message names the endpoint only.
    return Status(res.status().code(), Describe() + ": " + res.status().message());
  }
  if (res->status == 401 || res->status == 403) {
    return Unauthenticated(Describe() + " refused the credentials of user " + endpoint_.user + " (HTTP " +
                           std::to_string(res->status) + "): check the token and the JWT key");
  }
  nlohmann::json j = ParseUntrustedJson(res->body, "slurmrestd answer").value_or(nlohmann::json::value_t::discarded);
  if (j.is_discarded()) {
    return Unavailable(Describe() + " answered HTTP " + std::to_string(res->status) + " with something that is not JSON");
  }
  // Errors without a number mean slurmrestd could not talk to the
  // controller or the controller rejected the token (bad or expired JWT).
  RETURN_IF_ERROR(SlurmErrors(j));
  if (res->status >= 500) return Unavailable(Describe() + " answered HTTP " + std::to_string(res->status));
  if (res->status >= 400) {
    return FailedPrecondition(Describe() + " refused the request (HTTP " + std::to_string(res->status) + ")");
  }
  return j;
}

Status SlurmClient::Ping() {
  ASSIGN_OR_RETURN(auto j, Call("GET", "/slurm/v0.0.38/ping", ""));
  for (const auto& p : JsonArray(j, "pings")) {
    if (JsonString(p, "ping") == "UP") return Status::Ok();
  }
  return Unavailable(Describe() + " cannot reach a Slurm controller");
}

Result<int64_t> SlurmClient::Submit(const SubmitRequest& r) {
  nlohmann::json job = {{"name", r.name},
                        {"partition", r.partition},
                        {"nodes", r.nodes},
                        {"requeue", false},
                        {"current_working_directory", r.working_directory},
                        {"standard_output", r.output},
                        {"standard_error", r.output},
                        {"environment", r.environment}};
  if (!r.gres.empty()) job["gres"] = r.gres;
  if (r.time_limit_minutes) job["time_limit"] = *r.time_limit_minutes;
  if (r.cpus_per_task) job["cpus_per_task"] = *r.cpus_per_task;
  if (r.memory_mb) job["memory_per_node"] = *r.memory_mb;
  nlohmann::json body = {{"script", r.script}, {"job", job}};
  ASSIGN_OR_RETURN(auto j, Call("POST", "/slurm/v0.0.38/job/submit", body.dump()));
  if (!j.contains("job_id") || !j["job_id"].is_number_integer()) {
    return Unavailable(Describe() + " accepted the job but returned no job id");
  }
  return j["job_id"].get<int64_t>();
}

Result<JobInfo> SlurmClient::GetJob(int64_t id) {
  ASSIGN_OR_RETURN(auto j, Call("GET", "/slurm/v0.0.38/job/" + std::to_string(id), ""));
  if (!j.contains("jobs") || j["jobs"].empty()) return NotFound("slurm has no job " + std::to_string(id));
  return ParseJob(j["jobs"][0]);
}

Result<std::vector<JobInfo>> SlurmClient::ListJobs() {
  ASSIGN_OR_RETURN(auto j, Call("GET", "/slurm/v0.0.38/jobs", ""));
  std::vector<JobInfo> out;
  for (const auto& job : JsonArray(j, "jobs")) out.push_back(ParseJob(job));
  return out;
}

Status SlurmClient::Cancel(int64_t id) {
  ASSIGN_OR_RETURN(auto j, Call("DELETE", "/slurm/v0.0.38/job/" + std::to_string(id), ""));
  (void)j;
  return Status::Ok();
}

Result<std::vector<JobInfo>> SlurmClient::Accounting(const std::vector<int64_t>& ids) {
  // dbv0.0.38 filters /jobs by name, time or account but not by a list of
  // ids, so each job is asked for by itself.
  std::vector<JobInfo> out;
  for (int64_t id : ids) {
    auto j = Call("GET", "/slurmdb/v0.0.38/job/" + std::to_string(id), "");
    if (!j.ok() && j.status().code() == Code::kNotFound) continue;
    if (!j.ok()) return j.status();
    for (const auto& job : j->value("jobs", nlohmann::json::array())) out.push_back(ParseAccountingJob(job));
  }
  return out;
}

}  // namespace causeway::slurm
