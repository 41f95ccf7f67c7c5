#include "api/http_server.h"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <list>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "causeway/mutex.h"
#include "causeway/text.h"

namespace causeway::api {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;

// The same shape as every other error answer (api_helpers.cc ErrorResponse).
// What the transport refuses (a malformed request, a body or headers over
// the limit) is not worth sending again unchanged: never retryable.
std::string ErrorBody(std::string_view code, std::string_view message) {
  // Built by hand: this file stays free of the JSON library, and both strings
  // are fixed text without characters that need escaping.
  return std::string("{\"error\":{\"code\":\"") + std::string(code) + "\",\"message\":\"" +
         std::string(message) + "\",\"details\":{\"retryable\":false}}}";
}

class Session;

constexpr size_t kHeaderLimit = 64 * 1024;

struct Shared {
  HttpServerOptions options;
  Dispatch dispatch;
  AdmitHead admit;
  size_t cap = 0;
  std::atomic<size_t> active{0};
  std::atomic<uint64_t> refused{0}, evicted{0}, timed_out{0}, accept_errors{0};

  // Sessions that may be closed to make room: waiting for a request or still
  // reading its headers. Oldest first.
  Mutex mu;
  std::list<std::weak_ptr<Session>> waiting GUARDED_BY(mu);
  // Sessions receiving a request body: closed, slowest first, to make room
  // when none is waiting.
  std::list<std::weak_ptr<Session>> reading GUARDED_BY(mu);

  // Logs `message` unless something was logged less than a second ago:
  // a flood must not become a flood of log lines.
  void LogRateLimited(const std::string& message) {
    int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count();
    int64_t last = last_log_ms.load();
    if (now - last < 1000 || !last_log_ms.compare_exchange_strong(last, now)) return;
    spdlog::warn("http: {} (connections open {}, cap {}, refused {}, evicted {}, timed out {}, accept errors {})",
                 message, active.load(), cap, refused.load(), evicted.load(), timed_out.load(), accept_errors.load());
  }
  std::atomic<int64_t> last_log_ms{0};
};

bool TransferEncodingAccepted(const http::request_parser<http::string_body>::value_type& msg) {
  std::vector<std::string_view> te;
  for (auto [it, end] = msg.equal_range(http::field::transfer_encoding); it != end; ++it) {
    te.emplace_back(it->value().data(), it->value().size());
  }
  return FramingAccepted(te, msg.find(http::field::content_length) != msg.end());
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<Shared> shared)
      : stream_(std::move(socket)), shared_(std::move(shared)) {
    shared_->active.fetch_add(1);
  }
  ~Session() {
    MutexLock lock(shared_->mu);
    if (waiting_) shared_->waiting.erase(*waiting_);
    if (reading_) shared_->reading.erase(*reading_);
    shared_->active.fetch_sub(1);
  }

  void Start() {
    net::dispatch(stream_.get_executor(), beast::bind_front_handler(&Session::NextRequest, shared_from_this()));
  }

  // Closes the connection unless it is handling a request. Called from any
  // thread after the session was taken off the waiting list.
  static void Evict(std::shared_ptr<Session> s) {
    auto ex = s->stream_.get_executor();
    net::post(ex, [s = std::move(s)] {
      if (!s->busy_) s->Close();
    });
  }

  // Closes the connection if it is still receiving a request body. Called
  // from any thread after the session was taken off the reading list.
  static void Shed(std::shared_ptr<Session> s) {
    auto ex = s->stream_.get_executor();
    net::post(ex, [s = std::move(s)] {
      if (s->reading_body_) s->Close();
    });
  }

  // Takes the session receiving its body at the lowest rate off the list,
  // if there is one.
  static std::shared_ptr<Session> TakeSlowestReader(Shared& shared) NO_THREAD_SAFETY_ANALYSIS {
    MutexLock lock(shared.mu);
    auto now = std::chrono::steady_clock::now().time_since_epoch().count();
    std::shared_ptr<Session> slowest;
    double lowest = 0;
    auto pick = shared.reading.end();
    for (auto it = shared.reading.begin(); it != shared.reading.end();) {
      std::shared_ptr<Session> s = it->lock();
      if (!s) {
        it = shared.reading.erase(it);
        continue;
      }
      double seconds = std::max(1e-3, static_cast<double>(now - s->body_since_.load()) / 1e9);
      double rate = static_cast<double>(s->body_bytes_.load()) / seconds;
      if (!slowest || rate < lowest) {
        slowest = s;
        lowest = rate;
        pick = it;
      }
      ++it;
    }
    if (slowest) {
      shared.reading.erase(pick);
      slowest->reading_.reset();
    }
    return slowest;
  }

