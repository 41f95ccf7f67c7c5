#include "providers/slurm/slurm_api.h"

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
  if (s <= 0) return std::nullopt;
  return FromUnixMicros(s * 1'000'000);
}

}  // namespace

JobInfo ParseJob(const nlohmann::json& j) {
  JobInfo info;
  info.id = j.value("job_id", int64_t{0});
  info.name = j.value("name", "");
  info.state = j.value("job_state", "");
  info.reason = j.value("state_reason", "");
  // exit_code is a wait status: the exit code in the high byte, a signal low.
  int status = j.value("exit_code", 0);
  info.exit_code = (status >> 8) & 0xff;
  info.signal = status & 0x7f;
  info.start = UnixSeconds(j.value("start_time", int64_t{0}));
  info.end = UnixSeconds(j.value("end_time", int64_t{0}));
  if (auto t = j.find("tres_alloc_str"); t != j.end() && t->is_string()) info.gpus = GpusOfTres(t->get<std::string>());
  info.restarts = j.value("restart_cnt", 0);
  return info;
}

JobInfo ParseAccountingJob(const nlohmann::json& j) {
  JobInfo info;
  info.id = j.value("job_id", int64_t{0});
  info.name = j.value("name", "");
  if (auto s = j.find("state"); s != j.end() && s->is_object()) {
    info.state = s->value("current", "");
    info.reason = s->value("reason", "");
  }
  if (auto e = j.find("exit_code"); e != j.end() && e->is_object()) {
    info.exit_code = e->value("return_code", 0);
    if (auto sig = e->find("signal"); sig != e->end() && sig->is_object()) info.signal = sig->value("signal_id", 0);
  }
  // Slurm 22.05's accounting API reports 0 for every exit code; a failed job
  // did not exit 0, so its code is unknown (-1) rather than wrong.
  if (info.state == "FAILED" && info.exit_code == 0) info.exit_code = -1;
  if (auto t = j.find("time"); t != j.end() && t->is_object()) {
    info.start = UnixSeconds(t->value("start", int64_t{0}));
    info.end = UnixSeconds(t->value("end", int64_t{0}));
  }
  if (auto t = j.find("tres"); t != j.end() && t->is_object()) {
    for (const auto& tres : t->value("allocated", nlohmann::json::array())) {
      if (tres.value("type", "") == "gres" && tres.contains("name") && tres["name"] == "gpu") {
        info.gpus = tres.value("count", 0);
      }
    }
  }
  return info;
}

Status SlurmErrors(const nlohmann::json& j) {
  if (!j.contains("errors") || !j["errors"].is_array() || j["errors"].empty()) return Status::Ok();
  const auto& e = j["errors"][0];
  int number = e.value("error_number", -1);
  std::string text = "slurm error " + std::to_string(number) + " (" + e.value("error", "") + "): " +
                     e.value("description", "");
  if (number == 2017) return NotFound(text);
  if (number == -1) return Unavailable(text);
  return FailedPrecondition(text);
}

}  // namespace causeway::slurm
