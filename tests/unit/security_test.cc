// The bounds on untrusted input and the deadlines on outbound calls, each
// against the hostile input or hanging peer that used to break it.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "silent_peer.h"
#include "providers/registry.h"
#include "api/api_helpers.h"
#include "api/http_types.h"
#include "audit/sinks.h"
#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/json_input.h"
#include "causeway/job_spec.h"
#include "identity/scim/scim_filter.h"
#include "identity/scim/scim_patch.h"
#include "identity/scim/scim_schema.h"
#include "net/fetch.h"
#include "net/http_client.h"
#include "providers/slurm/slurm_client.h"
#include "telemetry/prometheus.h"
#include "telemetry/samples.h"

namespace causeway {
namespace {

using testing::SilentPeer;

using nlohmann::json;

std::string Repeat(std::string_view s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; ++i) out += s;
  return out;
}

TEST(InputTest, JsonNestingIsBoundedBeforeAnythingRecurses) {
  EXPECT_TRUE(CheckJsonNesting(Repeat("[", 64) + Repeat("]", 64), "body").ok());
  Status deep = CheckJsonNesting(Repeat("[", 65) + Repeat("]", 65), "body");
  EXPECT_EQ(deep.code(), Code::kInvalidArgument);
  EXPECT_NE(deep.message().find("limit of 64"), std::string::npos) << deep.message();
  // Brackets inside strings (escaped quotes included) do not count.
  EXPECT_TRUE(CheckJsonNesting("{\"a\": \"" + Repeat("[{", 500) + "\\\"" + Repeat("[", 100) + "\"}", "body").ok());
  // What killed the server: a spec 100,000 levels deep, well under the body limit.
  std::string spec = "{\"spec\":" + Repeat("{\"a\":", 100000) + "1" + Repeat("}", 100000) + "}";
  auto parsed = ParseUntrustedJson(spec, "request body");
  EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument);
  ASSERT_FALSE(parsed.status().diagnostics().empty());
  EXPECT_EQ(parsed.status().diagnostics()[0].line, 1);
  EXPECT_EQ(parsed.status().diagnostics()[0].column, 8 + 5 * 63 + 1);  // the 65th level
}

TEST(InputTest, NumbersPastADoubleAreRefusedNotThrown) {
  // Found by fuzzing (fuzz/regressions/telemetry): nlohmann throws
  // out_of_range, not parse_error, for 1e999.
  auto r = ParseUntrustedJson("{\"a\": 555555555550E555550}", "request body");
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
}

TEST(InputTest, MalformedJsonNamesItsPosition) {
  auto r = ParseUntrustedJson("{\n  \"a\": tru\n}", "request body");
  ASSERT_EQ(r.status().code(), Code::kInvalidArgument);
  ASSERT_FALSE(r.status().diagnostics().empty());
  EXPECT_EQ(r.status().diagnostics()[0].line, 2);
}

TEST(InputTest, Utf8IsCheckedByTheRules) {
  struct Case {
    std::string text;
    std::optional<size_t> bad_at;
  };
  const Case cases[] = {
      {"plain ascii", std::nullopt},
      {"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", std::nullopt},
      {"a\xff", 1},
      {"\xc0\xaf", 0},          // overlong '/'
      {"\xe0\x80\xaf", 0},      // overlong
      {"\xed\xa0\x80", 0},      // a surrogate
      {"\xf4\x90\x80\x80", 0},  // past U+10FFFF
      {"ok\xe2\x82", 2},        // cut short
      {"x\n\n  \x80", 5},
  };
  for (const Case& c : cases) {
    auto bad = FindInvalidUtf8(c.text);
    ASSERT_EQ(bad.has_value(), c.bad_at.has_value()) << c.text;
    if (bad) {
      EXPECT_EQ(bad->offset, *c.bad_at) << c.text;
    }
  }
  EXPECT_EQ(FindInvalidUtf8("x\n\n  \x80")->line, 3);
  EXPECT_EQ(FindInvalidUtf8("x\n\n  \x80")->column, 3);
}

TEST(InputTest, NamesRefuseControlCharacters) {
  EXPECT_TRUE(CheckName("bob@example.com", "userName").ok());
  EXPECT_TRUE(CheckName("J\xc3\xbcrgen M\xc3\xbcller", "displayName").ok());
  for (std::string bad : {std::string("bob@example.com\0evil", 20), std::string("a\nb"), std::string("tab\there"),
                          std::string("del\x7f"), std::string("c1\xc2\x85"), std::string("not utf8 \xff"),
                          std::string(""), std::string(300, 'a')}) {
    Status st = CheckName(bad, "userName");
    EXPECT_EQ(st.code(), Code::kInvalidArgument) << bad;
    EXPECT_NE(st.message().find("userName"), std::string::npos);
    EXPECT_EQ(st.message().find("evil"), std::string::npos) << "the value is not repeated";
  }
}