  // Takes the oldest waiting session off the list, if there is one.
  // (The analysis cannot tell that s->shared_ is `shared`, whose mutex is held.)
  static std::shared_ptr<Session> TakeOldestWaiting(Shared& shared) NO_THREAD_SAFETY_ANALYSIS {
    MutexLock lock(shared.mu);
    while (!shared.waiting.empty()) {
      std::shared_ptr<Session> s = shared.waiting.front().lock();
      shared.waiting.pop_front();
      if (s) {
        s->waiting_.reset();
        return s;
      }
    }
    return nullptr;
  }

 private:
  void MarkWaiting() {
    busy_ = false;
    MutexLock lock(shared_->mu);
    if (!waiting_) waiting_ = shared_->waiting.insert(shared_->waiting.end(), weak_from_this());
  }
  void MarkBusy() {
    busy_ = true;
    MutexLock lock(shared_->mu);
    if (waiting_) shared_->waiting.erase(*waiting_);
    waiting_.reset();
  }
  // Receiving a body: may be shed, slowest first, when the cap is reached.
  void MarkReading() {
    reading_body_ = true;
    body_bytes_.store(0);
    body_since_.store(std::chrono::steady_clock::now().time_since_epoch().count());
    MutexLock lock(shared_->mu);
    if (!reading_) reading_ = shared_->reading.insert(shared_->reading.end(), weak_from_this());
  }
  void MarkRead() {
    reading_body_ = false;
    MutexLock lock(shared_->mu);
    if (reading_) shared_->reading.erase(*reading_);
    reading_.reset();
  }

  // A new connection goes straight to its headers; a kept-alive one first
  // waits, idle, for the next request's first byte.
  void NextRequest() {
    parser_.emplace();
    parser_->body_limit(shared_->options.body_limit);
    parser_->header_limit(kHeaderLimit);
    MarkWaiting();
    if (first_request_ || buffer_.size() > 0) return ReadHeader();
    stream_.expires_after(shared_->options.idle_timeout);
    stream_.async_read_some(buffer_.prepare(16 * 1024),
                            [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                              self->buffer_.commit(n);
                              if (ec) return self->Failed(ec);
                              self->ReadHeader();
                            });
  }

  // Headers are read up to their blank line before Beast parses them, so
  // the raw lines can be checked for what Beast accepts and this server
  // refuses (obsolete line folding).
  void ReadHeader() {
    started_ = std::chrono::steady_clock::now();
    stream_.expires_after(shared_->options.header_timeout);
    ScanHeader();
  }

  void ScanHeader() {
    std::string_view in(static_cast<const char*>(buffer_.data().data()), buffer_.size());
    size_t lead = 0;  // empty lines before a request line are ignored (RFC 9112 section 2.2)
    while (in.substr(lead, 2) == "\r\n") lead += 2;
    if (lead > 0) {
      buffer_.consume(lead);
      return ScanHeader();
    }
    size_t end = in.find("\r\n\r\n");
    if (end == std::string_view::npos) {
      if (in.size() >= kHeaderLimit) {
        return WriteError(431, "invalid_argument", "request headers are larger than the limit of 65536 bytes");
      }
      return stream_.async_read_some(buffer_.prepare(16 * 1024),
                                     [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                                       self->buffer_.commit(n);
                                       if (ec) return self->Failed(ec);
                                       self->ScanHeader();
                                     });
    }
    if (FoldsHeaderLines(in.substr(0, end + 2))) {
      first_request_ = false;
      return WriteError(400, "invalid_argument",
                        "obsolete line folding in the request headers: send each field on one line (RFC 9112 section 5.2)");
    }
    beast::error_code ec;
    size_t used = parser_->put(net::buffer(in.data(), end + 4), ec);
    buffer_.consume(used);
    if (!ec && !parser_->is_header_done()) ec = http::error::partial_message;
    OnHeader(ec, used);
  }

