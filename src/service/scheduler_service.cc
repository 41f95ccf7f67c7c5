#include "service/scheduler_service.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "causeway/crypto.h"
#include "identity/tokens.h"
#include "spec/spec_json.h"

namespace causeway {
namespace {

using scheduler::Transition;

// host:pid:random, unique per process.
std::string ReplicaName() {
  char host[256] = {0};
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + ":" + std::to_string(::getpid()) + ":" + HexEncode(RandomBytes(4));
}

}  // namespace

SchedulerService::SchedulerService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
                                   uint64_t seed, Options options)
    : store_(store), queue_(queue), estate_(estate), clock_(clock), seed_(seed), options_(std::move(options)) {
  if (options_.replica.empty()) options_.replica = ReplicaName();
  if (!options_.kinds) options_.kinds = &providers::BuiltInKinds();
  if (!options_.dispatch.now) options_.dispatch.now = [&clock] { return clock.Steady(); };
  MutexLock lock(mu_);
  Build();
}

namespace {
// Switches the adapter's outage drill (behind the dispatcher, on its
// worker); false when it has none.
bool DrillOutage(ProviderAdapter* adapter, bool down, Timestamp at) {
  auto* off = dynamic_cast<dispatch::OffLockAdapter*>(adapter);
  const ProviderAdapter* inner = off ? &off->inner() : adapter;
  if (!dynamic_cast<const providers::OutageDrill*>(inner)) return false;
  if (off) {
    off->Post([down, at](ProviderAdapter& a) { providers::Capability<providers::OutageDrill>(&a)->SetOutage(down, at); });
  } else {
    providers::Capability<providers::OutageDrill>(adapter)->SetOutage(down, at);
  }
  return true;
}
}  // namespace

void SchedulerService::Build() {
  drained_.clear();  // nothing of an old term is recorded
  snapshot_.reset();  // of the old engine
  // The old term's adapters go first, here under mu_: each finishes the
  // backend call it is making (within that call's deadline) and drops the
  // rest, so the new term's adapters never race the old ones' last calls
  // (a fork whose process id file a restore is about to read). A call that
  // has hung past the dispatcher's bound is not waited for
  // (dispatch::OffLockAdapter); a log read in progress keeps its adapter.
  adapters_.clear();
  std::map<std::string, ProviderAdapter*> adapters;
  for (const auto& p : estate_.providers) {
    const providers::Kind* kind = options_.kinds->Find(p.kind);
    if (!kind) {
      if (!engine_) {
        spdlog::warn("provider {} is of kind {}, which this server cannot drive yet; its clusters get no work", p.name,
                     p.kind);
      }
      continue;
    }
    std::unique_ptr<ProviderAdapter> adapter = kind->adapter(providers::Context{estate_, p, seed_});
    // Built and called under mu_: only an adapter that never blocks is
    // called directly (providers::Kind::answers_at_once).
    if (!kind->answers_at_once) {
      adapter = std::make_unique<dispatch::OffLockAdapter>(std::move(adapter), estate_, p, options_.dispatch);
    }
    adapters_[p.name] = std::move(adapter);
    adapters[p.name] = adapters_[p.name].get();
    // A drill still holding the provider down holds its fresh adapter too.
    if (auto o = outages_.find(p.name); o != outages_.end()) DrillOutage(adapters[p.name], true, o->second);
  }
  scheduler::EngineOptions engine_options;
  engine_options.hold_launches = true;  // released by ReleaseLaunches once recorded
  engine_ = std::make_unique<scheduler::Engine>(estate_, adapters, engine_options);
  engine_->SetLaunchPreparer([this](const std::string& job_id, int attempt, const Cluster& cluster, Timestamp now) {
    mu_.AssertHeld();  // the engine asks from Tick, which runs under mu_
    return PrepareLaunch(job_id, attempt, cluster, now);
  });
}

SchedulerService::~SchedulerService() { Stop(); }

void SchedulerService::SetDataPlaces(const placement::DataPlaces* places) {
  data_places_.store(places);
  MutexLock lock(mu_);
  engine_->SetDataPlaces(places);
}

