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

// The hardware it ran on: the GPU type and count per node (alternatives
// give way to the one that ran), and the number of nodes.
void PinHardware(const AttemptFacts& f, YAML::Node& spec, YAML::Node& res, RerunPlan& plan) {
  res.remove("any_of");
  res.remove("ordered");
  if (!f.placement.gpu_type.empty() && f.placement.gpu_type != kCpuType) {
    YAML::Node acc(YAML::NodeType::Map);
    acc[f.placement.gpu_type] = f.placement.gpus_per_node;
    res["accelerators"] = acc;
    plan.pins.push_back(
        {"resources.accelerators", f.placement.gpu_type + ":" + std::to_string(f.placement.gpus_per_node), "record"});
  }
  if (f.placement.nodes > 0) {
    spec["num_nodes"] = f.placement.nodes;
    plan.pins.push_back({"num_nodes", std::to_string(f.placement.nodes), "record"});
  }
}

// The software: CUDA (a driver's "CUDA Version" is the newest it supports,
// so at least that) and the exact driver; the image by digest.
void PinSoftware(const AttemptFacts& f, YAML::Node& res, RerunPlan& plan) {
  for (auto [name, field] : {std::pair{"cuda", "resources.cuda"}, std::pair{"driver", "resources.driver"}}) {
    std::string why;
    std::string value = FactValue(f, name, &why);
    if (value.empty()) {
      plan.unpinned.push_back(std::string(field) + ": " + why);
      continue;
    }
    std::string want = std::string(name) == "cuda" ? ">=" + value : value;
    res[std::string(name)] = want;
    bool probed = f.probed && !f.nodes.empty() && f.nodes.front().facts.count(name);
    plan.pins.push_back({field, want, probed ? "probe" : "estate"});
  }
  std::string image = res["image_id"] ? res["image_id"].as<std::string>("") : "";
  if (auto d = f.declared.find("image"); image.empty() && d != f.declared.end()) image = d->second;
  if (image.empty()) return;
  if (image.find("@sha256:") != std::string::npos) {
    res["image_id"] = image;
    plan.pins.push_back({"resources.image_id", image, "record"});
  } else {
    plan.unpinned.push_back("resources.image_id: " + image + " is a tag and no digest was recorded for it");
  }
}

// A git workdir at the commit the probe found.
void PinCommit(const JobHistory& h, YAML::Node& spec, RerunPlan& plan) {
  YAML::Node wd = spec["workdir"];
  if (!wd.IsMap() || !wd["url"]) return;
  std::string revision;
  for (const Attempt& a : h.attempts) {
    if (revision.empty()) revision = FactValue(FactsFromJson(a.facts), "code_revision");
  }
  if (revision.empty()) {
    plan.unpinned.push_back("workdir.ref: no commit was recorded for the workdir");
    return;
  }
  wd["ref"] = revision;
  plan.pins.push_back({"workdir.ref", revision, "probe"});
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
  PinHardware(f, spec, res, plan);
  PinSoftware(f, res, plan);
  if (!on.empty()) {
    const Cluster* c = estate.FindCluster(on);
    if (!c) return NotFound("there is no cluster " + on + " in the estate");
    res["infra"] = c->provider + "/" + c->region;
    res.remove("cloud");
    res.remove("region");
    plan.pins.push_back({"resources.infra", c->provider + "/" + c->region, "--on " + on});
  }
  spec["resources"] = res;
  PinCommit(h, spec, plan);
  if (spec["name"]) spec["name"] = spec["name"].as<std::string>("job") + "-rerun";
  YAML::Emitter out;
  out << spec;
  plan.yaml = std::string(out.c_str()) + "\n";
  return plan;
}

}  // namespace causeway::provenance
