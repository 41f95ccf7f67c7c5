// Replication: a version copied to a storage location with rclone, as a
// short sequence of named steps (Replicate), the copy itself on a thread of
// its own (Run), and the copies jobs wait for (RequestCopy, CopyWanted).
#include <algorithm>
#include <tuple>

#include <spdlog/spdlog.h>

#include "causeway/ids.h"
#include "causeway/text.h"
#include "service/dataset_internal.h"
#include "service/dataset_service.h"

namespace causeway {

using namespace datasets_detail;

struct DatasetService::Running {
  std::string id, key;
  DatasetVersion version;
  DatasetReplica replica;
  std::string from_place, to_place;
  std::string copy_dest;  // an earlier version's replica at the target, or ""
  std::string charge_team, charge_job;  // who asked for it (on demand), else the owner pays
};

std::string DatasetService::RequestCopy(const std::string& digest, const std::string& place, const std::string& job_id,
                                        const std::string& team) const {
  MutexLock lock(wants_mu_);
  std::string key = digest + "\n" + place;
  auto it = wants_.find(key);
  if (it == wants_.end()) {
    // Bounded: a want is dropped once its copy is verified, or when no job
    // has asked for it for 10 minutes; at most one per version and place.
    wants_[key] = Want{digest, place, job_id, team, "asked", {}, std::chrono::steady_clock::now()};
    wants_cv_.NotifyOne();
    return "copy asked for";
  }
  it->second.asked = std::chrono::steady_clock::now();
  const std::string& state = it->second.state;
  if (state.rfind("rep_", 0) == 0) return "copying (replication " + state + ")";
  return state;
}

void DatasetService::CopyWanted() {
  auto refreshed = std::chrono::steady_clock::now();
  MutexLock lock(wants_mu_);
  while (!stop_) {
    // One want at a time: the first not started, or one that failed a
    // minute ago (its job is still waiting, or it would not be asked).
    Want* next = nullptr;
    auto now = std::chrono::steady_clock::now();
    for (auto it = wants_.begin(); it != wants_.end();) {
      auto known = Verified(it->second.digest);
      bool done = known && std::find(known->places.begin(), known->places.end(), it->second.place) !=
                               known->places.end();
      if (done) {
        it = wants_.erase(it);
        continue;
      }
      Want& w = it->second;
      if (now - w.asked > std::chrono::minutes(10) && w.state.rfind("rep_", 0) != 0) {
        it = wants_.erase(it);
        continue;
      }
      bool running = false;
      if (w.state.rfind("rep_", 0) == 0) {
        MutexLock rlock(mu_);
        auto rep = replications_.find(w.state);
        running = rep != replications_.end() && rep->second.state == "running";
        if (!running) w.state = "the copy did not verify: " + (rep == replications_.end() ? "" : rep->second.detail);
      }
      if (!next && !running && (w.state == "asked" || now - w.tried > std::chrono::minutes(1))) next = &w;
      ++it;
    }
    if (!next) {
      // What other replicas of the server registered or verified reaches
      // routing here too: the registry is read again every 30 s.
      if (now - refreshed > std::chrono::seconds(30)) {
        refreshed = now;
        lock.Unlock();
        if (Status st = Refresh(); !st.ok()) spdlog::warn("dataset registry: {}", st.ToString());
        lock.Lock();
        continue;
      }
      // Look again in a second while a copy is wanted (it may have been
      // verified), else when a job asks or the registry is due.
      wants_cv_.WaitUntil(wants_mu_, now + (wants_.empty() ? std::chrono::seconds(30) : std::chrono::seconds(1)));
      continue;
    }
    Want want = *next;
    next->tried = now;
    lock.Unlock();
    // The version and the location, read and started off the lock.
    std::string state;
    auto versions = store_.ListDatasetVersions("");
    const DatasetVersion* v = nullptr;
    if (versions.ok()) {
      for (const auto& candidate : *versions) {
        if (candidate.digest == want.digest) v = &candidate;
      }
    }
    const Dataset* ds = v ? estate_.FindDataset(v->dataset) : nullptr;
    const StorageLocation* to = nullptr;
    for (const StorageLocation& l : estate_.data.locations) {
      if (!to && l.Location() == want.place && (!ds || ds->residency.empty() || ds->residency == l.zone)) to = &l;
    }
    if (!versions.ok()) {
      state = "the registry could not be read: " + versions.status().message();
    } else if (!v || !to) {
      state = !v ? "no registered version has this digest" : "no storage location in " + want.place + " may hold it";
    } else {
      identity::Principal scheduler;
      scheduler.token_id = "scheduler";
      scheduler.name = "scheduler";
      ReplicationOptions o;
      o.charge_team = want.team;
      o.charge_job = want.job_id;
      auto rep = Replicate(scheduler, DatasetRef{v->dataset, "", v->digest, ""}, to->name, o);
      state = rep.ok() ? rep->id : "the copy could not start: " + rep.status().message();
    }
    lock.Lock();
    if (auto it = wants_.find(want.digest + "\n" + want.place); it != wants_.end()) it->second.state = state;
  }
}

Result<Replication> DatasetService::Replicate(const identity::Principal& who, const DatasetRef& ref,
                                              const std::string& location_name, const ReplicationOptions& options) {
  ASSIGN_OR_RETURN(DatasetVersion v, Resolve(ref));
  ASSIGN_OR_RETURN(const StorageLocation* to, FindLocation(estate_, location_name));
  RETURN_IF_ERROR(MayHold(v, *to));
  RETURN_IF_ERROR(CheckOptions(options));
  ASSIGN_OR_RETURN(auto replicas, store_.ListDatasetReplicas(v.digest));
  ASSIGN_OR_RETURN(Source from, NearestSource(v, replicas, *to));
  auto existing = std::find_if(replicas.begin(), replicas.end(),
                               [&](const DatasetReplica& r) { return r.location == to->name; });
  const bool known = existing != replicas.end();
  std::string path = known && !existing->path.empty() ? existing->path : v.dataset + "/" + v.version;
  ASSIGN_OR_RETURN(std::string copy_dest, LocalCopySource(v, *to, path));

  Timestamp now = clock_.Now();
  Replication rep;
  rep.id = NewId("rep", now);
  rep.dataset = v.dataset;
  rep.version = v.version;
  rep.digest = v.digest;
  rep.from = from.location->name;
  rep.to = to->name;
  rep.state = "running";
  rep.actor = who.token_id;
  rep.started_at = now;
  RETURN_IF_ERROR(Claim(rep));
  // A replica being written to does not count until it is verified again.
  DatasetReplica copying{v.digest, to->name, path, "copying", known ? existing->bytes_moved : 0, "", std::nullopt, now};
  AuditEvent start{0, now, who.token_id, "dataset.replicate.start", "dataset/" + Ref(v),
                   Details{{"digest", v.digest}, {"from", rep.from}, {"to", rep.to}, {"replication", rep.id},
                           {"bwlimit", options.bwlimit}}};
  if (Status started = Record(v, copying, start); !started.ok()) {
    Unclaim(rep);
    return started;
  }
  auto state = std::make_shared<Running>();
  state->id = rep.id;
  state->key = ClaimKey(rep);
  state->version = v;
  state->replica = copying;
  state->from_place = from.location->Location();
  state->to_place = to->Location();
  state->copy_dest = copy_dest;
  state->charge_team = options.charge_team;
  state->charge_job = options.charge_job;
  StartCopy(state, RemotePath(*from.location, from.replica->path), RemotePath(*to, path), options);
  return rep;
}

Status DatasetService::MayHold(const DatasetVersion& v, const StorageLocation& to) const {
  const Dataset* ds = estate_.FindDataset(v.dataset);
  if (!ds || ds->residency.empty() || to.zone == ds->residency) return Status::Ok();
  return PolicyViolation("dataset " + v.dataset + " must stay in residency zone " + ds->residency + "; " + to.name +
                         " is in " + (to.zone.empty() ? "no zone" : to.zone) + ", so it is never copied there");
}

Status DatasetService::CheckOptions(const ReplicationOptions& options) {
  if (options.attempts < 1 || options.attempts > 10) return InvalidArgument("attempts: expected 1 to 10");
  if (options.bwlimit.size() > 32 ||
      !std::all_of(options.bwlimit.begin(), options.bwlimit.end(),
                   [](unsigned char c) { return std::isalnum(c) || c == '.' || c == ':' || c == '-'; })) {
    return InvalidArgument("bwlimit: expected a rate such as 10M or 512k");
  }
  return Status::Ok();
}

Result<DatasetService::Source> DatasetService::NearestSource(const DatasetVersion& v,
                                                           const std::vector<DatasetReplica>& replicas,
                                                           const StorageLocation& to) const {
  // The nearest verified replica, as routing reads from: same region, then
  // provider, then any.
  std::vector<Source> sources;
  std::vector<std::string> places;
  for (const auto& r : replicas) {
    const StorageLocation* l = estate_.data.FindLocation(r.location);
    if (!l || r.state != "verified" || r.location == to.name) continue;
    sources.push_back(Source{&r, l});
    places.push_back(l->Location());
  }
  std::string nearest = placement::NearestPlace(places, to.Location());
  for (const Source& s : sources) {
    if (s.location->Location() == nearest) return s;
  }
  return FailedPrecondition(Ref(v) + " has no verified replica to copy from");
}

Result<std::string> DatasetService::LocalCopySource(const DatasetVersion& v, const StorageLocation& to,
                                                    const std::string& path) const {
  // An earlier version verified at the target: what it shares with this
  // one is copied there within the store instead of across the network.
  ASSIGN_OR_RETURN(auto versions, store_.ListDatasetVersions(v.dataset));
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
    if (it->digest == v.digest) continue;
    ASSIGN_OR_RETURN(auto others, store_.ListDatasetReplicas(it->digest));
    std::string found;
    for (const DatasetReplica& o : others) {
      if (o.location == to.name && o.state == "verified" && o.path != path) found = RemotePath(to, o.path);
    }
    if (!found.empty()) return found;
  }
  return std::string();
}

