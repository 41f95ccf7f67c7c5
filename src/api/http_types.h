// Transport-neutral HTTP request and response, so handlers never see Beast.
#pragma once

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

// Sends the response. Call exactly once, from any thread.
using Reply = std::function<void(HttpResponse)>;
using Handler = std::function<void(HttpRequest&, Reply)>;

// Decodes %XX escapes (and '+' as space when `plus_is_space`). Returns
// nullopt on a malformed escape.
std::optional<std::string> PercentDecode(std::string_view s, bool plus_is_space);
// Splits "a=1&b=2" into decoded pairs; malformed pairs are skipped.
std::map<std::string, std::string> ParseQuery(std::string_view query);

}  // namespace causeway::api
