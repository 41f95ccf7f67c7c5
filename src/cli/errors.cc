#include "cli/errors.h"

#include <iostream>

#include "cli/commands.h"

namespace causeway::cli {

int ExitFor(Code code) {
  switch (code) {
    case Code::kOk: return kExitOk;
    case Code::kInvalidArgument:
    case Code::kPolicyViolation:
    case Code::kPayloadTooLarge: return kExitInvalid;
    case Code::kNotFound: return kExitNotFound;
    case Code::kUnauthenticated:
    case Code::kPermissionDenied: return kExitAuth;
    case Code::kAlreadyExists:
    case Code::kConflict:
    case Code::kFailedPrecondition: return kExitConflict;
    case Code::kUnavailable:
    case Code::kResourceExhausted:
    case Code::kDeadlineExceeded: return kExitUnavailable;
    default: return kExitFailure;
  }
}

int ExitForHttp(int status) {
  switch (status) {
    case 400: case 413: case 422: return kExitInvalid;  // 422: rejected by an admission policy
    case 404: return kExitNotFound;
    case 401: case 403: return kExitAuth;
    case 405: case 409: return kExitConflict;
    case 429: case 502: case 503: case 504: return kExitUnavailable;
    default: return status >= 400 ? kExitFailure : kExitOk;
  }
}

void PrintDiagnostics(const std::vector<Diagnostic>& diags) {
  for (const auto& d : diags) std::cerr << "  " << (d.warning ? "warning: " : "") << d.ToString() << "\n";
}

void PrintError(const std::string& message, const std::vector<Diagnostic>& diags) {
  std::cerr << "error: " << message << "\n";
  for (const auto& d : diags) {
    std::string text = d.ToString();
    if (!d.warning && message.find(text) != std::string::npos) continue;  // already said
    std::cerr << "  " << (d.warning ? "warning: " : "") << text << "\n";
  }
}

int Fail(const Status& st) {
  PrintError(st.message(), st.diagnostics());
  return ExitFor(st.code());
}

}  // namespace causeway::cli
