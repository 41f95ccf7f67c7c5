// Planning's run-ahead: hand-worked starts, places and costs; a running
// attempt past its expected time; pipelines; the horizon; and the proof
// that the run-ahead makes the scheduler's own decisions: a live engine
// carried on by itself starts every waiting job when and where the
// forecast from its snapshot said.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "planning/forecast.h"
#include "unit/scheduler_fixture.h"

namespace causeway::planning {
namespace {

using causeway::testing::SimWorld;
using namespace std::chrono_literals;

// Two nodes of 8 H100 at 2.00 an hour, one node of 8 A100 at 1.00; two
// teams' queues.
constexpr const char* kEstate = R"(providers: [{name: p, kind: sim, regions: [{name: r, zone: eu}]}]
clusters:
  - name: big
    provider: p
    region: r
    node_pools:
      - {name: h, gpu_type: H100, gpus_per_node: 8, nodes: 2}
  - name: small
    provider: p
    region: r
    node_pools:
      - {name: a, gpu_type: A100, gpus_per_node: 8, nodes: 1}
prices:
  - {cluster: big, gpu_type: H100, on_demand: "2.00"}
  - {cluster: small, gpu_type: A100, on_demand: "1.00"}
teams: [{name: ml}, {name: cv}]
queues:
  - {name: ml, team: ml, quotas: [{flavor: H100, nominal: 16}, {flavor: A100, nominal: 8}]}
  - {name: cv, team: cv, quotas: [{flavor: H100, nominal: 16}, {flavor: A100, nominal: 8}]}
)";

std::string Job(const std::string& team, const std::string& gpus, const std::string& duration, int nodes = 1,
                int priority = 0, const std::string& extra = "") {
  return "resources: {accelerators: " + gpus + "}\nnum_nodes: " + std::to_string(nodes) +
         "\nlabels: {team: " + team + "}\npriority: " + std::to_string(priority) + "\nsim: {duration: " + duration +
         "}\nrun: x\n" + extra;
}

scheduler::JobInput Candidate(const std::string& id, const std::string& yaml, Timestamp at) {
  auto spec = ParseJobSpec(yaml, id + ".yaml");
  EXPECT_TRUE(spec.ok()) << spec.status().ToString();
  return scheduler::JobInput{id, spec.ok() ? spec->spec : JobSpec{}, at, 0, 0, 0};
}

Forecast Ahead(SimWorld& w, std::vector<scheduler::JobInput> candidates, const std::vector<std::string>& jobs,
               Timestamp from, ForecastOptions options = {}) {
  auto f = RunAhead(*w.estate, w.engine->Snapshot(), from, std::move(candidates), jobs, options);
  EXPECT_TRUE(f.ok()) << f.status().ToString();
  return f.ok() ? std::move(*f) : Forecast{};
}

TEST(ForecastTest, AJobStartsWhenTheWorkAheadOfItEndsWhereItEndsAtTheClustersPrice) {
  SimWorld w(kEstate);
  ASSERT_TRUE(w.Submit("a", Job("ml", "H100:8", "2h", 2)).ok());  // both H100 nodes, two hours
  w.Tick();
  ASSERT_EQ(w.state["a"], JobState::kRunning);
  const Timestamp t0 = w.now;
  // Waits for a; then eight H100s for one hour at 2.00: 16.00.
  Forecast f = Ahead(w, {Candidate("b", Job("ml", "H100:8", "1h"), t0)}, {"b"}, t0);
  ASSERT_EQ(f.jobs.size(), 1u);
  const JobForecast& b = f.jobs[0];
  EXPECT_TRUE(b.starts) << b.waiting;
  EXPECT_EQ(b.start, t0 + 2h);
  EXPECT_EQ(b.precision, Micros(0)) << "a step at each event: exact";
  EXPECT_EQ(b.placement.cluster, "big");
  EXPECT_EQ(b.placement.pool, "h");
  EXPECT_EQ(b.run_for, 1h);
  EXPECT_EQ(b.cost_micros, 16'000'000);
  EXPECT_EQ(b.queue, "ml");
  EXPECT_EQ(b.position, 1);
  EXPECT_EQ(b.queued, 1);
  EXPECT_EQ(f.held, 1);
  // A cheaper type it may also use is free now: it starts at once there.
  Forecast g = Ahead(w, {Candidate("c", Job("ml", "{H100:8, A100:8}", "30m"), t0)}, {"c"}, t0);
  ASSERT_TRUE(g.jobs[0].starts);
  EXPECT_EQ(g.jobs[0].start, t0);
  EXPECT_EQ(g.jobs[0].placement.cluster, "small");
  EXPECT_EQ(g.jobs[0].cost_micros, 4'000'000);  // 8 x 1.00 x 0.5 h
}

TEST(ForecastTest, QueuedWorkAheadOfItRunsFirstAndItsPositionIsSaid) {
  SimWorld w(kEstate);
  // Another team's, within its quota: not preempted.
  ASSERT_TRUE(w.Submit("a", Job("cv", "H100:8", "2h", 2)).ok());
  w.Tick();
  ASSERT_TRUE(w.Submit("urgent", Job("ml", "H100:8", "3h", 2, 100)).ok());
  ASSERT_TRUE(w.Submit("older", Job("ml", "H100:8", "1h")).ok());
  w.Tick();
  const Timestamp t0 = w.now;
  // urgent (priority 100) runs from a's end for 3 h; then older and the
  // candidate share the two nodes.
  Forecast f = Ahead(w, {Candidate("new", Job("ml", "H100:8", "1h"), t0)}, {"new", "older"}, t0);
  ASSERT_EQ(f.jobs.size(), 2u);
  EXPECT_EQ(f.jobs[0].position, 3);
  EXPECT_EQ(f.jobs[0].queued, 3);
  EXPECT_EQ(f.jobs[1].position, 2);
  const Timestamp a_ends = t0 - 1min + 2h;  // a started one tick earlier
  EXPECT_EQ(f.jobs[1].start, a_ends + 3h);
  EXPECT_EQ(f.jobs[0].start, a_ends + 3h);
  EXPECT_NE(f.jobs[0].placement.cluster, "");
  // The live engine says the same position.
  auto ex = w.engine->Explain("older");
  ASSERT_TRUE(ex);
  EXPECT_EQ(ex->position, 2);
  EXPECT_EQ(ex->queued, 2);
}

TEST(ForecastTest, AnAttemptPastItsExpectedTimeIsTakenToEndNow) {
  SimWorld w(kEstate);
  ASSERT_TRUE(w.Submit("a", Job("ml", "H100:8", "2h", 2)).ok());
  w.Tick();
  // Asked three hours on, with the snapshot still from before (nothing changed).
  const Timestamp later = w.now + 3h;
  Forecast f = Ahead(w, {Candidate("b", Job("ml", "H100:8", "1h"), later)}, {"b"}, later);
  ASSERT_TRUE(f.jobs[0].starts);
  EXPECT_EQ(f.as_of, later);
  EXPECT_EQ(f.jobs[0].start, later);
}

TEST(ForecastTest, PipelineStepsStartOneAfterAnother) {
  SimWorld w(kEstate);
  const Timestamp t0 = w.now;
  auto first = Candidate("s1", Job("ml", "H100:8", "1h"), t0);
  auto second = Candidate("s2", Job("ml", "H100:8", "30m"), t0);
  second.after = "s1";
  Forecast f = Ahead(w, {first, second}, {"s1", "s2"}, t0);
  ASSERT_TRUE(f.jobs[0].starts && f.jobs[1].starts);
  EXPECT_EQ(f.jobs[0].start, t0);
  EXPECT_EQ(f.jobs[1].start, t0 + 1h);
  // The same, from the live engine's snapshot once submitted.
  ASSERT_TRUE(w.engine->Submit(first).ok());
  ASSERT_TRUE(w.engine->Submit(second).ok());
  w.Tick();
  Forecast g = Ahead(w, {}, {"s2"}, w.now);
  ASSERT_TRUE(g.jobs[0].starts) << g.jobs[0].waiting;
  EXPECT_EQ(g.jobs[0].start, w.now + 1h);
}

TEST(ForecastTest, ACoarseStepSaysHowFarOffTheStartMayBe) {
  SimWorld w(kEstate);
  // Twenty hour-long jobs ahead of it on the A100 node, one after another.
  for (int i = 0; i < 20; ++i) ASSERT_TRUE(w.Submit("a" + std::to_string(i), Job("ml", "A100:8", "1h", 1, 50)).ok());
  w.Tick();
  auto candidate = [&] { return Candidate("b", Job("ml", "A100:8", "1h"), w.now); };  // behind them all
  ForecastOptions exact;
  exact.exact_steps = 1'000'000;
  Forecast e = Ahead(w, {candidate()}, {"b"}, w.now, exact);
  ASSERT_TRUE(e.jobs[0].starts);
  EXPECT_EQ(e.jobs[0].precision, Micros(0));
  ForecastOptions coarse;
  coarse.exact_steps = 2;
  coarse.coarse_share = 0.5;
  Forecast c = Ahead(w, {candidate()}, {"b"}, w.now, coarse);
  ASSERT_TRUE(c.jobs[0].starts) << c.jobs[0].waiting;
  EXPECT_LE(c.steps, e.steps) << "a chain on one node takes a step per job, coarse or not";
  EXPECT_GT(c.jobs[0].precision, Micros(0));
  // The window is a share of how far ahead the events it took in lie (not
  // of where the steps got to: they may run ahead of the events).
  EXPECT_LE(c.jobs[0].precision, Micros((c.jobs[0].start - w.now).count() / 2));
  // No capacity idles between coarse steps: the same start, within the window.
  EXPECT_LE(std::chrono::abs(c.jobs[0].start - e.jobs[0].start), c.jobs[0].precision)
      << FormatRfc3339(c.jobs[0].start) << " vs " << FormatRfc3339(e.jobs[0].start);
}

TEST(ForecastTest, NothingBeyondTheHorizonAndWhyIsSaid) {
  SimWorld w(kEstate);
  ASSERT_TRUE(w.Submit("long", Job("ml", "A100:8", "60d")).ok());
  w.Tick();
  Forecast f = Ahead(w, {Candidate("b", Job("cv", "A100:8", "1h"), w.now)}, {"b"}, w.now);
  ASSERT_EQ(f.jobs.size(), 1u);
  EXPECT_FALSE(f.jobs[0].starts);
  EXPECT_NE(f.jobs[0].waiting.find("would not start within 30d"), std::string::npos) << f.jobs[0].waiting;
  EXPECT_NE(f.jobs[0].waiting.find("no eligible cluster has room"), std::string::npos) << f.jobs[0].waiting;
  EXPECT_LT(f.steps, 200) << "steps are bounded however far it looks";
}

TEST(ForecastTest, ARunAheadOutOfTimeSaysHowFarItGot) {
  SimWorld w(kEstate);
  ASSERT_TRUE(w.Submit("a", Job("ml", "H100:8", "2h", 2)).ok());
  w.Tick();
  ForecastOptions none;
  none.budget = std::chrono::milliseconds(0);
  Forecast f = Ahead(w, {Candidate("b", Job("ml", "H100:8", "1h"), w.now)}, {"b"}, w.now, none);
  EXPECT_TRUE(f.cut_short);
  EXPECT_FALSE(f.jobs[0].starts);
  EXPECT_EQ(f.horizon, w.now + 2h) << "nothing changes before a's end";
  EXPECT_NE(f.jobs[0].waiting.find("would not start before " + FormatRfc3339(w.now + 2h)), std::string::npos)
      << f.jobs[0].waiting;
}

TEST(ForecastTest, RefusesWhatTheSchedulerRefusesAndJobsItDoesNotHold) {
  SimWorld w(kEstate);
  auto nobody = RunAhead(*w.estate, w.engine->Snapshot(), w.now, {Candidate("x", Job("nobody", "H100:1", "1h"), w.now)},
                         {"x"});
  EXPECT_EQ(nobody.status().code(), Code::kInvalidArgument);
  auto unknown = RunAhead(*w.estate, w.engine->Snapshot(), w.now, {}, {"ghost"});
  EXPECT_EQ(unknown.status().code(), Code::kNotFound);
  ASSERT_TRUE(w.Submit("a", Job("ml", "H100:8", "2h")).ok());
  w.Tick();
  auto running = RunAhead(*w.estate, w.engine->Snapshot(), w.now, {}, {"a"});
  EXPECT_EQ(running.status().code(), Code::kFailedPrecondition);
}

// The run-ahead is the scheduler itself: a live engine left to run on by
// itself (no failures, nothing new) starts each waiting job at the moment
// and on the cluster its snapshot's run-ahead foresaw, with priorities,
// two teams' quotas, borrowing, gangs and type alternatives in play.
TEST(ForecastTest, TheLiveEngineLeftToItselfDoesWhatTheRunAheadForesaw) {
  SimWorld w(kEstate);
  std::mt19937 rng(7);
  const char* shapes[] = {"H100:8", "A100:8", "{H100:8, A100:8}"};
  std::vector<std::string> ids;
  for (int i = 0; i < 40; ++i) {
    std::string id = "j" + std::to_string(i);
    int nodes = rng() % 4 == 0 ? 2 : 1;
    std::string shape = nodes == 2 ? "H100:8" : shapes[rng() % 3];
    ASSERT_TRUE(w.Submit(id, Job(rng() % 2 ? "ml" : "cv", shape, std::to_string(10 + rng() % 170) + "m", nodes,
                                 static_cast<int>(rng() % 3) * 10))
                    .ok());
    ids.push_back(id);
    if (i % 10 == 9) w.Tick(7min);
  }
  w.Tick();
  std::vector<std::string> waiting;
  for (const auto& id : ids) {
    if (!w.state.count(id)) waiting.push_back(id);
  }
  ASSERT_GT(waiting.size(), 20u);
  ForecastOptions exact;
  exact.exact_steps = 1'000'000;
  Forecast f = Ahead(w, {}, waiting, w.now, exact);
  // The live engine, from event to event.
  std::map<std::string, std::pair<Timestamp, std::string>> started;
  for (int step = 0; step < 10'000 && started.size() < waiting.size(); ++step) {
    std::optional<Timestamp> next;
    for (auto& [name, s] : w.sims) {
      auto t = s->NextEventTime();
      if (t && (!next || *t < *next)) next = t;
    }
    ASSERT_TRUE(next) << "nothing left to run, with jobs waiting";
    w.now = *next;
    for (const auto& t : w.engine->Tick(w.now)) {
      // The first start: a preempted job starts again later.
      if (t.kind == scheduler::Transition::Kind::kDispatched) started.try_emplace(t.job_id, w.now, t.cluster);
    }
  }
  for (const JobForecast& j : f.jobs) {
    ASSERT_TRUE(j.starts) << j.job << ": " << j.waiting;
    ASSERT_TRUE(started.count(j.job)) << j.job;
    EXPECT_EQ(j.start, started[j.job].first) << j.job;
    EXPECT_EQ(j.placement.cluster, started[j.job].second) << j.job;
  }
}

}  // namespace
}  // namespace causeway::planning
