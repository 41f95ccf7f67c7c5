#include "api/http_server.h"

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <thread>
#include <vector>

namespace causeway::api {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

std::string ErrorBody(std::string_view code, std::string_view message) {
  // Built by hand: this file stays free of the JSON library, and both strings
  // are fixed text without characters that need escaping.
  return std::string("{\"error\":{\"code\":\"") + std::string(code) + "\",\"message\":\"" +
         std::string(message) + "\",\"details\":{}}}";
}

struct Shared {
  HttpServerOptions options;
  Dispatch dispatch;
  std::atomic<size_t> active{0};
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<Shared> shared, bool over_limit)
      : stream_(std::move(socket)), shared_(std::move(shared)), over_limit_(over_limit) {
    shared_->active.fetch_add(1);
  }
  ~Session() { shared_->active.fetch_sub(1); }

  void Start() {
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&Session::Read, shared_from_this()));
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->body_limit(shared_->options.body_limit);
    parser_->header_limit(64 * 1024);
    stream_.expires_after(first_request_ ? shared_->options.read_timeout : shared_->options.idle_timeout);
    http::async_read(stream_, buffer_, *parser_, beast::bind_front_handler(&Session::OnRead, shared_from_this()));
  }

  void OnRead(beast::error_code ec, std::size_t) {
    first_request_ = false;
    if (ec == http::error::end_of_stream || ec == net::error::operation_aborted || ec == beast::error::timeout ||
        ec == net::error::connection_reset || ec == net::error::eof) {
      return Close();
    }
    if (ec == http::error::body_limit) {
      return WriteError(413, "payload_too_large",
                        "request body is larger than the limit of " + std::to_string(shared_->options.body_limit) + " bytes");
    }
    if (ec) return WriteError(400, "invalid_argument", "malformed HTTP request");
    if (over_limit_) return WriteError(503, "unavailable", "the server has too many open connections; retry shortly");

    auto& msg = parser_->get();
    keep_alive_ = msg.keep_alive();
    HttpRequest req;
    req.method = std::string(msg.method_string());
    std::string_view target = msg.target();
    auto q = target.find('?');
    req.path = std::string(target.substr(0, q));
    if (q != std::string_view::npos) req.query = ParseQuery(target.substr(q + 1));
    for (const auto& field : msg.base()) {
      std::string name(field.name_string());
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      req.headers[name] = std::string(field.value());
    }
    req.body = std::move(msg.body());
    stream_.expires_never();  // the handler may wait on a commit; the write has its own timeout

    auto self = shared_from_this();
    auto replied = std::make_shared<std::atomic<bool>>(false);
    shared_->dispatch(req, [self, replied](HttpResponse response) {
      if (replied->exchange(true)) return;  // a second reply is a bug; ignore it
      net::post(self->stream_.get_executor(),
                [self, response = std::move(response)]() mutable { self->Write(std::move(response)); });
    });
  }

  // Answers a request that could not be read whole, then closes. Input may
  // still be arriving, so the close lingers (see Linger).
  void WriteError(int status, std::string_view code, std::string message) {
    keep_alive_ = false;
    linger_ = true;
    HttpResponse r;
    r.status = status;
    r.body = ErrorBody(code, message);
    Write(std::move(r));
  }

  void Write(HttpResponse r) {
    auto res = std::make_shared<http::response<http::string_body>>(static_cast<http::status>(r.status), 11);
    res->set(http::field::server, "causeway");
    res->set(http::field::content_type, r.content_type);
    for (auto& [k, v] : r.headers) res->set(k, v);
    res->keep_alive(keep_alive_);
    res->body() = std::move(r.body);
    res->prepare_payload();
    stream_.expires_after(shared_->options.write_timeout);
    http::async_write(stream_, *res,
                      [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
                        if (!ec && self->linger_) return self->Linger();
                        if (ec || !self->keep_alive_) return self->Close();
                        self->Read();
                      });
  }

  // Closing a socket with unread input makes the kernel send a reset, which
  // can destroy the response before the client reads it. So: stop sending,
  // discard input until the client closes or 2 s pass, then close.
  void Linger() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.expires_after(std::chrono::seconds(2));
    buffer_.consume(buffer_.size());
    stream_.async_read_some(buffer_.prepare(64 * 1024), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) return self->Close();
      self->Linger();
    });
  }

  void Close() {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    stream_.socket().close(ec);
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<Shared> shared_;
  bool over_limit_;
  bool keep_alive_ = true;
  bool linger_ = false;
  bool first_request_ = true;
};

}  // namespace

struct HttpServer::Impl {
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  net::io_context ioc;
  std::optional<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;
  std::atomic<bool> stopped{false};

  void Accept() {
    acceptor->async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor->is_open()) return;
      if (!ec) {
        socket.set_option(tcp::no_delay(true), ec);
        bool over = shared->active.load() >= shared->options.max_connections;
        std::make_shared<Session>(std::move(socket), shared, over)->Start();
      }
      Accept();
    });
  }
};

HttpServer::HttpServer(HttpServerOptions options, Dispatch dispatch) : impl_(std::make_unique<Impl>()) {
  impl_->shared->options = std::move(options);
  impl_->shared->dispatch = std::move(dispatch);
}

HttpServer::~HttpServer() { Stop(); }

Result<uint16_t> HttpServer::Start() {
  const auto& o = impl_->shared->options;
  beast::error_code ec;
  auto address = net::ip::make_address(o.host, ec);
  if (ec) return InvalidArgument("invalid listen address \"" + o.host + "\": expected an IP address such as 127.0.0.1");
  tcp::endpoint endpoint(address, o.port);
  auto& acc = impl_->acceptor.emplace(impl_->ioc);
  acc.open(endpoint.protocol(), ec);
  if (!ec) acc.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acc.bind(endpoint, ec);
  if (!ec) acc.listen(net::socket_base::max_listen_connections, ec);
  if (ec) {
    return Unavailable("cannot listen on " + o.host + ":" + std::to_string(o.port) + ": " + ec.message());
  }
  uint16_t port = acc.local_endpoint().port();
  impl_->Accept();
  for (int i = 0; i < std::max(1, o.threads); ++i) {
    impl_->threads.emplace_back([this] { impl_->ioc.run(); });
  }
  return port;
}

void HttpServer::Stop() {
  if (impl_->stopped.exchange(true)) return;
  if (impl_->acceptor) {
    net::post(impl_->ioc, [this] {
      beast::error_code ec;
      impl_->acceptor->close(ec);
    });
  }
  impl_->ioc.stop();
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
}

size_t HttpServer::active_connections() const { return impl_->shared->active.load(); }

}  // namespace causeway::api
