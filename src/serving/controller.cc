#include "serving/controller.h"

#include <algorithm>
#include <cmath>

namespace causeway::serving {
namespace {

// A spec's seconds as a duration, bounded (a spec may say 1e300): at most a
// year, never negative.
Micros Seconds(double s) { return Micros(static_cast<int64_t>(std::clamp(s, 0.0, 365.0 * 86400) * 1'000'000)); }

// SkyPilot's defaults for the autoscaler's delays.
constexpr double kUpscaleDelay = 300, kDownscaleDelay = 1200;
// A replica failing its probe is replaced after this many probe periods
// when the spec gives no consecutive_failure_threshold_timeout (SkyPilot
// replaces one after three failures in a row).
constexpr int kFailuresBeforeReplacing = 3;

bool Ready(const ReplicaView& r) { return r.running && r.passing_since && !r.failing_since; }

std::string Secs(Micros d) { return std::to_string(d.count() / 1'000'000) + " s"; }

// The replica target the load asks for now.
int AskedTarget(const spec::ServiceSpec& s, double qps) {
  const spec::ReplicaPolicy& p = s.replicas;
  if (!p.target_qps_per_replica || *p.target_qps_per_replica <= 0 || !p.max_replicas) return p.min_replicas;
  // Bounded before the cast: a tiny target must not overflow it.
  const int need = static_cast<int>(std::ceil(std::min(qps / *p.target_qps_per_replica, 1e6)));
  return std::clamp(need, p.min_replicas, std::max(p.min_replicas, *p.max_replicas)) + p.num_overprovision.value_or(0);
}

// Why `r` must be replaced now, or "".
std::string Broken(const ReplicaView& r, const spec::ReadinessProbe& probe, Timestamp now) {
  if (!r.running) return "";
  if (r.failing_since) {
    const Micros limit = probe.failure_timeout_seconds ? Seconds(*probe.failure_timeout_seconds)
                                                       : Seconds(probe.interval_seconds * kFailuresBeforeReplacing);
    if (now - *r.failing_since >= limit) return "it has failed its readiness probe for " + Secs(now - *r.failing_since);
  } else if (!r.passing_since && now - r.started_at > Seconds(probe.initial_delay_seconds)) {
    return "it did not answer its readiness probe within " + Secs(Seconds(probe.initial_delay_seconds)) +
           " of starting";
  }
  return "";
}

}  // namespace

std::string_view ToString(Role r) {
  switch (r) {
    case Role::kPreferred: return "preferred";
    case Role::kAlternate: return "alternate";
    case Role::kDegraded: return "degraded";
  }
  return "preferred";
}

std::string_view ToString(Mode m) {
  switch (m) {
    case Mode::kStarting: return "starting";
    case Mode::kNormal: return "normal";
    case Mode::kFailedOver: return "failed_over";
    case Mode::kDegraded: return "degraded";
  }
  return "starting";
}

Decision Decide(const ServiceView& v) {
  const spec::ServiceSpec& s = *v.spec;
  const spec::Failover failover = s.failover.value_or(spec::Failover{});
  const bool has_alternate = s.failover.has_value();
  Decision d;

  // 1. The autoscaler: a new target once the load has asked for it for the
  // up- or downscale delay.
  d.target = v.target > 0 ? v.target : AskedTarget(s, 0);
  const int asked = AskedTarget(s, v.qps);
  if (asked == d.target) {
    d.asked_target = 0;
  } else {
    const bool same = v.asked_target == asked && v.asked_since;
    d.asked_target = asked;
    d.asked_since = same ? v.asked_since : std::optional<Timestamp>(v.now);
    const double delay = asked > d.target ? s.replicas.upscale_delay_seconds.value_or(kUpscaleDelay)
                                          : s.replicas.downscale_delay_seconds.value_or(kDownscaleDelay);
    if (v.now - *d.asked_since >= Seconds(delay)) {
      d.target = asked;
      d.asked_target = 0;
      d.asked_since.reset();
    }
  }

  // A replica that leaves: out of traffic first (drained), then stopped
  // once it answers nothing.
  std::vector<std::string> leaving;
  auto leave = [&](const ReplicaView& r, const std::string& why) {
    leaving.push_back(r.id);
    if (r.in_traffic && !r.draining) {
      d.actions.push_back({ActionKind::kDrain, r.role, r.id, "replica " + r.id + " leaves: " + why});
    } else if (!r.in_traffic || r.in_flight == 0) {
      d.actions.push_back({ActionKind::kStop, r.role, r.id, "replica " + r.id + " leaves: " + why});
    }
  };

  // 2. Replicas that must go: failing too long, or never ready in time.
  std::vector<const ReplicaView*> live;
  for (const ReplicaView& r : v.replicas) {
    if (std::string why = Broken(r, s.readiness, v.now); !why.empty()) {
      leave(r, why + " (it is replaced)");
      continue;
    }
    live.push_back(&r);
    // A failing probe takes it out of traffic at once.
    if (r.failing_since && r.in_traffic && !r.draining) {
      d.actions.push_back({ActionKind::kDrain, r.role, r.id, "replica " + r.id + " fails its readiness probe"});
    }
  }
  auto ready = [&](Role role) {
    return static_cast<int>(std::count_if(live.begin(), live.end(), [&](const ReplicaView* r) {
      return r->role == role && Ready(*r);
    }));
  };
  const int preferred_ready = ready(Role::kPreferred), alternate_ready = ready(Role::kAlternate);

  // 3. The mode.
  d.mode = v.mode;
  const std::string preferred_name = failover.preferred.place.empty() ? "the preferred place" : failover.preferred.place;
  const std::string alternate_name = failover.alternate.place.empty() ? "the alternate place" : failover.alternate.place;
  auto lost_reason = [&] {
    return v.preferred.healthy
               ? "no replica at " + preferred_name + " answers its readiness probe"
               : preferred_name + " is unavailable (" + (v.preferred.why.empty() ? "unhealthy" : v.preferred.why) + ")";
  };
  auto lost_owner = [&] {
    return std::string(v.preferred.healthy ? "next action: the service's team (its replicas fail their probe)"
                                           : "next action: the provider (hardware or an outage)");
  };
  auto set_mode = [&](Mode m, std::string why, std::string owner) {
    if (m == d.mode) return;
    d.transition = std::string(ToString(d.mode)) + " -> " + std::string(ToString(m)) + ": " + why;
    d.owner = std::move(owner);
    d.mode = m;
  };
  // When the preferred place has had every wanted replica ready: the
  // latest of their starts of answering, and of the place's recovery.
  auto preferred_back_since = [&]() -> std::optional<Timestamp> {
    if (!v.preferred.healthy || preferred_ready < std::max(1, std::min(d.target, s.replicas.min_replicas))) {
      return std::nullopt;
    }
    Timestamp since = v.preferred.since;
    for (const ReplicaView* r : live) {
      if (r->role == Role::kPreferred && Ready(*r)) since = std::max(since, *r->passing_since);
    }
    return since;
  };
  switch (v.mode) {
    case Mode::kStarting:
      if (preferred_ready > 0) {
        set_mode(Mode::kNormal, "a replica at " + preferred_name + " answers its readiness probe", "");
      } else if (!v.preferred.healthy && alternate_ready > 0) {
        set_mode(Mode::kFailedOver, lost_reason(), lost_owner());
      }
      break;
    case Mode::kNormal:
      if (preferred_ready == 0) {
        if (alternate_ready > 0) {
          set_mode(Mode::kFailedOver, lost_reason() + "; " + alternate_name + " serves", lost_owner());
        } else {
          set_mode(Mode::kDegraded, lost_reason() + ", and none at " + alternate_name + " is ready",
                   "next action: the platform team (no capacity at either place)");
        }
      }
      break;
    case Mode::kFailedOver:
      if (auto back = preferred_back_since(); back && v.now - *back >= failover.hold_down) {
        set_mode(Mode::kNormal,
                 preferred_name + " has served its replicas' probes for " + Secs(v.now - *back) + " (hold-down " +
                     Secs(failover.hold_down) + ")",
                 "");
      } else if (alternate_ready == 0 && preferred_ready == 0) {
        set_mode(Mode::kDegraded, "no replica at " + preferred_name + " or " + alternate_name + " is ready",
                 "next action: the platform team (no capacity at either place)");
      }
      break;
    case Mode::kDegraded:
      if (preferred_ready > 0 && v.preferred.healthy) {
        set_mode(Mode::kNormal, "a replica at " + preferred_name + " answers its readiness probe again", "");
      } else if (alternate_ready > 0) {
        set_mode(Mode::kFailedOver, "a replica at " + alternate_name + " answers its readiness probe", lost_owner());
      }
      break;
  }

  // 4. How many each place should have.
  d.want_preferred = d.target;
  const int warm = has_alternate ? failover.alternate.warm : 0;
  const bool away = d.mode == Mode::kFailedOver || d.mode == Mode::kDegraded;
  d.want_alternate = has_alternate ? (away ? std::max(warm, d.target) : warm) : 0;
  d.want_degraded = d.mode == Mode::kDegraded && failover.degraded.replica ? failover.degraded.replicas : 0;

  // 5. Each role to its wanted count of replicas on the current revision:
  // start what is missing; for a surplus, first those not ready, then the
  // newest; a replica in traffic is drained first and stopped once it
  // answers nothing. An outdated replica (an update) stays only while it is
  // ready and the new ones are not: rolling, as many as the ready new ones
  // fall short of the wanted number; blue-green, all until none falls short.
  auto by_leaving_order = [](const ReplicaView* a, const ReplicaView* b) {
    if (Ready(*a) != Ready(*b)) return !Ready(*a);
    return a->started_at > b->started_at;
  };
  for (Role role : {Role::kPreferred, Role::kAlternate, Role::kDegraded}) {
    const int want = role == Role::kPreferred ? d.want_preferred
                     : role == Role::kAlternate ? d.want_alternate
                                                : d.want_degraded;
    std::vector<const ReplicaView*> mine, outdated;
    for (const ReplicaView* r : live) {
      if (r->role == role) (r->outdated ? outdated : mine).push_back(r);
    }
    for (int i = static_cast<int>(mine.size()); i < want; ++i) {
      d.actions.push_back({ActionKind::kStart, role, "",
                           std::string(ToString(role)) + " replicas: " + std::to_string(mine.size()) + " of " +
                               std::to_string(want) + " wanted"});
    }
    const auto ready_in = [](const std::vector<const ReplicaView*>& rs) {
      return static_cast<int>(std::count_if(rs.begin(), rs.end(), [](const ReplicaView* r) { return Ready(*r); }));
    };
    const int mine_ready = ready_in(mine), outdated_ready = ready_in(outdated);
    const int short_of = std::max(0, want - mine_ready);
    const int keep = v.blue_green ? (short_of > 0 ? outdated_ready : 0) : std::min(short_of, outdated_ready);
    std::stable_sort(outdated.begin(), outdated.end(), by_leaving_order);
    for (size_t i = 0; i + static_cast<size_t>(keep) < outdated.size(); ++i) {
      leave(*outdated[i], "the service was updated: " + std::to_string(mine_ready) + " of " + std::to_string(want) +
                              " " + std::string(ToString(role)) + " replicas of its new revision are ready");
    }
    if (static_cast<int>(mine.size()) <= want) continue;
    std::stable_sort(mine.begin(), mine.end(), by_leaving_order);
    for (size_t i = 0; i < mine.size() - static_cast<size_t>(want); ++i) {
      leave(*mine[i], std::string(ToString(role)) + " replicas: " + std::to_string(mine.size()) + ", " +
                          std::to_string(want) + " wanted");
    }
  }
  // 6. Into traffic: ready replicas not in it yet. The preferred place's
  // only in the normal mode (so traffic goes back only after hold-down);
  // the alternate's and degraded ones always (they are HAProxy backup
  // servers, used only while no preferred replica is up).
  for (const ReplicaView* r : live) {
    if (!Ready(*r) || (r->in_traffic && !r->draining)) continue;
    if (std::find(leaving.begin(), leaving.end(), r->id) != leaving.end()) continue;
    if (r->role == Role::kPreferred && d.mode != Mode::kNormal) continue;
    d.actions.push_back({ActionKind::kAdmit, r->role, r->id, "replica " + r->id + " answers its readiness probe"});
  }

  return d;
}

}  // namespace causeway::serving
