#include "cost/focus.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <thread>
#include <cctype>
#include <cstdio>
#include <unordered_map>
#include <utility>

#include "cost/csv.h"

namespace causeway::cost {
namespace {

enum class Type { kString, kDecimal, kDateTime, kJson };

// The FOCUS 1.2 columns (the specification's column table): name, whether
// null is allowed, whether the column is Mandatory, its data type, and the
// version that introduced it (10 = 1.0; earlier previews count as 1.0).
struct ColumnSpec {
  const char* name;
  bool nullable;
  bool mandatory;
  Type type;
  const char* introduced;
};
constexpr ColumnSpec kColumns[] = {
    {"AvailabilityZone", true, false, Type::kString, "1.0"},
    {"BilledCost", false, true, Type::kDecimal, "1.0"},
    {"BillingAccountId", false, true, Type::kString, "1.0"},
    {"BillingAccountName", true, true, Type::kString, "1.0"},
    {"BillingAccountType", false, false, Type::kString, "1.2"},
    {"BillingCurrency", false, true, Type::kString, "1.0"},
    {"BillingPeriodEnd", false, true, Type::kDateTime, "1.0"},
    {"BillingPeriodStart", false, true, Type::kDateTime, "1.0"},
    {"CapacityReservationId", true, false, Type::kString, "1.1"},
    {"CapacityReservationStatus", true, false, Type::kString, "1.1"},
    {"ChargeCategory", false, true, Type::kString, "1.0"},
    {"ChargeClass", true, true, Type::kString, "1.0"},
    {"ChargeDescription", true, true, Type::kString, "1.0"},
    {"ChargeFrequency", false, false, Type::kString, "1.0"},
    {"ChargePeriodEnd", false, true, Type::kDateTime, "1.0"},
    {"ChargePeriodStart", false, true, Type::kDateTime, "1.0"},
    {"CommitmentDiscountCategory", true, false, Type::kString, "1.0"},
    {"CommitmentDiscountId", true, false, Type::kString, "1.0"},
    {"CommitmentDiscountName", true, false, Type::kString, "1.0"},
    {"CommitmentDiscountQuantity", true, false, Type::kDecimal, "1.1"},
    {"CommitmentDiscountStatus", true, false, Type::kString, "1.0"},
    {"CommitmentDiscountType", true, false, Type::kString, "1.0"},
    {"CommitmentDiscountUnit", true, false, Type::kString, "1.1"},
    {"ConsumedQuantity", true, false, Type::kDecimal, "1.0"},
    {"ConsumedUnit", true, false, Type::kString, "1.0"},
    {"ContractedCost", false, true, Type::kDecimal, "1.0"},
    {"ContractedUnitPrice", true, false, Type::kDecimal, "1.0"},
    {"EffectiveCost", false, true, Type::kDecimal, "1.0"},
    {"InvoiceId", true, false, Type::kString, "1.2"},
    {"InvoiceIssuerName", false, true, Type::kString, "1.0"},
    {"ListCost", false, true, Type::kDecimal, "1.0"},
    {"ListUnitPrice", true, false, Type::kDecimal, "1.0"},
    {"PricingCategory", true, false, Type::kString, "1.0"},
    {"PricingCurrency", true, false, Type::kString, "1.2"},
    {"PricingCurrencyContractedUnitPrice", true, false, Type::kDecimal, "1.2"},
    {"PricingCurrencyEffectiveCost", true, false, Type::kDecimal, "1.2"},
    {"PricingCurrencyListUnitPrice", true, false, Type::kDecimal, "1.2"},
    {"PricingQuantity", true, true, Type::kDecimal, "1.0"},
    {"PricingUnit", true, true, Type::kString, "1.0"},
    {"ProviderName", false, true, Type::kString, "1.0"},
    {"PublisherName", false, true, Type::kString, "1.0"},
    {"RegionId", true, false, Type::kString, "1.0"},
    {"RegionName", true, false, Type::kString, "1.0"},
    {"ResourceId", true, false, Type::kString, "1.0"},
    {"ResourceName", true, false, Type::kString, "1.0"},
    {"ResourceType", true, false, Type::kString, "1.0"},
    {"ServiceCategory", false, true, Type::kString, "1.0"},
    {"ServiceName", false, true, Type::kString, "1.0"},
    {"ServiceSubcategory", false, false, Type::kString, "1.1"},
    {"SkuId", true, false, Type::kString, "1.0"},
    {"SkuMeter", true, false, Type::kString, "1.1"},
    {"SkuPriceDetails", true, false, Type::kJson, "1.1"},
    {"SkuPriceId", true, false, Type::kString, "1.0"},
    {"SubAccountId", true, false, Type::kString, "1.0"},
    {"SubAccountName", true, false, Type::kString, "1.0"},
    {"SubAccountType", true, false, Type::kString, "1.2"},
    {"Tags", true, false, Type::kJson, "1.0"},
};

int IntroducedIn(const ColumnSpec& c) { return c.introduced[2] == '0' ? 10 : 10 + (c.introduced[2] - '0'); }

// Allowed values of the enumerated columns (FOCUS 1.2; 1.0 and 1.1 allow
// a subset of the same spellings).
struct EnumSpec {
  const char* column;
  std::vector<std::string_view> values;
};
const std::vector<EnumSpec>& Enums() {
  static const std::vector<EnumSpec> enums = {
      {"ChargeCategory", {"Usage", "Purchase", "Tax", "Credit", "Adjustment"}},
      {"ChargeClass", {"Correction"}},
      {"ChargeFrequency", {"One-Time", "Recurring", "Usage-Based"}},
      {"PricingCategory", {"Standard", "Dynamic", "Committed", "Other"}},
      {"CommitmentDiscountStatus", {"Used", "Unused"}},
      {"CommitmentDiscountCategory", {"Spend", "Usage"}},
      {"CapacityReservationStatus", {"Used", "Unused"}},
      {"ServiceCategory",
       {"AI and Machine Learning", "Analytics", "Business Applications", "Compute", "Databases", "Developer Tools",
        "Multicloud", "Identity", "Integration", "Internet of Things", "Management and Governance", "Media",
        "Migration", "Mobile", "Networking", "Security", "Storage", "Web", "Other"}},
  };
  return enums;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

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

uint64_t FocusColumnBit(std::string_view column) {
  static_assert(std::size(kColumns) <= 64);
  for (size_t i = 0; i < std::size(kColumns); ++i) {
    if (column == kColumns[i].name) return uint64_t{1} << i;
  }
  return 0;
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

// The decimal `s` times 10^scale, rounded half to even.
std::optional<__int128> ParseScaled(std::string_view s, int scale) {
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
    if (mantissa != 0 && (shift > 38 || mantissa > kScalable[static_cast<size_t>(shift)])) return std::nullopt;
    if (mantissa != 0) mantissa *= kPow10[static_cast<size_t>(shift)];
  } else if (-shift > 38) {
    mantissa = 0;  // below the smallest unit
  } else {
    const __int128 divisor = kPow10[static_cast<size_t>(-shift)];
    __int128 q = mantissa / divisor, r = mantissa % divisor;
    __int128 twice = 2 * r;
    if (twice > divisor || (twice == divisor && (sticky || (q & 1)))) ++q;
    mantissa = q;
  }
  return negative ? -mantissa : mantissa;
}

}  // namespace

std::optional<Picos> ParsePicos(std::string_view s) {
  auto v = ParseScaled(s, 12);
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

namespace {

// What the reader does with one column of the file.
enum class Field {
  kOther,  // no rule beyond nullability
  kChargeStart, kChargeEnd, kBillingStart, kBillingEnd, kOtherTime,
  kBilled, kEffective, kList, kContracted, kConsumed, kOtherDecimal,
  kProviderName, kBillingAccountId, kSubAccountId, kRegionId, kResourceId, kResourceType, kServiceName,
  kSkuId, kCommitmentDiscountId, kConsumedUnit, kPricingUnit,
  kEnum,  // checked against Enums()
  kServiceCategory, kChargeCategory, kChargeClass, kPricingCategory, kCommitmentStatus,  // enums cost uses
  kCurrency, kPricingCurrency,
  kTags, kOtherJson,
  kCustom,  // x_ or unknown: carried, not checked
};

struct ColumnPlan {
  std::string name;  // as in the file
  const ColumnSpec* spec = nullptr;
  uint64_t bit = 0;  // FocusColumnBit
  // A text column with no rule but nullability: read in place, no memo.
  bool plain = false;
  // A decimal: amounts differ from row to row, so a memo would mostly
  // miss; parsed each time.
  bool direct = false;
  Field field = Field::kCustom;
  const EnumSpec* enumeration = nullptr;
};

// Tags' keys that carry attribution, in order of preference.
constexpr std::string_view kTeamKeys[] = {"causeway-team", "team"};
constexpr std::string_view kOwnerKeys[] = {"causeway-owner", "owner"};
constexpr std::string_view kJobKeys[] = {"causeway-job"};
constexpr std::string_view kProjectKeys[] = {"causeway-project", "project"};

// A small reader for the flat JSON objects of Tags: string keys, and values
// that are strings, numbers, booleans or null; nested values are skipped.
class TagScanner {
 public:
  // `doubled`: every quote of the JSON text appears twice (as inside a
  // quoted CSV field). `key` and `value` are scratch space, reused.
  TagScanner(std::string_view s, bool doubled, std::string& key, std::string& value)
      : s_(s), quote_(doubled ? 2 : 1), key_(key), value_(value) {}

  // Calls on(key, value) for every string-valued entry; false if the text
  // is not one JSON object.
  template <typename F>
  bool Scan(F&& on) {
    Ws();
    if (!Eat('{')) return false;
    Ws();
    if (Eat('}')) return Rest();
    while (true) {
      Ws();
      if (!String(key_)) return false;
      Ws();
      if (!Eat(':')) return false;
      Ws();
      if (Peek() == '"') {
        if (!String(value_)) return false;
        on(std::string_view(key_), std::string_view(value_));
      } else if (!SkipValue()) {
        return false;
      }
      Ws();
      if (Eat(',')) continue;
      if (Eat('}')) return Rest();
      return false;
    }
  }

 private:
  char Peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c) return false;
    i_ += c == '"' ? quote_ : 1;
    return true;
  }
  void Ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool Rest() {
    Ws();
    return i_ == s_.size();
  }
  bool String(std::string& out) {
    out.clear();
    if (!Eat('"')) return false;
    while (i_ < s_.size()) {
      // The plain run up to the next quote or backslash, in one append.
      size_t run = i_;
      while (run < s_.size() && s_[run] != '"' && s_[run] != '\\') ++run;
      out.append(s_.data() + i_, run - i_);
      i_ = run;
      if (i_ >= s_.size()) return false;
      char c = s_[i_++];
      if (c == '"') {
        i_ += quote_ - 1;
        return true;
      }
      if (i_ >= s_.size()) return false;
      char e = s_[i_++];
      if (e == '"') i_ += quote_ - 1;
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (i_ + 4 > s_.size()) return false;
          unsigned cp = 0;
          for (int k = 0; k < 4; ++k) {
            char h = s_[i_++];
            cp <<= 4;
            if (h >= '0' && h <= '9') cp |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') cp |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') cp |= static_cast<unsigned>(h - 'A' + 10);
            else return false;
          }
          // Tags are attribution keys, not text to display: code points
          // are kept as UTF-8, surrogate pairs as two units.
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: return false;
      }
    }
    return false;
  }
  bool SkipValue() {
    char c = Peek();
    if (c == '{' || c == '[') {
      int depth = 0;
      while (i_ < s_.size()) {
        char x = s_[i_];
        if (x == '"') {
          if (!String(value_)) return false;
          continue;
        }
        ++i_;
        if (x == '{' || x == '[') ++depth;
        if (x == '}' || x == ']') {
          if (--depth == 0) return true;
        }
      }
      return false;
    }
    size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ' ' && s_[i_] != '\t' && s_[i_] != '\n' &&
           s_[i_] != '\r') {
      ++i_;
    }
    std::string_view lit = s_.substr(start, i_ - start);
    if (lit == "true" || lit == "false" || lit == "null") return true;
    return !lit.empty() && ParsePicos(lit).has_value();
  }

  std::string_view s_;
  size_t i_ = 0;
  size_t quote_;
  std::string& key_;
  std::string& value_;
};

