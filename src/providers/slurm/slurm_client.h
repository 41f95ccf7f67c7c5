// A client of slurmrestd's REST API v0.0.38 (JWT auth), and of its
// accounting side dbv0.0.38 (slurmdbd). Errors as described in slurm_api.h;
// a message never contains the token.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "providers/slurm/slurm_api.h"
#include "net/http_client.h"

namespace causeway::slurm {

struct Endpoint {
  std::string url;   // http://host:port of slurmrestd
  std::string user;  // X-SLURM-USER-NAME
  // Where the JWT comes from: a file (re-read on every call, so rotation
  // works) or a command that prints it (e.g. `scontrol token username=U
  // lifespan=3600`; a leading "SLURM_JWT=" is dropped), re-run every
  // `token_refresh` and whenever slurmrestd refuses the token.
  std::string token_file;
  std::string token_command;
  std::chrono::milliseconds timeout{10'000};
  std::chrono::seconds token_refresh{600};
};

class SlurmClient final : public SlurmApi {
 public:
  explicit SlurmClient(Endpoint endpoint);

  std::string Describe() const override { return "slurmrestd at " + endpoint_.url; }
  Status Ping() override;
  Result<int64_t> Submit(const SubmitRequest& request) override;
  Result<std::vector<JobInfo>> ListJobs() override;
  Status Cancel(int64_t id) override;
  Result<std::vector<JobInfo>> Accounting(const std::vector<int64_t>& ids) override;
  Result<JobInfo> GetJob(int64_t id);

 private:
  Result<nlohmann::json> Call(const std::string& method, const std::string& path, const std::string& body);
  Result<nlohmann::json> CallOnce(const std::string& method, const std::string& path, const std::string& body);
  Result<std::string> Token(bool refresh);

  Endpoint endpoint_;
  std::optional<net::HttpClient> http_;
  std::string cached_token_;  // from token_command
  std::chrono::steady_clock::time_point token_at_{};
};

}  // namespace causeway::slurm
