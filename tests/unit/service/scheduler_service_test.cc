// The scheduler service with a provider kind of the test's own, registered
// as any built-in kind is: the scheduler drives it, credentials and all,
// without knowing its type, and finds its capabilities by asking.
#include <gtest/gtest.h>

#include <chrono>
#include <mutex>

#include "causeway/estate.h"
#include "causeway/job_spec.h"
#include "fakes/gated_adapter.h"
#include "identity/tokens.h"
#include "providers/registry.h"
#include "service/scheduler_service.h"
#include "spec/spec_json.h"
#include "store/commit_queue.h"
#include "unit/temp_db.h"

namespace causeway::testing {
namespace {

constexpr const char* kEstate = R"(
providers:
  - {name: kube, kind: nomad, regions: [{name: r1, zone: eu}]}
  - {name: simmed, kind: sim, regions: [{name: r1, zone: eu}]}
clusters:
  - {name: k1, provider: kube, region: r1, node_pools: [{name: h, gpu_type: H100, gpus_per_node: 8, nodes: 2}]}
  - {name: s1, provider: simmed, region: r1, node_pools: [{name: h, gpu_type: H100, gpus_per_node: 8, nodes: 2}]}
prices:
  - {cluster: k1, gpu_type: H100, on_demand: "1.00"}
  - {cluster: s1, gpu_type: H100, on_demand: "9.00"}
teams: [{name: t}]
queues: [{name: q, team: t, quotas: [{flavor: H100, nominal: 64}]}]
)";

// Runs nothing: remembers what it was asked to launch, what was released to
// it and what the database held at that moment, and ends it when told.
class FakeKube final : public ProviderAdapter {
 public:
  struct Shared {
    std::mutex mu;
    Store* store = nullptr;
    std::vector<LaunchRequest> held;      // as Launch was asked
    std::vector<LaunchRequest> launched;  // released: with the released environment
    std::vector<std::string> at_release;  // what the store held then, in words
    bool finish = false;
  };
  FakeKube(std::string name, Shared& shared) : name_(std::move(name)), shared_(shared) {}
  const std::string& name() const override { return name_; }
  Result<std::string> Launch(const LaunchRequest& r, Timestamp) override {
    std::lock_guard<std::mutex> lock(shared_.mu);
    shared_.held.push_back(r);
    return "kube:" + r.job_id + "-" + std::to_string(r.attempt);
  }
  void Release(const RecordedLaunch& released) override {
    const std::string& job_id = released.job_id();
    const int attempt = released.attempt();
    const auto& env = released.env();
    std::lock_guard<std::mutex> lock(shared_.mu);
    for (const LaunchRequest& h : shared_.held) {
      if (h.job_id != job_id || h.attempt != attempt) continue;
      LaunchRequest r = h;
      for (const auto& [k, v] : env) r.env.emplace(k, v);
      shared_.launched.push_back(r);
    }
    auto launch = shared_.store->LastLaunch(job_id);
    bool stored = false;
    if (auto tokens = shared_.store->ListTokens(); tokens.ok()) {
      for (const TokenRecord& t : *tokens) stored |= t.id == identity::JobCredentialId(job_id, attempt);
    }
    shared_.at_release.push_back("launch " + std::to_string(launch.ok() ? *launch : -1) + ", credential " +
                                 (stored ? "stored" : "missing"));
  }
  Status Restore(const LaunchRequest&, Timestamp) override { return Status::Ok(); }
  Status Cancel(const std::string&, int) override { return Status::Ok(); }
  std::vector<ProviderEvent> Poll(Timestamp now) override {
    std::lock_guard<std::mutex> lock(shared_.mu);
    std::vector<ProviderEvent> out;
    if (!shared_.finish) return out;
    for (const LaunchRequest& r : shared_.launched) {
      out.push_back(ProviderEvent{r.job_id, r.attempt, now, AttemptOutcome::kSucceeded, 0, "", "", std::nullopt});
    }
    shared_.launched.clear();
    return out;
  }
  int ResolvePool(const std::string& cluster, const std::string& pool) const override {
    return cluster == "k1" && pool == "h" ? 0 : -1;
  }
  bool Fits(int pool, int per_node, int nodes) const override { return pool == 0 && per_node <= 8 && nodes <= 2; }
  int FreeGpus(int) const override { return 16; }
  bool Healthy(int) const override { return true; }
  Result<std::string> ReadLog(const std::string&, const std::string&, int, int64_t, int64_t) const override {
    return NotFound("no logs");
  }
  std::vector<GpuSample> SampleUtilization(Timestamp) const override { return {}; }

