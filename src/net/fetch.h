// One-shot requests to http:// and https:// URLs: documents Causeway reads
// from elsewhere (an identity provider's discovery document and JWKS) and
// what it sends (webhooks, audit events to a SIEM).
// https verifies the server's certificate against the system's CAs and its
// name (SNI and hostname checks); there is no way to turn that off.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/http_client.h"

namespace causeway::net {

// GET `url`. kUnavailable when the host cannot be reached or TLS fails,
// kDeadlineExceeded on timeout, kInvalidArgument for a URL that is not
// http(s)://host[:port]/path, kResourceExhausted past `max_bytes`.
Result<HttpResult> Fetch(std::string_view url, std::chrono::milliseconds timeout = std::chrono::seconds(10),
                         size_t max_bytes = 1 << 20);

// POST `body` of `content_type` with extra headers, with the same rules.
Result<HttpResult> Post(std::string_view url, const std::string& body, const std::string& content_type,
                        const std::vector<std::pair<std::string, std::string>>& headers,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30));

// One outbound request, as a value.
struct OutboundRequest {
  enum class Method { kGet, kPost };
  Method method = Method::kGet;
  std::string url;
  // POST only.
  std::string body;
  std::string content_type;
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::milliseconds timeout{10'000};
  size_t max_bytes = 1 << 20;  // GET: the largest answer read
};

// Who carries outbound requests: the network (Network()), or a test's
// fake. Code that calls out (an identity provider's documents, the
// break-glass webhook, a SIEM collector) holds a Fetcher and never learns
// which. Every request has a deadline (its timeout), and the errors are
// those of Fetch and Post.
class Fetcher {
 public:
  virtual ~Fetcher() = default;
  virtual Result<HttpResult> Send(const OutboundRequest& request) = 0;
};

// The network, through Fetch and Post. Thread-safe; lives for the process.
Fetcher& Network();

}  // namespace causeway::net
