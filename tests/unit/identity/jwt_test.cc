// JWT signing and verification (src/identity/jwt): both algorithms round
// trip through their JWKs, and every way a token can be wrong is refused
// with a reason.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "identity/jwt.h"

namespace causeway::identity::jwt {
namespace {

using nlohmann::json;

const Timestamp kNow = FromUnixMicros(1'800'000'000'000'000);

json Claims(int64_t exp_offset_s = 300) {
  int64_t now = ToUnixMicros(kNow) / 1'000'000;
  return {{"iss", "https://idp.example"}, {"aud", "causeway"}, {"sub", "alice"}, {"iat", now},
          {"exp", now + exp_offset_s}};
}

Expectations Expect() { return Expectations{"https://idp.example", {"causeway"}, kNow, std::chrono::seconds(60)}; }

KeySet SetOf(const SigningKey& k) {
  auto set = KeySet::FromJwks(json{{"keys", {k.PublicJwk()}}});
  EXPECT_TRUE(set.ok());
  return *set;
}

std::string Refusal(const Result<json>& r) {
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), Code::kUnauthenticated);
  return r.status().message();
}

class JwtAlgTest : public ::testing::TestWithParam<Alg> {};

TEST_P(JwtAlgTest, SignsAndVerifiesThroughThePublishedJwk) {
  auto key = SigningKey::Generate(GetParam(), "k1");
  ASSERT_TRUE(key.ok());
  json jwk = key->PublicJwk();
  EXPECT_EQ(jwk["alg"], std::string(AlgName(GetParam())));
  EXPECT_FALSE(jwk.contains("d"));  // never the private part
  auto token = key->Sign(Claims());
  ASSERT_TRUE(token.ok());
  auto claims = Verify(*token, SetOf(*key), Expect());
  ASSERT_TRUE(claims.ok()) << claims.status().ToString();
  EXPECT_EQ((*claims)["sub"], "alice");

  // The key survives a round trip through PEM.
  auto reloaded = SigningKey::FromPem(key->Pem(), GetParam(), "k1");
  ASSERT_TRUE(reloaded.ok()) << reloaded.status().ToString();
  EXPECT_TRUE(Verify(*reloaded->Sign(Claims()), SetOf(*key), Expect()).ok());
  EXPECT_FALSE(SigningKey::FromPem(key->Pem(), GetParam() == Alg::kES256 ? Alg::kRS256 : Alg::kES256, "k1").ok());
}

TEST_P(JwtAlgTest, RefusesTamperedExpiredMisaddressedAndForeignTokens) {
  auto key = SigningKey::Generate(GetParam(), "k1");
  KeySet keys = SetOf(*key);
  std::string token = *key->Sign(Claims());
  // Tampered payload: the signature no longer matches.
  size_t dot = token.find('.');
  json evil = Claims();
  evil["sub"] = "root";
  std::string tampered = token.substr(0, dot + 1) + Base64UrlEncode(evil.dump()) + token.substr(token.rfind('.'));
  EXPECT_NE(Refusal(Verify(tampered, keys, Expect())).find("signature"), std::string::npos);
  // Expired beyond the leeway; within it still fine.
  EXPECT_NE(Refusal(Verify(*key->Sign(Claims(-61)), keys, Expect())).find("expired"), std::string::npos);
  EXPECT_TRUE(Verify(*key->Sign(Claims(-59)), keys, Expect()).ok());
  json no_exp = Claims();
  no_exp.erase("exp");
  EXPECT_NE(Refusal(Verify(*key->Sign(no_exp), keys, Expect())).find("no expiry"), std::string::npos);
  json early = Claims();
  early["nbf"] = ToUnixMicros(kNow) / 1'000'000 + 3600;
  EXPECT_NE(Refusal(Verify(*key->Sign(early), keys, Expect())).find("not valid before"), std::string::npos);
  json future = Claims();
  future["iat"] = ToUnixMicros(kNow) / 1'000'000 + 3600;
  EXPECT_NE(Refusal(Verify(*key->Sign(future), keys, Expect())).find("future"), std::string::npos);
  // Audience and issuer.
  json other_aud = Claims();
  other_aud["aud"] = json::array({"sts.amazonaws.com", "vault"});
  EXPECT_NE(Refusal(Verify(*key->Sign(other_aud), keys, Expect())).find("audience"), std::string::npos);
  other_aud["aud"].push_back("causeway");
  EXPECT_TRUE(Verify(*key->Sign(other_aud), keys, Expect()).ok());
  json other_iss = Claims();
  other_iss["iss"] = "https://evil.example";
  EXPECT_NE(Refusal(Verify(*key->Sign(other_iss), keys, Expect())).find("issuer"), std::string::npos);
  // Signed by a key the issuer does not publish (same kid).
  auto stranger = SigningKey::Generate(GetParam(), "k1");
  EXPECT_NE(Refusal(Verify(*stranger->Sign(Claims()), keys, Expect())).find("signature"), std::string::npos);
  auto unknown = SigningKey::Generate(GetParam(), "k9");
  EXPECT_NE(Refusal(Verify(*unknown->Sign(Claims()), keys, Expect())).find("kid \"k9\""), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Algs, JwtAlgTest, ::testing::Values(Alg::kRS256, Alg::kES256),
                         [](const auto& info) { return std::string(AlgName(info.param)); });

TEST(JwtTest, TheAlgorithmComesFromTheKeyNeverFromTheToken) {
  auto rsa = SigningKey::Generate(Alg::kRS256, "r1");
  KeySet keys = SetOf(*rsa);
  std::string payload = Base64UrlEncode(Claims().dump());
  auto forged = [&](const json& header, const std::string& sig) {
    return Base64UrlEncode(header.dump()) + "." + payload + "." + Base64UrlEncode(sig);
  };
  EXPECT_NE(Refusal(Verify(forged({{"alg", "none"}, {"kid", "r1"}}, ""), keys, Expect())).find("\"none\""),
            std::string::npos);
  // HS256 "signed" with the public key as the secret: the classic confusion.
  EXPECT_NE(Refusal(Verify(forged({{"alg", "HS256"}, {"kid", "r1"}}, "mac"), keys, Expect())).find("symmetric"),
            std::string::npos);
  EXPECT_NE(Refusal(Verify(forged({{"alg", "ES256"}, {"kid", "r1"}}, std::string(64, 'x')), keys, Expect()))
                .find("verifies only RS256"),
            std::string::npos);
  EXPECT_NE(Refusal(Verify("a.b", keys, Expect())).find("not a JWT"), std::string::npos);
  EXPECT_NE(Refusal(Verify("a.b.c.d.e", keys, Expect())).find("not a JWT"), std::string::npos);
  EXPECT_NE(Refusal(Verify("!!.e30.", keys, Expect())).find("header"), std::string::npos);
}

TEST(JwtTest, JwksReadsWhatItCanAndRefusesWeakOrMislabelledKeys) {
  auto ec = SigningKey::Generate(Alg::kES256, "e1");
  json jwk = ec->PublicJwk();
  json wrong_alg = jwk;
  wrong_alg["alg"] = "RS256";
  EXPECT_FALSE(PublicKey::FromJwk(wrong_alg).ok());
  json enc = jwk;
  enc["use"] = "enc";
  EXPECT_FALSE(PublicKey::FromJwk(enc).ok());
  json off_curve = jwk;
  off_curve["y"] = Base64UrlEncode(std::string(32, '\x01'));
  EXPECT_FALSE(PublicKey::FromJwk(off_curve).ok());
  json small_rsa = {{"kty", "RSA"}, {"n", Base64UrlEncode(std::string(128, '\xc1'))}, {"e", "AQAB"}};
  EXPECT_NE(PublicKey::FromJwk(small_rsa).status().message().find("2048"), std::string::npos);
  auto set = KeySet::FromJwks(json{{"keys", {jwk, enc, {{"kty", "oct"}, {"k", "c2VjcmV0"}}}}});
  ASSERT_TRUE(set.ok());
  EXPECT_EQ(set->size(), 1u);
  EXPECT_FALSE(KeySet::FromJwks(json::array()).ok());
}

TEST(JwtTest, Base64UrlRoundTripsEveryLength) {
  std::string bytes;
  for (int i = 0; i < 40; ++i) {
    EXPECT_EQ(Base64UrlDecode(Base64UrlEncode(bytes)), bytes);
    bytes += static_cast<char>(i * 37);
  }
  EXPECT_EQ(Base64UrlEncode("\xfb\xff"), "-_8");
  EXPECT_FALSE(Base64UrlDecode("a+b/").has_value());
  EXPECT_FALSE(Base64UrlDecode("abcde").has_value());
}

}  // namespace
}  // namespace causeway::identity::jwt
