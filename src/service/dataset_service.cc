#include "service/dataset_service.h"

#include <algorithm>
#include <tuple>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "causeway/ids.h"
#include "causeway/text.h"
#include "policy/policy.h"

namespace causeway {
namespace {

// A replica's storage is charged from its first verification on (the
// store keeps an earlier charged_until).
void StartStorageCharge(DatasetReplica& r) {
  if (r.state == "verified" && !r.charged_until) r.charged_until = r.verified_at;
}

bool GoodLabel(const std::string& v) {
  if (v.empty() || v.size() > 64 || v == "." || v == ".." || v.rfind("sha256:", 0) == 0) return false;
  return std::all_of(v.begin(), v.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '_' || c == '-';
  });
}

// A path under a location: relative, no "." or ".." segment, no empty one.
bool GoodPath(const std::string& p) {
  if (p.size() > 1024 || p.find('\0') != std::string::npos) return false;
  if (p.empty()) return true;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    std::string seg = p.substr(start, end - start);
    if (seg.empty() || seg == "." || seg == "..") return false;
    start = end + 1;
  }
  return true;
}

std::string Ref(const DatasetVersion& v) { return v.dataset + "@" + v.version; }

Details VersionDetails(const DatasetVersion& v) {
  return Details{{"dataset", v.dataset}, {"version", v.version},   {"digest", v.digest},
                 {"objects", v.objects}, {"bytes", v.bytes},       {"source", v.source}};
}

// A storage location by its name, or by "provider/region" when exactly one
// location is there.
Result<const StorageLocation*> FindLocation(const Estate& estate, const std::string& name) {
  if (const StorageLocation* l = estate.data.FindLocation(name)) return l;
  const StorageLocation* found = nullptr;
  for (const auto& l : estate.data.locations) {
    if (l.Location() != name) continue;
    if (found) return InvalidArgument("more than one storage location is in " + name + ": name one of them");
    found = &l;
  }
  if (found) return found;
  std::string names;
  for (const auto& l : estate.data.locations) names += (names.empty() ? "" : ", ") + l.name + " (" + l.Location() + ")";
  return NotFound("no storage location \"" + Utf8Prefix(name, 128) + "\" in the estate (data.locations: " +
                  (names.empty() ? "none" : names) + ")");
}

// rclone as the estate's `data:` says, with the default deadline.
data::RcloneSettings EstateRclone(const Estate& estate) {
  data::RcloneSettings s;
  s.binary = estate.data.rclone;
  s.config = estate.data.rclone_config;
  return s;
}

}  // namespace

std::vector<DataCharge> RemoteReadCharges(const Estate& estate, const placement::DataPlaces& places,
                                          const JobRecord& job, const std::string& cluster_name, Timestamp at,
                                          const std::string& id_prefix) {
  std::vector<DataCharge> out;
  const Cluster* cluster = estate.FindCluster(cluster_name);
  if (!cluster) return out;
  std::string location = cluster->provider + "/" + cluster->region;
  nlohmann::json spec = nlohmann::json::parse(job.spec_json, nullptr, false);
  if (!spec.is_object() || !spec.contains("datasets") || !spec["datasets"].is_array()) return out;
  for (const auto& d : spec["datasets"]) {
    if (!d.is_object() || !d.contains("digest") || !d["digest"].is_string()) continue;
    std::string digest = d["digest"];
    auto place = places.Verified(digest);
    if (!place || place->places.empty()) continue;
    const auto& at_places = place->places;
    if (std::find(at_places.begin(), at_places.end(), location) != at_places.end()) continue;
    std::string from = placement::NearestPlace(at_places, location);
    DataCharge c;
    c.id = id_prefix + "-" + std::to_string(out.size() + 1);
    c.at = at;
    c.kind = "remote-read";
    c.team = job.team;
    c.job_id = job.id;
    c.dataset = d.value("name", "");
    c.digest = digest;
    c.from_place = from;
    c.to_place = location;
    c.bytes = place->bytes;
    if (auto cost = estate.data.TransferCost(from, location, c.bytes, estate.currency)) c.amount_micros = cost->micros();
    out.push_back(std::move(c));
  }
  return out;
}