Result<std::map<std::string, std::string>> SchedulerService::PrepareLaunch(const std::string&, int,
                                                                         const Cluster& cluster, Timestamp) {
  // Only while the lease is surely still ours: a replica that may have lost
  // it (its renewal is overdue) launches nothing. In memory only: the launch
  // is recorded and given its credentials after the tick, off mu_
  // (PrepareLaunches), and the backend receives it only then.
  if (std::chrono::steady_clock::now() >= lease_deadline_) {
    return Unavailable("this scheduler's lease is not confirmed; launching waits for the next cycle");
  }
  if (workload_ && Real(cluster) && workload_->issuer().empty()) {
    return Unavailable("the workload issuer's address is not known yet (the server is starting)");
  }
  return std::map<std::string, std::string>{};
}

bool SchedulerService::Real(const Cluster& cluster) const {
  const Provider* p = estate_.FindProvider(cluster.provider);
  const providers::Kind* kind = p ? options_.kinds->Find(p->kind) : nullptr;
  return kind && !kind->simulated;
}

Status SchedulerService::ReadStepsBefore(std::vector<std::string> ids, StepStates& out) const {
  ids.erase(std::remove_if(ids.begin(), ids.end(), [&](const std::string& id) { return id.empty() || out.count(id); }),
            ids.end());
  if (ids.empty()) return Status::Ok();
  ASSIGN_OR_RETURN(auto found, store_.GetJobs(ids));
  for (const JobRecord& j : found) out[j.id] = j.state;
  return Status::Ok();
}

Status SchedulerService::ReadGroups(std::vector<std::string> groups, GroupTasks& out) const {
  for (const std::string& g : groups) {
    if (g.empty() || out.count(g)) continue;
    JobFilter f;
    f.pipeline = g;
    f.limit = static_cast<int>(kMaxPipelineSteps);
    ASSIGN_OR_RETURN(auto tasks, store_.ListJobs(f));
    std::sort(tasks.begin(), tasks.end(), [](const JobRecord& a, const JobRecord& b) { return a.step < b.step; });
    std::vector<GroupTask>& into = out[g];
    for (const JobRecord& t : tasks) into.push_back(GroupTask{t.id, t.state, t.attempts, t.auxiliary});
  }
  return Status::Ok();
}

// Until one of its tasks has run, the unfinished ones start together; a
// primary task that ended otherwise than succeeded ends the auxiliary ones
// at once.
void SchedulerService::GroupInput(const JobRecord& job, const std::vector<GroupTask>* tasks,
                                  scheduler::JobInput& input) {
  input.group = job.pipeline;
  input.group_name = job.pipeline_name;
  input.auxiliary = job.auxiliary;
  input.termination_delay = Micros(job.termination_delay_seconds * 1'000'000);
  if (!tasks) return;  // not read: placed on its own
  bool started = job.attempts > 0;
  std::vector<std::string> gang;
  for (const auto& t : *tasks) {
    started = started || t.attempts > 0;
    if (!t.auxiliary && IsTerminal(t.state) && t.state != JobState::kSucceeded) input.primary_failed = true;
    if (!IsTerminal(t.state)) gang.push_back(t.id);
  }
  if (!started) input.gang = std::move(gang);
}

