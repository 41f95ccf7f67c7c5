#include "causeway/money.h"

#include <cctype>
#include <cstdlib>

namespace causeway {

Result<Money> Money::Parse(std::string_view amount, std::string_view currency) {
  if (currency.size() != 3 || !std::isupper(static_cast<unsigned char>(currency[0])) ||
      !std::isupper(static_cast<unsigned char>(currency[1])) ||
      !std::isupper(static_cast<unsigned char>(currency[2]))) {
    return InvalidArgument("invalid currency \"" + std::string(currency) +
                           "\": expected a three-letter ISO 4217 code such as USD or EUR");
  }
  auto bad = [&](const std::string& why) {
    return InvalidArgument("invalid amount \"" + std::string(amount) + "\": " + why);
  };
  size_t pos = 0;
  bool negative = false;
  if (pos < amount.size() && (amount[pos] == '-' || amount[pos] == '+')) {
    negative = amount[pos] == '-';
    ++pos;
  }
  __int128 whole = 0;
  int int_digits = 0;
  while (pos < amount.size() && std::isdigit(static_cast<unsigned char>(amount[pos]))) {
    whole = whole * 10 + (amount[pos] - '0');
    if (whole > INT64_MAX / 1'000'000) return bad("too large");
    ++pos;
    ++int_digits;
  }
  int64_t frac = 0;
  int frac_digits = 0;
  if (pos < amount.size() && amount[pos] == '.') {
    ++pos;
    while (pos < amount.size() && std::isdigit(static_cast<unsigned char>(amount[pos]))) {
      if (++frac_digits > 6) return bad("more than six decimal places");
      frac = frac * 10 + (amount[pos] - '0');
      ++pos;
    }
  }
  if (pos != amount.size() || (int_digits == 0 && frac_digits == 0)) {
    return bad("expected a decimal number such as 2.50");
  }
  for (int i = frac_digits; i < 6; ++i) frac *= 10;
  int64_t micros = static_cast<int64_t>(whole) * 1'000'000 + frac;
  return Money(negative ? -micros : micros, std::string(currency));
}

Result<Money> Money::Add(const Money& other) const {
  if (currency_ != other.currency_) {
    return InvalidArgument("cannot add " + other.currency_ + " to " + currency_);
  }
  int64_t sum;
  if (__builtin_add_overflow(micros_, other.micros_, &sum)) {
    return ResourceExhausted("money overflow");
  }
  return Money(sum, currency_);
}

Result<Money> Money::Scale(const Money& rate, int64_t numerator, int64_t denominator) {
  if (denominator == 0) return InvalidArgument("scale by zero denominator");
  __int128 p = static_cast<__int128>(rate.micros_) * numerator;
  __int128 q = p / denominator;
  __int128 r = p % denominator;
  // Round half away from zero.
  __int128 abs_r2 = (r < 0 ? -r : r) * 2;
  __int128 abs_d = denominator < 0 ? -static_cast<__int128>(denominator) : denominator;
  if (abs_r2 >= abs_d) q += ((p < 0) != (denominator < 0)) ? -1 : 1;
  if (q > INT64_MAX || q < INT64_MIN) return ResourceExhausted("money overflow");
  return Money(static_cast<int64_t>(q), rate.currency_);
}

std::string Money::AmountString() const {
  uint64_t abs = micros_ < 0 ? 0 - static_cast<uint64_t>(micros_) : static_cast<uint64_t>(micros_);
  std::string frac = std::to_string(abs % 1'000'000);
  frac.insert(0, 6 - frac.size(), '0');
  while (frac.size() > 2 && frac.back() == '0') frac.pop_back();
  return (micros_ < 0 ? "-" : "") + std::to_string(abs / 1'000'000) + "." + frac;
}

std::string Money::ToString() const { return AmountString() + " " + currency_; }

}  // namespace causeway
