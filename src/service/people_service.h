// What Causeway gives a person, kept in line with the directory.
//
// A person who may work (active in the directory, in groups bound to team
// roles) has what those roles mean on each cluster that keeps people's
// accounts: a Slurm accounting user in the accounts of the teams they submit
// to (Slurm clusters with accounting), RBAC bindings to Causeway's cluster
// roles (Kubernetes clusters with manage_rbac). A person who may
// not (deactivated or deleted) is deprovisioned: their API tokens are
// revoked, their queued jobs cancelled and their running jobs stopped (or
// left, as the estate's identity.deprovision says), and their Slurm users
// removed. Each step is an audit event; Sync says what it did, step by
// step, with those events' sequence numbers.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "identity/access.h"
#include "identity/token_cache.h"
#include "providers/registry.h"
#include "service/job_service.h"
#include "store/commit_queue.h"

namespace causeway {

// One step of bringing a person in line with the directory.
struct SyncStep {
  std::string action;  // token.revoke, job.cancel, provider.account.create, ...
  std::string target;  // what it acted on
  bool ok = true;
  std::string detail;  // why it failed, or more of what it did
  int64_t seq = 0;     // its audit event (0: none)
};

struct SyncReport {
  std::string user;
  bool may_work = false;  // active in the directory
  bool ok = true;         // every step succeeded
  std::vector<SyncStep> steps;
  int64_t seq = 0;  // the summary event (identity.sync or identity.deprovision)
};

// Every credential Causeway knows of for a person, with its state.
struct CredentialReport {
  struct Token {
    TokenRecord token;
    std::string state;    // active, revoked, expired, ended with break-glass grant ...
    std::string because;  // acts for them, they created it
  };
  struct WorkloadToken {
    std::string jti, job;
    std::string identity;  // the federated identity it was minted for ("" : Causeway's own)
    std::vector<std::string> audiences;
    std::string expires_at;  // RFC 3339
    bool running = false;    // its attempt runs (it may be refreshed)
    int64_t seq = 0;         // the event that issued it
  };
  struct Account {
    std::string provider, cluster;
    std::string kind;          // what the account is: Slurm user, Kubernetes user
    std::string account_user;  // the name the cluster knows the person by
    std::string state;  // present, absent, unknown: why
    std::optional<std::vector<std::string>> accounts;  // when they could be read
  };
  std::string user;
  std::optional<DirectoryEntry> directory;  // absent: not in the directory
  std::vector<std::string> groups;
  std::vector<Token> api_tokens;
  std::vector<BreakglassRecord> breakglass;  // active grants
  std::vector<WorkloadToken> workload_tokens;
  // A secret read from the company's store into a running attempt: alive
  // (in its environment or files) until the attempt ends.
  struct SecretDelivery {
    std::string job;
    int attempt = 0;
    std::string variable, store, reference, delivery, digest;
    std::string ends;  // "with the attempt", or its time limit's end (RFC 3339)
    int64_t seq = 0;   // the read's event
  };
  std::vector<SecretDelivery> secret_deliveries;
  std::vector<Account> provider_accounts;
  bool retains_access = false;
  std::string verdict;  // in words: what still grants access, or that nothing does
};

class PeopleService {
 public:
  // `bindings`: the role bindings in force. `forget`: told of each revoked
  // token, so this replica's cache drops it. People's accounts are kept on
  // the clusters whose provider kind (in `kinds`) keeps them.
  PeopleService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock, JobService& jobs,
                std::function<std::vector<identity::Binding>()> bindings,
                std::function<void(const std::string& token_id)> forget = nullptr,
                const providers::Registry& kinds = providers::BuiltInKinds());

  // Brings `user` (a directory userName) in line with the directory; the
  // report lists each step.
  Result<SyncReport> Sync(const std::string& user, const std::string& actor);

  // Sync for every member of the directory group named `group` (its
  // display name, ignoring case): after a binding on it was made or removed.
  Result<std::vector<SyncReport>> SyncGroup(const std::string& group, const std::string& actor);

  // Every credential Causeway knows of for `user`, across providers, with
  // its state: the directory account, API tokens acting for them, workload
  // tokens of their jobs still within their lifetime, Slurm users; and
  // whether any of them still grants access.
  Result<CredentialReport> Credentials(const std::string& user);
  // The same for one job: its workload tokens and federated sessions still
  // within their lifetime, and its secret deliveries still alive.
  Result<CredentialReport> JobCredentials(const std::string& job_id);

  // What each cluster that keeps people's accounts calls `user` (a
  // directory userName), as (the cluster's provider, name): a Slurm user,
  // a Kubernetes user. Asks no cluster.
  std::vector<std::pair<std::string, std::string>> ClusterNames(const std::string& user) const;

 private:
  // Every cluster's people accounts, made afresh for one request (their
  // calls block, and an account handle serves one thread).
  std::vector<std::unique_ptr<providers::PeopleAccounts>> Accounts() const;
  Result<int64_t> Audit(const std::string& action, const std::string& resource, Details details,
                        const std::string& actor);
  // What `job` holds still at `now` into `out`, each also named in `live`.
  Status AddJobCredentials(const JobRecord& job, Timestamp now, CredentialReport& out, std::vector<std::string>& live);
  // The phases of Sync; each appends its steps' records to `steps`.
  // A leaver's tokens and break-glass grants end.
  Status EndCredentials(const std::string& user, const std::string& actor, std::vector<SyncStep>& steps);
  // A leaver's queued and running jobs, as the estate's deprovisioning
  // says, except those `keep` says the person may still run (their team's,
  // for someone still `active`, whom Sync has already looked up).
  Status HandleWork(const std::string& user, bool active, const std::string& actor, std::vector<SyncStep>& steps,
                    const std::function<bool(const JobRecord&)>& keep);
  // Provider accounts made or removed so that exactly those `grants` mean
  // remain on each cluster.
  Status SyncAccounts(const std::string& user, const std::vector<providers::PersonGrant>& grants, bool may_work,
                      const std::string& actor, std::vector<SyncStep>& steps);

  Store& store_;
  CommitQueue& queue_;
  const Estate& estate_;
  const Clock& clock_;
  JobService& jobs_;
  std::function<std::vector<identity::Binding>()> bindings_;
  std::function<void(const std::string&)> forget_;
  const providers::Registry& kinds_;
};

}  // namespace causeway
