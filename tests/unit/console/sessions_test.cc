// Console sessions: what a cookie value stands for, for how long, how many
// are kept, and the cookie's own attributes.
#include "console/sessions.h"

#include <gtest/gtest.h>

#include <set>

namespace causeway::console {
namespace {

const Timestamp kT0 = FromUnixMicros(1'800'000'000'000'000);

TEST(SessionStoreTest, ACookieFindsItsSessionUntilItIsIdleTooLongOrPastItsEnd) {
  SessionStore store(SessionLimits{10, std::chrono::minutes(30), std::chrono::hours(2)});
  NewSession a = store.Create("Bearer cw_secret", "alice", kT0);
  EXPECT_EQ(a.cookie.size(), 43u);  // 32 random bytes, base64url
  EXPECT_EQ(a.session.csrf.size(), 43u);
  EXPECT_NE(a.cookie, a.session.csrf);
  auto found = store.Find(a.cookie, kT0 + std::chrono::minutes(29));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->bearer, "Bearer cw_secret");
  EXPECT_EQ(found->csrf, a.session.csrf);
  // Used at 29 min: alive at 58, then idle past 30 min: gone for good.
  EXPECT_TRUE(store.Find(a.cookie, kT0 + std::chrono::minutes(58)));
  EXPECT_FALSE(store.Find(a.cookie, kT0 + std::chrono::minutes(89)));
  EXPECT_FALSE(store.Find(a.cookie, kT0 + std::chrono::minutes(60)));
  EXPECT_EQ(store.size(), 0u);

  // Used every 20 minutes, it still ends two hours after sign-in.
  NewSession b = store.Create("Bearer x", "bob", kT0);
  for (int m = 20; m < 120; m += 20) EXPECT_TRUE(store.Find(b.cookie, kT0 + std::chrono::minutes(m))) << m;
  EXPECT_FALSE(store.Find(b.cookie, kT0 + std::chrono::minutes(120)));

  // A credential that ends sooner ends the session with it.
  NewSession c = store.Create("Bearer jwt", "carol", kT0, kT0 + std::chrono::minutes(10));
  EXPECT_EQ(c.session.expires, kT0 + std::chrono::minutes(10));
  EXPECT_FALSE(store.Find(c.cookie, kT0 + std::chrono::minutes(10)));
}

TEST(SessionStoreTest, OnlyTheExactCookieValueFindsASessionAndRemoveEndsIt) {
  SessionStore store;
  NewSession a = store.Create("Bearer t", "alice", kT0);
  std::string other = a.cookie;
  other.back() = other.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE(store.Find(other, kT0));
  EXPECT_FALSE(store.Find("", kT0));
  EXPECT_FALSE(store.Find(std::string(4096, 'a'), kT0));
  EXPECT_FALSE(store.Find(a.session.csrf, kT0)) << "the CSRF token is not a session";
  EXPECT_TRUE(store.Remove(a.cookie));
  EXPECT_FALSE(store.Remove(a.cookie));
  EXPECT_FALSE(store.Find(a.cookie, kT0));
}

TEST(SessionStoreTest, AtCapacityTheSessionClosestToItsEndGoes) {
  SessionStore store(SessionLimits{3, std::chrono::hours(1), std::chrono::hours(8)});
  std::vector<NewSession> made;
  for (int i = 0; i < 3; ++i) made.push_back(store.Create("Bearer " + std::to_string(i), "p", kT0 + std::chrono::minutes(i)));
  ASSERT_TRUE(store.Find(made[0].cookie, kT0 + std::chrono::minutes(5)));  // used: the first is now the freshest
  NewSession d = store.Create("Bearer 3", "p", kT0 + std::chrono::minutes(6));
  EXPECT_EQ(store.size(), 3u);
  EXPECT_TRUE(store.Find(made[0].cookie, kT0 + std::chrono::minutes(7)));
  EXPECT_FALSE(store.Find(made[1].cookie, kT0 + std::chrono::minutes(7)));
  EXPECT_TRUE(store.Find(made[2].cookie, kT0 + std::chrono::minutes(7)));
  EXPECT_TRUE(store.Find(d.cookie, kT0 + std::chrono::minutes(7)));
  // Every value is new.
  std::set<std::string> values;
  for (int i = 0; i < 100; ++i) values.insert(store.Create("Bearer", "p", kT0).cookie);
  EXPECT_EQ(values.size(), 100u);
}

TEST(SessionCookieTest, TheCookieIsHttpOnlyStrictAndSecureBehindTls) {
  std::string plain = SessionCookie("v", std::chrono::seconds(3600), false);
  EXPECT_EQ(plain, "causeway_session=v; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600");
  EXPECT_EQ(SessionCookie("v", std::chrono::seconds(3600), true), plain + "; Secure");
  EXPECT_NE(SessionCookie("", std::chrono::seconds(0), false).find("Max-Age=0"), std::string::npos);
}

TEST(SessionCookieTest, CookieValueReadsTheNamedPairOnly) {
  EXPECT_EQ(CookieValue("causeway_session=abc", "causeway_session"), "abc");
  EXPECT_EQ(CookieValue("a=1; causeway_session=abc; b=2", "causeway_session"), "abc");
  EXPECT_EQ(CookieValue("a=1;causeway_session=\"abc\"", "causeway_session"), "abc");
  EXPECT_EQ(CookieValue("xcauseway_session=abc", "causeway_session"), "");
  EXPECT_EQ(CookieValue("causeway_session_x=abc", "causeway_session"), "");
  EXPECT_EQ(CookieValue("causeway_session=first; causeway_session=second", "causeway_session"), "first");
  EXPECT_EQ(CookieValue("", "causeway_session"), "");
  EXPECT_EQ(CookieValue(";;; =; causeway_session", "causeway_session"), "");
  EXPECT_EQ(CookieValue("causeway_session=\"", "causeway_session"), "\"");
}

}  // namespace
}  // namespace causeway::console
