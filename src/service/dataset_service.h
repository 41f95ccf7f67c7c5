// The dataset registry (docs/datasets.md). A version is registered once, as
// the manifest of what is under a storage location's path (or a manifest
// file), and named by the manifest's digest. Replicas are copies of a
// version in other storage locations, made with rclone; a replica counts
// (for routing, for `show`) only while `verified`: listed, and every object
// matching the manifest. Every registration, verification and replication
// is an audit event.
//
// rclone runs outside every lock: a listing or a copy may take hours. A
// replication runs on its own thread, reports progress while it runs, and
// is stopped (rclone killed) when the service is destroyed; what it moved
// stays, and the next replication of the same version to the same place
// moves only what is still missing.
#pragma once

#include <atomic>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/job_spec.h"
#include "causeway/mutex.h"
#include "causeway/store.h"
#include "data/manifest.h"
#include "data/rclone.h"
#include "identity/tokens.h"
#include "placement/router.h"
#include "store/commit_queue.h"

namespace causeway {

// What a job reads across regions when its attempt runs on `cluster`: one
// charge per dataset version (by the digest in its stored spec) with no
// verified replica in the cluster's place, its bytes at the estate's
// transfer price from the nearest verified replica, charged to the job's
// team and the job. Ids are `<id_prefix>-<n>`. Versions the registry does
// not know are not charged (their size is unknown).
std::vector<DataCharge> RemoteReadCharges(const Estate& estate, const placement::DataPlaces& places,
                                          const JobRecord& job, const std::string& cluster, Timestamp at,
                                          const std::string& id_prefix);

struct RegisterDataset {
  std::string name;
  std::string version;  // the label; [A-Za-z0-9._-], at most 64; "" : v<N>, N the versions so far + 1
  // Where the objects are: a location's URL and a path under it
  // ("s3://causeway-eu/c4/2024-05") or "LOCATION:path". Empty when
  // `manifest` is given.
  std::string from;
  std::string manifest;            // canonical manifest text (data/manifest.h)
  std::string hash_type = "md5";  // for a listing
};

struct ReplicationOptions {
  std::string bwlimit;  // rclone's --bwlimit; "" : none
  int attempts = 3;
  Micros backoff = std::chrono::seconds(2);
  // Who pays for the bytes moved: the dataset's owner unless a job asked
  // for the copy (replicate: on-demand).
  std::string charge_team, charge_job;
};

// One replication, as it runs and once done.
struct Replication {
  std::string id;  // "rep_<ulid>"
  std::string dataset, version, digest;
  std::string from, to;  // storage locations
  std::string state;     // running, verified, failed, corrupt
  data::CopyProgress progress;
  int64_t bytes_moved = 0;
  int runs = 0;
  std::vector<std::string> errors;  // one per failed run of rclone
  std::string detail;               // why it failed, or what did not match
  std::string actor;
  Timestamp started_at;
  std::optional<Timestamp> finished_at;
  std::optional<Money> transfer_cost;  // bytes moved at the estate's transfer price
};

// It is also routing's view of where versions are verified
// (placement::DataPlaces), kept in memory: loaded when it starts, updated
// after each of its own writes, and read again every 30 s (what another
// replica of the server wrote).
class DatasetService : public placement::DataPlaces {
 public:
  // `rclone` overrides the estate's rclone settings (tests give their own
  // HOME); by default they come from the estate's `data:`.
  DatasetService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
                 std::optional<data::RcloneSettings> rclone = std::nullopt);
  ~DatasetService();  // stops running replications and waits for them

  // kNotFound for a dataset the estate does not declare or an unknown
  // location; kInvalidArgument for a bad label, source or manifest;
  // kPolicyViolation for a source outside the dataset's residency zone;
  // kAlreadyExists when the label or the same contents are registered.
  // A version listed from a location is verified there at once.
  Result<DatasetVersion> Register(const identity::Principal& who, const RegisterDataset& request);

