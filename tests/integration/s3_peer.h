// S3 servers on loopback for the dataset tests: moto's server mode (a real
// implementation of the S3 API, from PyPI; see tests/peers/s3), one process
// per "region", and rclone (Debian's) to put objects in them. Installed by
// `make test` (scripts/install-deps.sh test); tests skip with the reason
// when either is missing.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "cached_peer.h"
#include "causeway/subprocess.h"
#include "server_process.h"

namespace causeway::testing {

inline std::string MotoServer() { return CachedPeer("CAUSEWAY_MOTO_VENV", "moto-5.2.6") + "/bin/moto_server"; }

// Why the S3 peers cannot run here, or "" when they can.
inline std::string S3PeersMissing() {
  if (!std::filesystem::exists(MotoServer())) {
    return "moto's server is not installed at " + MotoServer() + " (scripts/install-deps.sh test installs it from PyPI)";
  }
  if (std::system("rclone version > /dev/null 2>&1") != 0) return "rclone is not installed (apt-get install rclone)";
  return "";
}

// A port nobody listens on now (the peer binds it right after).
inline uint16_t FreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

// One moto server on 127.0.0.1, stopped by pid.
class S3Peer {
 public:
  S3Peer() {
    port_ = FreePort();
    std::vector<std::string> argv = {MotoServer(), "-H", "127.0.0.1", "-p", std::to_string(port_)};
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    std::vector<std::string> env_strings = ChildEnvironment({});
    std::vector<char*> envp;
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      int devnull = ::open("/dev/null", O_WRONLY);
      ::dup2(devnull, STDOUT_FILENO);
      ::dup2(devnull, STDERR_FILENO);
      ::execve(cargv[0], cargv.data(), envp.data());
      ::_exit(127);
    }
    ready_ = Eventually(
        [&] {
          net::HttpClient c("127.0.0.1", port_, std::chrono::seconds(2));
          auto r = c.Send("GET", "/", "", {});
          return r.ok() && r->status < 500;
        },
        std::chrono::seconds(30));
  }
  ~S3Peer() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  bool ready() const { return ready_; }
  std::string endpoint() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  pid_t pid_ = -1;
  uint16_t port_ = 0;
  bool ready_ = false;
};

// An rclone remote section for `peer` named `name`.
inline std::string RcloneRemote(const std::string& name, const S3Peer& peer) {
  return "[" + name + "]\ntype = s3\nprovider = Other\naccess_key_id = test\nsecret_access_key = test\n"
         "endpoint = " + peer.endpoint() + "\nregion = us-east-1\n\n";
}

// Runs rclone with only `config` in its environment (a test's own objects
// in and out of the peers).
inline ProcessResult Rclone(const std::string& config, const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"rclone", "--config", config};
  argv.insert(argv.end(), args.begin(), args.end());
  auto r = RunProcess(argv, {{"PATH", "/usr/bin:/bin"}, {"HOME", "/tmp"}}, "", std::chrono::seconds(120));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->exit_code, 0) << r->err;
  return r.ok() ? *r : ProcessResult{};
}

// Why rclone cannot mount here ("" when it can): a local directory is
// mounted with FUSE, a file in it read back, and unmounted. Containers
// often have no /dev/fuse or no right to mount.
inline std::string FuseMissing(const std::string& scratch) {
  if (std::system("command -v fusermount3 >/dev/null 2>&1") != 0) return "fusermount3 (Debian's fuse3) is not installed";
  std::filesystem::create_directories(scratch + "/src");
  std::filesystem::create_directories(scratch + "/mnt");
  std::ofstream(scratch + "/src/probe") << "ok";
  auto mounted = RunProcess({"rclone", "mount", "--daemon", "--daemon-timeout", "10s", scratch + "/src", scratch + "/mnt"},
                            {{"PATH", "/usr/bin:/bin"}, {"HOME", "/tmp"}}, "", std::chrono::seconds(20));
  bool ok = mounted.ok() && mounted->exit_code == 0 && std::filesystem::exists(scratch + "/mnt/probe");
  int unmounted = std::system(("fusermount3 -u -- '" + scratch + "/mnt' 2>/dev/null").c_str());
  (void)unmounted;  // nothing to unmount when the mount failed
  if (ok) return "";
  return "rclone cannot mount with FUSE here: " + (mounted.ok() ? mounted->err.substr(0, 300) : mounted.status().ToString());
}

}  // namespace causeway::testing
