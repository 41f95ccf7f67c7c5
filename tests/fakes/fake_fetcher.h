// An outbound HTTP carrier for tests (a net::Fetcher): it records every
// request and answers from a script, so that what calls out (an identity
// provider's documents, a webhook, a SIEM collector) is tested without a
// network, including an endpoint that fails or refuses.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "net/fetch.h"

namespace causeway::testing {

class FakeFetcher final : public net::Fetcher {
 public:
  // Requests to `url` are answered with `status` and `body`.
  void Answer(const std::string& url, int status, std::string body = "") {
    std::lock_guard<std::mutex> lock(mu_);
    script_[url] = net::HttpResult{status, std::move(body), {}};
  }
  // Requests to `url` fail with `error` (as an unreachable host would).
  void Fail(const std::string& url, Status error) {
    std::lock_guard<std::mutex> lock(mu_);
    script_.erase(url);
    errors_.insert_or_assign(url, std::move(error));
  }

  // A URL nobody scripted is unreachable.
  Result<net::HttpResult> Send(const net::OutboundRequest& request) override {
    std::lock_guard<std::mutex> lock(mu_);
    requests_.push_back(request);
    if (auto it = script_.find(request.url); it != script_.end()) return it->second;
    if (auto it = errors_.find(request.url); it != errors_.end()) return it->second;
    return Unavailable("cannot connect to " + request.url + ": connection refused");
  }

  std::vector<net::OutboundRequest> requests() const {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, net::HttpResult> script_;
  std::map<std::string, Status> errors_;
  std::vector<net::OutboundRequest> requests_;
};

}  // namespace causeway::testing
