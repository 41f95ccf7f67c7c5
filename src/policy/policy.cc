#include "policy/policy.h"

#include <algorithm>
#include <cctype>

namespace causeway::policy {

bool Rule::Covers(const std::string& team) const {
  return config_.teams.empty() || std::find(config_.teams.begin(), config_.teams.end(), team) != config_.teams.end();
}

Status Rule::Reject(const std::string& field, const std::string& problem, const std::string& fix) const {
  std::string msg = "policy " + config_.name + " (" + config_.rule + "): " + problem + "; " + fix;
  return PolicyViolation(msg, {Diagnostic{"", 0, 0, field, problem + "; " + fix}});
}

namespace {

// No owner, no run: the labels that cost attribution depends on.
class RequireLabels final : public Rule {
 public:
  using Rule::Rule;
  Status Apply(JobSpec& spec, std::vector<std::string>&) const override {
    for (const auto& label : config_.labels) {
      auto it = spec.labels.find(label);
      if (it == spec.labels.end() || it->second.empty()) {
        return Reject("resources.labels." + label, "label \"" + label + "\" is required",
                      "add it under resources.labels, e.g. " + label + ": " +
                          (label == "owner" ? "you@example.com (who pays for this job)" : "<value>"));
      }
    }
    return Status::Ok();
  }
};

// Images must be pinned by digest so a run can be reproduced and audited.
class PinnedImage final : public Rule {
 public:
  using Rule::Rule;
  Status Apply(JobSpec& spec, std::vector<std::string>&) const override {
    if (spec.image_id.empty()) return Status::Ok();  // the cluster's default image
    auto at = spec.image_id.find("@sha256:");
    bool pinned = at != std::string::npos && spec.image_id.size() == at + 8 + 64 &&
                  std::all_of(spec.image_id.begin() + static_cast<long>(at) + 8, spec.image_id.end(),
                              [](unsigned char c) { return std::isdigit(c) || (c >= 'a' && c <= 'f'); });
    if (pinned) return Status::Ok();
    return Reject("resources.image_id", "image \"" + spec.image_id + "\" is not pinned by digest",
                  "use IMAGE@sha256:<digest> (tags such as latest can change under you)");
  }
};

class AllowedGpuTypes final : public Rule {
 public:
  using Rule::Rule;
  Status Apply(JobSpec& spec, std::vector<std::string>&) const override {
    if (!Covers(spec.team)) return Status::Ok();
    for (const auto& alt : spec.accelerators.alternatives) {
      if (std::find(config_.gpu_types.begin(), config_.gpu_types.end(), alt.type) == config_.gpu_types.end()) {
        std::string allowed;
        for (const auto& g : config_.gpu_types) allowed += (allowed.empty() ? "" : ", ") + g;
        return Reject("resources.accelerators", "team \"" + spec.team + "\" may not use " + alt.type,
                      "use one of " + allowed);
      }
    }
    return Status::Ok();
  }
};

// Jobs of the covered teams stay in one residency zone; a job that names no
// zone is given this one.
class RequireResidency final : public Rule {
 public:
  using Rule::Rule;
  Status Apply(JobSpec& spec, std::vector<std::string>& changes) const override {
    if (!Covers(spec.team)) return Status::Ok();
    if (spec.residency.empty()) {
      spec.residency = config_.zone;
      changes.push_back("policy " + config_.name + " set residency to " + config_.zone);
      return Status::Ok();
    }
    if (spec.residency != config_.zone) {
      return Reject("residency", "team \"" + spec.team + "\" must keep its data in " + config_.zone,
                    "set residency: " + config_.zone + " or remove it");
    }
    return Status::Ok();
  }
};

class MaxJobSize final : public Rule {
 public:
  using Rule::Rule;
  Status Apply(JobSpec& spec, std::vector<std::string>& changes) const override {
    if (config_.max_gpus) {
      for (const auto& alt : spec.accelerators.alternatives) {
        int total = alt.count * spec.num_nodes;
        if (total > *config_.max_gpus) {
          return Reject("resources.accelerators",
                        "the job asks for " + std::to_string(total) + " GPUs (" + std::to_string(spec.num_nodes) +
                            " nodes x " + alt.ToString() + "), more than the limit of " +
                            std::to_string(*config_.max_gpus),
                        "use fewer nodes or GPUs, or ask a platform engineer for an exception");
        }
      }
    }
    if (config_.max_duration) {
      if (!spec.time_limit) {
        spec.time_limit = *config_.max_duration;
        changes.push_back("policy " + config_.name + " set time_limit to " + FormatDuration(*config_.max_duration));
      } else if (*spec.time_limit > *config_.max_duration) {
        return Reject("time_limit", "time_limit " + FormatDuration(*spec.time_limit) + " is over the limit of " +
                                        FormatDuration(*config_.max_duration),
                      "set time_limit to " + FormatDuration(*config_.max_duration) + " or less and checkpoint");
      }
    }
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Chain> Chain::FromEstate(const Estate& estate) {
  auto chain = std::make_unique<Chain>();
  for (const auto& p : estate.policies) {
    if (p.rule == "require-labels") chain->rules_.push_back(std::make_unique<RequireLabels>(p));
    if (p.rule == "pinned-image") chain->rules_.push_back(std::make_unique<PinnedImage>(p));
    if (p.rule == "allowed-gpu-types") chain->rules_.push_back(std::make_unique<AllowedGpuTypes>(p));
    if (p.rule == "require-residency") chain->rules_.push_back(std::make_unique<RequireResidency>(p));
    if (p.rule == "max-job-size") chain->rules_.push_back(std::make_unique<MaxJobSize>(p));
  }
  return chain;
}

Status Chain::Apply(JobSpec& spec, std::vector<std::string>& changes) const {
  for (const auto& rule : rules_) RETURN_IF_ERROR(rule->Apply(spec, changes));
  return Status::Ok();
}

std::map<std::string, std::string> LaunchEnv(const JobSpec& spec, const Cluster& cluster, const std::string& job_id,
                                             int attempt) {
  std::map<std::string, std::string> env = cluster.inject_envs;
  for (const auto& [k, v] : spec.envs) env[k] = v;
  env["CAUSEWAY_JOB_ID"] = job_id;
  env["CAUSEWAY_ATTEMPT"] = std::to_string(attempt);
  env["CAUSEWAY_CLUSTER"] = cluster.name;
  if (spec.checkpoint) env["CAUSEWAY_CHECKPOINT_DIR"] = spec.checkpoint->path;
  return env;
}

}  // namespace causeway::policy
