// Readiness: the catalog, the estate's readiness section (and its errors),
// and evaluation: a control without an owner is not in place whatever else
// is true; evidence decides the rest; declarations are named as such.
#include <gtest/gtest.h>

#include <set>

#include "causeway/estate.h"
#include "providers/registry.h"
#include "readiness/catalog.h"
#include "readiness/evaluate.h"

namespace causeway::readiness {
namespace {

// The demo estate with `section` as its readiness section (in place of its
// own, if it has one).
Result<Estate> WithReadiness(const std::string& section) {
  std::string base(DefaultEstateYaml());
  if (size_t at = base.find("\nreadiness:"); at != std::string::npos) {
    size_t end = base.find("\n", at + 1);
    while (end != std::string::npos && end + 1 < base.size() && (base[end + 1] == ' ' || base[end + 1] == '#')) {
      end = base.find("\n", end + 1);
    }
    base.erase(at, end == std::string::npos ? std::string::npos : end - at);
  }
  return providers::ParseEstate(base + "\nreadiness:\n" + section, "estate.yaml");
}

const Finding& Find(const Report& r, const std::string& control, const std::string& provider) {
  for (const Finding& f : r.findings) {
    if (f.control == control && f.provider == provider) return f;
  }
  static Finding none;
  ADD_FAILURE() << "no finding for " << control << " at " << provider;
  return none;
}

TEST(ReadinessCatalogTest, EveryControlTheIssueNamesIsBuiltInAndMappedToNist) {
  std::set<std::string> ids;
  for (const Control& c : BuiltinCatalog()) {
    EXPECT_TRUE(ids.insert(c.id).second) << "duplicate " << c.id;
    EXPECT_FALSE(c.title.empty() || c.description.empty() || c.how.empty()) << c.id;
    ASSERT_FALSE(c.nist.empty()) << c.id;
    for (const std::string& n : c.nist) EXPECT_TRUE(IsNistId(n)) << c.id << ": " << n;
  }
  for (const char* id : {"identity-federation", "group-role-mapping", "deprovisioning", "least-privilege",
                         "workload-identity", "secrets-distribution", "audit-forwarding", "data-plane-logging",
                         "residency", "support-access", "patching", "privileged-access-review", "break-glass",
                         "on-call", "restore-rehearsal", "capacity-fallback", "image-pinning", "cost-labels",
                         "idle-reaping", "reproducibility"}) {
    EXPECT_TRUE(ids.count(id)) << id;
  }
  EXPECT_TRUE(IsNistId("AC-2"));
  EXPECT_TRUE(IsNistId("AC-2(3)"));
  EXPECT_TRUE(IsNistId("SI-12"));
  for (const char* bad : {"ac-2", "AC2", "AC-", "AC-2(", "AC-2()", "AC-123", "AC-2(x)", "A-2"}) {
    EXPECT_FALSE(IsNistId(bad)) << bad;
  }
}

TEST(ReadinessEstateTest, TheSectionParsesOwnersResponsibilityAndDeclarations) {
  auto e = WithReadiness(
      "  recovery_objective: 30m\n"
      "  owners:\n"
      "    identity-federation: {group: security}\n"
      "    on-call: {user: oncall@corp.example}\n"
      "  controls:\n"
      "    - {id: model-card-review, title: Model card review, description: Every model has a reviewed card., "
      "nist: [PM-11]}\n"
      "    - {id: patching, nist: [SI-2, SI-2(2)]}\n"
      "  providers:\n"
      "    - provider: nebius\n"
      "      service_model: self-managed-slurm\n"
      "      responsible: {patching: provider, identity-federation: platform}\n"
      "      owners: {on-call: {group: nebius-oncall}}\n"
      "      not_applicable: {data-plane-logging: no object storage at this provider}\n"
      "      declarations:\n"
      "        - {kind: support-location, statement: Support staff work from the EU, source: "
      "'https://nebius.example/trust', date: 2026-10-01, controls: [support-access]}\n");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  const ReadinessConfig& r = e->readiness;
  EXPECT_EQ(r.recovery_objective, std::chrono::minutes(30));
  EXPECT_TRUE(r.owners.at("identity-federation").group);
  EXPECT_EQ(r.owners.at("on-call").name, "oncall@corp.example");
  ASSERT_EQ(r.controls.size(), 2u);
  const ProviderReadiness* n = r.FindProvider("nebius");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->service_model, "self-managed-slurm");
  EXPECT_EQ(n->responsible.at("patching"), "provider");
  EXPECT_EQ(n->owners.at("on-call").name, "nebius-oncall");
  EXPECT_EQ(n->not_applicable.at("data-plane-logging"), "no object storage at this provider");
  ASSERT_EQ(n->declarations.size(), 1u);
  EXPECT_EQ(n->declarations[0].source, "https://nebius.example/trust");
  auto catalog = EffectiveCatalog(r);
  EXPECT_EQ(catalog.size(), BuiltinCatalog().size() + 1);
  EXPECT_EQ(catalog.back().id, "model-card-review");
  EXPECT_EQ(catalog.back().evidence, Evidence::kDeclared);
  auto patching = std::find_if(catalog.begin(), catalog.end(), [](const Control& c) { return c.id == "patching"; });
  EXPECT_EQ(patching->nist, (std::vector<std::string>{"SI-2", "SI-2(2)"}));
  EXPECT_EQ(patching->title, "OS and driver patching") << "a built-in keeps what the estate does not give";
}

TEST(ReadinessEstateTest, MistakesAreNamedWithTheirFieldAndLine) {
  struct Case {
    std::string section, expect;
  };
  for (const Case& c : std::vector<Case>{
           {"  owners: {identity-federaton: {group: g}}\n", "did you mean \"identity-federation\""},
           {"  owners: {patching: {user: a, group: g}}\n", "one of them"},
           {"  providers: [{provider: nowhere, service_model: infrastructure}]\n", "unknown provider \"nowhere\""},
           {"  providers: [{provider: nebius, service_model: bare-metal}]\n", "unknown service model \"bare-metal\""},
           {"  providers: [{provider: nebius, service_model: infrastructure, responsible: {patching: vendor}}]\n",
            "unknown party \"vendor\""},
           {"  providers: [{provider: nebius, service_model: infrastructure, declarations: [{kind: certification, "
            "statement: ISO 27001, date: 2026-01-01}]}]\n",
            "missing required field \"source\""},
           {"  controls: [{id: x-review, title: X, description: Y, nist: [AC2]}]\n", "not a NIST SP 800-53 control id"},
           {"  controls: [{id: x-review}]\n", "missing required field \"title\""},
       }) {
    auto e = WithReadiness(c.section);
    ASSERT_FALSE(e.ok()) << c.section;
    EXPECT_NE(e.status().message().find(c.expect), std::string::npos) << e.status().message();
    EXPECT_NE(e.status().message().find("readiness"), std::string::npos) << "the field is named: " << e.status().message();
  }
}

TEST(ReadinessEvaluateTest, AControlWithoutAnOwnerIsNotInPlaceWhateverElseIsTrue) {
  auto e = WithReadiness(
      "  owners:\n"
      "    secrets-distribution: {group: security}\n"
      "    break-glass: {user: ciso@corp.example}\n"
      "    support-access: {group: security}\n"
      "    reproducibility: {group: platform}\n"
      "  providers:\n"
      "    - provider: nebius\n"
      "      service_model: infrastructure\n"
      "      not_applicable: {image-pinning: no container runtime on these nodes}\n"
      "      declarations:\n"
      "        - {kind: support-location, statement: Support staff work from the EU, source: contract 7.2, "
      "date: 2026-10-01, controls: [support-access]}\n"
      "    - provider: coreweave\n"
      "      service_model: managed-kubernetes\n"
      "      declarations:\n"
      "        - {kind: support-location, statement: US support, source: trust page, date: 2024-01-01, "
      "controls: [support-access]}\n");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  Snapshot s;
  s.at = ParseRfc3339("2026-12-01T00:00:00Z").value();
  s.groups = {"security"};
  s.active_users = {};
  s.jobs_read = 10;
  s.ended_jobs = 4;
  s.sealed_jobs = 4;
  Report r = Evaluate(*e, s);
  EXPECT_EQ(r.findings.size(), r.controls.size() * r.providers.size());

  // Secrets are sealed by construction: owned by a group in the directory,
  // in place; with no owner the same evidence is not in place.
  EXPECT_EQ(Find(r, "secrets-distribution", "nebius").state, State::kInPlace);
  const Finding& unowned = Find(r, "capacity-fallback", "nebius");
  EXPECT_EQ(unowned.state, State::kNotInPlace);
  EXPECT_NE(unowned.reason.find("no owner"), std::string::npos) << unowned.reason;
  // An owner not in the directory cannot answer for it.
  const Finding& gone = Find(r, "break-glass", "nebius");
  EXPECT_EQ(gone.state, State::kNotInPlace);
  EXPECT_NE(gone.reason.find("not an active person"), std::string::npos) << gone.reason;
  // Once the person is in the directory, the evidence decides: break-glass
  // is off by default, which is in place.
  s.active_users = {"ciso@corp.example"};
  r = Evaluate(*e, s);
  EXPECT_EQ(Find(r, "break-glass", "nebius").state, State::kInPlace);
  // Declarations: recent ones count, named as such; a stale one is partly.
  const Finding& support = Find(r, "support-access", "nebius");
  EXPECT_EQ(support.state, State::kInPlace);
  EXPECT_NE(support.reason.find("declared by the provider"), std::string::npos);
  ASSERT_EQ(support.declarations.size(), 1u);
  EXPECT_EQ(support.evidence[0].source, "declaration");
  EXPECT_EQ(Find(r, "support-access", "coreweave").state, State::kPartly);
  EXPECT_EQ(Find(r, "support-access", "gcp").state, State::kNotInPlace);
  // Not applicable, with the estate's reason, owner or not.
  EXPECT_EQ(Find(r, "image-pinning", "nebius").state, State::kNotApplicable);
  EXPECT_EQ(Find(r, "image-pinning", "nebius").reason, "no container runtime on these nodes");
  // Reproducibility follows the sealed records.
  EXPECT_EQ(Find(r, "reproducibility", "gcp").state, State::kNotInPlace) << "platform is not in the directory";
  s.groups.insert("platform");
  r = Evaluate(*e, s);
  EXPECT_EQ(Find(r, "reproducibility", "gcp").state, State::kInPlace);
  s.sealed_jobs = 3;
  r = Evaluate(*e, s);
  EXPECT_EQ(Find(r, "reproducibility", "gcp").state, State::kPartly);
  EXPECT_NE(Find(r, "reproducibility", "gcp").evidence[0].what.find("3 of 4"), std::string::npos);
}

TEST(ReadinessEvaluateTest, EstateEvidenceFollowsTheEstate) {
  std::string owners = "  owners:\n";
  for (const Control& c : BuiltinCatalog()) owners += "    " + c.id + ": {group: platform}\n";
  auto e = WithReadiness(owners);
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  Snapshot s;
  s.at = ParseRfc3339("2026-12-01T00:00:00Z").value();
  s.groups = {"platform"};
  Report r = Evaluate(*e, s);
  // No identity provider in the demo estate: federation is not in place.
  EXPECT_EQ(Find(r, "identity-federation", "nebius").state, State::kNotInPlace);
  EXPECT_EQ(Find(r, "restore-rehearsal", "nebius").state, State::kNotInPlace);
  // Break-glass off by default: in place; turned on with self-approval: partly.
  EXPECT_EQ(Find(r, "break-glass", "gcp").state, State::kInPlace);
  Estate open = *e;
  open.identity.breakglass.enabled = true;
  open.identity.breakglass.self_approval = true;
  open.identity.breakglass.approvers = 0;
  EXPECT_EQ(Find(Evaluate(open, s), "break-glass", "gcp").state, State::kPartly);
  // Capacity fallback: a provider whose GPU types nobody else offers is not
  // covered.
  for (const std::string& p : r.providers) {
    const Finding& f = Find(r, "capacity-fallback", p);
    EXPECT_NE(f.state, State::kNotApplicable) << p;
    EXPECT_FALSE(f.evidence.empty()) << p;
  }
}

}  // namespace
}  // namespace causeway::readiness
