#include "net/fetch.h"
#include "net/request.h"
#include "net/tls.h"
#include "net/deadline.h"

#include <charconv>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

namespace causeway::net {

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

struct Url {
  bool tls = false;
  std::string host;
  std::string port;
  std::string target;
};

Result<Url> ParseUrl(std::string_view url) {
  Url u;
  std::string_view rest = url;
  if (rest.rfind("https://", 0) == 0) {
    u.tls = true;
    rest.remove_prefix(8);
  } else if (rest.rfind("http://", 0) == 0) {
    rest.remove_prefix(7);
  } else {
    return InvalidArgument("\"" + std::string(url) + "\" is not an http:// or https:// URL");
  }
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  u.target = slash == std::string_view::npos ? "/" : std::string(rest.substr(slash));
  size_t colon = authority.rfind(':');
  if (colon != std::string_view::npos && authority.find(']', colon) == std::string_view::npos) {
    u.host = std::string(authority.substr(0, colon));
    u.port = std::string(authority.substr(colon + 1));
    int port = 0;
    auto [ptr, ec] = std::from_chars(u.port.data(), u.port.data() + u.port.size(), port);
    if (ec != std::errc() || ptr != u.port.data() + u.port.size() || port <= 0 || port > 65535) {
      return InvalidArgument("\"" + std::string(url) + "\" has an invalid port");
    }
  } else {
    u.host = std::string(authority);
    u.port = u.tls ? "443" : "80";
  }
  if (u.host.empty()) return InvalidArgument("\"" + std::string(url) + "\" names no host");
  return u;
}

// What is sent: a GET, or a POST of a body.
struct Outgoing {
  http::verb verb = http::verb::get;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
  const std::atomic<bool>* abandon = nullptr;  // ApiRequest::abandon
};

using Deadline = std::chrono::steady_clock::time_point;

// Runs one step on `stream` within `deadline`; on the deadline the
// connection is closed and the step ends with asio::error::timed_out.
// With `abandon` (ApiRequest::abandon), the step also ends when it turns
// true, with asio::error::operation_aborted.
template <typename Stream, typename Start>
beast::error_code Step(asio::io_context& ioc, Stream& stream, Deadline deadline, Start&& start,
                       const std::atomic<bool>* abandon = nullptr) {
  return RunUntil(ioc, deadline, [&stream] { beast::get_lowest_layer(stream).close(); }, std::forward<Start>(start),
                  abandon);
}

Status TimedOut(const Url& u, std::chrono::milliseconds timeout) {
  return Status(Code::kDeadlineExceeded,
                "no answer from " + u.host + ":" + u.port + " within " + std::to_string(timeout.count()) + " ms");
}

template <typename Stream>
Result<HttpResult> Exchange(asio::io_context& ioc, Stream& stream, const Url& u, size_t max_bytes, const Outgoing& sent,
                            Deadline deadline, std::chrono::milliseconds timeout) {
  http::request<http::string_body> req{sent.verb, u.target, 11};
  req.set(http::field::host, u.host);
  req.set(http::field::accept, "application/json");
  req.set(http::field::user_agent, "causeway");
  for (const auto& [name, value] : sent.headers) req.set(name, value);
  if (sent.verb == http::verb::post || !sent.body.empty()) {
    req.set(http::field::content_type, sent.content_type);
    req.body() = sent.body;
    req.prepare_payload();
  }
  beast::error_code ec = Step(ioc, stream, deadline, [&](auto h) { http::async_write(stream, req, std::move(h)); }, sent.abandon);
  if (ec == asio::error::timed_out) return TimedOut(u, timeout);
  if (ec) return Unavailable("sending to " + u.host + " failed: " + ec.message());
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(max_bytes);
  ec = Step(ioc, stream, deadline, [&](auto h) { http::async_read(stream, buffer, parser, std::move(h)); }, sent.abandon);
  if (ec == http::error::body_limit) return ResourceExhausted("the answer from " + u.host + " is larger than allowed");
  if (ec == asio::error::timed_out) return TimedOut(u, timeout);
  if (ec) return Unavailable("reading from " + u.host + " failed: " + ec.message());
  HttpResult out;
  out.status = static_cast<int>(parser.get().result_int());
  out.body = std::move(parser.get().body());
  for (const auto& f : parser.get()) {
    std::string name(f.name_string());
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    out.headers[name] = std::string(f.value());
  }
  return out;
}

// A connected stream: plain TCP or TLS, ready for a request.
template <typename Fn>
auto Connected(std::string_view url, std::chrono::milliseconds timeout, const TlsTrust& trust, Fn&& use,
               const std::atomic<bool>* abandon = nullptr)
    -> decltype(use(std::declval<asio::io_context&>(), std::declval<beast::tcp_stream&>(), std::declval<const Url&>(),
                    Deadline{})) {
  ASSIGN_OR_RETURN(Url u, ParseUrl(url));
  asio::io_context ioc;
  beast::error_code ec;
  tcp::resolver resolver(ioc);
  auto endpoints = resolver.resolve(u.host, u.port, ec);
  if (ec) return Unavailable("cannot resolve " + u.host + ": " + ec.message());
  // One deadline for the whole call: connecting, TLS, sending, reading.
  Deadline deadline = std::chrono::steady_clock::now() + timeout;
  if (!u.tls) {
    beast::tcp_stream stream(ioc);
    ec = Step(ioc, stream, deadline, [&](auto h) { stream.async_connect(endpoints, std::move(h)); }, abandon);
    if (ec == asio::error::timed_out) return TimedOut(u, timeout);
    if (ec) return Unavailable("cannot reach " + u.host + ":" + u.port + ": " + ec.message());
    return use(ioc, stream, u, deadline);
  }
  ssl::context ctx(ssl::context::tls_client);
  RETURN_IF_ERROR(ConfigureTlsClient(ctx, trust.ca_file));
  if (!trust.cert_file.empty() && !trust.key_file.empty()) {
    ctx.use_certificate_chain_file(trust.cert_file, ec);
    if (!ec) ctx.use_private_key_file(trust.key_file, ssl::context::pem, ec);
    if (ec) return InvalidArgument("cannot read the client certificate " + trust.cert_file + ": " + ec.message());
  }
  beast::ssl_stream<beast::tcp_stream> stream(ioc, ctx);
  RETURN_IF_ERROR(ExpectServerName(stream, u.host));
  ec = Step(ioc, stream, deadline,
            [&](auto h) { beast::get_lowest_layer(stream).async_connect(endpoints, std::move(h)); }, abandon);
  if (ec == asio::error::timed_out) return TimedOut(u, timeout);
  if (ec) return Unavailable("cannot reach " + u.host + ":" + u.port + ": " + ec.message());
  ec = Step(ioc, stream, deadline, [&](auto h) { stream.async_handshake(ssl::stream_base::client, std::move(h)); }, abandon);
  if (ec == asio::error::timed_out) return TimedOut(u, timeout);
  if (ec) return Unavailable("TLS with " + u.host + " failed: " + ec.message());
  return use(ioc, stream, u, deadline);
}

Result<HttpResult> Send(std::string_view url, std::chrono::milliseconds timeout, size_t max_bytes, const Outgoing& out,
                        const TlsTrust& trust = {}) {
  return Connected(
      url, timeout, trust,
      [&](asio::io_context& ioc, auto& stream, const Url& u, Deadline deadline) {
        return Exchange(ioc, stream, u, max_bytes, out, deadline, timeout);
      },
      out.abandon);
}

}  // namespace

