#include "service/dataset_service.h"

#include <algorithm>
#include <tuple>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "causeway/ids.h"
#include "causeway/text.h"
#include "policy/policy.h"
#include "service/dataset_internal.h"
#include "spec/spec_json.h"

namespace causeway {

namespace datasets_detail {

std::string Ref(const DatasetVersion& v) { return v.dataset + "@" + v.version; }

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

}  // namespace datasets_detail

namespace {

using namespace datasets_detail;

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

Details VersionDetails(const DatasetVersion& v) {
  return Details{{"dataset", v.dataset}, {"version", v.version},   {"digest", v.digest},
                 {"objects", v.objects}, {"bytes", v.bytes},       {"source", v.source}};
}
// rclone as the estate's `data:` says, with the default deadline.
data::RcloneSettings EstateRclone(const Estate& estate) {
  data::RcloneSettings s;
  s.binary = estate.data.rclone;
  s.config = estate.data.rclone_config;
  return s;
}

}  // namespace

using namespace datasets_detail;

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

}  // namespace causeway
