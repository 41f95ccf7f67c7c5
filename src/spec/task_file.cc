// Task files of several documents: SkyPilot pipelines and job groups
// (job_spec.h).
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "causeway/job_spec.h"
#include "spec/yaml_reader.h"

namespace causeway {
namespace {

// The keys of a header document: a pipeline's (`name`, and `execution:
// serial`) or a job group's (`execution: parallel` and what goes with it).
constexpr std::string_view kHeaderKeys[] = {"name", "execution", "primary_tasks", "termination_delay",
                                            "inter_connection"};
constexpr int64_t kMaxTerminationDelaySeconds = 30 * 86400;

bool IsHeader(const YAML::Node& doc) {
  if (!doc.IsMap() || doc.size() == 0) return false;
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    if (!it->first.IsScalar()) return false;
    if (std::find(std::begin(kHeaderKeys), std::end(kHeaderKeys), it->first.Scalar()) == std::end(kHeaderKeys)) {
      return false;
    }
  }
  return true;
}

// A name SkyPilot accepts for a job group and its tasks: letters, digits,
// "-" and "_" (and, as every name here, at most 128 characters).
bool SafeName(std::string_view s) {
  return !s.empty() && s.size() <= 128 && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
}

// SkyPilot's duration of a termination delay: a whole number, optionally
// followed by s, m, h, d or w (either case); seconds when bare.
std::optional<int64_t> DelaySeconds(std::string_view s) {
  if (s.empty() || s.size() > 12) return std::nullopt;
  int64_t unit = 1;
  switch (std::tolower(static_cast<unsigned char>(s.back()))) {
    case 's': unit = 1; break;
    case 'm': unit = 60; break;
    case 'h': unit = 3600; break;
    case 'd': unit = 86400; break;
    case 'w': unit = 7 * 86400; break;
    default: unit = 0;
  }
  if (unit != 0) s.remove_suffix(1);
  else unit = 1;
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  return std::stoll(std::string(s)) * unit;
}

// A job group's header, read with its tasks known: primary tasks and
// termination delays are set on `out`'s steps.
struct GroupHeader {
  YAML::Node primary_tasks, termination_delay, inter_connection;
};

// Reads a header into `out`; problems go to `r`. A job group's fields that
// name tasks are kept in `group` to be read once the tasks are.
void ReadHeader(const YAML::Node& doc, spec::YamlReader& r, TaskFile& out, GroupHeader& group) {
  r.CheckMap(doc, "", {{kHeaderKeys[0], kHeaderKeys[1], kHeaderKeys[2], kHeaderKeys[3], kHeaderKeys[4]}});
  YAML::Node name = spec::YamlReader::Child(doc, "name");
  if (name.IsDefined() && !name.IsNull()) {
    if (auto v = r.String(name, "name")) out.name = *v;
  }
  YAML::Node execution = spec::YamlReader::Child(doc, "execution");
  if (execution.IsDefined()) {
    auto v = r.String(execution, "execution");
    if (v && *v == "parallel") {
      out.job_group = true;
    } else if (v && *v != "serial") {
      r.Error(execution, "execution", "expected parallel (a job group) or serial (a pipeline), got \"" + *v + "\"");
    }
  }
  if (!out.job_group) {
    for (std::string_view key : {kHeaderKeys[2], kHeaderKeys[3], kHeaderKeys[4]}) {
      if (YAML::Node n = spec::YamlReader::Child(doc, key); n.IsDefined()) {
        r.Error(n, key, "only a job group's header (execution: parallel) has " + std::string(key));
      }
    }
    return;
  }
  if (out.name.empty()) {
    r.Error(name.IsDefined() ? name : doc, "name", "a job group's header must name the group");
  } else if (!SafeName(out.name)) {
    r.Error(name, "name", "expected 1 to 128 letters, digits, \"-\" and \"_\", got \"" + out.name + "\"");
  }
  group.primary_tasks = spec::YamlReader::Child(doc, "primary_tasks");
  group.termination_delay = spec::YamlReader::Child(doc, "termination_delay");
  group.inter_connection = spec::YamlReader::Child(doc, "inter_connection");
}

// The delay of one `termination_delay` value, reported at `at` when it is
// not one.
std::optional<int64_t> ReadDelay(const YAML::Node& at, std::string_view field, spec::YamlReader& r) {
  if (!at.IsScalar()) {
    r.Error(at, field, "expected a duration such as 30, \"30s\", \"5m\" or \"1h\"");
    return std::nullopt;
  }
  auto secs = DelaySeconds(at.Scalar());
  if (!secs) {
    r.Error(at, field, "expected a duration such as 30, \"30s\", \"5m\" or \"1h\", got \"" + at.Scalar() + "\"");
  } else if (*secs > kMaxTerminationDelaySeconds) {
    r.Error(at, field, "at most 30 days, got \"" + at.Scalar() + "\"");
    return std::nullopt;
  }
  return secs;
}

// A job group's task names: each given, by SkyPilot's rules, and unique.
// Problems go to `errors` at `lines` (the line of each task's document).
// Returns each name's task.
std::map<std::string, size_t> IndexTasks(const std::vector<int>& lines, const std::string& file, const TaskFile& out,
                                         std::vector<Diagnostic>& errors) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < out.steps.size(); ++i) {
    const std::string& name = out.steps[i].parsed.spec.name;
    std::string problem;
    if (name.empty()) {
      problem = "task " + std::to_string(i + 1) + " of a job group must have a name";
    } else if (!SafeName(name)) {
      problem = "expected letters, digits, \"-\" and \"_\" only in a job group's task name, got \"" + name + "\"";
    } else if (!index.emplace(name, i).second) {
      problem = "task name \"" + name + "\" is used twice in the job group";
    }
    if (!problem.empty()) errors.push_back(Diagnostic{file, lines[i], 1, "name", problem});
  }
  return index;
}

