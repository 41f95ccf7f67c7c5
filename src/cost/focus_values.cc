// FOCUS values read and written exactly: dates and times as the files
// spell them, decimals as integer picos (10^-12 of a currency unit) with
// no floating point, and the specification's versions.
#include <cctype>
#include <cstdio>

#include "cost/focus.h"

namespace causeway::cost {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool Digits(std::string_view s, size_t at, size_t n, int& out) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  out = v;
  return true;
}

// M/D/YY or M/D/YYYY, as spreadsheets write dates.
std::optional<int64_t> ParseSlashDate(std::string_view s) {
  int part[3] = {0, 0, 0};
  int len[3] = {0, 0, 0};
  size_t k = 0;
  for (char c : s) {
    if (c == '/') {
      if (++k > 2) return std::nullopt;
    } else if (c >= '0' && c <= '9') {
      part[k] = part[k] * 10 + (c - '0');
      if (++len[k] > 4) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (k != 2 || len[0] == 0 || len[1] == 0 || (len[2] != 2 && len[2] != 4)) return std::nullopt;
  int year = len[2] == 2 ? 2000 + part[2] : part[2];
  if (part[0] < 1 || part[0] > 12 || part[1] < 1 || part[1] > 31) return std::nullopt;
  return DaysFromCivil(year, static_cast<unsigned>(part[0]), static_cast<unsigned>(part[1])) * 86400 * 1000000;
}

}  // namespace

std::string DayOf(int64_t unix_us) {
  int64_t z = (unix_us >= 0 ? unix_us : unix_us - 86400000000 + 1) / 86400000000 + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = static_cast<int64_t>(yoe) + era * 400 + (m <= 2);
  char out[32];
  std::snprintf(out, sizeof out, "%04lld-%02u-%02u", static_cast<long long>(y), m % 100, d % 100);
  return out;
}

std::string FocusVersionName(FocusVersion v) { return std::to_string(v / 10) + "." + std::to_string(v % 10); }

std::optional<FocusVersion> ParseFocusVersion(std::string_view text) {
  for (FocusVersion v : kFocusVersions) {
    if (text == FocusVersionName(v)) return v;
  }
  return std::nullopt;
}

std::optional<int64_t> ParseFocusTime(std::string_view s, bool* exact) {
  if (exact) *exact = false;
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  if (!(Digits(s, 0, 4, y) && s.size() >= 10 && s[4] == '-' && Digits(s, 5, 2, mo) && s[7] == '-' &&
        Digits(s, 8, 2, d))) {
    return ParseSlashDate(s);
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31) return std::nullopt;
  size_t i = 10;
  int64_t offset_s = 0;
  bool zone = false;
  if (i < s.size()) {
    if (s[i] != 'T' && s[i] != ' ') return std::nullopt;
    ++i;
    if (!(Digits(s, i, 2, h) && i + 2 < s.size() + 1 && s.size() >= i + 5 && s[i + 2] == ':' &&
          Digits(s, i + 3, 2, mi))) {
      return std::nullopt;
    }
    i += 5;
    if (i < s.size() && s[i] == ':') {
      if (!Digits(s, i + 1, 2, sec)) return std::nullopt;
      i += 3;
      if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;  // sub-second precision is dropped
      }
    }
    if (i < s.size()) {
      if (s[i] == 'Z' && i + 1 == s.size()) {
        zone = true;
      } else if ((s[i] == '+' || s[i] == '-') && (s.size() == i + 6 || s.size() == i + 5)) {
        int oh = 0, om = 0;
        size_t m_at = s.size() == i + 6 ? i + 4 : i + 3;
        if (!Digits(s, i + 1, 2, oh) || !Digits(s, m_at, 2, om)) return std::nullopt;
        if (s.size() == i + 6 && s[i + 3] != ':') return std::nullopt;
        offset_s = (s[i] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
      } else {
        return std::nullopt;
      }
    }
    if (h > 23 || mi > 59 || sec > 60) return std::nullopt;
    if (exact) *exact = zone && s.size() == 20 && s[10] == 'T';
  }
  int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  return (days * 86400 + h * 3600 + mi * 60 + sec - offset_s) * 1000000;
}

namespace {

// The decimal `s` times 10^scale, rounded half to even; `*inexact` says
// whether that rounding dropped anything.
std::optional<__int128> ParseScaled(std::string_view s, int scale, bool* inexact) {
  *inexact = false;
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  // Eighteen significant digits fit in 64 bits and cover every amount a
  // bill states to the pico; further digits only round.
  uint64_t mantissa64 = 0;
  int exponent = 0;  // value = mantissa * 10^exponent
  int digits = 0;
  bool sticky = false;  // a nonzero digit beyond what the mantissa holds
  bool any = false, dot = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      any = true;
      if (digits < 18) {
        mantissa64 = mantissa64 * 10 + static_cast<uint64_t>(c - '0');
        if (mantissa64 != 0) ++digits;
        if (dot) --exponent;
      } else {
        if (!dot) ++exponent;
        sticky |= c != '0';
      }
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      break;
    }
  }
  __int128 mantissa = mantissa64;
  if (!any) return std::nullopt;
  if (i < s.size()) {
    if (s[i] != 'e' && s[i] != 'E') return std::nullopt;
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
    int e = 0;
    size_t start = i;
    for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
      if (e < 10000) e = e * 10 + (s[i] - '0');
    }
    if (i == start || i != s.size()) return std::nullopt;
    exponent += eneg ? -e : e;
  }
  int shift = exponent + scale;
  // Powers of ten up to 10^38, the most 128 bits hold.
  static constexpr auto kPow10 = [] {
    std::array<__int128, 39> p{};
    p[0] = 1;
    for (size_t k = 1; k < p.size(); ++k) p[k] = p[k - 1] * 10;
    return p;
  }();
  constexpr __int128 kMax = static_cast<__int128>(1) << 120;
  // The largest mantissa each power may scale without passing kMax.
  static constexpr auto kScalable = [] {
    std::array<__int128, 39> m{};
    for (size_t k = 0; k < m.size(); ++k) m[k] = kMax / kPow10[k];
    return m;
  }();
  if (shift >= 0) {
    *inexact = sticky;  // significant digits past the eighteenth
    if (mantissa != 0 && (shift > 38 || mantissa > kScalable[static_cast<size_t>(shift)])) return std::nullopt;
    if (mantissa != 0) mantissa *= kPow10[static_cast<size_t>(shift)];
  } else if (-shift > 38) {
    *inexact = mantissa != 0 || sticky;
    mantissa = 0;  // below the smallest unit
  } else {
    const __int128 divisor = kPow10[static_cast<size_t>(-shift)];
    __int128 q = mantissa / divisor, r = mantissa % divisor;
    *inexact = r != 0 || sticky;
    __int128 twice = 2 * r;
    if (twice > divisor || (twice == divisor && (sticky || (q & 1)))) ++q;
    mantissa = q;
  }
  return negative ? -mantissa : mantissa;
}

}  // namespace

