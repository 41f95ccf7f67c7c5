#include "spec/service_spec.h"

#include <cmath>
#include <cstdlib>

#include <nlohmann/json.hpp>

#include "spec/accelerators.h"
#include "spec/yaml_reader.h"

namespace causeway::spec {
namespace {

using nlohmann::json;

constexpr int kMaxPostDataDepth = 32;  // nesting of a mapping `post_data`

bool Given(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

// A YAML number (SkyPilot's schema: `type: number`), at least `min`.
std::optional<double> Number(YamlReader& r, const YAML::Node& n, std::string_view field, double min) {
  const std::string expected = "expected a number" + (min == 0 ? std::string(" of at least 0") : "");
  if (!n.IsScalar() || n.Tag() == "!") {
    r.Error(n, field, expected + (n.Tag() == "!" ? ", got a quoted string" : ""));
    return std::nullopt;
  }
  const std::string& s = n.Scalar();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v)) {
    r.Error(n, field, expected + ", got \"" + s + "\"");
    return std::nullopt;
  }
  if (v < min) {
    r.Error(n, field, "value " + s + " is out of range: " + expected);
    return std::nullopt;
  }
  return v;
}

std::optional<int> Count(YamlReader& r, const YAML::Node& n, std::string_view field, int64_t min = 0,
                         int64_t max = 100000) {
  auto v = r.Int(n, field, min, max);
  return v ? std::optional<int>(static_cast<int>(*v)) : std::nullopt;
}

// A mapping `post_data` as the JSON body it stands for; scalars stay strings
// unless YAML wrote them plain as numbers, booleans or null.
std::optional<json> JsonOf(YamlReader& r, const YAML::Node& n, std::string_view field, int depth) {
  if (depth > kMaxPostDataDepth) {
    r.Error(n, field, "nests deeper than " + std::to_string(kMaxPostDataDepth) + " levels");
    return std::nullopt;
  }
  if (n.IsNull()) return json(nullptr);
  if (n.IsScalar()) {
    if (n.Tag() == "!") return json(n.Scalar());
    json v = json::parse(n.Scalar(), nullptr, false);
    return v.is_number() || v.is_boolean() ? v : json(n.Scalar());
  }
  if (n.IsSequence()) {
    json out = json::array();
    for (size_t i = 0; i < n.size(); ++i) {
      auto v = JsonOf(r, n[i], std::string(field) + "[" + std::to_string(i) + "]", depth + 1);
      if (!v) return std::nullopt;
      out.push_back(std::move(*v));
    }
    return out;
  }
  json out = json::object();
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (!it->first.IsScalar()) {
      r.Error(it->first, field, "expected a plain string key");
      return std::nullopt;
    }
    auto v = JsonOf(r, it->second, JoinField(field, it->first.Scalar()), depth + 1);
    if (!v) return std::nullopt;
    out[it->first.Scalar()] = std::move(*v);
  }
  return out;
}

