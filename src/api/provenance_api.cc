// Provenance: a job's signed record, the key it is signed with, bulk
// export, the facts a job adds to its record, and a rerun's pinned spec.
#include "api/api_helpers.h"
#include "api/provenance_api.h"
#include "api/jobs_api.h"
#include "causeway/ids.h"
#include "provenance/rerun.h"

namespace causeway::api {

using nlohmann::json;
using namespace identity;

void ProvenanceApi::AddRoutes(RouteTable& routes) {
  routes.Route("GET", "/v1/jobs/{id}/provenance", kScopeJobsRead, Bind(this, &ProvenanceApi::JobProvenance), true);
  routes.Route("POST", "/v1/jobs/{id}/facts", kScopeJobsWrite, Bind(this, &ProvenanceApi::RecordJobFacts), true);
  routes.Route("GET", "/v1/jobs/{id}/rerun", kScopeJobsRead, Bind(this, &ProvenanceApi::RerunSpec));
  // The public keys: any valid token may read them (a verifier needs no
  // other right).
  routes.Route("GET", "/v1/provenance/keys", "", Bind(this, &ProvenanceApi::ProvenanceKeys));
  routes.Route("GET", "/v1/provenance/export", kScopeAuditRead, Bind(this, &ProvenanceApi::ExportProvenance));
}

// ?format=statement: the Statement alone, unsigned (for reading); else the
// DSSE envelope.
Result<HttpResponse> ProvenanceApi::JobProvenance(HttpRequest& req) {
  ASSIGN_OR_RETURN(JobDetail detail, VisibleJob(jobs_, req));
  std::string format = req.Query("format");
  if (format == "statement") {
    ASSIGN_OR_RETURN(json statement, provenance_.Statement(detail.job.id));
    return JsonResponse(200, statement);
  }
  if (!format.empty() && format != "dsse") {
    return InvalidArgument("query parameter \"format\" must be dsse (the default) or statement");
  }
  HttpResponse r;  // application/json: the envelope's own text
  ASSIGN_OR_RETURN(r.body, provenance_.Record(detail.job.id));
  return r;
}

Result<HttpResponse> ProvenanceApi::ProvenanceKeys(HttpRequest&) {
  ASSIGN_OR_RETURN(json keys, provenance_.PublicKeys());
  return JsonResponse(200, keys);
}

// JSON lines, one signed record per job, newest first, `limit` (at most
// 1000, by default 1000) per response; X-Causeway-Next-Cursor names the
// cursor for the next page (absent on the last).
Result<HttpResponse> ProvenanceApi::ExportProvenance(HttpRequest& req) {
  ProvenanceExport which;
  which.team = req.Query("team");
  for (auto [name, into] : {std::pair{"since", &which.since}, std::pair{"until", &which.until}}) {
    if (std::string v = req.Query(name); !v.empty()) {
      auto t = ParseRfc3339(v);
      if (!t.ok()) return InvalidArgument(std::string("query parameter \"") + name + "\": expected an RFC 3339 time");
      *into = *t;
    }
  }
  which.finished_only = req.Query("finished") == "true";
  which.before_id = req.Query("after");
  if (!which.before_id.empty() && !IsValidId(which.before_id, "job")) {
    return InvalidArgument("query parameter \"after\": expected the cursor a previous page gave (a job id)");
  }
  ASSIGN_OR_RETURN(auto limit, QueryInt(req, "limit", 1, 1000, "a number of records from 1 to 1000"));
  which.limit = limit.value_or(1000);
  HttpResponse r;
  r.content_type = "application/jsonl";
  ASSIGN_OR_RETURN(ProvenancePage page, provenance_.Export(which, [&r](const std::string& line) {
                     r.body += line;
                     r.body += '\n';
                     return true;
                   }));
  if (!page.next.empty()) r.headers.emplace_back("X-Causeway-Next-Cursor", page.next);
  r.headers.emplace_back("X-Causeway-Records", std::to_string(page.emitted));
  return r;
}

Result<HttpResponse> ProvenanceApi::RecordJobFacts(HttpRequest& req) {
  ASSIGN_OR_RETURN(JobDetail detail, VisibleJob(jobs_, req));
  if (!req.principal->IsJob(detail.job.id) && !req.principal->AllowsTeam(kScopeJobsWrite, detail.job.team)) {
    return PermissionDenied(req.principal->Describe() + " may not write to team " + detail.job.team + "'s jobs");
  }
  ASSIGN_OR_RETURN(JsonBody body, JsonBody::Parse(req));
  ASSIGN_OR_RETURN(std::vector<JobFact> recorded,
                   provenance_.RecordFacts(*req.principal, detail.job.id, body.Raw("facts"), body.Raw("artifacts")));
  json out = json::array();
  // Values were checked as JSON before they were recorded (FactsOf).
  for (const JobFact& f : recorded) {
    out.push_back({{"seq", f.seq}, {"attempt", f.attempt}, {"name", f.name},
                   {"value", json::parse(f.value, nullptr, false)}});
  }
  return JsonResponse(201, {{"recorded", out}});
}

// ?on=CLUSTER: also pinned to that cluster's provider and region.
Result<HttpResponse> ProvenanceApi::RerunSpec(HttpRequest& req) {
  ASSIGN_OR_RETURN(JobDetail detail, VisibleJob(jobs_, req));
  ASSIGN_OR_RETURN(provenance::JobHistory history, provenance::ReadHistory(store_, detail.job.id));
  ASSIGN_OR_RETURN(provenance::RerunPlan plan, provenance::PlanRerun(history, estate_, req.Query("on")));
  json pins = json::array();
  for (const provenance::Pin& p : plan.pins) pins.push_back({{"field", p.field}, {"value", p.value}, {"from", p.from}});
  return JsonResponse(200, {{"job", detail.job.id}, {"spec", plan.yaml}, {"pins", pins}, {"unpinned", plan.unpinned}});
}

}  // namespace causeway::api
