// The `causeway` command line. Every subcommand but serve, validate and an
// offline `audit verify` is a client of the REST API.
#pragma once

namespace causeway::cli {

// Documented exit codes (README, "Exit codes").
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,      // anything not listed below (server error, I/O)
  kExitUsage = 2,        // bad command-line arguments
  kExitInvalid = 3,      // invalid input: spec, estate, request fields
  kExitNotFound = 4,     // no such job, token, ...
  kExitAuth = 5,         // missing, bad, expired or insufficient token
  kExitConflict = 6,     // conflicts with current state
  kExitUnavailable = 7,  // server unreachable, overloaded or timed out
  kExitAuditBroken = 8,  // `audit verify` found a broken chain
  kExitPartial = 9,      // an import stored what it could read and refused some records
  kExitGaps = 10,        // `readiness --fail-on-gaps` found a control not in place
};

int Main(int argc, char** argv);

}  // namespace causeway::cli
