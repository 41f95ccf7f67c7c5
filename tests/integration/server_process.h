// Runs the real `causeway` binary for integration tests: a server on
// 127.0.0.1:0 with its own data directory, and one-shot CLI commands.
#pragma once

#include <sys/types.h>

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <atomic>
#include <map>
#include <thread>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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
  // The same, with extra environment variables and, when `open_files` is
  // more than zero, that open-file limit (soft and hard) for the server.
  static std::unique_ptr<ServerProcess> Start(const std::string& data_dir, const std::vector<std::string>& extra,
                                              const std::map<std::string, std::string>& env, int open_files = 0);
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
  std::thread drain_;
  std::atomic<bool> stop_draining_{false};
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

// This process's environment with `overrides` ("NAME" -> value) applied,
// as "NAME=value" strings: made before a fork, for the child's execve
// (after a fork a child may not allocate; see Spawn).
std::vector<std::string> ChildEnvironment(const std::map<std::string, std::string>& overrides);

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

// A server on an estate of the test's own (written into `dir`), with the
// calls tests make of it as the admin.
class EstateServer {
 public:
  EstateServer(TempDir& dir, const std::string& estate_yaml) {
    std::string estate = dir.path() + "/estate.yaml";
    std::ofstream(estate) << estate_yaml;
    args_ = {"--estate", estate, "--tick-ms", "50"};
    process_ = ServerProcess::Start(dir.path(), args_);
    dir_ = dir.path();
  }
  // SIGKILL, then start again on the same data.
  void Restart() {
    process_->Stop(SIGKILL);
    Start();
  }
  // Starts again after the test stopped the process itself.
  void Start() { process_ = ServerProcess::Start(dir_, args_); }
  // Returns the new job's id.
  std::string Submit(const std::string& spec_yaml) {
    auto c = process_->Client();
    auto r = c.Send("POST", "/v1/jobs", nlohmann::json{{"spec", spec_yaml}}.dump(), Auth(process_->admin_token()));
    EXPECT_EQ(r->status, 201) << r->body;
    return nlohmann::json::parse(r->body)["job"]["id"];
  }
  nlohmann::json Get(const std::string& path) {
    auto c = process_->Client();
    return nlohmann::json::parse(c.Send("GET", path, "", Auth(process_->admin_token()))->body);
  }
  int Post(const std::string& path) {
    auto c = process_->Client();
    return c.Send("POST", path, "{}", Auth(process_->admin_token()))->status;
  }
  ServerProcess& process() { return *process_; }

 private:
  std::vector<std::string> args_;
  std::string dir_;
  std::unique_ptr<ServerProcess> process_;
};

}  // namespace causeway::testing
