#include "causeway/clock.h"

#include <cctype>
#include <algorithm>
#include <cstdio>
#include <ctime>

namespace causeway {

Timestamp RealClock::Now() const {
  return std::chrono::time_point_cast<Micros>(std::chrono::system_clock::now());
}

ScaledClock::ScaledClock(double factor, Timestamp start)
    : real_origin_(real_.Now()), origin_(std::max(start, real_origin_)), factor_(factor) {}

Timestamp ScaledClock::Now() const {
  int64_t elapsed = ToUnixMicros(real_.Now()) - ToUnixMicros(real_origin_);
  return FromUnixMicros(ToUnixMicros(origin_) + static_cast<int64_t>(static_cast<double>(elapsed) * factor_));
}

std::string FormatRfc3339(Timestamp t) {
  int64_t us = ToUnixMicros(t);
  int64_t secs = us >= 0 ? us / 1'000'000 : (us - 999'999) / 1'000'000;
  int64_t frac = us - secs * 1'000'000;
  time_t tt = static_cast<time_t>(secs);
  struct tm tm {};
  gmtime_r(&tt, &tm);
  char buf[96];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(frac));
  return buf;
}

namespace {

// Reads exactly `n` digits at `pos`, advancing it.
bool ReadDigits(std::string_view s, size_t& pos, int n, int& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (int i = 0; i < n; ++i) {
    char c = s[pos + i];
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    out = out * 10 + (c - '0');
  }
  pos += n;
  return true;
}

bool Expect(std::string_view s, size_t& pos, char c) {
  if (pos < s.size() && s[pos] == c) {
    ++pos;
    return true;
  }
  return false;
}

// Days from 1970-01-01 to the given civil date (proleptic Gregorian).
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

}  // namespace

Result<Timestamp> ParseRfc3339(std::string_view s) {
  auto bad = [&] {
    return InvalidArgument("invalid timestamp \"" + std::string(s) +
                           "\": expected YYYY-MM-DD[THH:MM:SS[.frac]][Z|+HH:MM]");
  };
  size_t pos = 0;
  int year, month, day, hour = 0, minute = 0, second = 0;
  if (!ReadDigits(s, pos, 4, year) || !Expect(s, pos, '-') || !ReadDigits(s, pos, 2, month) ||
      !Expect(s, pos, '-') || !ReadDigits(s, pos, 2, day)) {
    return bad();
  }
  int64_t frac_us = 0;
  int offset_s = 0;
  if (pos < s.size() && (s[pos] == 'T' || s[pos] == 't' || s[pos] == ' ')) {
    ++pos;
    if (!ReadDigits(s, pos, 2, hour) || !Expect(s, pos, ':') || !ReadDigits(s, pos, 2, minute) ||
        !Expect(s, pos, ':') || !ReadDigits(s, pos, 2, second)) {
      return bad();
    }
    if (Expect(s, pos, '.')) {
      int digits = 0;
      while (pos < s.size() && std::isdigit(static_cast<unsigned char>(s[pos]))) {
        if (digits < 6) frac_us = frac_us * 10 + (s[pos] - '0');
        ++digits;
        ++pos;
      }
      if (digits == 0) return bad();
      for (int i = digits; i < 6; ++i) frac_us *= 10;
    }
    if (pos < s.size()) {
      if (s[pos] == 'Z' || s[pos] == 'z') {
        ++pos;
      } else if (s[pos] == '+' || s[pos] == '-') {
        int sign = s[pos] == '-' ? -1 : 1;
        ++pos;
        int oh, om;
        if (!ReadDigits(s, pos, 2, oh)) return bad();
        Expect(s, pos, ':');
        if (!ReadDigits(s, pos, 2, om)) return bad();
        offset_s = sign * (oh * 3600 + om * 60);
      }
    }
  }
  if (pos != s.size()) return bad();
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 ||
      second > 60) {
    return bad();
  }
  int64_t secs = DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) *
                     86400 +
                 hour * 3600 + minute * 60 + second - offset_s;
  return FromUnixMicros(secs * 1'000'000 + frac_us);
}

}  // namespace causeway
