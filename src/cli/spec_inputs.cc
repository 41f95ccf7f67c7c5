#include "cli/spec_inputs.h"

#include <cstdlib>

#include "causeway/text.h"

namespace causeway::cli {
namespace {

constexpr size_t kMaxEnvFileBytes = 1 << 20;

// "KEY=VALUE" or "KEY" (the value from this environment) of one flag.
Status AddFlag(const std::string& flag, const std::string& given, std::map<std::string, std::string>& out) {
  auto eq = given.find('=');
  std::string name = given.substr(0, eq);
  if (name.empty()) return InvalidArgument(flag + " needs KEY=VALUE or KEY, not \"=…\"");
  if (eq != std::string::npos) {
    out[name] = given.substr(eq + 1);
    return Status::Ok();
  }
  const char* value = std::getenv(name.c_str());
  if (!value) {
    return InvalidArgument(flag + " " + name + ": " + name + " is not set in this environment (give " + flag + " " +
                           name + "=VALUE)");
  }
  out[name] = value;
  return Status::Ok();
}

}  // namespace

void AddSpecInputFlags(CLI::App* command, SpecInputFlags& flags) {
  command->add_option("--env", flags.envs,
                      "KEY=VALUE, or KEY to take it from this environment: sets the job's env KEY (repeatable; "
                      "over the file's and --env-file's)");
  command->add_option("--env-file", flags.env_files, "dotenv file of KEY=VALUE lines for the job's envs (repeatable)");
  command->add_option("--secret", flags.secrets,
                      "KEY=VALUE, or KEY to take it from this environment: a secret, given to the job's environment "
                      "and never stored in clear or shown (repeatable)");
}

Result<std::map<std::string, std::string>> ParseEnvFile(std::string_view text, const std::string& file) {
  std::map<std::string, std::string> out;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string line = Trim(text.substr(pos, end - pos));
    pos = end + 1;
    ++line_no;
    auto where = [&](const std::string& what) {
      return InvalidArgument(file + ":" + std::to_string(line_no) + ": " + what,
                             {Diagnostic{file, line_no, 0, "", what}});
    };
    if (line.empty() || line.front() == '#') continue;
    if (line.rfind("export ", 0) == 0) line = Trim(std::string_view(line).substr(7));
    auto eq = line.find('=');
    if (eq == std::string_view::npos || eq == 0) return where("expected KEY=VALUE");
    std::string name = Trim(std::string_view(line).substr(0, eq));
    std::string rest = Trim(std::string_view(line).substr(eq + 1));
    std::string value;
    if (!rest.empty() && (rest.front() == '\'' || rest.front() == '"')) {
      char quote = rest.front();
      size_t i = 1;
      bool closed = false;
      for (; i < rest.size(); ++i) {
        char c = rest[i];
        if (c == quote) {
          closed = true;
          break;
        }
        if (quote == '"' && c == '\\' && i + 1 < rest.size()) {
          char n = rest[++i];
          value.push_back(n == 'n' ? '\n' : n == 't' ? '\t' : n);
          continue;
        }
        value.push_back(c);
      }
      if (!closed) return where(name + ": the value's quote is not closed on its line");
      std::string after = Trim(std::string_view(rest).substr(i + 1));
      if (!after.empty() && after.front() != '#') return where(name + ": unexpected text after the quoted value");
    } else {
      auto hash = rest.find(" #");
      value = Trim(std::string_view(rest).substr(0, hash));
    }
    out[name] = std::move(value);
  }
  return out;
}

Result<SpecInputs> ReadSpecInputs(const SpecInputFlags& flags) {
  SpecInputs in;
  for (const auto& path : flags.env_files) {
    ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    if (text.size() > kMaxEnvFileBytes) return InvalidArgument("--env-file " + path + " is larger than 1 MiB");
    ASSIGN_OR_RETURN(auto vars, ParseEnvFile(text, path));
    for (auto& [k, v] : vars) in.envs[k] = std::move(v);
  }
  for (const auto& e : flags.envs) RETURN_IF_ERROR(AddFlag("--env", e, in.envs));
  for (const auto& s : flags.secrets) RETURN_IF_ERROR(AddFlag("--secret", s, in.secrets));
  return in;
}

Result<nlohmann::json> SubmissionBody(const std::string& file, const SpecInputFlags& flags) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(file));
  ASSIGN_OR_RETURN(SpecInputs inputs, ReadSpecInputs(flags));
  nlohmann::json body = {{"spec", std::move(text)}, {"file", file}};
  if (!inputs.envs.empty()) body["envs"] = inputs.envs;
  if (!inputs.secrets.empty()) body["secrets"] = inputs.secrets;
  return body;
}

}  // namespace causeway::cli
