#include "identity/oidc.h"

#include <algorithm>
#include <optional>
#include "causeway/json_input.h"

#include "causeway/crypto.h"
#include "identity/scim/scim_schema.h"
#include "net/fetch.h"
#include "store/records_json.h"

namespace causeway::identity {

using nlohmann::json;

namespace {

constexpr auto kRefreshAtMost = std::chrono::seconds(60);

Result<json> FetchJson(net::Fetcher& fetch, const std::string& url, const char* what) {
  net::OutboundRequest request;
  request.url = url;
  auto r = fetch.Send(request);
  if (!r.ok()) return Unavailable(std::string("the identity provider's ") + what + " cannot be read: " + r.status().message());
  if (r->status != 200) {
    return Unavailable(std::string("the identity provider's ") + what + " answered HTTP " + std::to_string(r->status));
  }
  json j = ParseUntrustedJson(r->body, what).value_or(json());
  if (!j.is_object()) return Unavailable(std::string("the identity provider's ") + what + " is not a JSON object");
  return j;
}

}  // namespace

bool IsJwtBearer(std::string_view authorization) {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization.substr(0, kBearer.size()) != kBearer) return false;
  std::string_view token = authorization.substr(kBearer.size());
  return token.rfind("cw_", 0) != 0 && std::count(token.begin(), token.end(), '.') == 2;
}

OidcVerifier::OidcVerifier(OidcConfig config, net::Fetcher& fetch) : config_(std::move(config)), fetch_(fetch) {}

Result<OidcVerifier::ProviderKeys> OidcVerifier::ReadKeys(std::string jwks_uri) const {
  if (jwks_uri.empty()) {
    ASSIGN_OR_RETURN(json discovery, FetchJson(fetch_, config_.issuer + "/.well-known/openid-configuration",
                                               "discovery document"));
    // OpenID Connect Discovery 1.0, section 4.3: the document must name
    // exactly the issuer it was fetched for.
    if (JsonString(discovery, "issuer") != config_.issuer) {
      return Unavailable("the discovery document names issuer \"" + JsonString(discovery, "issuer") + "\", not \"" +
                         config_.issuer + "\"");
    }
    std::string uri = JsonString(discovery, "jwks_uri");
    bool tls_issuer = config_.issuer.rfind("https://", 0) == 0;
    if (uri.empty() || (tls_issuer && uri.rfind("https://", 0) != 0)) {
      return Unavailable("the discovery document has no usable jwks_uri");
    }
    jwks_uri = uri;
  }
  ASSIGN_OR_RETURN(json jwks, FetchJson(fetch_, jwks_uri, "key set (JWKS)"));
  auto keys = jwt::KeySet::FromJwks(jwks);
  if (!keys.ok()) return Unavailable("the identity provider's key set: " + keys.status().message());
  return ProviderKeys{std::move(jwks_uri), std::move(*keys)};
}

Result<json> OidcVerifier::Verify(std::string_view token, Timestamp now) {
  ASSIGN_OR_RETURN(json header, jwt::PeekHeader(token));
  std::string kid = header.contains("kid") && header["kid"].is_string() ? header["kid"].get<std::string>() : "";
  jwt::KeySet keys;
  std::optional<std::string> read_from;  // set when this thread reads the keys
  {
    MutexLock lock(mu_);
    const int64_t seen = refreshes_;
    for (;;) {
      bool stale = std::chrono::steady_clock::now() - refreshed_ >= kRefreshAtMost;
      if (have_keys_ && (keys_.Find(kid) != nullptr || !stale)) break;  // nothing to read
      if (!refreshing_) {
        refreshing_ = true;
        refreshed_ = std::chrono::steady_clock::now();
        read_from = jwks_uri_;
        break;
      }
      if (have_keys_) break;  // another thread reads them: go on with those known
      if (refreshes_ != seen) return last_refresh_;  // the read this thread waited for failed
      refreshed_cv_.Wait(mu_);
    }
    keys = keys_;
  }
  if (read_from) {
    auto read = ReadKeys(*read_from);  // no lock held: the provider may be slow
    MutexLock lock(mu_);
    refreshing_ = false;
    ++refreshes_;
    last_refresh_ = read.ok() ? Status::Ok() : read.status();
    if (read.ok()) {
      jwks_uri_ = std::move(read->jwks_uri);
      keys_ = std::move(read->keys);
      have_keys_ = true;
    }
    refreshed_cv_.NotifyAll();
    if (!have_keys_) return last_refresh_;
    keys = keys_;
  }
  return jwt::Verify(token, keys, jwt::Expectations{config_.issuer, config_.audiences, now, config_.leeway});
}

Result<std::string> OidcVerifier::UserName(const json& claims) const {
  for (const std::string& claim : {config_.username_claim, std::string("preferred_username"), std::string("sub")}) {
    auto it = claims.find(claim);
    if (it != claims.end() && it->is_string() && !it->get<std::string>().empty()) return it->get<std::string>();
  }
  return Unauthenticated("token refused: it names nobody (no " + config_.username_claim + ", preferred_username or sub)");
}

std::vector<std::string> OidcVerifier::Groups(const json& claims) const {
  std::vector<std::string> out;
  auto it = claims.find(config_.groups_claim);
  if (it == claims.end()) return out;
  if (it->is_string()) out.push_back(it->get<std::string>());
  if (it->is_array()) {
    for (const json& g : *it) {
      if (g.is_string()) out.push_back(g.get<std::string>());
    }
  }
  return out;
}

