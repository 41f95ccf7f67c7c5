#include "provenance/facts.h"

namespace causeway::provenance {

using nlohmann::json;

AttemptFacts FactsAtPlacement(const Estate& estate, const std::string& cluster, const std::string& pool,
                              int gpus_per_node, int nodes) {
  AttemptFacts f;
  Placed& p = f.placement;
  p.cluster = cluster;
  p.pool = pool;
  p.gpus_per_node = gpus_per_node;
  p.nodes = nodes;
  const Cluster* c = estate.FindCluster(cluster);
  if (!c) return f;
  p.provider = c->provider;
  p.region = c->region;
  p.zone = c->zone;
  for (const NodePool& np : c->node_pools) {
    if (np.name != pool) continue;
    p.gpu_type = np.gpu_type;
    p.interconnect = np.interconnect;
    f.declared = np.software;
  }
  return f;
}

void AddProbe(AttemptFacts& facts, const std::vector<std::string>& node_texts, bool backend_probes,
              const std::string& backend) {
  if (!backend_probes) {
    facts.probe_not_detected = backend + " runs no probe: the facts are what its pools declare";
    return;
  }
  if (node_texts.empty()) {
    facts.probe_not_detected = "the probe wrote no facts that " + backend +
                               " could read (the attempt ended before it ran, or its output directory is not readable here)";
    return;
  }
  facts.probed = true;
  for (const std::string& text : node_texts) {
    if (facts.nodes.size() >= static_cast<size_t>(kMaxProbedNodes)) break;
    facts.nodes.push_back(ParseProbe(text));
  }
}

namespace {

json FactJson(const Fact& f) { return f.detected() ? json(f.value) : json{{"not_detected", f.not_detected}}; }

std::string Str(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

int Int(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int>() : 0;
}

}  // namespace

json ToJson(const AttemptFacts& f) {
  const Placed& p = f.placement;
  json out = {{"placement",
               {{"provider", p.provider}, {"cluster", p.cluster}, {"region", p.region}, {"zone", p.zone},
                {"pool", p.pool}, {"gpu_type", p.gpu_type}, {"gpus_per_node", p.gpus_per_node}, {"nodes", p.nodes},
                {"interconnect", p.interconnect}}},
              {"declared", f.declared}};
  if (f.probed) {
    out["probe"] = "ran";
  } else if (!f.probe_not_detected.empty()) {
    out["probe"] = {{"not_detected", f.probe_not_detected}};
  }
  json nodes = json::array();
  for (const NodeFacts& n : f.nodes) {
    json facts = json::object();
    for (const auto& [name, fact] : n.facts) facts[name] = FactJson(fact);
    json gpus = json::array();
    for (const Gpu& g : n.gpus) {
      gpus.push_back({{"index", g.index}, {"model", g.model}, {"uuid", g.uuid}, {"driver", g.driver},
                      {"memory_mib", g.memory_mib}});
    }
    json node = {{"name", n.name}, {"facts", facts}, {"gpus", gpus}};
    if (!n.gpus_not_detected.empty()) node["gpus_not_detected"] = n.gpus_not_detected;
    nodes.push_back(std::move(node));
  }
  out["nodes"] = std::move(nodes);
  return out;
}

AttemptFacts FactsFromJson(const std::string& text) {
  AttemptFacts f;
  // Facts this server wrote (ToJson below); an attempt recorded before facts existed has none.
  json j = json::parse(text, nullptr, false);
  if (!j.is_object()) return f;
  if (auto p = j.find("placement"); p != j.end() && p->is_object()) {
    f.placement = Placed{Str(*p, "provider"), Str(*p, "cluster"), Str(*p, "region"),   Str(*p, "zone"),
                         Str(*p, "pool"),     Str(*p, "gpu_type"), Str(*p, "interconnect"), Int(*p, "gpus_per_node"),
                         Int(*p, "nodes")};
  }
  if (auto d = j.find("declared"); d != j.end() && d->is_object()) {
    for (const auto& [k, v] : d->items()) {
      if (v.is_string()) f.declared[k] = v.get<std::string>();
    }
  }
  if (auto p = j.find("probe"); p != j.end()) {
    f.probed = p->is_string() && *p == "ran";
    if (p->is_object()) f.probe_not_detected = Str(*p, "not_detected");
  }
  if (auto nodes = j.find("nodes"); nodes != j.end() && nodes->is_array()) {
    for (const json& n : *nodes) {
      if (!n.is_object()) continue;
      NodeFacts node;
      node.name = Str(n, "name");
      node.gpus_not_detected = Str(n, "gpus_not_detected");
      if (auto facts = n.find("facts"); facts != n.end() && facts->is_object()) {
        for (const auto& [k, v] : facts->items()) {
          node.facts[k] = v.is_string() ? Fact{v.get<std::string>(), ""} : Fact{"", Str(v, "not_detected")};
        }
      }
      if (auto gpus = n.find("gpus"); gpus != n.end() && gpus->is_array()) {
        for (const json& g : *gpus) {
          node.gpus.push_back(Gpu{Str(g, "index"), Str(g, "model"), Str(g, "uuid"), Str(g, "driver"), Str(g, "memory_mib")});
        }
      }
      f.nodes.push_back(std::move(node));
    }
  }
  return f;
}

std::string FactValue(const AttemptFacts& f, const std::string& name, std::string* why) {
  std::string reason;
  for (const NodeFacts& n : f.nodes) {
    if (name == "gpu_model" && !n.gpus.empty()) return n.gpus.front().model;
    auto it = n.facts.find(name);
    if (it == n.facts.end()) continue;
    if (it->second.detected()) return it->second.value;
    if (reason.empty()) reason = it->second.not_detected;
  }
  if (name == "gpu_model" && reason.empty() && !f.nodes.empty()) reason = f.nodes.front().gpus_not_detected;
  if (auto d = f.declared.find(name); d != f.declared.end()) return d->second;
  if (name == "interconnect" && !f.placement.interconnect.empty() && f.nodes.empty()) return f.placement.interconnect;
  if (name == "gpu_model" && !f.placement.gpu_type.empty() && f.nodes.empty()) return f.placement.gpu_type;
  if (why) *why = !reason.empty() ? reason : !f.probe_not_detected.empty() ? f.probe_not_detected : "not recorded";
  return "";
}

}  // namespace causeway::provenance
