// Errors as values. A Status is either OK or carries a Code, a message meant for
// people, and optional Diagnostics that point at the exact place in an input
// (file, line, column, field) that was wrong. Result<T> holds a T or a non-OK
// Status. Codes map to HTTP statuses and to stable API error codes in exactly
// one place (status.cc), so every layer reports errors the same way.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace causeway {

enum class Code {
  kOk = 0,
  kInvalidArgument,     // the caller's input is wrong; fixing it will help
  kNotFound,            // the named thing does not exist
  kAlreadyExists,       // creating something that exists
  kConflict,            // the request contradicts current state (e.g. reused idempotency key)
  kFailedPrecondition,  // state does not allow it (e.g. cancel a finished job)
  kUnauthenticated,     // no or bad credentials
  kPermissionDenied,    // credentials are fine but do not allow this
  kPolicyViolation,     // an admission policy rejects the request; the message names the rule
  kPayloadTooLarge,     // request body over the limit
  kResourceExhausted,   // overloaded or over a quota; retry later
  kUnavailable,         // a dependency is down; retry later
  kDeadlineExceeded,    // timed out
  kDataLoss,            // stored data is corrupt (e.g. a broken audit chain)
  kInternal,            // a bug or an unexpected failure
};

// Stable, snake_case name used as the API's error "code" (e.g. "not_found").
std::string_view CodeName(Code code);
// The HTTP status an API error with this code is returned with.
int HttpStatus(Code code);
// Whether a client may retry the same request later and expect it to work.
bool IsRetryable(Code code);

// Where in an input a problem is. Line and column are 1-based; 0 means unknown.
struct Diagnostic {
  std::string file;
  int line = 0;
  int column = 0;
  std::string field;    // dotted path such as "resources.accelerators"
  std::string message;  // what is wrong and what would be accepted
  // A note that does not stop anything (an ignored field, an alternative
  // left out), carried beside errors so that none is lost when both occur.
  bool warning = false;

  // "file:line:col: field: message", leaving out the parts that are unknown.
  std::string ToString() const;
};

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(Code code, std::string message, std::vector<Diagnostic> diagnostics = {});
  Status(const Status& other);
  Status& operator=(const Status& other);
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status Ok() { return Status(); }

  bool ok() const { return rep_ == nullptr; }
  Code code() const { return rep_ ? rep_->code : Code::kOk; }
  const std::string& message() const;
  const std::vector<Diagnostic>& diagnostics() const;

  // "code: message" followed by one line per diagnostic.
  std::string ToString() const;
  // Returns a copy whose message is "prefix: message".
  Status WithPrefix(std::string_view prefix) const;

 private:
  struct Rep {
    Code code;
    std::string message;
    std::vector<Diagnostic> diagnostics;
  };
  std::unique_ptr<Rep> rep_;  // null when OK, so OK costs nothing
};

inline Status InvalidArgument(std::string m, std::vector<Diagnostic> d = {}) {
  return Status(Code::kInvalidArgument, std::move(m), std::move(d));
}
inline Status NotFound(std::string m) { return Status(Code::kNotFound, std::move(m)); }
inline Status AlreadyExists(std::string m) { return Status(Code::kAlreadyExists, std::move(m)); }
inline Status Conflict(std::string m) { return Status(Code::kConflict, std::move(m)); }
inline Status FailedPrecondition(std::string m) { return Status(Code::kFailedPrecondition, std::move(m)); }
inline Status Unauthenticated(std::string m) { return Status(Code::kUnauthenticated, std::move(m)); }
inline Status PermissionDenied(std::string m) { return Status(Code::kPermissionDenied, std::move(m)); }
inline Status PolicyViolation(std::string m, std::vector<Diagnostic> d = {}) {
  return Status(Code::kPolicyViolation, std::move(m), std::move(d));
}
inline Status ResourceExhausted(std::string m) { return Status(Code::kResourceExhausted, std::move(m)); }
inline Status Unavailable(std::string m) { return Status(Code::kUnavailable, std::move(m)); }
inline Status DataLoss(std::string m) { return Status(Code::kDataLoss, std::move(m)); }
inline Status Internal(std::string m) { return Status(Code::kInternal, std::move(m)); }

// Stops the process, naming `status`: reading the value of a Result that
// holds an error is a bug, caught here rather than left undefined.
[[noreturn]] void DieOnMissingValue(const Status& status);

// Holds either a value or a non-OK Status. Constructing from an OK Status is a
// bug and turns into kInternal. Reading the value of an error (value(), *,
// ->) stops the process with the error's message (DieOnMissingValue).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT
    if (status_.ok()) status_ = Internal("Result constructed from an OK status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return Checked(); }
  const T& value() const& { return Checked(); }
  T&& value() && { return std::move(Checked()); }
  // The value, or `fallback` when this holds an error.
  T value_or(T fallback) const& { return value_ ? *value_ : std::move(fallback); }
  T* operator->() { return &Checked(); }
  const T* operator->() const { return &Checked(); }
  T& operator*() & { return Checked(); }
  const T& operator*() const& { return Checked(); }
  T&& operator*() && { return std::move(Checked()); }

 private:
  T& Checked() {
    if (!value_) [[unlikely]] DieOnMissingValue(status_);
    return *value_;
  }
  const T& Checked() const {
    if (!value_) [[unlikely]] DieOnMissingValue(status_);
    return *value_;
  }

  std::optional<T> value_;
  Status status_;  // OK exactly when value_ is set
};

}  // namespace causeway

#define CW_CONCAT_INNER(a, b) a##b
#define CW_CONCAT(a, b) CW_CONCAT_INNER(a, b)

// Returns the Status of `expr` from the enclosing function if it is not OK.
#define RETURN_IF_ERROR(expr)                         \
  do {                                                \
    ::causeway::Status cw_status_ = (expr);           \
    if (!cw_status_.ok()) return cw_status_;          \
  } while (0)

// `ASSIGN_OR_RETURN(auto x, F());` declares x from a Result or returns its error.
#define ASSIGN_OR_RETURN(lhs, expr) \
  CW_ASSIGN_OR_RETURN_IMPL(CW_CONCAT(cw_result_, __LINE__), lhs, expr)
#define CW_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                             \
  if (!tmp.ok()) return tmp.status();            \
  lhs = std::move(tmp).value()