  void OnHeader(beast::error_code ec, std::size_t) {
    first_request_ = false;
    if (ec) return Failed(ec);
    MarkBusy();
    auto& msg = parser_->get();
    if (!TransferEncodingAccepted(msg)) {
      return WriteError(400, "invalid_argument",
                        "unsupported Transfer-Encoding: only \\\"chunked\\\" alone, without Content-Length, is accepted");
    }
    for (http::field once : {http::field::authorization, http::field::host}) {
      if (msg.count(once) > 1) {
        return WriteError(400, "invalid_argument",
                          std::string("more than one ") + std::string(http::to_string(once)) + " header: send one");
      }
    }
    req_ = HttpRequest{};
    req_.method = std::string(msg.method_string());
    std::string_view target = msg.target();
    auto q = target.find('?');
    req_.path = std::string(target.substr(0, q));
    if (q != std::string_view::npos) req_.query = ParseQuery(target.substr(q + 1));
    for (const auto& field : msg.base()) {
      req_.headers[AsciiLower(std::string_view(field.name_string().data(), field.name_string().size()))] =
          std::string(field.value());
    }
    if (parser_->is_done()) return Handle();
    // A body is coming: the caller must be admitted first.
    if (shared_->admit) {
      if (std::optional<HttpResponse> refused = shared_->admit(req_)) return WriteRefusal(std::move(*refused));
    }
    MarkReading();
    stream_.expires_at(started_ + shared_->options.read_timeout);
    ReadBody();
  }

  void ReadBody() {
    http::async_read_some(stream_, buffer_, *parser_,
                          [self = shared_from_this()](beast::error_code ec, std::size_t n) {
                            self->body_bytes_.fetch_add(n);
                            if (ec) {
                              self->MarkRead();
                              return self->Failed(ec);
                            }
                            if (!self->parser_->is_done()) return self->ReadBody();
                            self->MarkRead();
                            self->Handle();
                          });
  }

  // A read that ended without a request: the peer left, was too slow, or
  // sent something that is not HTTP.
  void Failed(beast::error_code ec) {
    if (ec == beast::error::timeout) {
      shared_->timed_out.fetch_add(1);
      shared_->LogRateLimited("closed a connection that was too slow or idle too long");
      return Close();
    }
    if (ec == http::error::end_of_stream || ec == net::error::operation_aborted || ec == net::error::connection_reset ||
        ec == net::error::eof || ec == net::error::bad_descriptor) {
      return Close();
    }
    if (ec == http::error::body_limit) {
      return WriteError(413, "payload_too_large",
                        "request body is larger than the limit of " + std::to_string(shared_->options.body_limit) + " bytes");
    }
    if (ec == http::error::header_limit) {
      return WriteError(431, "invalid_argument", "request headers are larger than the limit of 65536 bytes");
    }
    WriteError(400, "invalid_argument", "malformed HTTP request");
  }

  void Handle() {
    auto& msg = parser_->get();
    keep_alive_ = msg.keep_alive();
    HttpRequest req = std::move(req_);
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
    HttpResponse r;
    r.status = status;
    r.body = ErrorBody(code, message);
    WriteRefusal(std::move(r));
  }
  void WriteRefusal(HttpResponse r) {
    MarkBusy();
    keep_alive_ = false;
    linger_ = true;
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
    http::async_write(stream_, *res, [self = shared_from_this(), res](beast::error_code ec, std::size_t) {
      if (!ec && self->linger_) return self->Linger();
      if (ec || !self->keep_alive_) return self->Close();
      self->NextRequest();
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
  std::optional<std::list<std::weak_ptr<Session>>::iterator> waiting_ GUARDED_BY(shared_->mu);
  std::optional<std::list<std::weak_ptr<Session>>::iterator> reading_ GUARDED_BY(shared_->mu);
  HttpRequest req_;  // the current request, from its headers on
  bool reading_body_ = false;
  // For choosing whom to shed, read from other threads.
  std::atomic<uint64_t> body_bytes_{0};
  std::atomic<int64_t> body_since_{0};  // steady clock ticks
  std::chrono::steady_clock::time_point started_;  // the current request's first byte
  bool busy_ = false;
  bool keep_alive_ = true;
  bool linger_ = false;
  bool first_request_ = true;
};

}  // namespace

size_t RaiseOpenFileLimit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) != 0) return 1024;
  if (r.rlim_cur < r.rlim_max) {
    rlimit raised = r;
    raised.rlim_cur = r.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) r = raised;
  }
  return r.rlim_cur == RLIM_INFINITY ? SIZE_MAX : static_cast<size_t>(r.rlim_cur);
}

