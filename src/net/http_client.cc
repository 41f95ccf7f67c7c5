#include "net/http_client.h"

#include <algorithm>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <charconv>
#include <optional>

#include "net/deadline.h"

namespace causeway::net {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

std::string UrlEncode(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

Result<std::pair<std::string, uint16_t>> ParseServerUrl(std::string_view url) {
  std::string_view rest = url;
  if (rest.substr(0, 7) == "http://") rest.remove_prefix(7);
  if (rest.substr(0, 8) == "https://") {
    return InvalidArgument("https is not supported by this client: put Causeway behind a TLS proxy and use http:// locally");
  }
  while (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
  auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || colon == 0) {
    return InvalidArgument("invalid server address \"" + std::string(url) + "\": expected http://HOST:PORT");
  }
  int port = 0;
  std::string_view p = rest.substr(colon + 1);
  auto [ptr, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  if (ec != std::errc() || ptr != p.data() + p.size() || port <= 0 || port > 65535) {
    return InvalidArgument("invalid port in server address \"" + std::string(url) + "\": expected 1-65535");
  }
  return std::make_pair(std::string(rest.substr(0, colon)), static_cast<uint16_t>(port));
}

struct HttpClient::Impl {
  std::string host;
  uint16_t port;
  std::chrono::milliseconds timeout;
  net::io_context ioc;
  std::optional<beast::tcp_stream> stream;
  beast::flat_buffer buffer;

  // Runs one step of the exchange on the connection, bounded by `deadline`.
  template <typename Start>
  beast::error_code Step(std::chrono::steady_clock::time_point deadline, Start&& start) {
    return RunUntil(ioc, deadline, [this] { stream->close(); }, std::forward<Start>(start));
  }

  Status Connect(std::chrono::steady_clock::time_point deadline) {
    stream.emplace(ioc);
    beast::error_code ec;
    tcp::resolver resolver(ioc);
    auto results = resolver.resolve(host, std::to_string(port), ec);
    if (ec) return Unavailable("cannot resolve " + host + ": " + ec.message());
    ec = Step(deadline, [&](auto handler) { stream->async_connect(results, std::move(handler)); });
    if (ec == net::error::timed_out) {
      stream.reset();
      return Status(Code::kDeadlineExceeded, "connecting to " + host + ":" + std::to_string(port) + " timed out");
    }
    if (ec) {
      stream.reset();
      return Unavailable("cannot reach the Causeway server at " + host + ":" + std::to_string(port) + ": " +
                         ec.message());
    }
    stream->socket().set_option(tcp::no_delay(true), ec);
    return Status::Ok();
  }
};

HttpClient::HttpClient(std::string host, uint16_t port, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  impl_->host = std::move(host);
  impl_->port = port;
  impl_->timeout = timeout;
}
HttpClient::~HttpClient() = default;
HttpClient::HttpClient(HttpClient&&) noexcept = default;

Result<HttpResult> HttpClient::Send(std::string_view method, std::string_view target, std::string_view body,
                                    const std::vector<std::pair<std::string, std::string>>& headers) {
  http::request<http::string_body> req;
  req.method_string(method);
  req.target(target);
  req.version(11);
  req.set(http::field::host, impl_->host + ":" + std::to_string(impl_->port));
  req.set(http::field::user_agent, "causeway-cli");
  for (const auto& [k, v] : headers) req.set(k, v);
  if (!body.empty() || method == "POST" || method == "PUT") {
    req.body() = std::string(body);
    if (req[http::field::content_type].empty()) req.set(http::field::content_type, "application/json");
  }
  req.keep_alive(true);
  req.prepare_payload();

  for (int attempt = 0; attempt < 2; ++attempt) {
    // One deadline for the whole exchange: connecting, sending, reading.
    auto deadline = std::chrono::steady_clock::now() + impl_->timeout;
    bool reused = impl_->stream.has_value();
    if (!reused) RETURN_IF_ERROR(impl_->Connect(deadline));
    beast::error_code ec =
        impl_->Step(deadline, [&](auto handler) { http::async_write(*impl_->stream, req, std::move(handler)); });
    http::response_parser<http::string_body> parser;
    parser.body_limit(256 * 1024 * 1024);
    // A server may answer before reading the whole request (413) and stop
    // reading: the write then fails, but the answer is there to read.
    if (!ec || ec == net::error::broken_pipe || ec == net::error::connection_reset) {
      ec = impl_->Step(deadline, [&](auto handler) {
        http::async_read(*impl_->stream, impl_->buffer, parser, std::move(handler));
      });
    }
    if (ec) {
      impl_->stream.reset();
      impl_->buffer.clear();
      // A kept-alive connection the server already closed: try once more.
      if (reused && (ec == http::error::end_of_stream || ec == net::error::connection_reset ||
                     ec == net::error::broken_pipe || ec == net::error::eof)) {
        continue;
      }
      if (ec == net::error::timed_out) {
        return Status(Code::kDeadlineExceeded, impl_->host + ":" + std::to_string(impl_->port) + " did not answer within " +
                                                   std::to_string(impl_->timeout.count()) + " ms");
      }
      return Unavailable("connection to the server failed: " + ec.message());
    }
    auto& res = parser.get();
    HttpResult out;
    out.status = static_cast<int>(res.result_int());
    out.body = std::move(res.body());
    for (const auto& f : res.base()) {
      std::string name(f.name_string());
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      out.headers[name] = std::string(f.value());
    }
    if (!res.keep_alive()) impl_->stream.reset();
    return out;
  }
  return Unavailable("connection to the server failed");
}

}  // namespace causeway::net