bool IsCurrencyCode(std::string_view s) {
  return s.size() == 3 && std::all_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}


// The header, read once: what to do with each column.
struct Schema {
  std::vector<ColumnPlan> plan;
  FocusVersion version = 12;
};

Result<Schema> ReadHeader(const std::string& path, const std::vector<CsvField>& header,
                          const FocusOptions& options, IssueLog& issues) {
  static const std::unordered_map<std::string_view, Field> kFieldOf = {
      {"ChargePeriodStart", Field::kChargeStart}, {"ChargePeriodEnd", Field::kChargeEnd},
      {"BillingPeriodStart", Field::kBillingStart}, {"BillingPeriodEnd", Field::kBillingEnd},
      {"BilledCost", Field::kBilled}, {"EffectiveCost", Field::kEffective}, {"ListCost", Field::kList},
      {"ContractedCost", Field::kContracted}, {"ConsumedQuantity", Field::kConsumed},
      {"ProviderName", Field::kProviderName}, {"BillingAccountId", Field::kBillingAccountId},
      {"SubAccountId", Field::kSubAccountId}, {"RegionId", Field::kRegionId}, {"ResourceId", Field::kResourceId},
      {"ResourceType", Field::kResourceType}, {"ServiceName", Field::kServiceName}, {"SkuId", Field::kSkuId},
      {"CommitmentDiscountId", Field::kCommitmentDiscountId}, {"ConsumedUnit", Field::kConsumedUnit},
      {"PricingUnit", Field::kPricingUnit}, {"BillingCurrency", Field::kCurrency},
      {"PricingCurrency", Field::kPricingCurrency}, {"Tags", Field::kTags},
      {"ServiceCategory", Field::kServiceCategory}, {"ChargeCategory", Field::kChargeCategory},
      {"ChargeClass", Field::kChargeClass}, {"PricingCategory", Field::kPricingCategory},
      {"CommitmentDiscountStatus", Field::kCommitmentStatus},
  };
  Schema schema;
  std::vector<bool> seen(std::size(kColumns), false);
  int newest = 10;
  for (const CsvField& f : header) {
    ColumnPlan p;
    p.name = std::string(f.text);
    for (const ColumnSpec& c : kColumns) {
      if (p.name == c.name || EqualsIgnoreCase(p.name, c.name)) {
        if (p.name != c.name) {
          issues.Add(1, p.name, "column-case", [&] {
            return "column '" + p.name + "' is spelled '" + c.name + "' in FOCUS (column ids are case-sensitive)";
          });
        }
        p.spec = &c;
        break;
      }
    }
    if (p.spec) {
      size_t index = static_cast<size_t>(p.spec - kColumns);
      if (seen[index]) {
        return InvalidArgument(path + ":1: column " + p.spec->name + " appears twice",
                               {Diagnostic{path, 1, 0, p.spec->name, "appears twice"}});
      }
      seen[index] = true;
      p.bit = uint64_t{1} << index;
      newest = std::max(newest, IntroducedIn(*p.spec));
      if (auto it = kFieldOf.find(p.spec->name); it != kFieldOf.end()) {
        p.field = it->second;
      } else if (p.spec->type == Type::kDateTime) {
        p.field = Field::kOtherTime;
      } else if (p.spec->type == Type::kDecimal) {
        p.field = Field::kOtherDecimal;
      } else if (p.spec->type == Type::kJson) {
        p.field = Field::kOtherJson;
      } else {
        p.field = Field::kOther;
      }
      for (const EnumSpec& e : Enums()) {
        if (p.spec->name == std::string_view(e.column)) {
          p.enumeration = &e;
          if (p.field == Field::kOther) p.field = Field::kEnum;
        }
      }
      p.plain = !p.enumeration && p.spec->type == Type::kString && p.field != Field::kCurrency &&
                p.field != Field::kPricingCurrency;
      p.direct = p.spec->type == Type::kDecimal;
    } else if (p.name.rfind("x_", 0) != 0) {
      issues.Add(1, p.name, "custom-column-prefix", [&] {
        return "column '" + p.name + "' is not a FOCUS column; custom columns must start with 'x_'";
      });
    }
    schema.plan.push_back(std::move(p));
  }
  schema.version = options.version.value_or(newest);
  bool has_period = false, has_cost = false;
  for (size_t i = 0; i < std::size(kColumns); ++i) {
    const ColumnSpec& c = kColumns[i];
    if (!seen[i] && c.mandatory && IntroducedIn(c) <= schema.version) {
      issues.Add(1, c.name, "mandatory-column", [&] {
        return std::string("mandatory column ") + c.name + " of FOCUS " + FocusVersionName(schema.version) +
               " is missing";
      });
    }
    if (seen[i] && IntroducedIn(c) > schema.version) {
      issues.Add(1, c.name, "column-version", [&] {
        return std::string("column ") + c.name + " is FOCUS " + c.introduced + ", newer than the file's " +
               FocusVersionName(schema.version);
      });
    }
    has_period |= seen[i] && std::string_view(c.name) == "ChargePeriodStart";
    has_cost |= seen[i] && (std::string_view(c.name) == "BilledCost" || std::string_view(c.name) == "EffectiveCost");
  }
  if (!has_period || !has_cost) {
    return InvalidArgument(path + ":1: not a FOCUS file: cost needs ChargePeriodStart and BilledCost or EffectiveCost",
                           {Diagnostic{path, 1, 0, has_period ? "BilledCost" : "ChargePeriodStart", "missing"}});
  }
  return schema;
}

