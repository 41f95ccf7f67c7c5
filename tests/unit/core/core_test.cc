#include <gtest/gtest.h>

#include <set>

#include "causeway/clock.h"
#include "causeway/crypto.h"
#include "causeway/ids.h"
#include "causeway/money.h"
#include "causeway/resources.h"
#include "causeway/status.h"
#include "causeway/subprocess.h"
#include "causeway/text.h"

namespace causeway {
namespace {

TEST(StatusTest, OkIsCheapAndHasNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Code::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "ok");
}

TEST(StatusTest, CodesMapToHttpInOnePlace) {
  struct Row {
    Code code;
    int http;
    const char* name;
    bool retryable;
  } rows[] = {
      {Code::kInvalidArgument, 400, "invalid_argument", false},
      {Code::kNotFound, 404, "not_found", false},
      {Code::kAlreadyExists, 409, "already_exists", false},
      {Code::kConflict, 409, "conflict", false},
      {Code::kFailedPrecondition, 409, "failed_precondition", false},
      {Code::kUnauthenticated, 401, "unauthenticated", false},
      {Code::kPermissionDenied, 403, "permission_denied", false},
      {Code::kPolicyViolation, 422, "policy_violation", false},
      {Code::kPayloadTooLarge, 413, "payload_too_large", false},
      {Code::kResourceExhausted, 429, "resource_exhausted", true},
      {Code::kUnavailable, 503, "unavailable", true},
      {Code::kDeadlineExceeded, 504, "deadline_exceeded", true},
      {Code::kDataLoss, 500, "data_loss", false},
      {Code::kInternal, 500, "internal", false},
  };
  for (const auto& r : rows) {
    EXPECT_EQ(HttpStatus(r.code), r.http) << r.name;
    EXPECT_EQ(CodeName(r.code), r.name);
    EXPECT_EQ(IsRetryable(r.code), r.retryable) << r.name;
  }
}

TEST(StatusTest, DiagnosticsFormat) {
  Diagnostic d{"job.yaml", 3, 7, "resources.accelerators", "bad"};
  EXPECT_EQ(d.ToString(), "job.yaml:3:7: resources.accelerators: bad");
  Diagnostic no_pos{"", 0, 0, "name", "bad"};
  EXPECT_EQ(no_pos.ToString(), "name: bad");
}

Result<int> Half(int x) {
  if (x % 2) return InvalidArgument("odd");
  return x / 2;
}
Result<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int h, Half(x));
  return Half(h);
}

TEST(ResultTest, PropagatesTheSpecificError) {
  EXPECT_EQ(*Quarter(8), 2);
  auto r = Quarter(6);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(r.status().message(), "odd");
}

TEST(ResultTest, OkStatusIsAnInternalError) {
  Result<int> r{Status::Ok()};
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kInternal);
}

// Reading the value of an error is a bug the program stops on, naming the
// error, never undefined behaviour.
TEST(ResultDeathTest, ReadingTheValueOfAnErrorStopsWithItsMessage) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  Result<std::string> r{NotFound("job j-1 not found")};
  EXPECT_DEATH((void)r.value(), "read as a value: not_found: job j-1 not found");
  EXPECT_DEATH((void)r->size(), "job j-1 not found");
  EXPECT_DEATH((void)*std::move(r), "job j-1 not found");
}

TEST(TextTest, Utf8PrefixNeverCutsACharacter) {
  EXPECT_EQ(Utf8Prefix("abc", 10), "abc");
  EXPECT_EQ(Utf8Prefix("abcdef", 3), "abc");
  // "é" is two bytes, "€" three: a cut inside either backs off to its start.
  EXPECT_EQ(Utf8Prefix("a\xC3\xA9" "b", 2), "a");
  EXPECT_EQ(Utf8Prefix("a\xC3\xA9" "b", 3), "a\xC3\xA9");
  EXPECT_EQ(Utf8Prefix("\xE2\x82\xAC\xE2\x82\xAC", 5), "\xE2\x82\xAC");
  EXPECT_EQ(Utf8Prefix("\xE2\x82\xAC", 0), "");
}

