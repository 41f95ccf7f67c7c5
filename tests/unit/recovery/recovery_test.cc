#include "recovery/recovery.h"

#include <gtest/gtest.h>

namespace causeway::recovery {
namespace {

TEST(RecoveryTest, ClassifiesBackendSignals) {
  struct Row {
    AttemptOutcome outcome;
    int exit;
    const char* reason;
    const char* log;
    FailureClass want;
    Owner owner;
  } rows[] = {
      {AttemptOutcome::kSucceeded, 0, "", "", FailureClass::kNone, Owner::kNobody},
      {AttemptOutcome::kPreempted, -1, "spot capacity reclaimed", "", FailureClass::kPreemption, Owner::kNobody},
      {AttemptOutcome::kNodeFailure, -1, "slurm job 4 ended NODE_FAIL", "", FailureClass::kNodeFault, Owner::kProvider},
      {AttemptOutcome::kFailed, 1, "slurm job 5 ended FAILED", "NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus",
       FailureClass::kNodeFault, Owner::kProvider},
      {AttemptOutcome::kFailed, 137, "slurm job 6 ended OUT_OF_MEMORY (out of memory)", "", FailureClass::kOutOfMemory,
       Owner::kResearcher},
      {AttemptOutcome::kFailed, 1, "", "torch.cuda.OutOfMemoryError: CUDA out of memory.", FailureClass::kOutOfMemory,
       Owner::kResearcher},
      {AttemptOutcome::kFailed, 1, "", "OSError: [Errno 28] No space left on device", FailureClass::kStorageFull,
       Owner::kPlatform},
      {AttemptOutcome::kFailed, 1, "", "OSError: [Errno 116] Stale file handle", FailureClass::kDataPath, Owner::kPlatform},
      {AttemptOutcome::kFailed, 2, "", "Traceback: KeyError 'lr'", FailureClass::kUserError, Owner::kResearcher},
      {AttemptOutcome::kTimeout, -1, "ran past its time_limit", "", FailureClass::kTimeout, Owner::kResearcher},
      {AttemptOutcome::kProviderOutage, -1, "provider x is down", "", FailureClass::kProviderOutage, Owner::kProvider},
      {AttemptOutcome::kCancelled, -1, "cancelled", "", FailureClass::kCancelled, Owner::kNobody},
  };
  for (const auto& r : rows) {
    auto c = Classify(r.outcome, r.exit, r.reason, r.log);
    EXPECT_EQ(c.failure, r.want) << r.reason << " | " << r.log;
    EXPECT_EQ(c.owner, r.owner) << r.reason << " | " << r.log;
  }
  EXPECT_EQ(Classify(AttemptOutcome::kFailed, 1, "", "Xid 48: DBE").evidence, "NVIDIA XID 48");
  EXPECT_EQ(Classify(AttemptOutcome::kFailed, 1, "", "NVRM: Xid (PCI:0000:3b:00): 79, pid=1").evidence, "NVIDIA XID 79");
  EXPECT_EQ(Classify(AttemptOutcome::kFailed, 1, "", "oxidized values").failure, FailureClass::kUserError);
}

TEST(RecoveryTest, DefaultsRetryInfrastructureNotUserErrors) {
  Policy p;
  auto node = Classify(AttemptOutcome::kNodeFailure, -1, "", "");
  auto user = Classify(AttemptOutcome::kFailed, 1, "", "");
  EXPECT_TRUE(Decide(p, node, 1).retry);
  EXPECT_FALSE(Decide(p, node, 6).retry);  // 5 restarts used
  EXPECT_NE(Decide(p, node, 6).why.find("gave up after 6 attempts"), std::string::npos);
  EXPECT_FALSE(Decide(p, user, 1).retry);
  EXPECT_FALSE(Decide(p, Classify(AttemptOutcome::kCancelled, -1, "", ""), 1).retry);
}

TEST(RecoveryTest, PerJobPolicyOverridesDefaults) {
  JobSpec spec;
  spec.recovery.max_restarts = 1;
  spec.recovery.on = std::vector<std::string>{"user_error"};
  spec.recovery.backoff = std::chrono::minutes(1);
  Policy p = PolicyFor(spec);
  auto user = Classify(AttemptOutcome::kFailed, 1, "", "");
  Decision d = Decide(p, user, 1);
  EXPECT_TRUE(d.retry);
  EXPECT_EQ(d.wait, std::chrono::minutes(1));
  EXPECT_FALSE(Decide(p, user, 2).retry);
  EXPECT_FALSE(Decide(p, Classify(AttemptOutcome::kNodeFailure, -1, "", ""), 1).retry);
}

TEST(RecoveryTest, SpecRejectsUnknownClasses) {
  auto r = ParseJobSpec("recovery: {on: [preemtion]}\n", "j.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().diagnostics()[0].message.find("did you mean \"preemption\""), std::string::npos);
  EXPECT_TRUE(ParseJobSpec("recovery: {max_restarts: 3, on: [preemption, node_fault], backoff: 5m}\n", "j").ok());
}

}  // namespace
}  // namespace causeway::recovery
