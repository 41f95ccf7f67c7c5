// `make demo` end to end: runs scripts/demo.sh against the built binary and
// checks that it shows each thing it promises and ends with a clean summary.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

namespace causeway::testing {
namespace {

TEST(DemoTest, TheWholeLoopRunsAndEndsWithAVerifiedSummary) {
  std::string cmd = std::string("DEMO_TIMEOUT=150 ") + CAUSEWAY_SOURCE_DIR + "/scripts/demo.sh " + CAUSEWAY_BINARY + " 2>&1";
  FILE* pipe = ::popen(cmd.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  std::array<char, 4096> buf;
  while (size_t n = std::fread(buf.data(), 1, buf.size(), pipe)) out.append(buf.data(), n);
  int status = ::pclose(pipe);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;

  const char* expected[] = {
      // rejected for a missing owner label, with the reason
      "policy cost-owner (require-labels): label \"owner\" is required",
      // H200 work routed to the reserved provider
      "placed on nebius-eu-h200 (nebius, eu): reserved capacity already paid for",
      // L4 work to the cheaper provider
      "placed on gcp-us-a100 (gcp, us): the cheapest eligible capacity at 0.71 USD per GPU-hour",
      // a team queued behind its quota, then borrowing
      "has 0 of its 48 lendable H100 GPUs unused",
      "8 of them on quota borrowed from the cohort",
      // a preemption and requeue
      "preempted by higher-priority job",
      "job.requeue",
      // a budget warning
      "budget.warning",
      // a pipeline, its steps in order
      "submitted pipeline vision-nightly",
      "(vision-eval, ",
      // a job group, its tasks started together, the auxiliary one ended
      "submitted job group nlp-rl",
      "2 tasks, started together",
      "ended: the primary tasks of job group nlp-rl have all succeeded (termination_delay 5m)",
      // its first step CPU-only, on a CPU-only pool at its price per CPU-hour
      "(16 CPUs): the cheapest eligible capacity at 0.048 USD per CPU-hour",
      // a CUDA requirement: the pool that declares 12.2 passed over
      "resources.cuda: pool a100 declares CUDA 12.2, the job requires >=12.4",
      // provenance: the record signed and verified, attempts compared, a rerun pinned
      "signature valid; the record of",
      "matches the server's record and its intact audit chain",
      "driver: 550.90.07",
      // the summary and the verified chain
      "CLUSTER",
      "ATTEMPTS",
      "GPU-H",
      "chain intact",
      // a person onboarded, working, moved and revoked, with the evidence
      "identity acceptance test against",
      "no credential the user held retains access",
      "PASSED",
      // a federated job: the variables boto3 reads, its token file, no static key
      "AWS_ROLE_ARN=arn:aws:iam::123456789012:role/nlp-jobs",
      "token file: 600 ",
      "\"sub\":\"job:",
      "static AWS keys in the environment: 0",
      "aws-training-data",
      // providers' logs beside Causeway's own, coverage, signed checkpoints
      "4 stored, 0 stored before",
      "0 stored, 4 stored before",
      "DeleteAccessKey",
      "bucket-dark  gcp/llama-checkpoints",
      "signed seq ",
      "signed checkpoints verified",
      // recovery and residency proven live, recorded, and the four questions
      "recovery acceptance test against",
      "residency acceptance test against",
      "a checkpoint outside eu is refused",
      "recorded as audit event",
      "Can corporate identities be federated with least privilege?",
      // before submitting: the scheduler run ahead for a job not submitted
      "job vision-sweep (team vision), if submitted now:",
      "expected cost ",
      // planning on the demo's own history, with a reservation's what-if
      "wrote the HTML report to",
      "reserved 64 H200 on nebius-eu-h200",
      "Largest changes against",
      // readiness: controls per provider, owned or not
      "audit-forwarding",
      "no owner: a control no one owns does not exist in practice",
      "control checks are not (fully) in place",
      // the web console's address, on the server's own listener
      "console: http://127.0.0.1:",
  };
  for (const char* e : expected) EXPECT_NE(out.find(e), std::string::npos) << "missing: " << e << "\n" << out;
  // Every job in the summary finished.
  size_t summary = out.find("== Summary");
  ASSERT_NE(summary, std::string::npos);
  std::string tail = out.substr(summary, out.find("== ", summary + 3) - summary);  // up to the next step
  EXPECT_EQ(tail.find(" pending "), std::string::npos) << tail;
  EXPECT_EQ(tail.find(" running "), std::string::npos) << tail;
  EXPECT_NE(tail.find("succeeded"), std::string::npos);
}

}  // namespace
}  // namespace causeway::testing
