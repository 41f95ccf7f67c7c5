// AcceptanceService: a run's verdict is kept as one audit event, bounded,
// never passed with a failed step, and the latest run of each test is read
// back as it was recorded.
#include "service/acceptance_service.h"

#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

class AcceptanceServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    acceptance_ = std::make_unique<AcceptanceService>(*store_, *queue_, clock_);
  }
  AcceptanceRun Run(const std::string& test, bool passed, std::vector<AcceptanceStep> steps) {
    AcceptanceRun r;
    r.test = test;
    r.passed = passed;
    r.started = clock_.Now();
    r.finished = clock_.Now();
    r.steps = std::move(steps);
    return r;
  }
  std::unique_ptr<AcceptanceService> acceptance_;
};

TEST_F(AcceptanceServiceTest, RunsAreAuditEventsAndTheLatestOfEachTestIsReadBack) {
  // Refused, writing nothing: an unknown test, no steps, a pass with a
  // failed step.
  EXPECT_EQ(acceptance_->Record(Run("chaos", true, {{"s", "pass", "", {}}}), "tok_admin").status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(acceptance_->Record(Run("recovery", true, {}), "tok_admin").status().code(), Code::kInvalidArgument);
  auto lying = acceptance_->Record(Run("recovery", true, {{"resumed", "fail", "no", {}}}), "tok_admin");
  EXPECT_EQ(lying.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(Audit("acceptance.").empty());

  // Recorded: bounded, cut on a character boundary.
  std::string long_detail(AcceptanceService::kMaxDetail - 1, 'x');
  long_detail += "\xC3\xA9";  // two bytes across the bound
  AcceptanceRun first = Run("recovery", false, {{"resumed", "fail", long_detail, {1, 2}}});
  first.provider = "nebius";
  first.objective_ms = 1800000;
  auto recorded = acceptance_->Record(first, "tok_admin");
  ASSERT_TRUE(recorded.ok()) << recorded.status().ToString();
  EXPECT_EQ(recorded->steps[0].detail.size(), AcceptanceService::kMaxDetail - 1);
  clock_.Advance(std::chrono::minutes(5));
  AcceptanceRun second = Run("recovery", true, {{"resumed", "pass", "after 4 s", {7}}});
  second.provider = "coreweave";
  second.recovery_ms = 4000;
  ASSERT_TRUE(acceptance_->Record(second, "tok_admin").ok());
  ASSERT_TRUE(acceptance_->Record(Run("identity", true, {{"all", "not_applicable", "", {}}}), "tok_admin").ok());

  auto events = Audit("acceptance.run");
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0].resource, "acceptance/recovery");
  auto latest = acceptance_->Latest();
  ASSERT_TRUE(latest.ok()) << latest.status().ToString();
  EXPECT_EQ(latest->size(), 2u) << "no residency run";
  const AcceptanceRun& r = latest->at("recovery");
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.provider, "coreweave");
  EXPECT_EQ(r.recovery_ms, 4000);
  EXPECT_EQ(r.seq, events[1].seq);
  EXPECT_EQ(r.actor, "tok_admin");
  ASSERT_EQ(r.steps.size(), 1u);
  EXPECT_EQ(r.steps[0].audit_seqs, std::vector<int64_t>{7});
  EXPECT_EQ(latest->at("identity").steps[0].result, "not_applicable");
}

}  // namespace
}  // namespace causeway::testing
