#include "identity/jwt.h"
#include "causeway/json_input.h"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>

namespace causeway::identity::jwt {

using nlohmann::json;

namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr size_t kEcHalf = 32;  // P-256 coordinates and signature halves
// Longer tokens are refused before decoding: real ID tokens are a few KB.
constexpr size_t kMaxJwtBytes = 16 * 1024;

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};
using Bn = std::unique_ptr<BIGNUM, Deleter<BIGNUM, BN_free>>;
using ParamBld = std::unique_ptr<OSSL_PARAM_BLD, Deleter<OSSL_PARAM_BLD, OSSL_PARAM_BLD_free>>;
using Params = std::unique_ptr<OSSL_PARAM, Deleter<OSSL_PARAM, OSSL_PARAM_free>>;
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX, EVP_PKEY_CTX_free>>;
using MdCtx = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX, EVP_MD_CTX_free>>;
using Bio = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;
using EcSig = std::unique_ptr<ECDSA_SIG, Deleter<ECDSA_SIG, ECDSA_SIG_free>>;

std::shared_ptr<EVP_PKEY> Own(EVP_PKEY* key) { return std::shared_ptr<EVP_PKEY>(key, EVP_PKEY_free); }

std::string BnBytes(const BIGNUM* bn, int pad) {
  std::string out(static_cast<size_t>(pad > 0 ? pad : BN_num_bytes(bn)), '\0');
  if (pad > 0) {
    BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(out.data()), pad);
  } else {
    BN_bn2bin(bn, reinterpret_cast<unsigned char*>(out.data()));
  }
  return out;
}

Bn BnFrom(std::string_view bytes) {
  return Bn(BN_bin2bn(reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()), nullptr));
}

Result<std::string> JwkBytes(const json& jwk, const char* name, size_t exact = 0) {
  auto it = jwk.find(name);
  if (it == jwk.end() || !it->is_string()) return InvalidArgument(std::string("JWK: \"") + name + "\" is missing");
  auto bytes = Base64UrlDecode(it->get<std::string>());
  if (!bytes || bytes->empty()) return InvalidArgument(std::string("JWK: \"") + name + "\" is not base64url");
  if (exact && bytes->size() != exact) {
    return InvalidArgument(std::string("JWK: \"") + name + "\" must be " + std::to_string(exact) + " bytes");
  }
  return *bytes;
}

Result<std::shared_ptr<EVP_PKEY>> FromParams(const char* type, OSSL_PARAM_BLD* bld) {
  Params params(OSSL_PARAM_BLD_to_param(bld));
  PkeyCtx ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* key = nullptr;
  if (!params || !ctx || EVP_PKEY_fromdata_init(ctx.get()) <= 0 ||
      EVP_PKEY_fromdata(ctx.get(), &key, EVP_PKEY_PUBLIC_KEY, params.get()) <= 0) {
    return InvalidArgument(std::string("JWK: not a valid ") + type + " public key");
  }
  auto owned = Own(key);
  PkeyCtx check(EVP_PKEY_CTX_new_from_pkey(nullptr, key, nullptr));
  if (!check || EVP_PKEY_public_check(check.get()) != 1) {
    return InvalidArgument(std::string("JWK: not a valid ") + type + " public key");
  }
  return owned;
}

// DER ECDSA-Sig-Value <-> JWS's raw R || S.
std::optional<std::string> EcRawToDer(std::string_view raw) {
  if (raw.size() != 2 * kEcHalf) return std::nullopt;
  EcSig sig(ECDSA_SIG_new());
  Bn r = BnFrom(raw.substr(0, kEcHalf)), s = BnFrom(raw.substr(kEcHalf));
  if (!sig || !r || !s || ECDSA_SIG_set0(sig.get(), r.get(), s.get()) != 1) return std::nullopt;
  r.release();
  s.release();
  unsigned char* der = nullptr;
  int n = i2d_ECDSA_SIG(sig.get(), &der);
  if (n <= 0) return std::nullopt;
  std::string out(reinterpret_cast<char*>(der), static_cast<size_t>(n));
  OPENSSL_free(der);
  return out;
}

std::optional<std::string> EcDerToRaw(std::string_view der) {
  const unsigned char* p = reinterpret_cast<const unsigned char*>(der.data());
  EcSig sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(der.size())));
  if (!sig) return std::nullopt;
  const BIGNUM *r = nullptr, *s = nullptr;
  ECDSA_SIG_get0(sig.get(), &r, &s);
  return BnBytes(r, kEcHalf) + BnBytes(s, kEcHalf);
}

