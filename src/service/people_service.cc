#include "service/people_service.h"
#include "service/token_service.h"

#include <algorithm>
#include <future>
#include <set>

#include "identity/access.h"
#include "identity/oidc.h"
#include "identity/scim/scim_schema.h"
#include "store/records_json.h"

namespace causeway {

namespace {

// A person as the directory has them now (no entry: deleted or never
// provisioned).
struct Person {
  std::optional<DirectoryEntry> entry;
  std::vector<std::string> groups;
};

Result<Person> LookUp(const Store& store, const std::string& user) {
  ASSIGN_OR_RETURN(auto found, identity::ReadPerson(store, user));
  if (!found) return Person{};
  return Person{std::move(found->user), std::move(found->groups)};
}

// Whether `t` grants access because of `user`: it acts for them, or they
// answer for it.
bool Concerns(const TokenRecord& t, const std::string& user) {
  return (!t.user.empty() && identity::scim::EqualsIgnoreCase(t.user, user)) ||
         (!t.creator.empty() && identity::scim::EqualsIgnoreCase(t.creator, user));
}

SyncStep Step(const std::string& action, const std::string& target, const Status& st, int64_t seq,
              const std::string& detail = "") {
  return SyncStep{action, target, st.ok(), st.ok() ? detail : st.message(), seq > 0 ? seq : 0};
}

}  // namespace

PeopleService::PeopleService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
                             JobService& jobs, std::function<std::vector<identity::Binding>()> bindings,
                             std::function<void(const std::string&)> forget, const providers::Registry& kinds)
    : store_(store),
      queue_(queue),
      estate_(estate),
      clock_(clock),
      jobs_(jobs),
      bindings_(std::move(bindings)),
      forget_(std::move(forget)),
      kinds_(kinds) {}

std::vector<std::unique_ptr<providers::PeopleAccounts>> PeopleService::Accounts() const {
  std::vector<std::unique_ptr<providers::PeopleAccounts>> out;
  for (const Provider& p : estate_.providers) {
    const providers::Kind* kind = kinds_.Find(p.kind);
    if (!kind || !kind->people_accounts) continue;
    for (auto& a : kind->people_accounts(providers::Context{estate_, p, 0})) out.push_back(std::move(a));
  }
  return out;
}

Result<int64_t> PeopleService::Audit(const std::string& action, const std::string& resource, Details details,
                                     const std::string& actor) {
  AuditEvent e;
  e.time = clock_.Now();
  e.actor = actor;
  e.action = action;
  e.resource = resource;
  e.details = std::move(details);
  // The commit says the event's number (the chain is linked as it commits).
  ASSIGN_OR_RETURN(auto seqs, queue_.RunAudited([e](WriteTx& tx) mutable -> Status { return tx.AppendAudit(e); }));
  if (seqs.size() != 1) return Internal("the commit of one audit event returned " + std::to_string(seqs.size()));
  return seqs.front();
}

namespace {

// A step's record from a unit committed through RunAudited: its outcome,
// and the number of the audit event it appended (the unit's last).
SyncStep StepOf(const std::string& action, const std::string& target, const Result<std::vector<int64_t>>& seqs,
                const std::string& detail = "") {
  const int64_t seq = seqs.ok() && !seqs->empty() ? seqs->back() : 0;
  return Step(action, target, seqs.ok() ? Status::Ok() : seqs.status(), seq, detail);
}

}  // namespace