std::optional<Picos> ParsePicos(std::string_view s, bool* rounded) {
  bool inexact = false;
  auto v = ParseScaled(s, 12, &inexact);
  if (rounded) *rounded = inexact;
  constexpr Picos kLimit = static_cast<Picos>(100000000000000000LL) * 1000 * 1000000000000LL;  // 1e20 units
  if (!v || *v > kLimit || *v < -kLimit) return std::nullopt;
  return v;
}

std::optional<Picos> ParseSpreadsheetMoney(std::string_view s) {
  std::string plain;
  bool negative = false;
  size_t b = 0, e = s.size();
  while (b < e && s[b] == ' ') ++b;
  while (e > b && s[e - 1] == ' ') --e;
  if (e - b >= 2 && s[b] == '(' && s[e - 1] == ')') negative = true, ++b, --e;
  for (size_t i = b; i < e; ++i) {
    char c = s[i];
    if (c == '$' || c == ' ') continue;
    if (c == ',') {
      // Only as a thousands separator: digits on both sides.
      if (i == b || i + 1 >= e || !std::isdigit(static_cast<unsigned char>(s[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
        return std::nullopt;
      }
      continue;
    }
    plain += c;
  }
  auto v = ParsePicos(plain);
  if (!v) return std::nullopt;
  return negative ? -*v : *v;
}

std::string PicosText(Picos v) {
  bool negative = v < 0;
  unsigned __int128 mag = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  constexpr unsigned __int128 kUnit = 1000000000000ULL;
  auto digits = [](unsigned __int128 x) {
    std::string out;
    do {
      out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(x % 10)));
      x /= 10;
    } while (x != 0);
    return out;
  };
  std::string frac = digits(mag % kUnit);
  frac.insert(0, 12 - frac.size(), '0');
  while (frac.size() > 2 && frac.back() == '0') frac.pop_back();
  return (negative ? "-" : "") + digits(mag / kUnit) + "." + frac;
}

std::string HundredthsText(Picos v) {
  constexpr Picos kCent = 10000000000LL;
  return PicosText((v >= 0 ? v + kCent / 2 : v - kCent / 2) / kCent * kCent);
}

std::optional<Nanos> PicosToNanos(Picos v) {
  Picos q = v / 1000, r = v % 1000;
  if (r < 0) r += 1000, q -= 1;  // floor division, remainder in [0, 1000)
  if (r > 500 || (r == 500 && (q & 1))) ++q;
  if (q > INT64_MAX || q < INT64_MIN) return std::nullopt;
  return static_cast<Nanos>(q);
}

}  // namespace causeway::cost