struct DatasetService::Running {
  std::string id, key;
  DatasetVersion version;
  DatasetReplica replica;
  std::string from_place, to_place;
  std::string copy_dest;  // an earlier version's replica at the target, or ""
  std::string charge_team, charge_job;  // who asked for it (on demand), else the owner pays
};

DatasetService::DatasetService(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
                               std::optional<data::RcloneSettings> rclone)
    : store_(store),
      queue_(queue),
      estate_(estate),
      clock_(clock),
      rclone_(rclone ? *rclone : EstateRclone(estate)) {
  if (Status st = Refresh(); !st.ok()) spdlog::warn("the dataset registry could not be read: {}", st.ToString());
  copier_ = std::thread([this] { CopyWanted(); });
}

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

std::optional<placement::DataPlace> DatasetService::Verified(const std::string& digest) const {
  MutexLock lock(places_mu_);
  auto it = places_.find(digest);
  if (it == places_.end()) return std::nullopt;
  return it->second;
}

void DatasetService::SetPlaces(const std::vector<DatasetVersion>& versions,
                               const std::vector<DatasetReplica>& replicas, bool whole) {
  std::map<std::string, placement::DataPlace> fresh;
  for (const DatasetVersion& v : versions) fresh[v.digest].bytes = v.bytes;
  for (const DatasetReplica& r : replicas) {
    const StorageLocation* l = estate_.data.FindLocation(r.location);
    auto it = fresh.find(r.digest);
    if (r.state != "verified" || !l || it == fresh.end()) continue;
    auto& places = it->second.places;
    if (std::find(places.begin(), places.end(), l->Location()) == places.end()) places.push_back(l->Location());
  }
  MutexLock lock(places_mu_);
  if (whole) {
    places_ = std::move(fresh);
  } else {
    for (auto& [d, p] : fresh) places_[d] = std::move(p);
  }
}

void DatasetService::RefreshPlaces(const DatasetVersion& version) {
  auto replicas = store_.ListDatasetReplicas(version.digest);
  if (!replicas.ok()) return spdlog::warn("dataset registry: {}", replicas.status().ToString());
  SetPlaces({version}, *replicas, false);
}

Status DatasetService::Refresh() {
  ASSIGN_OR_RETURN(auto versions, store_.ListDatasetVersions(""));
  ASSIGN_OR_RETURN(auto replicas, store_.ListDatasetReplicas(""));
  SetPlaces(versions, replicas, true);
  return ChargeStorage(versions, replicas);
}

Status DatasetService::Record(const DatasetVersion& v, const DatasetReplica& written, const AuditEvent& event,
                              const std::optional<DataCharge>& charge) {
  DatasetReplica replica = written;
  StartStorageCharge(replica);
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.PutDatasetReplica(replica));
    if (charge) RETURN_IF_ERROR(tx.InsertDataCharge(*charge));
    AuditEvent e = event;  // a unit may run more than once
    return tx.AppendAudit(e);
  }));
  RefreshPlaces(v);
  return Status::Ok();
}

