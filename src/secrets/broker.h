// The secret broker: for one attempt, reads each of its job's `secrets:`
// references (SecretRef) from the store the estate declares for it, with
// the attempt's own federated identity: a workload token minted for that
// attempt is exchanged at the store's STS for a role session, and the
// session reads the secret (aws-sm://); or the token itself is the bearer
// credential a Kubernetes API server that trusts Causeway's issuer checks
// (k8s://). Nothing of Causeway's own is a key to any store. Values live in memory until the attempt's launch carries them;
// what is recorded of each read (SecretRead) is its reference, store,
// outcome and a keyed digest of the value.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/job_spec.h"
#include "causeway/status.h"
#include "net/fetch.h"
#include "net/request.h"

namespace causeway::secrets {

// One reference read for an attempt, as the audit trail keeps it.
struct SecretRead {
  std::string var;        // the variable it was delivered in
  std::string store;      // identity.secret_stores[].name ("" : none would serve)
  std::string reference;  // as the spec wrote it
  std::string delivery;   // env or file
  bool ok = false;
  std::string outcome;  // "delivered", or why not (never any of the value)
  std::string digest;   // hmac-sha256:HEX of the value, keyed (see Broker)
};

struct Fetched {
  std::map<std::string, std::string> values;  // by variable
  std::vector<SecretRead> reads;              // one per reference, in the variables' order
  Status status;                              // the first failure: the attempt must not run
};

class Broker {
 public:
  // Mints the attempt's workload token for an audience.
  using Mint = std::function<Result<std::string>(const std::string& audience)>;
  // A keyed digest of a value (SecretBox::Mac): lets an auditor see that two
  // attempts got the same value without the trail holding anything that
  // could be guessed back.
  using Digest = std::function<std::string(std::string_view value)>;

  // Sends a request to a Kubernetes API server, trusting its CA (net::SendApi).
  using ApiSender = std::function<Result<net::HttpResult>(const net::ApiRequest&, const net::TlsTrust&)>;

  // `net` carries every request to AWS, `api` those to API servers, each
  // with `timeout`. `identity` and `net` outlive the broker.
  Broker(const IdentityConfig& identity, net::Fetcher& net, Digest digest, ApiSender api = net::SendApi,
         std::chrono::milliseconds timeout = std::chrono::seconds(10))
      : identity_(identity), net_(net), digest_(std::move(digest)), api_(std::move(api)), timeout_(timeout) {}

  // Reads `spec`'s references for attempt `attempt` of job `job_id`. Each
  // store's token is minted (and its role assumed) once and each secret
  // read once, however many keys of it the spec takes. Thread-safe:
  // attempts are read in parallel.
  Fetched Fetch(const JobSpec& spec, const std::string& job_id, int attempt, const Mint& mint, Timestamp now) const;

 private:
  // The Secret `ref` names from the API server of `fed`, with `token`: its
  // data, each key's value decoded.
  Result<std::map<std::string, std::string>> KubeSecret(const CloudFederation& fed, const SecretRef& ref,
                                                        const std::string& token) const;

  const IdentityConfig& identity_;
  net::Fetcher& net_;
  Digest digest_;
  ApiSender api_;
  std::chrono::milliseconds timeout_;
};

}  // namespace causeway::secrets
