// What the Slurm adapter reads from Slurm's answers and writes for sbatch.
// (The same code runs against a real cluster in the integration tests.)
#include <gtest/gtest.h>

#include "providers/slurm/slurm_api.h"
#include "providers/slurm/slurm_cli.h"
#include "providers/slurm/slurm_provider.h"

namespace causeway::slurm {
namespace {

TEST(SlurmParseTest, ControllerJobs) {
  auto j = nlohmann::json::parse(R"({"job_id": 7, "name": "cw-j-1", "job_state": "FAILED", "state_reason": "NonZeroExitCode",
    "exit_code": 768, "start_time": 1796068124, "end_time": 1796068125, "restart_cnt": 1,
    "tres_alloc_str": "cpu=1,node=1,billing=1,gres/gpu=2,gres/gpu:h200=2"})");
  JobInfo info = ParseJob(j);
  EXPECT_EQ(info.id, 7);
  EXPECT_EQ(info.exit_code, 3);
  EXPECT_EQ(info.gpus, 2);
  EXPECT_EQ(info.restarts, 1);
  ASSERT_TRUE(info.start && info.end);
  EXPECT_EQ(ToUnixMicros(*info.end) - ToUnixMicros(*info.start), 1'000'000);
  EXPECT_EQ(OutcomeOf(info), AttemptOutcome::kFailed);
}

TEST(SlurmParseTest, AccountingJobs) {
  auto j = nlohmann::json::parse(R"({"job_id": 3, "name": "wrap", "state": {"current": "FAILED", "reason": "None"},
    "exit_code": {"status": "SUCCESS", "return_code": 0}, "time": {"start": 10, "end": 20},
    "tres": {"allocated": [{"type": "cpu", "name": null, "count": 1}, {"type": "gres", "name": "gpu", "count": 4},
                           {"type": "gres", "name": "gpu:h200", "count": 4}]}})");
  JobInfo info = ParseAccountingJob(j);
  EXPECT_EQ(info.state, "FAILED");
  EXPECT_EQ(info.exit_code, -1) << "22.05 reports 0 for every job: unknown, not 0";
  EXPECT_EQ(info.gpus, 4);
  EXPECT_EQ(ToUnixMicros(*info.end), 20'000'000);
}

TEST(SlurmParseTest, SacctText) {
  auto jobs = SlurmCli::ParseSacct(
      "12|cw-a-1|NODE_FAIL|0:0|1796068124|1796068130|billing=1,cpu=1,gres/gpu:h200=2,gres/gpu=2,node=1\n"
      "12|cw-a-1|PENDING|0:0|Unknown|Unknown|\n"
      "13|cw-b-1|CANCELLED by 0|0:15|1796068124|1796068125|\n");
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 3u);
  EXPECT_EQ((*jobs)[0].state, "NODE_FAIL");
  EXPECT_EQ((*jobs)[0].gpus, 2);
  EXPECT_FALSE((*jobs)[1].start.has_value());
  EXPECT_EQ((*jobs)[2].state, "CANCELLED");
  EXPECT_EQ((*jobs)[2].signal, 15);
  auto bad = SlurmCli::ParseSacct("12|x|COMPLETED\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 1: expected 7 fields"), std::string::npos) << bad.status().message();
}

TEST(SlurmParseTest, ErrorsBecomeTypedStatuses) {
  EXPECT_TRUE(SlurmErrors(nlohmann::json::parse(R"({"errors": []})")).ok());
  auto unknown = SlurmErrors(nlohmann::json::parse(
      R"({"errors": [{"error_number": 2017, "error": "Invalid job id specified", "description": "x"}]})"));
  EXPECT_EQ(unknown.code(), Code::kNotFound);
  EXPECT_EQ(SlurmErrors(nlohmann::json::parse(R"({"errors": [{"error": "Failed while looking for jobs"}]})")).code(),
            Code::kUnavailable);
}

TEST(SlurmParseTest, SbatchScriptsCarryTheEnvironmentQuoted) {
  SubmitRequest r;
  r.script = "#!/bin/bash\nset -e\nrun\n";
  r.environment = {{"A", "it's"}, {"B", "$HOME `x`"}, {"bad key", "dropped"}};
  EXPECT_EQ(SlurmCli::ScriptWithEnvironment(r),
            "#!/bin/bash\nexport A='it'\\''s'\nexport B='$HOME `x`'\nset -e\nrun\n");
}

}  // namespace
}  // namespace causeway::slurm
