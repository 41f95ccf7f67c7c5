#include "readiness/evaluate.h"

#include <algorithm>
#include <map>

namespace causeway::readiness {

std::string_view StateName(State s) {
  switch (s) {
    case State::kInPlace: return "in place";
    case State::kPartly: return "partly";
    case State::kNotInPlace: return "not in place";
    case State::kNotApplicable: return "not applicable";
  }
  return "unknown";
}

std::string_view StateCode(State s) {
  switch (s) {
    case State::kInPlace: return "in_place";
    case State::kPartly: return "partly";
    case State::kNotInPlace: return "not_in_place";
    case State::kNotApplicable: return "not_applicable";
  }
  return "unknown";
}

std::vector<Control> EffectiveCatalog(const ReadinessConfig& config) {
  std::vector<Control> out = BuiltinCatalog();
  for (const ControlDeclaration& d : config.controls) {
    auto it = std::find_if(out.begin(), out.end(), [&](const Control& c) { return c.id == d.id; });
    if (it == out.end()) {
      out.push_back(Control{d.id, d.title, d.description, d.nist,
                            "its owner, and what the providers declare about it", Evidence::kDeclared});
      continue;
    }
    if (!d.title.empty()) it->title = d.title;
    if (!d.description.empty()) it->description = d.description;
    if (!d.nist.empty()) it->nist = d.nist;
  }
  return out;
}

namespace {

// What one control's evidence says, before its owner is checked.
struct Verdict {
  State state = State::kNotInPlace;
  std::string reason;
  std::vector<EvidenceItem> evidence;
};

Verdict Of(State s, std::string reason, std::vector<EvidenceItem> evidence = {}) {
  return Verdict{s, std::move(reason), std::move(evidence)};
}

// The estate file is read by the server at start; no route shows it.
EvidenceItem FromEstate(std::string what) { return EvidenceItem{std::move(what), "estate", "", {}, {}}; }

std::string Percent(int64_t part, int64_t whole) {
  return whole == 0 ? "0%" : std::to_string(part * 100 / whole) + "%";
}

// What a control is judged on: the estate, the snapshot, and the provider.
struct Context {
  const Estate& estate;
  const Snapshot& snap;
  const std::string& provider;
  const ProviderReadiness* declared;  // the provider's readiness entry, if any