TEST(IdsTest, SortableUniqueAndWellFormed) {
  ManualClock clock;
  std::vector<std::string> ids;
  for (int i = 0; i < 2000; ++i) {
    if (i % 500 == 0) clock.Advance(Micros(1000));
    ids.push_back(NewId("job", clock.Now()));
  }
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_LT(ids[i - 1], ids[i]) << i;
  EXPECT_EQ(std::set<std::string>(ids.begin(), ids.end()).size(), ids.size());
  EXPECT_TRUE(IsValidId(ids[0], "job"));
  EXPECT_FALSE(IsValidId(ids[0], "tok"));
  EXPECT_FALSE(IsValidId("job_short", "job"));
  EXPECT_FALSE(IsValidId("job_0000000000000000000000000U", "job"));  // U is not Crockford
}

TEST(IdsTest, LaterTimeSortsLater) {
  ManualClock clock;
  std::string a = NewId("job", clock.Now());
  clock.Advance(Micros(5000));
  std::string b = NewId("job", clock.Now());
  EXPECT_LT(a, b);
}

TEST(MoneyTest, ParsesExactly) {
  struct Row {
    const char* in;
    int64_t micros;
  } rows[] = {{"2.5", 2'500'000}, {"0.000001", 1}, {"-1.25", -1'250'000}, {"1200", 1'200'000'000}, {".5", 500'000}};
  for (const auto& r : rows) {
    auto m = Money::Parse(r.in, "USD");
    ASSERT_TRUE(m.ok()) << r.in;
    EXPECT_EQ(m->micros(), r.micros) << r.in;
  }
}

TEST(MoneyTest, RejectsWhatItCannotRepresent) {
  EXPECT_NE(Money::Parse("0.0000001", "USD").status().message().find("six decimal places"), std::string::npos);
  EXPECT_EQ(Money::Parse("1,5", "USD").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Money::Parse("", "USD").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Money::Parse("1", "usd").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Money::Parse("99999999999999999", "USD").status().code(), Code::kInvalidArgument);
}

