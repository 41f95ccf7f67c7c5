// The HTTP/1.1 server: keep-alive connections, a request body limit, a
// deadline on every phase of reading a request, and a cap on open
// connections derived from the open-file limit. Beast and Asio stay inside
// http_server.cc.
//
// Reading a request: a new connection must deliver its headers within
// `header_timeout`; a kept-alive one may wait `idle_timeout` for the next
// request's first byte, and then has `header_timeout` for the headers; the
// whole request, body included, must arrive within `read_timeout` of its
// first byte. A Transfer-Encoding other than exactly "chunked", or one
// beside a Content-Length, is answered 400 and the connection closed (RFC
// 9112 section 6.1), so a proxy in front cannot be desynchronized; so are
// obsolete line folding (section 5.2) and a second Authorization or Host
// field (which one counted would depend on who reads it).
//
// A request with a body is admitted from its headers first (AdmitHead:
// authentication), so a caller without a credential is refused before it
// can hold a connection by sending a body slowly.
//
// Connections: at most `max_connections`, and never more than the soft
// open-file limit less `reserved_fds` (for the database, logs and outbound
// calls). A connection over the cap first makes room by closing the oldest
// one that is not handling a request (idle, or still sending headers); if
// none is, it closes the connection receiving a request body at the lowest
// rate (bytes a second since its headers), so slow senders cannot hold
// every connection for the whole read timeout; if every connection is
// handling a request, the new one is closed at once. Both are counted
// (ConnectionStats) and logged at most once a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "api/http_types.h"
#include "causeway/status.h"

namespace causeway::api {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0 picks a free port
  int threads = 2;
  size_t body_limit = 1 << 20;  // bytes; larger requests get 413
  std::chrono::seconds header_timeout{10};  // to receive a request's headers
  std::chrono::seconds read_timeout{30};    // to receive one whole request
  std::chrono::seconds idle_timeout{60};    // for the next request on a kept-alive connection
  std::chrono::seconds write_timeout{30};
  size_t max_connections = 4096;
  size_t reserved_fds = 64;
};

// Called for each complete request, on a server thread. It must call the
// Reply exactly once, from any thread.
using Dispatch = std::function<void(HttpRequest&, Reply)>;
// Called on a server thread once a request's headers are in and before its
// body is read (method, path, query and headers set; body empty): the
// response refusing it, or nullopt to read the body and dispatch. It may
// set fields of the request (such as its principal) that Dispatch then sees.
using AdmitHead = std::function<std::optional<HttpResponse>(HttpRequest&)>;

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, Dispatch dispatch, AdmitHead admit = {});
  ~HttpServer();

  // Binds and starts serving. Returns the bound port.
  Result<uint16_t> Start();
  // Stops accepting, closes connections and joins the threads. Idempotent.
  void Stop();

  size_t active_connections() const;
  ConnectionStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Raises the soft open-file limit to the hard limit (a server holds one
// descriptor per connection; systemd's default soft limit is 1,024).
// Returns the soft limit in force afterwards.
size_t RaiseOpenFileLimit();

}  // namespace causeway::api
