#include "api/router.h"

#include <gtest/gtest.h>

namespace causeway::api {
namespace {

TEST(RouterTest, MatchesLiteralAndPlaceholderSegments) {
  Router r;
  int hit = 0;
  r.Add("GET", "/v1/jobs", [&](HttpRequest&, Reply) { hit = 1; });
  r.Add("GET", "/v1/jobs/{id}", [&](HttpRequest&, Reply) { hit = 2; });
  r.Add("POST", "/v1/jobs/{id}/cancel", [&](HttpRequest&, Reply) { hit = 3; });
  HttpRequest req;
  req.method = "GET";
  req.path = "/v1/jobs/job%5F1";
  auto m = r.Find(req);
  ASSERT_EQ(m.outcome, Router::Outcome::kFound);
  (*m.handler)(req, [](HttpResponse) {});
  EXPECT_EQ(hit, 2);
  EXPECT_EQ(req.params["id"], "job_1");
  EXPECT_EQ(m.pattern, "/v1/jobs/{id}");

  req.method = "DELETE";
  auto wrong = r.Find(req);
  EXPECT_EQ(wrong.outcome, Router::Outcome::kMethodNotAllowed);
  EXPECT_EQ(wrong.allowed, "GET");

  req.method = "GET";
  req.path = "/v1/nothing/here/at/all";
  EXPECT_EQ(r.Find(req).outcome, Router::Outcome::kNoSuchPath);
}

TEST(RouterTest, DecodesQueries) {
  auto q = ParseQuery("team=nlp&owner=alice%40corp.com&x=a+b&bad=%zz&flag");
  EXPECT_EQ(q["team"], "nlp");
  EXPECT_EQ(q["owner"], "alice@corp.com");
  EXPECT_EQ(q["x"], "a b");
  EXPECT_EQ(q.count("bad"), 0u);
  EXPECT_EQ(q["flag"], "");
  EXPECT_FALSE(PercentDecode("%4", false).has_value());
}

}  // namespace
}  // namespace causeway::api