// Turns records into FocusRows for one parsing thread, noting departures.
//
// Bills repeat themselves: the same account, currency, category, hour and
// price on thousands of rows. Each column remembers its last few texts
// (a small table indexed by a hash of the text) and what reading them gave;
// the same text again, if it raised no issue, is not read again. Only a
// text that raised an issue is checked every time, so every row's
// departures are still reported.
class RowReader {
 public:
  RowReader(const Schema& schema, uint64_t watched)
      : schema_(schema),
        watched_(watched),
        memo_(schema.plan.size() * kMemoWays),
        last_slot_(schema.plan.size(), kNoSlot),
        last_text_(schema.plan.size()) {}

  // False when the row cannot be used (noted in issues).
  bool Read(std::vector<CsvField>& fields, int64_t line, FocusRow& row);

  IssueLog issues;
  int64_t rows = 0, skipped = 0;

 private:
  // What reading one column's text gave.
  struct Memo {
    bool valid = false;  // holds a clean reading of `text`
    std::string text;
    bool quoted = false;
    bool null = false;
    int64_t time_us = 0;
    Picos amount = 0;
    bool parsed = false;           // time_us / amount hold a value
    std::string_view canonical;    // an enumeration's spelling (static)
    std::string team, owner, job, project;  // Tags
  };
  struct Flags {
    bool usable = true, has_start = false, has_cost = false;
  };

