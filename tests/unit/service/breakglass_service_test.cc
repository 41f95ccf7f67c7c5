// BreakglassService: off unless the estate configures it; asked for by a
// person of a configured group, approved by another person who is an admin
// through their groups, its credential issued once, and revoked with every
// token made under it; each step audited.
#include "service/breakglass_service.h"

#include <nlohmann/json.hpp>

#include "fakes/fake_fetcher.h"
#include "identity/oidc.h"
#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

identity::Principal Person(const std::string& user, std::vector<std::string> groups, bool admin = false) {
  identity::Principal p;
  p.token_id = "tok_" + user.substr(0, user.find('@'));
  p.user = user;
  p.groups = std::move(groups);
  if (admin) {
    identity::Grant g;
    g.role = "admin";
    g.group = "platform-admins";
    g.source = "access[0]";
    g.scopes = {"admin"};
    p.grants = {g};
    p.scopes = {"admin"};
  }
  return p;
}

class BreakglassServiceTest : public ServiceTest {
 protected:
  void Configure() {
    BreakglassConfig& c = estate_->identity.breakglass;
    c.enabled = true;
    c.roles = {"platform"};
    c.groups = {"sre-oncall"};
    c.max_duration = Micros(2LL * 3600 * 1000000);
  }
  std::unique_ptr<BreakglassService> Make() {
    return std::make_unique<BreakglassService>(*store_, *queue_, *estate_, clock_,
                                               [this](const std::string& id) { forgotten_.push_back(id); }, http_);
  }
  std::vector<std::string> forgotten_;
  FakeFetcher http_;
};

TEST_F(BreakglassServiceTest, OffUnlessTheEstateConfiguresIt) {
  estate_->identity.breakglass = BreakglassConfig{};
  auto service = Make();
  auto asked = service->Request(Person("alice@example.com", {"sre-oncall"}), "platform", "", "the queue is stuck",
                                Micros(3600LL * 1000000));
  ASSERT_FALSE(asked.ok());
  EXPECT_EQ(asked.status().code(), Code::kFailedPrecondition);
  EXPECT_TRUE(Audit("breakglass.").empty());
}

TEST_F(BreakglassServiceTest, AskedApprovedUsedOnceAndRevokedWithWhatWasMadeUnderIt) {
  Configure();
  auto service = Make();
  const identity::Principal alice = Person("alice@example.com", {"sre-oncall"});
  EXPECT_EQ(service->Request(Person("mallory@example.com", {"ml"}), "platform", "", "let me in please", Micros(60000000))
                .status()
                .code(),
            Code::kPermissionDenied)
      << "not in a configured group";
  EXPECT_EQ(service->Request(alice, "admin", "", "the queue is stuck", Micros(3600LL * 1000000)).status().code(),
            Code::kInvalidArgument)
      << "a role the estate does not offer";
  EXPECT_EQ(service->Request(alice, "platform", "", "the queue is stuck", Micros(5LL * 3600 * 1000000)).status().code(),
            Code::kInvalidArgument)
      << "longer than the maximum";

  auto asked = service->Request(alice, "platform", "", "the queue is stuck", Micros(3600LL * 1000000));
  ASSERT_TRUE(asked.ok()) << asked.status().ToString();
  EXPECT_FALSE(asked->credential.has_value()) << "no self-approval: nothing to use yet";
  const std::string id = asked->grant.id;
  EXPECT_FALSE(service->IsActive(id));

  EXPECT_EQ(service->Approve(Person("alice@example.com", {"sre-oncall"}, true), id).status().code(),
            Code::kPermissionDenied)
      << "never by the requester";
  EXPECT_EQ(service->Approve(Person("carol@example.com", {"ml"}), id).status().code(), Code::kPermissionDenied)
      << "only an admin";
  auto approved = service->Approve(Person("bob@example.com", {"platform-admins"}, true), id);
  ASSERT_TRUE(approved.ok()) << approved.status().ToString();
  EXPECT_TRUE(service->IsActive(id));

  auto credential = service->IssueCredential(alice, id);
  ASSERT_TRUE(credential.ok()) << credential.status().ToString();
  EXPECT_TRUE(identity::IsBreakglassCredential(credential->record.id));
  EXPECT_EQ(service->IssueCredential(alice, id).status().code(), Code::kFailedPrecondition) << "issued once";

  auto revoked = service->Revoke(alice, id);
  ASSERT_TRUE(revoked.ok()) << revoked.status().ToString();
  EXPECT_FALSE(service->IsActive(id));
  EXPECT_NE(std::find(forgotten_.begin(), forgotten_.end(), credential->record.id), forgotten_.end())
      << "the credential made under it is revoked and forgotten";
  for (const char* action : {"breakglass.request", "breakglass.approve", "breakglass.revoke"}) {
    EXPECT_EQ(Audit(action).size(), 1u) << action;
  }
}

