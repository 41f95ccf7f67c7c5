#include "causeway/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace causeway {
namespace {

// Closes a descriptor once, on every path out.
struct Fd {
  int fd = -1;
  ~Fd() { Close(); }
  void Close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

bool MakePipe(Fd& read_end, Fd& write_end) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return false;
  read_end.fd = p[0];
  write_end.fd = p[1];
  return true;
}

// Starts argv (looked up on PATH) with exactly `env`, its standard input,
// output and error on the given descriptors.
Result<pid_t> Spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env, int in,
                    int out, int err) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in, 0);
  posix_spawn_file_actions_adddup2(&actions, out, 1);
  posix_spawn_file_actions_adddup2(&actions, err, 2);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<std::string> env_strings;
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc == ENOENT) return FailedPrecondition(argv[0] + " is not installed (not found on PATH)");
  if (rc != 0) return ResourceExhausted("cannot run " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

}  // namespace

Result<ProcessResult> RunProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                                 const std::string& input, std::chrono::milliseconds timeout) {
  if (argv.empty()) return InvalidArgument("no program to run");
  Fd in_r, in_w, out_r, out_w, err_r, err_w;
  if (!MakePipe(in_r, in_w) || !MakePipe(out_r, out_w) || !MakePipe(err_r, err_w)) {
    return ResourceExhausted(std::string("cannot create pipes: ") + std::strerror(errno));
  }
  ASSIGN_OR_RETURN(pid_t pid, Spawn(argv, env, in_r.fd, out_w.fd, err_w.fd));
  in_r.Close();
  out_w.Close();
  err_w.Close();

  ProcessResult result;
  size_t written = 0;
  if (input.empty()) in_w.Close();
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  while (out_r.fd >= 0 || err_r.fd >= 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[3];
    int n = 0;
    if (in_w.fd >= 0) fds[n++] = {in_w.fd, POLLOUT, 0};
    if (out_r.fd >= 0) fds[n++] = {out_r.fd, POLLIN, 0};
    if (err_r.fd >= 0) fds[n++] = {err_r.fd, POLLIN, 0};
    if (::poll(fds, static_cast<nfds_t>(n), static_cast<int>(left.count())) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in_w.fd) {
        ssize_t w = ::write(in_w.fd, input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 || written == input.size()) in_w.Close();
        continue;
      }
      Fd& src = fds[i].fd == out_r.fd ? out_r : err_r;
      std::string& dst = fds[i].fd == out_r.fd ? result.out : result.err;
      char buf[65536];
      ssize_t r = ::read(src.fd, buf, sizeof buf);
      if (r > 0) {
        dst.append(buf, static_cast<size_t>(r));
      } else if (r == 0 || errno != EINTR) {
        src.Close();
      }
    }
  }
  in_w.Close();
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Status(Code::kDeadlineExceeded, argv[0] + " did not finish within " + std::to_string(timeout.count()) + " ms");
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

namespace {

// Hands complete lines of `buf` to `fn`, keeping the unfinished tail; a
// line past `max_line` is handed on cut. False when `fn` asked to stop.
bool DrainLines(std::string& buf, size_t max_line, const std::function<bool(std::string_view)>& fn, bool at_end) {
  size_t start = 0;
  bool go = true;
  while (go) {
    size_t nl = buf.find('\n', start);
    if (nl == std::string::npos) {
      if (buf.size() - start > max_line || (at_end && start < buf.size())) {
        std::string_view rest(buf.data() + start, std::min(buf.size() - start, max_line));
        go = !fn || fn(rest);
        start = buf.size();
      }
      break;
    }
    std::string_view line(buf.data() + start, std::min(nl - start, max_line));
    go = !fn || fn(line);
    start = nl + 1;
  }
  buf.erase(0, start);
  return go;
}

}  // namespace

Result<int> RunProcessStreaming(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
                                std::chrono::milliseconds timeout, const ProcessStreams& streams) {
  if (argv.empty()) return InvalidArgument("no program to run");
  int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (devnull < 0) return ResourceExhausted(std::string("cannot open /dev/null: ") + std::strerror(errno));
  Fd in;
  in.fd = devnull;
  Fd out_r, out_w, err_r, err_w;
  if (!MakePipe(out_r, out_w) || !MakePipe(err_r, err_w)) {
    return ResourceExhausted(std::string("cannot create pipes: ") + std::strerror(errno));
  }
  ASSIGN_OR_RETURN(pid_t pid, Spawn(argv, env, in.fd, out_w.fd, err_w.fd));
  in.Close();
  out_w.Close();
  err_w.Close();

  std::string out_buf, err_buf;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false, stopped = false;
  while ((out_r.fd >= 0 || err_r.fd >= 0) && !stopped) {
    if (streams.stop && streams.stop->load()) {
      stopped = true;
      break;
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd fds[2];
    int n = 0;
    if (out_r.fd >= 0) fds[n++] = {out_r.fd, POLLIN, 0};
    if (err_r.fd >= 0) fds[n++] = {err_r.fd, POLLIN, 0};
    int wait_ms = static_cast<int>(std::min<int64_t>(left.count(), 200));
    if (::poll(fds, static_cast<nfds_t>(n), wait_ms) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (int i = 0; i < n && !stopped; ++i) {
      if (fds[i].revents == 0) continue;
      bool is_out = fds[i].fd == out_r.fd;
      Fd& src = is_out ? out_r : err_r;
      std::string& buf = is_out ? out_buf : err_buf;
      const auto& fn = is_out ? streams.on_out : streams.on_err;
      char chunk[65536];
      ssize_t r = ::read(src.fd, chunk, sizeof chunk);
      if (r > 0) {
        buf.append(chunk, static_cast<size_t>(r));
        if (!DrainLines(buf, streams.max_line, fn, false)) stopped = true;
      } else if (r == 0 || errno != EINTR) {
        src.Close();
        if (!DrainLines(buf, streams.max_line, fn, true)) stopped = true;
      }
    }
  }
  if (timed_out || stopped) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return Status(Code::kDeadlineExceeded, argv[0] + " did not finish within " + std::to_string(timeout.count()) + " ms");
  }
  if (stopped) return Unavailable(argv[0] + " was stopped");
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace causeway
