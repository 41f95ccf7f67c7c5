// Services over HTTP:
//
//   POST   /v1/services         {spec: the task file's text, file, name, port}: 201, the service
//   GET    /v1/services         the services of the caller's teams, with what the control loop last saw
//   GET    /v1/services/{name}  one, with its replicas, counters over time and transitions
//   PUT    /v1/services/{name}  {spec, file, mode: rolling|blue_green}: a new revision of its task;
//                                its replicas are replaced without a pause in serving
//   DELETE /v1/services/{name}  takes it down: its replicas end, its proxy stops
#include "api/services_api.h"

#include <nlohmann/json.hpp>

#include "api/api_helpers.h"

namespace causeway::api {

using nlohmann::json;

namespace {

json ServiceJson(const ServiceStatus& s, bool whole) {
  const ServiceRecord& r = s.record;
  json out = {{"name", r.name},
              {"team", r.team},
              {"owner", r.owner},
              {"state", r.up ? "up" : "going down"},
              {"endpoint", "http://" + r.endpoint_host + ":" + std::to_string(r.endpoint_port)},
              {"mode", serving::ToString(s.mode)},
              {"target_replicas", s.target},
              {"ready_replicas", 0},
              {"qps", s.qps},
              {"requests", s.requests},
              {"errors", s.errors},
              {"proxy", s.proxy},
              {"revision", r.revision},
              {"update_mode", r.update_mode},
              {"created_at", FormatRfc3339(r.created_at)},
              {"updated_at", FormatRfc3339(r.updated_at)}};
  if (!s.refused.empty()) out["replicas_refused"] = s.refused;
  if (!s.preferred.empty() || !s.alternate.empty()) {
    out["failover"] = {{"preferred", s.preferred},
                       {"preferred_provider", s.preferred_provider},
                       {"alternate", s.alternate},
                       {"alternate_provider", s.alternate_provider},
                       {"warm", s.warm},
                       {"hold_down_seconds", s.hold_down_s}};
  }
  int ready = 0;
  json replicas = json::array();
  for (const ReplicaStatus& x : s.replicas) {
    if (x.state == "ready") ++ready;
    replicas.push_back({{"job", x.job},
                        {"role", serving::ToString(x.role)},
                        {"state", x.state},
                        {"revision", x.revision},
                        {"cluster", x.cluster},
                        {"address", x.address},
                        {"in_traffic", x.in_traffic},
                        {"requests", x.requests},
                        {"errors", x.errors},
                        {"probe", x.probe}});
  }
  out["ready_replicas"] = ready;
  out["replicas"] = std::move(replicas);
  if (!whole) return out;
  json history = json::array();
  for (const ServiceSample& h : s.history) {
    history.push_back({{"at", FormatRfc3339(h.at)}, {"requests", h.requests}, {"errors", h.errors}});
  }
  out["history"] = std::move(history);
  json transitions = json::array();
  for (const ServiceStatus::Transition& t : s.transitions) {
    transitions.push_back({{"at", FormatRfc3339(t.at)},
                           {"to", serving::ToString(t.to)},
                           {"reason", t.reason},
                           {"next_action_owner", t.owner}});
  }
  out["transitions"] = std::move(transitions);
  out["spec_yaml"] = r.spec_yaml;
  return out;
}

// The answer to a change (up, update, down): the service as stored, the
// proxy described by what the change does to it.
HttpResponse Changed(int status, ServiceRecord record, std::string proxy) {
  ServiceStatus s;
  s.record = std::move(record);
  s.proxy = std::move(proxy);
  return JsonResponse(status, ServiceJson(s, false));
}

}  // namespace

void ServicesApi::AddRoutes(RouteTable& routes) {
  using identity::kScopeJobsRead;
  using identity::kScopeJobsWrite;
  routes.Route("POST", "/v1/services", kScopeJobsWrite, Bind(this, &ServicesApi::Up));
  routes.Route("GET", "/v1/services", kScopeJobsRead, Bind(this, &ServicesApi::List));
  routes.Route("GET", "/v1/services/{name}", kScopeJobsRead, Bind(this, &ServicesApi::Show));
  routes.Route("PUT", "/v1/services/{name}", kScopeJobsWrite, Bind(this, &ServicesApi::Update));
  routes.Route("DELETE", "/v1/services/{name}", kScopeJobsWrite, Bind(this, &ServicesApi::Down));
}

Status ServicesApi::Running() const {
  if (!serving_) return Unavailable("this server runs no services (it was started without a place for them)");
  return Status::Ok();
}

Result<HttpResponse> ServicesApi::Up(HttpRequest& req) {
  RETURN_IF_ERROR(Running());
  ASSIGN_OR_RETURN(JsonBody body, JsonBody::Parse(req));
  UpRequest r;
  ASSIGN_OR_RETURN(r.spec_yaml, body.RequiredString("spec", "the task file's text, with its service: section"));
  ASSIGN_OR_RETURN(r.file, body.String("file", "service.yaml"));
  ASSIGN_OR_RETURN(r.name, body.String("name"));
  ASSIGN_OR_RETURN(auto port, body.Int("port", 0, 65535));
  r.port = static_cast<int>(port.value_or(0));
  ASSIGN_OR_RETURN(ServiceRecord made, serving_->Up(*req.principal, r));
  return Changed(201, std::move(made), "not started yet");
}

Result<HttpResponse> ServicesApi::List(HttpRequest& req) {
  RETURN_IF_ERROR(Running());
  ASSIGN_OR_RETURN(auto all, serving_->List(*req.principal));
  json items = json::array();
  for (const ServiceStatus& s : all) items.push_back(ServiceJson(s, false));
  return JsonResponse(200, {{"services", items}});
}

Result<HttpResponse> ServicesApi::Show(HttpRequest& req) {
  RETURN_IF_ERROR(Running());
  ASSIGN_OR_RETURN(ServiceStatus s, serving_->Get(*req.principal, req.params["name"]));
  return JsonResponse(200, ServiceJson(s, true));
}

Result<HttpResponse> ServicesApi::Update(HttpRequest& req) {
  RETURN_IF_ERROR(Running());
  ASSIGN_OR_RETURN(JsonBody body, JsonBody::Parse(req));
  UpdateRequest r;
  ASSIGN_OR_RETURN(r.spec_yaml, body.RequiredString("spec", "the task file's new text, with its service: section"));
  ASSIGN_OR_RETURN(r.file, body.String("file", "service.yaml"));
  ASSIGN_OR_RETURN(r.mode, body.String("mode", "rolling"));
  ASSIGN_OR_RETURN(ServiceRecord updated, serving_->Update(*req.principal, req.params["name"], r));
  return Changed(200, std::move(updated), "unchanged (an update keeps it serving)");
}

Result<HttpResponse> ServicesApi::Down(HttpRequest& req) {
  RETURN_IF_ERROR(Running());
  ASSIGN_OR_RETURN(ServiceRecord r, serving_->Down(*req.principal, req.params["name"]));
  return Changed(200, std::move(r), "stopping");
}

}  // namespace causeway::api