// An admin through a group who signs with a token narrowed to jobs:read has
// jobs:read and nothing else: approving would hand another person admin
// rights the token does not carry.
TEST_F(BreakglassServiceTest, AnAdminsTokenNarrowedToFewerScopesApprovesNothing) {
  Configure();
  auto service = Make();
  auto asked = service->Request(Person("alice@example.com", {"sre-oncall"}), "platform", "", "the queue is stuck",
                                Micros(3600LL * 1000000));
  ASSERT_TRUE(asked.ok()) << asked.status().ToString();
  identity::Principal narrowed = Person("bob@example.com", {"platform-admins"}, true);
  identity::NarrowToScopes(narrowed, {"jobs:read"});
  EXPECT_EQ(narrowed.grants.at(0).role, "admin") << "narrowing keeps the role's name";
  EXPECT_FALSE(narrowed.Has(identity::kScopeAdmin));
  auto refused = service->Approve(narrowed, asked->grant.id);
  ASSERT_EQ(refused.status().code(), Code::kPermissionDenied);
  EXPECT_NE(refused.status().message().find("admin scope"), std::string::npos) << refused.status().message();
  EXPECT_FALSE(service->IsActive(asked->grant.id));
  EXPECT_TRUE(Audit("breakglass.approve").empty());

  // The same person with a token that keeps the admin scope approves.
  identity::Principal full = Person("bob@example.com", {"platform-admins"}, true);
  identity::NarrowToScopes(full, {"admin"});
  ASSERT_TRUE(service->Approve(full, asked->grant.id).ok());
  EXPECT_TRUE(service->IsActive(asked->grant.id));
}

TEST_F(BreakglassServiceTest, TheWebhookIsToldOfEachStepAndItsFailureLosesNothing) {
  Configure();
  const std::string hook = "https://hooks.example.com/breakglass";
  estate_->identity.breakglass.webhook = hook;
  http_.Answer(hook, 204);
  auto service = Make();
  auto asked = service->Request(Person("alice@example.com", {"sre-oncall"}), "platform", "", "the queue is stuck",
                                Micros(3600LL * 1000000));
  ASSERT_TRUE(asked.ok()) << asked.status().ToString();
  auto sent = http_.requests();
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].url, hook);
  EXPECT_EQ(sent[0].method, net::OutboundRequest::Method::kPost);
  EXPECT_EQ(sent[0].content_type, "application/json");
  EXPECT_LE(sent[0].timeout.count(), 10000) << "an announcement has a deadline";
  auto body = nlohmann::json::parse(sent[0].body);
  EXPECT_EQ(body["event"], "breakglass.request");
  EXPECT_EQ(body["details"]["id"], asked->grant.id);
  EXPECT_EQ(body["details"]["reason"], "the queue is stuck");

  // A webhook that is down is logged; the approval still stands.
  http_.Answer(hook, 503);
  auto approved = service->Approve(Person("bob@example.com", {"platform-admins"}, true), asked->grant.id);
  ASSERT_TRUE(approved.ok()) << approved.status().ToString();
  ASSERT_EQ(http_.requests().size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(http_.requests()[1].body)["event"], "breakglass.approve");
  EXPECT_TRUE(service->IsActive(asked->grant.id));
}

}  // namespace
}  // namespace causeway::testing
