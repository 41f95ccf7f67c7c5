// AuditService against a real store: a provider's log imported once per
// source event, each batch audited in the chain; the trail searched across
// providers by person, through the links that line their identities up.
#include "service/audit_service.h"

#include <unistd.h>

#include <filesystem>

#include "identity/scim/scim_schema.h"
#include "service/scim_service.h"

#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

class AuditServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    audit_ = std::make_unique<AuditService>(*store_, *queue_, clock_);
  }
  Result<AuditImportReport> ImportK8s() {
    audit::ImportOptions options;
    options.provider = "coreweave";
    options.source = audit::LogSource::kKubernetes;
    return audit_->Import(std::string(CAUSEWAY_SOURCE_DIR) + "/examples/audit/k8s-audit.jsonl", options,
                          "k8s-audit.jsonl", "tok_admin");
  }
  std::unique_ptr<AuditService> audit_;
};

TEST_F(AuditServiceTest, ALogIsStoredOncePerSourceEventAndEachImportIsInTheChain) {
  auto first = ImportK8s();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ(first->stats.records, 5);
  EXPECT_EQ(first->stats.skipped, 1) << "an earlier stage of the same request";
  EXPECT_EQ(first->stored, 4);
  EXPECT_EQ(first->already, 0);
  auto again = ImportK8s();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->stored, 0);
  EXPECT_EQ(again->already, 4);
  auto imports = Audit("audit.import");
  ASSERT_EQ(imports.size(), 2u);
  EXPECT_EQ(imports[0].actor, "tok_admin");
  EXPECT_NE(nlohmann::json(imports[0].details).dump().find("k8s-audit.jsonl"), std::string::npos) << "the file by its label";
}

