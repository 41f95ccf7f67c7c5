// The scheduler: admission under team quotas (src/quota), routing
// (src/placement) and dispatch to providers, on whatever time it is given.
// The server drives it in (scaled) real time and persists what it reports;
// tests, planning and benchmarks drive the very same engine in virtual time.
//
// Each Tick(now):
//   1. collects the attempts that ended from every provider; succeeded and
//      failed jobs are done, preempted ones (spot, node failure, outage) go
//      back to their queue;
//   2. checks team budgets for the month;
//   3. admits pending jobs: queues in order of fair share (lowest dominant
//      share first), each queue's jobs by priority then age. A job that does
//      not fit does not block the ones behind it, unless its queue is
//      strict FIFO; a pass tries at most EngineOptions::queue_depth jobs of
//      a queue that do not start. A job may preempt lower-priority work of
//      its own queue, and a queue within its nominal quota reclaims what
//      others borrowed.
//      The tasks of a job group start in the same Tick or none does.
//   Before admission, auxiliary tasks of job groups whose primary tasks
//   have ended are ended once their termination delay has passed.
//
// Not thread-safe: the owner serializes calls.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/job_spec.h"
#include "causeway/provider.h"
#include "causeway/records.h"
#include "placement/router.h"
#include "quota/quota.h"

namespace causeway::scheduler {

// The routing decision of one attempt: where it went and why. Kept with the
// attempt (its JSON form, scheduler/explain_json.h) for explain.
struct Placement {
  std::string cluster, pool, provider, zone, flavor;
  int64_t gpus = 0;
  bool reserved = false;
  int64_t borrowed = 0;            // GPUs borrowed from the cohort
  std::string price_per_gpu_hour;  // an amount in the estate's currency
  bool data_local = false;
  std::string why;
  bool empty() const { return cluster.empty(); }
};

// Why a job is where it is (Engine::Explain).
struct Explanation {
  struct Alternative {
    std::string accelerators;
    int nodes = 1;
    std::string flavor;
    int64_t gpus = 0;
    std::string quota_verdict;  // fits, borrows, needs_reclaim, no_fit; "" once running
    std::string quota_reason;
  };
  struct Candidate {
    std::string cluster, accelerators, pool;
    bool eligible = false;
    // Eligible candidates:
    bool reserved = false;
    std::string price_per_gpu_hour;
    bool data_local = false;
    std::string data;  // "data local", or what reading remotely moves and costs
    int load_percent = 0;
    std::string reason;  // why not, for the others
  };
  std::string job;
  std::string state;    // pending, admitted, running
  std::string waiting;  // why it waits, "" when it does not
  std::string queue;    // "" when it has none
  int64_t position = 0, queued = 0;  // while queued: its place in the queue's admission order (1 is next), of how many
  std::optional<Placement> placement;
  std::vector<Alternative> alternatives;
  std::vector<Candidate> candidates;
};

// One queue's usage (Engine::Queues).
struct QueueStatus {
  struct Flavor {
    std::string flavor;
    int64_t nominal = 0, used = 0, borrowing = 0;
  };
  struct Budget {
    std::string monthly, spent, currency;  // amounts
    bool exhausted = false;
  };
  std::string name, team, cohort;
  int weight = 1;
  std::vector<Flavor> flavors;
  int64_t pending = 0, running = 0;
  int64_t dominant_share_permille = 0;
  std::optional<Budget> budget;
};

// What the engine reports, for the owner to persist and audit.
struct Transition {
  enum class Kind {
    kDispatched,       // an attempt was handed to a cluster; new_state: running, or admitted where it queues first
    kStarted,          // an admitted attempt started running on its cluster
    kAttemptEnded,     // an attempt ended; new_state says what became of the job
    kBudgetWarning,    // a team passed its soft budget limit this month
    kBudgetExhausted,  // a team reached its monthly budget: no new admissions
    kHandedOver,       // an attempt's backend named it (backend_id) once it had it; the job's state is unchanged
    kAbandoned,        // cancelled by the scheduler while not running: a pipeline step that will never run (the
                       // step before it did not succeed), or a job group's auxiliary task once its primary ones ended
  };
  Kind kind = Kind::kDispatched;
  std::string job_id;
  std::string team;
  int attempt = 0;
  Timestamp time;
  JobState new_state = JobState::kPending;
  std::string message;  // in words
  // Attempt facts.
  std::string cluster;
  std::string pool;
  std::string backend_id;  // the provider's id for the attempt
  std::string flavor;
  int64_t gpus = 0;
  int nodes = 0;  // of the attempt's gang
  bool reserved = false;
  int64_t borrowed = 0;
  int64_t price_micros = 0;  // per GPU-hour
  Timestamp started;
  AttemptOutcome outcome = AttemptOutcome::kSucceeded;
  int exit_code = 0;
  int64_t gpu_seconds = 0;   // this attempt
  int64_t cost_micros = 0;   // this attempt
  std::string resumed_from;   // the checkpoint the attempt started from
  std::string failure_class;  // kAttemptEnded: recovery::FailureClassName
  std::string owner;          // kAttemptEnded, failures: who acts next (researcher, platform, provider)
  std::string preempted_by;  // set when Causeway preempted the attempt for this job
  bool reclaimed = false;    // ...to reclaim quota the victim's queue had borrowed
  // Job totals after this transition.
  int attempts = 0;
  int64_t total_gpu_seconds = 0;
  int64_t total_cost_micros = 0;
  Placement placement;  // the routing decision of the attempt, for explain
  std::vector<std::string> node_facts;  // kAttemptEnded: ProviderEvent::node_facts
  // kDispatched with EngineOptions::hold_launches: the launch its backend
  // holds, for the owner to record and then release (causeway/launch.h).
  std::optional<HeldLaunch> launch;
};

// What a job asks of a pool, as a key: jobs with equal keys (and queue)
// fit or do not fit alike (team, nodes, accelerators, CPUs, memory,
// software, residency, data, mounts); priority and run time are not part.
std::string DemandKey(const JobSpec& spec);

// A job's spec as the engine holds it: never changed once given, so
// shared rather than copied (a snapshot of 10,000 jobs copies none), with
// its DemandKey made once.
class SharedSpec {
 public:
  SharedSpec() : p_(Empty()) {}
  SharedSpec(JobSpec spec) : p_(std::make_shared<const Held>(std::move(spec))) {}  // implicit: a JobInput takes a JobSpec
  const JobSpec& operator*() const { return p_->spec; }
  const JobSpec* operator->() const { return &p_->spec; }
  const std::string& demand() const { return p_->demand; }