  // Reads field i into `m` (issues noted), as if new.
  void ReadColumn(const ColumnPlan& p, CsvField& f, int64_t line, Memo& m);
  // Copies what `m` says into the row.
  void Apply(const ColumnPlan& p, std::string_view text, const Memo& m, FocusRow& row, Flags& flags);
  // Sets the row's view of a text column.
  static void SetText(Field field, std::string_view text, FocusRow& row);
  // Whether the field (its text `v`) is null: empty unquoted or NULL; an
  // empty quoted string is null too, and noted, as is a null where the
  // column allows none.
  bool IsNull(const ColumnPlan& p, const CsvField& f, std::string_view v, int64_t line);
  // A plain column: null checks, then the text as it is.
  void ReadPlain(size_t i, const ColumnPlan& p, CsvField& f, int64_t line, FocusRow& row);

  static constexpr size_t kMemoWays = 8;
  static size_t Slot(std::string_view t) {
    if (t.empty()) return 0;
    return (t.size() * 7 + static_cast<unsigned char>(t.back()) * 3 + static_cast<unsigned char>(t[t.size() / 2])) %
           kMemoWays;
  }

  const Schema& schema_;
  const uint64_t watched_;  // FocusOptions::watched
  std::vector<Memo> memo_;  // kMemoWays per column
  static constexpr size_t kNoSlot = SIZE_MAX;
  std::vector<size_t> last_slot_;  // per column: the memo slot the previous row hit, or kNoSlot
  std::vector<std::string> last_text_;  // per plain column: the previous row's text
  std::string tag_key_, tag_value_;  // scratch for TagScanner
  Memo scratch_;                     // a direct column's reading
  bool after_skip_ = false;          // the last row read was skipped
};

