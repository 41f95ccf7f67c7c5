// Readiness: the catalog, the estate's readiness section (and its errors),
// and evaluation: a control without an owner is not in place whatever else
// is true; evidence decides the rest; declarations are named as such.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "causeway/estate.h"
#include "providers/registry.h"
#include "readiness/catalog.h"
#include "readiness/evaluate.h"
#include "readiness/key_scan.h"
#include "readiness/oscal.h"

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

// An owners section naming group platform for every built-in control.
std::string AllOwnedByPlatform() {
  std::string owners = "  owners:\n";
  for (const Control& c : BuiltinCatalog()) owners += "    " + c.id + ": {group: platform}\n";
  return owners;
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
  // Its evidence counts the jobs that ran with secrets, and those that read
  // them by reference; a cloud key handed over as a value makes it partly.
  s.jobs_by_provider["nebius"] = Snapshot::ProviderJobs{};
  s.jobs_by_provider["nebius"].ran = 3;
  s.jobs_by_provider["nebius"].with_secrets = 2;
  s.jobs_by_provider["nebius"].by_reference = 1;
  r = Evaluate(*e, s);
  const Finding& secrets = Find(r, "secrets-distribution", "nebius");
  EXPECT_EQ(secrets.state, State::kInPlace);
  EXPECT_EQ(secrets.evidence.at(1).what,
            "2 of 3 jobs that ran here had secrets; 1 of them read some from the company's store by reference, with the "
            "attempt's own identity");
  s.jobs_by_provider["nebius"].static_keys = 1;
  s.jobs_by_provider["nebius"].example = "job_1: AWS_SECRET_ACCESS_KEY (AWS secret key)";
  r = Evaluate(*e, s);
  EXPECT_EQ(Find(r, "secrets-distribution", "nebius").state, State::kPartly);
  EXPECT_NE(Find(r, "secrets-distribution", "nebius").reason.find("job_1: AWS_SECRET_ACCESS_KEY"), std::string::npos);
  s.jobs_by_provider.clear();
  r = Evaluate(*e, s);
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
  auto e = WithReadiness(AllOwnedByPlatform());
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

// Measured evidence: static keys in what jobs were handed, images pinned by
// digest, spend with owners, how far the SIEM export has got, and the
// latest acceptance runs, each moving its control.
TEST(ReadinessEvaluateTest, MeasuredEvidenceMovesItsControl) {
  auto e = WithReadiness(AllOwnedByPlatform());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  e->identity.workload = WorkloadIdentityConfig{};
  e->identity.workload->issuer = "https://causeway.example";
  Snapshot s;
  s.at = ParseRfc3339("2026-12-01T00:00:00Z").value();
  s.groups = {"platform"};
  s.audit_head_seq = 5000;

  // Workload identity: nothing ran yet, then clean jobs, then one with a key.
  EXPECT_EQ(Find(Evaluate(*e, s), "workload-identity", "nebius").state, State::kPartly);
  s.jobs_by_provider["nebius"] = {10, 0, 4, 4, ""};
  EXPECT_EQ(Find(Evaluate(*e, s), "workload-identity", "nebius").state, State::kInPlace);
  s.jobs_by_provider["nebius"] = {10, 1, 4, 3, "job_1: AWS_SECRET_ACCESS_KEY (AWS secret key)"};
  Report r = Evaluate(*e, s);
  const Finding& keyed = Find(r, "workload-identity", "nebius");
  EXPECT_EQ(keyed.state, State::kNotInPlace);
  EXPECT_NE(keyed.reason.find("AWS_SECRET_ACCESS_KEY"), std::string::npos) << keyed.reason;
  // Image pinning: the demo's pinned-image policy, but one job ran by tag.
  const Finding& pin = Find(r, "image-pinning", "nebius");
  EXPECT_EQ(pin.state, State::kPartly);
  EXPECT_NE(pin.evidence[0].what.find("3 of 4"), std::string::npos) << pin.evidence[0].what;
  EXPECT_EQ(Find(r, "image-pinning", "gcp").state, State::kInPlace) << "no job ran there by tag";

  // Residency: a zone-bound job that wrote a checkpoint outside its zone.
  EXPECT_EQ(Find(r, "residency", "coreweave").state, State::kPartly) << "no residency acceptance run yet";
  s.jobs_by_provider["coreweave"] = {5, 0, 0, 0, "", 3, 1, "job_z: checkpoint s3://ckpt-us/x"};
  Report with_left = Evaluate(*e, s);
  const Finding& left = Find(with_left, "residency", "coreweave");
  EXPECT_EQ(left.state, State::kNotInPlace);
  EXPECT_NE(left.reason.find("job_z: checkpoint s3://ckpt-us/x"), std::string::npos) << left.reason;

  // Cost labels from bills: none imported, then part owned, then all.
  EXPECT_EQ(Find(r, "cost-labels", "gcp").state, State::kPartly);
  s.spend_by_provider["gcp"] = {"USD", 1000'000000, 0};
  EXPECT_EQ(Find(Evaluate(*e, s), "cost-labels", "gcp").state, State::kNotInPlace);
  s.spend_by_provider["gcp"] = {"USD", 1000'000000, 900'000000};
  EXPECT_EQ(Find(Evaluate(*e, s), "cost-labels", "gcp").state, State::kPartly);
  s.spend_by_provider["gcp"].owned_micros = 1000'000000;
  EXPECT_EQ(Find(Evaluate(*e, s), "cost-labels", "gcp").state, State::kInPlace);

  // Audit forwarding: no exporter, one close behind, one far behind, one
  // behind and silent.
  EXPECT_EQ(Find(Evaluate(*e, s), "audit-forwarding", "gcp").state, State::kPartly);
  s.exporters = {{"tok_siem", 4990, s.at - std::chrono::minutes(1)}};
  EXPECT_EQ(Find(Evaluate(*e, s), "audit-forwarding", "gcp").state, State::kInPlace);
  s.exporters = {{"tok_siem", 3000, s.at - std::chrono::minutes(1)}};
  r = Evaluate(*e, s);
  const Finding& behind = Find(r, "audit-forwarding", "gcp");
  EXPECT_EQ(behind.state, State::kPartly);
  EXPECT_NE(behind.reason.find("2000 events behind"), std::string::npos) << behind.reason;
  s.exporters = {{"tok_siem", 4990, s.at - std::chrono::hours(2)}};
  EXPECT_EQ(Find(Evaluate(*e, s), "audit-forwarding", "gcp").state, State::kPartly);

  // Acceptance runs: recovery rehearsed at nebius (in place there, partly
  // elsewhere), then failed; a stale identity run is partly.
  s.acceptance["recovery"] = {true, s.at - std::chrono::hours(1), 77, "nebius", "", 4000, 1800000};
  r = Evaluate(*e, s);
  EXPECT_EQ(Find(r, "restore-rehearsal", "nebius").state, State::kInPlace);
  EXPECT_EQ(Find(r, "restore-rehearsal", "nebius").evidence.back().last_seq, 77);
  EXPECT_EQ(Find(r, "restore-rehearsal", "gcp").state, State::kPartly);
  s.acceptance["recovery"] = {false, s.at, 78, "nebius", "it resumes: not resumed after 3 s", {}, 1800000};
  EXPECT_EQ(Find(Evaluate(*e, s), "restore-rehearsal", "gcp").state, State::kNotInPlace);
  // A service's failover drill that lost gcp rehearses a restore there,
  // whatever the batch rehearsal at nebius says; nebius keeps its own.
  s.acceptance["failover"] = {true, s.at - std::chrono::minutes(5), 90, "gcp", "", 12, {}};
  r = Evaluate(*e, s);
  EXPECT_EQ(Find(r, "restore-rehearsal", "gcp").state, State::kInPlace);
  EXPECT_EQ(Find(r, "restore-rehearsal", "gcp").evidence.back().last_seq, 90);
  EXPECT_NE(Find(r, "restore-rehearsal", "gcp").evidence.back().what.find("every request served elsewhere after 12 ms"),
            std::string::npos)
      << Find(r, "restore-rehearsal", "gcp").evidence.back().what;
  EXPECT_EQ(Find(r, "restore-rehearsal", "nebius").state, State::kNotInPlace) << "its own latest run failed";
  s.acceptance.erase("failover");
  e->identity.oidc = OidcConfig{};
  s.acceptance["identity"] = {true, s.at - std::chrono::hours(24 * 100), 5, "", "", {}, {}};
  EXPECT_EQ(Find(Evaluate(*e, s), "deprovisioning", "gcp").state, State::kPartly);
  s.acceptance["identity"].finished = s.at - std::chrono::hours(1);
  EXPECT_EQ(Find(Evaluate(*e, s), "deprovisioning", "gcp").state, State::kInPlace);
}

TEST(ReadinessKeyScanTest, CloudKeysAreFoundByNameAndByValueAndNeverQuoted) {
  auto found = ScanForStaticKeys({{"EPOCHS", "3"},
                                  {"MY_KEY", "AKIAIOSFODNN7EXAMPLE"},
                                  {"R2_SECRET_ACCESS_KEY", "x"},
                                  {"CERT", "-----BEGIN RSA PRIVATE KEY-----\nMIIE..."},
                                  {"NOTE", "see AKIAIOSFODNN7EXAMPLEX and XAKIAIOSFODNN7EXAMPLE"},
                                  {"CONN", "DefaultEndpointsProtocol=https;AccountName=a;AccountKey=abc"}},
                                 {"aws_secret_access_key", "HF_TOKEN"});
  std::map<std::string, std::string> by;
  for (const KeyFinding& k : found) by[k.variable] = k.kind;
  EXPECT_EQ(by.size(), 5u);
  EXPECT_EQ(by["MY_KEY"], "AWS access key");
  EXPECT_EQ(by["R2_SECRET_ACCESS_KEY"], "S3 secret key");
  EXPECT_EQ(by["CERT"], "private key");
  EXPECT_EQ(by["CONN"], "Azure storage connection string");
  EXPECT_EQ(by["aws_secret_access_key"], "AWS secret key (a secret)");
  EXPECT_FALSE(by.count("NOTE")) << "an id inside a longer word is not one";
  for (const KeyFinding& k : found) EXPECT_EQ(k.kind.find("AKIA"), std::string::npos);
}

TEST(ReadinessQuestionsTest, EachQuestionIsAnsweredFromItsControls) {
  auto e = WithReadiness(AllOwnedByPlatform());
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  Snapshot s;
  s.at = ParseRfc3339("2026-12-01T00:00:00Z").value();
  Report r = Evaluate(*e, s);  // platform not in the directory: nothing is in place
  auto answers = AnswerQuestions(r, "nebius");
  ASSERT_EQ(answers.size(), 4u);
  for (const QuestionAnswer& a : answers) {
    EXPECT_EQ(a.answer, "no") << a.question->id << ": " << a.reason;
    EXPECT_EQ(a.basis.size(), a.question->controls.size());
  }
  s.groups = {"platform"};
  r = Evaluate(*e, s);
  std::map<std::string, std::string> by;
  for (const QuestionAnswer& a : AnswerQuestions(r, "")) {
    if (a.provider == "gcp") by[a.question->id] = a.answer;
  }
  EXPECT_EQ(by.size(), 4u);
  EXPECT_EQ(by["resume"], "partly") << "capacity fallback may hold while no recovery run is recorded";
  EXPECT_EQ(AnswerQuestions(r, "").size(), 4 * r.providers.size());
  // All in place: yes.
  Report all = r;
  for (Finding& f : all.findings) f.state = State::kInPlace;
  for (const QuestionAnswer& a : AnswerQuestions(all, "gcp")) EXPECT_EQ(a.answer, "yes");
}

// The OSCAL serializer's own rules (the schema itself is checked against
// a real export in tests/integration/readiness_test.cc): stable UUIDs of
// RFC 4122's shape, NIST ids as OSCAL catalogs spell them, and each state
// mapped to OSCAL's status and implementation state.
TEST(ReadinessOscalTest, FindingsCarryTheirStateOwnerAndEvidence) {
  std::string uuid = NameUuid("finding/residency/nebius");
  EXPECT_EQ(uuid, NameUuid("finding/residency/nebius"));
  EXPECT_NE(uuid, NameUuid("finding/residency/gcp"));
  ASSERT_EQ(uuid.size(), 36u);
  EXPECT_EQ(uuid[14], '5');
  EXPECT_NE(std::string("89ab").find(uuid[19]), std::string::npos) << uuid;
  EXPECT_EQ(OscalControlId("AC-2"), "ac-2");
  EXPECT_EQ(OscalControlId("AC-2(3)"), "ac-2.3");

  auto e = WithReadiness("  owners:\n    break-glass: {user: ciso@corp.example}\n    residency: {group: security}\n");
  ASSERT_TRUE(e.ok()) << e.status().ToString();
  Snapshot s;
  s.at = ParseRfc3339("2026-12-01T00:00:00Z").value();
  s.active_users = {"ciso@corp.example"};
  Report r = Evaluate(*e, s);
  nlohmann::json doc = ToOscalAssessmentResults(r, "0b0b0b0b-0b0b-4b0b-8b0b-0b0b0b0b0b0b", "1.2.3");
  const nlohmann::json& ar = doc["assessment-results"];
  EXPECT_EQ(ar["metadata"]["version"], "1.2.3");
  EXPECT_EQ(ar["metadata"]["last-modified"], FormatRfc3339(s.at));
  const nlohmann::json& result = ar["results"][0];
  EXPECT_EQ(result["findings"].size(), r.findings.size());
  EXPECT_EQ(result["observations"].size(), r.findings.size());
  std::map<std::string, nlohmann::json> by;  // "control/provider" -> finding
  for (const nlohmann::json& f : result["findings"]) {
    std::map<std::string, std::string> props;
    for (const nlohmann::json& p : f["props"]) {
      EXPECT_EQ(p["ns"], "urn:causeway:readiness");
      props[p["name"]] = p["value"];
    }
    by[props["control"] + "/" + props["provider"]] = f;
  }
  // Owned by an active person, off by default: in place.
  nlohmann::json bg = by["break-glass/nebius"];
  EXPECT_EQ(bg["target"]["status"], nlohmann::json({{"state", "satisfied"}, {"reason", "pass"}, {"remarks", "in place: " + Find(r, "break-glass", "nebius").reason}}));
  EXPECT_EQ(bg["target"]["implementation-status"]["state"], "implemented");
  // Owned by a group not in the directory: not in place, a failure.
  nlohmann::json res = by["residency/gcp"];
  EXPECT_EQ(res["target"]["status"]["reason"], "fail");
  EXPECT_EQ(res["target"]["implementation-status"]["state"], "planned");
  // The owners are parties; each owned control's role names them.
  std::set<std::string> parties;
  for (const nlohmann::json& p : ar["metadata"]["parties"]) parties.insert(p["name"].get<std::string>() + "/" + p["type"].get<std::string>());
  EXPECT_EQ(parties, (std::set<std::string>{"ciso@corp.example/person", "group security/organization"}));
  ASSERT_EQ(ar["metadata"]["responsible-parties"].size(), 2u);
  // Every NIST control the catalog maps to is a reviewed control.
  std::set<std::string> reviewed;
  for (const nlohmann::json& c : result["reviewed-controls"]["control-selections"][0]["include-controls"]) {
    reviewed.insert(c["control-id"]);
  }
  EXPECT_TRUE(reviewed.count("ac-2") && reviewed.count("cp-10") && reviewed.count("ia-5")) << result["reviewed-controls"].dump();
}

}  // namespace
}  // namespace causeway::readiness
