#include "planning/trace.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

#include "causeway/job_spec.h"
#include "causeway/json_input.h"
#include "cost/csv.h"
#include "planning/rows.h"

namespace causeway::planning {
namespace {

std::vector<std::string> SplitTypes(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i <= s.size()) {
    size_t j = s.find('|', i);
    if (j == std::string_view::npos) j = s.size();
    std::string t(s.substr(i, j - i));
    while (!t.empty() && t.front() == ' ') t.erase(t.begin());
    while (!t.empty() && t.back() == ' ') t.pop_back();
    if (!t.empty() && std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
    i = j + 1;
  }
  return out;
}

Result<int> Priority(const Row& row, const Where& w) {
  auto s = row("priority");
  if (!s || s->empty()) return kDefaultPriority;
  for (const auto& pc : kPriorityClasses) {
    if (*s == pc.name) return pc.value;
  }
  auto v = Number(*s);
  if (!v || *v < 0 || *v > 1000 || *v != std::floor(*v)) {
    return w.Bad("priority", "expected 0-1000 or low, normal, high, critical");
  }
  return static_cast<int>(*v);
}

// `spot` and `status` of a row of Causeway's own format.
Status SpotAndStatus(const Row& row, const Where& w, TraceJob& j) {
  std::string spot = row("spot").value_or("");
  if (spot == "true" || spot == "1") {
    j.spot = true;
  } else if (!spot.empty() && spot != "false" && spot != "0") {
    return w.Bad("spot", "expected true or false");
  }
  std::string status = row("status").value_or("");
  if (status == "failed") {
    j.status = TraceStatus::kFailed;
  } else if (status == "cancelled" || status == "canceled") {
    j.status = TraceStatus::kCancelled;
  } else if (!status.empty() && status != "completed") {
    return w.Bad("status", "expected completed, failed or cancelled");
  }
  return Status::Ok();
}

// A row of Causeway's own format.
Status OwnRow(Trace& t, const Row& row, const Where& w) {
  constexpr double kMaxSeconds = 1e11;  // about 3,000 years: no overflow in micros
  ASSIGN_OR_RETURN(auto submit, Field(row, "submit", w, 0, kMaxSeconds));
  if (!submit) return w.Bad("submit", "missing (seconds after the trace's start)");
  ASSIGN_OR_RETURN(auto gpus, Field(row, "gpus", w, 0, 1024));
  if (!gpus) return w.Bad("gpus", "missing (GPUs per node)");
  if (*gpus == 0) {
    ++t.cpu_only_skipped;
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(auto duration, Field(row, "duration", w, 0, kMaxSeconds));
  ASSIGN_OR_RETURN(auto end, Field(row, "end", w, 0, kMaxSeconds));
  if (!duration && !end) return w.Bad("duration", "missing (give duration or end, in seconds)");
  if (!duration && *end < *submit) return w.Bad("end", "is before submit");
  ASSIGN_OR_RETURN(auto nodes, Field(row, "nodes", w, 1, 100'000));
  ASSIGN_OR_RETURN(auto util, Field(row, "gpu_util", w, 0, 1));
  ASSIGN_OR_RETURN(int priority, Priority(row, w));
  TraceJob j;
  j.submit_s = static_cast<int64_t>(*submit);
  j.duration_s = std::max<int64_t>(1, static_cast<int64_t>(duration ? *duration : *end - *submit));
  j.gpus = static_cast<int32_t>(std::ceil(*gpus));
  j.nodes = nodes ? static_cast<int32_t>(*nodes) : 1;
  j.priority = static_cast<int16_t>(priority);
  if (util) {
    j.util_permille = static_cast<uint16_t>(std::lround(*util * 1000));
    t.has_utilization = true;
  }
  RETURN_IF_ERROR(SpotAndStatus(row, w, j));
  j.team = t.Intern(t.teams, row("team").value_or(""));
  j.zone = t.Intern(t.zones, row("zone").value_or(""));
  j.types = t.InternTypes(SplitTypes(row("gpu_type").value_or("")));
  t.jobs.push_back(j);
  return Status::Ok();
}

Result<Trace> ReadOwn(const std::string& path, const TraceLimits& limits) {
  Trace t;
  auto row = [&](const Row& r, const Where& w) { return OwnRow(t, r, w); };
  bool json = path.size() > 6 && (path.ends_with(".jsonl") || path.ends_with(".ndjson") || path.ends_with(".json"));
  RETURN_IF_ERROR(json ? ForEachJsonLine(path, limits, row) : ForEachCsvRow(path, limits, row));
  return t;
}

// alibaba-2023's machines (openb_node_list_gpu_node.csv) as an estate: one
// cluster, one pool per GPU model and GPUs per node.
Result<std::string> MachinesYaml(const std::string& nodes_path, const TraceLimits& limits) {
  std::map<std::pair<std::string, int>, int> pools;
  RETURN_IF_ERROR(ForEachCsvRow(nodes_path, limits, [&](const Row& r, const Where& w) -> Status {
    ASSIGN_OR_RETURN(auto gpus, Field(r, "gpu", w, 0, 1024));
    std::string model = r("model").value_or("");
    if (gpus && *gpus > 0 && !model.empty()) {
      if (model.size() > 32 || model.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-") != std::string::npos) {
        return w.Bad("model", "expected a GPU model name");
      }
      ++pools[{model, static_cast<int>(*gpus)}];
    }
    return Status::Ok();
  }));
  std::ostringstream y;
  y << "providers: [{name: openb, kind: sim, regions: [{name: cn, zone: cn}]}]\n"
       "clusters:\n  - name: openb\n    provider: openb\n    region: cn\n    node_pools:\n";
  for (const auto& [key, count] : pools) {
    std::string pool = key.first + "-x" + std::to_string(key.second);
    std::transform(pool.begin(), pool.end(), pool.begin(), [](unsigned char c) { return std::tolower(c); });
    y << "      - {name: " << pool << ", gpu_type: " << key.first << ", gpus_per_node: " << key.second
      << ", nodes: " << count << "}\n";
  }
  return y.str();
}

// alibaba-2023 (openb): a pod list, and the GPU node list beside it.
Result<Trace> ReadAlibaba2023(const std::string& path, const TraceLimits& limits) {
  Trace t;
  int64_t shared = 0, never_ran = 0;
  RETURN_IF_ERROR(ForEachCsvRow(path, limits, [&](const Row& r, const Where& w) -> Status {
    ASSIGN_OR_RETURN(auto gpus, Field(r, "num_gpu", w, 0, 1024));
    if (!gpus) return w.Bad("num_gpu", "missing");
    if (*gpus == 0) {
      ++t.cpu_only_skipped;
      return Status::Ok();
    }
    ASSIGN_OR_RETURN(auto milli, Field(r, "gpu_milli", w, 0, 1000));
    ASSIGN_OR_RETURN(auto created, Field(r, "creation_time", w, 0, 1e11));
    ASSIGN_OR_RETURN(auto scheduled, Field(r, "scheduled_time", w, 0, 1e11));
    ASSIGN_OR_RETURN(auto deleted, Field(r, "deletion_time", w, 0, 1e11));
    TraceJob j;
    j.submit_s = static_cast<int64_t>(created.value_or(0));
    // Run time: from being scheduled (or created) to deletion; an hour
    // where the list gives no times (the multigpu50 sample).
    int64_t from = static_cast<int64_t>(scheduled.value_or(created.value_or(0)));
    j.duration_s = deleted ? std::max<int64_t>(60, static_cast<int64_t>(*deleted) - from) : 3600;
    j.gpus = static_cast<int32_t>(*gpus);
    if (milli && *milli < 1000) {
      ++shared;  // a GPU-sharing task: placed on a whole GPU, useful share kept for goodput
      j.util_permille = static_cast<uint16_t>(*milli);
      t.has_utilization = true;
    }
    std::string qos = r("qos").value_or("");
    j.priority = qos == "LS" || qos == "Guaranteed" ? 100 : qos == "BE" ? 10 : kDefaultPriority;
    std::string phase = r("pod_phase").value_or("");
    if (phase == "Failed") j.status = TraceStatus::kFailed;
    if (phase == "Pending") ++never_ran;
    j.types = t.InternTypes(SplitTypes(r("gpu_spec").value_or("")));
    t.jobs.push_back(j);
    return Status::Ok();
  }));
  if (shared) t.notes.push_back(std::to_string(shared) + " GPU-sharing tasks take a whole GPU; their gpu_milli is their goodput");
  if (never_ran) {
    t.notes.push_back(std::to_string(never_ran) +
                      " tasks still pending in the source are replayed as demand, running from creation to deletion");
  }

  std::string nodes_path = (std::filesystem::path(path).parent_path() / "openb_node_list_gpu_node.csv").string();
  if (!std::filesystem::exists(nodes_path)) {
    t.notes.push_back("no openb_node_list_gpu_node.csv beside the pod list: --estate trace is not available");
    return t;
  }
  ASSIGN_OR_RETURN(t.estate_yaml, MachinesYaml(nodes_path, limits));
  return t;
}

// alibaba-dlrm-2025: GPU (HN) instances of inference services.
Result<Trace> ReadDlrm2025(const std::string& path, const TraceLimits& limits) {
  Trace t;
  struct Raw {
    std::optional<double> created, scheduled, deleted;
    TraceJob job;
  };
  std::vector<Raw> raw;
  double last = 0;
  int64_t before = 0, after = 0;
  RETURN_IF_ERROR(ForEachCsvRow(path, limits, [&](const Row& r, const Where& w) -> Status {
    ASSIGN_OR_RETURN(auto gpus, Field(r, "gpu_request", w, 0, 1024));
    if (!gpus) return w.Bad("gpu_request", "missing");
    if (*gpus == 0) {
      ++t.cpu_only_skipped;
      return Status::Ok();
    }
    Raw x;
    ASSIGN_OR_RETURN(x.created, Field(r, "creation_time", w, 0, 1e11));
    ASSIGN_OR_RETURN(x.scheduled, Field(r, "scheduled_time", w, 0, 1e11));
    ASSIGN_OR_RETURN(x.deleted, Field(r, "deletion_time", w, 0, 1e11));
    for (const auto& v : {x.created, x.scheduled, x.deleted}) last = std::max(last, v.value_or(0));
    x.job.gpus = static_cast<int32_t>(std::ceil(*gpus));
    x.job.team = t.Intern(t.teams, r("app_name").value_or(""));
    raw.push_back(x);
    return Status::Ok();
  }));
  // Instances alive before the window start at 0; those alive after it end
  // at its last timestamp (the trace says no more).
  for (auto& x : raw) {
    double start = x.scheduled.value_or(x.created.value_or(0));
    if (!x.created) ++before;
    if (!x.deleted) ++after;
    x.job.submit_s = static_cast<int64_t>(x.created.value_or(0));
    x.job.duration_s = std::max<int64_t>(1, static_cast<int64_t>(x.deleted.value_or(last) - start));
    t.jobs.push_back(x.job);
  }
  t.notes.push_back(std::to_string(before) + " instances created before the window are submitted at its start; " +
                    std::to_string(after) + " still alive at its end run until then");
  t.notes.push_back("the trace names no GPU model: every instance may use any GPU type; no final status: all complete");
  return t;
}

}  // namespace

std::string_view TraceStatusName(TraceStatus s) {
  switch (s) {
    case TraceStatus::kCompleted: return "completed";
    case TraceStatus::kFailed: return "failed";
    case TraceStatus::kCancelled: return "cancelled";
  }
  return "completed";
}

uint16_t Trace::Intern(std::vector<std::string>& table, const std::string& name) {
  if (name.empty()) return 0;
  auto [it, added] = index_.try_emplace({&table == &teams ? 0 : 1, name}, 0);
  if (added) {
    if (table.size() < UINT16_MAX) table.push_back(name);
    it->second = static_cast<uint16_t>(table.size() - 1);
  }
  return it->second;
}

uint16_t Trace::InternTypes(std::vector<std::string> types) {
  if (types.empty()) return 0;
  std::sort(types.begin(), types.end());
  std::string key;
  for (const auto& t : types) key += t + "|";
  auto [it, added] = index_.try_emplace({2, key}, 0);
  if (added) {
    if (type_sets.size() < UINT16_MAX) type_sets.push_back(std::move(types));
    it->second = static_cast<uint16_t>(type_sets.size() - 1);
  }
  return it->second;
}

Status Trace::Finish() {
  for (auto [what, n] : {std::pair{"teams", teams.size()}, {"zones", zones.size()}, {"GPU type sets", type_sets.size()}}) {
    if (n >= UINT16_MAX - 1) return InvalidArgument(source + ": more than 65,534 distinct " + what);
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const TraceJob& a, const TraceJob& b) { return a.submit_s < b.submit_s; });
  return Status::Ok();
}

Result<TraceFormat> ParseTraceFormat(std::string_view name) {
  if (name == "causeway" || name == "csv" || name == "jsonl") return TraceFormat::kCauseway;
  if (name == "alibaba-2023") return TraceFormat::kAlibaba2023;
  if (name == "alibaba-dlrm-2025") return TraceFormat::kAlibabaDlrm2025;
  return InvalidArgument("unknown trace format \"" + std::string(name) + "\" (expected " + std::string(kTraceFormats) + ")");
}

Result<Trace> ReadTrace(const std::string& path, TraceFormat format, const TraceLimits& limits) {
  if (!std::filesystem::is_regular_file(path)) return NotFound(path + ": no such file");
  Result<Trace> t = format == TraceFormat::kAlibaba2023       ? ReadAlibaba2023(path, limits)
                    : format == TraceFormat::kAlibabaDlrm2025 ? ReadDlrm2025(path, limits)
                                                              : ReadOwn(path, limits);
  if (!t.ok()) return t.status();
  t->source = path;
  t->format = format == TraceFormat::kAlibaba2023       ? "alibaba-2023"
              : format == TraceFormat::kAlibabaDlrm2025 ? "alibaba-dlrm-2025"
                                                        : "causeway";
  if (t->teams.size() > limits.max_names || t->zones.size() > limits.max_names ||
      t->type_sets.size() > limits.max_names) {
    return InvalidArgument(path + ": more than " + std::to_string(limits.max_names) + " distinct names");
  }
  RETURN_IF_ERROR(t->Finish());
  return t;
}

}  // namespace causeway::planning