TEST(InputTest, DurationsOutOfRangeAreRefused) {
  EXPECT_EQ(*ParseDuration("36500d"), std::chrono::hours(24 * 36500));
  for (const char* bad : {"106751991d", "99999999999d", "3000000000000s", "36700d"}) {
    auto d = ParseDuration(bad);
    EXPECT_EQ(d.status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(InputTest, ScimFiltersAndPathsAreBoundedBeforeRecursion) {
  const auto& users = identity::scim::UserType();
  // 2,500 nested parentheses in a filter, 3,000 in a PATCH path: refused, named.
  auto filter = identity::scim::ParseFilter(users, Repeat("(", 2500) + "userName eq \"a\"" + Repeat(")", 2500));
  EXPECT_EQ(filter.status().code(), Code::kInvalidArgument);
  auto path = identity::scim::ParsePath(users, "emails[" + Repeat("(", 3000) + "value eq \"a\"" + Repeat(")", 3000) + "]");
  EXPECT_EQ(path.status().code(), Code::kInvalidArgument);
  auto nested = identity::scim::ParseFilter(users, Repeat("(", 17) + "userName eq \"a\"" + Repeat(")", 17));
  EXPECT_NE(nested.status().message().find("limit of 16"), std::string::npos) << nested.status().message();
  EXPECT_TRUE(identity::scim::ParseFilter(users, Repeat("(", 16) + "userName eq \"a\"" + Repeat(")", 16)).ok());
  // A long chain of "or" (a tree as deep as it is long) is bounded too.
  std::string chain = "userName eq \"a\"";
  for (int i = 0; i < 300; ++i) chain += " or userName eq \"a\"";
  auto terms = identity::scim::ParseFilter(users, chain);
  EXPECT_NE(terms.status().message().find("terms"), std::string::npos) << terms.status().message();
  // And a PATCH whose path nests: refused, not a crash.
  json body = {{"schemas", {"urn:ietf:params:scim:api:messages:2.0:PatchOp"}},
               {"Operations", {{{"op", "remove"}, {"path", Repeat("(", 3000)}}}}};
  auto patched = identity::scim::ApplyPatch(users, json{{"userName", "a"}}, body);
  EXPECT_EQ(patched.status().code(), Code::kInvalidArgument);
}

TEST(InputTest, YamlThatIsNotUtf8OrNestsTooDeepIsRefusedWithItsPosition) {
  auto bad = ParseJobSpec("name: caf\xe9\nresources: {accelerators: H100:1}\n", "job.yaml");
  ASSERT_EQ(bad.status().code(), Code::kInvalidArgument);
  ASSERT_FALSE(bad.status().diagnostics().empty());
  EXPECT_EQ(bad.status().diagnostics()[0].line, 1);
  EXPECT_EQ(bad.status().diagnostics()[0].column, 10);
  EXPECT_NE(bad.status().message().find("UTF-8"), std::string::npos);
  auto deep = ParseJobSpec("name: x\nlabels: " + Repeat("[", 100000) + Repeat("]", 100000) + "\n", "job.yaml");
  EXPECT_EQ(deep.status().code(), Code::kInvalidArgument);
  EXPECT_NE(deep.status().message().find("deeper"), std::string::npos) << deep.status().message();
  // An unknown key a megabyte long is reported without a megabyte-squared table.
  auto huge = ParseJobSpec(std::string(1 << 20, 'k') + ": 1\n", "job.yaml");
  EXPECT_EQ(huge.status().code(), Code::kInvalidArgument);
}

TEST(InputTest, LabelsAndNamesWithControlCharactersAreRefused) {
  auto spec = ParseJobSpec("name: x\nlabels: {owner: \"bob@example.com\\0evil\", team: nlp}\nresources: {accelerators: H100:1}\n",
                           "job.yaml");
  ASSERT_EQ(spec.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(spec.status().diagnostics()[0].field, "labels.owner");
}

TEST(TelemetryBoundsTest, ParsersRefuseOutOfRangeNumbers) {
  telemetry::SeriesFormat f;
  auto far = telemetry::ParseExposition("DCGM_FI_DEV_GPU_UTIL{causeway_job=\"j\",gpu=\"0\"} 5 9223372036854775807\n", f,
                                        Timestamp());
  EXPECT_EQ(far.status().code(), Code::kInvalidArgument);
  auto huge = telemetry::ParseExposition("DCGM_FI_DEV_GPU_UTIL{causeway_job=\"j\",gpu=\"99999999999\"} 1e300\n", f,
                                         Timestamp());
  ASSERT_TRUE(huge.ok()) << huge.status().ToString();
  EXPECT_EQ((*huge)[0].utilization_percent, 100);
  EXPECT_EQ((*huge)[0].gpu, -1);  // out of range: no GPU, refused when pushed
  json matrix = {{"status", "success"},
                 {"data", {{"result", {{{"metric", {{"__name__", "DCGM_FI_DEV_GPU_UTIL"}, {"causeway_job", "j"}}},
                                        {"values", {{1e300, "5"}}}}}}}}};
  EXPECT_EQ(telemetry::ParsePrometheusMatrix(matrix, f).status().code(), Code::kInvalidArgument);
  // Found by fuzzing (fuzz/regressions/telemetry): a series without values
  // (or without labels) read a missing key through const operator[].
  for (const char* answer : {R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"causeway_job":"j"}}]}})",
                             R"({"status":"success","data":{"result":[{"values":[]}]}})",
                             R"({"status":"success"})"}) {
    EXPECT_EQ(telemetry::ParsePrometheusMatrix(json::parse(answer), f).status().code(), Code::kInvalidArgument) << answer;
  }
}

