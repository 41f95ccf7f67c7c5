// An engine on simulated providers in virtual time, for scheduler tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "causeway/estate.h"
#include "providers/registry.h"
#include "causeway/job_spec.h"
#include "providers/sim/sim_provider.h"
#include "scheduler/engine.h"

namespace causeway::testing {

class SimWorld {
 public:
  explicit SimWorld(const std::string& estate_yaml, uint64_t seed = 1, scheduler::EngineOptions options = {}) {
    auto e = providers::ParseEstate(estate_yaml, "estate.yaml");
    if (!e.ok()) throw std::runtime_error(e.status().ToString());
    estate = std::make_unique<Estate>(std::move(*e));
    std::map<std::string, ProviderAdapter*> adapters;
    for (const auto& p : estate->providers) {
      sims[p.name] = std::make_unique<sim::SimProvider>(*estate, p, seed);
      adapters[p.name] = sims[p.name].get();
    }
    engine = std::make_unique<scheduler::Engine>(*estate, adapters, options);
  }

  // Parses `yaml` and submits it as job `id`, created now.
  Status Submit(const std::string& id, const std::string& yaml) {
    auto spec = ParseJobSpec(yaml, id + ".yaml");
    if (!spec.ok()) return spec.status();
    specs[id] = spec->spec;
    return engine->Submit(scheduler::JobInput{id, spec->spec, now, 0, 0, 0});
  }

  // Advances time and runs one cycle; keeps every transition in `log`.
  std::vector<scheduler::Transition> Tick(Micros step = std::chrono::minutes(1)) {
    now += step;
    auto out = engine->Tick(now);
    for (const auto& t : out) {
      log.push_back(t);
      if (t.kind == scheduler::Transition::Kind::kAttemptEnded) state[t.job_id] = t.new_state;
      if (t.kind == scheduler::Transition::Kind::kDispatched) {
        state[t.job_id] = JobState::kRunning;
        cluster[t.job_id] = t.cluster;
      }
    }
    return out;
  }

  std::unique_ptr<Estate> estate;
  std::map<std::string, std::unique_ptr<sim::SimProvider>> sims;
  std::unique_ptr<scheduler::Engine> engine;
  Timestamp now = FromUnixMicros(1'780'000'000'000'000);  // 2026-05-28, inside the example reservation
  std::map<std::string, JobSpec> specs;
  std::map<std::string, JobState> state;
  std::map<std::string, std::string> cluster;
  std::vector<scheduler::Transition> log;
};

}  // namespace causeway::testing
