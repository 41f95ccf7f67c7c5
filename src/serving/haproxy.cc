#include "serving/haproxy.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "causeway/file_io.h"
#include "causeway/subprocess.h"

extern char** environ;

namespace causeway::serving {
namespace {

constexpr size_t kMaxAnswer = 4 << 20;

Status Late(std::string m) { return Status(Code::kDeadlineExceeded, std::move(m)); }

bool IsName(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

// host:port with a host of letters, digits, dots, colons (IPv6 in brackets).
bool IsBind(std::string_view s) {
  const size_t colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == s.size()) return false;
  for (char c : s.substr(0, colon)) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == ':' || c == '[' || c == ']')) {
      return false;
    }
  }
  int port = 0;
  auto [p, ec] = std::from_chars(s.data() + colon + 1, s.data() + s.size(), port);
  return ec == std::errc() && p == s.data() + s.size() && port > 0 && port < 65536;
}

bool IsPlainPath(std::string_view s) {
  return !s.empty() && s.find_first_of(" \t\r\n\"'#\\") == std::string_view::npos;
}

int64_t Field(const std::vector<std::string>& row, const std::map<std::string, size_t>& at, const char* name) {
  auto it = at.find(name);
  if (it == at.end() || it->second >= row.size()) return 0;
  int64_t v = 0;
  const std::string& s = row[it->second];
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

std::string Text(const std::vector<std::string>& row, const std::map<std::string, size_t>& at, const char* name) {
  auto it = at.find(name);
  return it == at.end() || it->second >= row.size() ? "" : row[it->second];
}

std::vector<std::string> SplitCsv(std::string_view line) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    out.emplace_back(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

// `s` as one double-quoted word of HAProxy's configuration: anything but
// plain letters, digits and a few marks is written as \xNN, so neither a
// quote, a backslash, a `$` (an environment variable there) nor a newline
// can change what the line means.
std::string Quoted(std::string_view s) {
  static const char* kHex = "0123456789abcdef";
  std::string out = "\"";
  for (unsigned char c : s) {
    if (std::isalnum(c) || std::string_view(" .,:;!?()-_/+=@%*").find(static_cast<char>(c)) != std::string_view::npos) {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out + "\"";
}

}  // namespace

std::string BalanceFor(std::string_view policy) {
  return policy == "round_robin" ? "roundrobin" : "leastconn";
}

std::string SlotName(int slot, bool backup) { return (backup ? "b" : "r") + std::to_string(slot); }

std::string_view ToString(ServerState s) {
  switch (s) {
    case ServerState::kReady: return "ready";
    case ServerState::kDrain: return "drain";
    case ServerState::kMaint: return "maint";
  }
  return "maint";
}

Result<std::string> RenderConfig(const ProxyConfig& c) {
  if (!IsName(c.name)) return InvalidArgument("a proxied service's name is [a-z0-9-], at most 63 characters: \"" + c.name + "\"");
  if (!IsBind(c.bind)) return InvalidArgument("expected HOST:PORT to listen on, got \"" + c.bind + "\"");
  if (c.slots < 1 || c.slots > 1000 || c.backup_slots < 0 || c.backup_slots > 1000) {
    return InvalidArgument("a backend has from 1 to 1000 server slots, and up to 1000 backup slots");
  }
  if (c.max_connections < 1 || c.max_connections > 1000000) return InvalidArgument("max_connections is from 1 to 1000000");
  if (c.balance != "roundrobin" && c.balance != "leastconn") return InvalidArgument("balance is roundrobin or leastconn");
  if (!IsPlainPath(c.socket_path) || !IsPlainPath(c.pid_file)) {
    return InvalidArgument("the admin socket and pid file need plain paths (no spaces or quotes)");
  }
  std::ostringstream o;
  o << "# Written by Causeway for service " << c.name << "; changed only through the runtime API.\n"
    << "global\n"
    << "  stats socket " << c.socket_path << " mode 600 level admin\n"
    << "  pidfile " << c.pid_file << "\n"
    << "  maxconn " << c.max_connections << "\n"
    << "defaults\n"
    << "  mode http\n"
    << "  timeout connect 2s\n"
    << "  timeout client 60s\n"
    << "  timeout server " << c.server_timeout.count() << "s\n"
    << "  timeout queue 10s\n"
    // A request that could not reach its replica (refused, reset before any
    // answer) goes to another one instead of failing.
    << "  option redispatch 1\n"
    << "  retries 3\n"
    << "  retry-on conn-failure empty-response\n"
    << "frontend " << c.name << "\n"
    << "  bind " << c.bind << "\n";
  if (c.degraded_answer) {
    o << "  use_backend " << c.name << "-degraded if { nbsrv(" << c.name << ") eq 0 }\n";
  }
  o << "  default_backend " << c.name << "\n"
    << "backend " << c.name << "\n"
    << "  balance " << c.balance << "\n"
    // An answer to a request that asks (X-Causeway-Slot: any value) names
    // the slot that gave it (r1.., or b1.. for the alternate's and
    // degraded replicas; never an address): how a drill sees where traffic
    // is. Every other answer is passed on as its replica gave it.
    << "  http-request set-var(txn.slot_asked) bool(true) if { req.hdr(X-Causeway-Slot) -m found }\n"
    << "  http-response set-header X-Causeway-Slot %s if { var(txn.slot_asked) -m bool }\n"
    // Slots start in maintenance at a placeholder address; each is pointed
    // at a replica and made ready once that replica answers its probe.
    // Readiness is Causeway's probe; HAProxy's own part is passive: the
    // first connection a replica refuses marks it down at once (so the
    // request, retried, goes to a live one, or to the backups when no
    // preferred replica is left), and a TCP check each second brings it
    // back up when it listens again.
    << "  default-server check inter 1s fall 3 rise 1 observe layer4 error-limit 1 on-error mark-down\n"
    << "  server-template r 1-" << c.slots << " 127.0.0.1:9 disabled weight 100\n";
  if (c.backup_slots > 0) {
    o << "  option allbackups\n"
      << "  server-template b 1-" << c.backup_slots << " 127.0.0.1:9 disabled weight 100 backup\n";
  }
  if (c.degraded_answer) {
    // Served by HAProxy itself, only while the backend has no server up.
    const spec::FixedAnswer& a = *c.degraded_answer;
    if (a.status < 200 || a.status > 599) return InvalidArgument("a degraded answer's status is from 200 to 599");
    o << "backend " << c.name << "-degraded\n"
      << "  http-request return status " << a.status << " content-type \"text/plain\" string " << Quoted(a.body)
      << " hdr Retry-After " << Quoted(std::to_string(a.retry_after_seconds)) << "\n";
  }
  return o.str();
}

Result<std::string> RuntimeApi::Command(std::string_view command) const {
  if (command.find('\n') != std::string_view::npos) return InvalidArgument("a runtime API command is one line");
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof addr.sun_path) return InvalidArgument("the admin socket's path is too long");
  std::memcpy(addr.sun_path, socket_path_.c_str(), socket_path_.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return Unavailable(std::string("socket: ") + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  auto wait = [&](short events) -> Status {
    while (true) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return Late("HAProxy's runtime API did not answer within " + std::to_string(timeout_.count()) + " ms");
      pollfd p{fd, events, 0};
      const int n = ::poll(&p, 1, static_cast<int>(left.count()));
      if (n > 0) return Status::Ok();
      if (n < 0 && errno != EINTR) return Unavailable(std::string("poll: ") + std::strerror(errno));
    }
  };
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    if (errno != EINPROGRESS && errno != EAGAIN) {
      return Unavailable("HAProxy's admin socket " + socket_path_ + ": " + std::strerror(errno));
    }
    RETURN_IF_ERROR(wait(POLLOUT));
  }
  const std::string line = std::string(command) + "\n";
  size_t sent = 0;
  while (sent < line.size()) {
    const ssize_t n = ::send(fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      RETURN_IF_ERROR(wait(POLLOUT));
    } else {
      return Unavailable(std::string("writing to HAProxy's admin socket: ") + std::strerror(errno));
    }
  }
  // Outside interactive mode HAProxy answers and closes the connection.
  std::string out;
  char buf[16384];
  while (true) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n > 0) {
      if (out.size() + static_cast<size_t>(n) > kMaxAnswer) return ResourceExhausted("HAProxy's answer exceeds 4 MiB");
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      return out;
    } else if (errno == EAGAIN || errno == EINTR) {
      RETURN_IF_ERROR(wait(POLLIN));
    } else {
      return Unavailable(std::string("reading HAProxy's admin socket: ") + std::strerror(errno));
    }
  }
}

