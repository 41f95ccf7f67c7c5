// The SIEM's HTTP collector as a sink: each batch one POST of OCSF JSON
// lines carrying the collector's token, and the collector's answer sorted
// into delivered, worth retrying, and refused.
#include <gtest/gtest.h>

#include "audit/sinks.h"
#include "fakes/fake_fetcher.h"

namespace causeway::testing {
namespace {

constexpr char kUrl[] = "https://siem.example.com/ingest";

std::unique_ptr<audit::Sink> Open(FakeFetcher& http, std::string token = "") {
  audit::SinkOptions o;
  o.url = kUrl;
  o.bearer_token = std::move(token);
  o.http = &http;
  auto sink = audit::OpenSink(o);
  EXPECT_TRUE(sink.ok()) << sink.status().ToString();
  return std::move(*sink);
}

TEST(HttpSinkTest, ABatchIsOnePostOfJsonLinesWithTheCollectorsToken) {
  FakeFetcher http;
  http.Answer(kUrl, 202);
  auto sink = Open(http, "s3cret-token");
  ASSERT_TRUE(sink->Send({R"({"class_uid":6003})", R"({"class_uid":3002})"}).ok());
  auto sent = http.requests();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].method, net::OutboundRequest::Method::kPost);
  EXPECT_EQ(sent[0].content_type, "application/x-ndjson");
  EXPECT_EQ(sent[0].body, "{\"class_uid\":6003}\n{\"class_uid\":3002}\n");
  ASSERT_EQ(sent[0].headers.size(), 1u);
  EXPECT_EQ(sent[0].headers[0].first, "Authorization");
  EXPECT_EQ(sent[0].headers[0].second, "Bearer s3cret-token");
  EXPECT_EQ(sink->Describe().find("s3cret"), std::string::npos) << "the token is never described";
}

TEST(HttpSinkTest, TheCollectorsAnswerSaysWhetherToRetry) {
  FakeFetcher http;
  auto sink = Open(http);
  for (int status : {408, 429, 500, 503}) {
    http.Answer(kUrl, status);
    EXPECT_EQ(sink->Send({"{}"}).code(), Code::kUnavailable) << status << " is worth retrying";
  }
  http.Answer(kUrl, 401);
  EXPECT_EQ(sink->Send({"{}"}).code(), Code::kPermissionDenied);
  http.Answer(kUrl, 400);
  EXPECT_EQ(sink->Send({"{}"}).code(), Code::kInvalidArgument) << "refused: retrying will not help";
  http.Fail(kUrl, Status(Code::kDeadlineExceeded, "no answer within 30 s"));
  EXPECT_FALSE(sink->Send({"{}"}).ok()) << "a collector that does not answer fails the batch";
}

}  // namespace
}  // namespace causeway::testing