Status SchedulerService::Adopt(const JobRecord& job, const History* history, const StepStates& before,
                               const GroupTasks& groups) {
  auto spec = StoredSpec(job);
  if (!spec.ok()) return spec.status().WithPrefix("recovering");
  scheduler::JobInput input{job.id, std::move(*spec), job.created_at, job.attempts, job.gpu_seconds, job.cost_micros};
  // A step that has run once has had the step before it succeed.
  if (!job.after.empty() && job.attempts == 0) {
    input.after = job.after;
    auto state = before.find(job.after);
    input.after_state = state != before.end() ? state->second : JobState::kPending;
  }
  if (job.job_group) {
    auto tasks = groups.find(job.pipeline);
    GroupInput(job, tasks != groups.end() ? &tasks->second : nullptr, input);
  }
  if (!history) return engine_->Submit(std::move(input));
  const std::vector<Checkpoint>& checkpoints = history->checkpoints;
  const std::vector<Attempt>& attempts = history->attempts;
  if (!checkpoints.empty()) {
    input.resume_from = checkpoints.back().path;
    for (const auto& a : attempts) {
      if (a.number == checkpoints.back().attempt) input.resume_cluster = a.cluster;
    }
  }
  // A launch set out but never confirmed (the scheduler died in between)
  // may have happened: its number is not used again.
  int launched = history->last_launch;
  int recorded = attempts.empty() ? 0 : attempts.back().number;
  if (launched > recorded) {
    spdlog::warn("job {}: attempt {} was set out to launch on a cluster but never confirmed; the next is {}", job.id,
                 launched, launched + 1);
    input.attempts = std::max(input.attempts, launched);
  }
  if ((job.state == JobState::kRunning || job.state == JobState::kAdmitted) && !attempts.empty() &&
      attempts.back().state == "running") {
    const Attempt& a = attempts.back();
    Status st = engine_->Restore(input, {a.number, a.cluster, a.pool, a.backend_id, a.flavor, a.reserved, a.started_at,
                                         job.state == JobState::kAdmitted, a.gpus});
    if (st.ok()) return st;
    spdlog::warn("job {} could not be re-adopted on {}: {}; requeueing", job.id, a.cluster, st.message());
  }
  return engine_->Submit(std::move(input));
}

Result<SchedulerService::Term> SchedulerService::ReadTerm() {
  Term term;
  // The change feed is followed from the audit head (its numbering), read
  // first, so that whatever is accepted after the jobs are read is in it.
  ASSIGN_OR_RETURN(auto head, store_.GetAuditHead());
  term.change_cursor = head.seq;
  // This month's spend so far, per team, from the attempts the ledger
  // recorded as ended: budgets hold across restarts and leader changes.
  term.now = clock_.Now();
  Timestamp month = scheduler::Engine::MonthStart(term.now);
  ASSIGN_OR_RETURN(auto metered, store_.ListAttemptsBetween(month, term.now + Micros(1)));
  for (const MeteredAttempt& m : metered) {
    if (m.attempt.ended_at && *m.attempt.ended_at >= month) term.spend[m.team] += m.attempt.cost_micros;
  }
  for (JobState state : {JobState::kPending, JobState::kAdmitted, JobState::kRunning}) {
    JobFilter f;
    f.state = state;
    f.limit = 1000;
    for (;;) {
      ASSIGN_OR_RETURN(auto jobs, store_.ListJobs(f));
      bool last_page = static_cast<int>(jobs.size()) < f.limit;
      if (!jobs.empty()) f.before_id = jobs.back().id;
      for (JobRecord& job : jobs) {
        History h;
        ASSIGN_OR_RETURN(h.checkpoints, store_.ListCheckpoints(job.id));
        ASSIGN_OR_RETURN(h.attempts, store_.ListAttempts(job.id));
        ASSIGN_OR_RETURN(h.last_launch, store_.LastLaunch(job.id));
        term.jobs.emplace_back(std::move(job), std::move(h));
      }
      if (last_page) break;
    }
  }
  // Earlier steps first, so that each step finds the one it runs after
  // already held; and the state of those that are not active.
  std::stable_sort(term.jobs.begin(), term.jobs.end(),
                   [](const auto& a, const auto& b) { return a.first.step < b.first.step; });
  std::vector<std::string> before, groups;
  for (const auto& [job, history] : term.jobs) {
    if (!job.after.empty()) before.push_back(job.after);
    if (job.job_group) groups.push_back(job.pipeline);
    term.before[job.id] = job.state;
  }
  RETURN_IF_ERROR(ReadStepsBefore(std::move(before), term.before));
  RETURN_IF_ERROR(ReadGroups(std::move(groups), term.groups));
  return term;
}

