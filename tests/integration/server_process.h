// Runs the real `causeway` binary for integration tests: a server on
// 127.0.0.1:0 with its own data directory, and one-shot CLI commands.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "net/http_client.h"

namespace causeway::testing {

// A fresh directory under the system temp dir, removed by the destructor.
class TempDir {
 public:
  explicit TempDir(const std::string& name);
  ~TempDir();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

class ServerProcess {
 public:
  // Starts `causeway serve --listen 127.0.0.1:0 --data-dir DIR` plus `extra`
  // and waits (up to 60 s, without sleeping) for it to print its address.
  static std::unique_ptr<ServerProcess> Start(const std::string& data_dir,
                                              const std::vector<std::string>& extra = {});
  ~ServerProcess();  // SIGTERM and wait, if still running

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  // The admin token from DATA_DIR/admin.token.
  const std::string& admin_token() const { return admin_token_; }
  // Everything the server printed on stdout up to its address line.
  const std::string& banner() const { return banner_; }

  net::HttpClient Client() const { return net::HttpClient("127.0.0.1", port_); }

  // Sends `sig` and reaps the process; returns its wait status.
  int Stop(int sig);

 private:
  pid_t pid_ = -1;
  int stdout_fd_ = -1;
  uint16_t port_ = 0;
  std::string admin_token_;
  std::string banner_;
};

struct CliResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

// Runs `causeway ARGS...` with extra environment variables and waits for it.
CliResult RunCli(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {});

// Re-checks `done` until it holds or `limit` passes (never sleeps: each
// check is a real request or a file read). Returns whether it held.
template <typename F>
bool Eventually(F done, std::chrono::seconds limit = std::chrono::seconds(60)) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done()) return true;
  }
  return false;
}

// "Authorization: Bearer TOKEN" as a header list for HttpClient::Send.
std::vector<std::pair<std::string, std::string>> Auth(const std::string& token);

}  // namespace causeway::testing