bool RowReader::IsNull(const ColumnPlan& p, const CsvField& f, std::string_view v, int64_t line) {
  if (v.empty() && f.quoted) {
    issues.Add(line, p.name, "empty-string", [] { return "an empty string; FOCUS uses null for no value"; });
  }
  bool null = v.empty() || (!f.quoted && v == "NULL");
  if (null && !p.spec->nullable) issues.Add(line, p.name, "not-nullable", [&] { return p.name + " must have a value"; });
  return null;
}

void RowReader::ReadColumn(const ColumnPlan& p, CsvField& f, int64_t line, Memo& m) {
  m.parsed = false;
  m.canonical = {};
  // Tags are read with their CSV quotes still doubled (TagScanner knows).
  std::string_view v = p.field == Field::kTags ? f.text : Unescape(f);
  m.null = IsNull(p, f, v, line);
  if (m.null) return;
  switch (p.field) {
    case Field::kChargeStart: case Field::kChargeEnd: case Field::kBillingStart: case Field::kBillingEnd:
    case Field::kOtherTime: {
      bool exact = false;
      std::optional<int64_t> t = ParseFocusTime(v, &exact);
      if (!t) {
        issues.Add(line, p.name, "datetime-format", [&] {
          return "'" + std::string(v) + "' is not a date-time (FOCUS: YYYY-MM-DDTHH:mm:ssZ, UTC)";
        });
        break;
      }
      if (!exact) {
        issues.Add(line, p.name, "datetime-format", [&] {
          return "'" + std::string(v) + "' read as " + std::string(v.size() >= 10 ? "UTC" : "a date") +
                 "; FOCUS requires YYYY-MM-DDTHH:mm:ssZ";
        });
      }
      m.time_us = *t;
      m.parsed = true;
      break;
    }
    case Field::kBilled: case Field::kEffective: case Field::kList: case Field::kContracted:
    case Field::kConsumed: case Field::kOtherDecimal: {
      std::optional<Picos> n = ParsePicos(v);
      if (!n) {
        // Spreadsheet money ("$10,000.00 ", "(5.00)"): read, and noted.
        n = ParseSpreadsheetMoney(v);
        issues.Add(line, p.name, "decimal-format", [&] {
          return "'" + std::string(v) + "' " + (n ? "read as " + PicosText(*n) : std::string("is not a number")) +
                 "; FOCUS decimals have no currency symbols, separators or spaces";
        });
        if (!n) break;
      }
      m.amount = *n;
      m.parsed = true;
      break;
    }
    case Field::kCurrency: case Field::kPricingCurrency:
      if (!IsCurrencyCode(v)) {
        issues.Add(line, p.name, "currency-code",
                   [&] { return "'" + std::string(v) + "' is not an ISO 4217 code (three capital letters)"; });
      }
      break;
    case Field::kTags: {
      m.team.clear(), m.owner.clear(), m.job.clear(), m.project.clear();
      int team_rank = 99, owner_rank = 99, job_rank = 99, project_rank = 99;
      auto take = [](std::string_view key, std::string_view value, const auto& keys, std::string& out, int& rank) {
        for (int k = 0; k < static_cast<int>(std::size(keys)); ++k) {
          if (key == keys[k] && k < rank) out.assign(value), rank = k;
        }
      };
      bool ok = TagScanner(v, f.escaped, tag_key_, tag_value_).Scan([&](std::string_view key, std::string_view value) {
        take(key, value, kTeamKeys, m.team, team_rank);
        take(key, value, kOwnerKeys, m.owner, owner_rank);
        take(key, value, kJobKeys, m.job, job_rank);
        take(key, value, kProjectKeys, m.project, project_rank);
      });
      if (!ok) {
        issues.Add(line, p.name, "json-format",
                   [] { return "Tags is not a JSON object of key-value pairs (tags ignored)"; });
        m.team.clear(), m.owner.clear(), m.job.clear(), m.project.clear();
      }
      break;
    }
    case Field::kOtherJson:
      if (!nlohmann::json::accept(v)) issues.Add(line, p.name, "json-format", [&] { return p.name + " is not valid JSON"; });
      break;
    default:
      break;
  }
  if (p.enumeration) {
    for (std::string_view allowed : p.enumeration->values) {
      if (v == allowed) {
        m.canonical = allowed;
        break;
      }
    }
    if (m.canonical.empty()) {
      for (std::string_view allowed : p.enumeration->values) {
        if (EqualsIgnoreCase(v, allowed)) m.canonical = allowed;
      }
      if (!m.canonical.empty()) {
        issues.Add(line, p.name, "enum-case", [&] {
          return "'" + std::string(v) + "' is spelled '" + std::string(m.canonical) + "' in FOCUS";
        });
      } else {
        issues.Add(line, p.name, "enum-value",
                   [&] { return "'" + std::string(v) + "' is not an allowed value of " + p.name; });
      }
    }
  }
}