void SchedulerService::Recover(const Term& term) {
  engine_->SeedMonthSpend(term.now, term.spend);
  for (const auto& [job, history] : term.jobs) {
    Status st = Adopt(job, &history, term.before, term.groups);
    if (!st.ok() && st.code() != Code::kAlreadyExists) {
      spdlog::error("job {} cannot be scheduled: {}", job.id, st.message());
    }
  }
  spdlog::info("scheduler recovered {} pending and {} running jobs", engine_->pending(), engine_->running());
}

Status SchedulerService::Lead() {
  auto started = std::chrono::steady_clock::now();
  {
    // Asking the database every cycle is not needed: a quarter of the TTL
    // keeps a leader's lease fresh and bounds how late a follower notices
    // that it expired (a takeover within 1.25 TTL plus one cycle).
    MutexLock lock(mu_);
    if (started - lease_asked_ < options_.lease_ttl / 4) return Status::Ok();
    lease_asked_ = started;
  }
  auto lease = store_.AcquireLease(kLease, options_.replica, options_.lease_ttl);
  MutexLock lock(mu_);
  if (!lease.ok()) return lease.status().WithPrefix("renewing the scheduler lease");
  if (lease->holder != options_.replica) {
    if (leader_) {
      spdlog::warn("lost the scheduler lease to {} (epoch {}); following", lease->holder, lease->epoch);
      leader_ = false;
      Build();  // nothing of the old term is acted on again
    }
    return Status::Ok();
  }
  // Renewed: the lease is ours at least until the database's expiry, which
  // is later than `started` + ttl; keep a margin for clock rate differences.
  lease_deadline_ = started + options_.lease_ttl - options_.lease_ttl / 5;
  if (leader_ && lease->epoch == epoch_) return Status::Ok();

  // A new term: start from what the database says, read off mu_ (Lead runs
  // only on the scheduler's own thread, so nothing else starts a term
  // meanwhile), and follow the change feed from there.
  int64_t epoch = lease->epoch;
  lock.Unlock();
  auto term = ReadTerm();
  lock.Lock();
  if (!term.ok()) return term.status().WithPrefix("recovering the scheduler's state");
  epoch_ = epoch;
  change_cursor_ = term->change_cursor;
  Build();
  Recover(*term);
  leader_ = true;
  spdlog::info("replica {} leads the scheduler (epoch {})", options_.replica, epoch_);
  std::string replica = options_.replica;
  Timestamp now = clock_.Now();
  (void)queue_.Enqueue(
      [replica, epoch, now](WriteTx& tx) -> Status {
        RETURN_IF_ERROR(tx.CheckLease(kLease, replica, epoch));
        AuditEvent e;
        e.time = now;
        e.actor = kActor;
        e.action = "scheduler.lead";
        e.resource = "replica/" + replica;
        e.details = {{"epoch", epoch}};
        return tx.AppendAudit(e);
      },
      [](Status st) {
        if (!st.ok()) spdlog::warn("recording the new scheduler term failed: {}", st.ToString());
      });
  return Status::Ok();
}

Status SchedulerService::FollowChanges(const std::vector<Change>& changes,
                                       const std::map<std::string, JobRecord>& jobs, const StepStates& before,
                                       const GroupTasks& groups, std::vector<Transition>& out) {
  for (const Change& c : changes) {
    if (c.seq <= change_cursor_) continue;
    change_cursor_ = c.seq;
    switch (c.kind) {
      case Change::Kind::kSubmitted: {
        auto job = jobs.find(c.job_id);
        if (job == jobs.end() || engine_->Has(c.job_id)) break;
        // Submitted after this term began (its change follows the head read
        // once the lease was ours), so no earlier leader launched it: fenced
        // launches commit before the lease changes hands, after the submit.
        // Nothing to read but the job (three queries a job saved).
        Status st = Adopt(job->second, nullptr, before, groups);
        if (!st.ok() && st.code() != Code::kAlreadyExists) {
          spdlog::error("job {} cannot be scheduled: {}", c.job_id, st.message());
        }
        break;
      }
      case Change::Kind::kCancelled: {
        auto cancelled = engine_->Cancel(c.job_id, clock_.Now());
        if (cancelled.ok()) out.insert(out.end(), cancelled->begin(), cancelled->end());
        break;
      }
      case Change::Kind::kCheckpoint:
        (void)engine_->SetCheckpoint(c.job_id, c.path);
        break;
    }
  }
  return Status::Ok();
}

