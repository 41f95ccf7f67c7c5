// Requests with any method to an HTTPS API whose server is checked against
// a CA of its own (a Kubernetes API server), optionally presenting a client
// certificate, and the streamed reading of a long answer (a watch). Every
// call has one deadline for connecting, TLS, sending and reading; the
// server's certificate and name are always checked.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/http_client.h"

namespace causeway::net {

// Whom a client trusts and who it is: `ca_file` is trusted beside the
// system's CAs; a client certificate and its key, where both are set.
struct TlsTrust {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
};

struct ApiRequest {
  std::string method = "GET";  // GET, POST, PUT, PATCH, DELETE
  std::string url;             // https://host:port/path?query (http:// too)
  std::string body;            // sent when not empty
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  std::chrono::milliseconds timeout{10'000};
  size_t max_bytes = 8 << 20;  // the largest answer read
  // When set, the call is given up (kUnavailable, "abandoned") within a
  // tenth of a second of it becoming true: a caller that must stop
  // promptly sets it.
  const std::atomic<bool>* abandon = nullptr;
};

// Sends `request` and reads the whole answer, with the errors of Fetch
// (fetch.h): kUnavailable, kDeadlineExceeded, kInvalidArgument,
// kResourceExhausted past `max_bytes`.
Result<HttpResult> SendApi(const ApiRequest& request, const TlsTrust& trust);

// Sends `request` and hands the answer's body to `on_data` as it arrives,
// piece by piece, until the server ends it, `on_data` returns false, or the
// deadline (request.timeout) passes: then kDeadlineExceeded. `status` gets
// the answer's status before any data; a status other than 200 has its
// body (up to max_bytes) in `error_body` instead.
Status StreamApi(const ApiRequest& request, const TlsTrust& trust, int* status, std::string* error_body,
                 const std::function<bool(std::string_view)>& on_data);

}  // namespace causeway::net