 private:
  std::string name_;
  Shared& shared_;
};

TEST(ProviderRegistryTest, TheBuiltInKindsAreRegisteredWithWhatTheyCanDo) {
  const providers::Registry& kinds = providers::BuiltInKinds();
  EXPECT_EQ(kinds.Names(), (std::vector<std::string>{"kubernetes", "local", "sim", "slurm"}));
  ASSERT_NE(kinds.Find("sim"), nullptr);
  EXPECT_TRUE(kinds.Find("sim")->simulated);
  EXPECT_FALSE(kinds.Find("slurm")->simulated);
  EXPECT_TRUE(kinds.Find("slurm")->people_accounts) << "Slurm keeps people's accounting users";
  EXPECT_FALSE(kinds.Find("local")->people_accounts);
  EXPECT_TRUE(kinds.Find("kubernetes")->people_accounts) << "Kubernetes keeps people's RBAC bindings";
  // The local executor forks and reads files: the scheduler calls it through
  // a dispatcher. Slurm's adapter has workers of its own; the simulated
  // estate is all in memory.
  EXPECT_FALSE(kinds.Find("local")->answers_at_once);
  EXPECT_TRUE(kinds.Find("slurm")->answers_at_once);
  EXPECT_TRUE(kinds.Find("sim")->answers_at_once);
  // Kubernetes' adapter waits on its API server: behind a dispatcher.
  ASSERT_NE(kinds.Find("kubernetes"), nullptr);
  EXPECT_FALSE(kinds.Find("kubernetes")->answers_at_once);
  EXPECT_EQ(kinds.Find("nomad"), nullptr);
}

// The estate above, the fake kind registered beside the built-in ones, a
// fresh database and a scheduler on a clock the test moves.
class SchedulerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kinds_ = providers::BuiltInKinds();
    providers::Kind kube;
    kube.adapter = [this](const providers::Context& c) -> std::unique_ptr<ProviderAdapter> {
      return std::make_unique<FakeKube>(c.provider.name, shared_);
    };
    kube.answers_at_once = true;  // all in memory: called directly, so these tests see each call as it happens
    ASSERT_TRUE(kinds_.Register("nomad", std::move(kube)).ok());
    // The estate names the kind registered from outside: it is read with
    // the kinds the scheduler is given.
    auto parsed = providers::ParseEstate(kEstate, "estate.yaml", kinds_);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    estate_ = std::make_unique<Estate>(std::move(*parsed));
    store_ = db_.Open();
    ASSERT_NE(store_, nullptr);
    shared_.store = store_.get();
    queue_ = std::make_unique<CommitQueue>(*store_, CommitQueue::Options{});
    SchedulerService::Options options;
    options.kinds = &kinds_;
    scheduler_ = std::make_unique<SchedulerService>(*store_, *queue_, *estate_, clock_, 1, options);
  }
  void TearDown() override {
    if (scheduler_) scheduler_->Stop();
  }

  // Accepts job `id` (8 H100 GPUs) as the job service does: recorded with
  // its audit event, then word to the scheduler.
  void Accept(const std::string& id) {
    auto spec = ParseJobSpec("resources: {accelerators: H100:8, labels: {owner: o, team: t}}\nrun: train\n", "job.yaml");
    ASSERT_TRUE(spec.ok()) << spec.status().ToString();
    JobRecord job;
    job.id = id;
    job.name = "j";
    job.team = "t";
    job.owner = "o";
    job.spec_yaml = "run: train";
    job.spec_json = ToJson(spec->spec).dump();
    job.created_at = job.updated_at = clock_.Now();
    ASSERT_TRUE(queue_->Run([&](WriteTx& tx) {
      RETURN_IF_ERROR(tx.InsertJob(job));
      AuditEvent e;
      e.time = clock_.Now();
      e.actor = "test";
      e.action = "job.submit";
      e.resource = "job/" + job.id;
      return tx.AppendAudit(e);
    }).ok());
    scheduler_->OnSubmitted(job, spec->spec);
  }

  std::unique_ptr<Estate> estate_;
  FakeKube::Shared shared_;
  providers::Registry kinds_;
  TempDb db_;
  std::unique_ptr<Store> store_;
  std::unique_ptr<CommitQueue> queue_;
  ManualClock clock_;
  std::unique_ptr<SchedulerService> scheduler_;
};

