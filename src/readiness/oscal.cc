#include "readiness/oscal.h"

#include <cctype>
#include <map>
#include <set>

#include "causeway/clock.h"
#include "causeway/crypto.h"

namespace causeway::readiness {

using nlohmann::json;

namespace {

// Props Causeway adds are in its own namespace, as OSCAL asks of
// extensions.
constexpr const char* kNs = "urn:causeway:readiness";

// OSCAL strings of kind "string" may not be empty, start or end with
// white space, or span lines.
std::string OneLine(std::string_view s) {
  std::string out;
  for (char c : s) {
    bool space = std::isspace(static_cast<unsigned char>(c));
    if (space && (out.empty() || out.back() == ' ')) continue;
    out += space ? ' ' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.empty() ? "-" : out;
}

json Prop(std::string_view name, std::string_view value) {
  return {{"name", std::string(name)}, {"ns", kNs}, {"value", OneLine(value)}};
}

// A token (OSCAL's identifiers): a letter or "_", then letters, digits,
// ".", "-" or "_".
std::string Token(std::string_view s) {
  std::string out;
  for (char c : s) out += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ? c : '_';
  if (out.empty() || !std::isalpha(static_cast<unsigned char>(out[0]))) out.insert(out.begin(), '_');
  return out;
}

// in place: satisfied and implemented; partly: not satisfied, partial;
// not in place: not satisfied, planned at best; not applicable: satisfied
// as far as the assessment goes, and said so.
json Status(State s) {
  switch (s) {
    case State::kInPlace: return {{"state", "satisfied"}, {"reason", "pass"}};
    case State::kPartly: return {{"state", "not-satisfied"}, {"reason", "other"}};
    case State::kNotInPlace: return {{"state", "not-satisfied"}, {"reason", "fail"}};
    case State::kNotApplicable: return {{"state", "satisfied"}, {"reason", "other"}};
  }
  return {{"state", "not-satisfied"}};
}

std::string_view Implementation(State s) {
  switch (s) {
    case State::kInPlace: return "implemented";
    case State::kPartly: return "partial";
    case State::kNotInPlace: return "planned";
    case State::kNotApplicable: return "not-applicable";
  }
  return "planned";
}

std::string PartyKey(const ControlOwner& o) { return std::string(o.group ? "group/" : "person/") + o.name; }

// Measured evidence (the directory, the audit trail, provenance) is a test
// of the live system; the estate and the providers' declarations are
// examined documents.
bool Measured(const Finding& f) {
  for (const EvidenceItem& e : f.evidence) {
    if (e.source != "estate" && e.source != "declaration") return true;
  }
  return false;
}

json Observation(const Finding& f, const Control& c, const std::string& at) {
  json evidence = json::array();
  for (const EvidenceItem& e : f.evidence) {
    if (e.source == "declaration") continue;  // the declarations follow, with their source and date
    json item = {{"description", e.what}};
    // The API path that shows it (a relative reference to the server).
    if (!e.link.empty() && e.link.find_first_of(" \t\n") == std::string::npos) item["href"] = e.link;
    json props = json::array({Prop("source", e.source)});
    if (e.first_seq) props.push_back(Prop("audit-first-seq", std::to_string(*e.first_seq)));
    if (e.last_seq) props.push_back(Prop("audit-last-seq", std::to_string(*e.last_seq)));
    item["props"] = props;
    evidence.push_back(std::move(item));
  }
  for (const ProviderDeclaration& d : f.declarations) {
    evidence.push_back({{"description", "declared by " + f.provider + ": " + d.statement},
                        {"props", {Prop("source", "declaration"), Prop("declaration-kind", d.kind),
                                   Prop("declaration-source", d.source),
                                   Prop("declaration-date", FormatRfc3339(d.date).substr(0, 10))}}});
  }
  json o = {{"uuid", NameUuid("observation/" + f.control + "/" + f.provider + "/" + at)},
            {"title", c.title + " at " + f.provider},
            {"description", f.reason},
            {"props", {Prop("control", f.control), Prop("provider", f.provider)}},
            {"methods", {Measured(f) ? "TEST" : "EXAMINE"}},
            {"types", {"control-objective"}},
            {"collected", at}};
  if (!evidence.empty()) o["relevant-evidence"] = evidence;
  return o;
}

json FindingOf(const Finding& f, const Control& c, const json& observation) {
  json props = json::array({Prop("control", f.control), Prop("provider", f.provider),
                            Prop("state", StateCode(f.state))});
  if (!f.responsible.empty()) props.push_back(Prop("responsible", f.responsible));
  if (f.owner) props.push_back(Prop(f.owner->group ? "owner-group" : "owner-person", f.owner->name));
  for (const std::string& n : c.nist) props.push_back(Prop("nist-sp800-53r5", OscalControlId(n)));
  json target = {{"type", "objective-id"},
                 {"target-id", Token(f.control)},
                 {"status", Status(f.state)},
                 {"implementation-status", {{"state", Implementation(f.state)}}}};
  target["status"]["remarks"] = std::string(StateName(f.state)) + ": " + f.reason;
  return {{"uuid", NameUuid("finding/" + f.control + "/" + f.provider)},
          {"title", c.title + " at " + f.provider},
          {"description", f.reason},
          {"props", props},
          {"target", target},
          {"related-observations", {{{"observation-uuid", observation["uuid"]}}}}};
}

// The document's metadata: the owners as parties, and per owned control a
// role whose responsible parties are its owners at every provider.
json Metadata(const Report& report, const std::string& at, const std::string& product_version) {
  std::map<std::string, json> parties;
  std::map<std::string, std::set<std::string>> owners_of;  // control -> party uuids
  for (const Finding& f : report.findings) {
    if (!f.owner) continue;
    std::string uuid = NameUuid("party/" + PartyKey(*f.owner));
    parties.emplace(PartyKey(*f.owner), json{{"uuid", uuid},
                                             {"type", f.owner->group ? "organization" : "person"},
                                             {"name", (f.owner->group ? "group " : "") + f.owner->name}});
    owners_of[f.control].insert(uuid);
  }
  json roles = json::array(), responsible = json::array(), party_list = json::array();
  for (const Control& c : report.controls) {
    auto it = owners_of.find(c.id);
    if (it == owners_of.end()) continue;
    std::string role = "owner-" + Token(c.id);
    roles.push_back({{"id", role}, {"title", "Owner of " + c.title}});
    responsible.push_back({{"role-id", role}, {"party-uuids", std::vector<std::string>(it->second.begin(), it->second.end())}});
  }
  for (auto& [key, p] : parties) party_list.push_back(p);
  json metadata = {{"title", "Causeway readiness: controls by provider"},
                   {"last-modified", at},
                   {"version", product_version},
                   {"oscal-version", std::string(kOscalVersion)}};
  if (!roles.empty()) metadata["roles"] = roles;
  if (!party_list.empty()) metadata["parties"] = party_list;
  if (!responsible.empty()) metadata["responsible-parties"] = responsible;
  return metadata;
}

// The NIST SP 800-53 controls the catalog maps to, as OSCAL selects them.
json ReviewedControls(const Report& report) {
  std::set<std::string> nist;
  for (const Control& c : report.controls) {
    for (const std::string& n : c.nist) nist.insert(OscalControlId(n));
  }
  json selection = json::object();
  if (nist.empty()) {
    selection["include-all"] = json::object();
  } else {
    json include = json::array();
    for (const std::string& n : nist) include.push_back({{"control-id", n}});
    selection["include-controls"] = include;
  }
  return {{"description", "The NIST SP 800-53 rev5 controls the catalog maps to."}, {"control-selections", {selection}}};
}

}  // namespace

std::string NameUuid(std::string_view name) {
  std::string h = Sha256Hex(std::string("causeway-readiness:") + std::string(name)).substr(0, 32);
  h[12] = '5';                                                  // version
  h[16] = "89ab"[std::stoi(std::string(1, h[16]), nullptr, 16) & 3];  // RFC 4122 variant
  return h.substr(0, 8) + "-" + h.substr(8, 4) + "-" + h.substr(12, 4) + "-" + h.substr(16, 4) + "-" + h.substr(20);
}

std::string OscalControlId(std::string_view nist_id) {
  std::string out;
  for (char c : nist_id) {
    if (c == '(') {
      out += '.';
    } else if (c != ')') {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

json ToOscalAssessmentResults(const Report& report, const std::string& document_uuid,
                              const std::string& product_version) {
  std::string at = FormatRfc3339(report.at);
  std::map<std::string, const Control*> controls;
  for (const Control& c : report.controls) controls[c.id] = &c;
  json observations = json::array(), findings = json::array();
  for (const Finding& f : report.findings) {
    const Control& c = *controls.at(f.control);
    json o = Observation(f, c, at);
    findings.push_back(FindingOf(f, c, o));
    observations.push_back(std::move(o));
  }
  json result = {{"uuid", NameUuid("result/" + at)},
                 {"title", "Readiness at " + at},
                 {"description",
                  "Each control of Causeway's catalog evaluated per provider from what Causeway measured in the live "
                  "system, its owner and the providers' declarations."},
                 {"start", at},
                 {"end", at},
                 {"reviewed-controls", ReviewedControls(report)}};
  if (!observations.empty()) result["observations"] = observations;
  if (!findings.empty()) result["findings"] = findings;
  return {{"assessment-results",
           {{"uuid", document_uuid},
            {"metadata", Metadata(report, at, product_version)},
            {"import-ap",
             {{"href", "/v1/readiness/controls"},
              {"remarks", "The plan assessed is Causeway's controls catalog as the estate has it."}}},
            {"results", {result}}}}};
}

}  // namespace causeway::readiness
