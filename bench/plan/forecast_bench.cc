// bench/plan/forecast: `causeway plan job` — when a job would likely start
// — with 10,000 jobs pending. Each query is what the server does for one
// plan: the engine's snapshot copied (here every time, as if the engine had
// changed since the last query) and run ahead with the candidate until it
// starts. One core, one query at a time; p50, p99 and the largest time.
//
//  1. company: the example estate (examples/estate.yaml: 6 clusters, 870
//     GPUs, 4 team queues in a cohort) full of running work, 10,000 jobs
//     waiting, made of the example jobs (examples/jobs) with random
//     durations and priorities, and candidates made the same way;
//  2. synthetic: the synthetic estate of bench/schedule (1,000 clusters,
//     100 queues in 10 cohorts), about 8,700 jobs running and 10,000
//     waiting, of random shapes — a stress case far past the first.
//
//   forecast_bench [QUERIES] [EXAMPLES_DIR]   (default 300, ./examples)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <vector>

#include "common/synthetic.h"
#include "planning/forecast.h"
#include "planning/replay.h"  // Percentile

using namespace causeway;
using SteadyClock = std::chrono::steady_clock;

namespace {

const Timestamp kStart = FromUnixMicros(1'780'000'000'000'000);

// Fills `w` with running work and keeps `pending` jobs waiting, made by `make`.
template <typename Make>
Timestamp Fill(bench::World& w, size_t pending, Make make) {
  Timestamp now = kStart;
  int next_id = 0;
  // Each submitted a microsecond after the one before, as real ones are
  // apart (the queues' order then rarely falls back to comparing ids).
  auto add = [&] {
    ++next_id;
    (void)w.engine->Submit(scheduler::JobInput{"job" + std::to_string(next_id), make(), now + Micros(next_id), 0, 0, 0});
  };
  for (size_t i = 0; i < pending; ++i) add();
  for (int cycle = 0; cycle < 20; ++cycle) {
    w.engine->Tick(now);
    while (w.engine->pending() < pending) add();
    now += std::chrono::minutes(1);
  }
  w.engine->Tick(now);
  while (w.engine->pending() < pending) add();
  return now;
}

template <typename Make>
void Measure(const char* name, bench::World& w, Timestamp now, int queries, Make make) {
  std::vector<double> ms;
  int64_t steps = 0, started = 0;
  double copy_ms = 0;
  for (int q = 0; q < queries; ++q) {
    JobSpec spec = make();
    auto t0 = SteadyClock::now();
    scheduler::EngineSnapshot snap = w.engine->Snapshot();
    auto t1 = SteadyClock::now();
    std::string id = "plan" + std::to_string(q);
    auto f = planning::RunAhead(*w.estate, snap, now, {scheduler::JobInput{id, spec, now, 0, 0, 0}}, {id});
    auto t2 = SteadyClock::now();
    if (!f.ok()) {
      std::fprintf(stderr, "%s\n", f.status().ToString().c_str());
      std::exit(1);
    }
    ms.push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
    copy_ms += std::chrono::duration<double, std::milli>(t1 - t0).count();
    steps += f->steps;
    started += f->jobs[0].starts;
  }
  const double p50 = planning::Percentile(ms, 50), p99 = planning::Percentile(ms, 99);
  std::printf("{\"bench\": \"plan/forecast/%s\", \"pending\": %zu, \"running\": %zu, \"queries\": %d, "
              "\"started_within_horizon\": %lld, \"p50_ms\": %.2f, \"p99_ms\": %.2f, \"max_ms\": %.2f, "
              "\"snapshot_copy_ms_mean\": %.2f, \"steps_mean\": %.1f}\n",
              name, w.engine->pending(), w.engine->running(), queries, static_cast<long long>(started), p50, p99,
              ms.back(), copy_ms / queries, static_cast<double>(steps) / queries);
  std::printf("  target p99 < 50 ms with 10,000 pending: %s (p99 is %.2fx the target)\n", p99 < 50 ? "met" : "NOT met",
              p99 / 50);
}

// The example jobs, each with a random duration (10 min to 8 h) and
// priority.
struct ExampleJobs {
  std::vector<JobSpec> specs;
  std::mt19937_64 rng{5};
  JobSpec operator()() {
    JobSpec s = specs[rng() % specs.size()];
    s.sim.duration = std::chrono::minutes(10 + rng() % 470);
    s.priority = static_cast<int>(rng() % 3) * 100;
    return s;
  }
};

void Company(int queries, const std::filesystem::path& examples) {
  auto text = ReadFile((examples / "estate.yaml").string());
  if (!text.ok()) {
    std::printf("plan/forecast/company skipped: %s\n", text.status().ToString().c_str());
    return;
  }
  bench::World w(*text);
  ExampleJobs jobs;
  for (const auto& entry : std::filesystem::directory_iterator(examples / "jobs")) {
    auto t = ReadFile(entry.path().string());
    auto spec = t.ok() ? ParseJobSpec(*t, entry.path().filename().string()) : Result<ParsedJobSpec>(t.status());
    // Only what the estate takes as it is (a job without an owner, say, is
    // refused at submission).
    if (!spec.ok() || spec->spec.team.empty() || !w.estate->QueueForTeam(spec->spec.team)) continue;
    jobs.specs.push_back(spec->spec);
  }
  Timestamp now = Fill(w, 10'000, jobs);
  Measure("company", w, now, queries, jobs);
}

void Synthetic(int queries) {
  std::mt19937_64 rng(11);
  bench::World w(bench::SyntheticEstate(rng));
  auto make = [&] { return bench::SyntheticJob(rng); };
  Timestamp now = Fill(w, 10'000, make);
  Measure("synthetic", w, now, queries, make);
}

}  // namespace

int main(int argc, char** argv) {
  const int queries = argc > 1 ? std::max(1, std::atoi(argv[1])) : 300;
  const std::filesystem::path examples = argc > 2 ? argv[2] : "examples";
  Company(queries, examples);
  Synthetic(std::max(1, queries / 10));
  return 0;
}