void RowReader::Apply(const ColumnPlan& p, std::string_view text, const Memo& m, FocusRow& row, Flags& flags) {
  if (m.null) return;
  if (p.enumeration) {
    std::string_view v = m.canonical.empty() ? text : m.canonical;
    switch (p.field) {
      case Field::kServiceCategory: row.service_category = v; break;
      case Field::kChargeCategory: row.charge_category = v; break;
      case Field::kChargeClass: row.charge_class = v; break;
      case Field::kPricingCategory: row.pricing_category = v; break;
      case Field::kCommitmentStatus: row.commitment_discount_status = v; break;
      default: break;
    }
    return;
  }
  SetText(p.field, text, row);
  switch (p.field) {
    case Field::kChargeStart:
      if (m.parsed) row.charge_start_us = m.time_us, flags.has_start = true;
      else flags.usable = false;
      break;
    case Field::kChargeEnd: if (m.parsed) row.charge_end_us = m.time_us; break;
    case Field::kBillingStart: if (m.parsed) row.billing_period_start_us = m.time_us; break;
    case Field::kBilled: if (m.parsed) row.billed = m.amount, flags.has_cost = true; break;
    case Field::kEffective: if (m.parsed) row.effective = m.amount, flags.has_cost = true; break;
    case Field::kList: if (m.parsed) row.list = m.amount; break;
    case Field::kContracted: if (m.parsed) row.contracted = m.amount; break;
    case Field::kConsumed: if (m.parsed) row.consumed = m.amount, row.has_consumed = true; break;
    case Field::kCurrency: row.currency = text; break;
    case Field::kTags: row.team = m.team, row.owner = m.owner, row.job = m.job, row.project = m.project; break;
    default: break;
  }
}

