// The HTTP request reader: Beast's parser with the server's limits, the
// framing rule (Transfer-Encoding), the query and path decoding, and the
// console's session cookie read out of the Cookie header.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "api/http_types.h"
#include "console/sessions.h"

namespace http = boost::beast::http;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)causeway::api::FoldsHeaderLines(std::string_view(reinterpret_cast<const char*>(data), size));  // never crashes
  http::request_parser<http::string_body> parser;
  parser.body_limit(1 << 20);
  parser.header_limit(64 * 1024);
  parser.eager(true);
  boost::beast::error_code ec;
  parser.put(boost::asio::buffer(data, size), ec);
  if (ec || !parser.is_header_done()) return 0;
  const auto& msg = parser.get();
  std::vector<std::string_view> te;
  for (auto [it, end] = msg.equal_range(http::field::transfer_encoding); it != end; ++it) {
    te.emplace_back(it->value().data(), it->value().size());
  }
  (void)causeway::api::FramingAccepted(te, msg.find(http::field::content_length) != msg.end());
  std::string_view target(msg.target().data(), msg.target().size());
  auto q = target.find('?');
  if (q != std::string_view::npos) (void)causeway::api::ParseQuery(target.substr(q + 1));
  (void)causeway::api::PercentDecode(target.substr(0, q), false);
  for (auto [it, end] = msg.equal_range(http::field::cookie); it != end; ++it) {
    std::string_view cookie(it->value().data(), it->value().size());
    (void)causeway::console::CookieValue(cookie, causeway::console::kSessionCookie);
  }
  return 0;
}
