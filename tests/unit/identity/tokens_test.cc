#include "identity/tokens.h"

#include "identity/token_cache.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "causeway/crypto.h"
#include "unit/temp_db.h"

namespace causeway::identity {
namespace {

class TokensTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = db_.Open(); }
  void TearDown() override { store_.reset(); }
  MintedToken Store(std::optional<Timestamp> expires = std::nullopt) {
    return Keep(MintToken("ci", {"jobs:read"}, "system", clock_.Now(), expires));
  }
  MintedToken Keep(MintedToken t) {
    EXPECT_TRUE(store_->Write([&](WriteTx& tx) -> Status {
      RETURN_IF_ERROR(tx.InsertToken(t.record));
      AuditEvent e;
      e.action = "token.create";
      return tx.AppendAudit(e);
    }).ok());
    return t;
  }
  void RevokeInStore(const std::string& id) {
    ASSERT_TRUE(store_->Write([&](WriteTx& tx) -> Status {
      RETURN_IF_ERROR(tx.RevokeToken(id, clock_.Now()));
      AuditEvent e;
      e.action = "token.revoke";
      return tx.AppendAudit(e);
    }).ok());
  }
  ManualClock clock_;
  causeway::testing::TempDb db_;
  std::unique_ptr<causeway::Store> store_;
};

TEST_F(TokensTest, OnlyTheHashIsStored) {
  MintedToken t = Store();
  EXPECT_EQ(t.secret.substr(0, 3), "cw_");
  EXPECT_EQ(t.secret.size(), 55u);
  EXPECT_EQ(t.record.hash, Sha256Hex(t.secret));
  auto listed = store_->ListTokens();
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].hash.find("cw_"), std::string::npos);
}

TEST_F(TokensTest, AuthenticatesValidTokensAndRejectsTheRest) {
  MintedToken t = Store(clock_.Now() + std::chrono::hours(1));
  auto p = Authenticate(*store_, "Bearer " + t.secret, clock_.Now());
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->token_id, t.record.id);
  EXPECT_TRUE(p->Has("jobs:read"));
  EXPECT_FALSE(p->Has("jobs:write"));
  EXPECT_TRUE(Authenticate(*store_, "bearer " + t.secret, clock_.Now()).ok());

  struct Bad {
    std::string header;
    const char* message;
  } bad[] = {
      {"", "missing Authorization header"},
      {"Basic abc", "expected \"Bearer <token>\""},
      {"Bearer nope", "malformed token"},
      {"Bearer cw_" + std::string(52, 'a'), "unknown token"},
  };
  for (const auto& b : bad) {
    auto r = Authenticate(*store_, b.header, clock_.Now());
    ASSERT_FALSE(r.ok()) << b.header;
    EXPECT_EQ(r.status().code(), Code::kUnauthenticated);
    EXPECT_NE(r.status().message().find(b.message), std::string::npos) << r.status().message();
  }
  clock_.Advance(std::chrono::hours(2));
  auto expired = Authenticate(*store_, "Bearer " + t.secret, clock_.Now());
  EXPECT_NE(expired.status().message().find("expired"), std::string::npos);
  // No error message ever repeats the secret.
  EXPECT_EQ(expired.status().message().find(t.secret), std::string::npos);
}

TEST_F(TokensTest, RevokedTokensStopWorking) {
  MintedToken t = Store();
  ASSERT_TRUE(store_->Write([&](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.RevokeToken(t.record.id, clock_.Now()));
    AuditEvent e;
    e.action = "token.revoke";
    return tx.AppendAudit(e);
  }).ok());
  auto r = Authenticate(*store_, "Bearer " + t.secret, clock_.Now());
  EXPECT_NE(r.status().message().find("revoked"), std::string::npos);
}

TEST(ScopesTest, AdminImpliesEverythingAndUnknownScopesAreRejected) {
  Principal admin{"tok", "a", {"admin"}};
  for (auto s : kAllScopes) EXPECT_TRUE(admin.Has(s));
  EXPECT_TRUE(ValidateScopes({"jobs:read", "audit:read"}).ok());
  EXPECT_NE(ValidateScopes({"jobs:delete"}).message().find("expected one of"), std::string::npos);
  EXPECT_FALSE(ValidateScopes({}).ok());
}

// The cache answers from memory until its entry is stale or forgotten: a
// revocation elsewhere (here: straight in the store) shows within the TTL.
TEST_F(TokensTest, TheCacheHoldsAVerifiedTokenForItsTtlOnly) {
  MintedToken t = Store(clock_.Now() + std::chrono::hours(1));
  std::string header = "Bearer " + t.secret;
  TokenCache forever(std::chrono::hours(1));
  ASSERT_TRUE(forever.Authenticate(*store_, header, clock_.Now()).ok());
  RevokeInStore(t.record.id);
  EXPECT_TRUE(forever.Authenticate(*store_, header, clock_.Now()).ok()) << "answered from the cache";
  // Expiry is checked on every use, cached or not.
  auto expired = forever.Authenticate(*store_, header, clock_.Now() + std::chrono::hours(2));
  EXPECT_EQ(expired.status().code(), Code::kUnauthenticated);
  forever.Forget(t.record.id);
  auto revoked = forever.Authenticate(*store_, header, clock_.Now());
  EXPECT_NE(revoked.status().message().find("revoked"), std::string::npos) << revoked.status().ToString();

  MintedToken u = Store();
  TokenCache none(std::chrono::milliseconds(0));
  ASSERT_TRUE(none.Authenticate(*store_, "Bearer " + u.secret, clock_.Now()).ok());
  RevokeInStore(u.record.id);
  EXPECT_EQ(none.Authenticate(*store_, "Bearer " + u.secret, clock_.Now()).status().code(), Code::kUnauthenticated);
  EXPECT_EQ(none.Authenticate(*store_, "Bearer nope", clock_.Now()).status().code(), Code::kUnauthenticated);
}

// A job attempt's credential must die with the attempt: never cached.
TEST_F(TokensTest, TheCacheNeverKeepsAJobCredential) {
  MintedToken c = Keep(MintJobCredential("job_1", 1, clock_.Now(), std::chrono::hours(1)));
  TokenCache cache(std::chrono::hours(1));
  ASSERT_TRUE(cache.Authenticate(*store_, "Bearer " + c.secret, clock_.Now()).ok());
  RevokeInStore(c.record.id);
  EXPECT_EQ(cache.Authenticate(*store_, "Bearer " + c.secret, clock_.Now()).status().code(), Code::kUnauthenticated);
}

}  // namespace
}  // namespace causeway::identity
