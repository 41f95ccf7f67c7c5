// A small blocking HTTP/1.1 client with one keep-alive connection, for the CLI
// and the tests. Not thread-safe: use one client per thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "causeway/status.h"

namespace causeway::net {

struct HttpResult {
  int status = 0;
  std::string body;
  std::map<std::string, std::string> headers;  // names in lower case
};

// Percent-encodes everything but unreserved characters (RFC 3986), for a
// path segment or a query value.
std::string UrlEncode(std::string_view s);

// Splits "http://host:port" (or "host:port") into host and port.
Result<std::pair<std::string, uint16_t>> ParseServerUrl(std::string_view url);

class HttpClient {
 public:
  HttpClient(std::string host, uint16_t port, std::chrono::milliseconds timeout = std::chrono::seconds(30));
  ~HttpClient();
  HttpClient(HttpClient&&) noexcept;

  // Sends one request and reads the response. kUnavailable when the server
  // cannot be reached or the connection drops; kDeadlineExceeded on timeout.
  // A request on a stale keep-alive connection is retried once on a new one
  // only if nothing was sent yet.
  Result<HttpResult> Send(std::string_view method, std::string_view target, std::string_view body = "",
                          const std::vector<std::pair<std::string, std::string>>& headers = {});

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace causeway::net