Result<Alg> PinnedAlg(const json& jwk, bool rsa) {
  Alg pinned = rsa ? Alg::kRS256 : Alg::kES256;
  auto alg = jwk.find("alg");
  if (alg == jwk.end()) return pinned;
  if (!alg->is_string() || alg->get<std::string>() != AlgName(pinned)) {
    return InvalidArgument("JWK: alg \"" + (alg->is_string() ? alg->get<std::string>() : alg->dump()) +
                           "\" is not supported for this key type (expected " + std::string(AlgName(pinned)) + ")");
  }
  return pinned;
}

// Seconds since the epoch (a NumericDate, possibly fractional) as a time.
std::optional<Timestamp> NumericDate(const json& claims, const char* name) {
  auto it = claims.find(name);
  if (it == claims.end() || !it->is_number()) return std::nullopt;
  // Before 1970 or after the year 9999 is no date a real token carries (and
  // would overflow microseconds): treated as absent, so the token is refused.
  double seconds = it->get<double>();
  if (!(seconds >= 0 && seconds <= 253'402'300'799.0)) return std::nullopt;
  return FromUnixMicros(static_cast<int64_t>(seconds * 1e6));
}

Status Refuse(std::string why) { return Unauthenticated("token refused: " + std::move(why)); }

}  // namespace

std::string Base64UrlEncode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  uint32_t acc = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    acc = (acc << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(acc >> bits) & 0x3f];
    }
  }
  if (bits > 0) out += kAlphabet[(acc << (6 - bits)) & 0x3f];
  return out;
}

std::optional<std::string> Base64UrlDecode(std::string_view text) {
  if (text.size() % 4 == 1) return std::nullopt;
  std::string out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '-') v = 62;
    else if (c == '_') v = 63;
    else return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((acc >> bits) & 0xff);
    }
  }
  return out;
}

std::string_view AlgName(Alg alg) { return alg == Alg::kRS256 ? "RS256" : "ES256"; }

Result<PublicKey> PublicKey::FromJwk(const json& jwk) {
  if (!jwk.is_object()) return InvalidArgument("JWK: expected an object");
  std::string kty = JsonString(jwk, "kty");
  if (jwk.contains("use") && jwk["use"] != "sig") return InvalidArgument("JWK: \"use\" is not \"sig\"");
  PublicKey k;
  k.kid_ = jwk.contains("kid") && jwk["kid"].is_string() ? jwk["kid"].get<std::string>() : "";
  ParamBld bld(OSSL_PARAM_BLD_new());
  if (!bld) return Internal("out of memory");
  if (kty == "RSA") {
    ASSIGN_OR_RETURN(k.alg_, PinnedAlg(jwk, true));
    ASSIGN_OR_RETURN(std::string n, JwkBytes(jwk, "n"));
    ASSIGN_OR_RETURN(std::string e, JwkBytes(jwk, "e"));
    if (n.size() < 256) return InvalidArgument("JWK: RSA keys under 2048 bits are refused");
    Bn bn_n = BnFrom(n), bn_e = BnFrom(e);
    if (!OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_N, bn_n.get()) ||
        !OSSL_PARAM_BLD_push_BN(bld.get(), OSSL_PKEY_PARAM_RSA_E, bn_e.get())) {
      return Internal("out of memory");
    }
    ASSIGN_OR_RETURN(k.key_, FromParams("RSA", bld.get()));
  } else if (kty == "EC") {
    if (JsonString(jwk, "crv") != "P-256") return InvalidArgument("JWK: only EC keys on P-256 are supported");
    ASSIGN_OR_RETURN(k.alg_, PinnedAlg(jwk, false));
    ASSIGN_OR_RETURN(std::string x, JwkBytes(jwk, "x", kEcHalf));
    ASSIGN_OR_RETURN(std::string y, JwkBytes(jwk, "y", kEcHalf));
    std::string point = "\x04" + x + y;
    if (!OSSL_PARAM_BLD_push_utf8_string(bld.get(), OSSL_PKEY_PARAM_GROUP_NAME, "prime256v1", 0) ||
        !OSSL_PARAM_BLD_push_octet_string(bld.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size())) {
      return Internal("out of memory");
    }
    ASSIGN_OR_RETURN(k.key_, FromParams("EC", bld.get()));
  } else {
    return InvalidArgument("JWK: kty \"" + kty + "\" is not supported (expected RSA or EC)");
  }
  return k;
}