 private:
  struct Held {
    explicit Held(JobSpec s) : spec(std::move(s)), demand(DemandKey(spec)) {}
    JobSpec spec;
    std::string demand;
  };
  static const std::shared_ptr<const Held>& Empty() {
    static const auto* empty = new std::shared_ptr<const Held>(std::make_shared<const Held>(JobSpec{}));
    return *empty;
  }
  std::shared_ptr<const Held> p_;
};

// A job handed to the engine.
struct JobInput {
  std::string id;
  SharedSpec spec;
  Timestamp created_at;
  int attempts = 0;  // attempts already made (on recovery)
  int64_t gpu_seconds = 0;
  int64_t cost_micros = 0;
  std::string resume_from;  // the latest registered checkpoint, if any
  std::string resume_cluster;  // the cluster that wrote it, if known
  // A pipeline's step runs only once the step before it succeeded: that
  // job's id ("" for none), and its state as the owner last read it. The
  // engine waits for one it holds; one that ended otherwise than succeeded,
  // or that it does not hold while unfinished, means this step never runs
  // (Transition::kAbandoned).
  std::string after;
  JobState after_state = JobState::kPending;
  // A job group's task ("" for none): the group's id and name. Until one of
  // its tasks has started, `gang` lists the tasks (ids, this one included)
  // that start together, all or none; a task handed over with an empty
  // `gang` is placed on its own (a retry, or after a restart). An
  // auxiliary task is ended once the group's primary tasks it holds have
  // all ended: `termination_delay` after, or at once when
  // `primary_failed` or one of them did not succeed.
  std::string group;
  std::string group_name;
  std::vector<std::string> gang;
  bool auxiliary = false;
  Micros termination_delay{0};
  bool primary_failed = false;
  // Not admitted before this moment: a retry backing off (a snapshot's job).
  Timestamp not_before;
};

// A running attempt handed back to the engine after a restart.
struct RunningAttempt {
  int attempt = 0;
  std::string cluster;
  std::string pool;
  std::string backend_id;
  std::string flavor;
  bool reserved = false;
  Timestamp started;
  bool admitted_only = false;  // handed over but not yet seen running
  int64_t gpus = 0;            // GPUs it held in all; 0 when not known
};

// A copy of what an engine holds, for planning's run-ahead
// (planning/forecast.h): each job as a new engine takes it, a queued one
// to Submit, one holding capacity to Restore with its attempt, in an order
// a new engine accepts (a pipeline step after the step it waits for).
struct HeldJob {
  JobInput input;
  std::optional<RunningAttempt> attempt;  // while it holds capacity
};
struct EngineSnapshot {
  Timestamp now;         // the engine's last Tick
  uint64_t version = 0;  // Engine::version() when taken
  std::vector<HeldJob> jobs;
  std::map<std::string, int64_t> month_spend;  // of attempts ended this month, per team
};

struct EngineOptions {
  // Every launch is held (LaunchRequest::held) and reported with its
  // Transition::launch: the owner records each one, then releases it (the
  // server does; causeway/launch.h). Off: launched at once, as planning,
  // benchmarks and tests want.
  bool hold_launches = false;
  // Each admission pass tries at most this many jobs of one queue that do
  // not start (Slurm bounds its passes alike: default_queue_depth,
  // bf_max_job_test), so a pass's work stays bounded however many jobs
  // wait; a job further back waits for those ahead of it to start or
  // leave. 0: no bound.
  size_t queue_depth = 500;
  // A pass leaves a queue once every job left in it would be refused on a
  // verdict its demand already got in the pass. Off, it walks on to refuse
  // them one by one: the same decisions, slower (tests compare the two).
  bool leave_known_queues = true;
};

class Engine : private placement::CapacityView {
 public:
  // `providers` maps provider names of the estate to their adapters; the
  // engine does not own them.
  Engine(const Estate& estate, std::map<std::string, ProviderAdapter*> providers, EngineOptions options = {});

