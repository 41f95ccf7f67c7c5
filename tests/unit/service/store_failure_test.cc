// What the services do when the database fails under them (FaultyStore):
// the caller is told, as a retryable error, nothing half-done is left, no
// one downstream hears of what was not committed, and the same request
// succeeds once the database is back.
#include "causeway/clock.h"
#include "fakes/faulty_store.h"
#include "identity/tokens.h"
#include "service/job_service.h"
#include "service/token_service.h"
#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

class StoreFailureTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    faulty_ = std::make_unique<FaultyStore>(*store_);
    queue_->Stop();
    queue_ = std::make_unique<CommitQueue>(*faulty_, CommitQueue::Options{});
    JobHooks hooks;
    hooks.submitted = [this](const JobRecord& job, const JobSpec&) { submitted_.push_back(job.id); };
    jobs_ = std::make_unique<JobService>(*faulty_, *queue_, *estate_, clock_, nullptr, hooks);
    tokens_ = std::make_unique<TokenService>(*faulty_, *queue_, clock_);
  }
  Result<SubmitResult> Submit(const std::string& key) {
    SubmitRequest r;
    r.spec_yaml = ExampleSpec();
    r.idempotency_key = key;
    return Wait<SubmitResult>([&](auto done) { jobs_->Submit(Admin(), r, done); });
  }

  std::unique_ptr<FaultyStore> faulty_;
  std::unique_ptr<JobService> jobs_;
  std::unique_ptr<TokenService> tokens_;
  std::vector<std::string> submitted_;  // written by the commit thread, read after Wait
};

TEST_F(StoreFailureTest, ASubmissionTheDatabaseRefusesIsReportedAndTriedAgainLosesNothing) {
  faulty_->FailCommits(Unavailable("database is locked"));
  auto refused = Submit("key-1");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kUnavailable) << refused.status().ToString();
  EXPECT_GE(faulty_->refused_commits(), 1);
  EXPECT_TRUE(submitted_.empty()) << "the scheduler hears only of what was committed";
  EXPECT_TRUE(Audit("job.").empty());

  faulty_->Heal();
  auto accepted = Submit("key-1");
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  EXPECT_TRUE(accepted->created) << "the refused attempt claimed nothing";
  EXPECT_EQ(submitted_, std::vector<std::string>{accepted->job.id});
  EXPECT_EQ(Audit("job.submit").size(), 1u);
}

TEST_F(StoreFailureTest, AReadThatFailsIsAnErrorNotAnAnswer) {
  auto accepted = Submit("");
  ASSERT_TRUE(accepted.ok()) << accepted.status().ToString();
  faulty_->FailReads(Unavailable("connection to the database lost"));
  auto got = jobs_->Get(accepted->job.id);
  ASSERT_FALSE(got.ok()) << "never an empty or stale answer";
  EXPECT_EQ(got.status().code(), Code::kUnavailable);
  EXPECT_EQ(jobs_->List(JobFilter{}).status().code(), Code::kUnavailable);
  faulty_->Heal();
  EXPECT_TRUE(jobs_->Get(accepted->job.id).ok());
}

TEST_F(StoreFailureTest, ATokenIsUsableOnlyOnceItsCreationCommitted) {
  faulty_->FailCommits(Unavailable("disk full"));
  auto refused = tokens_->Create(Admin(), "ci", {"jobs:read"}, Micros(0));
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), Code::kUnavailable);
  faulty_->Heal();
  auto listed = tokens_->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty()) << "no token half-made";

  auto made = tokens_->Create(Admin(), "ci", {"jobs:read"}, Micros(0));
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  faulty_->FailReads(Unavailable("connection to the database lost"));
  auto who = identity::Authenticate(*faulty_, "Bearer " + made->secret, clock_.Now());
  ASSERT_FALSE(who.ok());
  EXPECT_EQ(who.status().code(), Code::kUnavailable) << "a lookup that failed is not a bad token (no 401)";
  faulty_->Heal();
  EXPECT_TRUE(identity::Authenticate(*faulty_, "Bearer " + made->secret, clock_.Now()).ok());
}

}  // namespace
}  // namespace causeway::testing
