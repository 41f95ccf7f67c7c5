#include "providers/slurm/slurm_client.h"

#include "causeway/job_spec.h"

namespace causeway::slurm {

SlurmClient::SlurmClient(Endpoint endpoint) : endpoint_(std::move(endpoint)) {}

Result<nlohmann::json> SlurmClient::Call(const std::string& method, const std::string& path, const std::string& body) {
  if (!http_) {
    ASSIGN_OR_RETURN(auto hp, net::ParseServerUrl(endpoint_.url));
    http_.emplace(hp.first, hp.second, endpoint_.timeout);
  }
  ASSIGN_OR_RETURN(std::string token, ReadFile(endpoint_.token_file));
  while (!token.empty() && (token.back() == '\n' || token.back() == ' ')) token.pop_back();
  auto res = http_->Send(method, path, body,
                         {{"X-SLURM-USER-NAME", endpoint_.user}, {"X-SLURM-USER-TOKEN", token},
                          {"Content-Type", "application/json"}});
  if (!res.ok()) {
    // Never the token: the message names the endpoint only.
    return Status(res.status().code(), "slurmrestd at " + endpoint_.url + ": " + res.status().message());
  }
  if (res->status == 401 || res->status == 403) {
    return Unauthenticated("slurmrestd at " + endpoint_.url + " refused the credentials of user " + endpoint_.user +
                           " (HTTP " + std::to_string(res->status) + "): check the token file and the JWT key");
  }
  nlohmann::json j = nlohmann::json::parse(res->body, nullptr, false);
  if (j.is_discarded()) {
    return Unavailable("slurmrestd at " + endpoint_.url + " answered HTTP " + std::to_string(res->status) +
                       " with something that is not JSON");
  }
  if (j.contains("errors") && j["errors"].is_array() && !j["errors"].empty()) {
    const auto& e = j["errors"][0];
    int number = e.value("error_number", -1);
    std::string text = "slurm error " + std::to_string(number) + " (" + e.value("error", "") +
                       "): " + e.value("description", "");
    if (number == 2017) return NotFound(text);
    // Without a number, slurmrestd could not talk to the controller or the
    // token was rejected by it (bad or expired JWT).
    if (number == -1) return Unavailable(text);
    return FailedPrecondition(text);
  }
  if (res->status >= 500) return Unavailable("slurmrestd at " + endpoint_.url + " answered HTTP " + std::to_string(res->status));
  if (res->status >= 400) {
    return FailedPrecondition("slurmrestd at " + endpoint_.url + " refused the request (HTTP " +
                              std::to_string(res->status) + ")");
  }
  return j;
}

Status SlurmClient::Ping() {
  ASSIGN_OR_RETURN(auto j, Call("GET", "/slurm/v0.0.38/ping", ""));
  for (const auto& p : j.value("pings", nlohmann::json::array())) {
    if (p.value("ping", "") == "UP") return Status::Ok();
  }
  return Unavailable("slurmrestd at " + endpoint_.url + " cannot reach a Slurm controller");
}

Result<int64_t> SlurmClient::Submit(const SubmitRequest& r) {
  nlohmann::json job = {{"name", r.name},
                        {"partition", r.partition},
                        {"nodes", r.nodes},
                        {"current_working_directory", r.working_directory},
                        {"standard_output", r.output},
                        {"standard_error", r.output},
                        {"environment", r.environment}};
  if (!r.gres.empty()) job["gres"] = r.gres;
  if (r.time_limit_minutes) job["time_limit"] = *r.time_limit_minutes;
  nlohmann::json body = {{"script", r.script}, {"job", job}};
  ASSIGN_OR_RETURN(auto j, Call("POST", "/slurm/v0.0.38/job/submit", body.dump()));
  if (!j.contains("job_id") || !j["job_id"].is_number_integer()) {
    return Unavailable("slurmrestd at " + endpoint_.url + " accepted the job but returned no job id");
  }
  return j["job_id"].get<int64_t>();
}

JobInfo ParseJob(const nlohmann::json& j) {
  JobInfo info;
  info.id = j.value("job_id", int64_t{0});
  info.name = j.value("name", "");
  info.state = j.value("job_state", "");
  info.reason = j.value("state_reason", "");
  // exit_code is a wait status: the exit code in the high byte, a signal low.
  int status = j.value("exit_code", 0);
  info.exit_code = (status >> 8) & 0xff;
  info.signal = status & 0x7f;
  int64_t start = j.value("start_time", int64_t{0}), end = j.value("end_time", int64_t{0});
  if (start > 0) info.start = FromUnixMicros(start * 1'000'000);
  if (end > 0) info.end = FromUnixMicros(end * 1'000'000);
  return info;
}

Result<JobInfo> SlurmClient::GetJob(int64_t id) {
  ASSIGN_OR_RETURN(auto j, Call("GET", "/slurm/v0.0.38/job/" + std::to_string(id), ""));
  if (!j.contains("jobs") || j["jobs"].empty()) return NotFound("slurm has no job " + std::to_string(id));
  return ParseJob(j["jobs"][0]);
}

Result<std::vector<JobInfo>> SlurmClient::ListJobs() {
  ASSIGN_OR_RETURN(auto j, Call("GET", "/slurm/v0.0.38/jobs", ""));
  std::vector<JobInfo> out;
  for (const auto& job : j.value("jobs", nlohmann::json::array())) out.push_back(ParseJob(job));
  return out;
}

Status SlurmClient::Cancel(int64_t id) {
  ASSIGN_OR_RETURN(auto j, Call("DELETE", "/slurm/v0.0.38/job/" + std::to_string(id), ""));
  (void)j;
  return Status::Ok();
}

}  // namespace causeway::slurm
