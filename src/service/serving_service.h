// Services run by the server: a task with SkyPilot's `service:` section (and
// Causeway's `failover:`) kept at its replicas behind one endpoint on a real
// HAProxy. A service is kept in the directory as an entry of kind "Service"
// (its task file, team, owner, endpoint, and the jobs that are its
// replicas); every replica is a job like any other, submitted through the
// job service (admitted against quota, routed, costed, audited, with
// provenance), by the service's own actor "service/NAME".
//
// One control loop (Pass, every second) does, for each service: read its
// record and its replicas' jobs, probe the running ones on the spec's
// schedule, read HAProxy's counters, decide (serving/controller.h), then
// act: replicas submitted or cancelled, let into traffic or drained, and
// each change of mode recorded as a `service.transition` audit event with
// why and who acts next. No lock is held across a probe, a proxy command or
// a commit: the loop's state is its own, and what readers see is a copy
// published at the end of each pass.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/mutex.h"
#include "causeway/store.h"
#include "identity/tokens.h"
#include "service/job_service.h"
#include "serving/controller.h"
#include "serving/haproxy.h"
#include "serving/traffic.h"
#include "store/commit_queue.h"

namespace causeway {

inline constexpr std::string_view kServiceKind = "Service";

// One replica as the service's record keeps it: its job, its role, and the
// port it was told to listen on (CAUSEWAY_REPLICA_PORT).
struct ReplicaRef {
  std::string job;
  serving::Role role = serving::Role::kPreferred;
  int port = 0;
  int64_t revision = 1;  // the revision of the task it was started on
};

// A service as stored (the directory entry's resource, read).
struct ServiceRecord {
  std::string id;    // the entry's id
  std::string name;  // unique, [a-z0-9-], at most 40 characters
  std::string team, owner, created_by;
  std::string file;       // the task file's name, for diagnostics
  std::string spec_yaml;  // the task file as given (its latest revision)
  // The task's revision: 1 at up, raised by each update; replicas of an
  // older one are replaced as `update_mode` says (rolling or blue_green).
  int64_t revision = 1;
  std::string update_mode = "rolling";
  std::string endpoint_host = "127.0.0.1";
  int endpoint_port = 0;
  bool up = true;  // false once taken down
  std::vector<ReplicaRef> replicas;
  int64_t version = 0;
  Timestamp created_at{}, updated_at{};
};

// What a reader sees of a running service (published once per pass).
struct ReplicaStatus {
  std::string job;
  serving::Role role = serving::Role::kPreferred;
  std::string state;    // pending, starting, ready, failing, draining, ended
  int64_t revision = 1;  // the task's revision it runs
  std::string cluster;  // where its attempt runs ("" before one does)
  std::string address;  // host:port, once known
  bool in_traffic = false;
  int64_t requests = 0, errors = 0;  // HAProxy's counters for its slot
  std::string probe;                 // the last probe's answer or why it failed
};
struct ServiceSample {
  Timestamp at{};
  int64_t requests = 0, errors = 0;  // since the one before
};
struct ServiceStatus {
  ServiceRecord record;
  serving::Mode mode = serving::Mode::kStarting;
  int target = 0;
  double qps = 0;
  int64_t requests = 0, errors = 0;  // since the proxy started
  std::string proxy;                 // "running", or why there is none
  std::string refused;               // why the last replica could not be submitted ("" : it was)
  // Its places (its failover: section; empty without one), each with its
  // provider, and how long traffic waits to go back.
  std::string preferred, preferred_provider, alternate, alternate_provider;
  int warm = 0;
  int64_t hold_down_s = 0;
  std::vector<ReplicaStatus> replicas;
  std::vector<ServiceSample> history;  // the last kHistory passes' counts
  // The last transitions, newest last: when, to what, why, who acts.
  struct Transition {
    Timestamp at{};
    serving::Mode to = serving::Mode::kStarting;
    std::string reason, owner;
  };
  std::vector<Transition> transitions;
};

struct UpRequest {
  std::string spec_yaml;
  std::string file = "service.yaml";
  std::string name;  // "" : the task's name
  int port = 0;      // the endpoint's port; 0 picks a free one
};

struct UpdateRequest {
  std::string spec_yaml;
  std::string file = "service.yaml";
  std::string mode = "rolling";  // or "blue_green"
};

class ServingService {
 public:
  struct Options {
    std::string haproxy = "/usr/sbin/haproxy";
    std::string runtime_dir;  // where each service's HAProxy keeps its files
    std::string endpoint_host = "127.0.0.1";
    int slots = 8, backup_slots = 8;  // HAProxy server slots per service
    // The providers held down now (an outage drill, or an outage the
    // estate reports), since when; unset: none ever are.
    std::function<std::map<std::string, Timestamp>()> outages;
    // How often the requests each endpoint answered are recorded (a
    // `service.usage` audit event, which showback reads); the rest is
    // recorded when the service is removed.
    Micros usage_period = Micros(60'000'000);
  };
  ServingService(const Store& store, CommitQueue& queue, JobService& jobs, const Estate& estate, const Clock& clock,
                 Options options);
  ~ServingService();  // leaves every HAProxy serving (the next leader takes them over)
  ServingService(const ServingService&) = delete;
  ServingService& operator=(const ServingService&) = delete;