void RowReader::SetText(Field field, std::string_view text, FocusRow& row) {
  switch (field) {
    case Field::kProviderName: row.provider_name = text; break;
    case Field::kBillingAccountId: row.billing_account_id = text; break;
    case Field::kSubAccountId: row.sub_account_id = text; break;
    case Field::kRegionId: row.region_id = text; break;
    case Field::kResourceId: row.resource_id = text; break;
    case Field::kResourceType: row.resource_type = text; break;
    case Field::kServiceName: row.service_name = text; break;
    case Field::kSkuId: row.sku_id = text; break;
    case Field::kCommitmentDiscountId: row.commitment_discount_id = text; break;
    case Field::kConsumedUnit: row.consumed_unit = text; break;
    case Field::kPricingUnit: row.pricing_unit = text; break;
    default: break;
  }
}

void RowReader::ReadPlain(size_t i, const ColumnPlan& p, CsvField& f, int64_t line, FocusRow& row) {
  std::string_view v = Unescape(f);
  bool null = IsNull(p, f, v, line);
  std::string_view text = null ? std::string_view() : v;
  if ((p.bit & watched_) && text != last_text_[i]) {
    row.changed |= p.bit;
    last_text_[i].assign(text);
  }
  if (!null) SetText(p.field, text, row);
}

bool RowReader::Read(std::vector<CsvField>& fields, int64_t line, FocusRow& row) {
  if (fields.size() != schema_.plan.size()) {
    issues.Add(line, "", "field-count", [&] {
      return "row has " + std::to_string(fields.size()) + " fields; the header has " +
             std::to_string(schema_.plan.size()) + " (row skipped)";
    });
    ++skipped;
    return false;
  }
  row = FocusRow{};
  // `changed` is against the previous row a sink received: after a row
  // read but skipped, everything counts as changed.
  row.changed = std::exchange(after_skip_, false) ? ~uint64_t{0} : 0;
  Flags flags;
  for (size_t i = 0; i < fields.size(); ++i) {
    const ColumnPlan& p = schema_.plan[i];
    if (p.field == Field::kCustom) continue;
    CsvField& f = fields[i];
    if (p.plain) {
      ReadPlain(i, p, f, line, row);
      continue;
    }
    if (p.direct) {
      row.changed |= p.bit;
      ReadColumn(p, f, line, scratch_);
      Apply(p, f.text, scratch_, row, flags);
      continue;
    }
    const size_t slot = i * kMemoWays + Slot(f.text);
    Memo& m = memo_[slot];
    bool hit = m.valid && f.quoted == m.quoted && f.text == m.text;
    if (!hit || last_slot_[i] != slot) row.changed |= p.bit;
    last_slot_[i] = hit ? slot : kNoSlot;
    if (!hit) {
      int64_t before = issues.total();
      m.text.assign(f.text);  // as in the file, before any unescaping
      m.quoted = f.quoted;
      ReadColumn(p, f, line, m);
      m.valid = issues.total() == before;
    } else if (p.field != Field::kTags) {
      Unescape(f);
    }
    Apply(p, f.text, m, row, flags);
  }
  if (flags.has_start && row.charge_end_us != 0 && row.charge_end_us <= row.charge_start_us) {
    issues.Add(line, "ChargePeriodEnd", "charge-period-order",
               [] { return "ChargePeriodEnd is not after ChargePeriodStart (the end is exclusive)"; });
  }
  if (!flags.usable || !flags.has_start || !flags.has_cost) {
    issues.Add(line, "", "unusable-row", [&] {
      return std::string(!flags.has_start || !flags.usable
                             ? "no usable ChargePeriodStart (row skipped)"
                             : "neither BilledCost nor EffectiveCost has a value (row skipped)");
    });
    ++skipped;
    after_skip_ = true;
    return false;
  }
  ++rows;
  return true;
}

}  // namespace