// Whether `name` is a task of the group; reported at `at` when not.
bool KnownTask(const std::map<std::string, size_t>& index, const YAML::Node& at, std::string_view field,
               const std::string& name, spec::YamlReader& r) {
  if (index.count(name)) return true;
  std::string names;
  for (const auto& [n, i] : index) names += (names.empty() ? "" : ", ") + n;
  r.Error(at, field, "no task of the group is named \"" + name + "\" (its tasks: " + names + ")");
  return false;
}

// Primary tasks: those `primary_tasks` names, or every task when it names
// none.
void ReadPrimaryTasks(const YAML::Node& node, const std::map<std::string, size_t>& index, spec::YamlReader& r,
                      TaskFile& out) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsSequence()) {
    r.Error(node, "primary_tasks", "expected a list of task names");
    return;
  }
  if (node.size() == 0) return;
  std::set<std::string> primary;
  for (const YAML::Node& n : node) {
    auto v = r.String(n, "primary_tasks");
    if (v && KnownTask(index, n, "primary_tasks", *v, r)) primary.insert(*v);
  }
  for (TaskFile::Step& step : out.steps) step.auxiliary = !primary.count(step.parsed.spec.name);
}

// Termination delays: one for every auxiliary task, or a map of task names
// and `default` to delays.
void ReadDelays(const YAML::Node& d, const std::map<std::string, size_t>& index, spec::YamlReader& r, TaskFile& out) {
  if (!d.IsDefined() || d.IsNull()) return;
  std::optional<int64_t> all;
  std::map<std::string, int64_t> by_task;
  if (d.IsMap()) {
    for (auto it = d.begin(); it != d.end(); ++it) {
      std::string key = it->first.IsScalar() ? it->first.Scalar() : "";
      if (key != "default" && !KnownTask(index, it->first, "termination_delay", key, r)) continue;
      auto secs = ReadDelay(it->second, "termination_delay." + key, r);
      if (secs && key == "default") all = *secs;
      if (secs && key != "default") by_task[key] = *secs;
    }
  } else {
    all = ReadDelay(d, "termination_delay", r);
  }
  for (TaskFile::Step& step : out.steps) {
    if (!step.auxiliary) continue;
    auto own = by_task.find(step.parsed.spec.name);
    step.termination_delay_seconds = own != by_task.end() ? own->second : all.value_or(0);
  }
}