  // Checks the task as a job of `who` at each place its replicas may run
  // (as `causeway plan job` would), and stores the service; the loop then
  // starts its replicas. kAlreadyExists for a name that is up already.
  Result<ServiceRecord> Up(const identity::Principal& who, const UpRequest& request);
  // Gives a service a new revision of its task, checked as at up. Its
  // replicas are replaced by the loop: rolling (each outdated one leaves,
  // drained, as a new one is ready) or blue_green (the outdated ones leave
  // once all the new ones are ready). Its name, team, owner and endpoint
  // stay; a change to the endpoint's proxy (load_balancing_policy, the
  // stream timeout, the degraded answer) is refused, as it would cut what
  // the proxy is answering.
  Result<ServiceRecord> Update(const identity::Principal& who, const std::string& name, const UpdateRequest& request);
  // Takes a service down: its replicas are cancelled, its proxy stopped.
  Result<ServiceRecord> Down(const identity::Principal& who, const std::string& name);
  // The services `who` may read (their teams'), with what the loop last saw.
  Result<std::vector<ServiceStatus>> List(const identity::Principal& who);
  Result<ServiceStatus> Get(const identity::Principal& who, const std::string& name);

  // One pass over every service (the control loop's body). Only the
  // replica of the server that leads runs services (`lead`); one that does
  // not stops the proxies it started and forgets what it knew.
  void Pass(bool lead = true);

  static constexpr size_t kHistory = 300;
  static constexpr size_t kMaxServices = 256;
  static constexpr size_t kMaxReplicas = 64;  // jobs one service holds at once
  static constexpr Micros kRetryEnd = Micros(10'000'000);