std::string DatasetService::ClaimKey(const Replication& rep) { return rep.digest + "\n" + rep.to; }

Status DatasetService::Claim(const Replication& rep) {
  MutexLock lock(mu_);
  if (auto b = busy_.find(ClaimKey(rep)); b != busy_.end()) {
    return FailedPrecondition(rep.dataset + "@" + rep.version + " is being copied to " + rep.to + " already (" +
                              b->second + ")");
  }
  if (static_cast<int>(busy_.size()) >= kMaxRunning) {
    return ResourceExhausted(std::to_string(kMaxRunning) + " replications are running; try again when one ends");
  }
  busy_[ClaimKey(rep)] = rep.id;
  replications_[rep.id] = rep;
  order_.push_back(rep.id);
  while (order_.size() > 256) {
    auto old = replications_.find(order_.front());
    if (old != replications_.end() && old->second.state == "running") break;
    if (old != replications_.end()) replications_.erase(old);
    order_.pop_front();
  }
  return Status::Ok();
}

void DatasetService::Unclaim(const Replication& rep) {
  MutexLock lock(mu_);
  busy_.erase(ClaimKey(rep));
  replications_.erase(rep.id);
}

void DatasetService::StartCopy(std::shared_ptr<Running> state, std::string from_remote, std::string to_remote,
                               const ReplicationOptions& options) {
  std::vector<Worker> ended;
  {
    MutexLock lock(mu_);
    // Threads of replications that ended are joined here (they only have
    // their last lock to release), so they do not pile up.
    for (auto it = threads_.begin(); it != threads_.end();) {
      if (it->ended->load()) {
        ended.push_back(std::move(*it));
        it = threads_.erase(it);
      } else {
        ++it;
      }
    }
    Worker w;
    w.ended = std::make_shared<std::atomic<bool>>(false);
    w.thread = std::thread([this, state, from_remote, to_remote, options, ended = w.ended] {
      Run(state, from_remote, to_remote, options);
      ended->store(true);
    });
    threads_.push_back(std::move(w));
  }
  for (auto& w : ended) w.thread.join();
}

