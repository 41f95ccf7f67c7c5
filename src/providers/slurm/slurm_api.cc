#include "providers/slurm/slurm_api.h"

#include <algorithm>

#include "causeway/json_input.h"
#include "causeway/text.h"

namespace causeway::slurm {

template <typename Fn>
auto FallbackApi::First(Fn fn) -> decltype(fn(std::declval<SlurmApi&>())) {
  decltype(fn(std::declval<SlurmApi&>())) last = Unavailable("no Slurm interface is configured");
  for (auto& api : apis_) {
    last = fn(*api);
    Code code = [&] {
      if constexpr (std::is_same_v<decltype(last), Status>) {
        return last.code();
      } else {
        return last.status().code();
      }
    }();
    if (code != Code::kUnavailable && code != Code::kDeadlineExceeded) break;
  }
  return last;
}

std::string FallbackApi::Describe() const {
  std::string out;
  for (const auto& api : apis_) out += (out.empty() ? "" : ", then ") + api->Describe();
  return out;
}
Status FallbackApi::Ping() {
  return First([](SlurmApi& a) { return a.Ping(); });
}
Result<int64_t> FallbackApi::Submit(const SubmitRequest& r) {
  return First([&](SlurmApi& a) { return a.Submit(r); });
}
Result<std::vector<JobInfo>> FallbackApi::ListJobs() {
  return First([](SlurmApi& a) { return a.ListJobs(); });
}
Status FallbackApi::Cancel(int64_t id) {
  return First([&](SlurmApi& a) { return a.Cancel(id); });
}
Result<std::vector<JobInfo>> FallbackApi::Accounting(const std::vector<int64_t>& ids) {
  return First([&](SlurmApi& a) { return a.Accounting(ids); });
}

namespace {

// The count of "gres/gpu=N" in a TRES string such as
// "cpu=1,mem=64000M,node=1,billing=1,gres/gpu=2,gres/gpu:h200=2".
int GpusOfTres(std::string_view tres) {
  for (const std::string& item : Split(tres, ',')) {
    if (item.rfind("gres/gpu=", 0) != 0) continue;
    if (auto n = ParseInt(std::string_view(item).substr(9))) return static_cast<int>(*n);
  }
  return 0;
}

std::optional<Timestamp> UnixSeconds(int64_t s) {
  if (s <= 0 || s > 253'402'300'799) return std::nullopt;  // unset, or past the year 9999
  return FromUnixMicros(s * 1'000'000);
}

}  // namespace

// Slurm's answers are read through JsonMember/JsonString/JsonInt: a field
// of an unexpected type reads as absent instead of throwing.

JobInfo ParseJob(const nlohmann::json& j) {
  JobInfo info;
  info.id = JsonInt(j, "job_id");
  info.name = JsonString(j, "name");
  info.state = JsonString(j, "job_state");
  info.reason = JsonString(j, "state_reason");
  // exit_code is a wait status: the exit code in the high byte, a signal low.
  int64_t status = JsonInt(j, "exit_code");
  info.exit_code = static_cast<int>((status >> 8) & 0xff);
  info.signal = static_cast<int>(status & 0x7f);
  info.start = UnixSeconds(JsonInt(j, "start_time"));
  info.end = UnixSeconds(JsonInt(j, "end_time"));
  if (auto t = JsonString(j, "tres_alloc_str"); !t.empty()) info.gpus = GpusOfTres(t);
  info.restarts = static_cast<int>(std::clamp<int64_t>(JsonInt(j, "restart_cnt"), 0, 1'000'000));
  return info;
}

JobInfo ParseAccountingJob(const nlohmann::json& j) {
  JobInfo info;
  info.id = JsonInt(j, "job_id");
  info.name = JsonString(j, "name");
  const nlohmann::json& state = JsonMember(j, "state");
  info.state = JsonString(state, "current");
  info.reason = JsonString(state, "reason");
  const nlohmann::json& exit = JsonMember(j, "exit_code");
  info.exit_code = static_cast<int>(std::clamp<int64_t>(JsonInt(exit, "return_code"), -1, 255));
  info.signal = static_cast<int>(std::clamp<int64_t>(JsonInt(JsonMember(exit, "signal"), "signal_id"), 0, 255));
  // Slurm 22.05's accounting API reports 0 for every exit code; a failed job
  // did not exit 0, so its code is unknown (-1) rather than wrong.
  if (info.state == "FAILED" && info.exit_code == 0) info.exit_code = -1;
  const nlohmann::json& time = JsonMember(j, "time");
  info.start = UnixSeconds(JsonInt(time, "start"));
  info.end = UnixSeconds(JsonInt(time, "end"));
  const nlohmann::json& allocated = JsonMember(JsonMember(j, "tres"), "allocated");
  if (allocated.is_array()) {
    for (const auto& tres : allocated) {
      if (JsonString(tres, "type") == "gres" && JsonString(tres, "name") == "gpu") {
        info.gpus = static_cast<int>(std::clamp<int64_t>(JsonInt(tres, "count"), 0, 1'000'000));
      }
    }
  }
  return info;
}

Status SlurmErrors(const nlohmann::json& j) {
  const nlohmann::json& errors = JsonMember(j, "errors");
  if (!errors.is_array() || errors.empty()) return Status::Ok();
  const auto& e = errors[0];
  int64_t number = JsonInt(e, "error_number", -1);
  std::string text = "slurm error " + std::to_string(number) + " (" + JsonString(e, "error") + "): " +
                     JsonString(e, "description");
  if (number == 2017) return NotFound(text);
  if (number == -1) return Unavailable(text);
  return FailedPrecondition(text);
}

}  // namespace causeway::slurm
