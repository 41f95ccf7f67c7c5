// `causeway serve`: opens the state, loads the estate, bootstraps the first
// admin token and serves the API until SIGINT or SIGTERM.
#pragma once

#include <string>

#include "causeway/status.h"

namespace causeway::api {

struct ServeOptions {
  std::string listen = "127.0.0.1:8080";  // port 0 picks a free port
  std::string data_dir = ".causeway";
  std::string db_path;      // default: DATA_DIR/causeway.db
  std::string estate_path;  // default: the embedded estate
  // The key jobs' secrets are sealed with, outside the database (made on
  // the first start); default: DATA_DIR/secrets.key. Replicas share it.
  std::string secrets_key;
  int threads = 0;          // 0: one per core
  size_t body_limit = 1 << 20;
  // Connections (docs/security.md): seconds to send a request's headers,
  // seconds a kept-alive connection may wait idle, and the most kept open
  // (also bounded by the open-file limit).
  int header_timeout_s = 10;
  int idle_timeout_s = 60;
  size_t max_connections = 4096;
  double sim_speed = 1.0;   // simulated providers run this many times faster than real time
  uint64_t sim_seed = 1;    // seeds spot preemptions and node failures
  int tick_ms = 200;        // scheduling cycle, in real milliseconds
  // How jobs reach this server (CAUSEWAY_SERVER in their environment);
  // default: http://LISTEN_HOST:PORT.
  std::string advertise_url;
  // Where services' endpoints listen (their HAProxy's bind address), and
  // the HAProxy binary that serves them.
  std::string service_host = "127.0.0.1";
  std::string haproxy = "/usr/sbin/haproxy";
  // Replicas on one database: this one's name, and how long the scheduler
  // lease lasts unrenewed (the bound on a takeover after a crash).
  std::string replica;
  int lease_ttl_ms = 5000;
  // How often the audit chain's head is signed (a checkpoint); 0: never by
  // itself (POST /v1/audit/checkpoints still signs).
  int audit_checkpoint_s = 300;
  // How often readiness is evaluated to record the controls whose state
  // changed (a readiness.change audit event); 0: never.
  int readiness_check_s = 60;
  // Also print the first admin token's secret (it is always written to
  // DATA_DIR/admin.token); off because standard output often reaches logs.
  bool print_admin_token = false;
  // Pushed GPU samples: the accepted window around now, and how many points
  // are held in memory at most (docs/security.md).
  std::string telemetry_max_age = "1h";
  std::string telemetry_max_ahead = "5m";
  size_t telemetry_max_points = 1'000'000;
};

// Blocks until a stop signal. Prints "causeway listening on http://HOST:PORT"
// on stdout once it accepts requests.
Status Serve(const ServeOptions& options);

}  // namespace causeway::api
