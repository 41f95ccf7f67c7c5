// One-shot requests to http:// and https:// URLs: documents Causeway reads
// from elsewhere (an identity provider's discovery document and JWKS) and
// what it sends (webhooks, audit events to a SIEM).
// https verifies the server's certificate against the system's CAs and its
// name (SNI and hostname checks); there is no way to turn that off.
#pragma once

#include <chrono>
#include <string_view>

#include "net/http_client.h"

namespace causeway::net {

// GET `url`. kUnavailable when the host cannot be reached or TLS fails,
// kDeadlineExceeded on timeout, kInvalidArgument for a URL that is not
// http(s)://host[:port]/path, kResourceExhausted past `max_bytes`.
Result<HttpResult> Fetch(std::string_view url, std::chrono::milliseconds timeout = std::chrono::seconds(10),
                         size_t max_bytes = 1 << 20);

// POST `body` (application/json) to `url`, with the same rules as Fetch.
Result<HttpResult> PostJson(std::string_view url, const std::string& body,
                            std::chrono::milliseconds timeout = std::chrono::seconds(10));

// POST `body` of `content_type` with extra headers, with the same rules.
Result<HttpResult> Post(std::string_view url, const std::string& body, const std::string& content_type,
                        const std::vector<std::pair<std::string, std::string>>& headers,
                        std::chrono::milliseconds timeout = std::chrono::seconds(30));

}  // namespace causeway::net
