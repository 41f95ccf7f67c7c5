#include "planning/history.h"

#include <algorithm>
#include <chrono>

#include "causeway/json_input.h"
#include "spec/spec_json.h"

namespace causeway::planning {
namespace {

constexpr int64_t kUs = 1'000'000;

TraceStatus StatusOf(JobState s) {
  switch (s) {
    case JobState::kFailed: return TraceStatus::kFailed;
    case JobState::kCancelled: return TraceStatus::kCancelled;
    default: return TraceStatus::kCompleted;
  }
}

// The jobs submitted in [since, until), at most `max` (the newest), oldest
// first: newest first a page at a time until the window's start.
Result<std::vector<JobRecord>> JobsIn(const Store& store, Timestamp since, Timestamp until, size_t max) {
  std::vector<JobRecord> jobs;
  JobFilter filter;
  filter.limit = 500;
  bool more = true;
  while (more) {
    ASSIGN_OR_RETURN(auto page, store.ListJobs(filter));
    more = static_cast<int>(page.size()) == filter.limit;
    if (!page.empty()) filter.before_id = page.back().id;
    for (auto& j : page) {
      if (j.created_at < since) {
        more = false;
        break;
      }
      if (j.created_at < until) jobs.push_back(std::move(j));
      if (jobs.size() >= max) more = false;
    }
  }
  std::reverse(jobs.begin(), jobs.end());
  std::stable_sort(jobs.begin(), jobs.end(), [](const JobRecord& a, const JobRecord& b) { return a.created_at < b.created_at; });
  return jobs;
}

// What the ledger recorded of a job's attempts, and its run time: its
// successful attempt's, else its last ended attempt's (`run_s` unchanged
// when none ended).
std::vector<RecordedAttempt> Recorded(const std::vector<Attempt>& attempts, int64_t& run_s) {
  std::vector<RecordedAttempt> recorded;
  bool succeeded = false;
  for (const Attempt& a : attempts) {
    RecordedAttempt x{a.number, ToUnixMicros(a.started_at), a.ended_at ? ToUnixMicros(*a.ended_at) : -1,
                      a.cluster, a.pool, a.state, a.exit_code.value_or(0)};
    if (x.end_us >= x.start_us && !succeeded) {
      run_s = std::max<int64_t>(1, (x.end_us - x.start_us + kUs - 1) / kUs);
      succeeded = a.state == "succeeded";
    }
    recorded.push_back(std::move(x));
  }
  return recorded;
}

}  // namespace

Result<Trace> ReadHistory(const Store& store, Timestamp since, Timestamp until, const TraceLimits& limits) {
  if (until <= since) return InvalidArgument("the history's window is empty");
  ASSIGN_OR_RETURN(auto jobs, JobsIn(store, since, until, limits.max_jobs));
  Trace t;
  t.format = "history";
  t.source = "the ledger, jobs submitted since " + FormatRfc3339(since);
  auto h = std::make_shared<History>();
  h->origin = since;
  int64_t groups = 0, unreadable = 0;
  for (const JobRecord& r : jobs) {
    auto parsed = ParseUntrustedJson(r.spec_json, "job " + r.id + "'s spec");
    Result<JobSpec> spec = parsed.ok() ? JobSpecFromJson(*parsed) : Result<JobSpec>(parsed.status());
    if (!spec.ok() || spec->cpu_only()) {
      unreadable += !spec.ok();
      if (spec.ok()) ++t.cpu_only_skipped;
      continue;
    }
    ASSIGN_OR_RETURN(auto attempts, store.ListAttempts(r.id));
    // A job with no attempt ended yet runs as long as its spec's hint.
    int64_t run_s = std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(spec->sim.duration).count());
    std::vector<RecordedAttempt> recorded = Recorded(attempts, run_s);
    groups += r.job_group;
    const auto& alt = spec->accelerators.alternatives.front();
    TraceJob j;
    j.submit_s = (ToUnixMicros(r.created_at) - ToUnixMicros(since)) / kUs;
    j.duration_s = run_s;
    j.gpus = alt.count;
    j.nodes = spec->num_nodes;
    j.priority = static_cast<int16_t>(spec->priority);
    j.spot = alt.use_spot;
    j.status = StatusOf(r.state);
    j.team = t.Intern(t.teams, spec->team);
    j.zone = t.Intern(t.zones, spec->residency);
    std::vector<std::string> types;
    for (const auto& a : spec->accelerators.alternatives) types.push_back(a.type);
    j.types = t.InternTypes(std::move(types));
    t.jobs.push_back(j);
    h->ids.push_back(r.id);
    h->specs.push_back(std::move(*spec));
    h->submit_us.push_back(ToUnixMicros(r.created_at) - ToUnixMicros(since));
    h->after.push_back(r.after);
    h->final_state.push_back(r.state);
    h->attempts.push_back(std::move(recorded));
  }
  if (groups) t.notes.push_back(std::to_string(groups) + " tasks of job groups are replayed one by one, not as gangs");
  if (unreadable) t.notes.push_back(std::to_string(unreadable) + " jobs whose recorded spec could not be read are left out");
  t.history = std::move(h);
  // Already in submission order (ids grow with time); Finish keeps that.
  RETURN_IF_ERROR(t.Finish());
  return t;
}

}  // namespace causeway::planning
