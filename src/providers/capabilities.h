// What some providers can do beyond running attempts. Each is a small
// interface of its own: a service that needs one asks the provider's kind
// for it (registry.h) or the adapter (Capability<T>), never for a concrete
// adapter type, so a provider without it is simply skipped.
#pragma once

#include <memory>
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

// A cluster that keeps an account per person (Slurm's accounting users):
// the people service keeps them in line with the directory. `user` is the
// person's POSIX name; accounts are team names. Every call may block on the
// cluster and has a deadline of its own.
class PeopleAccounts {
 public:
  virtual ~PeopleAccounts() = default;
  virtual const std::string& cluster() const = 0;
  // The accounts `user` is associated with; empty when the user is absent.
  virtual Result<std::vector<std::string>> UserAccounts(const std::string& user) = 0;
  // Associates `user` with `account` (made first if missing); nothing to do
  // when already done.
  virtual Status EnsureUser(const std::string& user, const std::string& account) = 0;
  // Removes only the association of `user` with `account`.
  virtual Status RemoveAssociation(const std::string& user, const std::string& account) = 0;
  // Removes `user` with every association; nothing to do when absent.
  virtual Status RemoveUser(const std::string& user) = 0;
};

// The capability `T` of an adapter, or nullptr when it has none.
template <typename T>
T* Capability(ProviderAdapter* adapter) {
  return dynamic_cast<T*>(adapter);
}

}  // namespace causeway::providers