void ReadProbe(YamlReader& r, const YAML::Node& p, ReadinessProbe& out) {
  static const KeySet kKeys{{"path", "initial_delay_seconds", "timeout_seconds", "endpoint_probe_interval_seconds",
                             "consecutive_failure_threshold_timeout", "post_data", "headers"}};
  constexpr std::string_view f = "service.readiness_probe";
  if (p.IsScalar()) {
    if (auto s = r.String(p, f)) out.path = *s;
    return;
  }
  if (!r.CheckMap(p, f, kKeys)) return;
  const YAML::Node path = YamlReader::Child(p, "path");
  if (!path.IsDefined()) {
    r.Error(p, f, "a readiness probe needs a `path` (the URL path probed, e.g. /health)");
  } else if (auto s = r.String(path, JoinField(f, "path"))) {
    out.path = *s;
  }
  auto seconds = [&](const char* key, double& into) {
    if (auto n = YamlReader::Child(p, key); Given(n)) {
      if (auto v = Number(r, n, JoinField(f, key), 0)) into = *v;
    }
  };
  seconds("initial_delay_seconds", out.initial_delay_seconds);
  seconds("timeout_seconds", out.timeout_seconds);
  seconds("endpoint_probe_interval_seconds", out.interval_seconds);
  if (auto n = YamlReader::Child(p, "consecutive_failure_threshold_timeout"); Given(n)) {
    out.failure_timeout_seconds = Number(r, n, JoinField(f, "consecutive_failure_threshold_timeout"), 0);
  }
  if (auto n = YamlReader::Child(p, "post_data"); Given(n)) {
    const std::string field = JoinField(f, "post_data");
    if (n.IsScalar()) {
      // SkyPilot reads a string as JSON text.
      json body = json::parse(n.Scalar(), nullptr, false);
      if (body.is_discarded()) {
        r.Error(n, field, "expected JSON text or a mapping: the body of the probe's POST");
      } else {
        out.post_data = body.dump();
      }
    } else if (n.IsMap()) {
      if (auto body = JsonOf(r, n, field, 0)) out.post_data = body->dump();
    } else {
      r.Error(n, field, "expected JSON text or a mapping: the body of the probe's POST");
    }
  }
  if (auto n = YamlReader::Child(p, "headers"); Given(n)) {
    const std::string field = JoinField(f, "headers");
    if (!n.IsMap()) {
      r.Error(n, field, "expected a mapping of header names to strings");
    } else {
      for (auto it = n.begin(); it != n.end(); ++it) {
        if (!it->first.IsScalar()) {
          r.Error(it->first, field, "expected a plain header name");
          continue;
        }
        if (auto v = r.String(it->second, JoinField(field, it->first.Scalar()))) out.headers[it->first.Scalar()] = *v;
      }
    }
  }
}

void ReadPolicy(YamlReader& r, const YAML::Node& p, ReplicaPolicy& out) {
  static const KeySet kKeys{{"min_replicas", "max_replicas", "num_overprovision", "target_qps_per_replica",
                             "dynamic_ondemand_fallback", "base_ondemand_fallback_replicas", "spot_placer",
                             "upscale_delay_seconds", "downscale_delay_seconds"}};
  constexpr std::string_view f = "service.replica_policy";
  if (!r.CheckMap(p, f, kKeys)) return;
  const YAML::Node min = YamlReader::Child(p, "min_replicas");
  if (!min.IsDefined()) {
    r.Error(p, f, "a replica policy needs `min_replicas`");
  } else if (auto v = Count(r, min, JoinField(f, "min_replicas"))) {
    out.min_replicas = *v;
  }
  auto count = [&](const char* key, std::optional<int>& into) {
    if (auto n = YamlReader::Child(p, key); Given(n)) into = Count(r, n, JoinField(f, key));
  };
  count("max_replicas", out.max_replicas);
  count("num_overprovision", out.num_overprovision);
  count("base_ondemand_fallback_replicas", out.base_ondemand_fallback_replicas);
  for (const char* key : {"upscale_delay_seconds", "downscale_delay_seconds"}) {
    if (auto n = YamlReader::Child(p, key); Given(n)) {
      auto& into = std::string_view(key) == "upscale_delay_seconds" ? out.upscale_delay_seconds : out.downscale_delay_seconds;
      into = Number(r, n, JoinField(f, key), 0);
    }
  }
  if (auto n = YamlReader::Child(p, "target_qps_per_replica"); Given(n)) {
    const std::string field = JoinField(f, "target_qps_per_replica");
    if (n.IsMap()) {
      for (auto it = n.begin(); it != n.end(); ++it) {
        const std::string gpu = it->first.IsScalar() ? it->first.Scalar() : "";
        const size_t colon = gpu.find(':');
        const std::string type = gpu.substr(0, colon);
        const bool named = !type.empty() && type.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == std::string::npos &&
                           (colon == std::string::npos ||
                            (colon + 1 < gpu.size() && gpu.find_first_not_of("0123456789", colon + 1) == std::string::npos));
        if (!named) {
          r.Error(it->first, field, "expected an accelerator such as H100 or H100:1 (upper case), got \"" + gpu + "\"");
          continue;
        }
        if (auto v = Number(r, it->second, JoinField(field, gpu), 0)) out.target_qps_per_accelerator[gpu] = *v;
      }
    } else {
      out.target_qps_per_replica = Number(r, n, field, 0);
    }
  }
  if (auto n = YamlReader::Child(p, "dynamic_ondemand_fallback"); Given(n)) {
    out.dynamic_ondemand_fallback = r.Bool(n, JoinField(f, "dynamic_ondemand_fallback"));
  }
  if (auto n = YamlReader::Child(p, "spot_placer"); Given(n)) {
    if (auto s = r.String(n, JoinField(f, "spot_placer"))) {
      std::string lower = *s;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (lower == "dynamic_fallback") {
        out.spot_placer = lower;
      } else {
        r.Error(n, JoinField(f, "spot_placer"), "expected dynamic_fallback, got \"" + *s + "\"");
      }
    }
  }
}

