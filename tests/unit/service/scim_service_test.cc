// ScimService::Deactivate: the leaver found by userName in any case, set
// inactive as the IdP would, the change audited; an unknown name refused.
#include "service/scim_service.h"

#include "identity/scim/scim_schema.h"
#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

class ScimServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    scim_ = std::make_unique<ScimService>(*store_, *queue_, clock_);
    scim_->OnPeopleChanged([this](const std::vector<std::string>& users, const std::string&) {
      for (const auto& u : users) heard_.push_back(u);
    });
  }
  std::unique_ptr<ScimService> scim_;
  std::vector<std::string> heard_;
};

TEST_F(ScimServiceTest, DeactivatesALeaverByNameInAnyCase) {
  nlohmann::json alice = {{"schemas", {"urn:ietf:params:scim:schemas:core:2.0:User"}},
                          {"userName", "Alice@Example.com"},
                          {"active", true}};
  auto made = scim_->Create(identity::scim::UserType(), alice, ScimCaller{"tok_idp", "", true});
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  heard_.clear();

  Status st = scim_->Deactivate("alice@example.com", ScimCaller{"tok_admin", "", false});
  ASSERT_TRUE(st.ok()) << st.ToString();
  auto read = scim_->Get(identity::scim::UserType(), (*made)["id"], "", ScimListQuery{});
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ((*read)["active"], false);
  EXPECT_TRUE(heard_.empty()) << "a caller that carries the change through itself is not told again";
  auto events = Audit("scim.");
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().actor, "tok_admin");

  Status unknown = scim_->Deactivate("nobody@example.com", ScimCaller{"tok_admin", "", false});
  EXPECT_EQ(unknown.code(), Code::kNotFound);
}

}  // namespace
}  // namespace causeway::testing
