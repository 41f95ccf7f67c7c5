// WorkloadService: a token only for a running attempt, recorded in the
// audit trail (without the token) before it is handed out, and refused when
// it cannot be recorded; key rotation keeps the old key published.
#include "service/workload_service.h"

#include "identity/jwt.h"
#include "spec/spec_json.h"
#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

class WorkloadServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    WorkloadIdentityConfig config;
    config.issuer = "https://causeway.example";
    config.audiences = {"sts.amazonaws.com"};
    issuer_ = std::make_unique<identity::WorkloadIssuer>(*store_, config, std::vector<CloudFederation>{});
    auto first = issuer_->FirstKeyWrite(clock_.Now());
    ASSERT_TRUE(first.ok() && first->has_value()) << first.status().ToString();
    ASSERT_TRUE(queue_->Run(**first).ok());
    service_ = std::make_unique<WorkloadService>(*store_, *queue_, clock_);
  }
  static JobDetail Running() {
    JobDetail d;
    d.job.id = "job_1";
    d.job.team = "nlp";
    d.job.owner = "alice@example.com";
    d.job.state = JobState::kRunning;
    JobSpec spec;
    spec.name = "train";
    spec.team = d.job.team;
    spec.owner = d.job.owner;
    spec.labels = {{"project", "llm-eval"}};
    d.job.spec_json = ToJson(spec).dump();
    Attempt a;
    a.job_id = "job_1";
    a.number = 2;
    a.cluster = "nebius-eu-h200";
    a.state = "running";
    d.attempts = {a};
    return d;
  }
  std::unique_ptr<identity::WorkloadIssuer> issuer_;
  std::unique_ptr<WorkloadService> service_;
};

TEST_F(WorkloadServiceTest, RefusesWithoutAnIssuer) {
  auto r = service_->Refresh(Running(), "", "tok_admin");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kFailedPrecondition);
  EXPECT_EQ(service_->RotateKeys("tok_admin").code(), Code::kFailedPrecondition);
}

TEST_F(WorkloadServiceTest, ATokenForTheRunningAttemptIsAuditedWithoutItself) {
  service_->SetIssuer(issuer_.get());
  auto r = service_->Refresh(Running(), "sts.amazonaws.com", "tok_job");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_FALSE(r->token.empty());
  EXPECT_EQ(r->audiences, std::vector<std::string>{"sts.amazonaws.com"});
  auto events = Audit("workload.token.issue");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].actor, "tok_job");
  EXPECT_EQ(events[0].resource, "job/job_1");
  EXPECT_EQ(events[0].details.Int("attempt"), 2);
  EXPECT_EQ(events[0].details.String("jti"), r->jti);
  EXPECT_EQ(nlohmann::json(events[0].details).dump().find(r->token), std::string::npos) << "the token is a secret";
  // Its claims name the project the job's spec is labelled with.
  size_t dot = r->token.find('.');
  auto payload = identity::jwt::Base64UrlDecode(r->token.substr(dot + 1, r->token.find('.', dot + 1) - dot - 1));
  ASSERT_TRUE(payload.has_value());
  EXPECT_EQ(nlohmann::json::parse(*payload).value("project", ""), "llm-eval") << *payload;

  auto other = service_->Refresh(Running(), "vault", "tok_job");
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), Code::kPermissionDenied) << "only configured audiences";
}

// An audience that federations use is for their teams alone: a job holds
// no token for a cloud role its team's federations would refuse it, neither
// at launch (audience "") nor on refresh.
TEST_F(WorkloadServiceTest, AJobGetsOnlyTheAudiencesItsTeamsFederationsUse) {
  WorkloadIdentityConfig config;
  config.issuer = "https://causeway.example";
  config.audiences = {"sts.amazonaws.com", "vault", "shared"};
  CloudFederation vision_aws;
  vision_aws.name = "vision-aws";
  vision_aws.kind = "aws";
  vision_aws.audience = "sts.amazonaws.com";
  vision_aws.teams = {"vision"};
  CloudFederation vault;
  vault.name = "vault";
  vault.kind = "kubernetes";
  vault.audience = "vault";
  vault.teams = {"nlp", "vision"};
  CloudFederation everyone = vault;
  everyone.name = "everyone";
  everyone.audience = "shared";
  everyone.teams = {};
  CloudFederation only_nlp = everyone;
  only_nlp.name = "only-nlp";
  only_nlp.teams = {"nlp"};
  identity::WorkloadIssuer issuer(*store_, config, {vision_aws, vault, everyone, only_nlp});
  EXPECT_EQ(issuer.AudiencesFor("nlp"), (std::vector<std::string>{"vault", "shared"}));
  EXPECT_EQ(issuer.AudiencesFor("vision"), (std::vector<std::string>{"sts.amazonaws.com", "vault", "shared"}));
  EXPECT_EQ(issuer.AudiencesFor("audio"), std::vector<std::string>{"shared"}) << "a federation every team may use";
  service_->SetIssuer(&issuer);

  auto all = service_->Refresh(Running(), "", "tok_job");
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(all->audiences, (std::vector<std::string>{"vault", "shared"}));
  auto sts = service_->Refresh(Running(), "sts.amazonaws.com", "tok_job");
  ASSERT_FALSE(sts.ok());
  EXPECT_EQ(sts.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(sts.status().message(), "audience \"sts.amazonaws.com\" is for federations team \"nlp\" may not use");
  EXPECT_EQ(Audit("workload.token.issue").size(), 1u) << "a refused token is not issued";

  JobDetail vision = Running();
  vision.job.team = "vision";
  auto theirs = service_->Refresh(vision, "sts.amazonaws.com", "tok_job");
  ASSERT_TRUE(theirs.ok()) << theirs.status().ToString();

  identity::WorkloadIssuer closed(*store_, {config.issuer, {"sts.amazonaws.com"}}, {vision_aws});
  service_->SetIssuer(&closed);
  auto none = service_->Refresh(Running(), "", "tok_job");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), Code::kPermissionDenied) << "no audience at all for nlp";
}