WorkerPool ReadPool(YamlReader& r, const YAML::Node& p) {
  static const KeySet kKeys{{"workers", "min_workers", "queue_length_threshold", "max_workers",
                             "upscale_delay_seconds", "downscale_delay_seconds"}};
  constexpr std::string_view f = "service.pool";
  WorkerPool out;
  if (!r.CheckMap(p, f, kKeys)) return out;
  auto count = [&](const char* key, std::optional<int>& into, int64_t min) {
    if (auto n = YamlReader::Child(p, key); Given(n)) into = Count(r, n, JoinField(f, key), min);
  };
  count("workers", out.workers, 0);
  count("min_workers", out.min_workers, 0);
  count("max_workers", out.max_workers, 0);
  count("queue_length_threshold", out.queue_length_threshold, 1);
  if (auto n = YamlReader::Child(p, "upscale_delay_seconds"); Given(n)) {
    out.upscale_delay_seconds = Number(r, n, JoinField(f, "upscale_delay_seconds"), 0);
  }
  if (auto n = YamlReader::Child(p, "downscale_delay_seconds"); Given(n)) {
    out.downscale_delay_seconds = Number(r, n, JoinField(f, "downscale_delay_seconds"), 0);
  }
  return out;
}

// "H100:1" or "H100": an accelerator of the catalogue and a count (1-64).
void ReadAccelerator(YamlReader& r, const YAML::Node& n, std::string_view field, Placement& out) {
  auto s = r.String(n, field);
  if (!s) return;
  const size_t colon = s->find(':');
  std::string type = s->substr(0, colon);
  for (char& c : type) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int count = 1;
  if (colon != std::string::npos) {
    const std::string digits = s->substr(colon + 1);
    char* end = nullptr;
    const long v = std::strtol(digits.c_str(), &end, 10);
    if (digits.empty() || *end != '\0' || v < 1 || v > 64) {
      r.Error(n, field, "expected TYPE or TYPE:COUNT with a count from 1 to 64, got \"" + *s + "\"");
      return;
    }
    count = static_cast<int>(v);
  }
  if (!KnownAccelerator(type)) {
    const std::string hint = AcceleratorHint(type);
    r.Error(n, field, "unknown accelerator \"" + type + "\"" + (hint.empty() ? "" : "; did you mean \"" + hint + "\"?"));
    return;
  }
  out.accelerator = type;
  out.accelerator_count = count;
}

// A place, as a name or as {place, accelerators} (plus `extra` keys).
void ReadPlacement(YamlReader& r, const YAML::Node& n, const std::string& field, Placement& out,
                   const std::vector<std::string_view>& extra = {}) {
  if (n.IsScalar()) {
    if (auto s = r.String(n, field)) out.place = *s;
    return;
  }
  KeySet keys{{"place", "accelerators"}};
  keys.known.insert(keys.known.end(), extra.begin(), extra.end());
  if (!r.CheckMap(n, field, keys)) return;
  if (auto p = YamlReader::Child(n, "place"); Given(p)) {
    if (auto s = r.String(p, JoinField(field, "place"))) out.place = *s;
  }
  if (auto a = YamlReader::Child(n, "accelerators"); Given(a)) ReadAccelerator(r, a, JoinField(field, "accelerators"), out);
}

}  // namespace