  // Every version of `name` ("" : of every dataset), oldest first.
  Result<std::vector<DatasetVersion>> Versions(const std::string& name) const;
  // The version a reference names: NAME@VERSION, NAME@sha256:…, or the
  // newest when neither is given. kNotFound names what is registered.
  Result<DatasetVersion> Resolve(const DatasetRef& ref) const;
  // "c4@2024-05", "c4@sha256:…", "c4" as a reference.
  static Result<DatasetRef> ParseRef(const std::string& text);
  Result<std::vector<DatasetReplica>> Replicas(const std::string& digest) const;
  Result<std::string> Manifest(const std::string& digest) const;

  // Lists the version's replica at `location` and compares it with the
  // manifest; the replica becomes `verified` or `corrupt` (and stops
  // counting). kNotFound when it has no replica there. A location is
  // named, here and in Replicate, by its name or by "provider/region"
  // when only one location is there.
  Result<DatasetReplica> Verify(const identity::Principal& who, const DatasetRef& ref, const std::string& location);

  // Starts copying the version to `location` from a verified replica
  // (the nearest: same region, then same provider, then any); returns at
  // once with the replication running. kPolicyViolation when `location` is
  // outside the dataset's residency zone; kFailedPrecondition when no
  // verified replica exists to copy from, or one is being copied there
  // already; kResourceExhausted when too many run.
  Result<Replication> Replicate(const identity::Principal& who, const DatasetRef& ref, const std::string& location,
                                const ReplicationOptions& options);
  // A replication started on this server (the latest 256 are kept).
  Result<Replication> GetReplication(const std::string& id) const;

  // A job's datasets at submission: each reference must name a registered
  // version when its dataset has any (kInvalidArgument naming the field
  // otherwise), and its digest is written into the spec, so the job's
  // provenance carries it; a dataset with none registered is a warning. A
  // dataset bound to a residency zone may only be read by a job bound to
  // the same zone (kPolicyViolation).
  Status CheckJob(JobSpec& spec, const std::string& file, std::vector<Diagnostic>& warnings) const;

  static constexpr int kMaxRunning = 4;

  // A checkpoint a job writes through a MOUNT_CACHED mount of its
  // file_mounts counts only once rclone's cache has written it back: while
  // its bucket holds nothing at `path`, kUnavailable (retryable; rclone's
  // listing runs here, at most 30 s). Ok for every other path.
  Status CheckFlushed(const JobSpec& spec, const std::string& path) const;

  // Reads the registry once: routing's view becomes what is verified
  // where, and every replica's storage due is charged (ChargeStorage).
  // Called when the service starts, then every 30 s by the copier thread
  // (what other replicas of the server wrote reaches routing here too).
  Status Refresh() EXCLUDES(places_mu_);
  static constexpr size_t kMaxStorageCharges = 1000;

  std::optional<placement::DataPlace> Verified(const std::string& digest) const override EXCLUDES(places_mu_);
  // A job waiting for a copy (replicate: on-demand): the copy is started
  // by this service's own thread (RequestCopy never blocks: the scheduler
  // calls it under its lock), to the first storage location at `place`,
  // charged to the job.
  std::string RequestCopy(const std::string& digest, const std::string& place, const std::string& job_id,
                          const std::string& team) const override EXCLUDES(wants_mu_);