namespace {

// The end of `t`'s UTC day.
Timestamp DayEnd(Timestamp t) {
  constexpr int64_t kDay = int64_t{86'400} * 1'000'000;
  int64_t us = ToUnixMicros(t);
  int64_t start = us - ((us % kDay) + kDay) % kDay;
  return FromUnixMicros(start + kDay);
}

}  // namespace

Status DatasetService::ChargeStorage(const std::vector<DatasetVersion>& versions,
                                     const std::vector<DatasetReplica>& replicas) {
  Timestamp now = clock_.Now();
  std::map<std::string, const DatasetVersion*> by_digest;
  for (const DatasetVersion& v : versions) by_digest[v.digest] = &v;
  // One ended day of one replica: [from, to), and its charge when priced.
  struct Day {
    std::string digest, location;
    Timestamp from, to;
    std::optional<DataCharge> charge;
  };
  std::vector<Day> due;
  for (const DatasetReplica& r : replicas) {
    auto v = by_digest.find(r.digest);
    if (!r.charged_until || v == by_digest.end()) continue;
    const DatasetVersion& version = *v->second;
    const StorageLocation* l = estate_.data.FindLocation(r.location);
    const Dataset* ds = estate_.FindDataset(version.dataset);
    for (Timestamp from = *r.charged_until; due.size() < kMaxStorageCharges; from = DayEnd(from)) {
      Day d{r.digest, r.location, from, DayEnd(from), std::nullopt};
      if (d.to > now) break;
      std::optional<Money> cost = l ? l->StorageCost(version.bytes, d.to - d.from) : std::nullopt;
      if (cost) {
        d.charge = DataCharge{NewId("dch", now), d.from,          "storage",     ds ? ds->owner : "", "",
                              version.dataset,  version.digest, "",            l->Location(),       version.bytes,
                              cost->micros()};
      }
      due.push_back(std::move(d));
    }
  }
  if (due.empty()) return Status::Ok();
  Timestamp through = due.front().to;
  for (const Day& d : due) through = std::max(through, d.to);
  return queue_.Run([&](WriteTx& tx) -> Status {
    int64_t days = 0, charges = 0, amount = 0;
    for (const Day& d : due) {
      ASSIGN_OR_RETURN(bool mine, tx.AdvanceReplicaCharge(d.digest, d.location, d.from, d.to));
      if (!mine) continue;  // another server charged it
      ++days;
      if (!d.charge) continue;
      RETURN_IF_ERROR(tx.InsertDataCharge(*d.charge));
      ++charges;
      amount += d.charge->amount_micros;
    }
    AuditEvent e;
    e.time = now;
    e.actor = "causeway";
    e.action = "dataset.storage";
    e.resource = "datasets";
    e.details = Details{{"replica_days", days},
                        {"charges", charges},
                        {"amount", Money(amount, estate_.currency).ToString()},
                        {"through", FormatRfc3339(through)}};
    return tx.AppendAudit(e);
  });
}

DatasetService::~DatasetService() {
  stop_ = true;
  {
    MutexLock lock(wants_mu_);
    wants_cv_.NotifyAll();
  }
  if (copier_.joinable()) copier_.join();
  std::vector<Worker> threads;
  {
    MutexLock lock(mu_);
    threads.swap(threads_);
  }
  for (auto& w : threads) {
    if (w.thread.joinable()) w.thread.join();
  }
}

Result<DatasetRef> DatasetService::ParseRef(const std::string& text) {
  DatasetRef ref;
  auto at = text.find('@');
  ref.name = text.substr(0, at);
  if (ref.name.empty() || ref.name.size() > 128) {
    return InvalidArgument("expected NAME@VERSION, not \"" + Utf8Prefix(text, 200) + "\"");
  }
  if (at != std::string::npos) {
    std::string v = text.substr(at + 1);
    if (data::IsDigest(v)) {
      ref.digest = v;
    } else if (GoodLabel(v)) {
      ref.version = v;
    } else {
      return InvalidArgument("\"" + Utf8Prefix(v, 80) + "\" is neither a version label nor a digest (sha256:<64 hex>)");
    }
  }
  return ref;
}

Result<std::vector<DatasetVersion>> DatasetService::Versions(const std::string& name) const {
  return store_.ListDatasetVersions(name);
}

Result<DatasetVersion> DatasetService::Resolve(const DatasetRef& ref) const {
  ASSIGN_OR_RETURN(auto versions, store_.ListDatasetVersions(ref.name));
  return Pick(versions, ref);
}

Result<DatasetVersion> DatasetService::Pick(const std::vector<DatasetVersion>& versions, const DatasetRef& ref) {
  if (versions.empty()) return NotFound("dataset " + ref.name + " has no registered version");
  for (auto it = versions.rbegin(); it != versions.rend(); ++it) {
    bool match = ref.version.empty() && ref.digest.empty();
    if (!ref.version.empty()) match = it->version == ref.version;
    if (!ref.digest.empty()) match = it->digest == ref.digest && (ref.version.empty() || it->version == ref.version);
    if (match) return *it;
  }
  std::string known;
  for (const auto& v : versions) known += (known.empty() ? "" : ", ") + v.version;
  return NotFound("dataset " + ref.name + " has no version " + (ref.version.empty() ? ref.digest : ref.version) +
                  (ref.version.empty() || ref.digest.empty() ? "" : " with digest " + ref.digest) +
                  " (registered: " + known + ")");
}

Status DatasetService::CheckJob(JobSpec& spec, const std::string& file, std::vector<Diagnostic>& warnings) const {
  std::vector<Diagnostic> errors;
  bool policy = false;
  for (size_t i = 0; i < spec.datasets.size(); ++i) {
    DatasetRef& d = spec.datasets[i];
    std::string field = "datasets[" + std::to_string(i) + "]";
    const Dataset* ds = estate_.FindDataset(d.name);
    if (ds && !ds->residency.empty() && spec.residency != ds->residency) {
      policy = true;
      errors.push_back(Diagnostic{file, 0, 0, field,
                                  "dataset " + d.name + " must stay in residency zone " + ds->residency +
                                      ": a job reading it must be bound there too (residency: " + ds->residency + ")"});
      continue;
    }
    ASSIGN_OR_RETURN(auto versions, store_.ListDatasetVersions(d.name));
    if (versions.empty()) {
      warnings.push_back(Diagnostic{file, 0, 0, field,
                                    "dataset " + d.name + " has no registered version, so " +
                                        (d.version.empty() ? d.digest : d.version) +
                                        " is not checked (causeway dataset register)",
                                    true});
      continue;
    }
    auto v = Pick(versions, d);
    if (!v.ok()) {
      errors.push_back(Diagnostic{file, 0, 0, field, v.status().message()});
      continue;
    }
    d.version = v->version;
    d.digest = v->digest;
  }
  if (errors.empty()) return Status::Ok();
  std::string message = errors.front().message;
  if (policy) return PolicyViolation(message, std::move(errors));
  return Status(Code::kInvalidArgument, message, std::move(errors));
}

Result<std::vector<DatasetReplica>> DatasetService::Replicas(const std::string& digest) const {
  return store_.ListDatasetReplicas(digest);
}

Result<std::string> DatasetService::Manifest(const std::string& digest) const {
  ASSIGN_OR_RETURN(auto text, store_.GetDatasetManifest(digest));
  if (!text) return NotFound("no dataset version has digest " + digest);
  return *text;
}

Result<data::Manifest> DatasetService::LoadManifest(const std::string& digest) const {
  ASSIGN_OR_RETURN(std::string text, Manifest(digest));
  return data::ParseManifest(text, "manifest " + digest);
}

std::string DatasetService::RemotePath(const StorageLocation& l, const std::string& path) const {
  if (path.empty()) return l.remote;
  return l.remote + (l.remote.back() == ':' ? "" : "/") + path;
}

Result<DatasetVersion> DatasetService::Register(const identity::Principal& who, const RegisterDataset& req) {
  const Dataset* ds = estate_.FindDataset(req.name);
  if (!ds) return NotFound("the estate declares no dataset \"" + Utf8Prefix(req.name, 128) + "\" (add it under datasets:)");
  std::string label = req.version;
  if (label.empty()) {
    ASSIGN_OR_RETURN(auto versions, store_.ListDatasetVersions(req.name));
    label = "v" + std::to_string(versions.size() + 1);
  }
  if (!GoodLabel(label)) {
    return InvalidArgument("version \"" + Utf8Prefix(label, 80) +
                           "\": expected a label of letters, digits, '.', '_' and '-' "
                           "(at most 64), such as 2024-05");
  }
  if (req.from.empty() == req.manifest.empty()) {
    return InvalidArgument("give either where the objects are (from) or a manifest, not both");
  }
  DatasetVersion v;
  v.dataset = req.name;
  v.version = label;
  v.registered_by = who.Answerable().empty() ? who.token_id : who.Answerable();
  data::Manifest m;
  const StorageLocation* at = nullptr;
  std::string path;
  if (!req.manifest.empty()) {
    ASSIGN_OR_RETURN(m, data::ParseManifest(req.manifest, "manifest"));
    v.source = "manifest";
  } else {
    // "s3://bucket/prefix" through a location's url, or "LOCATION:path".
    if ((at = estate_.data.LocationOfUrl(req.from))) {
      path = req.from.size() > at->url.size() ? req.from.substr(at->url.size() + 1) : "";
    } else if (req.from.find("://") == std::string::npos) {
      auto colon = req.from.find(':');
      at = estate_.data.FindLocation(req.from.substr(0, colon));
      if (at) path = colon == std::string::npos ? "" : req.from.substr(colon + 1);
    }
    if (!at) {
      std::string names;
      for (const auto& l : estate_.data.locations) names += (names.empty() ? "" : ", ") + l.name;
      return NotFound("\"" + Utf8Prefix(req.from, 256) + "\" is in no storage location of the estate (data.locations: " +
                      (names.empty() ? "none" : names) + ")");
    }
    while (!path.empty() && path.back() == '/') path.pop_back();
    if (!GoodPath(path)) {
      return InvalidArgument("path \"" + Utf8Prefix(path, 256) + "\": expected a relative path without . or ..");
    }
    if (!ds->residency.empty() && at->zone != ds->residency) {
      return PolicyViolation("dataset " + req.name + " must stay in residency zone " + ds->residency + "; location " +
                             at->name + " is in " + (at->zone.empty() ? "no zone" : at->zone));
    }
    if (!data::KnownHashType(req.hash_type)) {
      return InvalidArgument("unknown hash \"" + Utf8Prefix(req.hash_type, 32) + "\" (md5, sha1, sha256)");
    }
    ASSIGN_OR_RETURN(m, rclone_.List(RemotePath(*at, path), req.hash_type, {}, &stop_));
    v.source = at->name + ":" + path;
  }
  if (m.objects.empty()) return InvalidArgument("the dataset version would hold no object");
  std::string text = data::CanonicalText(m);
  v.digest = data::ManifestDigest(text);
  v.hash_type = m.hash_type;
  v.objects = static_cast<int64_t>(m.objects.size());
  v.bytes = m.bytes;
  v.registered_at = clock_.Now();
  std::optional<DatasetReplica> replica;
  if (at) {
    // Verified where it was listed.
    replica = DatasetReplica{v.digest, at->name, path, "verified", 0, "", v.registered_at, v.registered_at};
    StartStorageCharge(*replica);
  }
  RETURN_IF_ERROR(queue_.Run([&, text = std::move(text)](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.InsertDatasetVersion(v, text));
    if (replica) RETURN_IF_ERROR(tx.PutDatasetReplica(*replica));
    AuditEvent e;
    e.time = v.registered_at;
    e.actor = who.token_id;
    e.action = "dataset.register";
    e.resource = "dataset/" + Ref(v);
    e.details = VersionDetails(v);
    if (replica) e.details["location"] = replica->location;
    return tx.AppendAudit(e);
  }));
  RefreshPlaces(v);
  return v;
}