Failover ReadFailover(YamlReader& r, const YAML::Node& n) {
  static const KeySet kKeys{{"preferred", "alternate", "hold_down", "degraded"}};
  Failover out;
  if (!r.CheckMap(n, "failover", kKeys)) return out;
  const YAML::Node preferred = YamlReader::Child(n, "preferred");
  const YAML::Node alternate = YamlReader::Child(n, "alternate");
  if (!Given(preferred)) r.Error(n, "failover.preferred", "name the place the service runs when all is well");
  if (!Given(alternate)) r.Error(n, "failover.alternate", "name the place kept warm for when the preferred one is lost");
  if (Given(preferred)) ReadPlacement(r, preferred, "failover.preferred", out.preferred);
  if (Given(alternate)) {
    ReadPlacement(r, alternate, "failover.alternate", out.alternate, {"warm"});
    if (auto w = YamlReader::Child(alternate, "warm"); Given(w)) {
      if (auto v = r.Int(w, "failover.alternate.warm", 0, 1000)) out.alternate.warm = static_cast<int>(*v);
    }
    if (!out.preferred.place.empty() && out.alternate.place == out.preferred.place) {
      r.Error(alternate, "failover.alternate", "is the preferred place: an alternate must be somewhere else");
    }
  }
  if (auto h = YamlReader::Child(n, "hold_down"); Given(h)) {
    auto text = r.String(h, "failover.hold_down");
    auto d = text ? ParseDuration(*text) : Result<Micros>(InvalidArgument(""));
    if (text && (!d.ok() || d->count() < 0 || *d > Micros(24LL * 3600 * 1'000'000))) {
      r.Error(h, "failover.hold_down", "expected a duration up to 24h such as 30s or 5m, got \"" + *text + "\"");
    } else if (d.ok()) {
      out.hold_down = *d;
    }
  }
  if (auto d = YamlReader::Child(n, "degraded"); Given(d) && r.CheckMap(d, "failover.degraded",
                                                                        {{"place", "accelerators", "replicas", "answer"}})) {
    const YAML::Node answer = YamlReader::Child(d, "answer");
    const bool replica = Given(YamlReader::Child(d, "place")) || Given(YamlReader::Child(d, "accelerators")) ||
                         Given(YamlReader::Child(d, "replicas"));
    if (Given(answer) && replica) {
      r.Error(answer, "failover.degraded.answer", "give a smaller replica (place, accelerators, replicas) or an answer, not both");
    } else if (Given(answer) && r.CheckMap(answer, "failover.degraded.answer", {{"status", "body", "retry_after"}})) {
      FixedAnswer a;
      if (auto v = YamlReader::Child(answer, "status"); Given(v)) {
        if (auto s = r.Int(v, "failover.degraded.answer.status", 200, 599)) a.status = static_cast<int>(*s);
      }
      if (auto v = YamlReader::Child(answer, "body"); Given(v)) {
        if (auto s = r.String(v, "failover.degraded.answer.body")) {
          if (s->size() > 4096) {
            r.Error(v, "failover.degraded.answer.body", "at most 4096 bytes");
          } else {
            a.body = *s;
          }
        }
      }
      if (auto v = YamlReader::Child(answer, "retry_after"); Given(v)) {
        if (auto s = r.Int(v, "failover.degraded.answer.retry_after", 0, 86400)) a.retry_after_seconds = static_cast<int>(*s);
      }
      out.degraded.answer = a;
    } else if (replica) {
      Placement p;
      ReadPlacement(r, d, "failover.degraded", p, {"replicas", "answer"});
      if (auto v = YamlReader::Child(d, "replicas"); Given(v)) {
        if (auto c = r.Int(v, "failover.degraded.replicas", 1, 1000)) out.degraded.replicas = static_cast<int>(*c);
      }
      out.degraded.replica = p;
    }
  }
  return out;
}