 private:
  // Of `versions` (one dataset's, oldest first), the one `ref` names.
  static Result<DatasetVersion> Pick(const std::vector<DatasetVersion>& versions, const DatasetRef& ref);
  // Routing's view of `versions` from `replicas`: the whole view, or
  // those versions' part of it.
  void SetPlaces(const std::vector<DatasetVersion>& versions, const std::vector<DatasetReplica>& replicas,
                 bool whole) EXCLUDES(places_mu_);
  // Reads where `version` is verified into routing's view (a failed read
  // is logged: the next Refresh reads it again).
  void RefreshPlaces(const DatasetVersion& version) EXCLUDES(places_mu_);
  // Charges every replica's storage, from when it was first verified, one
  // charge per replica per UTC day once the day has ended, at its
  // location's storage price, to the dataset's owner; a location without a
  // price charges nothing (its days pass uncharged). What is due is
  // written in one unit with one audit event, at most kMaxStorageCharges
  // days at a time (the rest on the next call). Each day is charged once,
  // even with several servers on one store (AdvanceReplicaCharge).
  Status ChargeStorage(const std::vector<DatasetVersion>& versions, const std::vector<DatasetReplica>& replicas);
  // Writes `replica`, `charge` when given and `event` in one unit, then
  // refreshes routing's view of the version.
  Status Record(const DatasetVersion& version, const DatasetReplica& replica, const AuditEvent& event,
                const std::optional<DataCharge>& charge = std::nullopt);
  // A replication's steps (Replicate): whether `to` may hold `v` (a
  // dataset bound to a residency zone is never copied out of it); the
  // options' bounds; the nearest verified replica to copy from; an earlier
  // version already at `to` to copy what they share from ("" if none); the
  // claim on (version, location) while it runs; its copy, on a thread.
  struct Source {
    const DatasetReplica* replica = nullptr;
    const StorageLocation* location = nullptr;
  };
  Status MayHold(const DatasetVersion& v, const StorageLocation& to) const;
  static Status CheckOptions(const ReplicationOptions& options);
  Result<Source> NearestSource(const DatasetVersion& v, const std::vector<DatasetReplica>& replicas,
                               const StorageLocation& to) const;
  Result<std::string> LocalCopySource(const DatasetVersion& v, const StorageLocation& to, const std::string& path) const;
  static std::string ClaimKey(const Replication& rep);
  Status Claim(const Replication& rep) EXCLUDES(mu_);
  void Unclaim(const Replication& rep) EXCLUDES(mu_);
  struct Running;
  void StartCopy(std::shared_ptr<Running> state, std::string from_remote, std::string to_remote,
                 const ReplicationOptions& options) EXCLUDES(mu_);
  Result<data::Manifest> LoadManifest(const std::string& digest) const;
  std::string RemotePath(const StorageLocation& l, const std::string& path) const;
  void Run(std::shared_ptr<Running> r, std::string from_remote, std::string to_remote, ReplicationOptions options);
  void Update(const std::string& id, const std::function<void(Replication&)>& fn) EXCLUDES(mu_);

  Store& store_;
  CommitQueue& queue_;
  const Estate& estate_;
  const Clock& clock_;
  data::Rclone rclone_;
  std::atomic<bool> stop_{false};
  mutable Mutex mu_;
  std::map<std::string, Replication> replications_ GUARDED_BY(mu_);
  std::deque<std::string> order_ GUARDED_BY(mu_);  // ids, oldest first
  std::map<std::string, std::string> busy_ GUARDED_BY(mu_);  // "digest\nlocation" -> running id
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> ended;
  };
  std::vector<Worker> threads_ GUARDED_BY(mu_);
  // Copies jobs wait for, by "digest\nplace": what became of each.
  struct Want {
    std::string digest, place, job_id, team;
    std::string state;  // "asked", then the replication's id, or why it could not start
    SteadyTime tried{};  // when a copy was last started for it
    SteadyTime asked{};  // when a job last asked: dropped 10 minutes after
  };
  void CopyWanted() EXCLUDES(wants_mu_);
  mutable Mutex wants_mu_;
  mutable CondVar wants_cv_;
  mutable std::map<std::string, Want> wants_ GUARDED_BY(wants_mu_);
  std::thread copier_;  // runs CopyWanted; started last, joined first

  mutable Mutex places_mu_;
  std::map<std::string, placement::DataPlace> places_ GUARDED_BY(places_mu_);
};

}  // namespace causeway
