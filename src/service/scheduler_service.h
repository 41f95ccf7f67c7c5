// Runs the scheduler engine in the server: ticks on its own thread and
// writes every transition (job state, attempt, event and audit event, in one
// transaction each) through the commit queue. Simulated providers are built
// from the estate.
//
// Replicas: any number of servers may share one database; exactly one runs
// the scheduler at a time, holding the "scheduler" lease, renewed every
// cycle. A replica that takes the lease starts a new term: it rebuilds the
// engine from the database (re-adopting running attempts) and then follows
// the change feed (Store::ListChanges) for the submissions, cancellations
// and checkpoints other replicas accept. Fencing: every transition it writes checks the lease's
// epoch in the same transaction, and it launches nothing once its renewal
// is overdue, so a replica that lost the lease can neither dispatch nor
// record anything. With one server the lease is simply always its own.
//
// Decide, then act: a cycle ticks the engine under mu_, which holds every
// launch it makes (the backend takes the room; nothing is sent). Off mu_,
// the attempts' credentials are minted and each launch is recorded in the
// same transaction as its dispatch; only then is it released to its
// backend. A new term reads what it starts from off mu_ too. So no store
// call happens under mu_, a leader that dies in between never gets an
// attempt launched twice, and an attempt's token exists before it runs.
#pragma once

#include <atomic>
#include <chrono>
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
#include "causeway/ticker.h"
#include "dispatch/off_lock_adapter.h"
#include "providers/registry.h"
#include "scheduler/engine.h"
#include "secrets/broker.h"
#include "service/launch_record.h"
#include "identity/secret_box.h"
#include "identity/workload.h"
#include "store/commit_queue.h"
#include "telemetry/samples.h"

namespace causeway {

struct SchedulerOptions {
  std::string replica;                        // this server's name in the lease; default host:pid:random
  std::chrono::milliseconds lease_ttl{5000};  // another replica takes over at most this long after a crash
  // The provider kinds it can drive; nullptr: this build's (providers::BuiltInKinds).
  const providers::Registry* kinds = nullptr;
  // How adapters that may block are called (providers::Kind::answers_at_once);
  // their calls are timed on the service's clock (Clock::Steady) unless set.
  dispatch::OffLockOptions dispatch;
};

class SchedulerService {
 public:
  using Options = SchedulerOptions;
  SchedulerService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock, uint64_t seed,
                   Options options = {});
  ~SchedulerService();

  // Ticks every `interval` of real time on a thread of its own until Stop
  // (the first tick one interval from now).
  void Start(std::chrono::milliseconds interval);
  void Stop();
  // One cycle: take or renew the lease, then, as the leader, follow the
  // change feed, tick the engine and persist what happened (durably) before
  // returning.
  Status TickOnce();
  // Whether this replica runs the scheduler now.
  bool leader();
  const std::string& replica() const { return options_.replica; }

  // Hooks for JobService, called once the submission or cancellation is
  // committed (on the commit thread). They only leave word in an inbox that
  // the next cycle reads, so they never wait for the scheduler; word that
  // does not fit (kInboxSize) is not lost, since every cycle also reads the
  // same from the change feed. A replica that does not lead drops it: the
  // leader reads it there.
  void OnSubmitted(const JobRecord& job, const JobSpec& spec);
  void OnCancelled(const std::string& job_id);
  void OnCheckpoint(const std::string& job_id, const std::string& path);

