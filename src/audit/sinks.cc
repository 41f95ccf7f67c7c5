#include "audit/sinks.h"
#include "causeway/file_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <functional>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <nlohmann/json.hpp>

#include "causeway/clock.h"
#include "net/fetch.h"
#include "net/tls.h"
#include "net/deadline.h"

namespace causeway::audit {

namespace asio = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = asio::ip::tcp;

namespace {


// POSTs each batch as OCSF JSON lines (application/x-ndjson). 2xx: taken;
// 408, 429 and 5xx: try again; any other status: refused.
class HttpSink final : public Sink {
 public:
  explicit HttpSink(SinkOptions o) : o_(std::move(o)) {}
  Status Send(const std::vector<std::string>& events) override {
    std::string body;
    for (const std::string& e : events) body.append(e).append("\n");
    net::OutboundRequest request;
    request.method = net::OutboundRequest::Method::kPost;
    request.url = o_.url;
    request.body = std::move(body);
    request.content_type = "application/x-ndjson";
    if (!o_.bearer_token.empty()) request.headers.emplace_back("Authorization", "Bearer " + o_.bearer_token);
    request.timeout = o_.timeout;
    net::Fetcher& http = o_.http ? *o_.http : net::Network();
    ASSIGN_OR_RETURN(net::HttpResult r, http.Send(request));
    if (r.status >= 200 && r.status < 300) return Status::Ok();
    std::string what = Describe() + " answered " + std::to_string(r.status);
    if (r.status == 408 || r.status == 429 || r.status >= 500) return Unavailable(what);
    if (r.status == 401 || r.status == 403) return PermissionDenied(what + ": check the collector's token");
    return InvalidArgument(what + ": the collector refuses the events");
  }
  std::string Describe() const override { return o_.url; }

 private:
  SinkOptions o_;
};

// Syslog over TCP has no acknowledgement, so each batch is one connection:
// the frames are written, our end is closed, and the batch counts as
// delivered once the receiver closes its end too (it has then read
// everything before our close). A receiver that dies first leaves the
// batch unconfirmed, and it is sent again.
class SyslogSink final : public Sink {
 public:
  SyslogSink(SinkOptions o, bool tls, std::string host, std::string port)
      : o_(std::move(o)), tls_(tls), host_(std::move(host)), port_(std::move(port)), ssl_(ssl::context::tls_client) {
    char name[256] = {};
    hostname_ = ::gethostname(name, sizeof name - 1) == 0 && name[0] ? name : "-";
  }
  Status Send(const std::vector<std::string>& events) override {
    std::string wire;
    for (const std::string& e : events) wire += SyslogFrame(e, hostname_);
    asio::io_context io;
    boost::system::error_code ec;
    tcp::resolver resolver(io);
    auto endpoints = resolver.resolve(host_, port_, ec);
    if (ec) return Unavailable("cannot resolve " + host_ + ": " + ec.message());
    // Connecting, TLS and writing share one deadline; the confirmation
    // has its own wait (kCloseWait).
    auto deadline = std::chrono::steady_clock::now() + o_.timeout;
    auto timed_out = [&] {
      return Status(Code::kDeadlineExceeded, Describe() + " did not take the batch within " +
                                                 std::to_string(o_.timeout.count()) + " ms");
    };
    if (!tls_) {
      tcp::socket socket(io);
      auto close = [&] {
        boost::system::error_code ignored;
        socket.close(ignored);
      };
      ec = net::RunUntil(io, deadline, close, [&](auto h) { asio::async_connect(socket, endpoints, std::move(h)); });
      if (ec == asio::error::timed_out) return timed_out();
      if (ec) return Unavailable("cannot reach " + Describe() + ": " + ec.message());
      ec = net::RunUntil(io, deadline, close, [&](auto h) { asio::async_write(socket, asio::buffer(wire), std::move(h)); });
      if (ec == asio::error::timed_out) return timed_out();
      if (ec) return Unavailable("writing to " + Describe() + " failed: " + ec.message());
      socket.shutdown(tcp::socket::shutdown_send, ec);
      return AwaitClose(io, socket);
    }
    if (!ssl_ready_) {
      RETURN_IF_ERROR(net::ConfigureTlsClient(ssl_, o_.ca_file));
      ssl_ready_ = true;
    }
    ssl::stream<tcp::socket> stream(io, ssl_);
    RETURN_IF_ERROR(net::ExpectServerName(stream, host_));
    auto close = [&] {
      boost::system::error_code ignored;
      stream.lowest_layer().close(ignored);
    };
    ec = net::RunUntil(io, deadline, close,
                       [&](auto h) { asio::async_connect(stream.lowest_layer(), endpoints, std::move(h)); });
    if (ec == asio::error::timed_out) return timed_out();
    if (ec) return Unavailable("cannot reach " + Describe() + ": " + ec.message());
    ec = net::RunUntil(io, deadline, close, [&](auto h) { stream.async_handshake(ssl::stream_base::client, std::move(h)); });
    if (ec == asio::error::timed_out) return timed_out();
    if (ec) return Unavailable("TLS with " + Describe() + " failed: " + ec.message());
    ec = net::RunUntil(io, deadline, close, [&](auto h) { asio::async_write(stream, asio::buffer(wire), std::move(h)); });
    if (ec == asio::error::timed_out) return timed_out();
    if (ec) return Unavailable("writing to " + Describe() + " failed: " + ec.message());
    // close_notify, then the receiver's own close_notify and close.
    bool closed = false;
    stream.async_shutdown([&](const boost::system::error_code&) { closed = true; });
    io.restart();
    io.run_for(kCloseWait);
    if (!closed) return Unavailable(Describe() + " did not confirm the batch (no close within the wait)");
    return AwaitClose(io, stream.next_layer());
  }
  std::string Describe() const override { return o_.url; }

