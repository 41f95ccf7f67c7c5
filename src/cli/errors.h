// How the command line reports errors: one message on stderr, the
// diagnostics that point into inputs, and the documented exit code.
#pragma once

#include <string>
#include <vector>

#include "causeway/status.h"

namespace causeway::cli {

int ExitFor(Code code);
int ExitForHttp(int status);
void PrintDiagnostics(const std::vector<Diagnostic>& diags);
// "error: MESSAGE", then each diagnostic the message does not already
// spell out (warnings marked as such), on stderr.
void PrintError(const std::string& message, const std::vector<Diagnostic>& diags);
// Prints `st` with PrintError and returns its exit code.
int Fail(const Status& st);

}  // namespace causeway::cli
