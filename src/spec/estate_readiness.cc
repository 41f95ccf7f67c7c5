// The estate's readiness section: the controls it adds, who owns each
// control, and per provider its service model, who is responsible for each
// control and what the provider declares (docs/readiness.md).
#include "readiness/catalog.h"
#include "spec/estate_parser.h"

namespace causeway::estate_detail {

namespace {

inline constexpr std::string_view kDeclarationKinds[] = {"certification", "region",     "subprocessor",
                                                         "support-location", "escalation", "other"};

template <size_t N>
bool OneOf(const std::string& v, const std::string_view (&options)[N]) {
  return std::find(std::begin(options), std::end(options), v) != std::end(options);
}

template <size_t N>
std::string Listed(const std::string_view (&options)[N]) {
  std::string out;
  for (std::string_view o : options) out += (out.empty() ? "" : ", ") + std::string(o);
  return out;
}

}  // namespace

void EstateParser::ParseReadiness(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{{"recovery_objective", "owners", "controls", "providers"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  ReadinessConfig& c = e_.readiness;
  if (Get(n, "recovery_objective").IsDefined()) {
    Micros rto{0};
    DurationField(n, f, "recovery_objective", rto);
    if (rto.count() > 0) c.recovery_objective = rto;
  }
  // Added controls first: the rest may name them.
  std::set<std::string> ids;
  for (const auto& builtin : readiness::BuiltinCatalog()) ids.insert(builtin.id);
  std::set<std::string> declared;
  SubList(n, f, "controls", "{id, title, description, nist}",
          [&](const YAML::Node& item, const std::string& field) { ParseControl(item, field, declared, ids); });
  if (YAML::Node o = Get(n, "owners"); o.IsDefined()) c.owners = OwnerMap(o, JoinField(f, "owners"), ids);
  std::set<std::string> seen;
  SubList(n, f, "providers", "{provider, service_model, ...}", [&](const YAML::Node& item, const std::string& field) {
    ParseProviderReadiness(item, field, ids, seen);
  });
}

void EstateParser::SubList(const YAML::Node& n, const std::string& f, const char* key, const char* items,
                           const std::function<void(const YAML::Node&, const std::string&)>& each) {
  YAML::Node list = Get(n, key);
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) {
    r_.Error(list, JoinField(f, key), std::string("expected a list of ") + items);
    return;
  }
  int i = 0;
  for (const auto& item : list) each(item, JoinField(f, std::string(key) + "[" + std::to_string(i++) + "]"));
}

void EstateParser::ParseControl(const YAML::Node& n, const std::string& f, std::set<std::string>& declared,
                                std::set<std::string>& ids) {
  static const KeySet kKeys{{"id", "title", "description", "nist"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  ControlDeclaration d;
  d.id = Str(n, "id", f);
  if (d.id.empty()) return;
  if (!IsName(d.id)) {
    r_.Error(Get(n, "id"), JoinField(f, "id"), "invalid control id \"" + d.id + "\": expected lower-case letters, digits, '-', '_' or '.'");
    return;
  }
  if (!declared.insert(d.id).second) {
    r_.Error(Get(n, "id"), JoinField(f, "id"), "duplicate control \"" + d.id + "\"");
    return;
  }
  bool builtin = readiness::FindBuiltin(d.id) != nullptr;
  d.title = Str(n, "title", f, !builtin);
  d.description = Str(n, "description", f, !builtin);
  StringList(n, f, "nist", "[AC-2, AU-6]", d.nist);
  for (const std::string& id : d.nist) {
    if (!readiness::IsNistId(id)) {
      r_.Error(Get(n, "nist"), JoinField(f, "nist"),
               "\"" + id + "\" is not a NIST SP 800-53 control id: expected e.g. AC-2 or AC-2(3)");
    }
  }
  ids.insert(d.id);
  e_.readiness.controls.push_back(std::move(d));
}

ControlOwner EstateParser::Owner(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{{"user", "group"}};
  if (!r_.CheckMap(n, f, kKeys)) return {};
  std::string user = Str(n, "user", f, false), group = Str(n, "group", f, false);
  if (user.empty() == group.empty()) {
    r_.Error(n, f, "expected {user: USERNAME} or {group: GROUP}, one of them");
    return {};
  }
  return user.empty() ? ControlOwner{group, true} : ControlOwner{user, false};
}

std::map<std::string, ControlOwner> EstateParser::OwnerMap(const YAML::Node& n, const std::string& f,
                                                           const std::set<std::string>& ids) {
  std::map<std::string, ControlOwner> out;
  if (!n.IsMap()) {
    r_.Error(n, f, "expected a map of control ids to {user: …} or {group: …}");
    return out;
  }
  for (const auto& kv : n) {
    std::string id = kv.first.as<std::string>("");
    std::string field = JoinField(f, id);
    if (!KnownControl(kv.first, field, id, ids)) continue;
    ControlOwner o = Owner(kv.second, field);
    if (!o.name.empty()) out[id] = std::move(o);
  }
  return out;
}

bool EstateParser::KnownControl(const YAML::Node& at, const std::string& f, const std::string& id,
                                const std::set<std::string>& ids) {
  if (ids.count(id)) return true;
  std::vector<std::string_view> known(ids.begin(), ids.end());
  std::string hint = spec::ClosestMatch(id, known);
  r_.Error(at, f,
           "unknown control \"" + id + "\"" +
               (hint.empty() ? "; see `causeway readiness controls`, or add it under readiness.controls"
                             : "; did you mean \"" + hint + "\"?"));
  return false;
}

void EstateParser::ParseProviderReadiness(const YAML::Node& n, const std::string& f, const std::set<std::string>& ids,
                                          std::set<std::string>& seen) {
  static const KeySet kKeys{{"provider", "service_model", "responsible", "owners", "not_applicable", "declarations"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  ProviderReadiness p;
  p.provider = AuditProvider(n, f);
  if (!p.provider.empty() && !seen.insert(p.provider).second) {
    r_.Error(Get(n, "provider"), JoinField(f, "provider"), "provider \"" + p.provider + "\" is listed twice");
    return;
  }
  p.service_model = Str(n, "service_model", f);
  if (!p.service_model.empty() && !OneOf(p.service_model, kServiceModels)) {
    r_.Error(Get(n, "service_model"), JoinField(f, "service_model"),
             "unknown service model \"" + p.service_model + "\"; expected one of " + Listed(kServiceModels));
  }
  p.responsible = ControlTexts(n, f, "responsible", ids, [&](const YAML::Node& at, const std::string& field,
                                                             const std::string& party) {
    if (OneOf(party, kResponsibleParties)) return true;
    r_.Error(at, field, "unknown party \"" + party + "\"; expected one of " + Listed(kResponsibleParties));
    return false;
  });
  if (YAML::Node o = Get(n, "owners"); o.IsDefined()) p.owners = OwnerMap(o, JoinField(f, "owners"), ids);
  p.not_applicable = ControlTexts(n, f, "not_applicable", ids, [&](const YAML::Node& at, const std::string& field,
                                                                   const std::string& why) {
    if (!why.empty()) return true;
    r_.Error(at, field, "say why the control does not apply here");
    return false;
  });
  SubList(n, f, "declarations", "{kind, statement, source, date, controls}",
          [&](const YAML::Node& d, const std::string& field) {
            if (auto decl = Declaration(d, field, ids)) p.declarations.push_back(std::move(*decl));
          });
  e_.readiness.providers.push_back(std::move(p));
}

std::map<std::string, std::string> EstateParser::ControlTexts(
    const YAML::Node& n, const std::string& f, const char* key, const std::set<std::string>& ids,
    const std::function<bool(const YAML::Node&, const std::string&, const std::string&)>& valid) {
  std::map<std::string, std::string> out;
  YAML::Node m = Get(n, key);
  if (!m.IsDefined()) return out;
  std::string mf = JoinField(f, key);
  if (!m.IsMap()) {
    r_.Error(m, mf, "expected a map of control ids to text");
    return out;
  }
  for (const auto& kv : m) {
    std::string id = kv.first.as<std::string>(""), field = JoinField(mf, id);
    if (!KnownControl(kv.first, field, id, ids)) continue;
    std::string text = r_.String(kv.second, field).value_or("");
    if (valid(kv.second, field, text)) out[id] = text;
  }
  return out;
}

std::optional<ProviderDeclaration> EstateParser::Declaration(const YAML::Node& n, const std::string& f,
                                                             const std::set<std::string>& ids) {
  static const KeySet kKeys{{"kind", "statement", "source", "date", "controls"}};
  if (!r_.CheckMap(n, f, kKeys)) return std::nullopt;
  ProviderDeclaration d;
  d.kind = Str(n, "kind", f);
  if (!d.kind.empty() && !OneOf(d.kind, kDeclarationKinds)) {
    r_.Error(Get(n, "kind"), JoinField(f, "kind"),
             "unknown kind \"" + d.kind + "\"; expected one of " + Listed(kDeclarationKinds));
  }
  d.statement = Str(n, "statement", f);
  d.source = Str(n, "source", f);
  auto date = DateField(n, f, "date", true);
  StringList(n, f, "controls", "[support-access, patching]", d.controls);
  for (const std::string& id : d.controls) KnownControl(Get(n, "controls"), JoinField(f, "controls"), id, ids);
  if (!date || d.statement.empty() || d.source.empty()) return std::nullopt;
  d.date = *date;
  return d;
}

}  // namespace causeway::estate_detail
