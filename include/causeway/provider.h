// The execution backend interface. Every provider — the simulated estate, a
// local process executor, Slurm, Kubernetes — is driven through it, so adding
// a provider is adding an adapter and estate entries, nothing else.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/job_spec.h"
#include "causeway/launch.h"
#include "causeway/status.h"

namespace causeway {

// One attempt of a job, placed on one pool of one cluster (gang: all of its
// nodes start together or not at all).
struct LaunchRequest {
  std::string job_id;
  int attempt = 1;
  std::string cluster;
  std::string pool;
  int gpus_per_node = 0;
  int num_nodes = 1;
  bool spot = false;
  std::map<std::string, std::string> env;
  std::string setup;
  std::string run;
  std::optional<Micros> time_limit;
  SimHint sim;             // used by the simulated provider only
  std::string backend_id;  // for Restore: what Launch returned for this attempt
  // Held: the backend takes the attempt's room at Launch but receives
  // nothing until Release, which only a recorded launch can ask for
  // (causeway/launch.h: the launch protocol).
  bool held = false;
  // What each node must give the job beyond GPUs, where it asked
  // (resources.cpus / memory); backends that can reserve them do.
  std::optional<int> cpus_per_node;
  std::optional<int> memory_mb_per_node;
  // For backends that run containers (Kubernetes): the job's image_id (""
  // when it names none), and the tags that tie what the backend makes to
  // the job: the keys the cost join reads (causeway-job, causeway-team,
  // causeway-owner, causeway-project; only those that are set), then the
  // job's own labels (as SkyPilot puts them on its pods).
  std::string image;
  std::map<std::string, std::string> tags;
  // The job's priority (job_spec.h: 0 to 1000, higher first), for backends
  // that rank work inside the cluster (Kueue's WorkloadPriorityClasses).
  int priority = kDefaultPriority;
};

// How an attempt ended.
enum class AttemptOutcome {
  kSucceeded,
  kFailed,          // the program exited non-zero
  kPreempted,       // spot capacity taken back by the provider
  kNodeFailure,     // a node or GPU failed under the job
  kTimeout,         // ran past its time_limit
  kProviderOutage,  // the provider went down under the job
  kCancelled,       // cancelled by Causeway (a person, a policy or a preemption)
};
std::string_view AttemptOutcomeName(AttemptOutcome o);

// Something that happened to an attempt: it ended, or (for backends that
// queue work themselves, such as Slurm) it started running, or the backend
// never received it (a launch queued by Launch that failed on the way: the
// job is placed again, and the attempt does not count against its retries),
// or the backend accepted a launch queued by Launch (or sent by Release) and
// named it (kHandedOver, with backend_id: recorded at once, so that a restart
// finds the attempt by that id even after the backend has forgotten it).
//
// A backend with a queue of its own may also say why an attempt it holds
// has not started (kWaiting, with `reason`: Kueue's "insufficient unused
// quota ..."), which explain shows; it changes nothing else.
struct ProviderEvent {
  enum class Kind { kEnded, kStarted, kNotLaunched, kHandedOver, kWaiting };
  std::string job_id;
  int attempt = 0;
  Timestamp time;
  AttemptOutcome outcome = AttemptOutcome::kSucceeded;
  int exit_code = 0;
  std::string reason;
  std::string log_tail;  // the end of the job's output, where the backend can read it
  // When the backend really started the attempt, where it knows (a Slurm
  // job may wait in Slurm's own queue after Causeway hands it over); GPU
  // time and cost are measured from then.
  std::optional<Timestamp> started;
  Kind kind = Kind::kEnded;  // kStarted: `time` is when it started; nothing else is set
  // kStarted, kHandedOver: the backend's id for the attempt, where Launch
  // could not know it yet ("" keeps the one Launch returned).
  std::string backend_id;
  // kEnded: what the attempt's probe wrote on each of its nodes, as written
  // (provenance::ParseProbe reads it; bounded by the backend as it reads),
  // where the backend runs one.
  std::vector<std::string> node_facts;
};

// One GPU's utilization at one moment.
struct GpuSample {
  std::string job_id;
  int attempt = 0;
  std::string cluster;
  int gpu = 0;  // index across the attempt's GPUs
  Timestamp time;
  int utilization_percent = 0;
};

// An attempt running on its backend, with what the idle reaper and its
// reports need to know of it.
struct ActiveAttempt {
  std::string job_id;
  int attempt = 0;
  std::string team, owner;
  std::map<std::string, std::string> labels;
  int64_t gpus = 0;
  std::string cluster;
  int64_t price_micros = 0;  // per GPU-hour
  std::optional<Timestamp> started;  // when it started running, where known
};

class ProviderAdapter {
 public:
  virtual ~ProviderAdapter() = default;
  virtual const std::string& name() const = 0;

