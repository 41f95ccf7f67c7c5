// `--env KEY[=VALUE]`, `--env-file FILE` and `--secret KEY[=VALUE]` of
// `submit` and `validate`, read as SkyPilot reads them: a KEY without a value
// takes it from this process's environment; --env wins over --env-file, and
// a later file over an earlier one.
#pragma once

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "causeway/job_spec.h"
#include "causeway/status.h"

namespace causeway::cli {

struct SpecInputFlags {
  std::vector<std::string> envs, env_files, secrets;
};

// Adds the three options to `command`, filling `flags`.
void AddSpecInputFlags(CLI::App* command, SpecInputFlags& flags);

// The values the flags give. kInvalidArgument naming the flag (and the
// file and line of an env file) for a KEY=VALUE that is malformed or a KEY
// this environment lacks; no message ever holds a value.
Result<SpecInputs> ReadSpecInputs(const SpecInputFlags& flags);

// The body of a submission (POST /v1/jobs, POST /v1/plan/job): the spec
// file's text and name, and the values the flags give.
Result<nlohmann::json> SubmissionBody(const std::string& file, const SpecInputFlags& flags);

// One dotenv file's variables: `KEY=VALUE` lines, optionally `export`ed,
// with '…' or "…" quoting ("…" knows \n, \", \\), `#` comments and blank
// lines. `file` names it in diagnostics.
Result<std::map<std::string, std::string>> ParseEnvFile(std::string_view text, const std::string& file);

}  // namespace causeway::cli
