// bench/schedule: the scheduler's admission + placement speed, on one core,
// in virtual time on simulated providers.
//
//  1. Synthetic: 10,000 pending jobs, 100 team queues in 10 cohorts, 1,000
//     clusters; jobs finish and the queue refills. Reports decisions/s (one
//     decision = one attempt to admit and place one pending job).
//  2. Alibaba 2023 GPU trace: every task of openb_pod_list_default.csv (or
//     another pod list) replayed at its arrival time onto the trace's nodes;
//     reports the wall time to admit and place them all.
//
//   schedule_bench [--trace-dir DIR] [--pods FILE]
// DIR defaults to $CAUSEWAY_SHARED_DATA/traces/alibaba-gpu-2023 (and
// CAUSEWAY_SHARED_DATA to ../shared/data); the trace part is skipped with a
// message when it is absent.
#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/synthetic.h"

using namespace causeway;
using causeway::bench::Spec;
using causeway::bench::World;
using SteadyClock = std::chrono::steady_clock;

namespace {

double Seconds(SteadyClock::time_point since) { return std::chrono::duration<double>(SteadyClock::now() - since).count(); }

// ---- 1. synthetic ----

void Synthetic() {
  std::mt19937_64 rng(7);
  World w(bench::SyntheticEstate(rng));
  Timestamp now = FromUnixMicros(1'780'000'000'000'000);
  int next_id = 0;
  auto add = [&] {
    std::string id = "job" + std::to_string(next_id++);
    (void)w.engine->Submit(scheduler::JobInput{id, bench::SyntheticJob(rng), now, 0, 0, 0});
  };
  for (int i = 0; i < 10'000; ++i) add();

  auto start = SteadyClock::now();
  uint64_t dispatched = 0;
  int ticks = 0;
  while (Seconds(start) < 5.0 && ticks < 5000) {
    for (const auto& t : w.engine->Tick(now)) dispatched += t.kind == scheduler::Transition::Kind::kDispatched;
    ++ticks;
    while (w.engine->pending() < 10'000) add();  // keep 10,000 waiting
    auto next = w.NextEnd();
    now = next ? *next : now + std::chrono::minutes(1);
  }
  double secs = Seconds(start);
  double rate = static_cast<double>(w.engine->decisions()) / secs;
  std::printf("{\"bench\": \"schedule/synthetic\", \"pending\": 10000, \"queues\": 100, \"cohorts\": 10, \"clusters\": 1000, "
              "\"cycles\": %d, \"decisions\": %llu, \"dispatched\": %llu, \"seconds\": %.2f, \"decisions_per_s\": %.0f}\n",
              ticks, static_cast<unsigned long long>(w.engine->decisions()), static_cast<unsigned long long>(dispatched),
              secs, rate);
  std::printf("  target >= 100,000 decisions/s on one core: %s; vs Kueue's ~43 workloads/s: %.0fx; "
              "vs YuniKorn's 400-800 pods/s: %.0f-%.0fx\n",
              rate >= 100'000 ? "met" : "NOT met", rate / 43, rate / 800, rate / 400);
}

// ---- 2. Alibaba 2023 trace ----

std::vector<std::vector<std::string>> ReadCsv(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<std::string>> rows;
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    if (!line.empty() && line.back() == ',') cells.emplace_back();
    rows.push_back(std::move(cells));
  }
  return rows;
}

void Trace(const std::string& dir, const std::string& pods_file) {
  std::string nodes_path = dir + "/openb_node_list_gpu_node.csv", pods_path = dir + "/" + pods_file;
  if (!std::filesystem::exists(nodes_path) || !std::filesystem::exists(pods_path)) {
    std::printf("{\"bench\": \"schedule/alibaba-2023\", \"skipped\": \"trace not found in %s (set CAUSEWAY_SHARED_DATA)\"}\n",
                dir.c_str());
    return;
  }
  // One pool per (GPU model, GPUs per node): the trace's 1,213 GPU nodes.
  std::map<std::pair<std::string, int>, int> pools;
  for (const auto& r : ReadCsv(nodes_path)) {
    if (r.size() >= 5 && std::atoi(r[3].c_str()) > 0) ++pools[{r[4], std::atoi(r[3].c_str())}];
  }
  std::ostringstream y;
  y << "providers: [{name: openb, kind: sim, regions: [{name: cn, zone: cn}]}]\nclusters:\n  - name: openb\n"
       "    provider: openb\n    region: cn\n    node_pools:\n";
  int nodes = 0;
  for (const auto& [key, count] : pools) {
    std::string pool = key.first + "-" + std::to_string(key.second);
    std::transform(pool.begin(), pool.end(), pool.begin(), [](unsigned char c) { return std::tolower(c); });
    y << "      - {name: " << pool << ", gpu_type: " << key.first
      << ", gpus_per_node: " << key.second << ", nodes: " << count << "}\n";
    nodes += count;
  }
  World w(y.str());
  std::vector<std::string> models;
  for (const auto& [key, count] : pools) {
    if (models.empty() || models.back() != key.first) models.push_back(key.first);
  }

  struct Task {
    Timestamp arrival;
    JobSpec spec;
  };
  std::vector<Task> tasks;
  int cpu_only = 0, fractional = 0;
  Timestamp base = FromUnixMicros(1'780'000'000'000'000);
  for (const auto& r : ReadCsv(pods_path)) {
    int gpus = std::atoi(r[3].c_str());
    int milli = std::atoi(r[4].c_str());
    if (gpus == 0) {
      ++cpu_only;  // CPU-only work: nothing for a GPU scheduler to place
      continue;
    }
    if (milli < 1000) ++fractional;  // GPU-sharing tasks take a whole GPU here
    int64_t created = r.size() > 8 && !r[8].empty() ? std::atoll(r[8].c_str()) : 0;
    int64_t deleted = r.size() > 9 && !r[9].empty() ? std::atoll(r[9].c_str()) : created + 3600;
    std::vector<std::string> allowed = models;
    if (r.size() > 5 && !r[5].empty()) {
      allowed.clear();
      std::stringstream ss(r[5]);
      std::string m;
      while (std::getline(ss, m, '|')) {
        if (std::find(allowed.begin(), allowed.end(), m) == allowed.end()) allowed.push_back(m);
      }
    }
    std::vector<GpuRequest> alts;
    for (const auto& m : allowed) alts.push_back({m, gpus});
    Micros duration = std::chrono::seconds(std::max<int64_t>(60, deleted - created));
    tasks.push_back({base + std::chrono::seconds(created), Spec("", alts, 1, 50, duration)});
  }

  auto start = SteadyClock::now();
  size_t next = 0, placed = 0;
  Timestamp now = base;
  int cycles = 0;
  while (placed < tasks.size()) {
    while (next < tasks.size() && tasks[next].arrival <= now) {
      (void)w.engine->Submit(scheduler::JobInput{"pod" + std::to_string(next), tasks[next].spec, tasks[next].arrival, 0, 0, 0});
      ++next;
    }
    for (const auto& t : w.engine->Tick(now)) placed += t.kind == scheduler::Transition::Kind::kDispatched;
    ++cycles;
    // Jump to the next arrival or the next task end, whichever is sooner.
    std::optional<Timestamp> jump = w.NextEnd();
    if (next < tasks.size() && (!jump || tasks[next].arrival < *jump)) jump = tasks[next].arrival;
    if (!jump) break;
    now = std::max(now, *jump);
  }
  double secs = Seconds(start);
  std::printf("{\"bench\": \"schedule/alibaba-2023\", \"pods_file\": \"%s\", \"nodes\": %d, \"gpu_tasks\": %zu, "
              "\"placed\": %zu, \"cpu_only_skipped\": %d, \"fractional_as_whole_gpu\": %d, \"cycles\": %d, "
              "\"decisions\": %llu, \"seconds\": %.3f}\n",
              pods_file.c_str(), nodes, tasks.size(), placed, cpu_only, fractional, cycles,
              static_cast<unsigned long long>(w.engine->decisions()), secs);
  std::printf("  target: the whole trace in under 1 s: %s\n", secs < 1.0 && placed == tasks.size() ? "met" : "NOT met");
}

}  // namespace

int main(int argc, char** argv) {
  const char* shared = std::getenv("CAUSEWAY_SHARED_DATA");
  std::string dir = std::string(shared ? shared : "../shared/data") + "/traces/alibaba-gpu-2023";
  std::string pods = "openb_pod_list_default.csv";
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k == "--trace-dir") dir = argv[i + 1];
    if (k == "--pods") pods = argv[i + 1];
  }
  Synthetic();
  Trace(dir, pods);
  return 0;
}
