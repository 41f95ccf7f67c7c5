// Transport-neutral HTTP request and response, so handlers never see Beast.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "identity/tokens.h"

namespace causeway::api {

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string path;    // percent-decoded per segment later; no query
  std::map<std::string, std::string> query;    // decoded; last value wins
  std::map<std::string, std::string> headers;  // names in lower case
  std::string body;
  std::map<std::string, std::string> params;   // from "{name}" route segments
  std::optional<identity::Principal> principal;  // set once authenticated

  // The header's value, or "" when absent. `name` must be lower case.
  std::string Header(std::string_view name) const {
    auto it = headers.find(std::string(name));
    return it == headers.end() ? "" : it->second;
  }
  std::string Query(std::string_view name) const {
    auto it = query.find(std::string(name));
    return it == query.end() ? "" : it->second;
  }
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// What the HTTP server has done with connections, for /metrics.
struct ConnectionStats {
  size_t open = 0;         // connections open now
  size_t cap = 0;          // the most it keeps open (from the open-file limit)
  uint64_t refused = 0;    // closed at once: over the cap with none idle to close
  uint64_t evicted = 0;    // idle or slow connections closed to make room for a new one
  uint64_t timed_out = 0;  // closed for sending headers or a body too slowly, or idling too long
  uint64_t accept_errors = 0;  // accept() failures (e.g. out of file descriptors)
};

// Sends the response. Call exactly once, from any thread.
using Reply = std::function<void(HttpResponse)>;
using Handler = std::function<void(HttpRequest&, Reply)>;

// Decodes %XX escapes (and '+' as space when `plus_is_space`). Returns
// nullopt on a malformed escape.
std::optional<std::string> PercentDecode(std::string_view s, bool plus_is_space);
// Splits "a=1&b=2" into decoded pairs; malformed pairs are skipped.
std::map<std::string, std::string> ParseQuery(std::string_view query);

// Whether a request's body framing is unambiguous (RFC 9112 section 6.1):
// no Transfer-Encoding, or exactly one such field whose value is "chunked"
// (any case, spaces around it) and no Content-Length beside it. Anything
// else ("gzip", "chunked, identity", "xchunked") a proxy in front may read
// differently, so the request is refused and the connection closed.
bool FramingAccepted(const std::vector<std::string_view>& transfer_encodings, bool has_content_length);

// Whether a request's header block (from its request line to the CRLF
// before the blank line) folds a field onto a following line: a line that
// starts with a space or a tab (obs-fold, RFC 9112 section 5.2). Such a
// request is refused, since readers that unfold and readers that do not
// would see different fields.
bool FoldsHeaderLines(std::string_view head);

}  // namespace causeway::api
