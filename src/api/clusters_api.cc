// /v1/queues, /v1/clusters and /v1/providers/...: the quota position of
// every queue, the estate's clusters, and the outage drill.

#include <algorithm>
#include <cmath>
#include <map>

#include "api/api_helpers.h"
#include "api/clusters_api.h"
#include "causeway/money.h"
#include "scheduler/explain_json.h"
#include "spec/spec_json.h"
#include "store/records_json.h"

namespace causeway::api {

using nlohmann::json;

void ClustersApi::AddRoutes(RouteTable& routes) {
  using namespace identity;
  routes.Route("GET", "/v1/queues", kScopeJobsRead, Bind(this, &ClustersApi::ListQueues));
  routes.Route("GET", "/v1/queues/{name}/jobs", kScopeJobsRead, Bind(this, &ClustersApi::ListQueuedJobs));
  routes.Route("GET", "/v1/queues/history", kScopeJobsRead, Bind(this, &ClustersApi::QueueHistory));
  routes.Route("POST", "/v1/providers/{name}/outage", kScopeProvidersWrite, Bind(this, &ClustersApi::SetOutage));
  routes.Route("GET", "/v1/clusters", kScopeClustersRead, Bind(this, &ClustersApi::ListClusters));
  routes.Route("GET", "/v1/capacity", kScopeClustersRead, Bind(this, &ClustersApi::Capacity));
}

Result<HttpResponse> ClustersApi::ListQueues(HttpRequest&) {
  if (!scheduler_) return FailedPrecondition("this server runs no scheduler");
  auto queues = scheduler_->Queues();
  if (!queues.ok()) return queues.status();
  return JsonResponse(200, {{"queues", scheduler::ToJson(*queues)}});
}

// GET /v1/queues/{name}/jobs?offset=N&limit=L: the queue's waiting jobs in
// the order the scheduler admits them (priority, then age), each with its
// position (1 is next). Someone who may read only some teams' jobs sees
// only their teams' queues.
Result<HttpResponse> ClustersApi::ListQueuedJobs(HttpRequest& req) {
  if (!scheduler_) return FailedPrecondition("this server runs no scheduler");
  const std::string& name = req.params["name"];
  const QueueConfig* queue = nullptr;
  for (const QueueConfig& q : estate_.queues) {
    if (q.name == name) queue = &q;
  }
  if (!queue || !req.principal->AllowsTeam(identity::kScopeJobsRead, queue->team)) {
    return NotFound("no queue \"" + name + "\" that you may read");
  }
  ASSIGN_OR_RETURN(auto offset, QueryInt(req, "offset", 0, 1'000'000, "a position from 0 to 1000000"));
  ASSIGN_OR_RETURN(int limit, LimitParam(req));
  ASSIGN_OR_RETURN(auto queued, scheduler_->QueuedJobs(name, static_cast<size_t>(offset.value_or(0)),
                                                       static_cast<size_t>(limit)));
  auto queues = scheduler_->Queues();
  if (!queues.ok()) return queues.status();
  int64_t total = 0;
  for (const scheduler::QueueStatus& q : *queues) {
    if (q.name == name) total = q.pending;
  }
  std::vector<std::string> ids;
  for (const auto& q : queued) ids.push_back(q.id);
  ASSIGN_OR_RETURN(auto records, store_.GetJobs(ids));
  std::map<std::string, const JobRecord*> by_id;
  for (const JobRecord& r : records) by_id[r.id] = &r;
  json items = json::array();
  int64_t position = offset.value_or(0);
  for (const auto& q : queued) {
    json item = {{"position", ++position}, {"id", q.id}, {"priority", q.priority},
                 {"submitted_at", FormatRfc3339(q.created_at)}};
    if (auto it = by_id.find(q.id); it != by_id.end()) {
      item["name"] = it->second->name;
      item["owner"] = it->second->owner;
      item["team"] = it->second->team;
    }
    items.push_back(std::move(item));
  }
  return JsonResponse(200, {{"queue", name}, {"queued", total}, {"jobs", items}});
}

// GET /v1/queues/history?days=N (1-90, default 14): per day (UTC) and
// team, from the ledger: how many jobs started their first attempt, how
// long they had waited since submission (p50 and p95, seconds), and how
// many attempts were preempted. Someone who may read only some teams'
// jobs sees only those teams.
Result<HttpResponse> ClustersApi::QueueHistory(HttpRequest& req) {
  ASSIGN_OR_RETURN(auto days, QueryInt(req, "days", 1, 90, "a number of days from 1 to 90"));
  const Timestamp now = clock_.Now();
  const Timestamp from = std::chrono::floor<std::chrono::days>(now) - std::chrono::days(days.value_or(14) - 1);
  ASSIGN_OR_RETURN(auto attempts, store_.ListAttemptsBetween(from, now + Micros(1)));
  struct Day {
    std::vector<int64_t> waits;  // seconds
    int64_t preemptions = 0;
  };
  std::map<std::pair<std::string, std::string>, Day> by;  // (day, team)
  auto day_of = [](Timestamp t) { return FormatRfc3339(t).substr(0, 10); };
  // First attempts that started in the window: their jobs' submission times.
  std::map<std::string, std::pair<std::string, Timestamp>> first;  // job -> (team, started)
  for (const MeteredAttempt& m : attempts) {
    if (!req.principal->AllowsTeam(identity::kScopeJobsRead, m.team)) continue;
    const Attempt& a = m.attempt;
    if (a.number == 1 && a.started_at >= from) first[a.job_id] = {m.team, a.started_at};
    if (a.state == "preempted" && a.ended_at && *a.ended_at >= from) ++by[{day_of(*a.ended_at), m.team}].preemptions;
  }
  std::vector<std::string> ids;
  auto flush = [&]() -> Status {
    ASSIGN_OR_RETURN(auto jobs, store_.GetJobs(ids));
    for (const JobRecord& j : jobs) {
      const auto& [team, started] = first[j.id];
      by[{day_of(started), team}].waits.push_back(
          std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(started - j.created_at).count()));
    }
    ids.clear();
    return Status::Ok();
  };
  for (const auto& [id, _] : first) {
    ids.push_back(id);
    if (ids.size() == 500) RETURN_IF_ERROR(flush());
  }
  if (!ids.empty()) RETURN_IF_ERROR(flush());
  auto quantile = [](std::vector<int64_t>& v, double q) -> int64_t {
    if (v.empty()) return 0;
    auto at = v.begin() + static_cast<std::ptrdiff_t>(q * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), at, v.end());
    return *at;
  };
  json rows = json::array();
  for (auto& [key, d] : by) {
    rows.push_back({{"day", key.first}, {"team", key.second}, {"started", d.waits.size()},
                    {"wait_p50_seconds", quantile(d.waits, 0.5)}, {"wait_p95_seconds", quantile(d.waits, 0.95)},
                    {"preemptions", d.preemptions}});
  }
  return JsonResponse(200, {{"from", day_of(from)}, {"rows", rows}});
}

