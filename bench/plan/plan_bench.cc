// bench/plan: `causeway plan trace` replays on one core, with every figure
// of the report (planning/replay.h, planning/report.h), each case in a
// child process of its own so its peak memory is its own.
//
//  1. alibaba-2023: the whole default pod list on the trace's own machines
//     (target: under 1 s).
//  2. alibaba-dlrm-2025: the largest trace under ../shared/data/traces, on
//     the Alibaba 2023 machines with any GPU type (target: under 60 s).
//  3. synthetic: 1,000,000 jobs on 10,000 GPUs of 5 types, with spot
//     preemptions and node failures (target: under 60 s).
//  4. equal work to Alibaba's 2020 simulator (20,000 jobs on 6,500 GPUs in
//     about 52 s with SJF): 20,000 synthetic jobs on 6,500 GPUs; the goal is
//     at least 100x its rate (385 jobs/s).
//
//   plan_bench [--trace-dir DIR] [--only CASE]
// DIR defaults to $CAUSEWAY_SHARED_DATA/traces (CAUSEWAY_SHARED_DATA to
// ../shared/data); the real traces are skipped with a message when absent.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <random>
#include <sstream>
#include <string>

#include "planning/plan.h"
#include "planning/report.h"
#include "providers/registry.h"

using namespace causeway;
using namespace causeway::planning;

namespace {

constexpr double kAlibaba2020JobsPerSecond = 20'000.0 / 52.0;

struct Outcome {
  double seconds = 0;
  size_t jobs = 0;
  uint64_t ticks = 0;
  double wait_p95_s = 0, utilization = 0, stranded_share = 0, mean_pending = 0;
};

// Replays and summarises (the figures are part of the work measured).
Outcome Measure(const Estate& estate, const Trace& trace, ReplayOptions o) {
  auto start = std::chrono::steady_clock::now();
  auto run = Replay(estate, trace, o);
  if (!run.ok()) {
    std::fprintf(stderr, "%s\n", run.status().ToString().c_str());
    std::exit(1);
  }
  auto figures = Figures(*run);
  Outcome out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.jobs = trace.jobs.size();
  out.ticks = run->ticks;
  out.wait_p95_s = figures["all.wait_p95_s"];
  out.utilization = figures["all.utilization"];
  out.stranded_share = figures["all.stranded_share"];
  for (float p : run->series.pending) out.mean_pending += p / static_cast<double>(run->series.pending.size());
  return out;
}

void Print(const char* name, const Outcome& o, double target_s, const std::string& extra = "") {
  double rate = static_cast<double>(o.jobs) / o.seconds;
  std::printf("{\"bench\": \"plan/%s\", \"jobs\": %zu, \"scheduling_steps\": %llu, \"seconds\": %.3f, \"jobs_per_s\": %.0f, "
              "\"wait_p95_s\": %.0f, \"utilization\": %.3f, \"stranded_share\": %.4f, \"mean_pending\": %.1f%s}\n",
              name, o.jobs, static_cast<unsigned long long>(o.ticks), o.seconds, rate, o.wait_p95_s, o.utilization,
              o.stranded_share, o.mean_pending, extra.c_str());
  std::printf("  target under %.0f s: %s; vs Alibaba's 2020 simulator (385 jobs/s): %.0fx\n", target_s,
              o.seconds < target_s ? "met" : "NOT met", rate / kAlibaba2020JobsPerSecond);
}

// A synthetic estate of `gpus` GPUs: 5 providers, one type each, nodes of 8,
// spot preemptions and node failures; every type priced.
Estate SyntheticEstate(int gpus) {
  const char* types[] = {"H100", "H200", "A100-80GB", "L40S", "B200"};
  std::ostringstream y;
  y << "providers:\n";
  for (int p = 0; p < 5; ++p) {
    y << "  - {name: p" << p << ", kind: sim, regions: [{name: r, zone: z" << p % 2
      << "}], sim: {spot_preemption_per_hour: 0.05, node_failure_per_hour: 0.001}}\n";
  }
  y << "clusters:\n";
  int nodes = gpus / 8;
  for (int p = 0; p < 5; ++p) {
    y << "  - {name: c" << p << ", provider: p" << p << ", region: r, node_pools: [{name: n, gpu_type: " << types[p]
      << ", gpus_per_node: 8, nodes: " << nodes / 5 + (p < nodes % 5) << "}]}\n";
  }
  y << "prices:\n";
  for (int p = 0; p < 5; ++p) y << "  - {cluster: c" << p << ", gpu_type: " << types[p] << ", on_demand: \"" << 2 + p << ".50\", spot: \"1.25\"}\n";
  auto e = providers::ParseEstate(y.str(), "synthetic");
  if (!e.ok()) {
    std::fprintf(stderr, "%s\n", e.status().ToString().c_str());
    std::exit(1);
  }
  return std::move(*e);
}

// `n` jobs sized to keep `gpus` GPUs about 80% allocated: 1-8 GPUs on one
// node or 2-4 nodes of 8, one to three GPU types or any, a fifth on spot,
// a twentieth failing.
Trace SyntheticTrace(size_t n, int gpus) {
  std::mt19937_64 rng(42);
  Trace t;
  t.source = "synthetic";
  t.format = "causeway";
  const char* types[] = {"H100", "H200", "A100-80GB", "L40S", "B200"};
  for (int i = 0; i < 5; ++i) t.InternTypes({types[i]});
  t.InternTypes({"H100", "H200"});
  for (int i = 0; i < 10; ++i) t.Intern(t.teams, "team" + std::to_string(i));
  double mean_gpu_hours = 0;
  std::vector<TraceJob> jobs(n);
  for (auto& j : jobs) {
    bool gang = rng() % 20 == 0;
    j.gpus = gang ? 8 : 1 << (rng() % 4);
    j.nodes = gang ? 2 + static_cast<int>(rng() % 3) : 1;
    j.duration_s = 300 + static_cast<int64_t>(rng() % 7200);
    j.types = static_cast<uint16_t>(rng() % 7);  // 0: any
    j.team = static_cast<uint16_t>(1 + rng() % 10);
    j.spot = rng() % 5 == 0;
    j.priority = static_cast<int16_t>(rng() % 3 == 0 ? 100 : 50);
    if (rng() % 20 == 0) j.status = TraceStatus::kFailed;
    mean_gpu_hours += static_cast<double>(j.gpus) * j.nodes * static_cast<double>(j.duration_s) / 3600;
  }
  double span_h = mean_gpu_hours / (0.8 * gpus);
  auto span_s = static_cast<int64_t>(span_h * 3600);
  for (auto& j : jobs) j.submit_s = static_cast<int64_t>(rng() % static_cast<uint64_t>(std::max<int64_t>(span_s, 1)));
  t.jobs = std::move(jobs);
  (void)t.Finish();
  return t;
}

// Runs `fn` in a child; prints its peak resident memory.
void InChild(const char* name, const std::function<void()>& fn) {
  std::fflush(stdout);
  pid_t pid = ::fork();
  if (pid == 0) {
    fn();
    std::fflush(stdout);
    std::_Exit(0);
  }
  int status = 0;
  struct rusage usage {};
  ::wait4(pid, &status, 0, &usage);
  std::printf("  %s: peak memory %.0f MB (resident, the whole process)\n", name, static_cast<double>(usage.ru_maxrss) / 1024);
}

}  // namespace