void DatasetService::Update(const std::string& id, const std::function<void(Replication&)>& fn) {
  MutexLock lock(mu_);
  if (auto it = replications_.find(id); it != replications_.end()) fn(it->second);
}

void DatasetService::Run(std::shared_ptr<Running> r, std::string from_remote, std::string to_remote,
                         ReplicationOptions options) {
  auto manifest = LoadManifest(r->version.digest);
  data::CopyOptions copy;
  copy.bwlimit = options.bwlimit;
  copy.copy_dest = r->copy_dest;
  copy.object_size = [&](std::string_view object) -> int64_t {
    if (!manifest.ok()) return 0;
    const auto& objects = manifest->objects;
    auto it = std::lower_bound(objects.begin(), objects.end(), object,
                               [](const data::ObjectEntry& e, std::string_view p) { return e.path < p; });
    return it != objects.end() && it->path == object ? it->size : 0;
  };
  copy.attempts = options.attempts;
  copy.backoff = std::chrono::duration_cast<std::chrono::milliseconds>(options.backoff);
  copy.stop = &stop_;
  copy.progress = [&](const data::CopyProgress& p) { Update(r->id, [&](Replication& rep) { rep.progress = p; }); };
  copy.retrying = [&](int run, const std::string& error) {
    Update(r->id, [&](Replication& rep) {
      rep.runs = run;
      rep.errors.push_back(error);
    });
  };
  data::CopyResult partial;
  auto copied = rclone_.Copy(from_remote, to_remote, copy, &partial);
  const data::CopyResult& done = copied.ok() ? *copied : partial;
  DatasetReplica replica = r->replica;
  replica.bytes_moved += done.bytes_moved;
  std::string state, detail;
  if (!copied.ok()) {
    state = "failed";
    detail = copied.status().message();
  } else {
    // What arrived is checked against the manifest before it counts.
    const auto& want = manifest;
    auto have = want.ok() ? rclone_.List(to_remote, want->hash_type, {}, &stop_) : Result<data::Manifest>(want.status());
    if (!have.ok()) {
      state = "failed";
      detail = "the copy could not be listed: " + have.status().message();
    } else {
      data::ManifestDiff diff = data::Compare(*want, *have);
      state = diff.Matches() ? "verified" : "corrupt";
      detail = diff.Matches() ? "" : diff.Describe();
    }
  }
  Timestamp now = clock_.Now();
  replica.state = state;
  replica.detail = detail;
  replica.updated_at = now;
  if (state == "verified") replica.verified_at = now;
  ReplicationCharge paid = ChargeReplication(estate_, r->version, r->from_place, r->to_place, done.bytes_moved,
                                             r->charge_team, r->charge_job, now);
  std::string actor;
  Update(r->id, [&](Replication& rep) { actor = rep.actor; });
  AuditEvent e;
  e.time = now;
  e.actor = actor;
  e.action = "dataset.replicate";
  e.resource = "dataset/" + Ref(r->version);
  e.details = Details{{"digest", r->version.digest},
                      {"to", replica.location},
                      {"state", state},
                      {"bytes_moved", done.bytes_moved},
                      {"bytes_copied_within", done.server_side_bytes},
                      {"transfers", done.transfers},
                      {"runs", static_cast<int64_t>(done.runs)},
                      {"errors", done.errors},
                      {"detail", detail},
                      {"replication", r->id},
                      {"from_place", r->from_place},
                      {"to_place", r->to_place}};
  if (paid.cost) e.details["transfer_cost"] = paid.cost->ToString();
  if (!r->charge_job.empty()) e.details["job"] = r->charge_job;
  if (!paid.team.empty()) e.details["team"] = paid.team;
  if (paid.charge) e.details["charge"] = paid.charge->id;
  Status written = Record(r->version, replica, e, paid.charge);
  MutexLock lock(mu_);
  busy_.erase(r->key);
  if (auto it = replications_.find(r->id); it != replications_.end()) {
    Replication& rep = it->second;
    rep.state = written.ok() ? state : "failed";
    rep.detail = written.ok() ? detail : "the result could not be recorded: " + written.message();
    rep.bytes_moved = done.bytes_moved;
    rep.runs = done.runs;
    rep.errors = done.errors;
    rep.finished_at = now;
    rep.transfer_cost = paid.cost;
  }
}

Result<Replication> DatasetService::GetReplication(const std::string& id) const {
  MutexLock lock(mu_);
  auto it = replications_.find(id);
  if (it == replications_.end()) return NotFound("no replication " + id + " on this server");
  return it->second;
}

}  // namespace causeway
