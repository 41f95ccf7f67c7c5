// What the scheduler benchmarks share: an engine on simulated providers,
// job specs made in code, and the synthetic estate (1,000 clusters of 5 GPU
// types on 10 providers, 100 team queues in 10 cohorts).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "providers/registry.h"
#include "providers/sim/sim_provider.h"
#include "scheduler/engine.h"

namespace causeway::bench {

inline const char* const kTypes[] = {"H100", "H200", "A100-80GB", "L4", "B200"};

struct World {
  std::unique_ptr<Estate> estate;
  std::vector<std::unique_ptr<sim::SimProvider>> sims;
  std::unique_ptr<scheduler::Engine> engine;

  explicit World(const std::string& yaml) {
    auto e = providers::ParseEstate(yaml, "bench-estate");
    if (!e.ok()) {
      std::fprintf(stderr, "%s\n", e.status().ToString().c_str());
      std::exit(1);
    }
    estate = std::make_unique<Estate>(std::move(*e));
    std::map<std::string, ProviderAdapter*> adapters;
    for (const auto& p : estate->providers) {
      sims.push_back(std::make_unique<sim::SimProvider>(*estate, p, 42));
      adapters[p.name] = sims.back().get();
    }
    engine = std::make_unique<scheduler::Engine>(*estate, adapters);
  }

  std::optional<Timestamp> NextEnd() {
    std::optional<Timestamp> next;
    for (auto& s : sims) {
      auto t = s->NextEventTime();
      if (t && (!next || *t < *next)) next = t;
    }
    return next;
  }
};

inline JobSpec Spec(const std::string& team, std::vector<GpuRequest> alts, int nodes, int priority, Micros duration) {
  JobSpec s;
  s.team = team;
  for (const GpuRequest& g : alts) {
    Alternative a;
    static_cast<GpuRequest&>(a) = g;
    s.accelerators.alternatives.push_back(std::move(a));
  }
  s.num_nodes = nodes;
  s.priority = priority;
  s.sim.duration = duration;
  return s;
}

// 1,000 clusters (4-16 nodes of 8 GPUs each), prices, 100 teams with a
// queue each in 10 cohorts, quotas of 40-99 GPUs per flavor.
inline std::string SyntheticEstate(std::mt19937_64& rng) {
  std::ostringstream y;
  y << "providers:\n";
  for (int p = 0; p < 10; ++p) y << "  - {name: p" << p << ", kind: sim, regions: [{name: r, zone: z" << p % 3 << "}]}\n";
  y << "clusters:\n";
  for (int c = 0; c < 1000; ++c) {
    y << "  - {name: c" << c << ", provider: p" << c % 10 << ", region: r, node_pools: [{name: n, gpu_type: "
      << kTypes[c % 5] << ", gpus_per_node: 8, nodes: " << 4 + rng() % 13 << "}]}\n";
  }
  y << "prices:\n";
  for (int c = 0; c < 1000; ++c) {
    y << "  - {cluster: c" << c << ", gpu_type: " << kTypes[c % 5] << ", on_demand: \"" << 1 + rng() % 5 << "."
      << rng() % 100 << "\"}\n";
  }
  y << "teams:\n";
  for (int t = 0; t < 100; ++t) y << "  - {name: t" << t << "}\n";
  y << "queues:\n";
  for (int q = 0; q < 100; ++q) {
    y << "  - {name: q" << q << ", team: t" << q << ", cohort: k" << q % 10 << ", quotas: [";
    for (int f = 0; f < 5; ++f) y << (f ? ", " : "") << "{flavor: " << kTypes[f] << ", nominal: " << 40 + rng() % 60 << "}";
    y << "]}\n";
  }
  return y.str();
}

// A random job of the synthetic workload: 1-8 GPUs of one type, a quarter
// with a whole-node alternative, a tenth on two nodes, three priorities,
// 30 min to 10.5 h.
inline JobSpec SyntheticJob(std::mt19937_64& rng) {
  std::vector<GpuRequest> alts = {{kTypes[rng() % 5], 1 << (rng() % 4)}};
  if (rng() % 4 == 0) alts.push_back({kTypes[rng() % 5], 8});
  if (alts.size() == 2 && alts[0].type == alts[1].type) alts.pop_back();
  return Spec("t" + std::to_string(rng() % 100), alts, rng() % 10 == 0 ? 2 : 1, static_cast<int>(rng() % 3) * 50,
              std::chrono::minutes(30 + rng() % 600));
}

}  // namespace causeway::bench
