// Routing: which cluster an admitted job runs on. Filters, in this order:
// GPU type and gang shape, spot availability, explicit overrides (`infra`),
// residency, what the backend honours (image, disk, workdir, file mounts),
// data locality, provider health, free capacity. Among the
// clusters that pass, the best by: capacity already paid for (an active
// reservation with room), then price per GPU-hour, then data locality (for
// jobs allowed to read remotely), then how full the pool is. Ordered
// alternatives are tried in order; unordered ones compete on score.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "causeway/estate.h"
#include "causeway/job_spec.h"

namespace causeway::placement {

// One node pool of the estate. `id` numbers the pools densely, in estate
// order, so live state can be kept in plain vectors.
struct PoolRef {
  int id = -1;
  const Cluster* cluster = nullptr;
  const NodePool* pool = nullptr;
};

// The live state routing needs, supplied by the scheduler.
class CapacityView {
 public:
  virtual ~CapacityView() = default;
  // Whether the pool's provider is up.
  virtual bool Healthy(const PoolRef& pool) const = 0;
  // Whether `nodes` nodes of the pool each have `gpus_per_node` free GPUs.
  virtual bool Fits(const PoolRef& pool, int gpus_per_node, int nodes) const = 0;
  virtual int FreeGpus(const PoolRef& pool) const = 0;
  // Unused GPUs of active reservations for the pool's cluster and GPU type.
  virtual int ReservedFree(const PoolRef& pool) const = 0;
};

// One way to run the job: an alternative of its accelerators on one pool.
struct Option {
  int alternative = 0;  // index into spec.accelerators.alternatives
  int pool_id = -1;
  const Cluster* cluster = nullptr;
  const NodePool* pool = nullptr;
  bool spot = false;
  bool reserved = false;       // runs on reserved capacity
  int64_t price_micros = 0;    // per GPU-hour, the rate that will apply
  bool data_local = true;
  int load_permille = 0;       // how full the pool is
  bool avoided = false;        // the cluster where the job's last attempt failed
};

// The checkpoint a job's next attempt resumes from, and the cluster that
// wrote it: the attempt can only run where the checkpoint can be read.
struct Resume {
  std::string path;
  std::string cluster;
};

// Whether nodes of `to` can read a checkpoint at `path` written on cluster
// `written_on`: always where it was written; elsewhere when one of the
// cluster's storage prefixes covers it, or, for a cluster that lists no
// storage, when it is in an object store (scheme://, not file://).
bool CheckpointReachable(const Cluster& to, const std::string& path, const std::string& written_on);

// Whether pool `pool` of cluster `c` honours what alternative `alt` of
// `spec` needs beyond its GPUs: its image, its disk (against the pool's
// declared disk_gb), its workdir and its file mounts (paths on the
// cluster's storage, where its backend links or enters them). When not, and
// `why` is given, says which part and why in words.
// Of `places` ("provider/region"), the one to read from at `location`: the
// same place, else one of the same provider, else the first; "" if none.
std::string NearestPlace(const std::vector<std::string>& places, const std::string& location);

// Bucket file mounts need the estate's `data:` (where buckets are, the
// nodes' rclone config); without it they are refused.
bool Honoured(const JobSpec& spec, const Alternative& alt, const Cluster& c, const NodePool& pool, std::string* why,
              const DataConfig* data = nullptr);

struct CandidateReport {
  Option option;
  bool eligible = false;
  std::string failure;  // why not, in words, when not eligible
  // Where an eligible candidate's data comes from, in words: "data local",
  // or "would read 1.2 GB across regions at 0.06 USD" (filled in when
  // reasons are asked for and the job names datasets).
  std::string data;
};

// What the dataset registry knows of a version (by digest): the places
// ("provider/region") where it has a verified replica, and its size.
struct DataPlace {
  std::vector<std::string> places;
  int64_t bytes = 0;
};

// The registry as routing reads it. Called while the scheduler holds its
// lock: an implementation answers from memory, never from the database.
class DataPlaces {
 public:
  virtual ~DataPlaces() = default;
  // nullopt when the registry does not know the version: the estate's
  // `datasets[].replicas` are then its places.
  virtual std::optional<DataPlace> Verified(const std::string& digest) const = 0;
  // Asks for a copy of `digest` at `place` ("provider/region") for a job
  // waiting for it (datasets[].replicate: on-demand), charged to the job's
  // team. Returns at once (the copy is made elsewhere); asking again while
  // one is made or wanted changes nothing. Says in words where it stands.
  virtual std::string RequestCopy(const std::string& digest, const std::string& place, const std::string& job_id,
                                  const std::string& team) const = 0;
};

class Router {
 public:
  explicit Router(const Estate& estate);