Status RuntimeApi::Expect(std::string_view command) const {
  // Every word of a command is Causeway's own or checked; a `;` would
  // chain another command.
  if (command.find(';') != std::string_view::npos) return InvalidArgument("a runtime API command has no `;`");
  ASSIGN_OR_RETURN(std::string answer, Command(command));
  if (answer.find_first_not_of("\r\n ") == std::string::npos) return Status::Ok();
  // A few commands answer with a notice of what changed.
  if (answer.rfind("IP changed", 0) == 0 || answer.rfind("no need to change", 0) == 0 ||
      answer.rfind("port changed", 0) == 0) {
    return Status::Ok();
  }
  answer.erase(answer.find_last_not_of("\r\n ") + 1);
  return FailedPrecondition("HAProxy refused \"" + std::string(command) + "\": " + answer);
}

Status RuntimeApi::SetServer(const std::string& backend, const std::string& server, const std::string& host,
                             uint16_t port, int weight) const {
  if (host.empty() || host.find_first_of(" \t\r\n;") != std::string::npos) {
    return InvalidArgument("a replica's host is one word: \"" + host + "\"");
  }
  RETURN_IF_ERROR(Expect("set server " + backend + "/" + server + " addr " + host + " port " + std::to_string(port)));
  return SetWeight(backend, server, weight);
}