  // Where registered dataset versions have verified replicas (routing's
  // data locality); null: the estate's replicas only.
  void SetDataPlaces(const placement::DataPlaces* places) { router_.SetDataPlaces(places); }

  // Queues a new job, or holds it until the pipeline step before it has
  // succeeded. kInvalidArgument if its team has no queue (when queues are
  // configured) or it asks for no GPUs the estate has.
  Status Submit(JobInput job);
  // Re-adopts a job whose attempt was running before a restart.
  Status Restore(JobInput job, const RunningAttempt& attempt);
  // Room for `jobs` jobs in all, made at once (before a known number of
  // Submit and Restore calls).
  void Reserve(size_t jobs) { jobs_.reserve(jobs); }
  // Records the job's latest checkpoint, written by its latest attempt: its
  // next attempt resumes from it (CAUSEWAY_RESUME_FROM), on a cluster that
  // can read it. kNotFound if the engine does not hold the job.
  Status SetCheckpoint(const std::string& job_id, const std::string& path);
  // Removes a job. A running attempt is stopped and reported (kAttemptEnded,
  // outcome kCancelled, new_state kCancelled), and the pipeline steps
  // waiting for it are abandoned. kNotFound if unknown.
  Result<std::vector<Transition>> Cancel(const std::string& job_id, Timestamp now);