  // The engine's explanation, or null for a job it does not hold.
  std::optional<scheduler::Explanation> Explain(const std::string& job_id);
  // kUnavailable on a replica that does not lead.
  Result<std::vector<scheduler::QueueStatus>> Queues();
  // A queue's waiting jobs in admission order (Engine::QueuedJobs).
  // kUnavailable on a replica that does not lead.
  Result<std::vector<scheduler::Engine::Queued>> QueuedJobs(const std::string& queue, size_t offset, size_t limit);
  // A copy of what the engine holds, for planning's run-ahead
  // (planning/forecast.h); the same copy while the engine has not changed.
  // kUnavailable on a replica that does not lead.
  Result<std::shared_ptr<const scheduler::EngineSnapshot>> Snapshot();
  // An attempt's output from the provider that ran it on `cluster`. Waits
  // for the backend (within the dispatcher's deadline), off the scheduler's lock.
  Result<std::string> ReadLog(const std::string& cluster, const std::string& job_id, int attempt, int64_t offset,
                              int64_t max);
  // Where attempts reach the API (CAUSEWAY_SERVER in their environment).
  void SetServerUrl(std::string url);
  // Signs a workload identity token into each real attempt's environment
  // (CAUSEWAY_WORKLOAD_TOKEN); null for none.
  void SetWorkloadIssuer(identity::WorkloadIssuer* issuer);
  // Where an ended attempt's GPU utilization comes from (the telemetry
  // samples), recorded with its end. Set before Start; unset: none.
  using UtilizationSource = std::function<telemetry::Utilization(const std::string& job_id, int attempt)>;
  void SetUtilizationSource(UtilizationSource source) { utilization_ = std::move(source); }
  // Opens jobs' sealed secrets into their real attempts' environments. Set
  // before Start; unset: a job with secrets is cancelled when placed, as
  // its secrets cannot be given to it.
  void SetSecretBox(const identity::SecretBox* box) { secrets_ = box; }
  // Reads jobs' secret references (`secrets: {X: aws-sm://...}`) for each
  // real attempt with its own federated identity. Set before Start; unset:
  // a job with references is cancelled when placed, with why.
  void SetSecretBroker(const secrets::Broker* broker) { broker_ = broker; }
  // Where registered dataset versions are verified (the dataset registry),
  // for routing; unset: the estate's replicas only.
  void SetDataPlaces(const placement::DataPlaces* places) EXCLUDES(mu_);

  // For the idle reaper: the attempts running on their backends and every
  // provider's per-GPU utilization now. Nothing on a replica that does not
  // lead.
  struct Utilization {
    Timestamp now;
    bool leader = false;  // false: nothing below is filled in
    std::vector<ActiveAttempt> running;
    std::vector<GpuSample> samples;
  };
  Utilization SampleUtilization();

  // Takes a provider with an outage drill (simulated, local, Slurm) down or
  // brings it back; audited.
  Status SetOutage(const std::string& provider, bool down, const std::string& actor);
  // The providers an outage drill holds down now, with since when.
  std::map<std::string, Timestamp> Outages() EXCLUDES(mu_);

  // A job group's tasks, in order: whether the group has started, which
  // tasks start together, whether a primary one failed.
  struct GroupTask {
    std::string id;
    JobState state = JobState::kPending;
    int attempts = 0;
    bool auxiliary = false;
  };
  // What the engine needs of `job`'s job group, from its `tasks` (null when
  // not read: then it is placed on its own). Planning hands a submission's
  // tasks over the same way (PlanService).
  static void GroupInput(const JobRecord& job, const std::vector<GroupTask>* tasks, scheduler::JobInput& input);