Status RuntimeApi::SetWeight(const std::string& backend, const std::string& server, int weight) const {
  if (weight < 0 || weight > 256) return InvalidArgument("a weight is from 0 to 256");
  return Expect("set weight " + backend + "/" + server + " " + std::to_string(weight));
}

Status RuntimeApi::SetState(const std::string& backend, const std::string& server, ServerState state) const {
  RETURN_IF_ERROR(Expect("set server " + backend + "/" + server + " state " + std::string(ToString(state))));
  // Made ready by Causeway's own probe: up now, not after HAProxy's first
  // check.
  if (state == ServerState::kReady) return Expect("set server " + backend + "/" + server + " health up");
  return Status::Ok();
}

Result<std::vector<ServerStats>> RuntimeApi::Stats(const std::string& backend) const {
  ASSIGN_OR_RETURN(std::string csv, Command("show stat"));
  return ParseStats(csv, backend);
}

Result<std::vector<ServerStats>> ParseStats(std::string_view csv, const std::string& backend) {
  std::istringstream lines{std::string(csv)};
  std::string line;
  if (!std::getline(lines, line) || line.rfind("# ", 0) != 0) {
    return FailedPrecondition("HAProxy's `show stat` answer has no header line");
  }
  std::map<std::string, size_t> at;
  const std::vector<std::string> header = SplitCsv(std::string_view(line).substr(2));
  for (size_t i = 0; i < header.size(); ++i) at[header[i]] = i;
  for (const char* needed : {"pxname", "svname", "scur", "stot", "status", "weight"}) {
    if (!at.count(needed)) return FailedPrecondition(std::string("HAProxy's `show stat` has no column ") + needed);
  }
  std::vector<ServerStats> out;
  while (std::getline(lines, line)) {
    if (line.empty()) continue;
    const std::vector<std::string> row = SplitCsv(line);
    if (Text(row, at, "pxname") != backend) continue;
    const std::string name = Text(row, at, "svname");
    if (name == "FRONTEND") continue;
    ServerStats s;
    s.name = name;
    s.status = Text(row, at, "status");
    s.addr = Text(row, at, "addr");
    s.weight = static_cast<int>(Field(row, at, "weight"));
    s.current_sessions = Field(row, at, "scur");
    s.total_sessions = Field(row, at, "stot");
    s.requests = Field(row, at, "req_tot");
    s.responses_5xx = Field(row, at, "hrsp_5xx");
    s.connection_errors = Field(row, at, "econ");
    s.retries = Field(row, at, "wretr");
    s.redispatches = Field(row, at, "wredis");
    out.push_back(std::move(s));
  }
  return out;
}