TEST_F(WorkloadServiceTest, TokensDieWithTheirAttempt) {
  service_->SetIssuer(issuer_.get());
  JobDetail ended = Running();
  ended.job.state = JobState::kSucceeded;
  ended.attempts[0].state = "succeeded";
  auto r = service_->Refresh(ended, "", "tok_job");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kFailedPrecondition);
  EXPECT_TRUE(Audit("workload.token.").empty());
}

// What a third party that verified a token asks before acting on it: an
// ended job or attempt revokes it, an attempt not recorded yet is one
// being launched, and a deactivated owner revokes their work's tokens.
TEST_F(WorkloadServiceTest, ATokenIsRevokedWithItsAttemptItsJobOrItsOwner) {
  auto revoked = [&](const JobDetail& d, std::optional<int> attempt) {
    auto r = service_->Revoked(d, attempt);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? *r : "";
  };
  EXPECT_EQ(revoked(Running(), 2), "");
  EXPECT_EQ(revoked(Running(), std::nullopt), "");
  EXPECT_EQ(revoked(Running(), 3), "") << "being launched";
  JobDetail earlier = Running();
  earlier.attempts.insert(earlier.attempts.begin(), earlier.attempts[0]);
  earlier.attempts[0].number = 1;
  earlier.attempts[0].state = "preempted";
  EXPECT_EQ(revoked(earlier, 1), "attempt 1 of job job_1 has ended: its tokens died with it");
  JobDetail ended = Running();
  ended.job.state = JobState::kCancelled;
  EXPECT_EQ(revoked(ended, std::nullopt), "job job_1 has ended: its tokens died with it");
  DirectoryEntry alice;
  alice.kind = "User";
  alice.id = "u1";
  alice.name = "alice@example.com";
  alice.active = false;
  Status put = queue_->Run([&](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.PutDirectoryEntry(alice));
    AuditEvent e;
    e.time = clock_.Now();
    e.actor = "tok_idp";
    e.action = "scim.user.deactivate";
    e.resource = "user/u1";
    return tx.AppendAudit(e);
  });
  ASSERT_TRUE(put.ok()) << put.ToString();
  EXPECT_EQ(revoked(Running(), 2), "the job's owner alice@example.com is deactivated");
}

TEST_F(WorkloadServiceTest, ATokenThatCannotBeRecordedIsNotHandedOut) {
  service_->SetIssuer(issuer_.get());
  queue_->Stop();  // nothing commits any more
  auto r = service_->Refresh(Running(), "", "tok_job");
  EXPECT_FALSE(r.ok());
}

TEST_F(WorkloadServiceTest, RotationKeepsTheOldKeyPublished) {
  service_->SetIssuer(issuer_.get());
  auto before = issuer_->Jwks(clock_.Now());
  ASSERT_TRUE(before.ok());
  ASSERT_EQ((*before)["keys"].size(), 1u);
  ASSERT_TRUE(service_->RotateKeys("tok_admin").ok());
  auto after = issuer_->Jwks(clock_.Now());
  ASSERT_TRUE(after.ok());
  EXPECT_EQ((*after)["keys"].size(), 2u);
  auto minted = service_->Refresh(Running(), "", "tok_job");
  ASSERT_TRUE(minted.ok());
  EXPECT_NE(minted->kid, (*before)["keys"][0]["kid"].get<std::string>()) << "the new key signs";
}

}  // namespace
}  // namespace causeway::testing
