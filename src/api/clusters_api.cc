// /v1/queues, /v1/clusters and /v1/providers/...: the quota position of
// every queue, the estate's clusters, and the outage drill.

#include <algorithm>
#include <map>

#include "api/api_helpers.h"
#include "api/api_service.h"
#include "scheduler/explain_json.h"
#include "spec/spec_json.h"
#include "store/records_json.h"

namespace causeway::api {

using nlohmann::json;

void ApiService::AddClusterRoutes() {
  using namespace identity;
  Route("GET", "/v1/queues", kScopeJobsRead, Bind(&ApiService::ListQueues));
  Route("GET", "/v1/queues/{name}/jobs", kScopeJobsRead, Bind(&ApiService::ListQueuedJobs));
  Route("POST", "/v1/providers/{name}/outage", kScopeProvidersWrite, Bind(&ApiService::SetOutage));
  Route("GET", "/v1/clusters", kScopeClustersRead, Bind(&ApiService::ListClusters));
}

Result<HttpResponse> ApiService::ListQueues(HttpRequest&) {
  if (!scheduler_) return FailedPrecondition("this server runs no scheduler");
  auto queues = scheduler_->Queues();
  if (!queues.ok()) return queues.status();
  return JsonResponse(200, {{"queues", scheduler::ToJson(*queues)}});
}

// GET /v1/queues/{name}/jobs?offset=N&limit=L: the queue's waiting jobs in
// the order the scheduler admits them (priority, then age), each with its
// position (1 is next). Someone who may read only some teams' jobs sees
// only their teams' queues.
Result<HttpResponse> ApiService::ListQueuedJobs(HttpRequest& req) {
  if (!scheduler_) return FailedPrecondition("this server runs no scheduler");
  const std::string& name = req.params["name"];
  const QueueConfig* queue = nullptr;
  for (const QueueConfig& q : estate_.queues) {
    if (q.name == name) queue = &q;
  }
  std::vector<std::string> teams = req.principal->TeamsFor(identity::kScopeJobsRead);
  if (!queue || (!teams.empty() && std::find(teams.begin(), teams.end(), queue->team) == teams.end())) {
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

Result<HttpResponse> ApiService::SetOutage(HttpRequest& req) {
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

Result<HttpResponse> ApiService::ListClusters(HttpRequest&) {
  json items = json::array();
  for (const auto& c : estate_.clusters) items.push_back(ToJson(c, estate_));
  return JsonResponse(200, {{"clusters", items}});
}

}  // namespace causeway::api
