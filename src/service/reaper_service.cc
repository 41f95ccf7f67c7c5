#include "service/reaper_service.h"

#include <algorithm>
#include <map>
#include <spdlog/spdlog.h>

#include "service/job_service.h"

namespace causeway {
namespace {

std::vector<telemetry::ReaperPolicy> Policies(const Estate& estate) {
  std::vector<telemetry::ReaperPolicy> out;
  for (const ReaperConfig& c : estate.reaper) {
    telemetry::ReaperPolicy p;
    p.name = c.name;
    p.team = c.team;
    p.threshold_percent = c.threshold_percent;
    p.window = c.window;
    p.grace = c.grace;
    p.cancel = c.action == "cancel";
    p.dry_run = c.dry_run;
    p.max_gap = c.max_gap;
    p.exempt_labels = c.exempt_labels;
    out.push_back(std::move(p));
  }
  return out;
}

// Samples are kept as long as the longest window and gap need them (none
// without policies: utilization is summed as they are pruned).
Micros Retention(const Estate& estate) {
  Micros longest(0);
  for (const ReaperConfig& c : estate.reaper) longest = std::max(longest, c.window + 2 * c.max_gap);
  return longest;
}

const char* ActionName(telemetry::ReaperAction::Kind k) {
  switch (k) {
    case telemetry::ReaperAction::kWarn: return "reaper.warn";
    case telemetry::ReaperAction::kCancel: return "reaper.cancel";
    case telemetry::ReaperAction::kRecovered: return "reaper.recovered";
  }
  return "reaper.warn";
}

}  // namespace

ReaperService::ReaperService(SchedulerService& scheduler, CommitQueue& queue, const Estate& estate,
                             TelemetryLimits limits)
    : scheduler_(scheduler),
      queue_(queue),
      reaper_(Policies(estate)),
      limits_(limits),
      samples_(Retention(estate), std::chrono::minutes(10),
               telemetry::SampleStore::Limits{limits.max_points, limits.max_series}),
      samples_retention_(Retention(estate)) {
  if (estate.telemetry && !estate.telemetry->prometheus.empty()) {
    telemetry::SeriesFormat format;
    format.job_label = estate.telemetry->job_label;
    format.attempt_label = estate.telemetry->attempt_label;
    format.gpu_label = estate.telemetry->gpu_label;
    auto source = telemetry::PrometheusSource::Create(estate.telemetry->prometheus, format);
    if (source.ok()) {
      prometheus_ = std::move(*source);
      prometheus_interval_ = estate.telemetry->interval;
    } else {
      spdlog::error("telemetry: {}", source.status().ToString());
    }
  }
}

void ReaperService::PollPrometheus() {
  if (!prometheus_) return;
  Timestamp now = RealClock().Now();
  if (prometheus_read_to_ != Timestamp() && now - prometheus_read_to_ < prometheus_interval_) return;
  // From where the last read ended (at most one retention back), a sample
  // every half interval, at most one a minute.
  Timestamp from = prometheus_read_to_ == Timestamp() ? now - samples_retention_ : prometheus_read_to_;
  if (now - from > samples_retention_) from = now - samples_retention_;
  Micros step = std::min(Micros(60LL * 1000000), std::max(Micros(1000000), prometheus_interval_ / 2));
  auto samples = prometheus_->Fetch(from, now, step);
  if (!samples.ok()) {
    ++prometheus_errors_;
    spdlog::warn("telemetry: reading Prometheus: {}", samples.status().ToString());
    return;
  }
  prometheus_samples_ += static_cast<int64_t>(samples->size());
  prometheus_read_to_ = now;
  MutexLock lock(mu_);
  samples_.Add(*samples);
}

Status ReaperService::TickOnce() {
  SchedulerService::Utilization u = scheduler_.SampleUtilization();
  if (!u.leader) return Status::Ok();
  PollPrometheus();
  MutexLock lock(mu_);
  samples_.Add(u.samples);
  samples_.Prune(u.now);
  std::map<std::pair<std::string, int>, const ActiveAttempt*> by_key;
  for (const ActiveAttempt& r : u.running) by_key[{r.job_id, r.attempt}] = &r;
  std::vector<WriteFn> work;
  std::vector<std::pair<size_t, const telemetry::ReaperAction*>> cancels;  // unit index, cancel
  std::vector<telemetry::ReaperAction> actions = reaper_.Evaluate(u.now, u.running, samples_);
  for (const telemetry::ReaperAction& a : actions) {
    const ActiveAttempt& view = *by_key.at({a.job_id, a.attempt});
    // What the idle time cost, for `causeway waste`: all the attempt's GPUs
    // for as long as it has been idle, at its price.
    // Never longer than the attempt has run: the reaper judges no attempt
    // younger than its window.
    const int64_t idle_seconds = a.idle_for.count() / 1000000;
    Details details = {{"policy", a.policy},         {"attempt", a.attempt},
                              {"gpu", a.gpu},               {"max_percent", a.max_percent},
                              {"dry_run", a.dry_run},       {"reason", a.reason},
                              {"team", view.team},          {"owner", view.owner},
                              {"gpus", view.gpus},          {"idle_seconds", idle_seconds},
                              {"price_micros", view.price_micros}};
    const bool cancel = a.kind == telemetry::ReaperAction::kCancel && !a.dry_run;
    auto job = std::make_shared<JobRecord>();
    WriteFn cancel_write = cancel ? CancelJobWrite(a.job_id, "reaper", "idle: " + a.reason, u.now, job,
                                                   {{"policy", a.policy}})
                                  : WriteFn();
    work.push_back([=](WriteTx& tx) -> Status {
      AuditEvent e;
      e.time = u.now;
      e.actor = "reaper";
      e.action = ActionName(a.kind);
      e.resource = "job/" + a.job_id;
      e.details = details;
      RETURN_IF_ERROR(tx.AppendAudit(e));
      RETURN_IF_ERROR(tx.AddJobEvent(JobEvent{0, a.job_id, u.now, e.action, (a.dry_run ? "(dry run) " : "") + a.reason}));
      return cancel_write ? cancel_write(tx) : Status::Ok();
    });
    if (cancel) cancels.emplace_back(work.size() - 1, &a);
  }
  lock.Unlock();
  if (work.empty()) return Status::Ok();
  std::vector<Status> results = queue_.RunAll(std::move(work));
  // Once durable, a cancel goes the way of one a person asks for: the
  // scheduler stops the attempt and frees its GPUs. A job that finished in
  // the meantime refused its unit and is left alone; a cancel whose write
  // failed is tried again.
  for (const auto& [index, a] : cancels) {
    if (results[index].ok()) {
      scheduler_.OnCancelled(a->job_id);
    } else if (results[index].code() != Code::kFailedPrecondition) {
      MutexLock relock(mu_);
      reaper_.CancelNotDone(a->job_id, a->attempt);
    }
  }
  for (const Status& st : results) {
    if (!st.ok() && st.code() != Code::kFailedPrecondition) return st;
  }
  return Status::Ok();
}

Result<ReaperService::Pushed> ReaperService::Push(const JobReader& store, std::vector<GpuSample> samples, Timestamp now) {
  // The running attempts of the jobs named, read before the lock: (job,
  // attempt) -> GPUs, and job -> its running attempt.
  std::map<std::string, std::vector<Attempt>> attempts;
  for (const GpuSample& s : samples) {
    if (attempts.count(s.job_id)) continue;
    if (attempts.size() >= limits_.max_jobs_per_push) {
      return InvalidArgument("a push may name at most " + std::to_string(limits_.max_jobs_per_push) + " jobs");
    }
    std::vector<Attempt> running;
    if (s.job_id.size() <= 128) {
      ASSIGN_OR_RETURN(auto all, store.ListAttempts(s.job_id));
      for (Attempt& a : all) {
        if (a.state == "running") running.push_back(std::move(a));
      }
    }
    attempts.emplace(s.job_id, std::move(running));
  }
  Pushed out;
  std::vector<GpuSample> kept;
  const Timestamp oldest = now - limits_.max_age, newest = now + limits_.max_ahead;
  for (GpuSample& s : samples) {
    const std::vector<Attempt>& running = attempts[s.job_id];
    const Attempt* a = nullptr;
    for (const Attempt& r : running) {
      if (s.attempt == 0 || r.number == s.attempt) a = &r;
    }
    if (!a) {
      ++out.unknown_attempt;
    } else if (s.time < oldest || s.time > newest) {
      ++out.outside_window;
    } else if (s.gpu < 0 || s.gpu >= std::max<int64_t>(1, a->gpus)) {
      ++out.gpu_out_of_range;
    } else {
      s.attempt = a->number;
      kept.push_back(std::move(s));
    }
  }
  telemetry::SampleStore::Added added;
  {
    MutexLock lock(mu_);
    added = samples_.Add(kept);
  }
  out.accepted = added.kept;
  out.stale = added.stale;
  out.over_limit = added.full;
  if (out.accepted == 0 && out.over_limit > 0) {
    return ResourceExhausted("telemetry is at its memory bound (" + std::to_string(limits_.max_points) + " points, " +
                             std::to_string(limits_.max_series) + " series): samples are dropped until older ones age out");
  }
  return out;
}

size_t ReaperService::points() {
  MutexLock lock(mu_);
  return samples_.points();
}

size_t ReaperService::series() {
  MutexLock lock(mu_);
  return samples_.series();
}

telemetry::Utilization ReaperService::AttemptUtilization(const std::string& job_id, int attempt) {
  MutexLock lock(mu_);
  return samples_.AttemptUtilization(job_id, attempt);
}

void ReaperService::Start(std::chrono::milliseconds interval) {
  ticker_.Start(interval, [this] {
    if (Status st = TickOnce(); !st.ok()) spdlog::warn("reaper cycle: {}", st.ToString());
  });
}

void ReaperService::Stop() { ticker_.Stop(); }

}  // namespace causeway
