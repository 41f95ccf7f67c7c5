// TokenService against a real store and the commit queue: secrets are
// returned once and stored only as hashes, every change is audited without
// the secret, rotation is one unit, and a bootstrap happens only once.
#include "service/token_service.h"

#include "causeway/crypto.h"
#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

class TokenServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    tokens_ = std::make_unique<TokenService>(*store_, *queue_, clock_);
  }
  std::unique_ptr<TokenService> tokens_;
};

TEST_F(TokenServiceTest, CreatesATokenWhoseSecretIsStoredOnlyAsItsHash) {
  auto made = tokens_->Create(Admin(), "ci", {"jobs:read"}, Micros(3600LL * 1000000));
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_FALSE(made->secret.empty());
  auto stored = store_->FindTokenByHash(Sha256Hex(made->secret));
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->id, made->record.id);
  EXPECT_EQ((*stored)->scopes, std::vector<std::string>{"jobs:read"});
  ASSERT_TRUE((*stored)->expires_at.has_value());
  EXPECT_EQ(*(*stored)->expires_at, clock_.Now() + Micros(3600LL * 1000000));
  auto events = Audit("token.create");
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].actor, "tok_admin");
  EXPECT_EQ(nlohmann::json(events[0].details).dump().find(made->secret), std::string::npos) << "no secret in the trail";
}

TEST_F(TokenServiceTest, RefusesUnknownScopes) {
  auto made = tokens_->Create(Admin(), "ci", {"jobs:everything"}, Micros(0));
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(made.status().code(), Code::kInvalidArgument);
  EXPECT_TRUE(Audit("token.").empty()) << "nothing written";
}

TEST_F(TokenServiceTest, ASecondRevocationIsRefusedAndChangesNothing) {
  auto made = tokens_->Create(Admin(), "ci", {"jobs:read"}, Micros(0));
  ASSERT_TRUE(made.ok());
  auto first = tokens_->Revoke(Admin(), made->record.id);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  const Timestamp revoked_at = *first->revoked_at;
  clock_.Advance(Micros(60LL * 1000000));
  auto again = tokens_->Revoke(Admin(), made->record.id);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), Code::kFailedPrecondition);
  auto stored = store_->FindTokenByHash(Sha256Hex(made->secret));
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ(*(*stored)->revoked_at, revoked_at);
  EXPECT_EQ(Audit("token.revoke").size(), 1u);
  EXPECT_EQ(tokens_->Revoke(Admin(), "tok_nope").status().code(), Code::kNotFound);
}

TEST_F(TokenServiceTest, RotationRevokesTheOldAndKeepsWhatTheTokenIsFor) {
  auto made = tokens_->Create(Admin(), "ci", {"jobs:read", "cost:read"}, Micros(3600LL * 1000000));
  ASSERT_TRUE(made.ok());
  clock_.Advance(Micros(10LL * 1000000));
  auto rotated = tokens_->Rotate(Admin(), made->record.id);
  ASSERT_TRUE(rotated.ok()) << rotated.status().ToString();
  EXPECT_NE(rotated->record.id, made->record.id);
  EXPECT_NE(rotated->secret, made->secret);
  EXPECT_EQ(rotated->record.name, "ci");
  EXPECT_EQ(rotated->record.scopes, made->record.scopes);
  EXPECT_EQ(*rotated->record.expires_at, clock_.Now() + Micros(3600LL * 1000000)) << "the same lifetime, from now";
  auto old = store_->FindTokenByHash(Sha256Hex(made->secret));
  ASSERT_TRUE(old.ok() && old->has_value());
  EXPECT_TRUE((*old)->revoked_at.has_value());
}

TEST_F(TokenServiceTest, BootstrapsOnlyAnEmptyDatabaseAndOnlyOnceTheSecretIsKept) {
  std::string kept;
  auto failed = tokens_->Bootstrap([](const std::string&) { return Unavailable("disk full"); });
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), Code::kUnavailable);
  auto listed = tokens_->List();
  ASSERT_TRUE(listed.ok());
  EXPECT_TRUE(listed->empty()) << "a secret nobody kept makes no token";

  auto first = tokens_->Bootstrap([&](const std::string& secret) {
    kept = secret;
    return Status::Ok();
  });
  ASSERT_TRUE(first.ok() && first->has_value()) << first.status().ToString();
  EXPECT_EQ((*first)->secret, kept);
  EXPECT_EQ((*first)->record.scopes, std::vector<std::string>{"admin"});
  auto second = tokens_->Bootstrap([](const std::string&) { return Status::Ok(); });
  ASSERT_TRUE(second.ok());
  EXPECT_FALSE(second->has_value());
}

}  // namespace
}  // namespace causeway::testing