void SchedulerService::Start(std::chrono::milliseconds interval) {
  // The first cycle is the caller's (the server runs one before it takes
  // requests); from here, one every `interval`.
  ticker_.Start(interval, [this] {
    if (Status st = TickOnce(); !st.ok()) spdlog::error("scheduler cycle failed: {}", st.ToString());
  });
}

void SchedulerService::Stop() { ticker_.Stop(); }

Status SchedulerService::TickOnce() {
  RETURN_IF_ERROR(Lead());
  // Submissions, cancellations and checkpoints accepted by any replica are
  // in the change feed, in commit order; those this replica saw first are
  // no-ops. The store is read without holding mu_, which the API's hooks
  // need.
  // What this replica's hooks said comes first, so that the feed's copy of
  // it finds nothing to do.
  int64_t cursor = 0;
  {
    MutexLock lock(mu_);
    DrainInbox(drained_);
    if (!leader_) return Status::Ok();
    cursor = change_cursor_;
  }
  auto changes = store_.ListChanges(cursor, 1000);
  if (!changes.ok()) return changes.status().WithPrefix("following the change feed");
  std::vector<std::string> unseen;
  {
    MutexLock lock(mu_);
    for (const Change& c : *changes) {
      if (c.kind == Change::Kind::kSubmitted && !engine_->Has(c.job_id)) unseen.push_back(c.job_id);
    }
  }
  std::map<std::string, JobRecord> jobs;  // accepted by other replicas
  StepStates before;                       // of the pipeline steps they run after
  GroupTasks groups;                       // of the job groups they are tasks of
  if (!unseen.empty()) {
    ASSIGN_OR_RETURN(auto found, store_.GetJobs(unseen));
    std::vector<std::string> after, group_ids;
    for (JobRecord& job : found) {
      if (IsTerminal(job.state)) continue;
      after.push_back(job.after);
      if (job.job_group) group_ids.push_back(job.pipeline);
      jobs.emplace(job.id, std::move(job));
    }
    RETURN_IF_ERROR(ReadStepsBefore(std::move(after), before));
    RETURN_IF_ERROR(ReadGroups(std::move(group_ids), groups));
  }

  // Decide: the engine ticks under mu_ and holds every launch it makes.
  std::vector<Transition> transitions;
  Fence fence;
  identity::WorkloadIssuer* workload = nullptr;
  std::string server_url;
  {
    MutexLock lock(mu_);
    if (!leader_) return Status::Ok();
    transitions.swap(drained_);
    RETURN_IF_ERROR(FollowChanges(*changes, jobs, before, groups, transitions));
    std::vector<Transition> ticked = engine_->Tick(clock_.Now());
    transitions.insert(transitions.end(), ticked.begin(), ticked.end());
    fence = Fence{options_.replica, epoch_};
    workload = workload_;
    server_url = server_url_;
    if (clock_.Steady() - pruned_at_ >= kPruneEvery) {
      pruned_at_ = clock_.Steady();
      PruneChanges(fence, change_cursor_);
    }
  }
  if (transitions.empty()) return Status::Ok();
  // Act, off mu_: credentials minted, then each launch recorded with its
  // dispatch (fenced), and only what is recorded is released to its backend.
  auto launches = PrepareLaunches(transitions, workload, server_url);
  std::vector<Status> written;
  if (launches.ok()) {
    written = queue_.RunAll(Persist(transitions, fence, *launches));
  } else {
    written.assign(transitions.size(), launches.status().WithPrefix("preparing the launches"));
  }
  Status released = ReleaseLaunches(transitions, launches.ok() ? *launches : Launches{}, written, fence);
  if (launches.ok()) CancelRefused(*launches);
  return released;
}

