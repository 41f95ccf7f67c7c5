// Money as fixed-point integer micro-units of a currency (1 USD = 1,000,000
// micros). Never floating point: sums are exact and reproducible.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "causeway/status.h"

namespace causeway {

class Money {
 public:
  Money() = default;
  Money(int64_t micros, std::string currency) : micros_(micros), currency_(std::move(currency)) {}

  // Parses a decimal amount ("2.5", "-0.000001", "1200") in `currency`, a
  // three-letter ISO 4217 code. More than six fractional digits is an error,
  // never silently rounded.
  static Result<Money> Parse(std::string_view amount, std::string_view currency);

  int64_t micros() const { return micros_; }
  const std::string& currency() const { return currency_; }

  // Sum of two amounts of the same currency; kInvalidArgument if they differ,
  // kResourceExhausted on overflow.
  Result<Money> Add(const Money& other) const;

  // rate * numerator / denominator, rounded half away from zero to the micro,
  // computed in 128 bits. E.g. a per-GPU-hour rate over some GPU-seconds:
  // Scale(rate, gpu_seconds, 3600). kResourceExhausted on overflow.
  static Result<Money> Scale(const Money& rate, int64_t numerator, int64_t denominator);

  // "12.50 USD": at least two decimals, up to six, no trailing zeros past two.
  std::string ToString() const;
  // The decimal amount alone, as ToString but without the currency.
  std::string AmountString() const;

  bool operator==(const Money&) const = default;

 private:
  int64_t micros_ = 0;
  std::string currency_ = "USD";
};

}  // namespace causeway