  // Budgets are charged from the ledger: what each team's attempts that
  // ended this month (UTC) cost, as recorded, for an engine that starts
  // mid-month (a restart, a new leader). Attempts that end from here on are
  // added as they end; running ones count as they run.
  void SeedMonthSpend(Timestamp now, std::map<std::string, int64_t> spend_micros);
  // The first moment of `t`'s month (UTC).
  static Timestamp MonthStart(Timestamp t);

  std::vector<Transition> Tick(Timestamp now);

  // Called last before every launch, during Tick. It may refuse (nothing
  // is launched and the job stays queued, with the reason as its wait) or
  // return environment to add (values the job sets itself win). It runs
  // under the owner's lock, so it must not wait on anything: the server
  // only checks that its lease is still surely its own here, and records
  // the launch and mints the attempt's credentials after the tick, before
  // releasing it (EngineOptions::hold_launches).
  using LaunchPreparer = std::function<Result<std::map<std::string, std::string>>(
      const std::string& job_id, int attempt, const Cluster& cluster, Timestamp now)>;
  void SetLaunchPreparer(LaunchPreparer fn) { prepare_launch_ = std::move(fn); }
  // Whether the engine holds the job (queued or running).
  bool Has(const std::string& job_id) const { return jobs_.count(job_id) > 0; }

  // Why the job is where it is: the quota decision and every candidate
  // cluster with its verdict, in words. nullopt for a job it does not hold.
  std::optional<Explanation> Explain(const std::string& job_id) const;
  // Queue usage for `causeway queues`.
  std::vector<QueueStatus> Queues() const;

  // Every job it holds, copied (planning's run-ahead). CPU work only, in
  // proportion to the jobs held.
  EngineSnapshot Snapshot() const;
  // Changes whenever what Snapshot copies changes.
  uint64_t version() const { return version_; }
  // A queued job's place in its queue's admission order: {position (1 is
  // next), jobs queued}; nullopt for a job that is not queued.
  std::optional<std::pair<int64_t, int64_t>> QueuePosition(const std::string& job_id) const;
  // The jobs queued in `queue`, in admission order from position offset+1,
  // at most `limit` of them: {job id, priority, submitted}. Empty for a
  // queue it does not know. Walks `offset` entries, so callers bound it.
  struct Queued {
    std::string id;
    int priority = 0;
    Timestamp created_at;
  };
  std::vector<Queued> QueuedJobs(const std::string& queue, size_t offset, size_t limit) const;

  size_t pending() const { return pending_count_; }
  size_t running() const { return running_.size(); }

  // The attempts running on their backends (not only admitted) that hold
  // GPUs, for the idle reaper: CPU-only attempts have no GPU to be idle.
  std::vector<ActiveAttempt> RunningAttempts() const;
  uint64_t decisions() const { return decisions_; }

 private:
  struct Job {
    JobInput input;
    const JobSpec& spec() const { return *input.spec; }
    int queue = -1;
    bool running = false;        // holds capacity: admitted to a backend or running there
    bool admitted_only = false;  // handed to a backend that has not started it yet
    std::string backend_waiting;  // why the backend holds it, as it last said (kWaiting)
    // The attempt in flight.
    int attempt = 0;
    ProviderAdapter* provider = nullptr;
    std::string cluster;
    std::string pool;
    std::string backend_id;
    std::string resumed_from;  // the checkpoint the running attempt started from
    int flavor = -1;
    std::string flavor_name;
    int64_t gpus = 0;
    bool reserved = false;
    int reservation = -1;
    int64_t borrowed = 0;
    int64_t price_micros = 0;
    Timestamp started;
    int pool_id = -1;
    Timestamp not_before;  // recovery backoff: not admitted before this time
    std::string avoid;     // the cluster its last attempt failed on (infrastructure), tried last
    // While queued: its demand class (index into classes_; -1 when not
    // queued), whether it is kept apart from its class's count (see
    // Enqueue), and the last pass begun when it was queued.
    int32_t cls = -1;
    bool apart = false;
    uint64_t queued_after_pass = 0;
    int unlaunched = 0;    // attempts the backend never received (this term): not retries
    // Why it is pending: a code on the hot path, words only when needed.
    enum class Wait { kNew, kQuota, kNoRoom, kBudget, kOther } wait = Wait::kNew;
    std::string waiting;       // for kOther: the words
    Placement placement;  // the last routing decision
  };
  using JobMap = std::unordered_map<std::string, Job>;
  // Live facts of one pool (index: placement::PoolRef::id).
  struct Slot {
    ProviderAdapter* adapter = nullptr;
    int handle = -1;
    std::vector<int> reservations;  // indices into estate.reservations
  };
  // A queued job, in admission order: higher priority, then older, then
  // by id. `job` saves a lookup; ordering ignores it.
  struct PendingKey {
    int neg_priority = 0;
    int64_t created = 0;
    std::string id;
    Job* job = nullptr;
    // The job's demand class and whether it is kept apart (Job::cls,
    // Job::apart): read here, a known verdict needs no look at the job.
    mutable int32_t cls = -1;
    mutable bool apart = true;
    bool operator<(const PendingKey& o) const {
      return std::tie(neg_priority, created, id) < std::tie(o.neg_priority, o.created, o.id);
    }
  };

