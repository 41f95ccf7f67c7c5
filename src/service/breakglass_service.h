// Break-glass: a person asks, with a reason, for an elevated role for a
// while. It is off unless the estate's `identity.breakglass` says which
// roles, for members of which groups, for how long at most, and whether
// another person must approve (by default one must; activating one's own
// grant has to be configured explicitly, `self_approval: true`).
//
// A grant never widens an existing credential. Elevated work is done with
// the grant's own credential (a token "tokb_...", issued once to the
// requester while the grant is active), which acts as the requester with
// exactly the granted role, expires with the grant and is revoked with it.
// Every token made under a grant (through its credential, or through a
// token made that way) carries the grant's id and works only while the
// grant is active; role bindings and identity links made under it are
// listed in the grant's record (Created), bindings flagged and in force
// only while the grant lasts, until an admin confirms them. Every request
// made under a grant is an audit event (breakglass.use); every request,
// approval, use and revocation is announced to the configured webhook.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/mutex.h"
#include "causeway/store.h"
#include "identity/access.h"
#include "identity/tokens.h"
#include "net/fetch.h"
#include "service/coverage.h"
#include "store/commit_queue.h"

namespace causeway {

// What was made under one grant, kept in force only while it lasts.
struct GrantArtifacts {
  struct Binding {
    std::string id, group, role, team;
    bool confirmed = false;  // an admin confirmed it: it outlives the grant
  };
  std::vector<std::string> tokens;  // ids
  std::vector<Binding> bindings;
  std::vector<std::string> links;  // identity link ids
};

class BreakglassService {
 public:
  // `forget`: told of each token revoked, so this replica's cache drops it.
  // `http` carries the webhook's announcements (the network unless a test
  // gives another).
  BreakglassService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
                    std::function<void(const std::string& token_id)> forget = nullptr,
                    net::Fetcher& http = net::Network());

  struct Issued {
    BreakglassRecord grant;
    std::optional<identity::MintedToken> credential;  // when active at once (self_approval)
  };
  // kFailedPrecondition when the estate does not configure break-glass;
  // kPermissionDenied unless `who` is a person, in one of the configured
  // groups, asking with a credential of their own (not another grant's);
  // kInvalidArgument for a short reason, a role the estate does not offer,
  // a duration over the maximum. Active at once, with its credential, only
  // where the estate allows self-approval.
  Result<Issued> Request(const identity::Principal& who, const std::string& role, const std::string& team,
                         const std::string& reason, Micros duration);
  // By a person who is an admin through their groups (never through a
  // grant) and is not the requester.
  Result<BreakglassRecord> Approve(const identity::Principal& who, const std::string& id);
  // The grant's credential, for its requester (asking with a credential of
  // their own), once, while the grant is active. kFailedPrecondition when
  // it was issued already or the grant is not active.
  Result<identity::MintedToken> IssueCredential(const identity::Principal& who, const std::string& id);
  // By the requester or an admin: ends the grant now and revokes every
  // token made under it, in the same transaction.
  Result<BreakglassRecord> Revoke(const identity::Principal& who, const std::string& id);
  Result<std::vector<BreakglassRecord>> List() const;
  // What was made under each of `grants`, by grant id (every one of them
  // present).
  Result<std::map<std::string, GrantArtifacts>> Created(const std::vector<BreakglassRecord>& grants) const;

  // What `causeway audit coverage` reports of break-glass: a configuration
  // that lets requesters approve themselves, and role bindings made under a
  // grant that no admin has confirmed.
  std::vector<CoverageFinding> CoverageFindings(const std::vector<identity::Binding>& bindings) const;

  // Whether grant `id` is active now (re-read as Resolve says).
  bool IsActive(const std::string& id);

  // For a principal whose token was made under a grant: kUnauthenticated
  // unless that grant is active now. A grant's own credential is turned
  // into the requester holding exactly the granted role (the caller has
  // checked the person is still active). Active grants are re-read at most
  // every 500 ms (at once after a change through this replica).
  Status Resolve(identity::Principal& who);
  // Records one request made under a grant: fails (and the request must
  // then be refused) if the audit event cannot be written.
  Status RecordUse(const identity::Principal& who, const std::string& method, const std::string& path);

 private:
  Status Announce(const std::string& event, const Details& details) const;
  Result<BreakglassRecord> Change(const std::string& id, const std::string& action, const std::string& actor,
                                  const std::function<Status(BreakglassRecord&)>& change,
                                  const std::vector<TokenRecord>& revoke = {});
  Result<std::optional<BreakglassRecord>> Active(const std::string& id);
  identity::MintedToken MintCredential(const BreakglassRecord& grant, const identity::Principal& who, Timestamp now) const;
  void Changed();

  Store& store_;
  CommitQueue& queue_;
  const Estate& estate_;
  const Clock& clock_;
  std::function<void(const std::string&)> forget_;
  net::Fetcher& http_;
  Mutex mu_;
  std::vector<BreakglassRecord> recent_ GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point read_at_ GUARDED_BY(mu_) {};
};

// A grant as its audit events and announcements tell it (and the API shows
// it): every field, times as RFC 3339, null for what is not set.
Details DetailsOf(const BreakglassRecord& b);

// Where a grant stands at `now`: "requested" (waiting for its approver),
// "lapsed" (not approved within the approval window), "active", "expired"
// or "revoked".
std::string StateOf(const BreakglassRecord& b, Timestamp now);
// Whether `who` may approve `b` now: it waits, and they are an admin
// through a group with a token that carries the admin scope, and not its
// requester (the rules BreakglassService::Approve enforces).
bool MayApprove(const identity::Principal& who, const BreakglassRecord& b, Timestamp now);

// The grant a break-glass grant confers: its role, for its team.
identity::Grant GrantOf(const BreakglassRecord& b);

}  // namespace causeway