ServiceSpec ReadService(YamlReader& r, const YAML::Node& n) {
  static const KeySet kKeys{{"readiness_probe", "load_balancer", "pool", "replica_policy", "ports", "replicas",
                             "workers", "load_balancing_policy", "tls"}};
  ServiceSpec out;
  if (!r.CheckMap(n, "service", kKeys)) return out;
  if (auto p = YamlReader::Child(n, "readiness_probe"); Given(p)) ReadProbe(r, p, out.readiness);
  if (auto lb = YamlReader::Child(n, "load_balancer"); Given(lb) && r.CheckMap(lb, "service.load_balancer", {{"stream_timeout_seconds"}})) {
    if (auto t = YamlReader::Child(lb, "stream_timeout_seconds"); Given(t)) {
      if (auto v = Number(r, t, "service.load_balancer.stream_timeout_seconds", 0)) out.stream_timeout_seconds = *v;
    }
  }
  const YAML::Node replicas = YamlReader::Child(n, "replicas");
  const YAML::Node workers = YamlReader::Child(n, "workers");
  const YAML::Node policy = YamlReader::Child(n, "replica_policy");
  const YAML::Node pool = YamlReader::Child(n, "pool");
  if (Given(pool)) out.pool = ReadPool(r, pool);
  if (Given(replicas) && Given(policy)) {
    r.Error(replicas, "service.replicas", "give `replicas` or `replica_policy`, not both");
  }
  if (Given(replicas) && Given(workers)) {
    r.Error(workers, "service.workers", "give `replicas` or `workers`, not both");
  }
  if (Given(policy) && Given(pool)) {
    r.Error(policy, "service.replica_policy", "a pool takes `workers` (or `min_workers` and `max_workers`), not a replica policy");
  }
  if (Given(replicas) && Given(pool)) {
    r.Error(replicas, "service.replicas", "a pool takes `workers`, not `replicas`");
  }
  if (Given(replicas)) {
    if (auto v = r.Int(replicas, "service.replicas", 0, 100000)) out.replicas.min_replicas = static_cast<int>(*v);
  } else if (Given(workers)) {
    if (auto v = r.Int(workers, "service.workers", 0, 100000)) out.replicas.min_replicas = static_cast<int>(*v);
  } else if (Given(policy)) {
    ReadPolicy(r, policy, out.replicas);
  }
  if (out.pool) {
    const WorkerPool& p = *out.pool;
    if (!p.workers && !p.min_workers && !p.max_workers && !Given(workers)) {
      r.Error(pool, "service.pool", "give `workers`, or both `min_workers` and `max_workers`");
    }
    if ((p.queue_length_threshold || p.min_workers) && !p.max_workers) {
      r.Error(pool, "service.pool.max_workers", "needed with `min_workers` or `queue_length_threshold`");
    }
    if (p.min_workers && p.max_workers && *p.min_workers > *p.max_workers) {
      r.Error(pool, "service.pool.min_workers", "must not exceed max_workers");
    }
    if (p.workers) out.replicas.min_replicas = *p.workers;
    if (p.max_workers) {
      if (p.min_workers) out.replicas.min_replicas = *p.min_workers;
      out.replicas.max_replicas = p.max_workers;
    }
  }
  if (auto p = YamlReader::Child(n, "ports"); Given(p)) {
    if (auto v = r.Int(p, "service.ports", 1, 65535)) out.port = static_cast<int>(*v);
  }
  if (auto p = YamlReader::Child(n, "load_balancing_policy"); Given(p)) {
    // Exactly as written: SkyPilot's schema ignores case, its service does not.
    if (auto s = r.String(p, "service.load_balancing_policy")) {
      bool known = false;
      std::string list;
      for (std::string_view k : kLoadBalancingPolicies) {
        known = known || *s == k;
        list += (list.empty() ? "" : ", ") + std::string(k);
      }
      if (known) {
        out.load_balancing_policy = *s;
      } else {
        r.Error(p, "service.load_balancing_policy", "expected one of " + list + ", got \"" + *s + "\"");
      }
    }
  }
  const bool per_accelerator = !out.replicas.target_qps_per_accelerator.empty();
  if (per_accelerator && out.load_balancing_policy != "instance_aware_least_load") {
    r.Error(policy, "service.replica_policy.target_qps_per_replica",
            "a target per accelerator needs load_balancing_policy: instance_aware_least_load");
  } else if (!per_accelerator && out.load_balancing_policy == "instance_aware_least_load") {
    r.Error(YamlReader::Child(n, "load_balancing_policy"), "service.load_balancing_policy",
            "instance_aware_least_load needs replica_policy.target_qps_per_replica as a mapping of accelerators "
            "to requests per second");
  }
  // SkyServiceSpec's own rules.
  const ReplicaPolicy& rp = out.replicas;
  const bool autoscaled = rp.target_qps_per_replica || per_accelerator;
  const YAML::Node& scaling = Given(policy) ? policy : pool;  // where the counts were written
  if (rp.max_replicas && *rp.max_replicas < rp.min_replicas) {
    r.Error(scaling, "service.replica_policy.max_replicas", "must be at least min_replicas (" +
                                                               std::to_string(rp.min_replicas) + ")");
  } else if (autoscaled && !rp.max_replicas) {
    r.Error(scaling, "service.replica_policy.max_replicas", "needed where target_qps_per_replica is set");
  } else if (!autoscaled && !out.pool && rp.max_replicas && *rp.max_replicas != rp.min_replicas) {
    r.Error(policy, "service.replica_policy.target_qps_per_replica",
            "needed where max_replicas differs from min_replicas: it is what scales the service");
  }
  if (out.readiness.path.empty() || out.readiness.path[0] != '/') {
    r.Error(YamlReader::Child(n, "readiness_probe"), "service.readiness_probe.path",
            "must start with a slash (/), got \"" + out.readiness.path + "\"");
  }
  if (out.pool) {
    // A pool runs batch jobs: nothing serves requests.
    for (const char* key : {"ports", "load_balancing_policy", "tls"}) {
      if (auto v = YamlReader::Child(n, key); Given(v)) r.Error(v, JoinField("service", key), "a pool serves no requests");
    }
    if (out.readiness.post_data || !out.readiness.headers.empty()) {
      r.Error(YamlReader::Child(n, "readiness_probe"), "service.readiness_probe", "a pool's probe takes no post_data or headers");
    }
  }
  if (auto t = YamlReader::Child(n, "tls"); Given(t) && r.CheckMap(t, "service.tls", {{"keyfile", "certfile"}})) {
    for (const char* key : {"keyfile", "certfile"}) {
      const YAML::Node v = YamlReader::Child(t, key);
      auto& into = std::string_view(key) == "keyfile" ? out.tls_keyfile : out.tls_certfile;
      if (!v.IsDefined()) {
        r.Error(t, JoinField("service.tls", key), std::string("tls needs `") + key + "`");
      } else {
        into = r.String(v, JoinField("service.tls", key));
      }
    }
  }
  return out;
}