  // CapacityView.
  bool Healthy(const placement::PoolRef& pool) const override;
  bool Fits(const placement::PoolRef& pool, int gpus_per_node, int nodes) const override;
  int FreeGpus(const placement::PoolRef& pool) const override;
  int ReservedFree(const placement::PoolRef& pool) const override;
  // Why `j` is waiting, in words.
  std::string WaitingReason(const Job& j) const;
  void AddRunning(Job& j);
  void RemoveRunning(Job& j);
  // The pipeline steps waiting for job `id`, which has ended: queued when it
  // `succeeded`, else abandoned (with theirs in turn) and reported.
  void StepEnded(const std::string& id, bool succeeded, const std::string& how, Timestamp now,
                 std::vector<Transition>& out);
  // The report of `j`, not running, cancelled by the scheduler (kAbandoned).
  Transition CancelledWaiting(const Job& j, Timestamp now, std::string message) const;
  // Stops `j`'s running attempt and reports it ended, the job cancelled.
  Transition CancelRunning(Job& j, Timestamp now, const std::string& reason);
  // Reports pipeline step `it` as never to run (`why`), removes it and
  // abandons the steps waiting for it.
  void Abandon(JobMap::iterator it, const std::string& why, Timestamp now, std::vector<Transition>& out);

  // Job groups: the tasks the engine holds, by group id.
  struct Group {
    std::string name;
    std::vector<std::string> gang;  // to start together; empty once one has started
    bool started = false;
    std::set<std::string> primary, auxiliary;  // held tasks
    std::map<std::string, Micros> delay;       // auxiliary task -> its termination delay
    bool primary_failed = false;
    std::optional<Timestamp> primaries_ended;  // when the engine saw the last primary task end
    uint64_t tried = 0;                        // the Tick that last tried the gang
  };
  void JoinGroup(const Job& j);
  // Task `j` leaves its group (it ended, `succeeded` or not, or was
  // cancelled); when it was the last primary task, the auxiliary ones are
  // due to end.
  void LeaveGroup(const Job& j, bool succeeded);
  // Tries to start every task of `g`'s gang at once: each is placed as it
  // would be alone (no preemption), launched held, and all are undone when
  // one does not fit. Sets each task's wait on failure.
  bool TryAdmitGang(Group& g, Timestamp now, std::vector<Transition>& out);
  // Undoes a Dispatch made by TryAdmitGang (its held launch is cancelled),
  // leaving `j` as it was `before` it, pending.
  void Undispatch(Job& j, Job before);
  // Ends the auxiliary tasks whose group's primary tasks have ended, once
  // their delay has passed.
  void EndAuxiliaries(Timestamp now, std::vector<Transition>& out);

