// Provenance records: each job's in-toto Statement (provenance/statement.h)
// signed in a DSSE envelope with the provenance key, an ES256 key of its
// own (kid "provenance-…", made on first use, its making audited) whose
// public half is published as a JWKS (GET /v1/provenance/keys) for anyone
// to verify a record without Causeway. The private key never leaves the
// database; it is never used for anything else, and no other key signs
// records.
//
// Jobs add facts of their own through their attempt credential (a tracker's
// run id, hyperparameters, artifact digests): RecordFacts, bounded.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/mutex.h"
#include "causeway/store.h"
#include "identity/jwt.h"
#include "identity/tokens.h"
#include "provenance/statement.h"
#include "store/commit_queue.h"

namespace causeway {

// Limits on what a job may record about itself.
inline constexpr size_t kMaxJobFacts = 256;              // per job
inline constexpr size_t kMaxJobFactBytes = 16 << 10;     // one value, as JSON
inline constexpr size_t kMaxJobFactsPerCall = 64;
// Finished jobs sealed per write unit.
inline constexpr int kSealBatch = 200;

// Which jobs an export covers.
struct ProvenanceExport {
  std::string team;                 // "" for every team
  std::optional<Timestamp> since;   // submitted at or after
  std::optional<Timestamp> until;   // submitted before
  bool finished_only = false;       // only jobs that will not change again
  std::string before_id;            // cursor: only jobs older than this one
  int64_t limit = 0;                // at most this many records; 0: all
};

struct ProvenancePage {
  int64_t emitted = 0;
  std::string next;  // the cursor for the rest when `limit` cut it short, else ""
};

class ProvenanceService {
 public:
  ProvenanceService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
                    provenance::Builder builder);

  // Who the records name as builder (the server's URL once it listens).
  void SetBuilderId(const std::string& id) EXCLUDES(mu_);

  // The job's Statement, unsigned.
  Result<nlohmann::json> Statement(const std::string& job_id) const EXCLUDES(mu_);
  // The job's record: the Statement in a DSSE envelope signed with the
  // provenance key (made on first use), as one line of JSON. A finished
  // job's record is sealed once (SealFinished) and read back as stored, byte
  // for byte, from then on; until then it is built and signed on each call
  // (a running job's record so far).
  Result<std::string> Record(const std::string& job_id) EXCLUDES(mu_);
  // Seals up to `limit` finished jobs not sealed yet, oldest first: each
  // one's record built, signed and stored, so that it reads the same ever
  // after and export streams it without signing again. Returns how many.
  // Safe to run on several replicas at once (a job keeps its first record).
  Result<int> SealFinished(int limit) EXCLUDES(mu_);
  // SealFinished until none is left; how many were sealed.
  Result<int64_t> SealAllFinished() EXCLUDES(mu_);
  // Every record `which` covers, newest job first, each as one line of JSON
  // (no newline) handed to `emit` as soon as it is read (sealed) or signed;
  // `emit` returning false stops. Pages through the store: memory stays
  // flat whatever the count.
  Result<ProvenancePage> Export(const ProvenanceExport& which, const std::function<bool(const std::string&)>& emit)
      EXCLUDES(mu_);

  // The provenance keys as a JWKS (RFC 7517), oldest first; {"keys": []}
  // before the first record.
  Result<nlohmann::json> PublicKeys() const;

  // Adds `facts` (names to JSON values) and `artifacts` ({name, digest,
  // uri?}) to job `job_id`'s record, as `who` (the job's attempt
  // credential, or someone who may write the team's jobs; checked by the
  // caller). kInvalidArgument naming the field for a bad name, value or
  // digest, or past the limits; kFailedPrecondition once the job ended.
  Result<std::vector<JobFact>> RecordFacts(const identity::Principal& who, const std::string& job_id,
                                           const nlohmann::json& facts, const nlohmann::json& artifacts);

 private:
  Result<identity::jwt::SigningKey> Key() EXCLUDES(mu_);
  provenance::Builder builder() const EXCLUDES(mu_);

  Store& store_;
  CommitQueue& queue_;
  const Estate& estate_;
  const Clock& clock_;
  mutable Mutex mu_;
  provenance::Builder builder_ GUARDED_BY(mu_);
  std::optional<identity::jwt::SigningKey> key_ GUARDED_BY(mu_);
};

}  // namespace causeway
