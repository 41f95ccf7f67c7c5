// Readiness: every control per provider with its state, owner, reason and
// evidence, and the controls catalog as the estate has it. Both need
// audit:read (security and auditors).
#include "api/api_helpers.h"
#include "api/readiness_api.h"
#include "causeway/crypto.h"
#include "causeway/text.h"
#include "readiness/oscal.h"

namespace causeway::api {

using nlohmann::json;
using namespace identity;

namespace {

json ControlJson(const readiness::Control& c) {
  return {{"id", c.id}, {"title", c.title}, {"description", c.description}, {"nist", c.nist}, {"evidenced_by", c.how}};
}

json FindingJson(const readiness::Finding& f) {
  json evidence = json::array();
  for (const readiness::EvidenceItem& e : f.evidence) {
    json item = {{"what", e.what}, {"source", e.source}};
    if (!e.link.empty()) item["link"] = e.link;
    if (e.first_seq) item["first_seq"] = *e.first_seq;
    if (e.last_seq) item["last_seq"] = *e.last_seq;
    evidence.push_back(std::move(item));
  }
  json declarations = json::array();
  for (const ProviderDeclaration& d : f.declarations) {
    declarations.push_back({{"kind", d.kind}, {"statement", d.statement}, {"source", d.source},
                            {"date", FormatRfc3339(d.date).substr(0, 10)}});
  }
  json out = {{"control", f.control},
              {"provider", f.provider},
              {"state", readiness::StateCode(f.state)},
              {"reason", f.reason},
              {"responsible", f.responsible.empty() ? json(nullptr) : json(f.responsible)},
              {"owner", nullptr},
              {"evidence", evidence},
              {"declarations", declarations}};
  if (f.owner) out["owner"] = {{f.owner->group ? "group" : "user", f.owner->name}};
  return out;
}

// ?provider=P: "" for every provider; kNotFound for one the estate lacks.
Result<std::string> ProviderParam(const HttpRequest& req, const Estate& estate) {
  std::string provider = req.Query("provider");
  if (!provider.empty() && !estate.FindProvider(provider)) {
    return NotFound("the estate has no provider \"" + Utf8Prefix(provider, 64) + "\"");
  }
  return provider;
}

}  // namespace

void ReadinessApi::AddRoutes(RouteTable& routes) {
  routes.Route("GET", "/v1/readiness", kScopeAuditRead, Bind(this, &ReadinessApi::Readiness));
  routes.Route("GET", "/v1/readiness/controls", kScopeAuditRead, Bind(this, &ReadinessApi::ReadinessControls));
  routes.Route("GET", "/v1/readiness/oscal", kScopeAuditRead, Bind(this, &ReadinessApi::ReadinessOscal));
  routes.Route("GET", "/v1/readiness/questions", kScopeAuditRead, Bind(this, &ReadinessApi::ReadinessQuestions));
}

// ?provider=P: that provider's findings only. `summary` counts the states.
Result<HttpResponse> ReadinessApi::Readiness(HttpRequest& req) {
  ASSIGN_OR_RETURN(std::string provider, ProviderParam(req, estate_));
  ASSIGN_OR_RETURN(readiness::Report report, readiness_.Report());
  json findings = json::array();
  std::map<std::string, int> summary;
  for (const readiness::Finding* f : readiness::FindingsFor(report, provider)) {
    ++summary[std::string(readiness::StateCode(f->state))];
    findings.push_back(FindingJson(*f));
  }
  json providers = json::array();
  for (const std::string& p : report.providers) {
    if (provider.empty() || p == provider) providers.push_back(p);
  }
  return JsonResponse(200, {{"at", FormatRfc3339(report.at)},
                            {"providers", providers},
                            {"summary", summary},
                            {"findings", findings}});
}

Result<HttpResponse> ReadinessApi::ReadinessControls(HttpRequest&) {
  json controls = json::array();
  for (const readiness::Control& c : readiness::EffectiveCatalog(estate_.readiness)) controls.push_back(ControlJson(c));
  return JsonResponse(200, {{"controls", controls}});
}

// The four procurement questions per provider (?provider=P: one), each with
// the findings it rests on.
Result<HttpResponse> ReadinessApi::ReadinessQuestions(HttpRequest& req) {
  ASSIGN_OR_RETURN(std::string provider, ProviderParam(req, estate_));
  ASSIGN_OR_RETURN(readiness::Report report, readiness_.Report());
  json answers = json::array();
  for (const readiness::QuestionAnswer& a : readiness::AnswerQuestions(report, provider)) {
    json basis = json::array();
    for (const readiness::Finding* f : a.basis) {
      basis.push_back({{"control", f->control}, {"state", readiness::StateCode(f->state)}, {"reason", f->reason}});
    }
    answers.push_back({{"question", a.question->id},
                       {"text", a.question->text},
                       {"provider", a.provider},
                       {"answer", a.answer},
                       {"reason", a.reason},
                       {"controls", basis}});
  }
  return JsonResponse(200, {{"at", FormatRfc3339(report.at)}, {"answers", answers}});
}

// The report as an OSCAL 1.1 assessment-results document, a fresh document
// UUID each time (its findings keep theirs).
Result<HttpResponse> ReadinessApi::ReadinessOscal(HttpRequest&) {
  ASSIGN_OR_RETURN(readiness::Report report, readiness_.Report());
  std::string uuid = readiness::NameUuid("document/" + Sha256Hex(RandomBytes(16)));
  uuid[14] = '4';  // random, not derived from a name
  return JsonResponse(200, readiness::ToOscalAssessmentResults(report, uuid, CAUSEWAY_VERSION_STRING));
}

}  // namespace causeway::api