// One person brought in line with the directory: a leaver's credentials
// and work first (only for someone who may no longer work), then their
// provider accounts, then one summary event.
Result<SyncReport> PeopleService::Sync(const std::string& user, const std::string& actor) {
  ASSIGN_OR_RETURN(Person person, LookUp(store_, user));
  const bool may_work = person.entry && person.entry->active;
  std::vector<SyncStep> steps;
  // What the person holds, for clusters to mirror; the teams whose jobs
  // they submit.
  std::vector<providers::PersonGrant> grants;
  std::set<std::string> teams;
  bool every_team = false;  // a grant that submits to every team
  if (may_work) {
    for (const identity::Grant& g : identity::GrantsFor(bindings_(), person.groups)) {
      bool submits = std::any_of(g.scopes.begin(), g.scopes.end(), [](const std::string& s) {
        return s == identity::kScopeJobsWrite || s == identity::kScopeAdmin;
      });
      grants.push_back({g.role, g.team, submits});
      if (!submits) continue;
      if (g.team.empty()) every_team = true;
      else teams.insert(g.team);
    }
    // Work they submitted themselves (signed in, or with a token that acts
    // for them) to a team they may no longer submit to (their last role
    // gone, or moved to another team) is handled as a leaver's is: access
    // follows the person, and so does what they run. Work a service token
    // submitted in their name is that token's creator's to answer for.
    if (!every_team) {
      ASSIGN_OR_RETURN(auto tokens, store_.ListTokens());
      std::set<std::string> theirs = {"user:" + user};
      for (const TokenRecord& t : tokens) {
        if (identity::scim::EqualsIgnoreCase(t.user, user)) theirs.insert(t.id);
      }
      RETURN_IF_ERROR(HandleWork(user, /*active=*/true, actor, steps, [&](const JobRecord& job) {
        return teams.count(job.team) > 0 || !theirs.count(job.submitted_by);
      }));
    }
  } else {
    RETURN_IF_ERROR(EndCredentials(user, actor, steps));
    RETURN_IF_ERROR(HandleWork(user, /*active=*/false, actor, steps, [](const JobRecord&) { return false; }));
  }
  RETURN_IF_ERROR(SyncAccounts(user, grants, may_work, actor, steps));
  bool ok = std::all_of(steps.begin(), steps.end(), [](const SyncStep& s) { return s.ok; });
  ASSIGN_OR_RETURN(int64_t seq, Audit(may_work ? "identity.sync" : "identity.deprovision", "user/" + user,
                                      {{"user", user}, {"active", may_work}, {"steps", steps.size()}, {"ok", ok}},
                                      actor));
  return SyncReport{user, may_work, ok, std::move(steps), seq};
}

Status PeopleService::EndCredentials(const std::string& user, const std::string& actor, std::vector<SyncStep>& steps) {
  // Tokens acting for the person, and tokens they answer for (made by
  // them or through a token of theirs, and not reassigned since).
  ASSIGN_OR_RETURN(auto tokens, store_.ListTokens());
  const Timestamp now = clock_.Now();
  for (const TokenRecord& t : tokens) {
    if (t.revoked_at || !Concerns(t, user)) continue;
    auto seqs = queue_.RunAudited([&](WriteTx& tx) -> Status {
      RETURN_IF_ERROR(tx.RevokeToken(t.id, now));
      AuditEvent e = RevokeEvent(t, actor, now, {{"reason", "deprovisioned"}});
      if (!t.user.empty()) e.details["user"] = t.user;
      if (!t.creator.empty()) e.details["creator"] = t.creator;
      return tx.AppendAudit(e);
    });
    if (seqs.ok() && forget_) forget_(t.id);
    steps.push_back(StepOf("token.revoke", t.id, seqs));
  }
  // Their break-glass grants end.
  ASSIGN_OR_RETURN(auto grants, store_.ListBreakglass(Timestamp()));
  for (const BreakglassRecord& g : grants) {
    if (!identity::scim::EqualsIgnoreCase(g.user, user) || g.revoked_at || (g.expires_at && *g.expires_at <= now)) continue;
    auto seqs = queue_.RunAudited([&](WriteTx& tx) -> Status {
      BreakglassRecord ended = g;
      ended.revoked_at = now;
      RETURN_IF_ERROR(tx.PutBreakglass(ended));
      AuditEvent e;
      e.time = now;
      e.actor = actor;
      e.action = "breakglass.revoke";
      e.resource = "breakglass/" + g.id;
      e.details = {{"user", g.user}, {"role", g.role}, {"reason", "deprovisioned"}};
      return tx.AppendAudit(e);
    });
    steps.push_back(StepOf("breakglass.revoke", g.id, seqs));
  }
  return Status::Ok();
}