namespace {
// The pid of the HAProxy answering on `socket_path` (0: none answers).
pid_t PidOn(const std::string& socket_path) {
  RuntimeApi old(socket_path, std::chrono::seconds(1));
  auto info = old.Command("show info");
  if (!info.ok()) return 0;
  auto at = info->find("\nPid: ");
  if (at == std::string::npos) return 0;
  pid_t pid = static_cast<pid_t>(std::strtol(info->c_str() + at + 6, nullptr, 10));
  return pid > 1 ? pid : 0;
}

// Stops a process that is not our child: SIGTERM, then SIGKILL.
void StopOther(pid_t pid) {
  ::kill(pid, SIGTERM);
  for (int i = 0; i < 50 && ::kill(pid, 0) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  if (::kill(pid, 0) == 0) ::kill(pid, SIGKILL);
}

// A proxy an earlier server left running on `socket_path` (that server was
// killed before it could stop it) still holds the socket and the port: it
// is stopped.
void StopLeftover(const std::string& socket_path) {
  if (pid_t pid = PidOn(socket_path)) StopOther(pid);
}
}  // namespace

Result<ProxyProcess> ProxyProcess::Adopt(const std::string& socket_path) {
  pid_t pid = PidOn(socket_path);
  if (pid == 0) return Unavailable("no HAProxy answers on " + socket_path);
  return ProxyProcess(pid, RuntimeApi(socket_path), false);
}

Result<ProxyProcess> ProxyProcess::Start(const std::string& binary, const ProxyConfig& config,
                                         const std::string& config_path, std::chrono::milliseconds ready_timeout) {
  ASSIGN_OR_RETURN(std::string text, RenderConfig(config));
  {
    const int fd = ::open(config_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return Unavailable("writing " + config_path + ": " + std::strerror(errno));
    const Status written = WriteAll(fd, text, config_path);
    ::close(fd);
    RETURN_IF_ERROR(written);
  }
  auto checked = RunProcess({binary, "-c", "-q", "-f", config_path}, {{"PATH", "/usr/sbin:/usr/bin:/sbin:/bin"}}, "",
                            std::chrono::seconds(10));
  if (!checked.ok()) return checked.status().WithPrefix("checking HAProxy's configuration");
  if (checked->exit_code != 0) {
    return FailedPrecondition("HAProxy refused its configuration " + config_path + ": " + checked->err + checked->out);
  }
  StopLeftover(config.socket_path);
  ::unlink(config.socket_path.c_str());
  const std::string log = config_path + ".log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  // Nothing else of the server's: HAProxy outlives a killed server, and
  // must not keep its listening socket (a restart could not bind it).
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  std::vector<std::string> args = {binary, "-db", "-f", config_path};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, binary.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return FailedPrecondition("starting " + binary + ": " + std::strerror(rc));
  ProxyProcess p(pid, RuntimeApi(config.socket_path));
  const auto deadline = std::chrono::steady_clock::now() + ready_timeout;
  while (true) {
    if (p.api_.Command("show info").ok()) return p;
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      p.pid_ = -1;
      std::ifstream in(log);
      std::string said((std::istreambuf_iterator<char>(in)), {});
      return FailedPrecondition("HAProxy exited at start: " + said.substr(0, 2000));
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Late("HAProxy's admin socket did not answer within " + std::to_string(ready_timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void ProxyProcess::Stop() {
  if (pid_ <= 0) return;
  if (!child_) {
    StopOther(pid_);
    pid_ = -1;
    return;
  }
  ::kill(pid_, SIGTERM);
  for (int i = 0; i < 100; ++i) {
    if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
  pid_ = -1;
}

ProxyProcess::~ProxyProcess() { Stop(); }

Result<uint16_t> FreePort(const std::string& host) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return InvalidArgument("cannot pick a port on \"" + host + "\": expected an IPv4 address");
  }
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Unavailable(std::string("cannot open a socket: ") + std::strerror(errno));
  socklen_t len = sizeof addr;
  bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0;
  int err = errno;
  ::close(fd);
  if (!ok) return Unavailable("cannot pick a free port on " + host + ": " + std::strerror(err));
  return static_cast<uint16_t>(ntohs(addr.sin_port));
}

}  // namespace causeway::serving