  // The provider's declarations of `kind` about `control`.
  std::vector<const ProviderDeclaration*> Declarations(const std::string& control, std::string_view kind = "") const {
    std::vector<const ProviderDeclaration*> out;
    if (!declared) return out;
    for (const ProviderDeclaration& d : declared->declarations) {
      bool about = std::find(d.controls.begin(), d.controls.end(), control) != d.controls.end();
      if (about && (kind.empty() || d.kind == kind)) out.push_back(&d);
    }
    return out;
  }
  // The provider's GPU types (its clusters' pools).
  std::set<std::string> GpuTypes(const std::string& of) const {
    std::set<std::string> out;
    for (const Cluster& c : estate.clusters) {
      if (c.provider != of) continue;
      for (const NodePool& p : c.node_pools) {
        if (!p.cpu_only()) out.insert(p.gpu_type);
      }
    }
    return out;
  }
  bool HasPolicy(std::string_view rule) const {
    return std::any_of(estate.policies.begin(), estate.policies.end(),
                       [&](const PolicyConfig& p) { return p.rule == rule; });
  }
};

// Forwarding counts as working while the export is at most this many
// events behind the head, and, when behind at all, has asked within this
// long.
constexpr int64_t kMaxForwardingLag = 1000;
constexpr auto kMaxForwardingSilence = std::chrono::minutes(15);

// An acceptance run counts as evidence for 90 days; after that it is
// history, and the control is only partly shown.
constexpr auto kAcceptanceFresh = std::chrono::hours(24 * 90);

const AcceptanceResult* LatestRun(const Context& c, const std::string& test) {
  auto it = c.snap.acceptance.find(test);
  return it == c.snap.acceptance.end() ? nullptr : &it->second;
}

EvidenceItem RunEvidence(const std::string& test, const AcceptanceResult& run) {
  std::string what = "the " + test + " acceptance run of " + FormatRfc3339(run.finished).substr(0, 10) +
                     (run.passed ? " passed" : " failed");
  if (run.recovery_ms) {
    int64_t ms = *run.recovery_ms;
    what += std::string(test == "failover" ? ": every request served elsewhere after " : ": work resumed elsewhere after ") +
            (ms < 10'000 ? std::to_string(ms) + " ms" : std::to_string(ms / 1000) + " s");
    if (run.objective_ms) what += " (objective " + std::to_string(*run.objective_ms / 1000) + " s)";
  }
  return EvidenceItem{what, "audit", "/v1/acceptance/runs", run.seq, run.seq};
}

// The verdict of the latest run of `test`: a failed run is not in place, a
// stale one partly, a fresh pass in place.
Verdict FromRun(const Context& c, const std::string& test, const AcceptanceResult& run, std::vector<EvidenceItem> ev) {
  ev.push_back(RunEvidence(test, run));
  std::string date = FormatRfc3339(run.finished).substr(0, 10);
  if (!run.passed) {
    return Of(State::kNotInPlace, "the latest " + test + " acceptance run (" + date + ") failed: " + run.failed_step, ev);
  }
  if (c.snap.at - run.finished > kAcceptanceFresh) {
    return Of(State::kPartly, "the " + test + " acceptance run last passed on " + date + ", over 90 days ago", ev);
  }
  return Of(State::kInPlace, "the " + test + " acceptance run passed on " + date, ev);
}

Verdict IdentityFederation(const Context& c) {
  const auto& oidc = c.estate.identity.oidc;
  if (!oidc) return Of(State::kNotInPlace, "no identity provider: the estate has no identity.oidc");
  std::vector<EvidenceItem> ev{FromEstate("people sign in through " + oidc->issuer)};
  if (c.snap.active_users.empty()) {
    return Of(State::kPartly, "the identity provider is configured, but no one is provisioned from the directory (SCIM)",
              ev);
  }
  ev.push_back(EvidenceItem{std::to_string(c.snap.active_users.size()) + " active people provisioned", "directory",
                            "/scim/v2/Users", {}, {}});
  return Of(State::kInPlace, "people sign in through the company's identity provider and are provisioned by SCIM", ev);
}

Verdict GroupRoleMapping(const Context& c) {
  if (c.estate.access.empty()) return Of(State::kNotInPlace, "no directory group is bound to a role (estate access)");
  int missing = 0;
  for (const AccessBinding& b : c.estate.access) missing += c.snap.groups.count(b.group) ? 0 : 1;
  std::vector<EvidenceItem> ev{FromEstate(std::to_string(c.estate.access.size()) + " group-to-role bindings")};
  if (missing > 0) {
    return Of(State::kPartly, std::to_string(missing) + " bound group(s) are not in the directory yet", ev);
  }
  return Of(State::kInPlace, "every bound group is in the directory", ev);
}

Verdict Deprovisioning(const Context& c) {
  const DeprovisionConfig& d = c.estate.identity.deprovision;
  std::vector<EvidenceItem> ev{FromEstate("a leaver's queued jobs: " + d.queued + "; running jobs: " + d.running)};
  if (!c.estate.identity.oidc) return Of(State::kNotInPlace, "no identity provider tells Causeway who has left", ev);
  if (const AcceptanceResult* run = LatestRun(c, "identity")) return FromRun(c, "identity", *run, ev);
  return Of(State::kPartly,
            "the deprovisioning policy is set; no identity acceptance run is recorded to show it works (causeway "
            "acceptance identity)",
            ev);
}

Verdict LeastPrivilege(const Context& c) {
  int wide = 0;
  for (const AccessBinding& b : c.estate.access) {
    bool team_role = b.role == "researcher" || b.role == "team-admin";
    if (team_role && b.team.empty()) ++wide;
  }
  if (c.estate.access.empty()) return Of(State::kNotInPlace, "no role bindings: rights are not derived from groups");
  std::vector<EvidenceItem> ev{FromEstate(std::to_string(c.estate.access.size()) + " bindings, " +
                                          std::to_string(wide) + " team role(s) bound without a team")};
  if (wide > 0) return Of(State::kPartly, "some team roles are bound for every team", ev);
  return Of(State::kInPlace, "every team role is bound to one team", ev);
}

const Snapshot::ProviderJobs& JobsAt(const Context& c) {
  static const Snapshot::ProviderJobs kNone;
  auto it = c.snap.jobs_by_provider.find(c.provider);
  return it == c.snap.jobs_by_provider.end() ? kNone : it->second;
}

Verdict WorkloadIdentity(const Context& c) {
  const auto& w = c.estate.identity.workload;
  const Snapshot::ProviderJobs& jobs = JobsAt(c);
  std::vector<EvidenceItem> ev{EvidenceItem{std::to_string(jobs.static_keys) + " of " + std::to_string(jobs.ran) +
                                                " jobs that ran here carried a static cloud key in the environment "
                                                "Causeway passed" +
                                                (jobs.example.empty() ? "" : " (" + jobs.example + ")"),
                                            "jobs", "/v1/jobs", {}, {}}};
  if (jobs.static_keys > 0) {
    return Of(State::kNotInPlace, "jobs here ran with static cloud keys: " + jobs.example, ev);
  }
  if (!w) return Of(State::kNotInPlace, "no workload token issuer (identity.workload): jobs would need static keys", ev);
  ev.push_back(FromEstate("workload tokens issued by " + w->issuer + " for " + std::to_string(w->audiences.size()) +
                          " audience(s)"));
  if (!c.estate.identity.federations.empty()) {
    ev.push_back(FromEstate(std::to_string(c.estate.identity.federations.size()) +
                            " cloud federation(s) trust them (identity.federations)"));
    ev.push_back(EvidenceItem{std::to_string(jobs.federated) + " of " + std::to_string(jobs.ran) +
                                  " jobs that ran here reached clouds with federated identities",
                              "jobs", "/v1/jobs", {}, {}});
  }
  if (jobs.ran == 0) return Of(State::kPartly, "jobs get workload tokens; no job has run here yet to scan", ev);
  return Of(State::kInPlace, "jobs get workload tokens, and none that ran here carried a static cloud key", ev);
}

Verdict SecretsDistribution(const Context& c) {
  const Snapshot::ProviderJobs& jobs = JobsAt(c);
  std::vector<EvidenceItem> ev{
      EvidenceItem{"every secret a job is given by value is stored sealed (AES-256-GCM) under a key outside the database",
                   "causeway", "", {}, {}},
      EvidenceItem{std::to_string(jobs.with_secrets) + " of " + std::to_string(jobs.ran) + " jobs that ran here had secrets; " +
                       std::to_string(jobs.by_reference) +
                       " of them read some from the company's store by reference, with the attempt's own identity",
                   "jobs", "/v1/jobs", {}, {}}};
  if (!c.estate.identity.secret_stores.empty()) {
    ev.push_back(FromEstate(std::to_string(c.estate.identity.secret_stores.size()) +
                            " secret store(s) read with federated identities (identity.secret_stores)"));
  }
  if (jobs.static_keys > 0) {
    return Of(State::kPartly, "secrets are sealed and never shown, but cloud keys reached jobs here as values: " + jobs.example,
              ev);
  }
  return Of(State::kInPlace, "secrets are sealed or read by reference with the attempt's identity, and named, never shown", ev);
}

Verdict AuditForwarding(const Context& c) {
  std::vector<EvidenceItem> ev;
  ev.push_back(EvidenceItem{"the audit chain's head is at seq " + std::to_string(c.snap.audit_head_seq), "audit",
                            "/v1/audit/verify", {}, c.snap.audit_head_seq});
  if (!c.estate.audit.retention) {
    return Of(State::kNotInPlace, "no retention is declared for the audit trail (audit.retention)", ev);
  }
  // The exporter furthest ahead stands for forwarding.
  const Snapshot::Exporter* best = nullptr;
  for (const Snapshot::Exporter& e : c.snap.exporters) {
    if (!best || e.delivered_seq > best->delivered_seq) best = &e;
  }
  if (!best) {
    return Of(State::kPartly,
              "the trail is chained and its retention declared, but nothing has read it for a SIEM since the server "
              "started (causeway audit export --follow)",
              ev);
  }
  int64_t lag = std::max<int64_t>(0, c.snap.audit_head_seq - best->delivered_seq);
  auto silent = std::chrono::duration_cast<std::chrono::minutes>(c.snap.at - best->at);
  ev.push_back(EvidenceItem{"delivered through seq " + std::to_string(best->delivered_seq) + " (" + std::to_string(lag) +
                                " events behind the head), last asked " + FormatRfc3339(best->at),
                            "audit feed", "/v1/audit/feed", best->delivered_seq, c.snap.audit_head_seq});
  if (lag > kMaxForwardingLag) {
    return Of(State::kPartly, "the SIEM export is " + std::to_string(lag) + " events behind the trail", ev);
  }
  if (lag > 0 && silent > kMaxForwardingSilence) {
    return Of(State::kPartly, "the SIEM export has not asked for new events for " + std::to_string(silent.count()) +
                                  " minutes",
              ev);
  }
  return Of(State::kInPlace, "the trail reaches the SIEM: the export is " + std::to_string(lag) + " events behind", ev);
}

Verdict DataPlaneLogging(const Context& c) {
  int buckets = 0, logged = 0;
  std::vector<EvidenceItem> ev;
  for (const Snapshot::Bucket& b : c.snap.buckets) {
    if (b.provider != c.provider) continue;
    ++buckets;
    logged += b.state == "logged" ? 1 : 0;
    ev.push_back(EvidenceItem{b.name + ": " + b.state + " (" + b.why + ")", "audit coverage", "/v1/audit/coverage", {}, {}});
  }
  if (buckets == 0) return Of(State::kNotInPlace, "no bucket of this provider is declared (audit.buckets)");
  std::string counted = std::to_string(logged) + " of " + std::to_string(buckets) + " buckets log object-level access";
  if (logged == buckets) return Of(State::kInPlace, counted, ev);
  return Of(logged > 0 ? State::kPartly : State::kNotInPlace, counted, ev);
}

Verdict Residency(const Context& c) {
  const Provider* p = c.estate.FindProvider(c.provider);
  bool zoned = p && !p->regions.empty() &&
               std::all_of(p->regions.begin(), p->regions.end(), [](const Region& r) { return !r.zone.empty(); });
  if (!zoned) return Of(State::kNotInPlace, "not every region of this provider declares its residency zone");
  std::vector<EvidenceItem> ev{FromEstate("every region of " + c.provider + " declares its residency zone")};
  const Snapshot::ProviderJobs& jobs = JobsAt(c);
  ev.push_back(EvidenceItem{std::to_string(jobs.zone_bound - jobs.left_zone) + " of " + std::to_string(jobs.zone_bound) +
                                " zone-bound jobs that ran here kept to their zone (attempts and checkpoints)",
                            "jobs", "/v1/jobs", {}, {}});
  if (jobs.left_zone > 0) {
    return Of(State::kNotInPlace, std::to_string(jobs.left_zone) + " zone-bound job(s) here left their zone: " +
                                      jobs.left_example,
              ev);
  }
  if (!c.HasPolicy("require-residency")) {
    return Of(State::kPartly, "regions are zoned, but no require-residency policy binds work to a zone", ev);
  }
  const AcceptanceResult* run = LatestRun(c, "residency");
  if (!run) {
    return Of(State::kPartly,
              "work bound to a zone is placed only in that zone's regions; no residency acceptance run is recorded "
              "(causeway acceptance residency)",
              ev);
  }
  return FromRun(c, "residency", *run, ev);
}

Verdict DeclaredBy(const Context& c, const std::string& control, std::string_view kind, const std::string& what) {
  auto decls = c.Declarations(control, kind);
  if (decls.empty()) return Of(State::kNotInPlace, "the provider has declared nothing about " + what);
  const ProviderDeclaration* d = decls.back();
  std::vector<EvidenceItem> ev{EvidenceItem{d->statement + " (" + d->source + ")", "declaration", "", {}, {}}};
  if (c.snap.at - d->date > std::chrono::hours(24 * 365)) {
    return Of(State::kPartly, "declared by the provider over a year ago (" + FormatRfc3339(d->date).substr(0, 10) + ")",
              ev);
  }
  return Of(State::kInPlace, "declared by the provider (" + d->source + ", " + FormatRfc3339(d->date).substr(0, 10) +
                                 "); not measured by Causeway",
            ev);
}

Verdict Patching(const Context& c) {
  int pools = 0, declared = 0;
  for (const Cluster& cl : c.estate.clusters) {
    if (cl.provider != c.provider) continue;
    for (const NodePool& p : cl.node_pools) {
      ++pools;
      declared += p.software.count("driver") && p.software.count("os") ? 1 : 0;
    }
  }
  if (pools == 0) return Of(State::kNotApplicable, "the provider has no pools in the estate");
  std::vector<EvidenceItem> ev{FromEstate(std::to_string(declared) + " of " + std::to_string(pools) +
                                          " pools declare their OS and driver")};
  if (declared == pools) {
    return Of(State::kInPlace, "every pool declares its OS and driver, and each attempt's probe records what ran", ev);
  }
  return Of(declared > 0 ? State::kPartly : State::kNotInPlace, "some pools do not declare their OS and driver", ev);
}

Verdict PrivilegedAccessReview(const Context& c) {
  int admins = 0;
  for (const AccessBinding& b : c.estate.access) admins += b.role == "admin" || b.role == "platform" ? 1 : 0;
  return Of(State::kPartly,
            "no review is recorded; " + std::to_string(admins) + " group(s) hold the admin or platform role",
            {FromEstate(std::to_string(admins) + " privileged bindings")});
}

Verdict Breakglass(const Context& c) {
  const BreakglassConfig& b = c.estate.identity.breakglass;
  std::vector<EvidenceItem> ev{EvidenceItem{std::to_string(c.snap.breakglass_grants) +
                                                " grant(s) asked for in the last 90 days, " +
                                                std::to_string(c.snap.breakglass_self_approved) + " self-approved",
                                            "audit", "/v1/breakglass", {}, {}}};
  if (!b.enabled) return Of(State::kInPlace, "break-glass is off: there is no emergency access to abuse", ev);
  if (b.self_approval || b.approvers == 0) {
    return Of(State::kPartly, "break-glass is on and a requester may approve their own grant", ev);
  }
  return Of(State::kInPlace, "break-glass needs another person's approval and is time-bound and audited", ev);
}

Verdict CapacityFallback(const Context& c) {
  std::set<std::string> mine = c.GpuTypes(c.provider), covered;
  if (mine.empty()) return Of(State::kNotApplicable, "the provider has no GPU pools in the estate");
  for (const Provider& other : c.estate.providers) {
    if (other.name == c.provider) continue;
    for (const std::string& t : c.GpuTypes(other.name)) {
      if (mine.count(t)) covered.insert(t);
    }
  }
  std::vector<EvidenceItem> ev{FromEstate(std::to_string(covered.size()) + " of " + std::to_string(mine.size()) +
                                          " GPU types are offered by another provider too")};
  if (covered.size() == mine.size()) return Of(State::kInPlace, "every GPU type here is offered elsewhere", ev);
  return Of(covered.empty() ? State::kNotInPlace : State::kPartly, "some GPU types here have nowhere else to run", ev);
}

Verdict ImagePinning(const Context& c) {
  const Snapshot::ProviderJobs& jobs = JobsAt(c);
  bool policy = c.HasPolicy("pinned-image");
  std::vector<EvidenceItem> ev{EvidenceItem{std::to_string(jobs.pinned) + " of " + std::to_string(jobs.with_image) +
                                                " jobs that ran here with an image pinned it by digest (" +
                                                Percent(jobs.pinned, jobs.with_image) + ")",
                                            "jobs", "/v1/jobs", {}, {}}};
  if (policy) ev.push_back(FromEstate("admission policy pinned-image"));
  if (jobs.pinned < jobs.with_image) {
    return Of(policy ? State::kPartly : State::kNotInPlace,
              std::to_string(jobs.with_image - jobs.pinned) + " job(s) here ran an image by tag" +
                  (policy ? " (before the pinned-image policy, or exempt from it)" : "; no pinned-image policy"),
              ev);
  }
  if (!policy) return Of(State::kPartly, "every image so far was pinned, but no pinned-image policy requires it", ev);
  return Of(State::kInPlace, "a pinned-image policy refuses images not pinned by digest, and every image here was", ev);
}

// Spend with an owner: what the provider billed in the last 90 days, and
// the part of it an owner answers for (a tag, or an allocation to a job).
Verdict CostLabels(const Context& c) {
  bool budgets = std::any_of(c.estate.teams.begin(), c.estate.teams.end(), [](const Team& t) { return t.budget; });
  std::vector<EvidenceItem> ev{FromEstate("every job carries its team and owner; " +
                                          std::string(budgets ? "some teams have budgets" : "no team has a budget"))};
  auto it = c.snap.spend_by_provider.find(c.provider);
  if (it == c.snap.spend_by_provider.end() || it->second.billed_micros == 0) {
    return Of(State::kPartly, "no bill of this provider imported in the last 90 days to show spend has owners", ev);
  }
  const Snapshot::Spend& s = it->second;
  ev.push_back(EvidenceItem{Percent(s.owned_micros, s.billed_micros) + " of " + std::to_string(s.billed_micros / 1'000'000) +
                                " " + s.currency + " billed in the last 90 days has an owner",
                            "bills", "/v1/cost/showback?by=owner", {}, {}});
  if (s.owned_micros == 0) return Of(State::kNotInPlace, "none of the billed spend has an owner", ev);
  if (s.owned_micros < s.billed_micros) return Of(State::kPartly, "some billed spend has no owner", ev);
  if (!budgets) return Of(State::kPartly, "spend has owners, but no team has a budget to answer against", ev);
  return Of(State::kInPlace, "all billed spend has an owner, and teams have budgets", ev);
}

Verdict IdleReaping(const Context& c) {
  if (c.estate.reaper.empty()) return Of(State::kNotInPlace, "no reaper policy releases idle GPUs");
  std::vector<EvidenceItem> ev{FromEstate(std::to_string(c.estate.reaper.size()) + " reaper policies")};
  if (!c.estate.telemetry) return Of(State::kPartly, "reaper policies exist but no GPU telemetry is configured", ev);
  return Of(State::kInPlace, "idle GPUs are found from telemetry and released by the reaper", ev);
}

Verdict Reproducibility(const Context& c) {
  const Snapshot& s = c.snap;
  std::vector<EvidenceItem> ev{EvidenceItem{std::to_string(s.sealed_jobs) + " of " + std::to_string(s.ended_jobs) +
                                                " ended jobs (of the latest " + std::to_string(s.jobs_read) +
                                                ") have a sealed provenance record (" +
                                                Percent(s.sealed_jobs, s.ended_jobs) + ")",
                                            "provenance", "/v1/provenance/export", {}, {}}};
  if (s.ended_jobs == 0) return Of(State::kPartly, "no job has ended yet to show a record", ev);
  if (s.sealed_jobs == s.ended_jobs) return Of(State::kInPlace, "every ended job has a signed record", ev);
  return Of(State::kPartly, "some ended jobs are not sealed yet", ev);
}

// The recovery and failover acceptance runs each take one provider down;
// they rehearse a restore away from that provider only. Of the runs that
// lost this provider, the newest decides; without one, a pass elsewhere is
// partly.
Verdict RestoreRehearsal(const Context& c) {
  const AcceptanceResult* recovery = LatestRun(c, "recovery");
  const AcceptanceResult* failover = LatestRun(c, "failover");
  if (!recovery && !failover) {
    return Of(State::kNotInPlace,
              "no recovery or failover acceptance run is recorded (causeway acceptance recovery, causeway acceptance "
              "failover SERVICE)");
  }
  std::vector<std::pair<std::string, const AcceptanceResult*>> runs;
  if (recovery) runs.emplace_back("recovery", recovery);
  if (failover) runs.emplace_back("failover", failover);
  const std::pair<std::string, const AcceptanceResult*>* here = nullptr;
  for (const auto& r : runs) {
    if (r.second->provider == c.provider && (!here || r.second->finished > here->second->finished)) here = &r;
  }
  if (here) {
    std::vector<EvidenceItem> ev;
    for (const auto& r : runs) {
      if (&r != here) ev.push_back(RunEvidence(r.first, *r.second));
    }
    return FromRun(c, here->first, *here->second, ev);
  }
  const auto& newest = runs.size() == 2 && runs[1].second->finished > runs[0].second->finished ? runs[1] : runs[0];
  if (newest.second->passed) {
    return Of(State::kPartly,
              "the latest " + newest.first + " acceptance run rehearsed losing " + newest.second->provider + ", not " +
                  c.provider,
              {RunEvidence(newest.first, *newest.second)});
  }
  return FromRun(c, newest.first, *newest.second, {});
}

Verdict Judge(const Control& control, const Context& c) {
  switch (control.evidence) {
    case Evidence::kIdentityFederation: return IdentityFederation(c);
    case Evidence::kGroupRoleMapping: return GroupRoleMapping(c);
    case Evidence::kDeprovisioning: return Deprovisioning(c);
    case Evidence::kLeastPrivilege: return LeastPrivilege(c);
    case Evidence::kWorkloadIdentity: return WorkloadIdentity(c);
    case Evidence::kSecretsDistribution: return SecretsDistribution(c);
    case Evidence::kAuditForwarding: return AuditForwarding(c);
    case Evidence::kDataPlaneLogging: return DataPlaneLogging(c);
    case Evidence::kResidency: return Residency(c);
    case Evidence::kSupportAccess: return DeclaredBy(c, control.id, "support-location", "where its support staff work");
    case Evidence::kPatching: return Patching(c);
    case Evidence::kPrivilegedAccessReview: return PrivilegedAccessReview(c);
    case Evidence::kBreakglass: return Breakglass(c);
    case Evidence::kOnCall: return DeclaredBy(c, control.id, "escalation", "its support and escalation terms");
    case Evidence::kRestoreRehearsal: return RestoreRehearsal(c);
    case Evidence::kCapacityFallback: return CapacityFallback(c);
    case Evidence::kImagePinning: return ImagePinning(c);
    case Evidence::kCostLabels: return CostLabels(c);
    case Evidence::kIdleReaping: return IdleReaping(c);
    case Evidence::kReproducibility: return Reproducibility(c);
    case Evidence::kDeclared: return DeclaredBy(c, control.id, "", "this control");
  }
  return Of(State::kNotInPlace, "unknown evidence");
}

// The control's owner here (the provider's over the estate-wide one).
std::optional<ControlOwner> OwnerOf(const ReadinessConfig& config, const ProviderReadiness* p, const std::string& id) {
  if (p) {
    if (auto it = p->owners.find(id); it != p->owners.end()) return it->second;
  }
  if (auto it = config.owners.find(id); it != config.owners.end()) return it->second;
  return std::nullopt;
}

// Why `owner` cannot answer for a control, or "" when they can.
std::string OwnerGap(const std::optional<ControlOwner>& owner, const Snapshot& s) {
  if (!owner) return "no owner: a control no one owns does not exist in practice (readiness.owners)";
  if (owner->group) {
    return s.groups.count(owner->name) ? "" : "its owner, group \"" + owner->name + "\", is not in the directory";
  }
  return s.active_users.count(owner->name) ? ""
                                           : "its owner, \"" + owner->name + "\", is not an active person in the directory";
}

}  // namespace

Report Evaluate(const Estate& estate, const Snapshot& snapshot) {
  Report r;
  r.at = snapshot.at;
  r.controls = EffectiveCatalog(estate.readiness);
  for (const Provider& p : estate.providers) r.providers.push_back(p.name);
  for (const Control& control : r.controls) {
    for (const std::string& provider : r.providers) {
      const ProviderReadiness* declared = estate.readiness.FindProvider(provider);
      Context ctx{estate, snapshot, provider, declared};
      Finding f;
      f.control = control.id;
      f.provider = provider;
      f.owner = OwnerOf(estate.readiness, declared, control.id);
      if (declared) {
        if (auto it = declared->responsible.find(control.id); it != declared->responsible.end()) f.responsible = it->second;
      }
      for (const ProviderDeclaration* d : ctx.Declarations(control.id)) f.declarations.push_back(*d);
      if (declared && declared->not_applicable.count(control.id)) {
        f.state = State::kNotApplicable;
        f.reason = declared->not_applicable.at(control.id);
        r.findings.push_back(std::move(f));
        continue;
      }
      Verdict v = Judge(control, ctx);
      f.evidence = std::move(v.evidence);
      std::string gap = v.state == State::kNotApplicable ? "" : OwnerGap(f.owner, snapshot);
      f.state = gap.empty() ? v.state : State::kNotInPlace;
      f.reason = gap.empty() ? v.reason : gap + " (the evidence says: " + v.reason + ")";
      r.findings.push_back(std::move(f));
    }
  }
  return r;
}

std::vector<const Finding*> FindingsFor(const Report& report, std::string_view provider) {
  std::vector<const Finding*> out;
  for (const Finding& f : report.findings) {
    if (provider.empty() || f.provider == provider) out.push_back(&f);
  }
  return out;
}

const std::vector<Question>& ProcurementQuestions() {
  static const std::vector<Question> kQuestions = {
      {"identity", "Can corporate identities be federated with least privilege?",
       {"identity-federation", "group-role-mapping", "least-privilege", "deprovisioning", "workload-identity",
        "privileged-access-review", "break-glass"}},
      {"siem", "Can control-plane and data-plane events reach the enterprise SIEM with a known retention period?",
       {"audit-forwarding", "data-plane-logging"}},
      {"recreate",
       "Can the exact workload be recreated from versioned infrastructure-as-code and immutable artifacts?",
       {"image-pinning", "reproducibility", "patching"}},
      {"resume", "Can it resume or serve traffic in another environment after an outage?",
       {"restore-rehearsal", "capacity-fallback", "on-call"}},
  };
  return kQuestions;
}

std::vector<QuestionAnswer> AnswerQuestions(const Report& report, std::string_view provider) {
  std::vector<QuestionAnswer> out;
  for (const std::string& p : report.providers) {
    if (!provider.empty() && p != provider) continue;
    for (const Question& q : ProcurementQuestions()) {
      QuestionAnswer a{&q, p, "", "", {}};
      int counted = 0, in_place = 0, partly = 0;
      std::string short_of;
      for (const Finding& f : report.findings) {
        if (f.provider != p || std::find(q.controls.begin(), q.controls.end(), f.control) == q.controls.end()) continue;
        a.basis.push_back(&f);
        if (f.state == State::kNotApplicable) continue;
        ++counted;
        in_place += f.state == State::kInPlace ? 1 : 0;
        partly += f.state == State::kPartly ? 1 : 0;
        if (f.state != State::kInPlace) {
          short_of += (short_of.empty() ? "" : "; ") + f.control + " " + std::string(StateName(f.state));
        }
      }
      if (counted == in_place) {
        a.answer = "yes";
        a.reason = "every control it rests on is in place";
      } else {
        a.answer = in_place + partly == 0 ? "no" : "partly";
        a.reason = std::to_string(in_place) + " of " + std::to_string(counted) + " controls in place; " + short_of;
      }
      out.push_back(std::move(a));
    }
  }
  return out;
}

}  // namespace causeway::readiness
