#include "causeway/status.h"

#include <cstdio>
#include <cstdlib>

namespace causeway {

void DieOnMissingValue(const Status& status) {
  std::fprintf(stderr, "a Result holding an error was read as a value: %s\n", status.ToString().c_str());
  std::abort();
}

std::string_view CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "ok";
    case Code::kInvalidArgument: return "invalid_argument";
    case Code::kNotFound: return "not_found";
    case Code::kAlreadyExists: return "already_exists";
    case Code::kConflict: return "conflict";
    case Code::kFailedPrecondition: return "failed_precondition";
    case Code::kUnauthenticated: return "unauthenticated";
    case Code::kPermissionDenied: return "permission_denied";
    case Code::kPolicyViolation: return "policy_violation";
    case Code::kPayloadTooLarge: return "payload_too_large";
    case Code::kResourceExhausted: return "resource_exhausted";
    case Code::kUnavailable: return "unavailable";
    case Code::kDeadlineExceeded: return "deadline_exceeded";
    case Code::kDataLoss: return "data_loss";
    case Code::kInternal: return "internal";
  }
  return "internal";
}

int HttpStatus(Code code) {
  switch (code) {
    case Code::kOk: return 200;
    case Code::kInvalidArgument: return 400;
    case Code::kNotFound: return 404;
    case Code::kAlreadyExists: return 409;
    case Code::kConflict: return 409;
    case Code::kFailedPrecondition: return 409;
    case Code::kUnauthenticated: return 401;
    case Code::kPermissionDenied: return 403;
    case Code::kPolicyViolation: return 422;
    case Code::kPayloadTooLarge: return 413;
    case Code::kResourceExhausted: return 429;
    case Code::kUnavailable: return 503;
    case Code::kDeadlineExceeded: return 504;
    case Code::kDataLoss: return 500;
    case Code::kInternal: return 500;
  }
  return 500;
}

bool IsRetryable(Code code) {
  return code == Code::kResourceExhausted || code == Code::kUnavailable ||
         code == Code::kDeadlineExceeded;
}

std::string Diagnostic::ToString() const {
  // Built with append: g++ 12 -O3 misreports "literal" + std::string&& (-Wrestrict).
  std::string out = file;
  auto sep = [&out](const char* s) {
    if (!out.empty()) out.append(s);
  };
  if (line > 0) {
    sep(":");
    out.append(std::to_string(line));
    if (column > 0) out.append(":").append(std::to_string(column));
  }
  if (!field.empty()) {
    sep(": ");
    out.append(field);
  }
  sep(": ");
  out.append(message);
  return out;
}

Status::Status(Code code, std::string message, std::vector<Diagnostic> diagnostics) {
  if (code != Code::kOk) {
    rep_ = std::make_unique<Rep>(Rep{code, std::move(message), std::move(diagnostics)});
  }
}

Status::Status(const Status& other)
    : rep_(other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr) {}

Status& Status::operator=(const Status& other) {
  if (this != &other) rep_ = other.rep_ ? std::make_unique<Rep>(*other.rep_) : nullptr;
  return *this;
}

const std::string& Status::message() const {
  static const std::string kEmpty;
  return rep_ ? rep_->message : kEmpty;
}

const std::vector<Diagnostic>& Status::diagnostics() const {
  static const std::vector<Diagnostic> kNone;
  return rep_ ? rep_->diagnostics : kNone;
}

std::string Status::ToString() const {
  if (ok()) return "ok";
  std::string out = std::string(CodeName(code())) + ": " + rep_->message;
  for (const auto& d : rep_->diagnostics) out += "\n  " + d.ToString();
  return out;
}

Status Status::WithPrefix(std::string_view prefix) const {
  if (ok()) return *this;
  return Status(code(), std::string(prefix) + ": " + rep_->message, rep_->diagnostics);
}

}  // namespace causeway
