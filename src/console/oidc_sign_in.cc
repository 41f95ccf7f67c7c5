#include "console/oidc_sign_in.h"

#include <nlohmann/json.hpp>

#include "causeway/crypto.h"
#include "identity/jwt.h"
#include "net/http_client.h"

namespace causeway::console {

namespace {

using nlohmann::json;

std::string Random() { return identity::jwt::Base64UrlEncode(RandomBytes(32)); }

// RFC 7636 §4.2: BASE64URL(SHA256(verifier)).
std::string S256Challenge(std::string_view verifier) {
  std::string hex = Sha256Hex(verifier), raw;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) raw.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  return identity::jwt::Base64UrlEncode(raw);
}

// The IdP's answer as a JSON object, or why not (never echoing a token).
Result<json> JsonObject(const Result<net::HttpResult>& r, std::string_view what) {
  if (!r.ok()) return Unavailable(std::string(what) + ": " + r.status().message());
  // The IdP's answer: a body that is not JSON is refused below, by its status or its missing
  // fields.
  json body = json::parse(r->body, nullptr, false);
  if (r->status != 200) {
    std::string why = body.is_object() && body.contains("error") && body["error"].is_string()
                          ? body["error"].get<std::string>()
                          : "HTTP " + std::to_string(r->status);
    return Unauthenticated(std::string(what) + " refused: " + why.substr(0, 100));
  }
  if (!body.is_object()) return Unavailable(std::string(what) + ": the answer is not a JSON object");
  return body;
}

}  // namespace

OidcSignIn::OidcSignIn(std::string client_id, identity::OidcVerifier& verifier, net::Fetcher& fetch, size_t capacity,
                       Micros ttl)
    : client_id_(std::move(client_id)), verifier_(verifier), fetch_(fetch), capacity_(capacity), ttl_(ttl) {}

Result<OidcSignIn::Endpoints> OidcSignIn::Discover() {
  {
    MutexLock lock(mu_);
    if (endpoints_) return *endpoints_;
  }
  std::string issuer = verifier_.config().issuer;
  while (!issuer.empty() && issuer.back() == '/') issuer.pop_back();
  net::OutboundRequest get;
  get.url = issuer + "/.well-known/openid-configuration";
  get.timeout = std::chrono::seconds(10);
  get.max_bytes = 256 << 10;
  ASSIGN_OR_RETURN(json doc, JsonObject(fetch_.Send(get), "the identity provider's discovery document"));
  Endpoints e;
  if (doc.contains("authorization_endpoint") && doc["authorization_endpoint"].is_string()) {
    e.authorization = doc["authorization_endpoint"];
  }
  if (doc.contains("token_endpoint") && doc["token_endpoint"].is_string()) e.token = doc["token_endpoint"];
  if (e.authorization.rfind("http", 0) != 0 || e.token.rfind("http", 0) != 0) {
    return Unavailable("the identity provider's discovery document names no authorization_endpoint and token_endpoint");
  }
  MutexLock lock(mu_);
  endpoints_ = e;
  return e;
}

Result<std::string> OidcSignIn::Begin(const std::string& redirect_uri, Timestamp now) {
  ASSIGN_OR_RETURN(Endpoints e, Discover());
  std::string state = Random();
  Pending p{Random(), Random(), redirect_uri, now};
  std::string challenge = S256Challenge(p.verifier);
  std::string url = e.authorization + (e.authorization.find('?') == std::string::npos ? "?" : "&") +
                    "response_type=code&client_id=" + net::UrlEncode(client_id_) +
                    "&redirect_uri=" + net::UrlEncode(redirect_uri) + "&scope=" + net::UrlEncode("openid email profile") +
                    "&state=" + state + "&nonce=" + p.nonce + "&code_challenge=" + challenge +
                    "&code_challenge_method=S256";
  MutexLock lock(mu_);
  while (pending_.size() >= capacity_ && !order_.empty()) {
    pending_.erase(order_.front());
    order_.pop_front();
  }
  pending_.emplace(state, std::move(p));
  order_.push_back(state);
  return url;
}

Result<SignedIn> OidcSignIn::Finish(std::string_view state, std::string_view code, Timestamp now) {
  Pending p;
  {
    MutexLock lock(mu_);
    auto it = pending_.find(std::string(state));
    if (it == pending_.end()) return Unauthenticated("this sign-in is unknown or was already used: start again");
    p = std::move(it->second);
    pending_.erase(it);  // a state is good once
    std::erase(order_, std::string(state));
  }
  if (now - p.started > ttl_) return Unauthenticated("this sign-in took too long: start again");
  if (code.empty() || code.size() > 4096) return Unauthenticated("the identity provider sent no usable code");
  ASSIGN_OR_RETURN(Endpoints e, Discover());
  net::OutboundRequest post;
  post.method = net::OutboundRequest::Method::kPost;
  post.url = e.token;
  post.content_type = "application/x-www-form-urlencoded";
  post.body = "grant_type=authorization_code&code=" + net::UrlEncode(code) +
              "&redirect_uri=" + net::UrlEncode(p.redirect_uri) + "&client_id=" + net::UrlEncode(client_id_) +
              "&code_verifier=" + p.verifier;
  post.timeout = std::chrono::seconds(10);
  ASSIGN_OR_RETURN(json tokens, JsonObject(fetch_.Send(post), "the identity provider's token endpoint"));
  if (!tokens.contains("id_token") || !tokens["id_token"].is_string()) {
    return Unauthenticated("the identity provider's token endpoint returned no id_token");
  }
  SignedIn in;
  in.id_token = tokens["id_token"];
  ASSIGN_OR_RETURN(json claims, verifier_.Verify(in.id_token, now));
  if (!claims.contains("nonce") || claims["nonce"] != p.nonce) {
    return Unauthenticated("the ID token does not carry this sign-in's nonce");
  }
  ASSIGN_OR_RETURN(in.name, verifier_.UserName(claims));
  in.expires = claims.contains("exp") && claims["exp"].is_number_integer()
                   ? FromUnixMicros(claims["exp"].get<int64_t>() * 1'000'000)
                   : now + std::chrono::hours(1);
  return in;
}

size_t OidcSignIn::pending() const {
  MutexLock lock(mu_);
  return pending_.size();
}

}  // namespace causeway::console
