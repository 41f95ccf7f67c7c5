// JSON Web Tokens signed with RS256 or ES256 (RFC 7515, 7518, 7519), on
// OpenSSL 3's EVP interface. Used both ways: verifying the ID and access
// tokens of the company's OpenID Connect provider, and signing Causeway's
// own workload identity tokens.
//
// The algorithm is never taken from the token: each key verifies with the
// one algorithm pinned to it (its JWK "alg", else RS256 for RSA and ES256
// for P-256), so "none", HS256 with a public key as secret, or RS256 on an
// EC key are refused. ES256 signatures are raw R || S, 32 bytes each.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "causeway/clock.h"
#include "causeway/status.h"

typedef struct evp_pkey_st EVP_PKEY;

namespace causeway::identity::jwt {

std::string Base64UrlEncode(std::string_view bytes);
// nullopt for characters outside the URL-safe alphabet or a bad length.
std::optional<std::string> Base64UrlDecode(std::string_view text);

enum class Alg { kRS256, kES256 };
std::string_view AlgName(Alg alg);

// A key that checks signatures, with the one algorithm it is pinned to.
class PublicKey {
 public:
  // From a JWK: {"kty": "RSA", "n", "e"} or {"kty": "EC", "crv": "P-256",
  // "x", "y"}, optional "kid", "alg" (must suit the key type), "use" (must
  // be "sig" if present). kInvalidArgument naming what is wrong.
  static Result<PublicKey> FromJwk(const nlohmann::json& jwk);

  const std::string& kid() const { return kid_; }
  Alg alg() const { return alg_; }
  // Whether `signature` (raw JWS bytes) signs `input` under this key.
  bool Verify(std::string_view input, std::string_view signature) const;
  // The same for a signature in the algorithm's own encoding (ASN.1 DER
  // for ES256, as DSSE carries it; PKCS#1 v1.5 bytes for RS256).
  bool VerifyDer(std::string_view input, std::string_view signature) const;

 private:
  std::shared_ptr<EVP_PKEY> key_;
  std::string kid_;
  Alg alg_ = Alg::kRS256;
};

// A private key Causeway signs with.
class SigningKey {
 public:
  // A fresh key: RSA 2048 for RS256, P-256 for ES256.
  static Result<SigningKey> Generate(Alg alg, std::string kid);
  // From the PKCS#8 PEM that Pem() wrote; kInvalidArgument if it is not a
  // key of `alg`'s type.
  static Result<SigningKey> FromPem(std::string_view pem, Alg alg, std::string kid);

  const std::string& kid() const { return kid_; }
  Alg alg() const { return alg_; }
  // The private key, PKCS#8 PEM. A secret: never log it.
  std::string Pem() const;
  // The public half as a JWK, with kid, alg and use.
  nlohmann::json PublicJwk() const;
  // A compact JWS of `claims` with header {"alg", "kid", "typ": "JWT"}.
  Result<std::string> Sign(const nlohmann::json& claims) const;
  // The signature of `input` (SHA-256) in the algorithm's own encoding
  // (ASN.1 DER for ES256).
  Result<std::string> SignDer(std::string_view input) const;

 private:
  std::shared_ptr<EVP_PKEY> key_;
  std::string kid_;
  Alg alg_ = Alg::kES256;
};

// Keys by id, as a JWKS document ({"keys": [...]}) lists them.
class KeySet {
 public:
  // Keys that cannot be read (unknown types, other uses) are skipped, as
  // RFC 7517 asks; kInvalidArgument only if the document is not a JWKS.
  static Result<KeySet> FromJwks(const nlohmann::json& jwks);
  void Add(PublicKey key) { keys_.push_back(std::move(key)); }
  // The key a token's header names: by kid, or the only key when the
  // token names none. Null if there is no such key.
  const PublicKey* Find(const std::string& kid) const;
  size_t size() const { return keys_.size(); }

 private:
  std::vector<PublicKey> keys_;
};

// What a verified token must say.
struct Expectations {
  std::string issuer;                  // "iss", exactly
  std::vector<std::string> audiences;  // "aud" must hold one of them
  Timestamp now;
  Micros leeway = std::chrono::seconds(60);  // for exp, nbf and iat
};

// The token's header, from a compact JWS, without checking anything.
Result<nlohmann::json> PeekHeader(std::string_view token);

// The claims of a compact JWS whose signature checks out under the key its
// kid names, with that key's algorithm (none, HS* and mismatches refused);
// nothing else is checked. For signed statements that do not expire, such
// as the audit chain's checkpoints.
Result<nlohmann::json> VerifySignature(std::string_view token, const KeySet& keys);

// The claims of `token` once its signature (by the key its kid names, with
// that key's algorithm), issuer, audience, expiry, not-before and issued-at
// check out. kUnauthenticated saying which check failed; the message never
// repeats the token.
Result<nlohmann::json> Verify(std::string_view token, const KeySet& keys, const Expectations& expect);

}  // namespace causeway::identity::jwt
