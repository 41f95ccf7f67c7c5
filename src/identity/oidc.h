// People signing in with the company's OpenID Connect provider (Okta,
// Entra, Google, Keycloak, ...): their ID or access tokens are verified
// against the provider's discovery document and JWKS, and turned into a
// Principal whose rights come from their groups (identity/access.h).
//
// Groups: a person the SCIM directory knows gets the directory's groups
// and must be active there, so a deactivation or a group removal applies
// at once whatever the token still claims; a person it does not know gets
// the token's groups claim, unless `require_provisioned` refuses them.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <unordered_map>

#include "causeway/estate.h"
#include "causeway/mutex.h"
#include "causeway/store.h"
#include "identity/access.h"
#include "identity/jwt.h"
#include "identity/tokens.h"
#include "net/fetch.h"

namespace causeway::identity {

class OidcVerifier {
 public:
  // Reads the provider's documents through `fetch` (the network unless a
  // test gives another), which must outlive the verifier.
  explicit OidcVerifier(OidcConfig config, net::Fetcher& fetch = net::Network());

  // The claims of `token` once the provider's signature, the issuer, the
  // audience and the token's times check out. The provider's keys are read
  // on first use and again when a token names a key not seen before (at
  // most once a minute), which follows the provider's key rotation.
  // kUnauthenticated for a bad token; kUnavailable when the provider cannot
  // be reached and no keys are known.
  Result<nlohmann::json> Verify(std::string_view token, Timestamp now);

  // The person's name: the configured claim, else preferred_username, else
  // sub; kUnauthenticated when none is a string.
  Result<std::string> UserName(const nlohmann::json& claims) const;
  // The groups claim: an array of names (or one name); empty when absent.
  std::vector<std::string> Groups(const nlohmann::json& claims) const;
  const OidcConfig& config() const { return config_; }

 private:
  struct ProviderKeys {
    std::string jwks_uri;
    jwt::KeySet keys;
  };
  // The provider's keys read afresh, the discovery document first when its
  // jwks_uri is not known yet (`jwks_uri` empty). Network I/O: called with
  // no lock held, by one thread at a time (refreshing_).
  Result<ProviderKeys> ReadKeys(std::string jwks_uri) const;

  const OidcConfig config_;
  net::Fetcher& fetch_;
  Mutex mu_;
  jwt::KeySet keys_ GUARDED_BY(mu_);
  std::string jwks_uri_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point refreshed_ GUARDED_BY(mu_) {};
  bool have_keys_ GUARDED_BY(mu_) = false;
  // A thread is reading the provider's keys; those that have no usable key
  // wait for it (refreshed), others go on with the keys they have.
  bool refreshing_ GUARDED_BY(mu_) = false;
  int64_t refreshes_ GUARDED_BY(mu_) = 0;  // reads finished
  Status last_refresh_ GUARDED_BY(mu_);
  CondVar refreshed_cv_;
};

// People as the SCIM directory has them, looked up by userName (ignoring
// case) and remembered for at most `ttl` (500 ms): the bound within which a
// deactivation or a group change applies on every replica.
class PersonDirectory {
 public:
  struct Person {
    DirectoryEntry user;
    std::vector<std::string> groups;  // display names
  };
  explicit PersonDirectory(std::chrono::milliseconds ttl = std::chrono::milliseconds(500)) : ttl_(ttl) {}
  // nullopt when the directory has no such user.
  Result<std::optional<Person>> Find(const DirectoryReader& store, const std::string& user);

 private:
  struct Entry {
    std::optional<Person> person;
    std::chrono::steady_clock::time_point fresh_until;
  };
  const std::chrono::milliseconds ttl_;
  Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mu_);  // by lower-cased userName
};

// The directory's user named `user` (userName, ignoring case) and the
// display names of its groups, read now; nullopt when there is none.
Result<std::optional<PersonDirectory::Person>> ReadPerson(const DirectoryReader& store, const std::string& user);

// Narrows a person's grants to what a token names, grant by grant: a
// grant keeps only the scopes the token also has (an admin grant keeps the
// token's). Every decision on a person's rights reads the narrowed grants,
// so a token narrowed to jobs:read acts with jobs:read whatever the roles.
void NarrowToScopes(Principal& p, const std::vector<std::string>& token_scopes);

// The principal of a token that acts for a person (TokenRecord::user): the
// person's current grants, narrowed to the token's scopes. kUnauthenticated
// when the person is deactivated or gone from the directory.
Result<Principal> PersonToken(PersonDirectory& directory, const DirectoryReader& store, const Principal& token,
                              const std::vector<Binding>& bindings);

// Turns bearer tokens from the provider into people. A resolved person is
// remembered for at most `ttl` (500 ms), the same bound as API tokens, so
// a deactivation or group change through any replica applies within it.
class PeopleAuthenticator {
 public:
  // `bindings`: the role bindings in force (asked on each sign-in).
  PeopleAuthenticator(OidcVerifier& verifier, PersonDirectory& directory,
                      std::function<std::vector<Binding>()> bindings,
                      std::chrono::milliseconds ttl = std::chrono::milliseconds(500));

  // The person `authorization` ("Bearer <JWT>") signs in. kUnauthenticated
  // naming the reason (never repeating the token).
  Result<Principal> Authenticate(const Store& store, std::string_view authorization, Timestamp now);

 private:
  struct Entry {
    Principal principal;
    Timestamp expires;
    std::chrono::steady_clock::time_point fresh_until;
  };
  OidcVerifier& verifier_;
  PersonDirectory& directory_;
  std::function<std::vector<Binding>()> bindings_;
  const std::chrono::milliseconds ttl_;
  Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mu_);  // by token hash
};

// Whether an Authorization header carries a JWT rather than a Causeway token.
bool IsJwtBearer(std::string_view authorization);

}  // namespace causeway::identity