Result<HttpResult> Fetch(std::string_view url, std::chrono::milliseconds timeout, size_t max_bytes) {
  return Send(url, timeout, max_bytes, Outgoing{});
}

Result<HttpResult> Post(std::string_view url, const std::string& body, const std::string& content_type,
                        const std::vector<std::pair<std::string, std::string>>& headers,
                        std::chrono::milliseconds timeout) {
  return Send(url, timeout, 1 << 20, Outgoing{http::verb::post, body, content_type, headers});
}

Result<HttpResult> SendApi(const ApiRequest& r, const TlsTrust& trust) {
  Outgoing out{http::string_to_verb(r.method), r.body, r.content_type, r.headers, r.abandon};
  if (out.verb == http::verb::unknown) return InvalidArgument("unknown HTTP method " + r.method);
  return Send(r.url, r.timeout, r.max_bytes, out, trust);
}

Status StreamApi(const ApiRequest& r, const TlsTrust& trust, int* status, std::string* error_body,
                 const std::function<bool(std::string_view)>& on_data) {
  http::verb verb = http::string_to_verb(r.method);
  if (verb == http::verb::unknown) return InvalidArgument("unknown HTTP method " + r.method);
  return Connected(r.url, r.timeout, trust, [&](asio::io_context& ioc, auto& stream, const Url& u,
                                                Deadline deadline) -> Status {
    http::request<http::string_body> req{verb, u.target, 11};
    req.set(http::field::host, u.host);
    req.set(http::field::accept, "application/json");
    req.set(http::field::user_agent, "causeway");
    for (const auto& [name, value] : r.headers) req.set(name, value);
    if (!r.body.empty()) {
      req.set(http::field::content_type, r.content_type);
      req.body() = r.body;
      req.prepare_payload();
    }
    beast::error_code ec = Step(ioc, stream, deadline, [&](auto h) { http::async_write(stream, req, std::move(h)); }, r.abandon);
    if (ec == asio::error::timed_out) return TimedOut(u, r.timeout);
    if (ec) return Unavailable("sending to " + u.host + " failed: " + ec.message());
    beast::flat_buffer buffer;
    http::response_parser<http::string_body> parser;
    parser.body_limit(boost::none);  // the stream is read piece by piece, nothing kept
    ec = Step(ioc, stream, deadline, [&](auto h) { http::async_read_header(stream, buffer, parser, std::move(h)); }, r.abandon);
    if (ec == asio::error::timed_out) return TimedOut(u, r.timeout);
    if (ec) return Unavailable("reading from " + u.host + " failed: " + ec.message());
    *status = static_cast<int>(parser.get().result_int());
    if (*status != 200) {
      parser.body_limit(r.max_bytes);
      ec = Step(ioc, stream, deadline, [&](auto h) { http::async_read(stream, buffer, parser, std::move(h)); }, r.abandon);
      if (ec == asio::error::timed_out) return TimedOut(u, r.timeout);
      if (ec) return Unavailable("reading from " + u.host + " failed: " + ec.message());
      *error_body = std::move(parser.get().body());
      return Status::Ok();
    }
    // Each piece goes to on_data as it is parsed and is not kept.
    bool stopped = false;
    auto take = [&](std::uint64_t, std::string_view body, beast::error_code&) -> std::size_t {
      if (!stopped && !on_data(body)) stopped = true;
      return body.size();
    };
    parser.on_chunk_body(take);
    while (!parser.is_done() && !stopped) {
      ec = Step(ioc, stream, deadline, [&](auto h) { http::async_read_some(stream, buffer, parser, std::move(h)); }, r.abandon);
      if (ec == asio::error::timed_out) return TimedOut(u, r.timeout);
      if (ec == http::error::end_of_stream || ec == asio::error::eof) break;
      if (ec) return Unavailable("reading from " + u.host + " failed: " + ec.message());
      if (!parser.chunked()) {  // a plain body: hand over what was read so far
        std::string& got = parser.get().body();
        if (!got.empty() && !stopped && !on_data(got)) stopped = true;
        got.clear();
      }
    }
    return Status::Ok();
  }, r.abandon);
}

namespace {

class NetworkFetcher final : public Fetcher {
 public:
  Result<HttpResult> Send(const OutboundRequest& r) override {
    if (r.method == OutboundRequest::Method::kGet) return Fetch(r.url, r.timeout, r.max_bytes);
    return Post(r.url, r.body, r.content_type, r.headers, r.timeout);
  }
};

}  // namespace

Fetcher& Network() {
  static NetworkFetcher* network = new NetworkFetcher();  // never destroyed: used until exit
  return *network;
}

}  // namespace causeway::net