TEST(MoneyTest, FormatsAndAdds) {
  EXPECT_EQ(Money(3'500'000, "USD").ToString(), "3.50 USD");
  EXPECT_EQ(Money(1, "EUR").ToString(), "0.000001 EUR");
  EXPECT_EQ(Money(-1'230'000, "USD").AmountString(), "-1.23");
  auto sum = Money(1, "USD").Add(Money(2, "USD"));
  EXPECT_EQ(sum->micros(), 3);
  EXPECT_EQ(Money(1, "USD").Add(Money(1, "EUR")).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(Money(INT64_MAX, "USD").Add(Money(1, "USD")).status().code(), Code::kResourceExhausted);
}

TEST(MoneyTest, ScalesWithHalfAwayFromZeroRounding) {
  Money rate(3'500'000, "USD");  // 3.50 per GPU-hour
  EXPECT_EQ(Money::Scale(rate, 90 * 60 * 8, 3600)->micros(), 42'000'000);  // 8 GPUs, 90 minutes
  EXPECT_EQ(Money::Scale(Money(1, "USD"), 1, 2)->micros(), 1);
  EXPECT_EQ(Money::Scale(Money(-1, "USD"), 1, 2)->micros(), -1);
  EXPECT_EQ(Money::Scale(Money(1, "USD"), 1, 3)->micros(), 0);
  EXPECT_EQ(Money::Scale(rate, 1, 0).status().code(), Code::kInvalidArgument);
}

TEST(ClockTest, ManualClockMovesOnlyWhenTold) {
  ManualClock c(FromUnixMicros(1000));
  EXPECT_EQ(ToUnixMicros(c.Now()), 1000);
  c.Advance(Micros(500));
  EXPECT_EQ(ToUnixMicros(c.Now()), 1500);
  c.Set(FromUnixMicros(42));
  EXPECT_EQ(ToUnixMicros(c.Now()), 42);
}

TEST(ClockTest, MonotonicTimeMovesWithAdvanceAndNeverBack) {
  ManualClock c(FromUnixMicros(1000));
  SteadyTime t0 = c.Steady();
  c.Advance(Micros(500));
  EXPECT_EQ(c.Steady() - t0, Micros(500));
  c.Set(FromUnixMicros(0));    // the wall clock set back
  c.Advance(Micros(-100));     // or moved back
  EXPECT_EQ(c.Steady() - t0, Micros(500));
  RealClock real;
  ScaledClock fast(600);
  SteadyTime r0 = real.Steady(), f0 = fast.Steady();
  EXPECT_GE(real.Steady(), r0);
  EXPECT_GE(fast.Steady(), f0);
  EXPECT_LT(fast.Steady() - f0, std::chrono::seconds(60)) << "monotonic time is not sped up";
}

TEST(ClockTest, Rfc3339RoundTripsAndAcceptsRealWorldForms) {
  auto t = ParseRfc3339("2026-11-30T17:26:25.123456Z");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(FormatRfc3339(*t), "2026-11-30T17:26:25.123456Z");
  EXPECT_EQ(*ParseRfc3339("2024-09-01 00:00:00"), *ParseRfc3339("2024-09-01T00:00:00Z"));
  EXPECT_EQ(*ParseRfc3339("2024-09-01"), *ParseRfc3339("2024-09-01T00:00:00Z"));
  EXPECT_EQ(*ParseRfc3339("2024-09-01T02:00:00+02:00"), *ParseRfc3339("2024-09-01T00:00:00Z"));
  EXPECT_EQ(ToUnixMicros(*ParseRfc3339("1970-01-01T00:00:01Z")), 1'000'000);
  for (const char* bad : {"2024-13-01", "yesterday", "2024-09-01T25:00:00Z", "2024-09-01T00:00"}) {
    EXPECT_EQ(ParseRfc3339(bad).status().code(), Code::kInvalidArgument) << bad;
  }
}

TEST(ClockTest, Durations) {
  EXPECT_EQ(*ParseDuration("90s"), Micros(90'000'000));
  EXPECT_EQ(*ParseDuration("1h30m"), Micros(5'400'000'000));
  EXPECT_EQ(*ParseDuration("2d"), Micros(172'800'000'000));
  EXPECT_EQ(*ParseDuration("45"), Micros(45'000'000));
  for (const char* bad : {"", "1x", "h", "1h30", "-5m"}) {
    EXPECT_EQ(ParseDuration(bad).status().code(), Code::kInvalidArgument) << bad;
  }
  EXPECT_EQ(FormatDuration(Micros(5'400'000'000)), "1h30m");
}

TEST(ResourcesTest, GpuRequests) {
  EXPECT_EQ(*ParseGpuRequest("H200:8"), (GpuRequest{"H200", 8}));
  EXPECT_EQ(*ParseGpuRequest("h200"), (GpuRequest{"H200", 1}));
  EXPECT_EQ(*ParseGpuRequest("a100-80gb:4"), (GpuRequest{"A100-80GB", 4}));
  EXPECT_NE(ParseGpuRequest("A100:0.5").status().message().find("fractional"), std::string::npos);
  EXPECT_FALSE(ParseGpuRequest(":8").ok());
  EXPECT_FALSE(ParseGpuRequest("8:8").ok());
  EXPECT_FALSE(ParseGpuRequest("H100:-1").ok());
  Accelerators a{{{"H100", 8}, {"A100", 8}}, true};
  EXPECT_EQ(a.ToString(), "H100:8,A100:8");
}

TEST(CryptoTest, KnownVectorsAndHelpers) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Base32Encode("foobar"), "mzxw6ytboi");
  EXPECT_EQ(RandomBytes(32).size(), 32u);
  EXPECT_NE(RandomBytes(16), RandomBytes(16));
  EXPECT_TRUE(ConstantTimeEqual("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEqual("abc", "abcd"));
}

TEST(SubprocessTest, RunsCollectsAndTimesOut) {
  auto echo = RunProcess({"sh", "-c", "cat; echo \"$GREETING\" >&2; exit 3"}, {{"GREETING", "hi"}}, "from stdin",
                         std::chrono::seconds(10));
  ASSERT_TRUE(echo.ok()) << echo.status().ToString();
  EXPECT_EQ(echo->out, "from stdin");
  EXPECT_EQ(echo->err, "hi\n");
  EXPECT_EQ(echo->exit_code, 3);
  auto missing = RunProcess({"no-such-program-here"}, {}, "", std::chrono::seconds(10));
  EXPECT_EQ(missing.status().code(), Code::kFailedPrecondition);
  auto slow = RunProcess({"sleep", "30"}, {}, "", std::chrono::milliseconds(100));
  EXPECT_EQ(slow.status().code(), Code::kDeadlineExceeded);
}

}  // namespace
}  // namespace causeway
