// /v1/queues, /v1/clusters and /v1/providers/...: the quota position of
// every queue, the estate's clusters, and the outage drill.

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
  Route("POST", "/v1/providers/{name}/outage", kScopeProvidersWrite, Bind(&ApiService::SetOutage));
  Route("GET", "/v1/clusters", kScopeClustersRead, Bind(&ApiService::ListClusters));
}

Result<HttpResponse> ApiService::ListQueues(HttpRequest&) {
  if (!scheduler_) return FailedPrecondition("this server runs no scheduler");
  auto queues = scheduler_->Queues();
  if (!queues.ok()) return queues.status();
  return JsonResponse(200, {{"queues", scheduler::ToJson(*queues)}});
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
