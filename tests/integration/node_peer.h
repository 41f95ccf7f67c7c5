// Node.js peers from tests/peers (real implementations from npm the
// identity tests talk to): found through CAUSEWAY_SOURCE_DIR, installed by
// `make test` (scripts/install-deps.sh test). Tests skip with a message
// when Node.js or the packages are missing.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "causeway/subprocess.h"
#include "server_process.h"

namespace causeway::testing {

inline std::string PeersDir() { return std::string(CAUSEWAY_SOURCE_DIR) + "/tests/peers"; }

// Why the peers cannot run here, or "" when they can.
inline std::string PeersMissing() {
  if (std::system("node --version > /dev/null 2>&1") != 0) return "Node.js is not installed";
  for (const char* pkg : {"oauth2-mock-server", "jose", "ajv", "ajv-formats", "playwright-core", "axe-core"}) {
    if (!std::filesystem::exists(PeersDir() + "/node_modules/" + pkg)) {
      return std::string("tests/peers/node_modules/") + pkg + " is missing (run: make test-deps)";
    }
  }
  return "";
}

// Why Chromium cannot be driven here, or "" when it can: the peers and
// Debian's chromium.
inline std::string ChromiumMissing() {
  if (std::string why = PeersMissing(); !why.empty()) return why;
  if (!std::filesystem::exists("/usr/bin/chromium")) return "Debian's chromium is not installed (run: make test-deps)";
  return "";
}

// A long-running peer process (argv[0] looked up on PATH), whose first line
// of output the test reads; stopped by pid.
class PeerProcess {
 public:
  explicit PeerProcess(std::vector<std::string> argv, const std::vector<std::string>& env = {}) {
    // Made before the fork: the child only execs (see Spawn in server_process.cc).
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    std::map<std::string, std::string> overrides;
    for (const std::string& e : env) {
      size_t eq = e.find('=');
      if (eq != std::string::npos) overrides[e.substr(0, eq)] = e.substr(eq + 1);
    }
    std::vector<std::string> env_strings = ChildEnvironment(overrides);
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    int out[2];
    if (::pipe(out) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      ::close(out[0]);
      ::close(out[1]);
      ::execvpe(cargv[0], cargv.data(), envp.data());
      ::_exit(127);
    }
    ::close(out[1]);
    // The first line: a blocking read, bounded by the peer's start.
    char c;
    while (::read(out[0], &c, 1) == 1 && c != '\n') first_line_ += c;
    ::close(out[0]);
  }
  PeerProcess(const PeerProcess&) = delete;
  PeerProcess& operator=(const PeerProcess&) = delete;
  ~PeerProcess() { Stop(); }
  // Stops it now (SIGKILL when `hard`), and waits for it.
  void Stop(bool hard = false) {
    if (pid_ > 0) {
      ::kill(pid_, hard ? SIGKILL : SIGTERM);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  const std::string& first_line() const { return first_line_; }

 private:
  pid_t pid_ = -1;
  std::string first_line_;
};

// `node SCRIPT ARGS...`, SCRIPT in tests/peers.
class NodePeer : public PeerProcess {
 public:
  NodePeer(const std::string& script, const std::vector<std::string>& args, const std::vector<std::string>& env = {})
      : PeerProcess(Argv(script, args), env) {}

 private:
  static std::vector<std::string> Argv(const std::string& script, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"node", PeersDir() + "/" + script};
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }
};

}  // namespace causeway::testing
