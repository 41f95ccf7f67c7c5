// People signing in to the console with the company's IdP: OpenID Connect's
// authorization code flow with PKCE (RFC 7636, S256) as a public client.
//
//   Begin:  a fresh state, nonce and code verifier, kept here (never in the
//           browser); the IdP's authorization URL to send the browser to.
//   Finish: the state the IdP sent back must be one Begin made, unused and
//           under ten minutes old; the code is exchanged at the IdP's token
//           endpoint with the verifier, and the ID token that comes back must
//           pass the same checks as any IdP token (signature, issuer,
//           audience, times: identity::OidcVerifier) and carry the nonce.
//
// Both read the network (the discovery document, the token endpoint), each
// call under a deadline, with no lock held: callers run them off the HTTP
// server's threads. Pending sign-ins are capped (`capacity`; full: the
// oldest goes), since anyone may start one.
#pragma once

#include <chrono>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/mutex.h"
#include "causeway/status.h"
#include "identity/oidc.h"
#include "net/fetch.h"

namespace causeway::console {

struct SignedIn {
  std::string id_token;
  std::string name;   // the person, as the verifier names them
  Timestamp expires;  // the ID token's exp
};

class OidcSignIn {
 public:
  // `client_id`: the console's client at the IdP (the first of the estate's
  // identity.oidc.audiences). `verifier` and `fetch` outlive this.
  OidcSignIn(std::string client_id, identity::OidcVerifier& verifier, net::Fetcher& fetch, size_t capacity = 1000,
             Micros ttl = std::chrono::minutes(10));

  // The URL to send the browser to; the IdP returns it to `redirect_uri`.
  Result<std::string> Begin(const std::string& redirect_uri, Timestamp now) EXCLUDES(mu_);
  // kUnauthenticated for an unknown, used or stale state, a refused code, or
  // an ID token that fails a check; kUnavailable when the IdP cannot be read.
  Result<SignedIn> Finish(std::string_view state, std::string_view code, Timestamp now) EXCLUDES(mu_);

  size_t pending() const EXCLUDES(mu_);

 private:
  struct Pending {
    std::string nonce;
    std::string verifier;
    std::string redirect_uri;
    Timestamp started;
  };
  struct Endpoints {
    std::string authorization;
    std::string token;
  };
  // The IdP's endpoints, read from its discovery document once (network I/O
  // with no lock held).
  Result<Endpoints> Discover() EXCLUDES(mu_);

  const std::string client_id_;
  identity::OidcVerifier& verifier_;
  net::Fetcher& fetch_;
  const size_t capacity_;
  const Micros ttl_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Pending> pending_ GUARDED_BY(mu_);  // by state
  std::deque<std::string> order_ GUARDED_BY(mu_);                      // states, oldest first
  std::optional<Endpoints> endpoints_ GUARDED_BY(mu_);
};

}  // namespace causeway::console
