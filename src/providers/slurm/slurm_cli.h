// Slurm through its command-line tools: sbatch, squeue --json, scancel,
// scontrol ping and sacct. For clusters whose slurmrestd is not offered or
// is down (FallbackApi). Jobs are submitted as the Unix user that runs
// Causeway, with munge credentials; `conf` points the tools at the
// cluster's slurm.conf (SLURM_CONF) when it is not the default one.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "providers/slurm/slurm_api.h"

namespace causeway::slurm {

class SlurmCli final : public SlurmApi {
 public:
  explicit SlurmCli(std::string conf, std::chrono::milliseconds timeout = std::chrono::milliseconds(30'000));

  std::string Describe() const override { return "the Slurm CLI" + (conf_.empty() ? "" : " (" + conf_ + ")"); }
  Status Ping() override;
  Result<int64_t> Submit(const SubmitRequest& request) override;
  Result<std::vector<JobInfo>> ListJobs() override;
  Status Cancel(int64_t id) override;
  Result<std::vector<JobInfo>> Accounting(const std::vector<int64_t>& ids) override;

  // People's accounting users (sacctmgr, which needs slurmdbd): `user`
  // associated with `account` (the account made first if missing; both
  // steps do nothing when already done); `user` removed with every
  // association (nothing to do when absent); the accounts `user` is in.
  Status EnsureUser(const std::string& user, const std::string& account);
  // With `account`, only that association goes.
  Status RemoveUser(const std::string& user, const std::string& account = "");
  Result<std::vector<std::string>> UserAccounts(const std::string& user);

  // The batch script sbatch is given: the job's environment exported at the
  // top (sbatch itself runs with a minimal environment, so nothing of
  // Causeway's own environment reaches the job), then the script's body.
  static std::string ScriptWithEnvironment(const SubmitRequest& request);
  // Parses `sacct -P -n -X -o JobIDRaw,JobName,State,ExitCode,Start,End,AllocTRES`
  // with epoch-second times.
  static Result<std::vector<JobInfo>> ParseSacct(const std::string& out);

 private:
  // Runs a tool; a non-zero exit, or an error it prints while exiting 0
  // (scancel does), is a typed error from its stderr.
  Result<std::string> Tool(std::vector<std::string> argv, const std::string& input = "");

  std::string conf_;
  std::chrono::milliseconds timeout_;
};

}  // namespace causeway::slurm