 private:
  // The held launches of a cycle, each with what its attempt carries, by
  // (job, attempt): recorded with their dispatches, then released.
  using Launches = std::map<std::pair<std::string, int>, std::shared_ptr<const LaunchRecord>>;
  // The lease a transition was decided under.
  struct Fence {
    std::string replica;
    int64_t epoch = 0;
  };
  // One write per transition; a dispatch records its launch (and the
  // attempt's credential) in the same unit.
  std::vector<WriteFn> Persist(const std::vector<scheduler::Transition>& transitions, const Fence& fence,
                               const Launches& launches);
  // The write that records one transition (unfenced).
  WriteFn WriteOf(const scheduler::Transition& t, const Launches& launches);
  // The attempt a transition reports, with its facts and (once ended) the
  // utilization measured while it ran.
  Attempt Measured(const scheduler::Transition& t) const;
  // A dispatch, start or end: the job's progress, its audit event, the
  // data it reads across, and (ended) its credential revoked.
  Status RecordProgress(WriteTx& tx, const scheduler::Transition& t, JobRecord job, const Attempt& attempt,
                        const LaunchRecord* launch, const placement::DataPlaces* places) const;
  static Status RecordEnd(WriteTx& tx, const scheduler::Transition& t, const Attempt& attempt, Details& details);
  static AuditEvent SchedulerEvent(const scheduler::Transition& t, std::string resource, Details details);
  // The job's secrets into `env`; kFailedPrecondition when they cannot be opened.
  Status OpenSecrets(const JobRecord& job, std::map<std::string, std::string>& env) const;
  // What the attempt of `job` dispatched to `cluster` carries: its opened
  // secrets, its workload token and its credential, minted at `now`.
  Result<LaunchCargo> Carried(const JobRecord& job, int attempt, const std::string& cluster,
                              identity::WorkloadIssuer* workload, const std::string& server_url, Timestamp now) const;
  // The most attempts carried side by side (PrepareLaunches).
  static constexpr size_t kCarriers = 16;
  // Cancels the jobs of launches that were refused, once their writes are durable.
  void CancelRefused(const Launches& launches);
  // Queues the pruning of the feed this leader followed through `followed`.
  void PruneChanges(const Fence& fence, int64_t followed);
  // Reads the jobs and mints the credentials of the launches held. Off mu_.
  Result<Launches> PrepareLaunches(const std::vector<scheduler::Transition>& transitions,
                                   identity::WorkloadIssuer* workload, const std::string& server_url) EXCLUDES(mu_);
  // Releases the launches whose writes committed (`written`, one per
  // transition); anything not written starts a new term from the database.
  // Returns the first write's error.
  Status ReleaseLaunches(const std::vector<scheduler::Transition>& transitions, const Launches& launches,
                         const std::vector<Status>& written, const Fence& fence) EXCLUDES(mu_);
  // Whether the cluster's provider runs something real (not simulated).
  bool Real(const Cluster& cluster) const;
  // The rest need mu_ held (Lead takes it).
  void Build() REQUIRES(mu_);  // fresh providers and engine
  // What a job from before this term left: its checkpoints, attempts and
  // last recorded launch.
  struct History {
    std::vector<Checkpoint> checkpoints;
    std::vector<Attempt> attempts;
    int last_launch = 0;
  };
  // What a new term starts from, read off mu_.
  // Job states by id: those of the pipeline steps jobs run after.
  using StepStates = std::map<std::string, JobState>;
  // Reads the state of each of `ids` (steps that jobs run after) not yet
  // in `out` into it.
  Status ReadStepsBefore(std::vector<std::string> ids, StepStates& out) const EXCLUDES(mu_);
  using GroupTasks = std::map<std::string, std::vector<GroupTask>>;
  // Reads the tasks of each of `groups` not yet in `out` into it.
  Status ReadGroups(std::vector<std::string> groups, GroupTasks& out) const EXCLUDES(mu_);
  struct Term {
    int64_t change_cursor = 0;  // the audit head when it was read
    Timestamp now;
    std::map<std::string, int64_t> spend;  // this month's, per team
    std::vector<std::pair<JobRecord, History>> jobs;  // every active job, earlier pipeline steps first
    StepStates before;  // the state of each step an active job runs after
    GroupTasks groups;  // the tasks of each job group an active job is one of
  };
  Result<Term> ReadTerm() EXCLUDES(mu_);
  void Recover(const Term& term) REQUIRES(mu_);  // into the fresh engine
  // `history`: the job's past (a job from before this term); null: the job
  // is taken as never launched. `before`: the state of the pipeline step
  // it runs after, when it does; `groups`: its job group's tasks, when it
  // is one.
  Status Adopt(const JobRecord& job, const History* history, const StepStates& before, const GroupTasks& groups)
      REQUIRES(mu_);
  // The engine's last word before a launch, in memory: the lease is ours.
  Result<std::map<std::string, std::string>> PrepareLaunch(const std::string& job_id, int attempt,
                                                           const Cluster& cluster, Timestamp now) REQUIRES(mu_);
  Status Lead() EXCLUDES(mu_);
  // Applies the changes after change_cursor_: `jobs` holds the submitted
  // jobs the engine did not have.
  Status FollowChanges(const std::vector<Change>& changes, const std::map<std::string, JobRecord>& jobs,
                       const StepStates& before, const GroupTasks& groups, std::vector<scheduler::Transition>& out)
      REQUIRES(mu_);