  PendingKey KeyOf(Job& j) const;
  // Index into pending_ and running_prio_: the queue, or the last slot for
  // jobs of an estate without queues.
  int QueueSlot(const Job& j) const;
  void Enqueue(Job& j);
  void Dequeue(Job& j);
  // Tick's steps: what a backend says of an attempt (handed over, started,
  // ended), and admission of the pending jobs, the queue with the lowest
  // dominant share first.
  void Observe(const ProviderEvent& ev, std::vector<Transition>& out);
  void HandedOver(Job& j, const ProviderEvent& ev, std::vector<Transition>& out);
  void Started(Job& j, const ProviderEvent& ev, std::vector<Transition>& out);
  // Ends the attempt and retries it or finishes the job (erasing `it`).
  void Ended(JobMap::iterator it, const ProviderEvent& ev, std::vector<Transition>& out);
  void AdmitPending(Timestamp now, std::vector<Transition>& out);
  // Tries to admit and dispatch `j`; on failure sets j.waiting.
  bool TryAdmit(Job& j, Timestamp now, std::vector<Transition>& out);
  // Whether this pass already found no room for the queued job's demand
  // at its priority or above (never for a job kept apart). Its wait is
  // then that verdict (WaitOf).
  bool KnownNoRoom(const PendingKey& queued) const;
  // Records that this pass found no room for `j`'s demand, and why.
  void RememberNoRoom(const Job& j, Job::Wait why);
  // Whether every job of queue `slot` from `next` on would be refused by
  // KnownNoRoom in this pass: all its counted jobs are of demands already
  // found no room, and none kept apart is still ahead.
  bool RestKnownNoRoom(size_t slot, std::set<PendingKey>::const_iterator next) const;
  // Why `j` waits: its own last verdict, or its demand's verdict in the
  // last pass when that pass left it untried (RestKnownNoRoom).
  Job::Wait WaitOf(const Job& j) const;
  // Where a job could go: the option, its quota flavor, and how far past
  // nominal its queue would borrow.
  struct Pick {
    placement::Option option;
    int flavor = -1;
    int64_t borrowed = 0;
  };
  // The cheapest alternative of `j` that quota and capacity allow now, and
  // whether quota refused any.
  struct Choice {
    std::optional<Pick> best;
    bool quota_blocked = false;
  };
  Choice Cheapest(const Job& j, const placement::Resume* resume) const;
  // Room for `j` made by preempting lower-priority work of its queue or
  // reclaiming what the cohort borrowed: where it then goes. `preempted`
  // says whether anything was stopped, even when `j` still does not fit.
  std::optional<Pick> MakeRoom(Job& j, const placement::Resume* resume, Timestamp now, std::vector<Transition>& out,
                               bool& preempted);
  static bool Admits(quota::QuotaBook::Verdict v) {
    return v == quota::QuotaBook::Verdict::kFits || v == quota::QuotaBook::Verdict::kBorrows;
  }
  // Launches `j` where `pick` says: the request, the backend's launch, the
  // books, and the transition that reports it (holding its launch, under
  // EngineOptions::hold_launches). On refusal sets j.waiting.
  bool Dispatch(Job& j, const Pick& pick, Timestamp now, std::vector<Transition>& out);
  // What the backend is asked to run for attempt `attempt` of `j`; an
  // error (in words) while its data is still being copied or the owner
  // refuses the launch (LaunchPreparer).
  Result<LaunchRequest> RequestFor(const Job& j, const placement::Option& o, int attempt,
                                   const ProviderAdapter& provider, Timestamp now) const;
  // Books `j`'s attempt as running where `pick` says.
  void Take(Job& j, const Pick& pick, int attempt, ProviderAdapter* provider, std::string backend_id, Timestamp now);
  // The estate reservation whose room `j` (placed on reserved capacity) uses; -1 if none has room left.
  int ReservationFor(const Job& j, const std::string& gpu_type, Timestamp now) const;
  // The dispatch reported, with why it went there in words.
  Transition DispatchTransition(Job& j, const placement::Option& o, int64_t queue_borrowed, Timestamp now);
  // A transition carrying the facts of `j`'s current attempt.
  Transition AttemptTransition(const Job& j, Transition::Kind kind, Timestamp at) const;
  // Ends the running attempt of `j` at `at` and accounts for it.
  Transition EndAttempt(Job& j, Timestamp at, AttemptOutcome outcome, int exit_code, const std::string& reason);
  // Stops lower-priority work of the same queue, or borrowed work of the
  // cohort, until `gpus` of flavor `f` fit for `j`. Returns whether it did.
  bool Preempt(Job& j, int f, int64_t gpus, bool reclaim, Timestamp now, std::vector<Transition>& out);
  void CheckBudgets(Timestamp now, std::vector<Transition>& out);
  int64_t TeamSpend(const std::string& team, Timestamp now) const;
  std::string FlavorName(const GpuRequest& g, bool spot) const { return g.type + (spot ? "-spot" : ""); }

