// The HTTP/1.1 server: keep-alive connections, a request body limit, read and
// write timeouts, and a cap on open connections beyond which requests get 503.
// Beast and Asio stay inside http_server.cc.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "api/http_types.h"
#include "causeway/status.h"

namespace causeway::api {

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 0;  // 0 picks a free port
  int threads = 2;
  size_t body_limit = 1 << 20;  // bytes; larger requests get 413
  std::chrono::seconds read_timeout{30};   // to receive one whole request
  std::chrono::seconds idle_timeout{120};  // between requests on a connection
  std::chrono::seconds write_timeout{30};
  size_t max_connections = 4096;
};

// Called for each complete request, on a server thread. It must call the
// Reply exactly once, from any thread.
using Dispatch = std::function<void(HttpRequest&, Reply)>;

class HttpServer {
 public:
  HttpServer(HttpServerOptions options, Dispatch dispatch);
  ~HttpServer();

  // Binds and starts serving. Returns the bound port.
  Result<uint16_t> Start();
  // Stops accepting, closes connections and joins the threads. Idempotent.
  void Stop();

  size_t active_connections() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace causeway::api
