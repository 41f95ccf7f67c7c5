// A service: the `service:` section of a task file (SkyPilot Serve), read
// field for field as SkyPilot 0.14's schema and SkyServiceSpec define it,
// with SkyPilot's defaults filled in. The task itself (resources, run,
// setup) is each replica's job spec; this is what runs them as one service.
//
// Refused as SkyPilot refuses: an unknown key (with the accepted ones),
// `replicas` beside `replica_policy` or `workers`, a port outside 1-65535,
// `post_data` that is not JSON, per-accelerator `target_qps_per_replica`
// without the `instance_aware_least_load` policy and the reverse, a pool
// without its worker counts.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "causeway/clock.h"
#include "causeway/status.h"

namespace YAML {
class Node;
}

namespace causeway::spec {

class YamlReader;

// How a replica is found ready: an HTTP GET (or POST with `post_data`) of
// `path` answering 200 within `timeout_seconds`, first tried once
// `initial_delay_seconds` have passed since the replica started, then every
// `interval_seconds`.
struct ReadinessProbe {
  std::string path = "/";
  double initial_delay_seconds = 1200;  // SkyPilot's DEFAULT_INITIAL_DELAY_SECONDS
  double timeout_seconds = 15;
  double interval_seconds = 10;  // endpoint_probe_interval_seconds
  // How long a replica may keep failing its probe before it is replaced
  // (none: SkyPilot's own rule of three failures in a row).
  std::optional<double> failure_timeout_seconds;  // consecutive_failure_threshold_timeout
  std::optional<std::string> post_data;           // JSON text; absent: a GET
  std::map<std::string, std::string> headers;
};

// How many replicas, and when to add or remove them. `replicas: N` is
// min_replicas N with no autoscaling.
struct ReplicaPolicy {
  int min_replicas = 1;
  std::optional<int> max_replicas;
  std::optional<int> num_overprovision;
  // Requests per second one replica should take (autoscaling is on when set).
  std::optional<double> target_qps_per_replica;
  // instance_aware_least_load only: the same per accelerator ("H100:1").
  std::map<std::string, double> target_qps_per_accelerator;
  std::optional<double> upscale_delay_seconds, downscale_delay_seconds;
  std::optional<int> base_ondemand_fallback_replicas;
  std::optional<bool> dynamic_ondemand_fallback;
  std::string spot_placer;  // "" or dynamic_fallback
};

// A pool of workers for batch jobs (SkyPilot's `pool:`), kept as written.
struct WorkerPool {
  std::optional<int> workers, min_workers, max_workers, queue_length_threshold;
  std::optional<double> upscale_delay_seconds, downscale_delay_seconds;
};

// Causeway's placement for a service (the task file's top-level
// `failover:`, beside SkyPilot's `service:`): where its replicas run when
// all is well, the alternate kept warm for when that place is lost, and
// what is served when neither can be had.
//
//   failover:
//     preferred: nebius                 # a provider or cluster of the estate
//     alternate: {place: coreweave, accelerators: H100:1, warm: 1}
//     hold_down: 5m
//     degraded: {accelerators: L4:1, replicas: 1}
//     # or:  degraded: {answer: {status: 503, body: "busy", retry_after: 30}}
struct Placement {
  std::string place;        // a provider or cluster name ("" : anywhere)
  std::string accelerator;  // its own GPU type ("" : the task's)
  int accelerator_count = 0;
};
struct AlternatePlacement : Placement {
  int warm = 1;  // replicas kept ready there at all times
};
// A fixed answer HAProxy gives itself while no replica can serve.
struct FixedAnswer {
  int status = 503;
  std::string body = "the service is degraded: try again later";
  int retry_after_seconds = 30;
};
struct DegradedMode {
  // Either a smaller replica (its place and GPU, and how many)...
  std::optional<Placement> replica;
  int replicas = 1;
  // ...or a fixed answer.
  std::optional<FixedAnswer> answer;
};
struct Failover {
  Placement preferred;
  AlternatePlacement alternate;
  // How long the preferred place must stay healthy before traffic goes back.
  Micros hold_down = Micros(5LL * 60 * 1'000'000);
  DegradedMode degraded;  // an answer of 503 when not given
};

struct ServiceSpec {
  ReadinessProbe readiness;
  ReplicaPolicy replicas;
  std::optional<WorkerPool> pool;
  std::optional<int> port;  // the replicas' port (`ports`)
  std::string load_balancing_policy = "least_load";  // round_robin, least_load, instance_aware_least_load
  double stream_timeout_seconds = 120;                // load_balancer.stream_timeout_seconds
  std::optional<std::string> tls_keyfile, tls_certfile;
  std::optional<Failover> failover;  // the file's `failover:` section
};

// The load-balancing policies SkyPilot knows, in its order.
inline constexpr std::string_view kLoadBalancingPolicies[] = {"round_robin", "least_load",
                                                              "instance_aware_least_load"};

// Reads a `service:` section found at `n`; problems go to `r` (with their
// line and field), and what could be read is returned.
ServiceSpec ReadService(YamlReader& r, const YAML::Node& n);

// Reads a `failover:` section found at `n`; problems go to `r`.
Failover ReadFailover(YamlReader& r, const YAML::Node& n);

// The `service:` section of a task file's text (with its `failover:`), or
// nullopt when it has none.
// kInvalidArgument with every problem when it is malformed.
Result<std::optional<ServiceSpec>> ParseServiceSection(std::string_view yaml_text, const std::string& file);

nlohmann::json ToJson(const ServiceSpec& s);

}  // namespace causeway::spec