TEST_F(SchedulerServiceTest, DrivesAProviderKindRegisteredFromOutsideAndAsksForCapabilities) {
  FakeKube::Shared& shared = shared_;
  Store* store = store_.get();
  ManualClock& clock = clock_;
  SchedulerService& scheduler = *scheduler_;

  Accept("job_1");

  // The cheaper cluster is the fake kind's; a real (not simulated) kind's
  // attempt gets a credential of its own.
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(scheduler.TickOnce().ok());
    std::lock_guard<std::mutex> lock(shared.mu);
    if (!shared.launched.empty()) break;
  }
  {
    std::lock_guard<std::mutex> lock(shared.mu);
    ASSERT_EQ(shared.launched.size(), 1u);
    EXPECT_EQ(shared.launched[0].cluster, "k1");
    EXPECT_EQ(shared.launched[0].env.count("CAUSEWAY_TOKEN"), 1u);
    // Decide, then act: the engine only holds the launch (no credential is
    // minted under the scheduler's lock); it reaches the backend once the
    // launch and the attempt's credential are in the database.
    ASSERT_EQ(shared.held.size(), 1u);
    EXPECT_TRUE(shared.held[0].held);
    EXPECT_EQ(shared.held[0].env.count("CAUSEWAY_TOKEN"), 0u);
    EXPECT_EQ(shared.at_release, (std::vector<std::string>{"launch 1, credential stored"}));
    shared.finish = true;
  }
  clock.Advance(std::chrono::minutes(1));
  ASSERT_TRUE(scheduler.TickOnce().ok());
  auto stored = store->GetJob("job_1");
  ASSERT_TRUE(stored.ok() && stored->has_value());
  EXPECT_EQ((*stored)->state, JobState::kSucceeded);
  auto attempts = store->ListAttempts("job_1");
  ASSERT_TRUE(attempts.ok());
  ASSERT_EQ(attempts->size(), 1u);
  EXPECT_EQ((*attempts)[0].backend_id, "kube:job_1-1");

  // The outage drill is a capability: the simulated provider has it, the
  // fake does not.
  EXPECT_EQ(scheduler.SetOutage("kube", true, "test").code(), Code::kNotFound);
  EXPECT_TRUE(scheduler.SetOutage("simmed", true, "test").ok());
  scheduler.Stop();
}

TEST_F(SchedulerServiceTest, ALaunchThatCannotBeRecordedIsNeverReleasedAndTheTermStartsOverFromTheDatabase) {
  FakeKube::Shared& shared = shared_;
  ManualClock& clock = clock_;
  SchedulerService& scheduler = *scheduler_;

  // Word of a job the database does not hold: its launch cannot be
  // prepared or recorded, so its backend must never receive it.
  auto spec = ParseJobSpec("resources: {accelerators: H100:8, labels: {owner: o, team: t}}\nrun: train\n", "job.yaml");
  ASSERT_TRUE(spec.ok()) << spec.status().ToString();
  JobRecord ghost;
  ghost.id = "job_ghost";
  ghost.team = "t";
  ghost.owner = "o";
  ghost.created_at = clock.Now();
  scheduler.OnSubmitted(ghost, spec->spec);
  Status failed = Status::Ok();
  for (int i = 0; i < 5 && failed.ok(); ++i) failed = scheduler.TickOnce();
  EXPECT_FALSE(failed.ok()) << "the cycle says it could not record its work";
  {
    std::lock_guard<std::mutex> lock(shared.mu);
    EXPECT_EQ(shared.held.size(), 1u) << "the engine placed it";
    EXPECT_TRUE(shared.launched.empty()) << "nothing unrecorded is released";
  }
  // The next cycles start from the database, which has no such job.
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(scheduler.TickOnce().ok());
  EXPECT_TRUE(scheduler.leader());
  EXPECT_FALSE(scheduler.Explain("job_ghost").has_value());
  std::lock_guard<std::mutex> lock(shared.mu);
  EXPECT_TRUE(shared.launched.empty());
  scheduler.Stop();
}