int main(int argc, char** argv) {
  const char* shared = std::getenv("CAUSEWAY_SHARED_DATA");
  std::string dir = std::string(shared ? shared : "../shared/data") + "/traces";
  std::string only;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--trace-dir") dir = argv[i + 1];
    if (k == "--only") only = argv[i + 1];
  }
  auto wanted = [&](const char* c) { return only.empty() || only == c; };
  std::string pods = dir + "/alibaba-gpu-2023/openb_pod_list_default.csv";
  std::string dlrm = dir + "/alibaba-dlrm-2025/disaggregated_DLRM_trace.csv";
  bool have = std::filesystem::exists(pods) && std::filesystem::exists(dlrm);
  if (!have) std::printf("{\"bench\": \"plan/traces\", \"skipped\": \"traces not found in %s (set CAUSEWAY_SHARED_DATA)\"}\n", dir.c_str());
  if (have && wanted("alibaba-2023")) {
    InChild("alibaba-2023", [&] {
      auto start = std::chrono::steady_clock::now();
      auto trace = ReadTrace(pods, TraceFormat::kAlibaba2023);
      auto estate = TraceEstate(*trace);
      double read_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      Outcome o = Measure(*estate, *trace, {});
      Print("alibaba-2023", o, 1.0, ", \"read_seconds\": " + std::to_string(read_s));
    });
  }
  if (have && wanted("alibaba-dlrm-2025")) {
    InChild("alibaba-dlrm-2025", [&] {
      auto machines = ReadTrace(pods, TraceFormat::kAlibaba2023);
      auto estate = TraceEstate(*machines);
      auto trace = ReadTrace(dlrm, TraceFormat::kAlibabaDlrm2025);
      ReplayOptions o;
      o.any_gpu_type = true;
      Print("alibaba-dlrm-2025", Measure(*estate, *trace, o), 60.0);
    });
  }
  if (wanted("synthetic")) {
    InChild("synthetic-1m", [&] {
      Trace trace = SyntheticTrace(1'000'000, 10'000);
      Estate estate = SyntheticEstate(10'000);
      Print("synthetic-1m", Measure(estate, trace, {}), 60.0);
    });
  }
  if (wanted("equal-work")) {
    InChild("equal-work", [&] {
      Trace trace = SyntheticTrace(20'000, 6'500);
      Estate estate = SyntheticEstate(6'504);
      Outcome o = Measure(estate, trace, {});
      Print("equal-work-20k-on-6500", o, 52.0, ", \"alibaba_2020_seconds\": 52");
      std::printf("  goal at least 100x Alibaba's 2020 rate: %s (%.0fx)\n",
                  static_cast<double>(o.jobs) / o.seconds >= 100 * kAlibaba2020JobsPerSecond ? "met" : "NOT met",
                  static_cast<double>(o.jobs) / o.seconds / kAlibaba2020JobsPerSecond);
    });
  }
  return 0;
}