bool PublicKey::Verify(std::string_view input, std::string_view signature) const {
  if (alg_ != Alg::kES256) return VerifyDer(input, signature);
  auto der = EcRawToDer(signature);
  return der && VerifyDer(input, *der);
}

bool PublicKey::VerifyDer(std::string_view input, std::string_view signature) const {
  MdCtx md(EVP_MD_CTX_new());
  if (!md || EVP_DigestVerifyInit(md.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1) return false;
  return EVP_DigestVerify(md.get(), reinterpret_cast<const unsigned char*>(signature.data()), signature.size(),
                          reinterpret_cast<const unsigned char*>(input.data()), input.size()) == 1;
}

Result<SigningKey> SigningKey::Generate(Alg alg, std::string kid) {
  EVP_PKEY* key = alg == Alg::kRS256 ? EVP_RSA_gen(2048) : EVP_EC_gen("P-256");
  if (!key) return Internal("could not generate a signing key");
  SigningKey k;
  k.key_ = Own(key);
  k.kid_ = std::move(kid);
  k.alg_ = alg;
  return k;
}

Result<SigningKey> SigningKey::FromPem(std::string_view pem, Alg alg, std::string kid) {
  Bio bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  EVP_PKEY* key = bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr;
  if (!key) return InvalidArgument("signing key " + kid + ": not a PEM private key");
  SigningKey k;
  k.key_ = Own(key);
  if (!EVP_PKEY_is_a(key, alg == Alg::kRS256 ? "RSA" : "EC")) {
    return InvalidArgument("signing key " + kid + ": not a key for " + std::string(AlgName(alg)));
  }
  k.kid_ = std::move(kid);
  k.alg_ = alg;
  return k;
}

std::string SigningKey::Pem() const {
  Bio bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key_.get(), nullptr, nullptr, 0, nullptr, nullptr) != 1) return "";
  char* data = nullptr;
  long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

json SigningKey::PublicJwk() const {
  json jwk = {{"kid", kid_}, {"alg", AlgName(alg_)}, {"use", "sig"}};
  auto param = [&](const char* name, int pad) {
    BIGNUM* bn = nullptr;
    if (EVP_PKEY_get_bn_param(key_.get(), name, &bn) != 1) return std::string();
    Bn owned(bn);
    return Base64UrlEncode(BnBytes(bn, pad));
  };
  if (alg_ == Alg::kRS256) {
    jwk["kty"] = "RSA";
    jwk["n"] = param(OSSL_PKEY_PARAM_RSA_N, 0);
    jwk["e"] = param(OSSL_PKEY_PARAM_RSA_E, 0);
  } else {
    jwk["kty"] = "EC";
    jwk["crv"] = "P-256";
    jwk["x"] = param(OSSL_PKEY_PARAM_EC_PUB_X, kEcHalf);
    jwk["y"] = param(OSSL_PKEY_PARAM_EC_PUB_Y, kEcHalf);
  }
  return jwk;
}

Result<std::string> SigningKey::Sign(const json& claims) const {
  json header = {{"alg", AlgName(alg_)}, {"kid", kid_}, {"typ", "JWT"}};
  std::string input = Base64UrlEncode(header.dump()) + "." + Base64UrlEncode(claims.dump());
  ASSIGN_OR_RETURN(std::string sig, SignDer(input));
  if (alg_ == Alg::kES256) {
    auto raw = EcDerToRaw(sig);
    if (!raw) return Internal("signing failed");
    sig = std::move(*raw);
  }
  return input + "." + Base64UrlEncode(sig);
}

