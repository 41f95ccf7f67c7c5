// Break-glass: a person asks, with a reason, for an elevated role for a
// while (`identity.breakglass` says which roles, how long at most, and
// whether another admin must approve). The grant expires by itself; while
// it lasts, every request made with it is an audit event
// (breakglass.use), and every request, approval, use and revocation is
// announced to the configured webhook.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "identity/tokens.h"
#include "store/commit_queue.h"

namespace causeway {

class BreakglassService {
 public:
  BreakglassService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock);

  // kPermissionDenied unless `who` is a person; kInvalidArgument for a
  // missing reason, a role the estate does not offer, a duration over the
  // maximum. Active at once when no approver is required.
  Result<BreakglassRecord> Request(const identity::Principal& who, const std::string& role, const std::string& team,
                                   const std::string& reason, Micros duration);
  // By a person who is an admin through their groups (not through a
  // break-glass grant) and is not the requester.
  Result<BreakglassRecord> Approve(const identity::Principal& who, const std::string& id);
  // By the requester or an admin: ends the grant now.
  Result<BreakglassRecord> Revoke(const identity::Principal& who, const std::string& id);
  Result<std::vector<BreakglassRecord>> List() const;

  // Adds `who`'s active break-glass grants to it (a person's only); the ids
  // it added. Active grants are re-read at most every 500 ms.
  Result<std::vector<std::string>> Elevate(identity::Principal& who);
  // Records one use of an elevated principal: fails (and the request must
  // then be refused) if the audit event cannot be written.
  Status RecordUse(const identity::Principal& who, const std::vector<std::string>& grants, const std::string& method,
                   const std::string& path);

 private:
  Status Announce(const std::string& event, const nlohmann::json& details) const;
  Result<BreakglassRecord> Change(const std::string& id, const std::string& action, const std::string& actor,
                                  const std::function<Status(BreakglassRecord&)>& change);

  Store& store_;
  CommitQueue& queue_;
  const Estate& estate_;
  const Clock& clock_;
  std::mutex mu_;
  std::vector<BreakglassRecord> active_;                       // guarded by mu_
  std::chrono::steady_clock::time_point read_at_{};            // guarded by mu_
};

nlohmann::json ToJson(const BreakglassRecord& b);

}  // namespace causeway