// The change feed keeps only what is still to be followed: what the leader
// followed goes once it is an hour old.
TEST_F(SchedulerServiceTest, TheChangeFeedLosesWhatTheLeaderFollowedOnceItIsOld) {
  Accept("job_1");
  ASSERT_TRUE(queue_->Run([&](WriteTx& tx) {
    AuditEvent e;
    e.time = clock_.Now();
    e.actor = "test";
    e.action = "job.submit";
    e.resource = "job/job_1";
    RETURN_IF_ERROR(tx.AppendAudit(e));
    return tx.AppendChange(Change{0, Change::Kind::kSubmitted, "job_1", "", clock_.Now()});
  }).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(scheduler_->TickOnce().ok());
  ASSERT_TRUE(queue_->Run([](WriteTx&) { return Status::Ok(); }).ok());  // after whatever the cycles queued
  EXPECT_EQ(store_->ListChanges(0, 10)->size(), 1u) << "followed, but recent";

  clock_.Advance(std::chrono::hours(2));
  ASSERT_TRUE(scheduler_->TickOnce().ok());
  ASSERT_TRUE(queue_->Run([](WriteTx&) { return Status::Ok(); }).ok());
  EXPECT_TRUE(store_->ListChanges(0, 10)->empty());
}

// A kind whose Launch and Poll hang, called (as every kind that does not
// answer at once is) through a dispatcher: the scheduler's cycle, its queue
// read and the commit thread go on, and once the hung call has run past the
// dispatcher's bound, the job waiting for it and new ones go to the other
// cluster.
TEST_F(SchedulerServiceTest, AKindWhoseCallsHangHoldsUpNothingAndItsWorkGoesElsewhere) {
  scheduler_.reset();
  auto gates = std::make_shared<Gates>();
  gates->launch = std::make_shared<Gate>();
  gates->poll = std::make_shared<Gate>();
  providers::Kind gated;
  gated.adapter = [weak = std::weak_ptr<Gates>(gates)](const providers::Context& c) -> std::unique_ptr<ProviderAdapter> {
    return std::make_unique<GatedAdapter>(c.estate, c.provider, weak.lock());
  };
  kinds_.Replace("nomad", std::move(gated));
  SchedulerService::Options options;
  options.kinds = &kinds_;
  options.dispatch.hang_after = std::chrono::seconds(30);  // timed on clock_ (Clock::Steady)
  scheduler_ = std::make_unique<SchedulerService>(*store_, *queue_, *estate_, clock_, 1, options);

  // Each of these would wait for the gates, which open only at the end, if
  // anything called the adapter on the way. The bound is generous; it is
  // not a speed test.
  constexpr auto kPrompt = std::chrono::seconds(5);
  auto prompt = [&](const char* what, auto fn) {
    auto start = std::chrono::steady_clock::now();
    fn();
    EXPECT_LT(std::chrono::steady_clock::now() - start, kPrompt) << what;
  };
  Accept("job_1");
  prompt("the cycles", [&] {
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(scheduler_->TickOnce().ok());
  });
  gates->poll->WaitEntered();  // the dispatcher's first Poll hangs; job_1's launch waits behind it
  auto attempts = store_->ListAttempts("job_1");
  ASSERT_TRUE(attempts.ok() && attempts->size() == 1u);
  EXPECT_EQ((*attempts)[0].cluster, "k1") << "the cheaper cluster, still healthy";
  prompt("a queue read", [&] { EXPECT_TRUE(scheduler_->Queues().ok()); });
  prompt("a commit", [&] { Accept("job_2"); });

  clock_.Advance(std::chrono::seconds(31));  // past the bound: k1 takes nothing more, and job_1 never reached it
  prompt("the cycles past the bound", [&] {
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(scheduler_->TickOnce().ok());
  });
  for (const char* id : {"job_1", "job_2"}) {
    auto a = store_->ListAttempts(id);
    ASSERT_TRUE(a.ok() && !a->empty()) << id;
    EXPECT_EQ(a->back().cluster, "s1") << id;
    EXPECT_EQ(a->back().state, "running") << id;
  }
  attempts = store_->ListAttempts("job_1");
  ASSERT_TRUE(attempts.ok() && attempts->size() == 2u);
  EXPECT_NE((*attempts)[0].state, "running");
  EXPECT_TRUE(gates->Launched().empty()) << "nothing was sent to the hung kind";

  gates->poll->Open();
  gates->launch->Open();
  scheduler_.reset();
  // The dispatcher's worker, left to finish its hung call, goes with the adapter.
  EXPECT_TRUE(gates->WaitGone(std::chrono::seconds(30)));
}

}  // namespace
}  // namespace causeway::testing
