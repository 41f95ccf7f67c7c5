// What some providers can do beyond running attempts. Each is a small
// interface of its own: a service that needs one asks the provider's kind
// for it (registry.h) or the adapter (Capability<T>), never for a concrete
// adapter type, so a provider without it is simply skipped.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/provider.h"
#include "causeway/status.h"

namespace causeway::providers {

// A provider whose availability can be switched off and on by hand (the
// simulated estate's outage drill, POST /v1/providers/NAME/outage).
class OutageDrill {
 public:
  virtual ~OutageDrill() = default;
  // Down: every attempt on it ends as a provider outage and it takes no work
  // until it is switched on again.
  virtual void SetOutage(bool down, Timestamp now) = 0;
};

// A role a person holds in Causeway, for a cluster to mirror: for one team,
// or for every team (team "").
struct PersonGrant {
  std::string role;  // one of kRoleNames (causeway/estate.h)
  std::string team;
  bool submits = false;  // the role submits jobs
};

// A cluster that keeps accounts or grants of its own per person (Slurm's
// accounting users, Kubernetes RBAC bindings): the people service keeps them
// in line with the directory and Causeway's role bindings. Each cluster
// says what it calls a person and which of its accounts a person's grants
// mean; the people service makes the missing ones and removes the rest.
// Every call may block on the cluster and has a deadline of its own.
class PeopleAccounts {
 public:
  virtual ~PeopleAccounts() = default;
  virtual const std::string& cluster() const = 0;
  // What the accounts are, for people reading a report ("Slurm user").
  virtual std::string Noun() const = 0;
  // The name the cluster knows the person by whose directory userName is
  // `user`; "" when no valid one can be made of it.
  virtual std::string NameOf(const std::string& user) const = 0;
  // The accounts someone holding `grants` has here, in the cluster's own
  // words (Slurm: the teams they submit to; Kubernetes: ROLE@NAMESPACE).
  virtual std::set<std::string> AccountsFor(const std::vector<PersonGrant>& grants) const = 0;
  // The accounts `user` (a NameOf) holds; empty when the user is absent.
  virtual Result<std::vector<std::string>> UserAccounts(const std::string& user) = 0;
  // Gives `user` the account (made first if missing); nothing to do when
  // already done.
  virtual Status EnsureUser(const std::string& user, const std::string& account) = 0;
  // Removes only that account of `user`.
  virtual Status RemoveAssociation(const std::string& user, const std::string& account) = 0;
  // Removes `user` with every account; nothing to do when absent.
  virtual Status RemoveUser(const std::string& user) = 0;
};

// The capability `T` of an adapter, or nullptr when it has none.
template <typename T>
T* Capability(ProviderAdapter* adapter) {
  return dynamic_cast<T*>(adapter);
}

}  // namespace causeway::providers