  const Estate& estate_;
  std::map<std::string, ProviderAdapter*> providers_;
  LaunchPreparer prepare_launch_;
  EngineOptions options_;
  quota::QuotaBook quota_;
  placement::Router router_;
  JobMap jobs_;
  std::vector<std::set<PendingKey>> pending_;  // per queue (index queues.size() when none are configured)
  size_t pending_count_ = 0;
  std::vector<Slot> slots_;
  std::set<std::string> running_;
  std::vector<std::multiset<int>> running_prio_;  // per queue slot: priorities of running jobs
  std::vector<std::set<Job*>> running_qf_;         // per queue x flavor: running jobs, for preemption
  std::vector<int64_t> reservation_used_;  // per estate reservation, GPUs
  // Pipeline steps held until the step before them succeeds, by that step's
  // id; and steps that can never run, reported at the next Tick.
  std::unordered_map<std::string, std::vector<std::string>> waiting_for_;
  std::vector<std::pair<std::string, std::string>> abandon_;  // job id, why
  std::unordered_map<std::string, Group> groups_;
  std::set<std::string> groups_ending_;  // whose primary tasks have all ended, with auxiliary tasks left
  bool gang_launch_ = false;             // Dispatch launches held, for TryAdmitGang
  uint64_t ticks_ = 0;
  // Budgets: spend of finished attempts this month, and which warnings went out.
  int month_ = -1;
  std::map<std::string, int64_t> month_spend_;
  std::set<std::string> warned_, exhausted_;
  uint64_t decisions_ = 0;
  // Within one admission pass capacity and quota only shrink (preemption
  // aside), so a job whose demand found no room cannot find it for another
  // job of the same demand and no higher priority: the pass it was found
  // in, the highest priority that found none, and why (quota, room or
  // budget). Never filled by an attempt that preempted.
  struct NoRoom {
    uint64_t pass = 0;
    int priority = 0;
    Job::Wait why = Job::Wait::kNoRoom;
  };
  // A demand class: pending jobs of one queue asking the same of a pool
  // (DemandKey). Numbered while a pending job holds it; the number is
  // reused once the last leaves, so there are never more than pending jobs.
  struct DemandClass {
    int64_t holders = 0;  // pending jobs of this demand
    int64_t counted = 0;  // of them, those not kept apart
    NoRoom no_room;
  };
  std::vector<DemandClass> classes_;
  std::vector<int32_t> free_classes_;
  // Per queue slot: DemandKey -> class number (looked up without a copy).
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::unordered_map<std::string, int32_t, KeyHash, std::equal_to<>>> class_ids_;
  // Per queue slot: its counted pending jobs; during a pass, how many of
  // them are of demands not yet found no room (0: the rest of the queue
  // need not be tried); the keys of its jobs kept apart.
  std::vector<int64_t> counted_, unknown_;
  std::vector<std::set<PendingKey>> apart_;
  uint64_t pass_ = 0;
  uint64_t version_ = 0;  // see version()
  Timestamp now_;  // time of the current Tick
};

}  // namespace causeway::scheduler