  // Starts an attempt and returns the backend's id for it (a Slurm job id,
  // a process id, ...), which Restore is given back after a restart.
  // kResourceExhausted when the gang no longer fits, kUnavailable while the
  // provider is down. Nothing is started on error. An adapter whose backend
  // is remote returns at once and makes the call on a worker of its own
  // (the scheduler holds its lock here); a call that then fails is reported
  // by Poll as kNotLaunched. A held request (LaunchRequest::held) takes its
  // room only; Release sends it.
  virtual Result<std::string> Launch(const LaunchRequest& request, Timestamp now) = 0;
  // Sends a held launch to the backend once it is recorded, with
  // `launch.env()` added to its environment (what the request set wins).
  // Nothing for an attempt that was cancelled meanwhile, or never held.
  // Never blocks on the backend: a send that then fails comes back from Poll
  // as kNotLaunched. A backend whose attempts run nothing real (the
  // simulated estate) may ignore `held` and leave this as it is.
  virtual void Release(const RecordedLaunch& launch) { (void)launch; }
  // Re-adopts an attempt that was running before a restart of Causeway.
  virtual Status Restore(const LaunchRequest& request, Timestamp started_at) = 0;
  // Stops an attempt now; its resources are free when this returns. No event
  // is reported for it. kNotFound if it is not running.
  virtual Status Cancel(const std::string& job_id, int attempt) = 0;
  // Advances to `now` and returns the attempts that ended (and, where
  // StartsOnLaunch is false, started) since the last call, in time order.
  virtual std::vector<ProviderEvent> Poll(Timestamp now) = 0;
  // Whether an attempt runs as soon as Launch returns. A backend with a
  // queue of its own says no, and reports kStarted events; its attempts are
  // "admitted" until then.
  virtual bool StartsOnLaunch() const { return true; }
  // Whether an attempt runs the job's commands. A backend that runs
  // nothing real (the simulated estate) says no, and its launches carry no
  // environment and no scripts.
  virtual bool RunsCommands() const { return true; }

  // A handle for one of the provider's pools, or -1 if it has no such pool.
  // Resolve once; capacity queries by handle are on the scheduler's hot path.
  virtual int ResolvePool(const std::string& cluster, const std::string& pool) const = 0;
  // Whether `nodes` nodes of the pool each have `gpus_per_node` free GPUs now.
  virtual bool Fits(int pool, int gpus_per_node, int nodes) const = 0;
  // Free GPUs in the pool now.
  virtual int FreeGpus(int pool) const = 0;
  // Whether the pool's cluster can be reached now; the router places
  // nothing on a pool that is not healthy.
  virtual bool Healthy(int pool) const = 0;

  // Up to `max` bytes of an attempt's output from byte `offset` ("" at the
  // end). kNotFound when the backend keeps no output for it.
  virtual Result<std::string> ReadLog(const std::string& cluster, const std::string& job_id, int attempt,
                                      int64_t offset, int64_t max) const = 0;

  // Per-GPU utilization of every running attempt at `now`.
  virtual std::vector<GpuSample> SampleUtilization(Timestamp now) const = 0;
};

}  // namespace causeway
