// CheckpointService: the chain's head signed, an idle chain not signed
// again, and the trail verified against the published keys alone.
#include "service/checkpoint_service.h"

#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

class CheckpointServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    checkpoints_ = std::make_unique<CheckpointService>(*store_, *queue_, clock_);
  }
  void Append(const std::string& action) {
    AuditEvent e;
    e.time = clock_.Now();
    e.actor = "tok_admin";
    e.action = action;
    e.resource = "test/1";
    ASSERT_TRUE(queue_->Run([e](WriteTx& tx) mutable { return tx.AppendAudit(e); }).ok());
  }
  std::unique_ptr<CheckpointService> checkpoints_;
};

TEST_F(CheckpointServiceTest, SignsTheHeadOnceAndTheTrailVerifiesWithThePublicKeys) {
  Append("test.one");
  Append("test.two");
  auto made = checkpoints_->Checkpoint("causeway");
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  ASSERT_TRUE(made->has_value());
  EXPECT_EQ((*made)->action, "audit.checkpoint");
  EXPECT_EQ((*made)->details.Int("seq"), 2) << "it signs the head it read";
  EXPECT_EQ((*made)->seq, 4) << "after the audit key it made on first use: the commit says where it landed";
  ASSERT_EQ(Audit("audit.key.create").size(), 1u);
  EXPECT_EQ(nlohmann::json(Audit("audit.key.create")[0].details).dump().find("PRIVATE"), std::string::npos) << "never the key";

  auto idle = checkpoints_->Checkpoint("causeway");
  ASSERT_TRUE(idle.ok());
  EXPECT_FALSE(idle->has_value()) << "nothing new since the last checkpoint";

  auto keys = checkpoints_->PublicKeys();
  ASSERT_TRUE(keys.ok()) << keys.status().ToString();
  ASSERT_EQ((*keys)["keys"].size(), 1u);
  EXPECT_FALSE((*keys)["keys"][0].contains("d")) << "no private part is published";

  auto report = VerifyTrail(*store_);
  ASSERT_TRUE(report.ok()) << report.status().ToString();
  EXPECT_TRUE(report->ok()) << report->checkpoint_error;
  EXPECT_EQ(report->checkpoints, 1);
  EXPECT_EQ(report->last_signed_seq, 2);

  // The next checkpoint signs with the same key.
  Append("test.three");
  auto next = checkpoints_->Checkpoint("causeway");
  ASSERT_TRUE(next.ok() && next->has_value());
  EXPECT_EQ((*next)->details.String("kid"), (*made)->details.String("kid"));
  EXPECT_EQ(Audit("audit.key.create").size(), 1u);
}

}  // namespace
}  // namespace causeway::testing
