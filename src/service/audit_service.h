// The audit trail across providers: providers' logs imported into the
// store as OCSF events (each source event once, however many files carry
// it), searched beside Causeway's own chained events, and lined up per
// person through the SCIM directory and a table of identity links (the
// ARN, POSIX user or email a person has at each provider).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "audit/importers.h"
#include "identity/oidc.h"
#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/mutex.h"
#include "causeway/store.h"
#include "service/coverage.h"
#include "store/commit_queue.h"

namespace causeway {

struct AuditImportReport {
  audit::ImportStats stats;  // records, events, issues, duplicates within the file
  int64_t stored = 0;        // new events stored
  int64_t already = 0;       // events stored before (from an earlier file)
  // Events whose id was stored before with other content (from an earlier
  // file): both are kept, this one under ConflictId; each is also an issue.
  int64_t conflicts = 0;
};

// One event of a search: Causeway's own (provider "causeway") or imported.
struct AuditHit {
  ImportedAuditEvent row;  // its `event` is the OCSF event, JSON text
};

struct AuditSearch {
  std::string who;       // a person or an identity at a provider; "" = anyone
  std::string provider;  // "causeway" for Causeway's own events; "" = all
  std::string action;    // an activity (create, read, update, delete, ...) or an operation
  int64_t since_ms = 0, until_ms = 0;
  std::string cursor;    // from the previous page's next_cursor
  int limit = 100;       // 1-1000
  bool newest_first = false;
};

struct AuditPage {
  std::vector<AuditHit> hits;  // oldest first, or newest first when asked
  std::string next_cursor;     // "" on the last page
  std::vector<std::string> identities;  // what `who` was matched as
};

// An identity at a provider that belongs to a person. provider "*" links it
// at every provider.
struct IdentityLink {
  std::string id;
  std::string provider;
  std::string identity;  // lower case
  std::string person;    // the directory's userName
  std::string breakglass;  // the grant it was made under, "" for none
};

// Everything about one person for an auditor or a leaver review.
struct PersonTrail {
  struct Credential {
    TokenRecord token;
    bool live = false;  // neither revoked nor expired
  };
  std::string user_name;  // the person; for an unlinked identity, the identity as asked
  // An identity at a provider (an ARN, a POSIX user) no person is linked
  // to: its own trail, and no person's rights.
  bool unlinked = false;
  std::optional<identity::PersonDirectory::Person> entry;  // absent: known only through links
  std::vector<IdentityLink> links;
  std::vector<Credential> credentials;
  AuditPage events;  // what they did, oldest first, and what they were matched as
};

// What the audit trail covers, against the estate's audit section.
struct CoverageReport {
  struct Bucket {
    std::string provider, name;
    std::string state;  // logged, dark, unknown
    std::string why;
    std::string holds;  // what the bucket holds, "" when not said
  };
  struct Source {
    std::string provider, source;
    std::string state;  // current, stale, never, unlisted (imported, not in the estate)
    std::optional<int64_t> max_gap_s;  // listed sources only
    std::optional<int64_t> events;     // imported sources only
    std::optional<Timestamp> last_import;
  };
  std::vector<CoverageFinding> findings;
  std::vector<Bucket> buckets;
  std::vector<Source> log_sources;
};

// The newest event on `resource` with action `action`, or none: the
// resource's range says where its last event is, so this is one indexed
// read however long the trail.
Result<std::optional<AuditEvent>> LatestAuditEvent(const AuditReader& store, const std::string& resource,
                                                   const std::string& action);

class AuditService {
 public:
  AuditService(Store& store, CommitQueue& queue, const Clock& clock) : store_(store), queue_(queue), clock_(clock) {}

  // Streams `path` (plain or gzip) into the store in batches; each batch is
  // one transaction with an `audit.import` event in the chain that commits
  // to the rows it stored (details: imported_at, stored, digest; see
  // audit::AppendImportedRow), so `audit verify` finds an imported event
  // edited or deleted. `label` names the file in the trail (never its
  // contents).
  Result<AuditImportReport> Import(const std::string& path, const audit::ImportOptions& options,
                                   const std::string& label, const std::string& actor);

  // kInvalidArgument for a bad cursor or limit.
  Result<AuditPage> Search(const AuditSearch& query) const;

  // Everything about one person for an auditor or a leaver review: the
  // directory entry (with its groups, from which the caller adds what they
  // could do), their identities at each provider, credentials, and what they
  // did (their events, oldest first). kNotFound when `who` is nobody the
  // directory or the links know.
  Result<PersonTrail> Person(const std::string& who, int64_t since_ms, int limit) const;

  // What the trail does not cover, against the estate's audit section:
  // buckets whose data-plane access is not logged (off, or older than the
  // organisation-wide setting that covers only new ones), log sources never
  // imported or not within their max_gap, retention below the policy.
  Result<CoverageReport> Coverage(const AuditCoverageConfig& config, Timestamp now) const;

  // Links an identity at a provider to a person; made under a break-glass
  // grant, the link records it (listed in the grant's record).
  Result<IdentityLink> Link(const std::string& provider, const std::string& identity, const std::string& person,
                            const identity::Principal& who);
  Result<IdentityLink> Unlink(const std::string& id, const std::string& actor);
  Result<std::vector<IdentityLink>> Links() const;

  // What each cluster that keeps people's accounts calls a person, as
  // (provider, name) pairs (people_service.h, ClusterNames): a person's
  // search finds those names in the provider's imported events without a
  // link made by hand. Set once at start, before any search.
  using ClusterNames = std::function<std::vector<std::pair<std::string, std::string>>(const std::string& user)>;
  void SetClusterNames(ClusterNames names) { cluster_names_ = std::move(names); }

 private:
  // Whom a search is about, read once per request: the person `who`
  // resolves to (a userName, an email, or a linked identity), if any, and
  // what they are known by in imported events (lower case, per provider or
  // "" for any) and in Causeway's own trail (user:<name>, their tokens).
  struct Subject {
    std::optional<std::string> name;
    std::optional<identity::PersonDirectory::Person> entry;
    std::vector<IdentityLink> links;
    std::vector<TokenRecord> tokens;
    std::vector<std::pair<std::string, std::string>> identities;
    std::vector<std::string> own_actors;
  };
  Result<Subject> SubjectOf(const std::string& who) const;
  Result<AuditPage> SearchFor(const AuditSearch& q, const Subject* subject) const;
  Result<std::vector<AuditHit>> OwnEvents(const AuditSearch& q, const std::vector<std::string>& actors,
                                          int64_t after_ms, int64_t after_seq) const;

  // When a batch's rows are stored: its clock's time, but never a time an
  // earlier batch of this service used, so each batch's rows are told apart
  // by it (verification groups them by provider, source and this time).
  Timestamp BatchTime() EXCLUDES(batch_mu_);

  Store& store_;
  CommitQueue& queue_;
  const Clock& clock_;
  Mutex batch_mu_;
  Timestamp last_batch_ GUARDED_BY(batch_mu_);
  ClusterNames cluster_names_;
};

}  // namespace causeway
