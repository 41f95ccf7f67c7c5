#include "server_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace causeway::testing {

TempDir::TempDir(const std::string& name) {
  std::string tmpl = (std::filesystem::temp_directory_path() / ("cw-" + name + "-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}
TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::vector<std::string> ChildEnvironment(const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> merged;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) merged[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  for (const auto& [k, v] : overrides) merged[k] = v;
  std::vector<std::string> out;
  for (const auto& [k, v] : merged) out.push_back(k + "=" + v);
  return out;
}

namespace {

// fork+exec `causeway` with the given arguments; stdout (and stderr, when
// `err_fd` is given) go to pipes. Everything the child needs is made before
// the fork: between fork and exec the child calls only async-signal-safe
// functions. (Another thread of this process, a server's output drain, may
// hold the allocator's lock at the moment of the fork; a child that
// allocated would wait for it forever, print nothing, and hang its test.)
pid_t Spawn(const std::vector<std::string>& args, const std::map<std::string, std::string>& env, int* out_fd,
            int* err_fd, int open_files = 0) {
  std::string bin = CAUSEWAY_BINARY;
  std::vector<std::string> arg_copy = args;
  std::vector<char*> argv{bin.data()};
  for (auto& a : arg_copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_strings = ChildEnvironment(env);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  const rlimit files{static_cast<rlim_t>(open_files), static_cast<rlim_t>(open_files)};
  int out[2], err[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  if (err_fd && ::pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    if (err_fd) ::dup2(err[1], 2);
    if (open_files > 0 && ::setrlimit(RLIMIT_NOFILE, &files) != 0) ::_exit(126);
    ::execve(bin.c_str(), argv.data(), envp.data());
    ::_exit(127);
  }
  ::close(out[1]);
  *out_fd = out[0];
  if (err_fd) {
    ::close(err[1]);
    *err_fd = err[0];
  }
  return pid;
}

}  // namespace

std::unique_ptr<ServerProcess> ServerProcess::Start(const std::string& data_dir,
                                                    const std::vector<std::string>& extra) {
  return Start(data_dir, extra, {}, 0);
}

std::unique_ptr<ServerProcess> ServerProcess::Start(const std::string& data_dir, const std::vector<std::string>& extra,
                                                    const std::map<std::string, std::string>& env, int open_files) {
  std::vector<std::string> args = {"serve", "--listen", "127.0.0.1:0", "--data-dir", data_dir};
  args.insert(args.end(), extra.begin(), extra.end());
  auto sp = std::unique_ptr<ServerProcess>(new ServerProcess());
  sp->pid_ = Spawn(args, env, &sp->stdout_fd_, nullptr, open_files);
  const std::string marker = "causeway listening on http://127.0.0.1:";
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (sp->banner_.find(marker) == std::string::npos ||
         sp->banner_.find('\n', sp->banner_.find(marker)) == std::string::npos) {
    int left = static_cast<int>(
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count());
    pollfd p{sp->stdout_fd_, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, left) <= 0) throw std::runtime_error("server did not start: " + sp->banner_);
    char buf[4096];
    ssize_t n = ::read(sp->stdout_fd_, buf, sizeof buf);
    if (n <= 0) throw std::runtime_error("server exited before listening: " + sp->banner_);
    sp->banner_.append(buf, static_cast<size_t>(n));
  }
  size_t at = sp->banner_.find(marker) + marker.size();
  sp->port_ = static_cast<uint16_t>(std::stoi(sp->banner_.substr(at)));
  std::ifstream token(data_dir + "/admin.token");
  std::getline(token, sp->admin_token_);
  // Keep reading what it prints (into DATA_DIR/server.log), or the server
  // would block on a full pipe.
  sp->drain_ = std::thread([fd = sp->stdout_fd_, stop = &sp->stop_draining_, log = data_dir + "/server.log"] {
    std::ofstream out(log, std::ios::app);
    while (!*stop) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 100) <= 0) continue;
      char buf[4096];
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n <= 0) break;
      out.write(buf, n);
      out.flush();
    }
  });
  return sp;
}

int ServerProcess::Stop(int sig) {
  int status = 0;
  if (pid_ > 0) {
    ::kill(pid_, sig);
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  stop_draining_ = true;
  if (drain_.joinable()) drain_.join();
  if (stdout_fd_ >= 0) {
    ::close(stdout_fd_);
    stdout_fd_ = -1;
  }
  return status;
}

ServerProcess::~ServerProcess() { Stop(SIGTERM); }

CliResult RunCli(const std::vector<std::string>& args, const std::map<std::string, std::string>& env) {
  CliResult r;
  int out_fd, err_fd;
  pid_t pid = Spawn(args, env, &out_fd, &err_fd);
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0) {
    if (::poll(fds, 2, 120000) <= 0) {
      // Silent for two minutes: hung. Killed, so that the test fails with
      // what it printed instead of waiting for ctest's timeout.
      ::kill(pid, SIGKILL);
      r.err += "\n[the command printed nothing for 120 s and was killed]\n";
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      ssize_t n = ::read(fds[i].fd, buf, sizeof buf);
      if (n <= 0) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      } else {
        (i == 0 ? r.out : r.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  for (const pollfd& f : fds) {
    if (f.fd >= 0) ::close(f.fd);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::vector<std::pair<std::string, std::string>> Auth(const std::string& token) {
  return {{"Authorization", "Bearer " + token}};
}

}  // namespace causeway::testing
