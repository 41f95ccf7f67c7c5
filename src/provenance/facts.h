// What is known of where an attempt ran, as its record keeps it
// (Attempt::facts): where the scheduler placed it, what the estate declares
// of that pool, and what the backend's probe found on each node.
//
// The two sources stay apart: `placement` and `declared` are the estate's
// word (the simulated estate has nothing else), `nodes` is what was measured
// where the attempt ran. A fact that could not be found is kept with the
// reason, never guessed.
//
// JSON (the attempts' `facts` column, and the provenance record):
//   {"placement": {"provider", "cluster", "region", "zone", "pool",
//                  "gpu_type", "gpus_per_node", "nodes", "interconnect"},
//    "declared": {"driver": "550.54.15", "cuda": "12.4", ...},
//    "probe": "ran" | {"not_detected": REASON},
//    "nodes": [{"name", "facts": {NAME: VALUE | {"not_detected": REASON}},
//               "gpus": [{"index", "model", "uuid", "driver", "memory_mib"}],
//               "gpus_not_detected": REASON}]}
#pragma once

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/estate.h"
#include "causeway/status.h"
#include "provenance/probe.h"

namespace causeway::provenance {

struct Placed {
  std::string provider, cluster, region, zone, pool, gpu_type, interconnect;
  int gpus_per_node = 0, nodes = 0;
};

struct AttemptFacts {
  Placed placement;
  std::map<std::string, std::string> declared;  // the pool's `software`
  bool probed = false;
  std::string probe_not_detected;  // why there are no node facts, when !probed
  std::vector<NodeFacts> nodes;
};

// The estate's part: where the attempt was placed and what the pool
// declares. A cluster or pool the estate no longer has leaves its names only.
AttemptFacts FactsAtPlacement(const Estate& estate, const std::string& cluster, const std::string& pool,
                              int gpus_per_node, int nodes);

// Adds what the probe wrote on each node (ProviderEvent::node_facts), or
// why there is nothing: `backend` names the cluster's backend in the reason
// ("the simulated estate", "Slurm").
void AddProbe(AttemptFacts& facts, const std::vector<std::string>& node_texts, bool backend_probes,
              const std::string& backend);

nlohmann::json ToJson(const AttemptFacts& facts);
// Reads what ToJson wrote; anything else (an attempt recorded before facts
// were kept: "{}") reads as facts with nothing in them.
AttemptFacts FactsFromJson(const std::string& text);

// One value the record compares and pins: the probe's on the first node
// that has it, else the estate's declaration, else "" (with `why` set).
std::string FactValue(const AttemptFacts& facts, const std::string& name, std::string* why = nullptr);

}  // namespace causeway::provenance
