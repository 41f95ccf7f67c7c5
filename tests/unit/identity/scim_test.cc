// SCIM filters, paths, PATCH and normalization (src/identity/scim), table
// driven, against the examples of RFC 7644 and what Okta and Entra send.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "identity/scim/scim_filter.h"
#include "identity/scim/scim_patch.h"
#include "identity/scim/scim_schema.h"

namespace causeway::identity::scim {
namespace {

using nlohmann::json;

// A user as the service renders it (stored attributes plus id and meta).
json Babs() {
  return json::parse(R"({
    "id": "usr_01", "externalId": "00u1abc", "userName": "Babs.Jensen@Example.com",
    "name": {"givenName": "Barbara", "familyName": "Jensen"}, "displayName": "Babs Jensen",
    "title": "Tour Guide", "userType": "Employee", "active": true,
    "emails": [{"value": "babs@example.com", "type": "work", "primary": true},
               {"value": "babs@jensen.org", "type": "home"}],
    "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"employeeNumber": "701984", "department": "Tour Operations"},
    "meta": {"resourceType": "User", "created": "2026-01-23T04:56:22Z", "lastModified": "2026-05-13T04:42:34Z"}
  })");
}

struct FilterCase {
  const char* filter;
  bool matches;
};

class FilterMatchTest : public ::testing::TestWithParam<FilterCase> {};

TEST_P(FilterMatchTest, EvaluatesAsTheRfcSays) {
  auto f = ParseFilter(UserType(), GetParam().filter);
  ASSERT_TRUE(f.ok()) << GetParam().filter << ": " << f.status().ToString();
  EXPECT_EQ(Matches(*f, Babs()), GetParam().matches) << GetParam().filter;
}

INSTANTIATE_TEST_SUITE_P(
    Rfc7644, FilterMatchTest,
    ::testing::Values(
        // userName is case-insensitive; so are operators and attribute names.
        FilterCase{R"(userName eq "babs.jensen@example.com")", true},
        FilterCase{R"(USERNAME EQ "BABS.JENSEN@EXAMPLE.COM")", true},
        FilterCase{R"(userName ne "babs.jensen@example.com")", false},
        FilterCase{R"(userName sw "babs")", true}, FilterCase{R"(userName ew "@example.com")", true},
        FilterCase{R"(userName co "JENSEN")", true}, FilterCase{R"(userName co "smith")", false},
        // id and externalId are caseExact.
        FilterCase{R"(externalId eq "00u1abc")", true}, FilterCase{R"(externalId eq "00U1ABC")", false},
        FilterCase{R"(id eq "USR_01")", false},
        // Sub-attributes, multi-valued attributes (any value), value paths.
        FilterCase{R"(name.familyName co "ens")", true},
        FilterCase{R"(emails.value ew "jensen.org")", true},
        FilterCase{R"(emails co "jensen.org")", true},
        FilterCase{R"(emails[type eq "work" and value co "@example.com"])", true},
        FilterCase{R"(emails[type eq "home" and value co "@example.com"])", false},
        FilterCase{R"(emails[not (type eq "work")])", true},
        // Entra matches users by work email: a value path's sub-attribute compared.
        FilterCase{R"(emails[type eq "work"].value eq "babs@example.com")", true},
        FilterCase{R"(emails[type eq "work"].value eq "babs@jensen.org")", false},
        FilterCase{R"(emails[type eq "home"].value ew "jensen.org" and active eq true)", true},
        // Presence, booleans, dates as instants, ordering of strings.
        FilterCase{"title pr", true}, FilterCase{"nickName pr", false}, FilterCase{"emails pr", true},
        FilterCase{"active eq true", true}, FilterCase{"active eq false", false}, FilterCase{"active ne false", true},
        FilterCase{R"(meta.lastModified gt "2026-05-13T04:42:33Z")", true},
        FilterCase{R"(meta.lastModified gt "2026-05-13T06:42:34+02:00")", false},
        FilterCase{R"(meta.lastModified ge "2026-05-13T06:42:34+02:00")", true},
        FilterCase{R"(meta.created lt "2026-01-01T00:00:00Z")", false},
        FilterCase{R"(title gt "Tour")", true}, FilterCase{R"(title le "Tour")", false},
        // Absent attributes: eq fails, ne holds, eq null holds.
        FilterCase{R"(nickName eq "x")", false}, FilterCase{R"(nickName ne "x")", true},
        FilterCase{"nickName eq null", true}, FilterCase{"title eq null", false},
        // Logic: not > and > or, grouping, extension attributes by URN.
        FilterCase{R"(title pr and userType eq "Employee")", true},
        FilterCase{R"(title pr and userType eq "Intern")", false},
        FilterCase{R"(userType eq "Intern" or title pr)", true},
        FilterCase{R"(userType eq "Intern" or title pr and nickName pr)", false},
        FilterCase{R"((userType eq "Intern" or title pr) and not (nickName pr))", true},
        FilterCase{R"(not(userName sw "babs"))", false},
        FilterCase{R"(urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:employeeNumber eq "701984")", true},
        FilterCase{R"(urn:ietf:params:scim:schemas:core:2.0:User:userName sw "Babs")", true},
        FilterCase{R"(userName eq "a\"b")", false}));

struct BadFilter {
  const char* filter;
  const char* says;  // a fragment of the error message
};

class FilterErrorTest : public ::testing::TestWithParam<BadFilter> {};

TEST_P(FilterErrorTest, IsInvalidFilterSayingWhereAndWhat) {
  auto f = ParseFilter(UserType(), GetParam().filter);
  ASSERT_FALSE(f.ok()) << GetParam().filter;
  EXPECT_EQ(f.status().code(), Code::kInvalidArgument);
  EXPECT_EQ(ScimTypeOf(f.status()), "invalidFilter");
  EXPECT_NE(f.status().message().find(GetParam().says), std::string::npos) << f.status().message();
  EXPECT_EQ(ErrorBody(f.status())["scimType"], "invalidFilter");
  EXPECT_EQ(ErrorBody(f.status())["status"], "400");
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, FilterErrorTest,
    ::testing::Values(BadFilter{"", "empty"}, BadFilter{"userName eq", "at character 12: expected a value"},
                      BadFilter{R"(userName xx "a")", "unknown operator \"xx\""},
                      BadFilter{R"(userName "a")", "expected an operator"},
                      BadFilter{R"((userName eq "a")", "expected ')'"},
                      BadFilter{R"(userName eq "a" junk)", "expected \"and\", \"or\""},
                      BadFilter{R"(userName eq "open)", "not closed"},
                      BadFilter{R"(shoeSize eq "9")", "unknown attribute \"shoeSize\""},
                      BadFilter{R"(name.middle eq "x")", "no sub-attribute"},
                      BadFilter{"active gt true", "only with eq or ne"},
                      BadFilter{R"(active eq "yes")", "boolean"},
                      BadFilter{R"(meta.created gt "yesterday")", "dateTime"},
                      BadFilter{R"(emails[type eq "work")", "expected ']'"},
                      BadFilter{R"(userName[type eq "work"])", "takes no [filter]"},
                      BadFilter{R"(emails[shoe eq "x"])", "no sub-attribute \"shoe\""},
                      BadFilter{R"(name eq "x")", "complex"}, BadFilter{"not userName pr", "expected '('"},
                      BadFilter{R"(userName eq "a" and)", "expected an attribute name"}));

json Patch(const json& ops) { return {{"schemas", {std::string(kPatchOp)}}, {"Operations", ops}}; }

json StoredBabs() {
  json r = Babs();
  r.erase("id");
  r.erase("meta");
  return r;
}

TEST(ScimPatchTest, OktaReplacesWithAValueObject) {
  auto r = ApplyPatch(UserType(), StoredBabs(),
                      Patch(json::parse(R"([{"op": "replace", "value": {"active": false}}])")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["active"], false);
  EXPECT_EQ((*r)["userName"], "Babs.Jensen@Example.com");
}

TEST(ScimPatchTest, EntraSendsCapitalisedOpsStringBooleansAndSeveralOperations) {
  auto r = ApplyPatch(UserType(), StoredBabs(), Patch(json::parse(R"([
      {"op": "Replace", "path": "active", "value": "False"},
      {"op": "Add", "path": "name.givenName", "value": "Barb"},
      {"op": "Replace", "path": "emails[type eq \"work\"].value", "value": "barb@example.com"},
      {"op": "Add", "path": "phoneNumbers[type eq \"mobile\"].value", "value": "+1 555 0100"},
      {"op": "Replace", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department", "value": "Research"},
      {"op": "Add", "value": {"displayName": "Barb Jensen", "name.familyName": "Jensen-Smith",
        "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:costCenter": "4130"}}
    ])")));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ((*r)["active"], false);
  EXPECT_EQ((*r)["name"]["givenName"], "Barb");
  EXPECT_EQ((*r)["name"]["familyName"], "Jensen-Smith");
  EXPECT_EQ((*r)["emails"][0]["value"], "barb@example.com");
  EXPECT_EQ((*r)["emails"][1]["value"], "babs@jensen.org");
  // No mobile number existed: the filter's eq made one.
  EXPECT_EQ((*r)["phoneNumbers"], json::parse(R"([{"type": "mobile", "value": "+1 555 0100"}])"));
  const json& ent = (*r)["urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"];
  EXPECT_EQ(ent["department"], "Research");
  EXPECT_EQ(ent["costCenter"], "4130");
  EXPECT_EQ(ent["employeeNumber"], "701984");
  EXPECT_EQ((*r)["displayName"], "Barb Jensen");
}

TEST(ScimPatchTest, GroupMembersAddAndRemoveByFilterOrByValueList) {
  json group = {{"displayName", "ml-researchers"}, {"members", json::array({{{"value", "usr_a"}}, {{"value", "usr_b"}}})}};
  auto added = ApplyPatch(GroupType(), group, Patch(json::parse(R"([
      {"op": "add", "path": "members", "value": [{"value": "usr_c"}, {"value": "usr_a"}]}])")));
  ASSERT_TRUE(added.ok()) << added.status().ToString();
  EXPECT_EQ((*added)["members"].size(), 3u);  // usr_a is not added twice

  auto okta = ApplyPatch(GroupType(), *added,
                         Patch(json::parse(R"([{"op": "remove", "path": "members[value eq \"usr_b\"]"}])")));
  ASSERT_TRUE(okta.ok()) << okta.status().ToString();
  EXPECT_EQ((*okta)["members"], json::parse(R"([{"value": "usr_a"}, {"value": "usr_c"}])"));

  auto entra = ApplyPatch(GroupType(), *okta,
                          Patch(json::parse(R"([{"op": "Remove", "path": "members", "value": [{"value": "usr_a"}]}])")));
  ASSERT_TRUE(entra.ok()) << entra.status().ToString();
  EXPECT_EQ((*entra)["members"], json::parse(R"([{"value": "usr_c"}])"));

  auto all = ApplyPatch(GroupType(), *entra, Patch(json::parse(R"([{"op": "remove", "path": "members"}])")));
  ASSERT_TRUE(all.ok());
  EXPECT_FALSE(all->contains("members"));
  // Removing someone who is not a member changes nothing and is no error.
  auto none = ApplyPatch(GroupType(), group,
                         Patch(json::parse(R"([{"op": "remove", "path": "members[value eq \"usr_z\"]"}])")));
  ASSERT_TRUE(none.ok());
  EXPECT_EQ((*none)["members"].size(), 2u);
}

struct BadPatch {
  const char* operations;  // the Operations array
  const char* scim_type;
  const char* says;
};

class PatchErrorTest : public ::testing::TestWithParam<BadPatch> {};

TEST_P(PatchErrorTest, IsRefusedWithTheRightScimType) {
  auto r = ApplyPatch(UserType(), StoredBabs(), Patch(json::parse(GetParam().operations)));
  ASSERT_FALSE(r.ok()) << GetParam().operations;
  EXPECT_EQ(ScimTypeOf(r.status()), GetParam().scim_type) << r.status().ToString();
  EXPECT_NE(r.status().message().find(GetParam().says), std::string::npos) << r.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, PatchErrorTest,
    ::testing::Values(
        BadPatch{R"([{"op": "move", "path": "title", "value": "x"}])", "invalidSyntax", "Operations[0].op"},
        BadPatch{R"([{"op": "remove"}])", "noTarget", "needs a \"path\""},
        BadPatch{R"([{"op": "replace", "path": "id", "value": "usr_x"}])", "mutability", "read-only"},
        BadPatch{R"([{"op": "add", "path": "groups", "value": [{"value": "grp_x"}]}])", "mutability", "read-only"},
        BadPatch{R"([{"op": "replace", "path": "shoeSize", "value": 9}])", "invalidPath", "unknown attribute"},
        BadPatch{R"([{"op": "replace", "path": "emails[type eq \"work\"", "value": "x"}])", "invalidPath", "expected ']'"},
        BadPatch{R"([{"op": "replace", "path": "emails[type eq \"fax\"]", "value": {"value": "x"}}])", "noTarget",
                 "matches the path's filter"},
        BadPatch{R"([{"op": "replace", "path": "active", "value": "maybe"}])", "invalidValue", "expected a boolean"},
        BadPatch{R"([{"op": "replace", "path": "title", "value": "ok"}, {"op": "remove", "path": "userName"}])",
                 "invalidValue", "\"userName\" is required"},
        BadPatch{R"([{"op": "add", "path": "title"}])", "invalidSyntax", "needs a \"value\""},
        BadPatch{R"([{"op": "replace", "value": "not an object"}])", "invalidSyntax", "object \"value\""}));

TEST(ScimPatchTest, TheEnvelopeIsChecked) {
  auto no_schema = ApplyPatch(UserType(), StoredBabs(), json{{"Operations", json::array()}});
  EXPECT_EQ(ScimTypeOf(no_schema.status()), "invalidSyntax");
  auto empty = ApplyPatch(UserType(), StoredBabs(), Patch(json::array()));
  EXPECT_EQ(ScimTypeOf(empty.status()), "invalidSyntax");
}

TEST(ScimSchemaTest, NormalizeSpellsNamesAsTheSchemaAndDropsWhatItMustNotKeep) {
  json in = json::parse(R"({
    "schemas": ["urn:ietf:params:scim:schemas:core:2.0:User"],
    "USERNAME": "alice@corp.example", "Active": "True", "password": "hunter2!", "id": "chosen-by-client",
    "meta": {"created": "2000-01-01T00:00:00Z"}, "groups": [{"value": "grp_x"}], "favouriteColour": "blue",
    "emails": {"value": "alice@corp.example", "type": "work"}, "externalId": "00u9"
  })");
  auto out = Normalize(UserType(), in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, json::parse(R"({"userName": "alice@corp.example", "active": true, "externalId": "00u9",
                                  "emails": [{"value": "alice@corp.example", "type": "work"}]})"));
  auto missing = Normalize(UserType(), json{{"userName", "x"}});
  EXPECT_EQ(ScimTypeOf(missing.status()), "invalidSyntax");
  auto wrong = Normalize(UserType(), json{{"schemas", {std::string(kUserSchema)}}, {"userName", 7}});
  EXPECT_EQ(ScimTypeOf(wrong.status()), "invalidValue");
  EXPECT_NE(wrong.status().message().find("\"userName\""), std::string::npos);
}

// Entra sends the enterprise manager as the manager's id alone, in POST and
// in PATCH on the extension's path; both mean {"value": id}.
TEST(ScimSchemaTest, EntrasManagerAsAPlainStringIsItsValue) {
  const std::string ent = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User";
  json in = {{"schemas", {std::string(kUserSchema), ent}}, {"userName", "alice@corp.example"},
             {ent, {{"manager", "26118915-6090-4f1b-b1a3-6f1d5b1e0001"}}}};
  auto out = Normalize(UserType(), in);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[ent]["manager"], json({{"value", "26118915-6090-4f1b-b1a3-6f1d5b1e0001"}}));
  auto patched = ApplyPatch(UserType(), StoredBabs(), Patch(json::parse(R"([
      {"op": "Add", "path": "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager", "value": "mgr-7"}
    ])")));
  ASSERT_TRUE(patched.ok()) << patched.status().ToString();
  EXPECT_EQ((*patched)[ent]["manager"], json({{"value", "mgr-7"}}));
  // A value of another type is still refused.
  auto wrong = Normalize(UserType(), json{{"schemas", {std::string(kUserSchema), ent}}, {"userName", "x"}, {ent, {{"manager", 7}}}});
  EXPECT_EQ(ScimTypeOf(wrong.status()), "invalidValue");
}

TEST(ScimSchemaTest, ProjectionKeepsIdAndSchemasAndRefusesUnknownNames) {
  json r = Babs();
  r["schemas"] = {std::string(kUserSchema)};
  auto only = Project(UserType(), r, "userName,name.givenName,emails.value", "");
  ASSERT_TRUE(only.ok()) << only.status().ToString();
  EXPECT_EQ((*only)["id"], "usr_01");
  EXPECT_TRUE(only->contains("schemas"));
  EXPECT_EQ((*only)["name"], json({{"givenName", "Barbara"}}));
  EXPECT_EQ((*only)["emails"], json::parse(R"([{"value": "babs@example.com"}, {"value": "babs@jensen.org"}])"));
  EXPECT_FALSE(only->contains("title"));
  auto without = Project(UserType(), r, "", "emails,meta,id");
  ASSERT_TRUE(without.ok());
  EXPECT_FALSE(without->contains("emails"));
  EXPECT_TRUE(without->contains("id"));  // returned always
  EXPECT_EQ(ScimTypeOf(Project(UserType(), r, "shoeSize", "").status()), "invalidPath");
}

TEST(ScimSchemaTest, DiscoveryDocumentsDescribeWhatIsSupported) {
  json config = ServiceProviderConfig("https://cw.example/scim/v2");
  EXPECT_TRUE(config["patch"]["supported"]);
  EXPECT_TRUE(config["filter"]["supported"]);
  EXPECT_FALSE(config["bulk"]["supported"]);
  json schemas = SchemasDocument("https://cw.example/scim/v2");
  EXPECT_EQ(schemas["totalResults"], 3);
  bool user_name_unique = false;
  for (const json& s : schemas["Resources"]) {
    for (const json& a : s["attributes"]) {
      if (a["name"] == "userName") user_name_unique = a["uniqueness"] == "server" && a["caseExact"] == false;
    }
  }
  EXPECT_TRUE(user_name_unique);
  EXPECT_EQ(ResourceTypesDocument("")["Resources"][0]["schemaExtensions"][0]["schema"], std::string(kEnterpriseUserSchema));
}

}  // namespace
}  // namespace causeway::identity::scim
