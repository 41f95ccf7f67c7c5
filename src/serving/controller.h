// What a service's controller decides on each pass (decide, then act). From
// what is known of the service now (its spec, each replica and what its
// probe said, the health of its places, the requests HAProxy counted) it
// says which mode the service is in, how many replicas each place should
// have, and what to change: replicas to start or stop, and replicas to let
// into traffic or drain out of it. No I/O and no clock: the caller acts on
// the decision and records its transitions.
//
// The modes:
//  - starting: nothing has served yet.
//  - normal: the preferred place serves; the alternate keeps `warm`
//    replicas ready as HAProxy backup servers (they take traffic the
//    moment no preferred replica is up, before any decision is made).
//  - failed over: no preferred replica serves; the alternate does, scaled
//    to the service's target. Traffic goes back only once the preferred
//    place has had all its wanted replicas ready for `hold_down`.
//  - degraded: neither place has a ready replica; the degraded replicas
//    serve, or HAProxy's fixed answer.
//
// An update (a new revision of the task) replaces every replica: each place
// starts its wanted number on the new revision, and its outdated replicas
// leave (drained first) as the new ones become ready, so the place never
// has fewer ready replicas than it had.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/clock.h"
#include "spec/service_spec.h"

namespace causeway::serving {

enum class Role { kPreferred, kAlternate, kDegraded };
enum class Mode { kStarting, kNormal, kFailedOver, kDegraded };
std::string_view ToString(Role r);
std::string_view ToString(Mode m);

// One replica (a job of the service) as the controller sees it.
struct ReplicaView {
  std::string id;
  Role role = Role::kPreferred;
  bool running = false;    // its attempt runs (else it is being placed or launched)
  Timestamp started_at{};  // its attempt's start, when running
  // Its probe: answering since, or failing since (never both).
  std::optional<Timestamp> passing_since, failing_since;
  bool in_traffic = false;  // it has a proxy slot that is ready or draining
  bool draining = false;    // that slot drains
  int64_t in_flight = 0;    // requests it is answering now
  bool outdated = false;    // it runs a revision of the task older than the service's
};

// A place (provider or cluster) as the estate sees it.
struct PlaceView {
  bool healthy = true;
  Timestamp since{};  // healthy (or not) since
  std::string why;    // why not, when not
};

struct ServiceView {
  const spec::ServiceSpec* spec = nullptr;
  Timestamp now{};
  Mode mode = Mode::kStarting;
  std::vector<ReplicaView> replicas;
  PlaceView preferred, alternate;
  double qps = 0;  // requests per second over the last window, from HAProxy
  // The autoscaler's state from the last pass: the replica target it
  // settled on (0: none yet), and the other target the load has asked for
  // since when (scaling waits the up- or downscale delay).
  int target = 0;
  int asked_target = 0;
  std::optional<Timestamp> asked_since;
  // How outdated replicas give way after an update: rolling (each place
  // keeps only as many as it lacks ready new ones) or blue-green (a place
  // keeps all of them until its wanted number of new ones are ready).
  bool blue_green = false;
};

enum class ActionKind {
  kStart,  // start one more replica of `role`
  kStop,   // end `replica` (it takes no traffic: drained, or never in)
  kAdmit,  // let `replica` into traffic
  kDrain,  // let `replica` finish what it answers, and take no more
};
struct Action {
  ActionKind kind;
  Role role = Role::kPreferred;
  std::string replica;  // "" for kStart
  std::string reason;
};

struct Decision {
  Mode mode = Mode::kStarting;
  // Set when the mode changes: why, and who acts next.
  std::string transition, owner;
  int target = 0, asked_target = 0;
  std::optional<Timestamp> asked_since;
  int want_preferred = 0, want_alternate = 0, want_degraded = 0;
  std::vector<Action> actions;
};

Decision Decide(const ServiceView& v);

}  // namespace causeway::serving