Result<std::optional<PersonDirectory::Person>> ReadPerson(const DirectoryReader& store, const std::string& user) {
  std::optional<PersonDirectory::Person> found;
  ASSIGN_OR_RETURN(auto entry, store.FindDirectoryEntryByName("User", user));
  if (!entry) return found;
  found = PersonDirectory::Person{std::move(*entry), {}};
  ASSIGN_OR_RETURN(auto groups, store.ListGroupsOf(found->user.id));
  for (const DirectoryEntry& g : groups) found->groups.push_back(g.name);
  return found;
}

Result<std::optional<PersonDirectory::Person>> PersonDirectory::Find(const DirectoryReader& store, const std::string& user) {
  std::string key = user;
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto steady = std::chrono::steady_clock::now();
  {
    MutexLock lock(mu_);
    if (auto it = entries_.find(key); it != entries_.end() && it->second.fresh_until > steady) return it->second.person;
  }
  ASSIGN_OR_RETURN(std::optional<Person> found, ReadPerson(store, user));
  MutexLock lock(mu_);
  if (entries_.size() >= 10000) entries_.clear();
  entries_[key] = Entry{found, steady + ttl_};
  return found;
}

void NarrowToScopes(Principal& p, const std::vector<std::string>& token_scopes) {
  auto in_token = [&](const std::string& s) {
    return std::find(token_scopes.begin(), token_scopes.end(), s) != token_scopes.end() ||
           std::find(token_scopes.begin(), token_scopes.end(), std::string(kScopeAdmin)) != token_scopes.end();
  };
  for (Grant& g : p.grants) {
    std::vector<std::string> kept;
    for (const std::string& s : g.scopes) {
      if (s == kScopeAdmin) {
        for (const std::string& t : token_scopes) kept.push_back(t);  // an admin's token: what it names
      } else if (in_token(s)) {
        kept.push_back(s);
      }
    }
    g.scopes = std::move(kept);
  }
  p.scopes.clear();
  for (const Grant& g : p.grants) {
    for (const std::string& s : g.scopes) {
      if (std::find(p.scopes.begin(), p.scopes.end(), s) == p.scopes.end()) p.scopes.push_back(s);
    }
  }
}

Result<Principal> PersonToken(PersonDirectory& directory, const DirectoryReader& store, const Principal& token,
                              const std::vector<Binding>& bindings) {
  ASSIGN_OR_RETURN(auto person, directory.Find(store, token.user));
  if (!person) return Unauthenticated("token " + token.token_id + " acts for " + token.user + ", who is not in the directory");
  if (!person->user.active) return Unauthenticated("token " + token.token_id + " acts for " + token.user + ", who is deactivated");
  Principal p = PersonPrincipal(token.token_id, person->user.name, person->user.id, person->groups, bindings);
  p.name = token.name;
  p.grant = token.grant;
  p.creator = token.creator;
  NarrowToScopes(p, token.scopes);
  return p;
}

PeopleAuthenticator::PeopleAuthenticator(OidcVerifier& verifier, PersonDirectory& directory,
                                         std::function<std::vector<Binding>()> bindings, std::chrono::milliseconds ttl)
    : verifier_(verifier), directory_(directory), bindings_(std::move(bindings)), ttl_(ttl) {}

Result<Principal> PeopleAuthenticator::Authenticate(const Store& store, std::string_view authorization, Timestamp now) {
  std::string_view token = authorization.substr(std::string_view("Bearer ").size());
  std::string hash = Sha256Hex(token);
  auto steady = std::chrono::steady_clock::now();
  {
    MutexLock lock(mu_);
    if (auto it = entries_.find(hash); it != entries_.end()) {
      if (it->second.fresh_until > steady && now <= it->second.expires) return it->second.principal;
      entries_.erase(it);
    }
  }
  ASSIGN_OR_RETURN(json claims, verifier_.Verify(token, now));
  ASSIGN_OR_RETURN(std::string name, verifier_.UserName(claims));
  if (Status st = CheckName(name, "the token's user name"); !st.ok()) return Unauthenticated(st.message());
  ASSIGN_OR_RETURN(auto known, directory_.Find(store, name));
  Principal principal;
  if (known) {
    if (!known->user.active) return Unauthenticated("user " + known->user.name + " is deactivated");
    principal = PersonPrincipal("user:" + known->user.name, known->user.name, known->user.id, known->groups, bindings_());
  } else {
    if (verifier_.config().require_provisioned) {
      return Unauthenticated("user " + name + " is not provisioned in Causeway's directory");
    }
    principal = PersonPrincipal("user:" + name, name, "", verifier_.Groups(claims), bindings_());
  }
  // Cached no longer than the token lives, nor than a day (an absurd "exp"
  // must not overflow the conversion).
  double exp = std::clamp(claims.value("exp", 0.0), 0.0, static_cast<double>(ToUnixMicros(now) / 1000000 + 86400));
  Timestamp expires = FromUnixMicros(static_cast<int64_t>(exp * 1e6)) + verifier_.config().leeway;
  MutexLock lock(mu_);
  if (entries_.size() >= 10000) entries_.clear();
  entries_[hash] = Entry{principal, expires, steady + ttl_};
  return principal;
}

}  // namespace causeway::identity
