#include "placement/router.h"
#include "spec/software.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <tuple>

namespace causeway::placement {

bool Better(const Option& a, const Option& b) {
  return std::make_tuple(a.avoided, !a.reserved, a.price_micros, !a.data_local, a.load_permille, a.cluster->name) <
         std::make_tuple(b.avoided, !b.reserved, b.price_micros, !b.data_local, b.load_permille, b.cluster->name);
}

Router::Router(const Estate& estate) : estate_(estate) {
  for (const auto& c : estate.clusters) {
    for (const auto& p : c.node_pools) {
      PoolRef ref{static_cast<int>(pools_.size()), &c, &p};
      pools_.push_back(ref);
      Entry e{ref, &c, &p, estate.FindProvider(c.provider), 0, -1, -1, c.provider + "/" + c.region};
      if (const Price* price = estate.FindPrice(c.name, p.gpu_type)) {
        e.on_demand = price->on_demand.micros();
        if (price->spot) e.spot = price->spot->micros();
      }
      for (const auto& r : estate.reservations) {
        if (r.cluster == c.name && r.gpu_type == p.gpu_type) e.reservation_price = r.price.micros();
      }
      by_type_[p.gpu_type].push_back(e);
    }
  }
}

bool CheckpointReachable(const Cluster& to, const std::string& path, const std::string& written_on) {
  if (to.name == written_on) return true;
  if (to.storage) {
    return std::any_of(to.storage->begin(), to.storage->end(),
                       [&](const std::string& prefix) { return path.rfind(prefix, 0) == 0; });
  }
  auto scheme = path.find("://");
  return scheme != std::string::npos && scheme > 0 && path.rfind("file://", 0) != 0;
}

namespace {

// Whether absolute `path` lies under one of the cluster's storage prefixes
// that is a path (not an object store).
bool OnStorage(const Cluster& c, const std::string& path) {
  if (path.empty() || path.front() != '/' || !c.storage) return false;
  if (path.find("/../") != std::string::npos || (path.size() >= 3 && path.compare(path.size() - 3, 3, "/..") == 0)) {
    return false;
  }
  for (const std::string& prefix : *c.storage) {
    if (prefix.empty() || prefix.front() != '/') continue;
    if (path.rfind(prefix, 0) != 0) continue;
    if (prefix.back() == '/' || path.size() == prefix.size() || path[prefix.size()] == '/') return true;
  }
  return false;
}

std::string StorageList(const Cluster& c) {
  std::string out;
  for (const std::string& p : c.storage.value_or(std::vector<std::string>{})) {
    if (!p.empty() && p.front() == '/') out += (out.empty() ? "" : ", ") + p;
  }
  return out.empty() ? "none declared" : out;
}

// False, with the reason put into words only when `why` asks for it: these
// checks run for every candidate on the scheduler's hot path.
template <typename Words>
bool Refuse(std::string* why, Words&& words) {
  if (why) *why = words();
  return false;
}

// What each node must have (disk, CPUs, memory) against what the pool
// declares; the simulated estate promises what a pool leaves undeclared.
bool NodesHonoured(const JobSpec& spec, const Cluster& c, const NodePool& pool, std::string* why) {
  const Honours& h = c.honours;
  if (spec.disk_size_gb) {
    int want = *spec.disk_size_gb;
    if (pool.disk_gb && *pool.disk_gb < want) {
      return Refuse(why, [&] {
        return "resources.disk_size: pool " + pool.name + " has " + std::to_string(*pool.disk_gb) +
               " GB of disk per node, the job asks for " + std::to_string(want);
      });
    }
    if (!pool.disk_gb && !h.everything) {
      return Refuse(why, [&] {
        return "resources.disk_size: pool " + pool.name + " declares no disk_gb, so " + std::to_string(want) +
               " GB per node cannot be promised";
      });
    }
  }
  // Nodes with at least what the job asks for, where the pool declares it.
  struct PerNode {
    const char* field;
    const std::optional<NodeAmount>* want;
    const std::optional<int>* has;
    const char* key;   // the pool's declaration
    const char* unit;  // in words
  };
  for (const PerNode& n : {PerNode{"resources.cpus", &spec.cpus, &pool.cpus, "cpus", " CPUs"},
                           PerNode{"resources.memory", &spec.memory_gb, &pool.memory_gb, "memory_gb", " GB of memory"}}) {
    if (!*n.want) continue;
    if (*n.has && **n.has < (*n.want)->value) {
      return Refuse(why, [&] {
        return std::string(n.field) + ": pool " + pool.name + " has " + std::to_string(**n.has) + n.unit +
               " per node, the job asks for " + (*n.want)->ToString();
      });
    }
    if (!*n.has && !h.everything) {
      return Refuse(why, [&] {
        return std::string(n.field) + ": pool " + pool.name + " declares no " + n.key + ", so " +
               (*n.want)->ToString() + n.unit + " per node cannot be promised";
      });
    }
  }
  return true;
}

// The software the job requires (resources.cuda, resources.driver) against
// what the pool declares: a pool that declares nothing is not promised to
// have it, on any backend.
bool SoftwareDeclared(const JobSpec& spec, const NodePool& pool, std::string* why) {
  for (auto [name, want, words] : {std::tuple{"cuda", &spec.cuda, "CUDA"}, std::tuple{"driver", &spec.driver, "driver"}}) {
    if (want->empty()) continue;
    auto req = ParseVersionRequirement(*want);
    auto has = pool.software.find(name);
    if (has == pool.software.end()) {
      return Refuse(why, [&] {
        return std::string("resources.") + name + ": pool " + pool.name + " declares no " + words +
               " version (software." + name + "), the job requires " + *want;
      });
    }
    if (!req.ok() || !req->Matches(has->second)) {
      return Refuse(why, [&] {
        return std::string("resources.") + name + ": pool " + pool.name + " declares " + words + " " + has->second +
               ", the job requires " + *want;
      });
    }
  }
  return true;
}

// What the backend does with the job: its image, workdir and file mounts.
bool BackendHonours(const JobSpec& spec, const Alternative& alt, const Cluster& c, const DataConfig* data,
                    std::string* why) {
  const Honours& h = c.honours;
  if (h.everything) return true;
  auto backend = [&h] { return h.backend.empty() ? std::string("its backend") : h.backend; };
  if (!alt.image_id.empty() && !h.container_images) {
    return Refuse(why, [&] { return "resources.image_id: " + backend() + " runs jobs on the host, not in a container image"; });
  }
  if (!spec.workdir.git_url.empty() && !h.git_workdir) {
    return Refuse(why, [&] { return "workdir: " + backend() + " does not clone a git workdir"; });
  }
  if (!spec.workdir.path.empty() && !(h.storage_paths && OnStorage(c, spec.workdir.path))) {
    return Refuse(why, [&] {
      return "workdir: " + spec.workdir.path + " is not on this cluster's storage (" + StorageList(c) +
             "), and a directory on the submitter's machine is not synced: give workdir: {url, ref}, or a "
             "directory on the cluster's storage";
    });
  }
  for (const FileMount& m : spec.file_mounts) {
    if (!m.FromPath() && h.buckets) {
      // A bucket: copied with rclone before setup, or mounted with FUSE.
      if (!m.more_sources.empty() || m.source.empty()) {
        return Refuse(why, [&] {
          return "file_mounts." + m.target + ": a bucket is delivered from one source URL under a storage location of "
                 "the estate (" +
                 (m.source.empty() ? "a bucket by name alone is created by SkyPilot, not here" : "not a list") + ")";
        });
      }
      if (!data || !data->LocationOfUrl(m.source)) {
        return Refuse(why, [&] {
          return "file_mounts." + m.target + ": " + m.source + " is under no storage location's url (data.locations)";
        });
      }
      if (data->node_rclone_config.empty()) {
        return Refuse(why, [&] {
          return "file_mounts." + m.target + ": the estate gives the nodes no rclone config for buckets "
                 "(data.node_rclone_config)";
        });
      }
      if (m.Mode() != "COPY" && !c.fuse) {
        return Refuse(why, [&] {
          return "file_mounts." + m.target + ": mode " + m.Mode() + " mounts the bucket with rclone, which needs FUSE, "
                 "and cluster " + c.name + " does not declare it (fuse: true); use mode: COPY";
        });
      }
      continue;
    }
    if (!m.FromPath() || !m.more_sources.empty() || !m.name.empty()) {
      return Refuse(why, [&] {
        return "file_mounts." + m.target + ": " + backend() + " does not mount or copy buckets (" +
               (m.source.empty() ? m.name : m.source) + "); copy the data in setup, or use a path on the cluster's storage";
      });
    }
    if (!(h.storage_paths && OnStorage(c, m.source))) {
      return Refuse(why, [&] {
        return "file_mounts." + m.target + ": " + m.source + " is not on this cluster's storage (" + StorageList(c) +
               "), and a path on the submitter's machine is not synced";
      });
    }
  }
  return true;
}

}  // namespace

bool Honoured(const JobSpec& spec, const Alternative& alt, const Cluster& c, const NodePool& pool, std::string* why,
              const DataConfig* data) {
  return NodesHonoured(spec, c, pool, why) && SoftwareDeclared(spec, pool, why) &&
         BackendHonours(spec, alt, c, data, why);
}

bool Router::DataAt(const DatasetRef& d, const std::string& location, int64_t* bytes, std::string* from) const {
  const DataPlaces* places = places_.load();
  std::optional<DataPlace> known;
  if (places && !d.digest.empty()) known = places->Verified(d.digest);
  std::vector<std::string> at;
  if (known) {
    at = known->places;
    *bytes = known->bytes;
  } else if (const Dataset* ds = estate_.FindDataset(d.name)) {
    at = ds->replicas;
  }
  if (std::find(at.begin(), at.end(), location) != at.end()) return true;
  *from = NearestPlace(at, location);
  return false;
}

std::string NearestPlace(const std::vector<std::string>& places, const std::string& location) {
  std::string provider = location.substr(0, location.find('/')) + "/";
  for (const std::string& p : places) {
    if (p == location) return p;
  }
  for (const std::string& p : places) {
    if (p.rfind(provider, 0) == 0) return p;
  }
  return places.empty() ? "" : places.front();
}

bool Router::CanHold(const std::string& dataset, const std::string& place) const {
  const Dataset* ds = estate_.FindDataset(dataset);
  for (const StorageLocation& l : estate_.data.locations) {
    if (l.Location() == place && (!ds || ds->residency.empty() || ds->residency == l.zone)) return true;
  }
  return false;
}

std::string Router::AwaitData(const JobSpec& spec, const Cluster& cluster, const std::string& job_id) const {
  const DataPlaces* places = places_.load();
  if (!places) return "";
  std::string place = cluster.provider + "/" + cluster.region;
  for (const DatasetRef& d : spec.datasets) {
    if (d.replicate != "on-demand" || d.digest.empty()) continue;
    auto known = places->Verified(d.digest);
    if (!known || std::find(known->places.begin(), known->places.end(), place) != known->places.end()) continue;
    return "waiting for dataset " + d.name + "@" + d.version + " to be copied to " + place + " (replicate: on-demand): " +
           places->RequestCopy(d.digest, place, job_id, spec.team);
  }
  return "";
}

bool Router::Evaluate(const JobSpec& spec, int alt, const Entry& e, const CapacityView* view,
                      CandidateReport& report, bool want_reason, const Resume* resume) const {
  const Alternative& want = spec.accelerators.alternatives[static_cast<size_t>(alt)];
  Option& o = report.option;
  o.alternative = alt;
  o.pool_id = e.ref.id;
  o.cluster = e.cluster;
  o.pool = e.pool;
  o.spot = want.use_spot;
  o.price_micros = want.use_spot ? e.spot : e.on_demand;
  o.reserved = false;
  // Reasons are only put into words when asked for: Choose is a hot path.
  auto fail = [&](auto&& words) {
    report.eligible = false;
    if (want_reason) report.failure = words();
    return false;
  };
  if (e.pool->gpus_per_node < want.count) {
    return fail([&] {
      return "its " + e.pool->gpu_type + " nodes have " + std::to_string(e.pool->gpus_per_node) +
             (e.pool->cpu_only() ? " CPUs" : " GPUs") + ", the job needs " + std::to_string(want.count) +
             " on each node";
    });
  }
  if (e.pool->nodes < spec.num_nodes) {
    return fail([&] {
      return "pool " + e.pool->name + " has " + std::to_string(e.pool->nodes) + " nodes, the job needs " +
             std::to_string(spec.num_nodes) + " at once";
    });
  }
  if (want.use_spot && e.spot < 0) return fail([] { return std::string("no spot capacity is sold here"); });
  // infra names a provider, or (as SkyPilot's `infra: k8s[/CONTEXT]`) any
  // Kubernetes cluster, the context naming one by its name.
  const bool any_kubernetes = want.cloud == "kubernetes" && e.cluster->provider != "kubernetes" && e.provider &&
                              e.provider->kind == "kubernetes";
  if (!want.cloud.empty() && want.cloud != e.cluster->provider && !any_kubernetes) {
    return fail([&] { return "the job asks for infra " + want.cloud; });
  }
  if (any_kubernetes && !want.region.empty() && want.region != e.cluster->name && want.region != e.cluster->region) {
    return fail([&] { return "the job asks for the Kubernetes context " + want.region; });
  }
  if (!any_kubernetes && !want.region.empty() && want.region != e.cluster->region) {
    return fail([&] { return "the job asks for region " + want.region; });
  }
  if (!spec.residency.empty() && spec.residency != e.cluster->zone) {
    return fail([&] { return "it is in residency zone " + e.cluster->zone + ", the job must stay in " + spec.residency; });
  }
  if (std::string why; !Honoured(spec, want, *e.cluster, *e.pool, want_reason ? &why : nullptr, &estate_.data)) {
    return fail([&] { return why; });
  }
  o.data_local = true;
  bool copies = false;  // some dataset would be copied here before the job starts
  int64_t remote_bytes = 0;
  std::optional<Money> remote_cost = Money(0, estate_.currency);
  for (const auto& d : spec.datasets) {
    int64_t bytes = -1;
    std::string from;
    if (!DataAt(d, e.location, &bytes, &from)) {
      o.data_local = false;
      // A copy on demand needs a verified replica somewhere to copy from.
      bool copy_here = d.replicate == "on-demand" && !from.empty() && CanHold(d.name, e.location);
      if (copy_here) copies = true;
      if (!spec.allow_remote_data && !copy_here) {
        return fail([&] {
          return "no verified replica of dataset " + d.name + (d.version.empty() ? "" : "@" + d.version) + " in " +
                 e.location +
                 (d.replicate != "on-demand" ? " (set allow_remote_data: true to read it remotely, or replicate: "
                                               "on-demand to copy it there first)"
                  : from.empty()             ? ", nor anywhere to copy it from"
                                             : " and no storage location there it may be copied to");
        });
      }
      if (!want_reason) continue;
      if (bytes < 0 || from.empty()) {
        remote_bytes = -1;
        continue;
      }
      if (remote_bytes >= 0) remote_bytes += bytes;
      auto cost = estate_.data.TransferCost(from, e.location, bytes, estate_.currency);
      auto sum = cost && remote_cost ? remote_cost->Add(*cost) : Result<Money>(NotFound(""));
      remote_cost = sum.ok() ? std::optional<Money>(*sum) : std::nullopt;
    }
  }
  if (want_reason && !spec.datasets.empty()) {
    if (o.data_local) {
      report.data = "data local";
    } else if (remote_bytes < 0) {
      report.data = copies ? "would copy its data here first (size unknown: not registered)"
                           : "would read its data across regions (size unknown: not registered)";
    } else {
      static const char* kUnits[] = {"B", "KB", "MB", "GB", "TB", "PB"};
      double v = static_cast<double>(remote_bytes);
      int u = 0;
      for (; v >= 1000 && u < 5; ++u) v /= 1000;
      char size[32];
      std::snprintf(size, sizeof size, "%.1f %s", v, kUnits[u]);
      report.data = std::string(copies ? "would copy " : "would read ") + size +
                    (copies ? " here first (replicate: on-demand)" : " across regions") +
                    (remote_cost ? " at " + remote_cost->ToString() : " (no transfer price in the estate)");
    }
  }
  if (resume && !resume->path.empty() && !CheckpointReachable(*e.cluster, resume->path, resume->cluster)) {
    return fail([&] {
      return "it cannot read the checkpoint " + resume->path + " written on " + resume->cluster +
             " (list its storage under clusters[].storage)";
    });
  }
  if (view == nullptr) return report.eligible = true;
  if (!view->Healthy(e.ref)) {
    return fail([&] { return "provider " + e.cluster->provider + " is down"; });
  }
  if (!view->Fits(e.ref, want.count, spec.num_nodes)) {
    return fail([&] {
      return "no room now: " + CountOf(e.pool->gpu_type, view->FreeGpus(e.ref)) + " free, not " +
             std::to_string(spec.num_nodes) + " node(s) with " +
             std::to_string(want.count) + " free each";
    });
  }
  int total = e.pool->gpus_per_node * e.pool->nodes;
  o.load_permille = total == 0 ? 1000 : (total - view->FreeGpus(e.ref)) * 1000 / total;
  if (!want.use_spot && e.reservation_price >= 0 && view->ReservedFree(e.ref) >= want.count * spec.num_nodes) {
    o.reserved = true;
    o.price_micros = e.reservation_price;
  }
  return report.eligible = true;
}

std::optional<Option> Router::Choose(const JobSpec& spec, const CapacityView& view,
                                     const std::function<bool(int)>& allowed, const std::string& avoid,
                                     const Resume* resume) const {
  std::optional<Option> best;
  const auto& alts = spec.accelerators.alternatives;
  for (int a = 0; a < static_cast<int>(alts.size()); ++a) {
    if (!allowed(a)) continue;
    auto it = by_type_.find(alts[static_cast<size_t>(a)].type);
    if (it == by_type_.end()) continue;
    CandidateReport report;
    for (const Entry& e : it->second) {
      if (!Evaluate(spec, a, e, &view, report, false, resume)) continue;
      report.option.avoided = !avoid.empty() && e.cluster->name == avoid;
      if (!best || Better(report.option, *best)) best = report.option;
    }
    if (best && spec.accelerators.ordered) return best;  // the first alternative that fits wins
  }
  return best;
}

bool Router::StaticallyPossible(const JobSpec& spec, int alt) const {
  auto it = by_type_.find(spec.accelerators.alternatives[static_cast<size_t>(alt)].type);
  if (it == by_type_.end()) return false;
  CandidateReport report;
  for (const Entry& e : it->second) {
    if (Evaluate(spec, alt, e, nullptr, report, false)) return true;
  }
  return false;
}

std::vector<CandidateReport> Router::Explain(const JobSpec& spec, const CapacityView* view,
                                             const Resume* resume) const {
  std::vector<CandidateReport> out;
  const auto& alts = spec.accelerators.alternatives;
  for (int a = 0; a < static_cast<int>(alts.size()); ++a) {
    for (const auto& c : estate_.clusters) {
      auto it = by_type_.find(alts[static_cast<size_t>(a)].type);
      bool offered = false;
      if (it != by_type_.end()) {
        for (const Entry& e : it->second) {
          if (e.cluster != &c) continue;
          offered = true;
          CandidateReport report;
          Evaluate(spec, a, e, view, report, true, resume);
          out.push_back(report);
        }
      }
      if (!offered) {
        CandidateReport report;
        report.option.alternative = a;
        report.option.cluster = &c;
        report.failure = "it has no " + alts[static_cast<size_t>(a)].type + " GPUs";
        out.push_back(report);
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [&](const CandidateReport& x, const CandidateReport& y) {
    if (x.eligible != y.eligible) return x.eligible;
    if (!x.eligible) return false;
    if (spec.accelerators.ordered && x.option.alternative != y.option.alternative) {
      return x.option.alternative < y.option.alternative;
    }
    return Better(x.option, y.option);
  });
  return out;
}

}  // namespace causeway::placement

namespace causeway::placement {

Status CheckFeasible(const Router& router, const JobSpec& job, const std::string& file) {
  // The router reads what the job asks of a pool: a CPU-only job's CPUs.
  std::optional<JobSpec> cpu_only;
  if (job.cpu_only()) {
    cpu_only = job;
    cpu_only->accelerators = job.Demand();
  }
  const JobSpec& spec = cpu_only ? *cpu_only : job;
  for (int a = 0; a < static_cast<int>(spec.accelerators.alternatives.size()); ++a) {
    if (router.StaticallyPossible(spec, a)) return Status::Ok();
  }
  // Say why for every cluster, so the researcher sees which requirement to relax.
  std::vector<Diagnostic> why;
  for (const auto& c : router.Explain(spec, nullptr)) {
    const auto& alt = spec.accelerators.alternatives[static_cast<size_t>(c.option.alternative)];
    why.push_back(Diagnostic{file, 0, 0, "resources.accelerators",
                             alt.Describe() + ", cluster " + c.option.cluster->name + ": " + c.failure});
  }
  std::string summary = "no cluster in the estate can ever run this job" +
                        (why.empty() ? std::string(": none offers what it asks for") : "; each cluster's reason follows");
  return InvalidArgument(summary, std::move(why));
}

}  // namespace causeway::placement