Status SchedulerService::ReleaseLaunches(const std::vector<Transition>& transitions, const Launches& launches,
                                         const std::vector<Status>& written, const Fence& fence) {
  Status first = Status::Ok();
  bool lost = false;  // something the engine holds is not in the database
  MutexLock lock(mu_);
  bool same_term = leader_ && epoch_ == fence.epoch;
  for (size_t i = 0; i < transitions.size(); ++i) {
    const Status& st = i < written.size() ? written[i] : first;
    if (!st.ok()) {
      if (first.ok()) first = st;
      lost = true;
      continue;
    }
    const Transition& t = transitions[i];
    if (!t.launch || !same_term) continue;
    const Cluster* cluster = estate_.FindCluster(t.cluster);
    auto adapter = cluster ? adapters_.find(cluster->provider) : adapters_.end();
    auto l = launches.find({t.job_id, t.attempt});  // one per held launch whenever its write committed
    if (adapter == adapters_.end() || l == launches.end()) continue;
    // Refused launches are cancelled instead (CancelRefused).
    if (auto recorded = l->second->Committed(st); recorded.ok()) adapter->second->Release(*recorded);
  }
  if (lost && same_term) {
    // The engine went on from what could not be written (held launches among
    // it, which are never released): start a new term from the database.
    spdlog::warn("a scheduler cycle could not be recorded ({}); rebuilding from the database", first.message());
    leader_ = false;
    lease_asked_ = {};
    Build();
  }
  return first;
}

void SchedulerService::PruneChanges(const Fence& fence, int64_t followed) {
  // Only what this leader has followed, and only once it is old: a replica
  // that takes over starts from the database and follows from the audit
  // head, so nothing pruned is ever asked for. Queued, not waited for.
  Timestamp before = clock_.Now() - kChangeRetention;
  (void)queue_.Enqueue(
      [fence, followed, before](WriteTx& tx) -> Status {
        RETURN_IF_ERROR(tx.CheckLease(kLease, fence.replica, fence.epoch));
        return tx.PruneChanges(followed, before);
      },
      [](Status st) {
        if (!st.ok()) spdlog::warn("pruning the change feed failed: {}", st.ToString());
      });
}

void SchedulerService::Tell(News news) {
  MutexLock lock(inbox_mu_);
  if (inbox_.size() < kInboxSize) inbox_.push_back(std::move(news));
}

void SchedulerService::OnSubmitted(const JobRecord& job, const JobSpec& spec) {
  // A job group's tasks come from the change feed, which reads the whole
  // group with them.
  if (job.job_group) return;
  scheduler::JobInput input{job.id, spec, job.created_at, 0, 0, 0};
  // The step before it was written with it, and told of first: unfinished.
  input.after = job.after;
  Tell(News{News::Kind::kSubmitted, std::move(input), job.id, ""});
}

void SchedulerService::OnCancelled(const std::string& job_id) {
  Tell(News{News::Kind::kCancelled, {}, job_id, ""});
}

void SchedulerService::OnCheckpoint(const std::string& job_id, const std::string& path) {
  Tell(News{News::Kind::kCheckpoint, {}, job_id, path});
}

void SchedulerService::DrainInbox(std::vector<Transition>& out) {
  std::vector<News> news;
  {
    MutexLock lock(inbox_mu_);
    news.swap(inbox_);
  }
  if (!leader_) return;  // the leader reads the same from the change feed
  Timestamp now = clock_.Now();
  for (News& n : news) {
    switch (n.kind) {
      case News::Kind::kSubmitted: {
        if (engine_->Has(n.job_id)) break;
        Status st = engine_->Submit(std::move(n.job));
        if (!st.ok()) spdlog::error("job {} cannot be scheduled: {}", n.job_id, st.message());
        break;
      }
      case News::Kind::kCancelled: {
        auto cancelled = engine_->Cancel(n.job_id, now);  // kNotFound: finished meanwhile, or never scheduled
        if (cancelled.ok()) out.insert(out.end(), cancelled->begin(), cancelled->end());
        break;
      }
      case News::Kind::kCheckpoint:
        (void)engine_->SetCheckpoint(n.job_id, n.path);  // a finished job needs it no more
        break;
    }
  }
}

