#include "causeway/estate.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <tuple>
#include <set>

#include "causeway/job_spec.h"
#include "causeway/resources.h"
#include "spec/accelerators.h"
#include "spec/estate_parser.h"
#include "spec/settings_reader.h"
#include "spec/software.h"
#include "spec/yaml_reader.h"

namespace causeway {

int Cluster::TotalGpus() const {
  int total = 0;
  for (const auto& p : node_pools) {
    if (!p.cpu_only()) total += p.gpus_per_node * p.nodes;
  }
  return total;
}

namespace {
template <typename T>
const T* FindByName(const std::vector<T>& items, std::string_view name) {
  for (const auto& i : items) {
    if (i.name == name) return &i;
  }
  return nullptr;
}
}  // namespace

const Provider* Estate::FindProvider(std::string_view name) const { return FindByName(providers, name); }
const Cluster* Estate::FindCluster(std::string_view name) const { return FindByName(clusters, name); }
const Team* Estate::FindTeam(std::string_view name) const { return FindByName(teams, name); }
const Dataset* Estate::FindDataset(std::string_view name) const { return FindByName(datasets, name); }
const CloudFederation* IdentityConfig::FindFederation(const std::string& name) const {
  return FindByName(federations, name);
}
bool CloudFederation::AllowsTeam(const std::string& team) const {
  return teams.empty() || std::find(teams.begin(), teams.end(), team) != teams.end();
}
bool SecretStore::Grants(const std::string& team, const std::string& secret) const {
  auto it = teams.find(team);
  if (it == teams.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(), [&](const std::string& p) {
    return !p.empty() && p.back() == '*' ? secret.compare(0, p.size() - 1, p, 0, p.size() - 1) == 0 : secret == p;
  });
}
std::string SecretStore::Endpoint() const {
  return endpoint.empty() ? "https://secretsmanager." + region + ".amazonaws.com" : endpoint;
}
const SecretStore* IdentityConfig::StoreFor(const std::string& scheme, const std::string& cluster,
                                            const std::string& team, const std::string& secret) const {
  for (const SecretStore& s : secret_stores) {
    const bool serves = scheme == "aws-sm" ? s.kind == "aws-secrets-manager"
                        : scheme == "k8s"  ? s.kind == "kubernetes" && (s.cluster.empty() ? s.name : s.cluster) == cluster
                                           : false;
    if (serves && s.Grants(team, secret)) return &s;
  }
  return nullptr;
}
const ProviderReadiness* ReadinessConfig::FindProvider(std::string_view name) const {
  for (const auto& p : providers) {
    if (p.provider == name) return &p;
  }
  return nullptr;
}
const QueueConfig* Estate::QueueForTeam(std::string_view team) const {
  for (const auto& q : queues) {
    if (q.team == team) return &q;
  }
  return nullptr;
}
const Price* Estate::FindPrice(std::string_view cluster, std::string_view gpu_type) const {
  for (const auto& p : prices) {
    if (p.cluster == cluster && p.gpu_type == gpu_type) return &p;
  }
  return nullptr;
}

namespace estate_detail {

Result<Estate> EstateParser::Parse(std::string_view text) {
  ASSIGN_OR_RETURN(YAML::Node root, spec::LoadYaml(text, r_.file()));
  static const KeySet kKeys{
      {"currency", "providers", "clusters", "prices", "reservations", "teams", "datasets", "queues", "policies",
       "reaper", "telemetry", "access", "identity", "audit", "readiness", "data"}};
  if (!r_.CheckMap(root, "", kKeys)) return r_.Finish("estate");
  if (auto n = Get(root, "currency"); n.IsDefined()) {
    if (auto s = r_.String(n, "currency")) {
      auto m = Money::Parse("0", *s);
      if (!m.ok()) {
        r_.Error(n, "currency", m.status().message());
      } else {
        e_.currency = *s;
      }
    }
  }
  List(root, "providers", [&](const YAML::Node& n, const std::string& f) { ParseProvider(n, f); });
  List(root, "clusters", [&](const YAML::Node& n, const std::string& f) { ParseCluster(n, f); });
  List(root, "prices", [&](const YAML::Node& n, const std::string& f) { ParsePrice(n, f); });
  List(root, "reservations", [&](const YAML::Node& n, const std::string& f) { ParseReservation(n, f); });
  List(root, "teams", [&](const YAML::Node& n, const std::string& f) { ParseTeam(n, f); });
  if (YAML::Node t = Get(root, "data"); t.IsDefined()) ParseData(t, "data");
  List(root, "datasets", [&](const YAML::Node& n, const std::string& f) { ParseDataset(n, f); });
  List(root, "queues", [&](const YAML::Node& n, const std::string& f) { ParseQueue(n, f); });
  List(root, "policies", [&](const YAML::Node& n, const std::string& f) { ParsePolicy(n, f); });
  List(root, "reaper", [&](const YAML::Node& n, const std::string& f) { ParseReaper(n, f); });
  if (YAML::Node t = Get(root, "telemetry"); t.IsDefined()) ParseTelemetry(t, "telemetry");
  List(root, "access", [&](const YAML::Node& n, const std::string& f) { ParseAccess(n, f); });
  if (YAML::Node t = Get(root, "identity"); t.IsDefined()) ParseIdentity(t, "identity");
  if (YAML::Node t = Get(root, "audit"); t.IsDefined()) ParseAudit(t, "audit");
  if (YAML::Node t = Get(root, "readiness"); t.IsDefined()) ParseReadiness(t, "readiness");
  CheckKindReferences();
  RETURN_IF_ERROR(r_.Finish("estate"));
  return std::move(e_);
}

void EstateParser::CheckKindReferences() {
  for (const Block& b : blocks_) {
    for (const KindSettings::QueueRef& ref : b.settings->QueuesNamed()) {
      if (queue_names_.count(ref.queue)) continue;
      std::string names;
      for (const auto& q : e_.queues) names += (names.empty() ? "" : ", ") + q.name;
      YAML::Node at = Get(b.node, ref.key);
      r_.Error(at.IsDefined() ? at : b.node, JoinField(b.field, ref.key),
               "names queue \"" + ref.queue + "\", which is no queue of the estate" +
                   (names.empty() ? " (it has none)" : " (queues: " + names + ")"));
    }
  }
}

void EstateParser::ParseProvider(const YAML::Node& n, const std::string& f) {
  KeySet keys{{"name", "kind", "regions"}, {"description"}};
  for (std::string_view k : BlockKeys(&EstateKind::provider_key, &EstateKind::parse_provider)) keys.known.push_back(k);
  if (!r_.CheckMap(n, f, keys)) return;
  Provider p;
  p.name = NameField(n, f, provider_names_, "provider");
  p.kind = Str(n, "kind", f);
  const EstateKind* kind = FindKind(p.kind);
  if (!p.kind.empty() && !kind) {
    std::string names;
    for (const EstateKind& k : kinds_) names += (names.empty() ? "" : ", ") + k.name;
    r_.Error(Get(n, "kind"), JoinField(f, "kind"), "unknown kind \"" + p.kind + "\": expected one of " + names);
  }
  p.settings = KindBlock(n, f, kind, &EstateKind::provider_key, &EstateKind::parse_provider, "providers");
  YAML::Node regions = Get(n, "regions");
  if (!regions.IsDefined() || !regions.IsSequence() || regions.size() == 0) {
    r_.Error(regions.IsDefined() ? regions : n, JoinField(f, "regions"),
             "expected a list of regions such as [{name: eu-north1, zone: eu}]");
  } else {
    std::set<std::string> seen;
    int i = 0;
    for (const auto& rn : regions) {
      std::string rf = JoinField(f, "regions[" + std::to_string(i++) + "]");
      static const KeySet kRegionKeys{{"name", "zone"}};
      if (!r_.CheckMap(rn, rf, kRegionKeys)) continue;
      Region reg{NameField(rn, rf, seen, "region"), Str(rn, "zone", rf)};
      if (!reg.zone.empty() && !IsName(reg.zone)) {
        r_.Error(Get(rn, "zone"), JoinField(rf, "zone"), "expected a residency zone such as eu or us");
      }
      if (!reg.name.empty()) p.regions.push_back(std::move(reg));
    }
  }
  if (!p.name.empty()) e_.providers.push_back(std::move(p));
}

std::string EstateParser::RegionZone(const YAML::Node& n, const std::string& f, const std::string& provider,
                                     const std::string& region) {
  if (const Provider* p = e_.FindProvider(provider)) {
    auto reg = std::find_if(p->regions.begin(), p->regions.end(), [&](const Region& r) { return r.name == region; });
    if (reg != p->regions.end()) return reg->zone;
    if (!region.empty()) {
      r_.Error(Get(n, "region"), JoinField(f, "region"), "provider \"" + provider + "\" has no region \"" + region + "\"");
    }
  } else if (!provider.empty()) {
    std::vector<std::string_view> names;
    for (const auto& p2 : e_.providers) names.push_back(p2.name);
    std::string hint = spec::ClosestMatch(provider, names);
    r_.Error(Get(n, "provider"), JoinField(f, "provider"),
             "unknown provider \"" + provider + "\"" + (hint.empty() ? "" : "; did you mean \"" + hint + "\"?"));
  }
  return "";
}

void EstateParser::ParseCluster(const YAML::Node& n, const std::string& f) {
  KeySet keys{{"name", "provider", "region", "node_pools", "inject_envs", "storage", "bill_resources", "fuse"},
              {"description"}};
  for (std::string_view k : BlockKeys(&EstateKind::cluster_key, &EstateKind::parse_cluster)) keys.known.push_back(k);
  if (!r_.CheckMap(n, f, keys)) return;
  Cluster c;
  if (auto fuse = Get(n, "fuse"); fuse.IsDefined()) c.fuse = r_.Bool(fuse, JoinField(f, "fuse")).value_or(false);
  StringList(n, f, "bill_resources", "[cw-h100-*, node-0?]", c.bill_resources);
  for (size_t i = 0; i < c.bill_resources.size(); ++i) {
    if (c.bill_resources[i].empty()) {
      r_.Error(Get(n, "bill_resources")[i], JoinField(f, "bill_resources") + "[" + std::to_string(i) + "]",
               "expected a non-empty ResourceId pattern");
    }
  }
  if (auto st = Get(n, "storage"); st.IsDefined()) {
    std::string sf = JoinField(f, "storage");
    c.storage.emplace();
    if (!st.IsSequence()) {
      r_.Error(st, sf, "expected a list of storage prefixes the cluster reaches, e.g. [s3://ckpt-eu/, /shared/ckpt]");
    } else {
      for (size_t i = 0; i < st.size(); ++i) {
        auto v = r_.String(st[i], sf + "[" + std::to_string(i) + "]");
        if (v && v->empty()) r_.Error(st[i], sf + "[" + std::to_string(i) + "]", "expected a non-empty prefix");
        if (v && !v->empty()) c.storage->push_back(*v);
      }
    }
  }
  if (auto inj = Get(n, "inject_envs"); inj.IsDefined()) {
    c.inject_envs = r_.StringMap(inj, JoinField(f, "inject_envs")).value_or(std::map<std::string, std::string>{});
  }
  const Provider* owner = e_.FindProvider(Str(n, "provider", f, false));
  const EstateKind* kind = owner ? FindKind(owner->kind) : nullptr;
  c.settings = KindBlock(n, f, kind, &EstateKind::cluster_key, &EstateKind::parse_cluster, "clusters");
  if (kind) c.honours = kind->honours;
  if (kind && !c.settings && !kind->cluster_block_required.empty()) {
    r_.Error(n, JoinField(f, kind->cluster_key), kind->cluster_block_required);
  }
  c.name = NameField(n, f, cluster_names_, "cluster");
  c.provider = Str(n, "provider", f);
  c.region = Str(n, "region", f);
  c.zone = RegionZone(n, f, c.provider, c.region);
  YAML::Node pools = Get(n, "node_pools");
  if (!pools.IsDefined() || !pools.IsSequence() || pools.size() == 0) {
    r_.Error(pools.IsDefined() ? pools : n, JoinField(f, "node_pools"),
             "expected a list of node pools such as [{name: h200, gpu_type: H200, gpus_per_node: 8, nodes: 4}]");
  } else {
    std::set<std::string> seen;
    int i = 0;
    for (const auto& pn : pools) {
      std::string pf = JoinField(f, "node_pools[" + std::to_string(i++) + "]");
      static const KeySet kPoolKeys{{"name", "gpu_type", "gpus_per_node", "nodes", "interconnect", "disk_gb", "cpus", "memory_gb",
                                     "software"}};
      if (!r_.CheckMap(pn, pf, kPoolKeys)) continue;
      c.node_pools.push_back(ParseNodePool(pn, pf, seen));
    }
  }
  if (!c.name.empty()) e_.clusters.push_back(std::move(c));
}

NodePool EstateParser::ParseNodePool(const YAML::Node& pn, const std::string& pf, std::set<std::string>& seen) {
  NodePool pool;
  pool.name = NameField(pn, pf, seen, "node pool");
  bool cpu_only = !Get(pn, "gpu_type").IsDefined();
  if (!cpu_only) pool.gpu_type = GpuType(pn, pf);
  if (pool.gpu_type == kCpuType) {
    r_.Error(Get(pn, "gpu_type"), JoinField(pf, "gpu_type"),
             "CPU is not a GPU type: leave gpu_type and gpus_per_node out for a CPU-only pool, and give its cpus");
  }
  if (auto g = Get(pn, "gpus_per_node"); g.IsDefined() && cpu_only) {
    r_.Error(g, JoinField(pf, "gpus_per_node"),
             "a pool with GPUs names their gpu_type; leave gpus_per_node out for a CPU-only pool");
  } else if (g.IsDefined()) {
    pool.gpus_per_node = static_cast<int>(r_.Int(g, JoinField(pf, "gpus_per_node"), 1, kMaxGpusPerNode).value_or(0));
  } else if (!cpu_only) {
    r_.Error(pn, JoinField(pf, "gpus_per_node"), "missing required field \"gpus_per_node\"");
  }
  if (auto g = Get(pn, "nodes"); g.IsDefined()) {
    pool.nodes = static_cast<int>(r_.Int(g, JoinField(pf, "nodes"), 0, 100000).value_or(0));
  } else {
    r_.Error(pn, JoinField(pf, "nodes"), "missing required field \"nodes\"");
  }
  for (auto [key, dest, max] : {std::tuple{"disk_gb", &pool.disk_gb, 1 << 20}, std::tuple{"cpus", &pool.cpus, 1 << 16},
                                std::tuple{"memory_gb", &pool.memory_gb, 1 << 24}}) {
    if (auto d = Get(pn, key); d.IsDefined() && !d.IsNull()) {
      if (auto v = r_.Int(d, JoinField(pf, key), 1, max)) *dest = static_cast<int>(*v);
    }
  }
  // A CPU-only pool counts CPUs where others count GPUs (kCpuType).
  if (cpu_only) {
    pool.gpu_type = std::string(kCpuType);
    if (!pool.cpus) {
      r_.Error(pn, JoinField(pf, "cpus"),
               "a CPU-only pool (no gpu_type) must give its cpus per node, e.g. {name: cpu, cpus: 32, nodes: 4}");
    } else if (*pool.cpus > kMaxCpusPerNode) {
      r_.Error(Get(pn, "cpus"), JoinField(pf, "cpus"),
               "a CPU-only pool counts CPUs: at most " + std::to_string(kMaxCpusPerNode) + " per node");
    } else {
      pool.gpus_per_node = *pool.cpus;
    }
  }
  pool.interconnect = Str(pn, "interconnect", pf, false);
  if (pool.interconnect.empty()) pool.interconnect = "ethernet";
  if (std::find(std::begin(kInterconnects), std::end(kInterconnects), pool.interconnect) ==
      std::end(kInterconnects)) {
    r_.Error(Get(pn, "interconnect"), JoinField(pf, "interconnect"),
             "unknown interconnect \"" + pool.interconnect + "\": expected infiniband, roce, ethernet, nvlink or none");
  }
  if (auto sw = Get(pn, "software"); sw.IsDefined() && !sw.IsNull()) ParseSoftware(sw, JoinField(pf, "software"), pool);
  return pool;
}

void EstateParser::ParseSoftware(const YAML::Node& n, const std::string& f, NodePool& pool) {
  auto values = r_.StringMap(n, f);
  if (!values) return;
  for (const auto& [name, value] : *values) {
    if (std::find(std::begin(kDeclaredSoftware), std::end(kDeclaredSoftware), name) == std::end(kDeclaredSoftware)) {
      r_.Error(Get(n, name), JoinField(f, name),
               "unknown software \"" + name + "\": expected driver, cuda, os, kernel, image, nccl, cudnn or torch");
    } else if (value.empty() || value.size() > 256 ||
               std::any_of(value.begin(), value.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; })) {
      r_.Error(Get(n, name), JoinField(f, name), "expected a version or image reference of 1 to 256 characters");
    } else if ((name == "cuda" || name == "driver") && (!ParseVersionRequirement(value).ok() || !std::isdigit(
                                                                                    static_cast<unsigned char>(value[0])))) {
      r_.Error(Get(n, name), JoinField(f, name), "expected a version such as 12.4 or 550.54.15");
    } else {
      pool.software[name] = value;
    }
  }
}

void EstateParser::ParsePrice(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{{"cluster", "gpu_type", "on_demand", "spot"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  Price p;
  p.cluster = Str(n, "cluster", f);
  p.gpu_type = GpuType(n, f);
  ClusterWithGpu(n, f, p.cluster, p.gpu_type);
  auto od = Amount(n, "on_demand", f, true);
  p.spot = Amount(n, "spot", f, false);
  if (!od) return;
  p.on_demand = *od;
  if (e_.FindPrice(p.cluster, p.gpu_type)) {
    r_.Error(n, f, "a price for " + p.gpu_type + " on " + p.cluster + " is already given");
    return;
  }
  e_.prices.push_back(std::move(p));
}

void EstateParser::ParseReservation(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{{"name", "cluster", "gpu_type", "count", "start", "end", "price"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  Reservation res;
  res.name = NameField(n, f, reservation_names_, "reservation");
  res.cluster = Str(n, "cluster", f);
  res.gpu_type = GpuType(n, f);
  const Cluster* c = ClusterWithGpu(n, f, res.cluster, res.gpu_type);
  if (auto cn = Get(n, "count"); cn.IsDefined()) {
    res.count = static_cast<int>(r_.Int(cn, JoinField(f, "count"), 1, 10'000'000).value_or(0));
    if (c && res.count > 0) {
      int capacity = 0;
      for (const auto& p : c->node_pools) {
        if (p.gpu_type == res.gpu_type) capacity += p.gpus_per_node * p.nodes;
      }
      if (res.count > capacity) {
        r_.Error(cn, JoinField(f, "count"),
                 "reserves " + CountOf(res.gpu_type, res.count) + " but cluster \"" +
                     res.cluster + "\" has only " + std::to_string(capacity));
      }
    }
  } else {
    r_.Error(n, JoinField(f, "count"), "missing required field \"count\"");
  }
  bool times_ok = true;
  for (auto [key, dest] : {std::pair{"start", &res.start}, std::pair{"end", &res.end}}) {
    std::string s = Str(n, key, f);
    if (s.empty()) {
      times_ok = false;
      continue;
    }
    auto t = ParseRfc3339(s);
    if (!t.ok()) {
      r_.Error(Get(n, key), JoinField(f, key), t.status().message());
      times_ok = false;
    } else {
      *dest = *t;
    }
  }
  if (times_ok && res.end <= res.start) r_.Error(Get(n, "end"), JoinField(f, "end"), "the end must be after the start");
  if (auto price = Amount(n, "price", f, true)) res.price = *price;
  if (!res.name.empty()) e_.reservations.push_back(std::move(res));
}

void EstateParser::ParseTeam(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{{"name", "description", "budget"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  Team t{NameField(n, f, team_names_, "team"), Str(n, "description", f, false), std::nullopt};
  if (auto b = Get(n, "budget"); b.IsDefined() && !b.IsNull()) {
    static const KeySet kBudgetKeys{{"monthly", "soft_percent"}};
    std::string bf = JoinField(f, "budget");
    if (r_.CheckMap(b, bf, kBudgetKeys)) {
      auto monthly = Amount(b, "monthly", bf, true);
      int soft = 80;
      if (auto sp = Get(b, "soft_percent"); sp.IsDefined()) {
        soft = static_cast<int>(r_.Int(sp, JoinField(bf, "soft_percent"), 1, 100).value_or(80));
      }
      if (monthly) t.budget = Budget{*monthly, soft};
    }
  }
  if (!t.name.empty()) e_.teams.push_back(std::move(t));
}

void EstateParser::ParseDataset(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{{"name", "replicas", "owner", "residency"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  Dataset d;
  d.name = NameField(n, f, dataset_names_, "dataset");
  d.owner = Str(n, "owner", f, false);
  if (!d.owner.empty() && !e_.FindTeam(d.owner)) {
    r_.Error(Get(n, "owner"), JoinField(f, "owner"), "unknown team \"" + d.owner + "\"");
  }
  d.residency = Str(n, "residency", f, false);
  if (!d.residency.empty() && !KnownZone(d.residency)) {
    r_.Error(Get(n, "residency"), JoinField(f, "residency"),
             "no region of any provider is in residency zone \"" + d.residency + "\"");
  }
  YAML::Node reps = Get(n, "replicas");
  if (!reps.IsDefined()) {
    reps = YAML::Node(YAML::NodeType::Sequence);  // only registered replicas (causeway dataset)
  }
  if (!reps.IsSequence()) {
    r_.Error(reps.IsDefined() ? reps : n, JoinField(f, "replicas"),
             "expected a list of \"provider/region\" locations");
  } else {
    for (const auto& rn : reps) {
      auto s = r_.String(rn, JoinField(f, "replicas"));
      if (!s) continue;
      auto slash = s->find('/');
      const Provider* p = slash == std::string::npos ? nullptr : e_.FindProvider(s->substr(0, slash));
      bool region_ok = p && std::any_of(p->regions.begin(), p->regions.end(), [&](const Region& r) {
                         return r.name == s->substr(slash + 1);
                       });
      if (!region_ok) {
        r_.Error(rn, JoinField(f, "replicas"),
                 "unknown location \"" + *s + "\": expected \"provider/region\" of a provider in this estate");
        continue;
      }
      d.replicas.push_back(*s);
    }
  }
  if (!d.name.empty()) e_.datasets.push_back(std::move(d));
}

void EstateParser::ParseQueue(const YAML::Node& n, const std::string& f) {
  static const KeySet kKeys{{"name", "team", "cohort", "weight", "strict_fifo", "quotas"}};
  if (!r_.CheckMap(n, f, kKeys)) return;
  QueueConfig q;
  q.name = NameField(n, f, queue_names_, "queue");
  q.team = Str(n, "team", f);
  if (!q.team.empty() && !e_.FindTeam(q.team)) {
    r_.Error(Get(n, "team"), JoinField(f, "team"), "unknown team \"" + q.team + "\"");
  } else if (!q.team.empty() && !queue_teams_.insert(q.team).second) {
    r_.Error(Get(n, "team"), JoinField(f, "team"), "team \"" + q.team + "\" already has a queue");
  }
  q.cohort = Str(n, "cohort", f, false);
  if (auto w = Get(n, "weight"); w.IsDefined()) q.weight = static_cast<int>(r_.Int(w, JoinField(f, "weight"), 1, 1000).value_or(1));
  if (auto s = Get(n, "strict_fifo"); s.IsDefined()) q.strict_fifo = r_.Bool(s, JoinField(f, "strict_fifo")).value_or(false);
  YAML::Node quotas = Get(n, "quotas");
  if (!quotas.IsDefined() || !quotas.IsSequence()) {
    r_.Error(quotas.IsDefined() ? quotas : n, JoinField(f, "quotas"),
             "expected a list such as [{flavor: H100, nominal: 64, borrowing_limit: 32}]");
  } else {
    std::set<std::string> seen;
    int i = 0;
    for (const auto& qn : quotas) {
      std::string qf = JoinField(f, "quotas[" + std::to_string(i++) + "]");
      static const KeySet kQuotaKeys{{"flavor", "nominal", "borrowing_limit", "lending_limit"}};
      if (!r_.CheckMap(qn, qf, kQuotaKeys)) continue;
      FlavorQuota fq;
      std::string raw = Str(qn, "flavor", qf);
      if (raw.empty()) continue;
      // "<GPU type>" or "<GPU type>-spot".
      std::string base = raw;
      bool spot = base.size() > 5 && std::equal(base.end() - 5, base.end(), "-spot", [](char a, char b) {
                    return std::tolower(static_cast<unsigned char>(a)) == b;
                  });
      if (spot) base.resize(base.size() - 5);
      auto norm = NormalizeGpuType(base);
      if (!norm.ok() || !KnownFlavor(*norm)) {
        r_.Error(Get(qn, "flavor"), JoinField(qf, "flavor"),
                 "unknown flavor \"" + raw +
                     "\": expected a GPU type of a cluster (CPU for its CPU-only pools), optionally with -spot "
                     "(H100, H100-spot, CPU)");
        continue;
      }
      fq.flavor = *norm + (spot ? "-spot" : "");
      if (!seen.insert(fq.flavor).second) {
        r_.Error(Get(qn, "flavor"), JoinField(qf, "flavor"), "flavor " + fq.flavor + " is listed twice");
        continue;
      }
      if (auto v = Get(qn, "nominal"); v.IsDefined()) {
        fq.nominal = r_.Int(v, JoinField(qf, "nominal"), 0, 100'000'000).value_or(0);
      } else {
        r_.Error(qn, JoinField(qf, "nominal"), "missing required field \"nominal\"");
      }
      if (auto v = Get(qn, "borrowing_limit"); v.IsDefined()) fq.borrowing_limit = r_.Int(v, JoinField(qf, "borrowing_limit"), 0, 100'000'000);
      if (auto v = Get(qn, "lending_limit"); v.IsDefined()) {
        fq.lending_limit = r_.Int(v, JoinField(qf, "lending_limit"), 0, 100'000'000);
        if (fq.lending_limit && *fq.lending_limit > fq.nominal) {
          r_.Error(v, JoinField(qf, "lending_limit"), "cannot lend more than the nominal quota");
        }
      }
      if (q.cohort.empty() && (fq.borrowing_limit || fq.lending_limit)) {
        r_.Error(qn, qf, "borrowing and lending limits need the queue to be in a cohort");
      }
      q.quotas.push_back(std::move(fq));
    }
  }
  if (!q.name.empty()) e_.queues.push_back(std::move(q));
}

}  // namespace estate_detail

using estate_detail::EstateParser;

Result<Estate> ParseEstate(std::string_view yaml_text, const std::string& file, const EstateKinds& kinds) {
  EstateParser parser(file, kinds);
  return parser.Parse(yaml_text);
}

Result<Estate> LoadEstateFile(const std::string& path, const EstateKinds& kinds) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseEstate(text, path, kinds);
}

}  // namespace causeway

namespace causeway {

Status CheckJobAgainstEstate(const JobSpec& spec, const Estate& estate, const std::string& file,
                             std::vector<Diagnostic>* warnings) {
  std::vector<Diagnostic> errors;
  auto fail = [&](std::string field, std::string message) {
    errors.push_back(Diagnostic{file, 0, 0, std::move(field), std::move(message)});
  };
  auto names = [](const auto& items) {
    std::vector<std::string_view> out;
    for (const auto& i : items) out.push_back(i.name);
    return out;
  };
  auto hint = [](std::string_view word, const std::vector<std::string_view>& candidates) {
    std::string h = spec::ClosestMatch(word, candidates);
    return h.empty() ? std::string() : "; did you mean \"" + h + "\"?";
  };

  // Each alternative on its own: what the estate lacks for it. The job is
  // refused only when every alternative lacks something; the others' gaps
  // become warnings, so one portable file serves a smaller estate.
  std::vector<std::string_view> types;
  for (const auto& c : estate.clusters) {
    for (const auto& p : c.node_pools) {
      if (!p.cpu_only()) types.push_back(p.gpu_type);
    }
  }
  std::vector<Diagnostic> gaps;
  bool any_possible = false;
  const std::vector<Alternative> alts = spec.Demand().alternatives;  // a CPU-only job: its CPUs
  for (const auto& alt : alts) {
    size_t before = gaps.size();
    auto gap = [&](const char* field, std::string message) {
      std::string prefix = alts.size() > 1 ? "alternative " + alt.Describe() + ": " : "";
      gaps.push_back(Diagnostic{file, 0, 0, field, prefix + message});
    };
    bool offered = false, cpu_pools = false;
    for (const auto& c : estate.clusters) {
      for (const auto& p : c.node_pools) {
        if (p.gpu_type == alt.type && p.gpus_per_node >= alt.count) offered = true;
        cpu_pools = cpu_pools || p.cpu_only();
      }
    }
    if (!offered && spec.cpu_only()) {
      gap(spec.cpus ? "resources.cpus" : "resources.accelerators",
          !cpu_pools ? "the job asks for no accelerators, and no pool in the estate is CPU-only: add "
                       "resources.accelerators, e.g. L4:1"
                     : "no CPU-only pool has " + std::to_string(alt.count) + " CPUs on one node" +
                           (spec.cpus ? "" : " (" + std::to_string(kDefaultCpusPerNode) +
                                                 " when resources.cpus is not set)"));
    } else if (!offered) {
      bool any_type = std::find(types.begin(), types.end(), alt.type) != types.end();
      // Hints stay within the family: a V100 is never "did you mean H100".
      std::vector<std::string_view> kin;
      for (std::string_view t : types) {
        if (spec::AcceleratorFamily(t) == spec::AcceleratorFamily(alt.type)) kin.push_back(t);
      }
      std::string_view precise = spec::PreciseAccelerator(alt.type);
      std::string known = !precise.empty() ? " (SkyPilot's catalogue calls it " + std::string(precise) + ")"
                          : spec::KnownAccelerator(alt.type) ? ""
                                                              : " (" + alt.type + " is not in SkyPilot's catalogue either)";
      gap("resources.accelerators",
          any_type ? "no cluster has " + std::to_string(alt.count) + " " + alt.type + " GPUs on one node"
                   : "no cluster in the estate offers " + alt.type + hint(alt.type, kin) + known);
    }
    const Provider* provider = nullptr;
    // `infra: kubernetes[/CONTEXT]` (or k8s): any Kubernetes cluster, or the
    // one the context names.
    const bool any_kubernetes = alt.cloud == "kubernetes" && !estate.FindProvider(alt.cloud);
    if (any_kubernetes) {
      auto kubernetes = [&](const Cluster& c) {
        const Provider* p = estate.FindProvider(c.provider);
        return p && p->kind == "kubernetes" && (alt.region.empty() || alt.region == c.name || alt.region == c.region);
      };
      if (std::none_of(estate.clusters.begin(), estate.clusters.end(), kubernetes)) {
        gap("resources.infra", alt.region.empty() ? "no cluster in the estate runs Kubernetes"
                                                  : "no Kubernetes cluster in the estate is named \"" + alt.region + "\"");
      }
    } else if (!alt.cloud.empty()) {
      provider = estate.FindProvider(alt.cloud);
      if (!provider) gap("resources.infra", "unknown provider \"" + alt.cloud + "\"" + hint(alt.cloud, names(estate.providers)));
    }
    if (provider && !alt.region.empty() &&
        std::none_of(provider->regions.begin(), provider->regions.end(),
                     [&](const Region& r) { return r.name == alt.region; })) {
      gap("resources.region", "provider \"" + alt.cloud + "\" has no region \"" + alt.region + "\"" +
                                  hint(alt.region, names(provider->regions)));
    }
    if (gaps.size() == before) any_possible = true;
  }
  if (!any_possible) {
    for (auto& d : gaps) errors.push_back(std::move(d));
  } else if (warnings) {
    for (auto& d : gaps) {
      d.message += "; the job can still run as another alternative";
      d.warning = true;
      warnings->push_back(std::move(d));
    }
  }
  if (!spec.residency.empty() &&
      std::none_of(estate.clusters.begin(), estate.clusters.end(),
                   [&](const Cluster& c) { return c.zone == spec.residency; })) {
    fail("residency", "no cluster in the estate is in residency zone \"" + spec.residency + "\"");
  }
  if (!spec.team.empty() && !estate.teams.empty() && !estate.FindTeam(spec.team)) {
    fail("labels.team", "unknown team \"" + spec.team + "\"" + hint(spec.team, names(estate.teams)));
  } else if (!estate.queues.empty() && !estate.QueueForTeam(spec.team)) {
    std::string teams;
    for (const auto& q : estate.queues) teams += (teams.empty() ? "" : ", ") + q.team;
    fail("labels.team", spec.team.empty() ? "the job names no team: set resources.labels.team to one of " + teams
                                          : "team \"" + spec.team + "\" has no queue; teams with queues: " + teams);
  }
  for (const auto& d : spec.datasets) {
    if (!estate.datasets.empty() &&
        std::none_of(estate.datasets.begin(), estate.datasets.end(), [&](const Dataset& e) { return e.name == d.name; })) {
      fail("datasets", "unknown dataset \"" + d.name + "\"" + hint(d.name, names(estate.datasets)));
    }
  }
  // Federated identities: each one the estate has, that the job's team may
  // use, at most one per cloud (its SDKs read one set of variables).
  std::set<std::string> kinds;
  for (const std::string& name : spec.identities) {
    const CloudFederation* fed = estate.identity.FindFederation(name);
    if (!fed) {
      fail("identities", "unknown identity \"" + name + "\"" + hint(name, names(estate.identity.federations)));
    } else if (!fed->AllowsTeam(spec.team)) {
      fail("identities", "identity \"" + name + "\" is not allowed to team \"" + spec.team + "\"");
    } else if (!kinds.insert(fed->kind).second) {
      fail("identities", "two identities of kind " + fed->kind + ": a job's " + fed->kind + " SDK reads one");
    }
  }
  // Secret references: each one a store lets the job's team read, so that
  // a reference it may not read is refused now, not at launch.
  for (const auto& [var, ref] : spec.secret_refs) {
    if (estate.identity.StoreFor(ref.scheme, ref.cluster, spec.team, ref.Path())) continue;
    std::string field = "secrets." + var;
    const std::string kind = ref.scheme == "aws-sm" ? "aws-secrets-manager" : "kubernetes";
    if (std::none_of(estate.identity.secret_stores.begin(), estate.identity.secret_stores.end(),
                     [&](const SecretStore& s) { return s.kind == kind; })) {
      fail(field, ref.reference + ": the estate has no secret store for " + ref.scheme +
                      ":// references (identity.secret_stores)");
    } else {
      fail(field, "team \"" + spec.team + "\" may not read " + ref.reference +
                      ": no store in identity.secret_stores grants it that secret");
    }
  }
  if (errors.empty()) return Status::Ok();
  std::string msg = "job cannot run on this estate: " + errors.front().ToString();
  return InvalidArgument(msg, std::move(errors));
}

}  // namespace causeway