 private:
  // Replica submissions in flight, shared with their completions (on the
  // commit thread), and why the last one was refused.
  struct Starts {
    Mutex mu;
    int pending GUARDED_BY(mu) = 0;
    std::string refused GUARDED_BY(mu);
  };
  struct Probed {
    std::optional<Timestamp> passing_since, failing_since;
    Timestamp last{};
    std::string answer;
  };
  // The loop's own state of one service (only Pass touches it).
  struct Runtime {
    bool resumed = false;   // its mode read back from the trail
    std::string spec_yaml;  // what the proxy was made for
    std::optional<spec::ServiceSpec> spec;
    std::unique_ptr<serving::ProxyProcess> proxy;
    std::unique_ptr<serving::Traffic> traffic;
    std::string proxy_error;
    serving::Mode mode = serving::Mode::kStarting;
    int target = 0, asked_target = 0;
    std::optional<Timestamp> asked_since;
    std::map<std::string, Probed> probes;  // by job
    std::map<std::string, std::pair<int64_t, int64_t>> counted;  // by job: requests, errors
    int64_t last_total = -1, total = 0, errors = 0;  // requests and 5xx HAProxy counted
    Timestamp last_at{};
    double qps = 0;
    std::vector<ServiceSample> history;
    std::vector<ServiceStatus::Transition> transitions;
    // Submissions of replicas not yet durable (counted down on the commit
    // thread), and replicas being ended, since when (tried again after
    // kRetryEnd if they are still listed).
    std::shared_ptr<Starts> starts = std::make_shared<Starts>();
    std::map<std::string, Timestamp> ending;
    // Requests and errors counted by the proxy up to the last usage
    // event, and when it was written.
    int64_t recorded = 0, recorded_errors = 0;
    std::optional<Timestamp> recorded_at;
    // Each place's health as last seen, to date its changes.
    serving::PlaceView preferred, alternate;
    bool seen_places = false;
  };
  // The health of `place` (a provider or cluster; "" anywhere) now, given
  // the providers held down; `last` is what was seen before.
  serving::PlaceView PlaceHealth(const std::string& place, const std::map<std::string, Timestamp>& down,
                                 const serving::PlaceView& last, Timestamp now) const;
  // What `who` may run as this task (as Up and Update check it): its
  // service section, and the preferred place's job as checked.
  struct Checked {
    spec::ServiceSpec spec;
    CheckedSubmission submission;
  };
  Result<Checked> Check(const identity::Principal& who, const std::string& spec_yaml, const std::string& file) const;
  // The proxy a service's spec asks for (its files under runtime_dir).
  serving::ProxyConfig ProxyFor(const ServiceRecord& record, const spec::ServiceSpec& spec) const;
  // One service's pass: read, observe, count, then steer (or take down).
  ServiceStatus PassOne(const ServiceRecord& record, Runtime& rt, const std::map<std::string, Timestamp>& down);
  // Its mode as the trail last recorded it (once, after a start).
  void Resume(const ServiceRecord& record, Runtime& rt) const;
  void DescribePlaces(const spec::ServiceSpec& spec, ServiceStatus& out) const;
  // Each replica as the controller sees it: its job's state, where it
  // runs, a slot once it has an address, its probe on the spec's schedule.
  // Replicas whose jobs ended are taken off.
  std::vector<serving::ReplicaView> Observe(const ServiceRecord& record, Runtime& rt,
                                            const std::map<std::string, JobRecord>& jobs, Timestamp now,
                                            std::map<std::string, ReplicaStatus>& shown);
  // What HAProxy counted: the request rate, the history, each replica's.
  void Count(const ServiceRecord& record, Runtime& rt, std::vector<serving::ReplicaView>& views,
             std::map<std::string, ReplicaStatus>& shown, Timestamp now) const;
  // Decides (serving/controller.h) and acts; records transitions and usage.
  void Steer(const ServiceRecord& record, Runtime& rt, const std::vector<serving::ReplicaView>& views,
             const std::map<std::string, Timestamp>& down, Timestamp now, ServiceStatus& out);
  // Ends every replica of a service taken down, then its proxy and record.
  void TakeDown(const ServiceRecord& record, Runtime& rt, const std::vector<serving::ReplicaView>& views, Timestamp now);
  // Queues an audit event, logging (never failing the pass) when it cannot be written.
  void Record(AuditEvent event, const std::string& service, const char* what);
  Status EnsureProxy(const ServiceRecord& record, Runtime& rt);
  // Where the replica's latest attempt runs: the host it is reached at
  // ("127.0.0.1" on the local executor, "sim" for a simulated one, "" where
  // not known), and its cluster and start.
  std::string HostOf(const std::string& job, std::string* cluster = nullptr, Timestamp* started = nullptr) const;
  // Submits one more replica of `role` (its job and its place on the
  // record in one unit); the loop sees it once durable.
  void StartReplica(const ServiceRecord& record, const spec::ServiceSpec& spec, serving::Role role, Runtime& rt);
  // Cancels the replica's job (when it has not ended) and takes it off the
  // record, in one unit.
  void EndReplica(const ServiceRecord& record, const std::string& job, const std::string& reason, Runtime& rt);
  bool Ending(const Runtime& rt, const std::string& job, Timestamp now) const;
  // The usage event for what the proxy counted since the last one (nullopt
  // when nothing was), marking it recorded.
  std::optional<AuditEvent> Usage(const ServiceRecord& record, Runtime& rt, Timestamp now) const;
  // The actor a service's replicas are submitted and ended by.
  identity::Principal Actor(const ServiceRecord& record) const;
  Result<std::vector<ServiceRecord>> Records() const;

  const Store& store_;
  CommitQueue& queue_;
  JobService& jobs_;
  const Estate& estate_;
  const Clock& clock_;
  const Options options_;
  Mutex pass_mu_;  // one pass at a time; held across its I/O, taken by nothing else
  std::map<std::string, Runtime> runtimes_ GUARDED_BY(pass_mu_);  // by service id
  Mutex view_mu_;
  std::map<std::string, ServiceStatus> published_ GUARDED_BY(view_mu_);  // by service id
};

// The stored entry of a service, and back.
DirectoryEntry ToEntry(const ServiceRecord& r);
Result<ServiceRecord> FromEntry(const DirectoryEntry& e);

}  // namespace causeway