void IssueLog::Merge(const IssueLog& other) {
  total_ += other.total_;
  for (const auto& [rule, s] : other.by_rule_) {
    auto [it, added] = by_rule_.emplace(rule, s);
    if (added) continue;
    it->second.count += s.count;
    if (s.first.line < it->second.first.line) it->second.first = s.first;
  }
  kept_.insert(kept_.end(), other.kept_.begin(), other.kept_.end());
  std::stable_sort(kept_.begin(), kept_.end(), [](const Issue& a, const Issue& b) { return a.line < b.line; });
  if (kept_.size() > kKept) kept_.resize(kKept);
}

int FocusThreads(const FocusOptions& options) {
  if (options.threads > 0) return options.threads;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

Result<FocusScan> ScanFocusFile(const std::string& path, const FocusOptions& options,
                                const std::vector<RowSink*>& sinks) {
  if (sinks.empty()) return InvalidArgument("no row sink");
  ASSIGN_OR_RETURN(std::unique_ptr<CsvChunker> chunker, CsvChunker::Open(path));
  FocusScan scan;
  // The header is the first record of the first chunk; the rest of that
  // chunk is rows like any other.
  ASSIGN_OR_RETURN(std::optional<CsvChunk> first, chunker->Next());
  if (!first) return InvalidArgument(path + ": the file is empty; a FOCUS file starts with a header row");
  std::vector<CsvField> header;
  CsvRecords records(path, *first);
  ASSIGN_OR_RETURN(bool any, records.Next(header));
  if (!any) return InvalidArgument(path + ": the file is empty; a FOCUS file starts with a header row");
  for (CsvField& f : header) Unescape(f);
  ASSIGN_OR_RETURN(Schema schema, ReadHeader(path, header, options, scan.issues));
  scan.version = schema.version;

  struct Worker {
    RowReader reader;
    Status status;
  };
  std::vector<std::unique_ptr<Worker>> workers;
  for (size_t i = 0; i < sinks.size(); ++i) workers.push_back(std::make_unique<Worker>(Worker{RowReader(schema, options.watched), {}}));
  std::mutex first_mu;
  std::optional<CsvRecords> rest(std::move(records));  // the first chunk after its header
  std::atomic<bool> failed{false};
  auto run = [&](size_t w) {
    Worker& worker = *workers[w];
    std::vector<CsvField> fields;
    FocusRow row;
    auto drain = [&](CsvRecords& recs) -> Status {
      while (true) {
        ASSIGN_OR_RETURN(bool more, recs.Next(fields));
        if (!more) return Status::Ok();
        if (worker.reader.Read(fields, recs.line(), row)) sinks[w]->Add(row);
      }
    };
    {
      std::unique_lock lock(first_mu);
      if (rest) {
        CsvRecords mine = std::move(*rest);
        rest.reset();
        lock.unlock();
        if (Status st = drain(mine); !st.ok()) {
          worker.status = st;
          failed = true;
          return;
        }
      }
    }
    while (!failed) {
      auto chunk = chunker->Next();
      if (!chunk.ok()) {
        worker.status = chunk.status();
        failed = true;
        return;
      }
      if (!*chunk) return;
      CsvRecords recs(path, **chunk);
      if (Status st = drain(recs); !st.ok()) {
        worker.status = st;
        failed = true;
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < sinks.size(); ++w) threads.emplace_back(run, w);
  run(0);
  for (auto& t : threads) t.join();
  for (auto& w : workers) {
    RETURN_IF_ERROR(w->status);
    scan.issues.Merge(w->reader.issues);
    scan.rows += w->reader.rows;
    scan.skipped += w->reader.skipped;
  }
  return scan;
}

}  // namespace causeway::cost