std::optional<scheduler::Explanation> SchedulerService::Explain(const std::string& job_id) {
  MutexLock lock(mu_);
  return engine_->Explain(job_id);
}

Result<std::string> SchedulerService::ReadLog(const std::string& cluster, const std::string& job_id, int attempt,
                                             int64_t offset, int64_t max) {
  const Cluster* c = estate_.FindCluster(cluster);
  if (!c) return NotFound("job " + job_id + " has not run on any cluster yet");
  std::shared_ptr<ProviderAdapter> adapter;
  {
    MutexLock lock(mu_);
    auto it = adapters_.find(c->provider);
    if (it == adapters_.end()) return NotFound("provider " + c->provider + " is not driven by this server");
    adapter = it->second;
  }
  return adapter->ReadLog(cluster, job_id, attempt, offset, max);  // may wait on the backend: off mu_
}

Result<std::vector<scheduler::QueueStatus>> SchedulerService::Queues() {
  MutexLock lock(mu_);
  if (!leader_) return Unavailable("this replica does not run the scheduler now; ask again (another replica does)");
  return engine_->Queues();
}

Result<std::vector<scheduler::Engine::Queued>> SchedulerService::QueuedJobs(const std::string& queue, size_t offset,
                                                                            size_t limit) {
  MutexLock lock(mu_);
  if (!leader_) return Unavailable("this replica does not run the scheduler now; ask again (another replica does)");
  return engine_->QueuedJobs(queue, offset, limit);
}

Result<std::shared_ptr<const scheduler::EngineSnapshot>> SchedulerService::Snapshot() {
  MutexLock lock(mu_);
  if (!leader_) return Unavailable("this replica does not run the scheduler now; ask again (another replica does)");
  // A copy of every job held: CPU work under mu_, no I/O, and only when
  // something changed since the last one.
  if (!snapshot_ || snapshot_->version != engine_->version()) {
    snapshot_ = std::make_shared<const scheduler::EngineSnapshot>(engine_->Snapshot());
  }
  return snapshot_;
}

bool SchedulerService::leader() {
  MutexLock lock(mu_);
  return leader_;
}


Status SchedulerService::SetOutage(const std::string& provider, bool down, const std::string& actor) {
  {
    MutexLock lock(mu_);
    auto it = adapters_.find(provider);
    if (it == adapters_.end() || !DrillOutage(it->second.get(), down, clock_.Now())) {
      return NotFound("no provider named " + provider + " with an outage drill (simulated, local and Slurm providers have one)");
    }
    if (down) {
      outages_.emplace(provider, clock_.Now());
    } else {
      outages_.erase(provider);
    }
  }
  Timestamp now = clock_.Now();
  return queue_.Run([=](WriteTx& tx) {
    AuditEvent e;
    e.time = now;
    e.actor = actor;
    e.action = down ? "provider.outage_start" : "provider.outage_end";
    e.resource = "provider/" + provider;
    return tx.AppendAudit(e);
  });
}

std::map<std::string, Timestamp> SchedulerService::Outages() {
  MutexLock lock(mu_);
  return outages_;
}

SchedulerService::Utilization SchedulerService::SampleUtilization() {
  MutexLock lock(mu_);
  Utilization u;
  u.now = clock_.Now();
  u.leader = leader_;
  if (!leader_) return u;
  u.running = engine_->RunningAttempts();
  for (const auto& [name, adapter] : adapters_) {
    std::vector<GpuSample> s = adapter->SampleUtilization(u.now);
    u.samples.insert(u.samples.end(), std::make_move_iterator(s.begin()), std::make_move_iterator(s.end()));
  }
  return u;
}

void SchedulerService::SetWorkloadIssuer(identity::WorkloadIssuer* issuer) {
  MutexLock lock(mu_);
  workload_ = issuer;
}

void SchedulerService::SetServerUrl(std::string url) {
  MutexLock lock(mu_);
  server_url_ = std::move(url);
}

}  // namespace causeway
