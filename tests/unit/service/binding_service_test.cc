// BindingService: the estate's bindings and the API's, what is refused, and
// a binding made under break-glass in force only while its grant lasts,
// until an admin other than its maker confirms it.
#include "service/binding_service.h"

#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

class BindingServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    bindings_ = std::make_unique<BindingService>(*store_, *queue_, *estate_, clock_,
                                                 [this](const std::string& grant) { return grant == active_grant_; });
  }
  static bool Has(const std::vector<identity::Binding>& list, const std::string& group) {
    return std::any_of(list.begin(), list.end(), [&](const identity::Binding& b) { return b.group == group; });
  }
  std::unique_ptr<BindingService> bindings_;
  std::string active_grant_;
};

TEST_F(BindingServiceTest, BindingsMadeThroughTheApiAreInForceAndAudited) {
  const size_t from_estate = bindings_->Current().size();
  auto made = bindings_->Create("ml-vision", "researcher", "vision", Admin());
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_EQ(made->source.rfind("binding/", 0), 0u) << made->source;
  EXPECT_TRUE(made->confirmed);
  auto current = bindings_->Current();
  EXPECT_EQ(current.size(), from_estate + 1);
  EXPECT_TRUE(Has(current, "ml-vision"));
  ASSERT_EQ(Audit("access.bind").size(), 1u);

  auto twice = bindings_->Create("ml-vision", "researcher", "vision", Admin());
  EXPECT_EQ(twice.status().code(), Code::kAlreadyExists);
  EXPECT_EQ(bindings_->Create("ml-vision", "emperor", "vision", Admin()).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(bindings_->Create("ml-vision", "researcher", "no-such-team", Admin()).status().code(),
            Code::kInvalidArgument);
  EXPECT_EQ(bindings_->Create("ml\nvision", "researcher", "vision", Admin()).status().code(), Code::kInvalidArgument);

  auto removed = bindings_->Delete(made->source.substr(made->source.find('/') + 1), "tok_admin");
  ASSERT_TRUE(removed.ok()) << removed.status().ToString();
  EXPECT_FALSE(Has(bindings_->Current(), "ml-vision"));
}

TEST_F(BindingServiceTest, ABindingMadeUnderBreakglassLastsWithItsGrantUntilConfirmed) {
  identity::Principal elevated = Admin("tokb_grant");
  elevated.grant = "bg_1";
  active_grant_ = "bg_1";
  auto made = bindings_->Create("ml-ops", "platform", "", elevated);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  EXPECT_FALSE(made->confirmed);
  EXPECT_EQ(made->breakglass, "bg_1");
  EXPECT_TRUE(Has(bindings_->Current(), "ml-ops")) << "in force while the grant is";

  const std::string id = made->source.substr(made->source.find('/') + 1);
  EXPECT_EQ(bindings_->Confirm(id, elevated).status().code(), Code::kPermissionDenied)
      << "not through a grant, and not by its maker";

  active_grant_.clear();  // the grant ends
  EXPECT_FALSE(Has(bindings_->Current(), "ml-ops"));
  EXPECT_TRUE(Has(bindings_->All(), "ml-ops")) << "still listed, flagged";

  identity::Principal admin = Admin("tok_other_admin");
  admin.user = "root@example.com";
  admin.creator = "root@example.com";
  auto confirmed = bindings_->Confirm(id, admin);
  ASSERT_TRUE(confirmed.ok()) << confirmed.status().ToString();
  EXPECT_TRUE(confirmed->confirmed);
  EXPECT_TRUE(Has(bindings_->Current(), "ml-ops")) << "confirmed: in force for good";
}

}  // namespace
}  // namespace causeway::testing