  Store& store_;
  CommitQueue& queue_;
  const Estate& estate_;
  const Clock& clock_;
  const uint64_t seed_;
  Options options_;
  // Word from the hooks, in the order it came.
  struct News {
    enum class Kind { kSubmitted, kCancelled, kCheckpoint } kind;
    scheduler::JobInput job;  // kSubmitted
    std::string job_id;
    std::string path;  // kCheckpoint
  };
  static constexpr const char* kActor = "scheduler";  // in the audit trail
  static constexpr const char* kLease = "scheduler";  // the lease's name
  static constexpr size_t kInboxSize = 100'000;
  // The change feed loses what the leader followed over an hour ago, every
  // ten minutes (PruneChanges).
  static constexpr std::chrono::minutes kPruneEvery{10};
  static constexpr std::chrono::hours kChangeRetention{1};
  void Tell(News news) EXCLUDES(inbox_mu_);
  // Applies the inbox to the engine.
  void DrainInbox(std::vector<scheduler::Transition>& out) REQUIRES(mu_) EXCLUDES(inbox_mu_);

  Mutex inbox_mu_;  // never held while taking mu_
  std::vector<News> inbox_ GUARDED_BY(inbox_mu_);
  Mutex mu_;
  // By provider name. Shared: a log read holds its adapter off mu_.
  std::map<std::string, std::shared_ptr<ProviderAdapter>> adapters_ GUARDED_BY(mu_);
  std::map<std::string, Timestamp> outages_ GUARDED_BY(mu_);  // drills holding providers down, since when
  std::unique_ptr<scheduler::Engine> engine_ GUARDED_BY(mu_);
  std::shared_ptr<const scheduler::EngineSnapshot> snapshot_ GUARDED_BY(mu_);  // the last copy taken, of engine_
  std::string server_url_ GUARDED_BY(mu_);
  identity::WorkloadIssuer* workload_ GUARDED_BY(mu_) = nullptr;
  const identity::SecretBox* secrets_ = nullptr;  // set before Start
  const secrets::Broker* broker_ = nullptr;       // set before Start
  // The dataset registry's places, for routing and for charging a job that
  // reads its data from another region (SetDataPlaces).
  std::atomic<const placement::DataPlaces*> data_places_{nullptr};
  UtilizationSource utilization_;                                  // set before Start
  std::vector<scheduler::Transition> drained_ GUARDED_BY(mu_);  // from the inbox, to persist
  bool leader_ GUARDED_BY(mu_) = false;
  int64_t epoch_ GUARDED_BY(mu_) = 0;  // the lease's, while leading
  std::chrono::steady_clock::time_point lease_deadline_ GUARDED_BY(mu_) {};  // launch only before this
  std::chrono::steady_clock::time_point lease_asked_ GUARDED_BY(mu_) {};  // the last AcquireLease
  int64_t change_cursor_ GUARDED_BY(mu_) = 0;  // the last change followed (an audit sequence number)
  SteadyTime pruned_at_ GUARDED_BY(mu_) {};     // when the followed part of the feed was last pruned
  Ticker ticker_;
};

}  // namespace causeway