struct HttpServer::Impl {
  std::shared_ptr<Shared> shared = std::make_shared<Shared>();
  net::io_context ioc;
  std::optional<tcp::acceptor> acceptor;
  std::optional<net::steady_timer> retry;
  std::vector<std::thread> threads;
  std::atomic<bool> stopped{false};

  void Accept() {
    acceptor->async_accept(net::make_strand(ioc), [this](beast::error_code ec, tcp::socket socket) {
      if (ec == net::error::operation_aborted || !acceptor->is_open()) return;
      if (ec) {
        // Out of descriptors (EMFILE/ENFILE) or a transient failure: try
        // again shortly instead of spinning on the same error.
        shared->accept_errors.fetch_add(1);
        shared->LogRateLimited("accepting a connection failed: " + ec.message());
        retry->expires_after(std::chrono::milliseconds(50));
        retry->async_wait([this](beast::error_code e) {
          if (!e && acceptor->is_open()) Accept();
        });
        return;
      }
      Admit(std::move(socket));
      Accept();
    });
  }

  void Admit(tcp::socket socket) {
    beast::error_code ec;
    if (shared->active.load() >= shared->cap) {
      if (auto victim = Session::TakeOldestWaiting(*shared)) {
        shared->evicted.fetch_add(1);
        shared->LogRateLimited("at the connection cap: closed the oldest idle connection");
        Session::Evict(std::move(victim));
      } else if (auto slow = Session::TakeSlowestReader(*shared)) {
        shared->evicted.fetch_add(1);
        shared->LogRateLimited("at the connection cap: closed the connection sending its request body most slowly");
        Session::Shed(std::move(slow));
      } else {
        shared->refused.fetch_add(1);
        shared->LogRateLimited("at the connection cap with every connection busy: refused a connection");
        socket.close(ec);
        return;
      }
    }
    socket.set_option(tcp::no_delay(true), ec);
    std::make_shared<Session>(std::move(socket), shared)->Start();
  }
};

HttpServer::HttpServer(HttpServerOptions options, Dispatch dispatch, AdmitHead admit) : impl_(std::make_unique<Impl>()) {
  impl_->shared->options = std::move(options);
  impl_->shared->dispatch = std::move(dispatch);
  impl_->shared->admit = std::move(admit);
}

HttpServer::~HttpServer() { Stop(); }

Result<uint16_t> HttpServer::Start() {
  const auto& o = impl_->shared->options;
  rlimit r{};
  size_t fds = ::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur != RLIM_INFINITY ? r.rlim_cur : SIZE_MAX;
  size_t usable = fds > o.reserved_fds ? fds - o.reserved_fds : 0;
  impl_->shared->cap = std::max<size_t>(1, std::min(o.max_connections, usable));
  if (impl_->shared->cap < o.max_connections) {
    spdlog::info("http: at most {} connections (open-file limit {}, {} kept for other work)", impl_->shared->cap, fds,
                 o.reserved_fds);
  }
  beast::error_code ec;
  auto address = net::ip::make_address(o.host, ec);
  if (ec) return InvalidArgument("invalid listen address \"" + o.host + "\": expected an IP address such as 127.0.0.1");
  tcp::endpoint endpoint(address, o.port);
  auto& acc = impl_->acceptor.emplace(impl_->ioc);
  impl_->retry.emplace(impl_->ioc);
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
      if (impl_->retry) impl_->retry->cancel();
    });
  }
  impl_->ioc.stop();
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
}

size_t HttpServer::active_connections() const { return impl_->shared->active.load(); }

ConnectionStats HttpServer::stats() const {
  const Shared& s = *impl_->shared;
  return ConnectionStats{s.active.load(), s.cap, s.refused.load(), s.evicted.load(), s.timed_out.load(),
                         s.accept_errors.load()};
}

}  // namespace causeway::api
