// Task files of several documents: SkyPilot pipelines (job_spec.h).
#include <algorithm>
#include <string>
#include <vector>

#include "causeway/job_spec.h"
#include "spec/yaml_reader.h"

namespace causeway {
namespace {

// The keys of a header document: a pipeline's (`name` alone) or a job
// group's (`execution: parallel` and what goes with it).
constexpr std::string_view kHeaderKeys[] = {"name", "execution", "primary_tasks", "termination_delay"};

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

// Reads a header into `out`; problems go to `r`.
void ReadHeader(const YAML::Node& doc, spec::YamlReader& r, TaskFile& out) {
  r.CheckMap(doc, "", {{kHeaderKeys[0], kHeaderKeys[1], kHeaderKeys[2], kHeaderKeys[3]}});
  if (YAML::Node n = spec::YamlReader::Child(doc, "name"); n.IsDefined() && !n.IsNull()) {
    if (auto v = r.String(n, "name")) out.name = *v;
  }
  YAML::Node execution = spec::YamlReader::Child(doc, "execution");
  if (execution.IsDefined()) {
    auto v = r.String(execution, "execution");
    if (v && *v == "parallel") {
      r.Error(execution, "execution",
              "job groups (execution: parallel) are not supported: their tasks must start together, which Causeway "
              "cannot promise yet; submit each task as a job of its own, or drop the header's execution to run "
              "them one after another as a pipeline");
    } else if (v) {
      r.Error(execution, "execution", "expected parallel (a job group), got \"" + *v + "\"");
    }
    return;
  }
  for (std::string_view key : {kHeaderKeys[2], kHeaderKeys[3]}) {
    if (YAML::Node n = spec::YamlReader::Child(doc, key); n.IsDefined()) {
      r.Error(n, key, "only a job group's header (execution: parallel) has " + std::string(key));
    }
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
                 "the file holds " + std::to_string(spans.size()) + " documents: a pipeline has at most " +
                     std::to_string(kMaxPipelineSteps) + " steps"};
    return InvalidArgument("too many documents: " + d.ToString(), {d});
  }
  std::vector<Diagnostic> errors;
  size_t first = 0;
  // The header, if the first document is one.
  auto head = spec::LoadYaml(spec::DocumentText(yaml_text, spans[0], true), file);
  if (head.ok() && IsHeader(*head)) {
    spec::YamlReader r(file);
    ReadHeader(*head, r, out);
    if (Status st = r.Finish("pipeline header"); !st.ok()) {
      errors.insert(errors.end(), st.diagnostics().begin(), st.diagnostics().end());
    }
    first = 1;
  }
  if (first == spans.size()) {
    Diagnostic d{file, spans[0].content_line, 1, "", "the pipeline has a header but no steps"};
    errors.push_back(d);
  }
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
  }
  if (!errors.empty()) {
    std::string message = "invalid pipeline: " + errors.front().ToString() +
                          (errors.size() > 1 ? " (and " + std::to_string(errors.size() - 1) + " more)" : "");
    return InvalidArgument(message, std::move(errors));
  }
  return out;
}

}  // namespace causeway
