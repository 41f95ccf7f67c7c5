#include "audit/importers/importer.h"

namespace causeway::audit::detail {

namespace {

// A Slurm number: an integer (slurmdb v0.0.37, sacct of 21.08) or the
// {"set", "infinite", "number"} object of later versions; nullopt when
// absent, null or unset.
std::optional<int64_t> SlurmNumber(dom::element parent, const char* key) {
  dom::element e;
  if (parent[key].get(e)) return std::nullopt;
  int64_t v = 0;
  if (!e.get(v)) return v;
  bool set = true;
  if (e.type() != dom::element_type::OBJECT || (!e["set"].get(set) && !set) || e["number"].get(v)) return std::nullopt;
  return v;
}

// A job's state: "state": "X", or {"current": "X"} (older), or
// {"current": ["X", ...]} (later versions, the first is the base state).
std::string_view SlurmState(dom::element job) {
  dom::element state;
  if (job["state"].get(state)) return {};
  dom::element current;
  if (state.type() == dom::element_type::OBJECT && !state["current"].get(current)) state = current;
  if (state.type() == dom::element_type::ARRAY) {
    dom::array states = state.get_array().value_unsafe();
    if (states.size() == 0) return {};
    state = states.at(0).value_unsafe();
  }
  std::string_view name;
  return state.get(name) ? std::string_view() : name;
}

// One job of a `sacct --json` document or slurmdbd's REST jobs listing: its
// submission, start and end, each a Scheduled Job Activity event (times are

}  // namespace

// Unix seconds in UTC).
Status Slurm(dom::element job, std::string_view raw, const ImportOptions& o, Sink& sink) {
  int64_t job_id = 0;
  if (job["job_id"].get(job_id) || job_id <= 0) return InvalidArgument("a Slurm job needs a positive job_id");
  std::string_view user = Field(job, "user");
  if (user.empty()) return InvalidArgument("a Slurm job needs user");
  dom::element time;
  if (job["time"].get(time) || time.type() != dom::element_type::OBJECT) return InvalidArgument("a Slurm job needs a time object");
  int64_t submitted = SlurmNumber(time, "submission").value_or(0);
  if (submitted <= 0) return InvalidArgument("time.submission is missing or not a Unix time");
  std::string_view cluster = Field(job, "cluster");
  std::string_view name = Field(job, "name");
  std::string_view account = Field(job, "account");
  // An array task is its own job: "<array job>_<task>" as sacct shows it.
  std::string job_name = std::to_string(job_id);
  dom::element array;
  if (!job["array"].get(array) && array.type() == dom::element_type::OBJECT) {
    std::optional<int64_t> array_job = SlurmNumber(array, "job_id"), task = SlurmNumber(array, "task_id");
    if (array_job.value_or(0) > 0 && task) job_name = std::to_string(*array_job) + "_" + std::to_string(*task);
  }
  std::string_view state = SlurmState(job);
  int64_t started = SlurmNumber(time, "start").value_or(0);
  int64_t ended = SlurmNumber(time, "end").value_or(0);
  bool failed = state == "FAILED" || state == "NODE_FAIL" || state == "BOOT_FAIL" || state == "OUT_OF_MEMORY" ||
                state == "TIMEOUT" || state == "DEADLINE" || state == "PREEMPTED";
  std::string id_prefix = std::string("slurm:").append(cluster).append(":").append(job_name).append(":");
  auto event = [&](const char* what, int activity, int64_t seconds, int status_id, std::string_view detail) {
    Writer w(sink.out);
    w.Open();
    Common(w, ocsf::kScheduledJobActivity, activity, seconds * 1000, status_id,
           status_id == ocsf::kStatusFailure ? ocsf::kSeverityLow : ocsf::kSeverityInformational);
    w.StrIf("status_detail", detail);
    std::string id = id_prefix + what;
    Metadata(w, "Slurm", "SchedMD", id, {});
    w.Open("cloud").Str("provider", o.provider).StrIf("region", cluster).Close();
    w.Open("actor").Open("user").Str("name", user).Close().Close();
    w.Open("job").Str("name", job_name).StrIf("desc", name).Open("file").Str("name", name.empty() ? job_name : name).Int("type_id", 1).Close();
    w.Open("user").Str("name", user).Close();
    w.Close();
    w.OpenArray("resources").Open().Str("uid", "slurm/" + std::string(cluster) + "/" + job_name).Str("type", "job").StrIf("group", account).Close().CloseArray();
    w.Str("raw_data", raw);
    w.Close();
    sink.Emit(id);
  };
  event("submit", 1, submitted, ocsf::kStatusSuccess, {});
  if (started > 0) event("start", 6, started, ocsf::kStatusSuccess, {});
  if (ended > 0) {
    int activity = state == "CANCELLED" ? 3 : 2;
    event("end", activity, ended, failed ? ocsf::kStatusFailure : ocsf::kStatusSuccess, state);
  }
  return Status::Ok();
}

}  // namespace causeway::audit::detail
