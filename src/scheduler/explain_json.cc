#include "scheduler/explain_json.h"

namespace causeway::scheduler {

using nlohmann::json;

json ToJson(const Placement& p) {
  return {{"cluster", p.cluster},   {"pool", p.pool},         {"provider", p.provider},
          {"zone", p.zone},         {"flavor", p.flavor},     {"gpus", p.gpus},
          {"reserved", p.reserved}, {"borrowed", p.borrowed}, {"price_per_gpu_hour", p.price_per_gpu_hour},
          {"data_local", p.data_local}, {"why", p.why}};
}

json ToJson(const Explanation& e) {
  json out = {{"job", e.job}, {"state", e.state}};
  if (!e.waiting.empty()) out["waiting"] = e.waiting;
  if (!e.queue.empty()) out["queue"] = e.queue;
  if (e.position > 0) out["position"] = {{"position", e.position}, {"queued", e.queued}};
  if (e.placement) out["placement"] = ToJson(*e.placement);
  json alternatives = json::array();
  for (const Explanation::Alternative& a : e.alternatives) {
    json j = {{"accelerators", a.accelerators}, {"nodes", a.nodes}, {"flavor", a.flavor}, {"gpus", a.gpus}};
    if (!a.quota_verdict.empty()) j["quota"] = {{"verdict", a.quota_verdict}, {"reason", a.quota_reason}};
    alternatives.push_back(std::move(j));
  }
  out["alternatives"] = alternatives;
  json candidates = json::array();
  for (const Explanation::Candidate& c : e.candidates) {
    json j = {{"cluster", c.cluster}, {"accelerators", c.accelerators}, {"eligible", c.eligible}};
    if (!c.pool.empty()) j["pool"] = c.pool;
    if (c.eligible) {
      j["reserved"] = c.reserved;
      j["price_per_gpu_hour"] = c.price_per_gpu_hour;
      j["data_local"] = c.data_local;
      if (!c.data.empty()) j["data"] = c.data;
      j["load_percent"] = c.load_percent;
    } else {
      j["reason"] = c.reason;
    }
    candidates.push_back(std::move(j));
  }
  out["candidates"] = candidates;
  return out;
}

json ToJson(const std::vector<QueueStatus>& queues) {
  json out = json::array();
  for (const QueueStatus& q : queues) {
    json flavors = json::array();
    for (const QueueStatus::Flavor& f : q.flavors) {
      flavors.push_back({{"flavor", f.flavor}, {"nominal", f.nominal}, {"used", f.used}, {"borrowing", f.borrowing}});
    }
    json j = {{"name", q.name},       {"team", q.team},       {"cohort", q.cohort},
              {"weight", q.weight},   {"flavors", flavors},   {"pending", q.pending},
              {"running", q.running}, {"dominant_share_permille", q.dominant_share_permille}};
    if (q.budget) {
      j["budget"] = {{"monthly", q.budget->monthly},
                     {"spent", q.budget->spent},
                     {"currency", q.budget->currency},
                     {"exhausted", q.budget->exhausted}};
    }
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace causeway::scheduler
