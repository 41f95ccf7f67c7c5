// Role bindings: the estate's `access:` entries plus those made through the
// API (kept in the directory as entries of kind "Binding"), which an
// operator or `causeway acceptance identity` adds without redeploying.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/mutex.h"
#include "causeway/store.h"
#include "identity/access.h"
#include "identity/tokens.h"
#include "store/commit_queue.h"

namespace causeway {

class BindingService {
 public:
  // `grant_active` says whether a break-glass grant is active now: a
  // binding made under one is in force only while it is, until an admin
  // confirms it.
  BindingService(const DirectoryReader& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
                 std::function<bool(const std::string& grant)> grant_active = nullptr)
      : store_(store), queue_(queue), estate_(estate), clock_(clock), grant_active_(std::move(grant_active)) {}

  // Every binding in force: the estate's, then the API's (source
  // "binding/<id>"). Re-read from the database at most every 500 ms, so a
  // binding made or removed through any replica applies within that.
  std::vector<identity::Binding> Current();
  // Current() and the bindings made under break-glass grants that have
  // ended and were never confirmed (not in force, still listed).
  std::vector<identity::Binding> All();
  // kInvalidArgument for an unknown role or team, or a group name with
  // control characters; kAlreadyExists for the same binding twice. A
  // binding made under a break-glass grant records the grant and stays
  // flagged (confirmed: false) until an admin confirms it.
  Result<identity::Binding> Create(const std::string& group, const std::string& role, const std::string& team,
                                   const identity::Principal& who);
  // Confirms a binding made under a break-glass grant. By an admin acting
  // through their own groups (not a grant), who did not make it.
  Result<identity::Binding> Confirm(const std::string& id, const identity::Principal& who);
  // Only API bindings can be removed; the estate's live in its file.
  // Returns the binding removed.
  Result<identity::Binding> Delete(const std::string& id, const std::string& actor);

 private:
  const DirectoryReader& store_;
  CommitQueue& queue_;
  const Estate& estate_;
  const Clock& clock_;
  std::function<bool(const std::string&)> grant_active_;
  Mutex mu_;
  std::vector<identity::Binding> stored_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point read_at_ GUARDED_BY(mu_) {};
};

}  // namespace causeway