Status PeopleService::HandleWork(const std::string& user, bool active, const std::string& actor, std::vector<SyncStep>& steps,
                                 const std::function<bool(const JobRecord&)>& keep) {
  const DeprovisionConfig& policy = estate_.identity.deprovision;
  identity::Principal system;
  system.token_id = actor;
  system.name = "deprovisioning";
  system.scopes = {std::string(identity::kScopeAdmin)};
  auto why_stopped = [&](const JobRecord& job) {
    return active ? "owner " + user + " no longer holds a role that submits to team " + job.team
                  : "owner " + user + " was deprovisioned";
  };
  for (JobState state : {JobState::kPending, JobState::kAdmitted, JobState::kRunning}) {
    const bool running = state == JobState::kRunning;
    const std::string& what = running ? policy.running : policy.queued;
    if (what != "stop" && what != "cancel" && what != "reassign") continue;  // keep, finish
    JobFilter f;
    f.owner = user;
    f.state = state;
    f.limit = 1000;
    ASSIGN_OR_RETURN(auto jobs, store_.ListJobs(f));
    for (const JobRecord& job : jobs) {
      if (keep(job)) continue;
      if (what == "reassign") {
        const Timestamp now = clock_.Now();
        auto seqs = queue_.RunAudited([&](WriteTx& tx) -> Status {
          RETURN_IF_ERROR(tx.UpdateJobOwner(job.id, policy.reassign_to, now));
          AuditEvent e;
          e.time = now;
          e.actor = actor;
          e.action = "job.reassign";
          e.resource = "job/" + job.id;
          e.details = {{"from", user}, {"to", policy.reassign_to}, {"reason", active ? "no role in the team" : "deprovisioned"}};
          return tx.AppendAudit(e);
        });
        steps.push_back(StepOf("job.reassign", job.id, seqs, "to " + policy.reassign_to));
        continue;
      }
      // Cancelled through the job service: its rules, the scheduler told.
      std::promise<Result<Cancellation>> done;
      const std::string why = why_stopped(job);
      jobs_.Cancel(system, job.id, why,
                   [&done](Result<Cancellation> r) { done.set_value(std::move(r)); });
      Result<Cancellation> cancelled = done.get_future().get();
      steps.push_back(Step(running ? "job.stop" : "job.cancel", job.id,
                           cancelled.ok() ? Status::Ok() : cancelled.status(),
                           cancelled.ok() ? cancelled->audit_seq : 0));
    }
  }
  return Status::Ok();
}

// Slurm users, Kubernetes bindings: exactly the accounts the person's
// grants mean on each cluster (none for someone who may not work).
Status PeopleService::SyncAccounts(const std::string& user, const std::vector<providers::PersonGrant>& grants,
                                   bool may_work, const std::string& actor, std::vector<SyncStep>& steps) {
  for (const auto& cluster : Accounts()) {
    const std::string& name = cluster->cluster();
    const std::string account_user = cluster->NameOf(user);
    if (account_user.empty()) {
      steps.push_back(Step("provider.account.sync", name,
                           InvalidArgument("no valid " + cluster->Noun() + " name can be made of \"" + user + "\""), 0));
      continue;
    }
    auto have = cluster->UserAccounts(account_user);
    if (!have.ok()) {
      steps.push_back(Step("provider.account.sync", name + "/" + account_user, have.status(), 0));
      continue;
    }
    const std::set<std::string> wanted = cluster->AccountsFor(grants);
    std::set<std::string> present(have->begin(), have->end());
    std::string target = name + "/" + account_user;
    for (const std::string& account : wanted) {
      if (present.count(account)) continue;
      Status st = cluster->EnsureUser(account_user, account);
      int64_t seq = 0;
      if (st.ok()) {
        ASSIGN_OR_RETURN(seq, Audit("provider.account.create", "cluster/" + name,
                                    {{"user", user}, {"account_user", account_user}, {"account", account}}, actor));
      }
      steps.push_back(Step("provider.account.create", target + "@" + account, st, seq));
    }
    for (const std::string& account : present) {
      if (wanted.count(account)) continue;
      // Once nothing is left, the user goes altogether.
      bool last = wanted.empty() && account == *present.rbegin();
      Status st = last ? cluster->RemoveUser(account_user) : cluster->RemoveAssociation(account_user, account);
      int64_t seq = 0;
      if (st.ok()) {
        ASSIGN_OR_RETURN(seq, Audit("provider.account.remove", "cluster/" + name,
                                    {{"user", user}, {"account_user", account_user}, {"account", account},
                                     {"reason", may_work ? "no longer granted" : "deprovisioned"}},
                                    actor));
      }
      steps.push_back(Step("provider.account.remove", target + "@" + account, st, seq));
    }
  }
  return Status::Ok();
}