Result<std::string> SigningKey::SignDer(std::string_view input) const {
  MdCtx md(EVP_MD_CTX_new());
  size_t n = 0;
  if (!md || EVP_DigestSignInit(md.get(), nullptr, EVP_sha256(), nullptr, key_.get()) != 1 ||
      EVP_DigestSign(md.get(), nullptr, &n, reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    return Internal("signing failed");
  }
  std::string sig(n, '\0');
  if (EVP_DigestSign(md.get(), reinterpret_cast<unsigned char*>(sig.data()), &n,
                     reinterpret_cast<const unsigned char*>(input.data()), input.size()) != 1) {
    return Internal("signing failed");
  }
  sig.resize(n);
  return sig;
}

Result<KeySet> KeySet::FromJwks(const json& jwks) {
  if (!jwks.is_object() || !jwks.contains("keys") || !jwks["keys"].is_array()) {
    return InvalidArgument("not a JWKS document: expected {\"keys\": [...]}");
  }
  KeySet set;
  for (const json& jwk : jwks["keys"]) {
    auto key = PublicKey::FromJwk(jwk);
    if (key.ok()) set.Add(std::move(*key));
  }
  return set;
}

const PublicKey* KeySet::Find(const std::string& kid) const {
  if (kid.empty()) return keys_.size() == 1 ? &keys_[0] : nullptr;
  for (const PublicKey& k : keys_) {
    if (k.kid() == kid) return &k;
  }
  return nullptr;
}

Result<json> PeekHeader(std::string_view token) {
  if (token.size() > kMaxJwtBytes) return Refuse("the JWT is longer than " + std::to_string(kMaxJwtBytes) + " bytes");
  size_t dot = token.find('.');
  if (dot == std::string_view::npos) return Refuse("not a JWT (expected header.payload.signature)");
  auto bytes = Base64UrlDecode(token.substr(0, dot));
  json header = bytes ? ParseUntrustedJson(*bytes, "JWT header").value_or(json()) : json();
  if (!header.is_object()) return Refuse("the JWT header is not base64url JSON");
  return header;
}

Result<json> VerifySignature(std::string_view token, const KeySet& keys) {
  size_t first = token.find('.'), second = first == std::string_view::npos ? first : token.find('.', first + 1);
  if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos) {
    return Refuse("not a JWT (expected header.payload.signature)");
  }
  ASSIGN_OR_RETURN(json header, PeekHeader(token));
  std::string alg = JsonString(header, "alg");
  if (alg.empty() || alg == "none") return Refuse("unsigned tokens (alg \"none\") are not accepted");
  if (alg.rfind("HS", 0) == 0) return Refuse("symmetric algorithms (" + alg + ") are not accepted");
  std::string kid = header.contains("kid") && header["kid"].is_string() ? header["kid"].get<std::string>() : "";
  const PublicKey* key = keys.Find(kid);
  if (!key) return Refuse("no signing key with kid \"" + kid + "\" is known for this issuer");
  if (alg != AlgName(key->alg())) {
    return Refuse("the header says " + alg + " but key \"" + kid + "\" verifies only " + std::string(AlgName(key->alg())));
  }
  auto signature = Base64UrlDecode(token.substr(second + 1));
  if (!signature || !key->Verify(token.substr(0, second), *signature)) return Refuse("the signature does not verify");
  auto payload = Base64UrlDecode(token.substr(first + 1, second - first - 1));
  json claims = payload ? ParseUntrustedJson(*payload, "JWT payload").value_or(json()) : json();
  if (!claims.is_object()) return Refuse("the JWT payload is not a JSON object");
  return claims;
}

Result<json> Verify(std::string_view token, const KeySet& keys, const Expectations& expect) {
  ASSIGN_OR_RETURN(json claims, VerifySignature(token, keys));
  if (!expect.issuer.empty() && JsonString(claims, "iss") != expect.issuer) {
    return Refuse("issuer \"" + JsonString(claims, "iss") + "\" is not \"" + expect.issuer + "\"");
  }
  if (!expect.audiences.empty()) {
    json aud = claims.contains("aud") ? claims["aud"] : json();
    bool ok = false;
    for (const std::string& want : expect.audiences) {
      if (aud.is_string()) ok |= aud.get<std::string>() == want;
      if (aud.is_array()) {
        for (const json& a : aud) ok |= a.is_string() && a.get<std::string>() == want;
      }
    }
    if (!ok) return Refuse("the audience does not include this service");
  }
  auto exp = NumericDate(claims, "exp");
  if (!exp) return Refuse("it has no expiry (exp)");
  if (expect.now > *exp + expect.leeway) return Refuse("it expired at " + FormatRfc3339(*exp));
  if (auto nbf = NumericDate(claims, "nbf"); nbf && expect.now + expect.leeway < *nbf) {
    return Refuse("it is not valid before " + FormatRfc3339(*nbf));
  }
  if (auto iat = NumericDate(claims, "iat"); iat && expect.now + expect.leeway < *iat) {
    return Refuse("it was issued in the future (" + FormatRfc3339(*iat) + ")");
  }
  return claims;
}

}  // namespace causeway::identity::jwt
