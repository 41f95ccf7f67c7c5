// Admission policy: a chain of small named rules from the estate file, run on
// every submission before anything is queued. A rule either passes, mutates
// the spec (and says what it changed), or rejects with kPolicyViolation
// naming the rule, the field and how to fix it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "causeway/estate.h"
#include "causeway/job_spec.h"
#include "causeway/status.h"

namespace causeway::policy {

class Rule {
 public:
  explicit Rule(PolicyConfig config) : config_(std::move(config)) {}
  virtual ~Rule() = default;
  const std::string& name() const { return config_.name; }

  // Passes, mutates `spec` (appending a sentence per change to `changes`), or
  // returns kPolicyViolation.
  virtual Status Apply(JobSpec& spec, std::vector<std::string>& changes) const = 0;

 protected:
  // Whether the rule covers `team` (an empty team list covers every team).
  bool Covers(const std::string& team) const;
  // kPolicyViolation: "policy NAME (RULE): PROBLEM; FIX", pointing at `field`.
  Status Reject(const std::string& field, const std::string& problem, const std::string& fix) const;

  PolicyConfig config_;
};

class Chain {
 public:
  // Builds the chain in the order the estate lists the policies.
  static std::unique_ptr<Chain> FromEstate(const Estate& estate);

  // Runs every rule in order; stops at the first rejection.
  Status Apply(JobSpec& spec, std::vector<std::string>& changes) const;
  size_t size() const { return rules_.size(); }

 private:
  std::vector<std::unique_ptr<Rule>> rules_;
};

// The environment a job is launched with on `cluster`: the cluster's
// injected provider settings, then the job's own envs (which win), then
// Causeway's CAUSEWAY_* variables (which always win).
std::map<std::string, std::string> LaunchEnv(const JobSpec& spec, const Cluster& cluster, const std::string& job_id,
                                             int attempt);

}  // namespace causeway::policy