Status DatasetService::CheckFlushed(const JobSpec& spec, const std::string& path) const {
  auto at = policy::MountedBucketPath(spec, estate_.data, path, "MOUNT_CACHED");
  if (!at) return Status::Ok();
  ASSIGN_OR_RETURN(data::Rclone::Size held, rclone_.Count(at->remote, std::chrono::seconds(30)));
  if (held.objects > 0) return Status::Ok();
  return Unavailable("checkpoint " + Utf8Prefix(path, 256) + " is written through a MOUNT_CACHED mount, and " +
                     Utf8Prefix(at->url, 256) +
                     " holds nothing yet: it counts once rclone's cache has written it back to the bucket "
                     "(register it again then)");
}

Result<DatasetReplica> DatasetService::Verify(const identity::Principal& who, const DatasetRef& ref,
                                              const std::string& location_name) {
  ASSIGN_OR_RETURN(DatasetVersion v, Resolve(ref));
  ASSIGN_OR_RETURN(const StorageLocation* l, FindLocation(estate_, location_name));
  const std::string& location = l->name;
  ASSIGN_OR_RETURN(auto replicas, store_.ListDatasetReplicas(v.digest));
  auto it = std::find_if(replicas.begin(), replicas.end(), [&](const DatasetReplica& r) { return r.location == location; });
  if (it == replicas.end()) return NotFound(Ref(v) + " has no replica at " + location);
  DatasetReplica r = *it;
  ASSIGN_OR_RETURN(data::Manifest want, LoadManifest(v.digest));
  auto have = rclone_.List(RemotePath(*l, r.path), want.hash_type, {}, &stop_);
  Timestamp now = clock_.Now();
  data::ManifestDiff diff;
  if (have.ok()) {
    diff = data::Compare(want, *have);
    r.state = diff.Matches() ? "verified" : "corrupt";
    r.detail = diff.Matches() ? "" : diff.Describe();
  } else {
    // An object with no hash or a path that cannot be an object: the
    // replica does not hold the version.
    if (have.status().code() == Code::kUnavailable || have.status().code() == Code::kDeadlineExceeded) {
      return have.status();
    }
    r.state = "corrupt";
    r.detail = have.status().message();
  }
  if (r.state == "verified") r.verified_at = now;
  r.updated_at = now;
  AuditEvent e;
  e.time = now;
  e.actor = who.token_id;
  e.action = "dataset.verify";
  e.resource = "dataset/" + Ref(v);
  e.details = Details{{"digest", v.digest},
                      {"location", location},
                      {"state", r.state},
                      {"missing", static_cast<int64_t>(diff.missing.size())},
                      {"changed", static_cast<int64_t>(diff.changed.size())},
                      {"detail", r.detail}};
  RETURN_IF_ERROR(Record(v, r, e));
  return r;
}