TEST(TelemetryBoundsTest, TheSampleStoreHoldsNoMoreThanItsLimits) {
  Timestamp t0 = FromUnixMicros(1'764'590'400'000'000);
  std::vector<GpuSample> samples;
  for (int gpu = 0; gpu < 5; ++gpu) {
    for (int i = 0; i < 50; ++i) samples.push_back(GpuSample{"job_1", 1, "", gpu, t0 + std::chrono::seconds(i), 50});
  }
  // The series bound.
  telemetry::SampleStore few(std::chrono::minutes(30), std::chrono::minutes(2), telemetry::SampleLimits{1000, 3});
  auto added = few.Add(samples);
  EXPECT_EQ(few.series(), 3u);
  EXPECT_EQ(added.kept, 150u);
  EXPECT_EQ(added.full, 100u);
  // The point bound.
  telemetry::SampleStore small(std::chrono::minutes(30), std::chrono::minutes(2), telemetry::SampleLimits{100, 10});
  added = small.Add(samples);
  EXPECT_EQ(small.points(), 100u);
  EXPECT_EQ(added.kept, 100u);
  EXPECT_EQ(added.full, 150u);
  EXPECT_TRUE(small.full());
  // Pruning gives the room back.
  small.Prune(t0 + std::chrono::hours(2));
  EXPECT_EQ(small.points(), 0u);
  EXPECT_EQ(small.Add({GpuSample{"job_1", 1, "", 0, t0 + std::chrono::hours(2), 10}}).kept, 1u);
}

TEST(HttpFramingTest, OnlyChunkedAloneIsAccepted) {
  using api::FramingAccepted;
  EXPECT_TRUE(FramingAccepted({}, true));
  EXPECT_TRUE(FramingAccepted({}, false));
  EXPECT_TRUE(FramingAccepted({"chunked"}, false));
  EXPECT_TRUE(FramingAccepted({" Chunked "}, false));
  for (std::string_view bad : {"xchunked", "chunked, identity", "gzip", "identity", "gzip, chunked", "chunked;q=1", ""}) {
    EXPECT_FALSE(FramingAccepted({bad}, false)) << bad;
  }
  EXPECT_FALSE(FramingAccepted({"chunked"}, true));  // beside a Content-Length
  EXPECT_FALSE(FramingAccepted({"chunked", "chunked"}, false));
}

TEST(HttpFramingTest, ObsoleteLineFoldingIsFound) {
  using api::FoldsHeaderLines;
  EXPECT_FALSE(FoldsHeaderLines("GET / HTTP/1.1\r\nHost: x\r\nX-A: one two\r\n"));
  EXPECT_TRUE(FoldsHeaderLines("GET / HTTP/1.1\r\nHost: x\r\nX-A: one\r\n two\r\n"));
  EXPECT_TRUE(FoldsHeaderLines("GET / HTTP/1.1\r\nAuthorization:\r\n\tBearer x\r\n"));
  EXPECT_FALSE(FoldsHeaderLines(""));
  EXPECT_FALSE(FoldsHeaderLines("GET / HTTP/1.1\r\n"));  // nothing after the last CRLF
}

TEST(JsonBodyTest, EveryWrongTypeIsA400NamingTheField) {
  api::JsonBody body(json{{"name", 5}, {"scopes", "admin"}, {"ok", "yes"}, {"n", 1.5}, {"big", 18446744073709551615ull}});
  auto name = body.String("name");
  EXPECT_EQ(name.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(name.status().diagnostics()[0].field, "name");
  EXPECT_EQ(body.Strings("scopes").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(body.Bool("ok").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(body.Int("n", 0, 10).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(body.Int("big", 0, INT64_MAX).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(*body.String("absent", "fallback"), "fallback");
  EXPECT_EQ(body.RequiredString("absent", "a name").status().code(), Code::kInvalidArgument);
}

TEST(BreakglassConfigTest, OffUnlessConfiguredAndSelfApprovalMustBeSaid) {
  auto plain = providers::ParseEstate(DefaultEstateYaml(), "estate.yaml");
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->identity.breakglass.enabled);
  auto with = [](const std::string& section) {
    return providers::ParseEstate(std::string(DefaultEstateYaml()) + "\nidentity:\n  breakglass: " + section + "\n", "estate.yaml");
  };
  auto good = with("{roles: [platform], groups: [sre-oncall]}");
  ASSERT_TRUE(good.ok()) << good.status().ToString();
  EXPECT_TRUE(good->identity.breakglass.enabled);
  EXPECT_EQ(good->identity.breakglass.approvers, 1);  // another person, by default
  EXPECT_FALSE(with("{roles: [platform]}").ok());                               // no groups
  EXPECT_FALSE(with("{groups: [sre-oncall]}").ok());                            // no roles
  EXPECT_FALSE(with("{roles: [platform], groups: [g], approvers: 0}").ok());    // self-approval unsaid
  auto self = with("{roles: [platform], groups: [g], self_approval: true}");
  ASSERT_TRUE(self.ok()) << self.status().ToString();
  EXPECT_EQ(self->identity.breakglass.approvers, 0);
}

TEST(DeadlineTest, EveryOutboundClientGivesUpOnAPeerThatNeverAnswers) {
  SilentPeer peer;
  constexpr auto kShort = std::chrono::milliseconds(300);
  // The CLI's and the Slurm/Prometheus adapters' client.
  net::HttpClient client("127.0.0.1", peer.port(), kShort);
  EXPECT_EQ(client.Send("GET", "/").status().code(), Code::kDeadlineExceeded);
  // OIDC discovery and JWKS, webhooks, the SIEM collector: plain and TLS
  // (the handshake is never answered).
  EXPECT_EQ(net::Fetch(peer.url("http") + "/", kShort).status().code(), Code::kDeadlineExceeded);
  EXPECT_EQ(net::Fetch(peer.url("https") + "/", kShort).status().code(), Code::kDeadlineExceeded);
  // What the services hold (net::Network()), a webhook's POST.
  net::OutboundRequest hook;
  hook.method = net::OutboundRequest::Method::kPost;
  hook.url = peer.url("http") + "/hook";
  hook.body = "{}";
  hook.content_type = "application/json";
  hook.timeout = kShort;
  EXPECT_EQ(net::Network().Send(hook).status().code(), Code::kDeadlineExceeded);
  // The audit sinks.
  for (const char* scheme : {"http", "tcp", "tls"}) {
    audit::SinkOptions o;
    o.url = peer.url(scheme) + (std::string(scheme) == "http" ? "/collector" : "");
    o.timeout = kShort;
    auto sink = audit::OpenSink(o);
    ASSERT_TRUE(sink.ok()) << sink.status().ToString();
    Status st = (*sink)->Send({"{\"class_uid\":6003}"});
    EXPECT_FALSE(st.ok()) << scheme;
    EXPECT_TRUE(st.code() == Code::kDeadlineExceeded || st.code() == Code::kUnavailable) << scheme << st.ToString();
  }
  // Prometheus.
  auto prom = telemetry::PrometheusSource::Create(peer.url("http"), {}, kShort);
  ASSERT_TRUE(prom.ok());
  EXPECT_FALSE(prom->Fetch(Timestamp(), Timestamp() + std::chrono::minutes(1), std::chrono::seconds(15)).ok());
  // slurmrestd.
  slurm::Endpoint e;
  e.url = peer.url("http");
  e.user = "root";
  e.token_command = "echo token";
  e.timeout = kShort;
  slurm::SlurmClient slurm(e);
  Status ping = slurm.Ping();
  EXPECT_FALSE(ping.ok());
  EXPECT_NE(ping.message().find("did not answer"), std::string::npos) << ping.ToString();
}

}  // namespace
}  // namespace causeway