TEST_F(AuditServiceTest, APersonIsFoundByEveryIdentityLinkedToThem) {
  ASSERT_TRUE(ImportK8s().ok());
  AuditSearch by_email;
  by_email.who = "alice@corp.example";
  by_email.provider = "coreweave";
  auto page = audit_->Search(by_email);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  const size_t direct = page->hits.size();
  EXPECT_GT(direct, 0u);
  for (const AuditHit& h : page->hits) EXPECT_EQ(h.row.provider, "coreweave");

  AuditSearch bad;
  bad.limit = 5000;
  EXPECT_EQ(audit_->Search(bad).status().code(), Code::kInvalidArgument);

  // A link makes another identity hers (she is in the directory): the
  // search by her name finds it too.
  ScimService scim(*store_, *queue_, clock_);
  ASSERT_TRUE(scim.Create(identity::scim::UserType(),
                          {{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:User"}},
                           {"userName", "alice@corp.example"},
                           {"active", true}},
                          ScimCaller{"tok_idp", "", false})
                  .ok());
  auto link = audit_->Link("*", "system:serviceaccount:ml:causeway", "alice@corp.example", Admin());
  ASSERT_TRUE(link.ok()) << link.status().ToString();
  auto linked = audit_->Search(by_email);
  ASSERT_TRUE(linked.ok());
  EXPECT_GT(linked->hits.size(), direct);
  ASSERT_EQ(Audit("audit.link").size(), 1u);
  ASSERT_TRUE(audit_->Unlink(link->id, "tok_admin").ok());
  auto unlinked = audit_->Search(by_email);
  ASSERT_TRUE(unlinked.ok());
  EXPECT_EQ(unlinked->hits.size(), direct);

  // An identity at a provider no person is linked to is answered with its
  // own trail, marked unlinked; a name nothing knows is not found.
  auto sa = audit_->Person("system:serviceaccount:ml:causeway", 0, 100);
  ASSERT_TRUE(sa.ok()) << sa.status().ToString();
  EXPECT_TRUE(sa->unlinked);
  EXPECT_FALSE(sa->entry.has_value());
  EXPECT_GT(sa->events.hits.size(), 0u);
  EXPECT_EQ(audit_->Person("arn:aws:iam::1:user/nobody", 0, 100).status().code(), Code::kNotFound);
}

TEST_F(AuditServiceTest, CausewaysOwnEventsAreFoundByActionOrByAPrefixOfOne) {
  ASSERT_TRUE(ImportK8s().ok());
  ASSERT_TRUE(ImportK8s().ok());
  AuditSearch q;
  q.provider = "causeway";
  q.action = "audit.import";
  auto exact = audit_->Search(q);
  ASSERT_TRUE(exact.ok()) << exact.status().ToString();
  EXPECT_EQ(exact->hits.size(), 2u);
  q.action = "AUDIT.";  // a prefix, any case
  auto prefix = audit_->Search(q);
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(prefix->hits.size(), 2u);
  for (const AuditHit& h : prefix->hits) EXPECT_EQ(h.row.operation, "audit.import");
  q.action = "audit.imp";  // not a prefix ending in '.': no match
  EXPECT_TRUE(audit_->Search(q)->hits.empty());
  q.action = "reaper.";
  EXPECT_TRUE(audit_->Search(q)->hits.empty());
  // An activity name is still matched on the OCSF events.
  q.action = "create";
  auto created = audit_->Search(q);
  ASSERT_TRUE(created.ok());
  for (const AuditHit& h : created->hits) EXPECT_EQ(h.row.activity, "create");
}

// Newest first, page by page, is the trail oldest first turned round:
// Causeway's events and the providers' merged by time, none twice, none lost.
TEST_F(AuditServiceTest, NewestFirstPagesAreTheOldestFirstOnesReversed) {
  auto first = ImportK8s();
  ASSERT_TRUE(first.ok());
  clock_.Advance(std::chrono::hours(1));
  ASSERT_TRUE(ImportK8s().ok());
  auto all = [&](bool newest_first, int limit) {
    std::vector<std::string> out;
    AuditSearch q;
    q.newest_first = newest_first;
    q.limit = limit;
    for (int pages = 0; pages < 100; ++pages) {
      auto page = audit_->Search(q);
      EXPECT_TRUE(page.ok()) << page.status().ToString();
      if (!page.ok()) break;
      for (const AuditHit& h : page->hits) out.push_back(h.row.provider + "/" + h.row.source_id);
      if (page->next_cursor.empty()) break;
      q.cursor = page->next_cursor;
    }
    return out;
  };
  std::vector<std::string> oldest = all(false, 3), newest = all(true, 2);
  EXPECT_EQ(oldest.size(), static_cast<size_t>(first->stored) + 2);  // the log's events stored once, two imports audited
  std::reverse(newest.begin(), newest.end());
  EXPECT_EQ(newest, oldest);
  EXPECT_EQ(all(true, 1000).front(), all(true, 1).front());
}

// A Kubernetes DELETE names nobody (its body is DeleteOptions): whom it was
// for is taken from the request that made the same object, imported
// before or earlier in the same log; an object of the same name in another
// namespace, or one nobody made for anyone, lends nothing.
TEST_F(AuditServiceTest, AKubernetesDeletionIsThePersonsWhoseObjectItWas) {
  auto event = [](const std::string& id, const std::string& verb, const std::string& ns, const std::string& name,
                  const std::string& time, const std::string& body) {
    nlohmann::json e = {{"kind", "Event"}, {"apiVersion", "audit.k8s.io/v1"}, {"level", "Request"},
                        {"auditID", id}, {"stage", "ResponseComplete"}, {"verb", verb},
                        {"requestURI", "/apis/rbac.authorization.k8s.io/v1/namespaces/" + ns + "/rolebindings"},
                        {"user", {{"username", "system:serviceaccount:causeway:causeway"}}},
                        {"objectRef", {{"resource", "rolebindings"}, {"namespace", ns}, {"name", name},
                                       {"apiGroup", "rbac.authorization.k8s.io"}}},
                        {"responseStatus", {{"code", 200}}},
                        {"requestObject", nlohmann::json::parse(body)},
                        {"stageTimestamp", "2026-12-01T10:00:" + time + ".000000Z"}};
    return e.dump() + "\n";
  };
  auto binding = [](const std::string& user) {
    return R"({"kind":"RoleBinding","subjects":[{"kind":"User","name":")" + user + R"("}]})";
  };
  const std::string dir = std::filesystem::temp_directory_path() / ("cw-rb-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/made.jsonl") << event("m1", "create", "team-nlp", "causeway-researcher", "01", binding("oidc:bob@example.com"))
                                     << event("m2", "create", "team-cv", "causeway-researcher", "02", binding("oidc:eve@example.com"));
  const std::string options = R"({"kind":"DeleteOptions","propagationPolicy":"Background"})";
  std::ofstream(dir + "/removed.jsonl") << event("m3", "create", "team-nlp", "hand-made", "03", R"({"kind":"RoleBinding"})")
                                        << event("d1", "delete", "team-nlp", "causeway-researcher", "10", options)
                                        << event("d2", "delete", "team-nlp", "hand-made", "11", options)
                                        << event("d3", "delete", "team-ml", "causeway-researcher", "12", options);
  audit::ImportOptions o;
  o.provider = "kc";
  o.source = audit::LogSource::kKubernetes;
  for (const char* file : {"made.jsonl", "removed.jsonl", "removed.jsonl"}) {
    auto r = audit_->Import(dir + "/" + file, o, file, "tok_admin");
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->conflicts, 0) << file << ": importing again attributes the same way";
  }
  std::filesystem::remove_all(dir);

  AuditSearch q;
  q.provider = "kc";
  q.action = "delete";
  auto page = audit_->Search(q);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  std::map<std::string, std::string> subject;
  for (const AuditHit& h : page->hits) subject[h.row.source_id] = h.row.subject;
  EXPECT_EQ(subject, (std::map<std::string, std::string>{{"d1", "oidc:bob@example.com"}, {"d2", ""}, {"d3", ""}}));
  for (const AuditHit& h : page->hits) {
    if (h.row.source_id != "d1") continue;
    nlohmann::json ev = nlohmann::json::parse(h.row.event);
    EXPECT_EQ(ev["resources"][0]["owner"]["name"], "oidc:bob@example.com") << ev.dump(2);
    EXPECT_EQ(ev["unmapped"]["owner_from"], "m1") << "where the owner was read";
    EXPECT_EQ(ev["api"]["operation"], "delete");
  }
  // Bob's trail at the cluster: the binding made for him, and removed.
  AuditSearch bob;
  bob.who = "oidc:bob@example.com";
  bob.provider = "kc";
  page = audit_->Search(bob);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  std::vector<std::string> his;
  for (const AuditHit& h : page->hits) his.push_back(h.row.source_id);
  EXPECT_EQ(his, (std::vector<std::string>{"m1", "d1"}));
}

}  // namespace
}  // namespace causeway::testing