Result<Replication> DatasetService::Replicate(const identity::Principal& who, const DatasetRef& ref,
                                              const std::string& location_name, const ReplicationOptions& options) {
  ASSIGN_OR_RETURN(DatasetVersion v, Resolve(ref));
  ASSIGN_OR_RETURN(const StorageLocation* to, FindLocation(estate_, location_name));
  const std::string& location = to->name;
  const Dataset* ds = estate_.FindDataset(v.dataset);
  if (ds && !ds->residency.empty() && to->zone != ds->residency) {
    return PolicyViolation("dataset " + v.dataset + " must stay in residency zone " + ds->residency + "; " +
                           location + " is in " + (to->zone.empty() ? "no zone" : to->zone) +
                           ", so it is never copied there");
  }
  if (options.attempts < 1 || options.attempts > 10) return InvalidArgument("attempts: expected 1 to 10");
  if (options.bwlimit.size() > 32 ||
      !std::all_of(options.bwlimit.begin(), options.bwlimit.end(),
                   [](unsigned char c) { return std::isalnum(c) || c == '.' || c == ':' || c == '-'; })) {
    return InvalidArgument("bwlimit: expected a rate such as 10M or 512k");
  }
  ASSIGN_OR_RETURN(auto replicas, store_.ListDatasetReplicas(v.digest));
  // The nearest verified replica, as routing reads from: same region, then
  // provider, then any.
  std::vector<std::pair<const DatasetReplica*, const StorageLocation*>> sources;
  std::vector<std::string> places;
  for (const auto& r : replicas) {
    const StorageLocation* l = estate_.data.FindLocation(r.location);
    if (!l || r.state != "verified" || r.location == location) continue;
    sources.emplace_back(&r, l);
    places.push_back(l->Location());
  }
  std::string nearest = placement::NearestPlace(places, to->Location());
  const DatasetReplica* src = nullptr;
  const StorageLocation* from = nullptr;
  for (auto [r, l] : sources) {
    if (!src && l->Location() == nearest) std::tie(src, from) = std::pair(r, l);
  }
  if (!src) return FailedPrecondition(Ref(v) + " has no verified replica to copy from");
  std::string path = v.dataset + "/" + v.version;
  auto existing =
      std::find_if(replicas.begin(), replicas.end(), [&](const DatasetReplica& r) { return r.location == location; });
  if (existing != replicas.end() && !existing->path.empty()) path = existing->path;

  // An earlier version verified at the target: what it shares with this
  // one is copied there within the store instead of across the network.
  std::string copy_dest;
  ASSIGN_OR_RETURN(auto versions, store_.ListDatasetVersions(v.dataset));
  for (auto it = versions.rbegin(); it != versions.rend() && copy_dest.empty(); ++it) {
    if (it->digest == v.digest) continue;
    ASSIGN_OR_RETURN(auto others, store_.ListDatasetReplicas(it->digest));
    for (const DatasetReplica& o : others) {
      if (o.location == location && o.state == "verified" && o.path != path) copy_dest = RemotePath(*to, o.path);
    }
  }

  Replication rep;
  Timestamp now = clock_.Now();
  rep.id = NewId("rep", now);
  rep.dataset = v.dataset;
  rep.version = v.version;
  rep.digest = v.digest;
  rep.from = from->name;
  rep.to = location;
  rep.state = "running";
  rep.actor = who.token_id;
  rep.started_at = now;
  std::string key = v.digest + "\n" + location;
  {
    MutexLock lock(mu_);
    if (auto b = busy_.find(key); b != busy_.end()) {
      return FailedPrecondition(Ref(v) + " is being copied to " + location + " already (" + b->second + ")");
    }
    if (static_cast<int>(busy_.size()) >= kMaxRunning) {
      return ResourceExhausted(std::to_string(kMaxRunning) + " replications are running; try again when one ends");
    }
    busy_[key] = rep.id;
    replications_[rep.id] = rep;
    order_.push_back(rep.id);
    while (order_.size() > 256) {
      auto old = replications_.find(order_.front());
      if (old != replications_.end() && old->second.state == "running") break;
      if (old != replications_.end()) replications_.erase(old);
      order_.pop_front();
    }
  }
  DatasetReplica copying{v.digest, location, path, "copying", existing != replicas.end() ? existing->bytes_moved : 0,
                         "", std::nullopt, now};
  // A replica being written to does not count until it is verified again.
  AuditEvent start;
  start.time = now;
  start.actor = who.token_id;
  start.action = "dataset.replicate.start";
  start.resource = "dataset/" + Ref(v);
  start.details = Details{{"digest", v.digest}, {"from", rep.from}, {"to", location}, {"replication", rep.id},
                          {"bwlimit", options.bwlimit}};
  if (Status started = Record(v, copying, start); !started.ok()) {
    MutexLock lock(mu_);
    busy_.erase(key);
    replications_.erase(rep.id);
    return started;
  }
  auto state = std::make_shared<Running>();
  state->id = rep.id;
  state->key = key;
  state->version = v;
  state->replica = copying;
  state->from_place = from->Location();
  state->to_place = to->Location();
  state->copy_dest = copy_dest;
  state->charge_team = options.charge_team;
  state->charge_job = options.charge_job;
  std::string from_remote = RemotePath(*from, src->path), to_remote = RemotePath(*to, path);
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
  return rep;
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
  std::optional<Money> cost = estate_.data.TransferCost(r->from_place, r->to_place, done.bytes_moved, estate_.currency);
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
  if (cost) e.details["transfer_cost"] = cost->ToString();
  // Who pays: the job that asked for the copy, else the dataset's owner.
  const Dataset* ds = estate_.FindDataset(r->version.dataset);
  std::string team = !r->charge_team.empty() ? r->charge_team : ds ? ds->owner : "";
  if (!r->charge_job.empty()) e.details["job"] = r->charge_job;
  if (!team.empty()) e.details["team"] = team;
  // Every byte moved is recorded, at 0 where no price covers the pair.
  std::optional<DataCharge> charge;
  if (done.bytes_moved > 0) {
    charge = DataCharge{NewId("dch", now), now, "replication", team, r->charge_job, r->version.dataset,
                        r->version.digest, r->from_place, r->to_place, done.bytes_moved, cost ? cost->micros() : 0};
    e.details["charge"] = charge->id;
  }
  Status written = Record(r->version, replica, e, charge);
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
    rep.transfer_cost = cost;
  }
}

Result<Replication> DatasetService::GetReplication(const std::string& id) const {
  MutexLock lock(mu_);
  auto it = replications_.find(id);
  if (it == replications_.end()) return NotFound("no replication " + id + " on this server");
  return it->second;
}

}  // namespace causeway
