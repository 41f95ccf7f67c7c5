// HAProxy as a service's data plane. Causeway never carries a request
// itself: it writes HAProxy's configuration once (a frontend on the
// service's endpoint, a backend of disabled server slots, an admin socket),
// starts HAProxy, then changes only what the runtime API changes without a
// reload: which replica each slot points at, its weight, and whether it
// takes traffic (ready), finishes what it has (drain) or takes nothing
// (maint). Its request counters are read back from the same socket.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/status.h"
#include "spec/service_spec.h"

namespace causeway::serving {

// What HAProxy is configured with for one service.
struct ProxyConfig {
  std::string name;  // the service's name: frontend and backend are called this
  std::string bind;  // "127.0.0.1:8000"
  // Server slots: `slots` for the preferred place's replicas (r1..rN), and
  // `backup_slots` for the alternate's and degraded ones (b1..bM), which
  // HAProxy sends traffic to only while no r-slot is up (all of them
  // sharing it then).
  int slots = 8;
  int backup_slots = 0;
  // roundrobin (round_robin) or leastconn (least_load).
  std::string balance = "leastconn";
  // How long one answer may take (the service's stream timeout).
  std::chrono::seconds server_timeout{120};
  // Connections at once; HAProxy needs about two file descriptors each, and
  // refuses to start when the process may not open that many.
  int max_connections = 2000;
  // What HAProxy answers itself while no replica is ready (the service's
  // degraded mode when it is an answer); absent: HAProxy's own 503.
  std::optional<spec::FixedAnswer> degraded_answer;
  std::string socket_path;  // the admin socket (mode 0600)
  std::string pid_file;
};

// HAProxy's configuration for `c`. kInvalidArgument for a name or bind that
// would break the file (names are [a-z0-9-], bind HOST:PORT).
Result<std::string> RenderConfig(const ProxyConfig& c);

// The balance algorithm for a SkyPilot load-balancing policy.
std::string BalanceFor(std::string_view load_balancing_policy);

// A slot's name in the backend: r1 .. rN, or b1 .. bM for a backup slot.
std::string SlotName(int slot, bool backup = false);

enum class ServerState { kReady, kDrain, kMaint };
std::string_view ToString(ServerState s);

// One server slot as HAProxy counts it (`show stat`).
struct ServerStats {
  std::string name;    // r1 .., b1 .., or BACKEND
  std::string status;  // UP, DOWN, MAINT, DRAIN, no check ...
  std::string addr;    // "127.0.0.1:9001" ("" for an unset slot)
  int weight = 0;
  int64_t current_sessions = 0;  // scur: requests being answered now
  int64_t total_sessions = 0;    // stot
  int64_t requests = 0;          // req_tot
  int64_t responses_5xx = 0;     // hrsp_5xx
  int64_t connection_errors = 0; // econ: requests that failed to connect, retries spent
  // Requests that could not reach it and were tried again (wretr), or sent
  // to another server instead (wredis).
  int64_t retries = 0, redispatches = 0;
};

// HAProxy's runtime API on its admin socket: one command per connection,
// each with a deadline that fires however the other side behaves.
class RuntimeApi {
 public:
  explicit RuntimeApi(std::string socket_path, std::chrono::milliseconds timeout = std::chrono::seconds(2))
      : socket_path_(std::move(socket_path)), timeout_(timeout) {}

  // The whole answer to one command (at most 4 MiB). kUnavailable when the
  // socket cannot be reached, kDeadlineExceeded past the deadline.
  Result<std::string> Command(std::string_view command) const;

  // Points `server` (a slot's name) of `backend` at host:port with
  // `weight` (0-256).
  Status SetServer(const std::string& backend, const std::string& server, const std::string& host, uint16_t port,
                   int weight) const;
  Status SetWeight(const std::string& backend, const std::string& server, int weight) const;
  Status SetState(const std::string& backend, const std::string& server, ServerState state) const;
  // Every server slot of `backend`, and the backend's own row as "BACKEND".
  Result<std::vector<ServerStats>> Stats(const std::string& backend) const;

 private:
  Status Expect(std::string_view command) const;  // an answer with nothing but blank lines

  std::string socket_path_;
  std::chrono::milliseconds timeout_;
};

// A TCP port on `host` that nothing listens on now (bound, then let go):
// for an endpoint, or a replica on a host shared with others.
Result<uint16_t> FreePort(const std::string& host = "127.0.0.1");

// `show stat` CSV (its "# pxname,svname,..." header first) as rows of
// `backend`.
Result<std::vector<ServerStats>> ParseStats(std::string_view csv, const std::string& backend);

// An HAProxy process started with a configuration, stopped (SIGTERM, then
// SIGKILL) when this is destroyed.
class ProxyProcess {
 public:
  // Writes `config` beside nothing else into `config_path` (0600), checks it
  // with `haproxy -c`, starts `binary -db -f config_path` and waits until the
  // admin socket answers (up to `ready_timeout`).
  static Result<ProxyProcess> Start(const std::string& binary, const ProxyConfig& config,
                                    const std::string& config_path,
                                    std::chrono::milliseconds ready_timeout = std::chrono::seconds(10));
  // The HAProxy already answering on `socket_path` (one an earlier server
  // started and left running when it was killed), taken over as if started
  // here: its pid is asked over the socket. kUnavailable when none answers.
  static Result<ProxyProcess> Adopt(const std::string& socket_path);
  ProxyProcess(ProxyProcess&& o) noexcept : pid_(o.pid_), child_(o.child_), api_(std::move(o.api_)) { o.pid_ = -1; }
  ProxyProcess& operator=(ProxyProcess&&) = delete;
  ~ProxyProcess();

  pid_t pid() const { return pid_; }
  const RuntimeApi& api() const { return api_; }
  // Stops it now (idempotent).
  void Stop();
  // Lets it run on alone: this object no longer stops it.
  void Release() { pid_ = -1; }

 private:
  ProxyProcess(pid_t pid, RuntimeApi api, bool child = true) : pid_(pid), child_(child), api_(std::move(api)) {}
  pid_t pid_;
  bool child_;  // started here (else adopted: not ours to wait for)
  RuntimeApi api_;
};

}  // namespace causeway::serving
