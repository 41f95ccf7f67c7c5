// Acceptance runs: `causeway acceptance ...` hands each run's verdict back
// (admin, who ran it), and security reads the latest of each test
// (audit:read). The report's steps are bounded here; the rest of the
// report stays in the files the test wrote, named by its digest.
#include "api/api_helpers.h"
#include "api/acceptance_api.h"

namespace causeway::api {

using nlohmann::json;
using namespace identity;

namespace {

json RunJson(const AcceptanceRun& r) {
  json steps = json::array();
  for (const AcceptanceStep& s : r.steps) {
    steps.push_back({{"step", s.name}, {"result", s.result}, {"detail", s.detail}, {"audit_seqs", s.audit_seqs}});
  }
  json out = {{"test", r.test},
              {"passed", r.passed},
              {"started", FormatRfc3339(r.started)},
              {"finished", FormatRfc3339(r.finished)},
              {"steps", steps},
              {"report_sha256", r.report_sha256},
              {"seq", r.seq},
              {"actor", r.actor}};
  if (!r.provider.empty()) out["provider"] = r.provider;
  if (r.recovery_ms) out["recovery_ms"] = *r.recovery_ms;
  if (r.objective_ms) out["objective_ms"] = *r.objective_ms;
  return out;
}

Result<Timestamp> TimeField(const JsonBody& body, std::string_view field) {
  ASSIGN_OR_RETURN(std::string text, body.RequiredString(field, "an RFC 3339 time"));
  auto t = ParseRfc3339(text);
  if (!t.ok()) return body.Wrong(field, "an RFC 3339 time");
  return *t;
}

Result<std::vector<AcceptanceStep>> Steps(const JsonBody& body) {
  const json& raw = body.Raw("steps");
  if (!raw.is_array() || raw.empty() || raw.size() > AcceptanceService::kMaxSteps) {
    return body.Wrong("steps", "a list of 1 to 50 steps");
  }
  std::vector<AcceptanceStep> out;
  for (const json& s : raw) {
    if (!s.is_object() || !s.contains("step") || !s["step"].is_string() || !s.contains("result") ||
        !s["result"].is_string()) {
      return body.Wrong("steps", "steps as objects with step and result strings");
    }
    AcceptanceStep step{s["step"], s["result"], s.value("detail", ""), {}};
    if (s.contains("audit_seqs")) {
      if (!s["audit_seqs"].is_array()) return body.Wrong("steps", "audit_seqs as a list of audit sequence numbers");
      for (const json& q : s["audit_seqs"]) {
        if (!q.is_number_integer()) return body.Wrong("steps", "audit_seqs as a list of audit sequence numbers");
        step.audit_seqs.push_back(q.get<int64_t>());
      }
    }
    out.push_back(std::move(step));
  }
  return out;
}

}  // namespace

void AcceptanceApi::AddRoutes(RouteTable& routes) {
  routes.Route("POST", "/v1/acceptance/runs", kScopeAdmin, Bind(this, &AcceptanceApi::RecordAcceptance));
  routes.Route("GET", "/v1/acceptance/runs", kScopeAuditRead, Bind(this, &AcceptanceApi::AcceptanceRuns));
}

Result<HttpResponse> AcceptanceApi::RecordAcceptance(HttpRequest& req) {
  ASSIGN_OR_RETURN(JsonBody body, JsonBody::Parse(req));
  AcceptanceRun run;
  ASSIGN_OR_RETURN(run.test, body.RequiredString("test", "identity, recovery, residency, data or failover"));
  ASSIGN_OR_RETURN(auto passed, body.Bool("passed"));
  if (!passed) return body.Wrong("passed", "true or false");
  run.passed = *passed;
  ASSIGN_OR_RETURN(run.started, TimeField(body, "started"));
  ASSIGN_OR_RETURN(run.finished, TimeField(body, "finished"));
  ASSIGN_OR_RETURN(run.provider, body.String("provider"));
  ASSIGN_OR_RETURN(run.recovery_ms, body.Int("recovery_ms", 0, INT64_MAX));
  ASSIGN_OR_RETURN(run.objective_ms, body.Int("objective_ms", 0, INT64_MAX));
  ASSIGN_OR_RETURN(run.report_sha256, body.String("report_sha256"));
  bool hex = run.report_sha256.size() == 64 &&
             run.report_sha256.find_first_not_of("0123456789abcdef") == std::string::npos;
  if (!run.report_sha256.empty() && !hex) {
    return body.Wrong("report_sha256", "the report's SHA-256 as 64 lowercase hex digits");
  }
  ASSIGN_OR_RETURN(run.steps, Steps(body));
  ASSIGN_OR_RETURN(AcceptanceRun recorded, acceptance_.Record(std::move(run), req.principal->token_id));
  return JsonResponse(201, {{"run", RunJson(recorded)}});
}

// The latest run of each test.
Result<HttpResponse> AcceptanceApi::AcceptanceRuns(HttpRequest&) {
  ASSIGN_OR_RETURN(auto latest, acceptance_.Latest());
  json runs = json::array();
  for (std::string_view test : kAcceptanceTests) {
    auto it = latest.find(std::string(test));
    runs.push_back(it == latest.end() ? json{{"test", test}, {"seq", nullptr}} : RunJson(it->second));
  }
  json objective = nullptr;
  if (estate_.readiness.recovery_objective) {
    objective = std::chrono::duration_cast<std::chrono::milliseconds>(*estate_.readiness.recovery_objective).count();
  }
  return JsonResponse(200, {{"runs", runs}, {"recovery_objective_ms", objective}});
}

}  // namespace causeway::api