 private:
  static constexpr auto kCloseWait = std::chrono::seconds(10);

  // Reads until the receiver closes (EOF), for at most kCloseWait.
  Status AwaitClose(asio::io_context& io, tcp::socket& socket) {
    io.restart();
    bool eof = false, failed = false;
    std::array<char, 512> sink;
    std::function<void()> read = [&] {
      socket.async_read_some(asio::buffer(sink), [&](const boost::system::error_code& e, size_t) {
        if (e == asio::error::eof) eof = true;
        else if (e) failed = true;
        else read();
      });
    };
    read();
    io.run_for(kCloseWait);
    if (eof) return Status::Ok();
    return Unavailable(Describe() + (failed ? " reset the connection before confirming the batch"
                                            : " did not confirm the batch (no close within the wait)"));
  }

  SinkOptions o_;
  bool tls_;
  std::string host_, port_, hostname_;
  ssl::context ssl_;
  bool ssl_ready_ = false;
};

// Appends to PATH, one event a line, synced before a batch counts as
// delivered; past rotate_bytes, PATH becomes PATH.1 (PATH.1 PATH.2, ...,
// the oldest beyond `keep` removed) and a new PATH starts.
class FileSink final : public Sink {
 public:
  explicit FileSink(SinkOptions o, std::string path) : o_(std::move(o)), path_(std::move(path)) {}
  Status Send(const std::vector<std::string>& events) override {
    std::string data;
    for (const std::string& e : events) data.append(e).append("\n");
    std::error_code ec;
    auto size = std::filesystem::exists(path_, ec) ? std::filesystem::file_size(path_, ec) : 0;
    if (size > 0 && static_cast<int64_t>(size + data.size()) > o_.rotate_bytes) RETURN_IF_ERROR(Rotate());
    if (auto dir = std::filesystem::path(path_).parent_path(); !dir.empty()) std::filesystem::create_directories(dir, ec);
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd < 0) return Unavailable("cannot open " + path_ + ": " + std::strerror(errno));
    if (Status st = WriteAll(fd, data, path_); !st.ok()) {
      ::close(fd);
      return st;
    }
    bool synced = ::fsync(fd) == 0;
    ::close(fd);
    if (!synced) return Unavailable("cannot sync " + path_);
    return Status::Ok();
  }
  std::string Describe() const override { return "file:" + path_; }

 private:
  Status Rotate() {
    std::error_code ec;
    std::filesystem::remove(path_ + "." + std::to_string(o_.keep), ec);
    for (int i = o_.keep - 1; i >= 1; --i) {
      std::string from = path_ + "." + std::to_string(i);
      if (std::filesystem::exists(from, ec)) std::filesystem::rename(from, path_ + "." + std::to_string(i + 1), ec);
    }
    std::filesystem::rename(path_, path_ + ".1", ec);
    if (ec) return Unavailable("cannot rotate " + path_ + ": " + ec.message());
    return Status::Ok();
  }

  SinkOptions o_;
  std::string path_;
};

}  // namespace

std::string SyslogFrame(const std::string& event, const std::string& hostname) {
  // An OCSF event this server wrote; were it unreadable, the frame still goes out, at severity
  // informational.
  nlohmann::json j = nlohmann::json::parse(event, nullptr, false);
  int severity_id = j.is_object() ? j.value("severity_id", 1) : 1;
  // OCSF severity to syslog severity: informational 6, low 5 (notice),
  // medium 4 (warning), high 3 (error), critical 2, fatal 1.
  int severity = severity_id >= 1 && severity_id <= 6 ? 7 - severity_id : 6;
  int64_t ms = j.is_object() ? j.value("time", int64_t{0}) : 0;
  std::string time = ms > 0 ? FormatRfc3339(FromUnixMicros(ms * 1000)) : "-";
  std::string msgid = j.is_object() ? "ocsf-" + std::to_string(j.value("class_uid", 0)) : "-";
  std::string msg = "<" + std::to_string(13 * 8 + severity) + ">1 " + time + " " + hostname + " causeway - " + msgid +
                    " - " + event;
  return std::to_string(msg.size()) + " " + msg;
}

Result<std::unique_ptr<Sink>> OpenSink(const SinkOptions& o) {
  const std::string& url = o.url;
  if (url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0) return std::unique_ptr<Sink>(new HttpSink(o));
  if (url.rfind("file:", 0) == 0) {
    std::string path = url.substr(5);
    if (path.empty()) return InvalidArgument("\"file:\" needs a path, e.g. file:/var/log/causeway/audit.jsonl");
    if (o.rotate_bytes <= 0 || o.keep < 1) return InvalidArgument("file export: rotate size and files kept must be positive");
    return std::unique_ptr<Sink>(new FileSink(o, path));
  }
  for (const char* scheme : {"tcp://", "tls://"}) {
    if (url.rfind(scheme, 0) != 0) continue;
    std::string rest = url.substr(6);
    size_t colon = rest.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == rest.size()) {
      return InvalidArgument("\"" + url + "\": expected " + scheme + "HOST:PORT");
    }
    return std::unique_ptr<Sink>(new SyslogSink(o, scheme[1] == 'l', rest.substr(0, colon), rest.substr(colon + 1)));
  }
  return InvalidArgument("\"" + url + "\": expected http(s)://... (a SIEM's HTTP collector), tcp://HOST:PORT or "
                         "tls://HOST:PORT (syslog), or file:PATH");
}

}  // namespace causeway::audit
