// The identity provider's documents as the verifier reads them, through a
// fake carrier: the discovery document must name exactly the issuer asked
// for and an https key set; a provider that cannot be read makes tokens
// unverifiable (kUnavailable), never accepted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "identity/jwt.h"
#include "fakes/fake_fetcher.h"
#include "identity/oidc.h"

namespace causeway::testing {
namespace {

constexpr char kIssuer[] = "https://idp.example.com";
constexpr char kDiscovery[] = "https://idp.example.com/.well-known/openid-configuration";

// A token whose header names key `kid`; its claims and signature do not
// matter until keys are known.
std::string TokenFor(const std::string& kid) {
  return identity::jwt::Base64UrlEncode(R"({"alg":"RS256","typ":"JWT","kid":")" + kid + "\"}") + "." +
         identity::jwt::Base64UrlEncode(R"({"sub":"alice"})") + "." + identity::jwt::Base64UrlEncode("signature");
}

identity::OidcVerifier Verifier(FakeFetcher& http) {
  OidcConfig config;
  config.issuer = kIssuer;
  config.audiences = {"causeway"};
  return identity::OidcVerifier(config, http);
}

TEST(OidcVerifierTest, AProviderThatCannotBeReadMakesTokensUnverifiable) {
  FakeFetcher http;
  auto verifier = Verifier(http);
  auto claims = verifier.Verify(TokenFor("k1"), RealClock().Now());
  ASSERT_FALSE(claims.ok());
  EXPECT_EQ(claims.status().code(), Code::kUnavailable);
  EXPECT_NE(claims.status().message().find("discovery document"), std::string::npos) << claims.status().ToString();
  ASSERT_EQ(http.requests().size(), 1u);
  EXPECT_EQ(http.requests()[0].url, kDiscovery);
  EXPECT_EQ(http.requests()[0].method, net::OutboundRequest::Method::kGet);
}

TEST(OidcVerifierTest, TheDiscoveryDocumentMustNameTheIssuerAskedFor) {
  FakeFetcher http;
  http.Answer(kDiscovery, 200,
              R"({"issuer":"https://evil.example.com","jwks_uri":"https://evil.example.com/keys"})");
  auto verifier = Verifier(http);
  auto claims = verifier.Verify(TokenFor("k1"), RealClock().Now());
  ASSERT_FALSE(claims.ok());
  EXPECT_EQ(claims.status().code(), Code::kUnavailable);
  EXPECT_NE(claims.status().message().find("evil.example.com"), std::string::npos);
  EXPECT_EQ(http.requests().size(), 1u) << "no key set is read from a provider that names another issuer";
}

TEST(OidcVerifierTest, AnHttpsIssuersKeysAreReadOverHttpsOnly) {
  FakeFetcher http;
  http.Answer(kDiscovery, 200, R"({"issuer":"https://idp.example.com","jwks_uri":"http://idp.example.com/keys"})");
  auto verifier = Verifier(http);
  auto claims = verifier.Verify(TokenFor("k1"), RealClock().Now());
  ASSERT_FALSE(claims.ok());
  EXPECT_NE(claims.status().message().find("jwks_uri"), std::string::npos) << claims.status().ToString();
}

TEST(OidcVerifierTest, AKeySetThatFailsIsReportedAsTheProvidersNotTheTokens) {
  FakeFetcher http;
  http.Answer(kDiscovery, 200, R"({"issuer":"https://idp.example.com","jwks_uri":"https://idp.example.com/keys"})");
  http.Answer("https://idp.example.com/keys", 503, "down for maintenance");
  auto verifier = Verifier(http);
  auto claims = verifier.Verify(TokenFor("k1"), RealClock().Now());
  ASSERT_FALSE(claims.ok());
  EXPECT_EQ(claims.status().code(), Code::kUnavailable);
  EXPECT_NE(claims.status().message().find("key set"), std::string::npos) << claims.status().ToString();
  ASSERT_EQ(http.requests().size(), 2u);
  EXPECT_EQ(http.requests()[1].url, "https://idp.example.com/keys");
}

}  // namespace
}  // namespace causeway::testing