// A job group's tasks, checked against its header: names, roles, delays.
// Unless the header says the tasks need no network between them, says at
// `header_line` what Causeway does not do for them.
void ReadGroupTasks(const GroupHeader& h, const std::vector<int>& lines, int header_line, spec::YamlReader& r,
                    TaskFile& out, std::vector<Diagnostic>& errors) {
  auto index = IndexTasks(lines, r.file(), out, errors);
  ReadPrimaryTasks(h.primary_tasks, index, r, out);
  ReadDelays(h.termination_delay, index, r, out);
  bool connected = !h.inter_connection.IsDefined() || h.inter_connection.IsNull() ||
                   r.Bool(h.inter_connection, "inter_connection").value_or(true);
  if (connected && !out.steps.empty()) {
    // Said where it is read, not silently dropped.
    out.steps.front().parsed.warnings.push_back(
        Diagnostic{r.file(), header_line, 1, "inter_connection",
                   "Causeway starts a job group's tasks together and gives each SKYPILOT_JOBGROUP_NAME, but sets up "
                   "no network between them (no hostnames such as TASK-0." + out.name +
                       "), and may place them on different clusters; set inter_connection: false to say that the "
                       "tasks do not need it"});
  }
}

}  // namespace

Result<TaskFile> ParseTaskFile(std::string_view yaml_text, const std::string& file) {
  std::vector<spec::DocumentSpan> spans = spec::DocumentSpans(yaml_text);
  TaskFile out;
  if (spans.size() <= 1) {
    ASSIGN_OR_RETURN(ParsedJobSpec parsed, ParseJobSpec(yaml_text, file));
    out.steps.push_back(TaskFile::Step{std::string(yaml_text), std::move(parsed)});
    return out;
  }
  out.pipeline = true;
  // Checked before any document is read: each is parsed on its own.
  if (spans.size() > kMaxPipelineSteps + 1) {
    Diagnostic d{file, spans[kMaxPipelineSteps + 1].content_line, 1, "",
                 "the file holds " + std::to_string(spans.size()) + " documents: a pipeline or job group has at most " +
                     std::to_string(kMaxPipelineSteps) + " steps"};
    return InvalidArgument("too many documents: " + d.ToString(), {d});
  }
  std::vector<Diagnostic> errors;
  size_t first = 0;
  // The header, if the first document is one.
  spec::YamlReader header(file);
  GroupHeader group;
  auto head = spec::LoadYaml(spec::DocumentText(yaml_text, spans[0], true), file);
  if (head.ok() && IsHeader(*head)) {
    ReadHeader(*head, header, out, group);
    first = 1;
  }
  const char* what = out.job_group ? "job group" : "pipeline";
  if (first == spans.size()) {
    Diagnostic d{file, spans[0].content_line, 1, "", std::string("the ") + what + " has a header but no " +
                                                      (out.job_group ? "tasks" : "steps")};
    errors.push_back(d);
  }
  std::vector<int> lines;
  for (size_t i = first; i < spans.size(); ++i) {
    auto parsed = ParseJobSpec(spec::DocumentText(yaml_text, spans[i], true), file);
    if (!parsed.ok()) {
      Status st = parsed.status();
      const auto& d = st.diagnostics();
      if (d.empty()) errors.push_back(Diagnostic{file, spans[i].content_line, 1, "", st.message()});
      errors.insert(errors.end(), d.begin(), d.end());
      continue;
    }
    out.steps.push_back(TaskFile::Step{spec::DocumentText(yaml_text, spans[i], false), std::move(*parsed)});
    lines.push_back(spans[i].content_line);
  }
  if (out.job_group) ReadGroupTasks(group, lines, spans[0].content_line, header, out, errors);
  if (Status st = header.Finish(std::string(what) + " header"); !st.ok()) {
    errors.insert(errors.begin(), st.diagnostics().begin(), st.diagnostics().end());
  }
  if (!errors.empty()) {
    std::string message = std::string("invalid ") + what + ": " + errors.front().ToString() +
                          (errors.size() > 1 ? " (and " + std::to_string(errors.size() - 1) + " more)" : "");
    return InvalidArgument(message, std::move(errors));
  }
  return out;
}

}  // namespace causeway
