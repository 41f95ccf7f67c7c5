// How the command line reports errors: one message on stderr, the
// diagnostics that point into inputs, and the documented exit code.
#pragma once

#include <vector>

#include "causeway/status.h"

namespace causeway::cli {

int ExitFor(Code code);
int ExitForHttp(int status);
void PrintDiagnostics(const std::vector<Diagnostic>& diags);
// Prints `st` (with its diagnostics when there are several) and returns
// its exit code.
int Fail(const Status& st);

}  // namespace causeway::cli