Result<std::optional<ServiceSpec>> ParseServiceSection(std::string_view yaml_text, const std::string& file) {
  ASSIGN_OR_RETURN(YAML::Node root, LoadYaml(yaml_text, file));
  const YAML::Node n = YamlReader::Child(root, "service");
  if (!Given(n)) return std::optional<ServiceSpec>();
  YamlReader r(file);
  ServiceSpec s = ReadService(r, n);
  if (auto f = YamlReader::Child(root, "failover"); Given(f)) s.failover = ReadFailover(r, f);
  RETURN_IF_ERROR(r.Finish("service section"));
  return std::optional<ServiceSpec>(std::move(s));
}

json ToJson(const ServiceSpec& s) {
  json probe = {{"path", s.readiness.path},
                {"initial_delay_seconds", s.readiness.initial_delay_seconds},
                {"timeout_seconds", s.readiness.timeout_seconds},
                {"interval_seconds", s.readiness.interval_seconds},
                {"headers", s.readiness.headers}};
  if (s.readiness.failure_timeout_seconds) probe["failure_timeout_seconds"] = *s.readiness.failure_timeout_seconds;
  if (s.readiness.post_data) probe["post_data"] = json::parse(*s.readiness.post_data);
  const ReplicaPolicy& p = s.replicas;
  json policy = {{"min_replicas", p.min_replicas}};
  if (p.max_replicas) policy["max_replicas"] = *p.max_replicas;
  if (p.num_overprovision) policy["num_overprovision"] = *p.num_overprovision;
  if (p.target_qps_per_replica) policy["target_qps_per_replica"] = *p.target_qps_per_replica;
  if (!p.target_qps_per_accelerator.empty()) policy["target_qps_per_replica"] = p.target_qps_per_accelerator;
  if (p.upscale_delay_seconds) policy["upscale_delay_seconds"] = *p.upscale_delay_seconds;
  if (p.downscale_delay_seconds) policy["downscale_delay_seconds"] = *p.downscale_delay_seconds;
  if (p.base_ondemand_fallback_replicas) policy["base_ondemand_fallback_replicas"] = *p.base_ondemand_fallback_replicas;
  if (p.dynamic_ondemand_fallback) policy["dynamic_ondemand_fallback"] = *p.dynamic_ondemand_fallback;
  if (!p.spot_placer.empty()) policy["spot_placer"] = p.spot_placer;
  json out = {{"readiness_probe", probe},
              {"replica_policy", policy},
              {"load_balancing_policy", s.load_balancing_policy},
              {"stream_timeout_seconds", s.stream_timeout_seconds}};
  if (s.port) out["ports"] = *s.port;
  if (s.pool) {
    json pool = json::object();
    auto put = [&](const char* key, const auto& v) {
      if (v) pool[key] = *v;
    };
    put("workers", s.pool->workers);
    put("min_workers", s.pool->min_workers);
    put("max_workers", s.pool->max_workers);
    put("queue_length_threshold", s.pool->queue_length_threshold);
    put("upscale_delay_seconds", s.pool->upscale_delay_seconds);
    put("downscale_delay_seconds", s.pool->downscale_delay_seconds);
    out["pool"] = pool;
  }
  if (s.failover) {
    const Failover& f = *s.failover;
    auto place = [](const Placement& p) {
      json o = {{"place", p.place}};
      if (!p.accelerator.empty()) o["accelerators"] = p.accelerator + ":" + std::to_string(p.accelerator_count);
      return o;
    };
    json alternate = place(f.alternate);
    alternate["warm"] = f.alternate.warm;
    json degraded = json::object();
    if (f.degraded.replica) {
      degraded = place(*f.degraded.replica);
      degraded["replicas"] = f.degraded.replicas;
    }
    const FixedAnswer answer = f.degraded.answer.value_or(FixedAnswer{});
    if (!f.degraded.replica) {
      degraded["answer"] = {{"status", answer.status}, {"body", answer.body}, {"retry_after", answer.retry_after_seconds}};
    }
    out["failover"] = {{"preferred", place(f.preferred)},
                       {"alternate", alternate},
                       {"hold_down_seconds", f.hold_down.count() / 1'000'000},
                       {"degraded", degraded}};
  }
  if (s.tls_keyfile || s.tls_certfile) out["tls"] = {{"keyfile", s.tls_keyfile.value_or("")}, {"certfile", s.tls_certfile.value_or("")}};
  return out;
}

}  // namespace causeway::spec