Result<std::vector<SyncReport>> PeopleService::SyncGroup(const std::string& group, const std::string& actor) {
  ASSIGN_OR_RETURN(auto found, store_.FindDirectoryEntryByName("Group", group));
  std::vector<SyncReport> reports;
  if (found) {
    for (const std::string& member : GroupMemberIds(*found)) {
      ASSIGN_OR_RETURN(auto user, store_.FindDirectoryEntry("User", member));
      if (!user) continue;  // a nested group, or a user gone since
      ASSIGN_OR_RETURN(SyncReport report, Sync(user->name, actor));
      reports.push_back(std::move(report));
    }
  }
  return reports;
}

std::vector<std::pair<std::string, std::string>> PeopleService::ClusterNames(const std::string& user) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& cluster : Accounts()) {
    const Cluster* c = estate_.FindCluster(cluster->cluster());
    std::string name = cluster->NameOf(user);
    if (c && !name.empty()) out.emplace_back(c->provider, std::move(name));
  }
  return out;
}

Status PeopleService::AddJobCredentials(const JobRecord& job, Timestamp now, CredentialReport& out,
                                        std::vector<std::string>& live) {
  AuditFilter af;
  af.resource = "job/" + job.id;
  af.limit = 1000;
  ASSIGN_OR_RETURN(auto events, store_.ListAudit(af));
  const bool running = job.state == JobState::kRunning;
  auto add = [&](const Details& w, const std::string& identity, int64_t seq) {
    if (!w.Contains("expires_at")) return;
    auto expires = ParseRfc3339(w.String("expires_at"));
    if (!expires.ok() || *expires <= now) return;
    CredentialReport::WorkloadToken token{w.String("jti"), job.id, identity, {}, w.String("expires_at"), running, seq};
    if (const DetailValue* aud = w.Find("audiences"); aud && aud->AsList()) {
      for (const DetailValue& a : *aud->AsList()) {
        if (a.AsString()) token.audiences.push_back(*a.AsString());
      }
    }
    // A signed token cannot be called back: whoever holds it (an AWS
    // role assumption, a bucket) accepts it until it expires, whether its
    // attempt still runs or not.
    live.push_back((identity.empty() ? "workload token " : "federated token (" + identity + ") ") + token.jti +
                   " of job " + job.id + " (until " + token.expires_at + ")");
    out.workload_tokens.push_back(std::move(token));
  };
  for (const AuditEvent& e : events) {
    if (e.action == "workload.token.issue") {
      add(e.details, "", e.seq);
    } else if (e.action == "job.launch") {
      if (const Details* w = e.details.Object("workload_token")) add(*w, "", e.seq);
      if (const Details* f = e.details.Object("federated_tokens")) {
        for (const auto& [name, value] : *f) {
          if (const Details* w = value.AsObject()) add(*w, name, e.seq);
        }
      }
    } else if (e.action == "secret.read" && running && e.details.Int("attempt") == job.attempts &&
               e.details.Bool("ok")) {
      // Delivered into the attempt that runs now: there until it ends.
      CredentialReport::SecretDelivery d{job.id, static_cast<int>(job.attempts), e.details.String("variable"),
                                         e.details.String("store"), e.details.String("reference"),
                                         e.details.String("delivery"), e.details.String("digest"), "with the attempt",
                                         e.seq};
      live.push_back("secret " + d.reference + " in job " + job.id + " (" + d.delivery + " " + d.variable + ")");
      out.secret_deliveries.push_back(std::move(d));
    }
  }
  return Status::Ok();
}

