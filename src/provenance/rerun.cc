#include "provenance/rerun.h"

#include <yaml-cpp/yaml.h>

#include "provenance/facts.h"

namespace causeway::provenance {

namespace {

const Attempt* Basis(const JobHistory& h) {
  const Attempt* basis = nullptr;
  for (const Attempt& a : h.attempts) {
    if (a.state == "succeeded" || !basis || basis->state != "succeeded") basis = &a;
  }
  return basis;
}

}  // namespace

Result<RerunPlan> PlanRerun(const JobHistory& h, const Estate& estate, const std::string& on) {
  const Attempt* basis = Basis(h);
  if (!basis) return FailedPrecondition("job " + h.job.id + " never ran: there is nothing to pin a rerun to");
  YAML::Node spec;
  try {
    spec = YAML::Load(h.job.spec_yaml);
  } catch (const YAML::Exception& e) {
    return FailedPrecondition("the stored spec of " + h.job.id + " cannot be read again: " + e.what());
  }
  if (!spec.IsMap()) return FailedPrecondition("the stored spec of " + h.job.id + " is not a map");
  RerunPlan plan;
  AttemptFacts f = FactsFromJson(basis->facts);
  YAML::Node res = spec["resources"];
  if (!res.IsMap()) res = YAML::Node(YAML::NodeType::Map);
  // Alternatives give way to the one that ran.
  res.remove("any_of");
  res.remove("ordered");
  auto pin = [&](const std::string& field, const std::string& value, const std::string& from) {
    plan.pins.push_back(Pin{field, value, from});
  };
  if (!f.placement.gpu_type.empty() && f.placement.gpu_type != "CPU") {
    YAML::Node acc(YAML::NodeType::Map);
    acc[f.placement.gpu_type] = f.placement.gpus_per_node;
    res["accelerators"] = acc;
    pin("resources.accelerators", f.placement.gpu_type + ":" + std::to_string(f.placement.gpus_per_node), "record");
  }
  if (f.placement.nodes > 0) {
    spec["num_nodes"] = f.placement.nodes;
    pin("num_nodes", std::to_string(f.placement.nodes), "record");
  }
  for (auto [name, field] : {std::pair{"cuda", "resources.cuda"}, std::pair{"driver", "resources.driver"}}) {
    std::string why;
    std::string value = FactValue(f, name, &why);
    // A driver's "CUDA Version" is the newest it supports: the rerun needs
    // at least that, a driver exactly that.
    if (value.empty()) {
      plan.unpinned.push_back(std::string(field) + ": " + why);
      continue;
    }
    std::string want = std::string(name) == "cuda" ? ">=" + value : value;
    res[std::string(name)] = want;
    pin(field, want, f.probed && !f.nodes.empty() && f.nodes.front().facts.count(name) ? "probe" : "estate");
  }
  std::string image = res["image_id"] ? res["image_id"].as<std::string>("") : "";
  if (auto d = f.declared.find("image"); image.empty() && d != f.declared.end()) image = d->second;
  if (!image.empty()) {
    if (image.find("@sha256:") != std::string::npos) {
      res["image_id"] = image;
      pin("resources.image_id", image, "record");
    } else {
      plan.unpinned.push_back("resources.image_id: " + image + " is a tag and no digest was recorded for it");
    }
  }
  if (!on.empty()) {
    const Cluster* c = estate.FindCluster(on);
    if (!c) return NotFound("there is no cluster " + on + " in the estate");
    res["infra"] = c->provider + "/" + c->region;
    res.remove("cloud");
    res.remove("region");
    pin("resources.infra", c->provider + "/" + c->region, "--on " + on);
  }
  spec["resources"] = res;
  if (YAML::Node wd = spec["workdir"]; wd.IsMap() && wd["url"]) {
    std::string revision;
    for (const Attempt& a : h.attempts) {
      if (revision.empty()) revision = FactValue(FactsFromJson(a.facts), "code_revision");
    }
    if (!revision.empty()) {
      wd["ref"] = revision;
      pin("workdir.ref", revision, "probe");
    } else {
      plan.unpinned.push_back("workdir.ref: no commit was recorded for the workdir");
    }
  }
  if (spec["name"]) spec["name"] = spec["name"].as<std::string>("job") + "-rerun";
  YAML::Emitter out;
  out << spec;
  plan.yaml = std::string(out.c_str()) + "\n";
  return plan;
}

}  // namespace causeway::provenance