Result<HttpResponse> ClustersApi::SetOutage(HttpRequest& req) {
  if (!scheduler_) return FailedPrecondition("this server runs no scheduler");
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return body.status();
  auto down_field = body->Bool("down");
  if (!down_field.ok()) return down_field.status();
  if (!*down_field) return InvalidArgument("field \"down\" must be true or false");
  bool down = **down_field;
  Status st = scheduler_->SetOutage(req.params["name"], down, req.principal->token_id);
  if (!st.ok()) return st;
  return JsonResponse(200, {{"provider", req.params["name"]}, {"down", down}});
}

Result<HttpResponse> ClustersApi::ListClusters(HttpRequest&) {
  json items = json::array();
  for (const auto& c : estate_.clusters) items.push_back(ToJson(c, estate_));
  return JsonResponse(200, {{"clusters", items}});
}

// GET /v1/capacity?days=N (1-90, default 14): GPUs per cluster and pool,
// from the ledger's running attempts: how many the pools have, how many are
// allocated and free, and how many of the allocated ones the GPU telemetry
// shows idle (below the lowest reaper threshold, 20% without one, over the
// attempt so far); each running job the caller may read, with its GPUs,
// its cost per hour and its utilization; and, per day (UTC), the GPU time
// allocated and the share the telemetry saw busy.
Result<HttpResponse> ClustersApi::Capacity(HttpRequest& req) {
  ASSIGN_OR_RETURN(auto days, QueryInt(req, "days", 1, 90, "a number of days from 1 to 90"));
  const Timestamp now = clock_.Now();
  int threshold = 20;
  for (const ReaperConfig& p : estate_.reaper) threshold = std::min(threshold, p.threshold_percent);
  JobFilter running;
  running.state = JobState::kRunning;
  running.limit = 1000;
  ASSIGN_OR_RETURN(auto jobs, store_.ListJobs(running));
  struct Pool {
    int64_t gpus = 0, allocated = 0, idle = 0, unobserved = 0;
  };
  std::map<std::pair<std::string, std::string>, Pool> pools;
  for (const Cluster& c : estate_.clusters) {
    for (const NodePool& p : c.node_pools) {
      if (!p.cpu_only()) pools[{c.name, p.name}].gpus = int64_t{p.gpus_per_node} * p.nodes;
    }
  }
  json running_jobs = json::array();
  for (const JobRecord& j : jobs) {
    ASSIGN_OR_RETURN(auto attempts, store_.ListAttempts(j.id));
    if (attempts.empty() || attempts.back().state != "running") continue;
    const Attempt& a = attempts.back();
    auto pool = pools.find({a.cluster, a.pool});
    if (pool == pools.end()) continue;  // a CPU-only pool, or one the estate no longer has
    pool->second.allocated += a.gpus;
    std::optional<double> busy;
    if (reaper_) {
      telemetry::Utilization u = reaper_->AttemptUtilization(j.id, a.number);
      if (u.observed_gpu_us > 0) busy = static_cast<double>(u.work_percent_us) / static_cast<double>(u.observed_gpu_us);
    }
    if (!busy) pool->second.unobserved += a.gpus;
    else if (*busy < threshold) pool->second.idle += a.gpus;
    if (!req.principal->AllowsTeam(identity::kScopeJobsRead, j.team)) continue;
    ASSIGN_OR_RETURN(Money hourly, Money::Scale(Money(a.price_micros, estate_.currency), a.gpus, 1));
    running_jobs.push_back({{"id", j.id}, {"name", j.name}, {"team", j.team}, {"owner", j.owner}, {"cluster", a.cluster},
                            {"pool", a.pool}, {"gpus", a.gpus}, {"since", FormatRfc3339(a.started_at)},
                            {"cost_per_hour", hourly.AmountString()},
                            {"utilization_percent", busy ? json(std::round(*busy * 10) / 10) : json(nullptr)}});
  }
  json pool_rows = json::array();
  for (const auto& [key, p] : pools) {
    pool_rows.push_back({{"cluster", key.first}, {"pool", key.second}, {"gpus", p.gpus}, {"allocated", p.allocated},
                         {"free", std::max<int64_t>(0, p.gpus - p.allocated)}, {"idle", p.idle},
                         {"unobserved", p.unobserved}});
  }
  // Per day: GPU time of attempts (running ones up to now) and what the
  // telemetry saw of it, busy and in all.
  const Timestamp from = std::chrono::floor<std::chrono::days>(now) - std::chrono::days(days.value_or(14) - 1);
  ASSIGN_OR_RETURN(auto attempts, store_.ListAttemptsBetween(from, now + Micros(1)));
  struct Day {
    int64_t allocated_s = 0, observed_s = 0, work_s = 0;
  };
  std::map<std::string, Day> by_day;
  for (const MeteredAttempt& m : attempts) {
    const Attempt& a = m.attempt;
    if (a.gpus <= 0) continue;
    Timestamp end = a.ended_at.value_or(now);
    Day& d = by_day[FormatRfc3339(end).substr(0, 10)];
    int64_t seconds = std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::seconds>(end - std::max(a.started_at, from)).count());
    d.allocated_s += seconds * a.gpus;
    d.observed_s += a.observed_gpu_seconds;
    d.work_s += a.work_gpu_seconds;
  }
  json day_rows = json::array();
  for (const auto& [day, d] : by_day) {
    day_rows.push_back({{"day", day},
                        {"allocated_gpu_hours", std::round(static_cast<double>(d.allocated_s) / 36.0) / 100},
                        {"observed_gpu_hours", std::round(static_cast<double>(d.observed_s) / 36.0) / 100},
                        {"utilization_percent", d.observed_s > 0 ? json(std::round(1000.0 * static_cast<double>(d.work_s) /
                                                                                static_cast<double>(d.observed_s)) / 10)
                                                                  : json(nullptr)}});
  }
  return JsonResponse(200, {{"at", FormatRfc3339(now)}, {"currency", estate_.currency}, {"idle_below_percent", threshold},
                            {"telemetry", reaper_ != nullptr}, {"pools", pool_rows}, {"running", running_jobs},
                            {"days", day_rows}});
}

}  // namespace causeway::api
