// Details: the typed document audit events carry, and its JSON edge (the
// encoding the audit chain hashes).
#include <gtest/gtest.h>

#include <string>

#include "causeway/details.h"
#include "store/audit_chain.h"
#include "store/records_json.h"

namespace causeway {
namespace {

TEST(DetailsTest, KeysStaySortedAndUniqueAndReadBackTyped) {
  Details d = {{"zeta", 1}, {"alpha", "a"}, {"mid", true}, {"alpha", "again"}};
  ASSERT_EQ(d.size(), 3u) << "a later duplicate key wins";
  std::string order;
  for (const auto& [key, value] : d) order += key + ",";
  EXPECT_EQ(order, "alpha,mid,zeta,");
  EXPECT_EQ(d.String("alpha"), "again");
  EXPECT_EQ(d.Int("zeta"), 1);
  EXPECT_TRUE(d.Bool("mid"));
  EXPECT_EQ(d.String("zeta", "fallback"), "fallback") << "an integer is not a string";
  EXPECT_EQ(d.Int("missing", 7), 7);
  d["nested"] = Details{{"jti", "j1"}};
  ASSERT_NE(d.Object("nested"), nullptr);
  EXPECT_EQ(d.Object("nested")->String("jti"), "j1");
  d.Merge({{"zeta", 2}, {"new", nullptr}});
  EXPECT_EQ(d.Int("zeta"), 2);
  EXPECT_TRUE(d.Find("new")->is_null());
  EXPECT_TRUE(d.Erase("new"));
  EXPECT_FALSE(d.Contains("new"));
}

TEST(DetailsTest, CanonicalJsonIsWhatTheChainAlwaysHashed) {
  // The bytes nlohmann wrote for the same object before details were typed:
  // keys sorted, no spaces, integers only.
  Details d = {{"b", 1}, {"a", "x"}, {"list", std::vector<std::string>{"p", "q"}}, {"n", Details{{"k", false}}},
               {"none", nullptr}, {"big", int64_t{9007199254740993}}};
  EXPECT_EQ(audit::CanonicalDetails(d),
            R"({"a":"x","b":1,"big":9007199254740993,"list":["p","q"],"n":{"k":false},"none":null})");
}

TEST(DetailsTest, DecodingRefusesWhatDetailsCannotHold) {
  auto ok = DetailsFromJson(nlohmann::json::parse(R"({"a":[1,{"b":"c"}],"d":null})"));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(audit::CanonicalDetails(*ok), R"({"a":[1,{"b":"c"}],"d":null})");
  EXPECT_FALSE(DetailsFromJson(nlohmann::json::parse(R"({"a":1.5})")).ok()) << "no floating point values";
  EXPECT_FALSE(DetailsFromJson(nlohmann::json::parse(R"([1])")).ok()) << "an object at the top";
  EXPECT_FALSE(DetailsFromJson(nlohmann::json::parse(R"({"a":18446744073709551615})")).ok()) << "beyond int64";
  std::string deep = std::string(40, '[') + std::string(40, ']');
  EXPECT_FALSE(DetailsFromJson(nlohmann::json::parse("{\"a\":" + deep + "}")).ok()) << "bounded nesting";
}

TEST(DetailsTest, StoredTextThatIsNoLongerDetailsIsKeptNotLost) {
  Details d = StoredDetails("{\"a\":1.25}");
  EXPECT_EQ(d.String("stored_text"), "{\"a\":1.25}");
  EXPECT_EQ(StoredDetails("not json").String("stored_text"), "not json");
  EXPECT_EQ(StoredDetails("{\"k\":\"v\"}").String("k"), "v");
  // Edited to nest past the bound: kept as text, never parsed recursively.
  std::string deep = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_EQ(StoredDetails(deep).String("stored_text").size(), deep.size());
  DirectoryEntry group;
  group.resource = deep;
  EXPECT_TRUE(GroupMemberIds(group).empty());
}

}  // namespace
}  // namespace causeway