Result<CredentialReport> PeopleService::JobCredentials(const std::string& job_id) {
  Timestamp now = clock_.Now();
  ASSIGN_OR_RETURN(auto jobs, store_.GetJobs({job_id}));
  if (jobs.empty()) return NotFound("job " + job_id + " not found");
  CredentialReport out;
  out.user = jobs.front().owner;
  std::vector<std::string> live;
  RETURN_IF_ERROR(AddJobCredentials(jobs.front(), now, out, live));
  out.retains_access = !live.empty();
  out.verdict = live.empty() ? "job " + job_id + " holds nothing that grants access"
                             : "job " + job_id + " holds " + std::to_string(live.size()) + ": ";
  for (size_t i = 0; i < live.size(); ++i) out.verdict += (i ? ", " : "") + live[i];
  return out;
}

Result<CredentialReport> PeopleService::Credentials(const std::string& user) {
  Timestamp now = clock_.Now();
  ASSIGN_OR_RETURN(Person person, LookUp(store_, user));
  CredentialReport out;
  out.user = user;
  out.directory = person.entry;
  out.groups = person.groups;
  bool retains = person.entry && person.entry->active;
  // Every token that grants access because of them: acting for them, or
  // made by them (directly or through a token of theirs). One made under a
  // break-glass grant is active only while the grant is.
  std::vector<std::string> live;  // what still grants access, for the verdict
  ASSIGN_OR_RETURN(auto all, store_.ListTokens());
  ASSIGN_OR_RETURN(auto grants, store_.ListBreakglass(Timestamp()));
  auto grant_active = [&](const std::string& id) {
    return std::any_of(grants.begin(), grants.end(), [&](const BreakglassRecord& g) { return g.id == id && g.ActiveAt(now); });
  };
  for (const TokenRecord& t : all) {
    if (!Concerns(t, user)) continue;
    std::string state = t.revoked_at                                   ? "revoked"
                        : (t.expires_at && *t.expires_at <= now)       ? "expired"
                        : (!t.grant.empty() && !grant_active(t.grant)) ? "ended with break-glass grant " + t.grant
                                                                       : "active";
    if (state == "active") live.push_back("token " + t.id);
    bool acts_for = !t.user.empty() && identity::scim::EqualsIgnoreCase(t.user, user);
    out.api_tokens.push_back({t, state, acts_for ? "acts for them" : "they created it"});
  }
  for (const BreakglassRecord& g : grants) {
    if (!identity::scim::EqualsIgnoreCase(g.user, user) || !g.ActiveAt(now)) continue;
    out.breakglass.push_back(g);
    live.push_back("break-glass grant " + g.id);
  }

  // Workload tokens of their jobs that are still within their lifetime.
  JobFilter f;
  f.owner = user;
  f.limit = 1000;
  ASSIGN_OR_RETURN(auto jobs, store_.ListJobs(f));
  for (const JobRecord& job : jobs) RETURN_IF_ERROR(AddJobCredentials(job, now, out, live));

  for (const auto& cluster : Accounts()) {
    const Cluster* c = estate_.FindCluster(cluster->cluster());
    const std::string account_user = cluster->NameOf(user);
    if (account_user.empty() || !c) continue;
    auto have = cluster->UserAccounts(account_user);
    CredentialReport::Account a{c->provider, c->name, cluster->Noun(), account_user, "", std::nullopt};
    const std::string what = cluster->Noun() + " " + account_user + " on " + c->name;
    if (!have.ok()) {
      a.state = "unknown: " + have.status().message();
      live.push_back(what + " (cannot be checked)");  // not proven gone
    } else {
      a.accounts = *have;
      a.state = have->empty() ? "absent" : "present";
      if (!have->empty()) live.push_back(what);
    }
    out.provider_accounts.push_back(std::move(a));
  }
  retains |= !live.empty();
  out.retains_access = retains;
  if (!retains) {
    out.verdict = "nothing Causeway knows of grants " + user + " access";
  } else {
    if (person.entry && person.entry->active) live.insert(live.begin(), "the directory account (active)");
    out.verdict = user + " still has access through " + std::to_string(live.size()) + ": ";
    for (size_t i = 0; i < live.size(); ++i) out.verdict += (i ? ", " : "") + live[i];
  }
  return out;
}

}  // namespace causeway