  // The best option among the alternatives for which `allowed(index)` holds,
  // or nullopt. `avoid` names a cluster to use only when no other will do:
  // where the job's last attempt failed for the infrastructure's sake.
  // With `resume`, only clusters that can read its checkpoint qualify.
  std::optional<Option> Choose(const JobSpec& spec, const CapacityView& view, const std::function<bool(int)>& allowed,
                               const std::string& avoid = "", const Resume* resume = nullptr) const;

  // Every cluster considered for every alternative, eligible or not, with the
  // reason it failed; eligible ones sorted best first. With a null `view`,
  // only the static filters are applied.
  std::vector<CandidateReport> Explain(const JobSpec& spec, const CapacityView* view,
                                       const Resume* resume = nullptr) const;

  // Whether any cluster could ever take alternative `alt` (static filters
  // only: type, shape, overrides, residency, locality).
  bool StaticallyPossible(const JobSpec& spec, int alt) const;

  // Every pool of the estate, indexed by PoolRef::id.
  const std::vector<PoolRef>& pools() const { return pools_; }

  // Where registered dataset versions are (may be set at any time; null:
  // only the estate's replicas). `places` outlives the router.
  void SetDataPlaces(const DataPlaces* places) { places_.store(places); }

  // Before a job starts on `cluster`: "" when every dataset it copies on
  // demand (replicate: on-demand) is verified there; otherwise asks for the
  // copy (DataPlaces::RequestCopy) and says, as the job's wait, what it
  // waits for.
  std::string AwaitData(const JobSpec& spec, const Cluster& cluster, const std::string& job_id) const;

 private:
  struct Entry {
    PoolRef ref;
    const Cluster* cluster;
    const NodePool* pool;
    const Provider* provider;
    int64_t on_demand = 0;
    int64_t spot = -1;  // -1: no spot capacity
    int64_t reservation_price = -1;  // -1: no reservation for this pool's GPU type
    std::string location;  // "provider/region"
  };
  // Fills `report` for one entry; returns whether it is eligible.
  // `view` null: static filters only. Reasons are filled in when `want_reason`.
  bool Evaluate(const JobSpec& spec, int alt, const Entry& e, const CapacityView* view, CandidateReport& report,
                bool want_reason, const Resume* resume = nullptr) const;

  // Whether a dataset the job names has a copy at `location`; `bytes` and
  // `from` say, when known, its size and the nearest place it is at.
  bool DataAt(const DatasetRef& d, const std::string& location, int64_t* bytes, std::string* from) const;
  // Whether a storage location at `place` may hold a copy of `dataset`
  // (its residency allowing).
  bool CanHold(const std::string& dataset, const std::string& place) const;

  const Estate& estate_;
  std::atomic<const DataPlaces*> places_{nullptr};
  std::vector<PoolRef> pools_;
  std::map<std::string, std::vector<Entry>> by_type_;  // GPU type -> pools offering it
};

// kInvalidArgument, with the reason for every cluster, when no cluster of the
// estate could ever run the job even idle (e.g. residency eu, but its GPU
// type is sold only in the us). `file` names the spec in diagnostics.
Status CheckFeasible(const Router& router, const JobSpec& spec, const std::string& file);

// Whether option `a` is better than `b`: not avoided first, then reserved,
// then price, then locality, then load.
bool Better(const Option& a, const Option& b);

}  // namespace causeway::placement
