#include "causeway/estate.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <set>

#include "causeway/job_spec.h"
#include "causeway/resources.h"
#include "spec/settings_reader.h"
#include "spec/yaml_reader.h"

namespace causeway {

int Cluster::TotalGpus() const {
  int total = 0;
  for (const auto& p : node_pools) total += p.gpus_per_node * p.nodes;
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

namespace {

using spec::BlockReader;
using spec::JoinField;
using spec::KeySet;
using spec::YamlReader;

bool IsName(std::string_view s) {
  if (s.empty() || s.size() > 63 || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '-' || c == '_' || c == '.';
  });
}

class EstateParser {
 public:
  EstateParser(const std::string& file, const EstateKinds& kinds) : r_(file), kinds_(kinds) {}

  Result<Estate> Parse(std::string_view text) {
    ASSIGN_OR_RETURN(YAML::Node root, spec::LoadYaml(text, r_.file()));
    static const KeySet kKeys{
        {"currency", "providers", "clusters", "prices", "reservations", "teams", "datasets", "queues", "policies",
         "reaper", "telemetry", "access", "identity", "audit"}};
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
    List(root, "datasets", [&](const YAML::Node& n, const std::string& f) { ParseDataset(n, f); });
    List(root, "queues", [&](const YAML::Node& n, const std::string& f) { ParseQueue(n, f); });
    List(root, "policies", [&](const YAML::Node& n, const std::string& f) { ParsePolicy(n, f); });
    List(root, "reaper", [&](const YAML::Node& n, const std::string& f) { ParseReaper(n, f); });
    if (YAML::Node t = Get(root, "telemetry"); t.IsDefined()) ParseTelemetry(t, "telemetry");
    List(root, "access", [&](const YAML::Node& n, const std::string& f) { ParseAccess(n, f); });
    if (YAML::Node t = Get(root, "identity"); t.IsDefined()) ParseIdentity(t, "identity");
    if (YAML::Node t = Get(root, "audit"); t.IsDefined()) ParseAudit(t, "audit");
    RETURN_IF_ERROR(r_.Finish("estate"));
    return std::move(e_);
  }

 private:
  static YAML::Node Get(const YAML::Node& m, std::string_view k) { return YamlReader::Child(m, k); }

  void List(const YAML::Node& root, const char* key,
            const std::function<void(const YAML::Node&, const std::string&)>& each) {
    YAML::Node n = Get(root, key);
    if (!n.IsDefined() || n.IsNull()) return;
    if (!n.IsSequence()) {
      r_.Error(n, key, "expected a list");
      return;
    }
    int i = 0;
    for (const auto& item : n) each(item, std::string(key) + "[" + std::to_string(i++) + "]");
  }

  // A required string field; reports it missing at the parent.
  std::string Str(const YAML::Node& m, const char* key, const std::string& field, bool required = true) {
    YAML::Node n = Get(m, key);
    if (!n.IsDefined() || n.IsNull()) {
      if (required) r_.Error(m, JoinField(field, key), std::string("missing required field \"") + key + "\"");
      return "";
    }
    return r_.String(n, JoinField(field, key)).value_or("");
  }

  std::string NameField(const YAML::Node& m, const std::string& field, std::set<std::string>& seen,
                        const char* what) {
    std::string name = Str(m, "name", field);
    if (name.empty()) return "";
    if (!IsName(name)) {
      r_.Error(Get(m, "name"), JoinField(field, "name"),
               "invalid name \"" + name + "\": expected lower-case letters, digits, '-', '_' or '.'");
      return "";
    }
    if (!seen.insert(name).second) {
      r_.Error(Get(m, "name"), JoinField(field, "name"), std::string("duplicate ") + what + " \"" + name + "\"");
      return "";
    }
    return name;
  }

  std::string GpuType(const YAML::Node& m, const std::string& field) {
    std::string raw = Str(m, "gpu_type", field);
    if (raw.empty()) return "";
    auto t = NormalizeGpuType(raw);
    if (!t.ok()) {
      r_.Error(Get(m, "gpu_type"), JoinField(field, "gpu_type"), t.status().message());
      return "";
    }
    return *t;
  }

  std::optional<Money> Amount(const YAML::Node& m, const char* key, const std::string& field, bool required) {
    std::string s = Str(m, key, field, required);
    if (s.empty()) return std::nullopt;
    auto money = Money::Parse(s, e_.currency);
    if (!money.ok()) {
      r_.Error(Get(m, key), JoinField(field, key), money.status().message());
      return std::nullopt;
    }
    if (money->micros() < 0) {
      r_.Error(Get(m, key), JoinField(field, key), "a price cannot be negative");
      return std::nullopt;
    }
    return *money;
  }

  // The keys of the kinds' blocks on providers or clusters (a key without
  // a parser names no block).
  std::vector<std::string_view> BlockKeys(std::string EstateKind::*key, KindSettingsParser EstateKind::*parse) const {
    std::vector<std::string_view> keys;
    for (const EstateKind& k : kinds_) {
      if (!(k.*key).empty() && k.*parse) keys.push_back(k.*key);
    }
    return keys;
  }

  const EstateKind* FindKind(std::string_view name) const {
    for (const EstateKind& k : kinds_) {
      if (k.name == name) return &k;
    }
    return nullptr;
  }

  // Reads the block of entry `n` (at field `f`) that belongs to `kind`,
  // refusing the other kinds' blocks: `slurm:` means nothing on a local
  // cluster. Null when the entry has no block for its kind.
  std::shared_ptr<const KindSettings> KindBlock(const YAML::Node& n, const std::string& f, const EstateKind* kind,
                                                std::string EstateKind::*key, KindSettingsParser EstateKind::*parse,
                                                const char* entry) {
    std::shared_ptr<const KindSettings> out;
    for (const EstateKind& k : kinds_) {
      if ((k.*key).empty() || !(k.*parse)) continue;
      YAML::Node block = Get(n, k.*key);
      if (!block.IsDefined() || block.IsNull()) continue;
      if (kind != &k) {
        if (kind) {
          r_.Error(block, JoinField(f, k.*key),
                   k.*key + " settings are for " + entry + " of kind " + k.name + ", not " + kind->name);
        }
        continue;
      }
      BlockReader reader(r_, block, JoinField(f, k.*key));
      out = (k.*parse)(reader);
    }
    return out;
  }

  void ParseProvider(const YAML::Node& n, const std::string& f) {
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

  // The strings of list `key` of map `n` (at field `f`), if present.
  void StringList(const YAML::Node& n, const std::string& f, const char* key, const char* example,
                  std::vector<std::string>& out) {
    YAML::Node l = Get(n, key);
    if (!l.IsDefined()) return;
    if (!l.IsSequence()) {
      r_.Error(l, JoinField(f, key), std::string("expected a list such as ") + example);
      return;
    }
    for (size_t i = 0; i < l.size(); ++i) {
      if (auto v = r_.String(l[i], JoinField(f, key) + "[" + std::to_string(i) + "]")) out.push_back(*v);
    }
  }

  void ParseCluster(const YAML::Node& n, const std::string& f) {
    KeySet keys{{"name", "provider", "region", "node_pools", "inject_envs", "storage", "bill_resources"},
                {"description"}};
    for (std::string_view k : BlockKeys(&EstateKind::cluster_key, &EstateKind::parse_cluster)) keys.known.push_back(k);
    if (!r_.CheckMap(n, f, keys)) return;
    Cluster c;
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
    if (kind && !c.settings && !kind->cluster_block_required.empty()) {
      r_.Error(n, JoinField(f, kind->cluster_key), kind->cluster_block_required);
    }
    c.name = NameField(n, f, cluster_names_, "cluster");
    c.provider = Str(n, "provider", f);
    c.region = Str(n, "region", f);
    if (const Provider* p = e_.FindProvider(c.provider)) {
      auto reg = std::find_if(p->regions.begin(), p->regions.end(),
                              [&](const Region& r) { return r.name == c.region; });
      if (reg == p->regions.end()) {
        if (!c.region.empty()) {
          r_.Error(Get(n, "region"), JoinField(f, "region"),
                   "provider \"" + c.provider + "\" has no region \"" + c.region + "\"");
        }
      } else {
        c.zone = reg->zone;
      }
    } else if (!c.provider.empty()) {
      std::vector<std::string_view> names;
      for (const auto& p2 : e_.providers) names.push_back(p2.name);
      std::string hint = spec::ClosestMatch(c.provider, names);
      r_.Error(Get(n, "provider"), JoinField(f, "provider"),
               "unknown provider \"" + c.provider + "\"" + (hint.empty() ? "" : "; did you mean \"" + hint + "\"?"));
    }
    YAML::Node pools = Get(n, "node_pools");
    if (!pools.IsDefined() || !pools.IsSequence() || pools.size() == 0) {
      r_.Error(pools.IsDefined() ? pools : n, JoinField(f, "node_pools"),
               "expected a list of node pools such as [{name: h200, gpu_type: H200, gpus_per_node: 8, nodes: 4}]");
    } else {
      std::set<std::string> seen;
      int i = 0;
      for (const auto& pn : pools) {
        std::string pf = JoinField(f, "node_pools[" + std::to_string(i++) + "]");
        static const KeySet kPoolKeys{{"name", "gpu_type", "gpus_per_node", "nodes", "interconnect"}};
        if (!r_.CheckMap(pn, pf, kPoolKeys)) continue;
        NodePool pool;
        pool.name = NameField(pn, pf, seen, "node pool");
        pool.gpu_type = GpuType(pn, pf);
        if (auto g = Get(pn, "gpus_per_node"); g.IsDefined()) {
          pool.gpus_per_node = static_cast<int>(r_.Int(g, JoinField(pf, "gpus_per_node"), 1, kMaxGpusPerNode).value_or(0));
        } else {
          r_.Error(pn, JoinField(pf, "gpus_per_node"), "missing required field \"gpus_per_node\"");
        }
        if (auto g = Get(pn, "nodes"); g.IsDefined()) {
          pool.nodes = static_cast<int>(r_.Int(g, JoinField(pf, "nodes"), 0, 100000).value_or(0));
        } else {
          r_.Error(pn, JoinField(pf, "nodes"), "missing required field \"nodes\"");
        }
        pool.interconnect = Str(pn, "interconnect", pf, false);
        if (pool.interconnect.empty()) pool.interconnect = "ethernet";
        if (std::find(std::begin(kInterconnects), std::end(kInterconnects), pool.interconnect) ==
            std::end(kInterconnects)) {
          r_.Error(Get(pn, "interconnect"), JoinField(pf, "interconnect"),
                   "unknown interconnect \"" + pool.interconnect + "\": expected infiniband, roce, ethernet, nvlink or none");
        }
        c.node_pools.push_back(std::move(pool));
      }
    }
    if (!c.name.empty()) e_.clusters.push_back(std::move(c));
  }

  // Checks that `cluster` exists and has a pool of `gpu_type`.
  const Cluster* ClusterWithGpu(const YAML::Node& n, const std::string& f, const std::string& cluster,
                                const std::string& gpu_type) {
    const Cluster* c = e_.FindCluster(cluster);
    if (!c) {
      if (!cluster.empty()) r_.Error(Get(n, "cluster"), JoinField(f, "cluster"), "unknown cluster \"" + cluster + "\"");
      return nullptr;
    }
    if (!gpu_type.empty() && std::none_of(c->node_pools.begin(), c->node_pools.end(),
                                          [&](const NodePool& p) { return p.gpu_type == gpu_type; })) {
      r_.Error(Get(n, "gpu_type"), JoinField(f, "gpu_type"),
               "cluster \"" + cluster + "\" has no " + gpu_type + " node pool");
      return nullptr;
    }
    return c;
  }

  void ParsePrice(const YAML::Node& n, const std::string& f) {
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

  void ParseReservation(const YAML::Node& n, const std::string& f) {
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
                   "reserves " + std::to_string(res.count) + " " + res.gpu_type + " GPUs but cluster \"" +
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

  void ParseTeam(const YAML::Node& n, const std::string& f) {
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

  void ParseDataset(const YAML::Node& n, const std::string& f) {
    static const KeySet kKeys{{"name", "replicas"}};
    if (!r_.CheckMap(n, f, kKeys)) return;
    Dataset d;
    d.name = NameField(n, f, dataset_names_, "dataset");
    YAML::Node reps = Get(n, "replicas");
    if (!reps.IsDefined() || !reps.IsSequence()) {
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

  // A rate such as 0.05 (events per hour): a decimal number from 0 to 100.
  // Whether some cluster offers GPU type `type`.
  bool KnownFlavor(const std::string& type) const {
    for (const auto& c : e_.clusters) {
      for (const auto& p : c.node_pools) {
        if (p.gpu_type == type) return true;
      }
    }
    return false;
  }

  void ParseQueue(const YAML::Node& n, const std::string& f) {
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
                   "unknown flavor \"" + raw + "\": expected a GPU type of a cluster, optionally with -spot (H100, H100-spot)");
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

  void ParseTelemetry(const YAML::Node& n, const std::string& f) {
    static const KeySet kKeys{{"prometheus", "interval", "job_label", "attempt_label", "gpu_label"}};
    if (!r_.CheckMap(n, f, kKeys)) return;
    TelemetryConfig t;
    t.prometheus = Str(n, "prometheus", f);
    if (!t.prometheus.empty() && t.prometheus.rfind("http://", 0) != 0) {
      r_.Error(Get(n, "prometheus"), JoinField(f, "prometheus"), "expected http://HOST:PORT");
    }
    DurationField(n, f, "interval", t.interval);
    for (auto [key, out] : {std::pair{"job_label", &t.job_label}, std::pair{"attempt_label", &t.attempt_label},
                            std::pair{"gpu_label", &t.gpu_label}}) {
      std::string v = Str(n, key, f, false);
      if (!v.empty()) *out = v;
    }
    e_.telemetry = std::move(t);
  }

  void ParseAccess(const YAML::Node& n, const std::string& f) {
    static const KeySet kKeys{{"group", "role", "team"}};
    if (!r_.CheckMap(n, f, kKeys)) return;
    AccessBinding b;
    b.group = Str(n, "group", f);
    b.role = Str(n, "role", f);
    b.team = Str(n, "team", f, false);
    b.source = f;
    if (!b.role.empty() && std::find(std::begin(kRoleNames), std::end(kRoleNames), b.role) == std::end(kRoleNames)) {
      std::vector<std::string_view> roles(std::begin(kRoleNames), std::end(kRoleNames));
      std::string hint = spec::ClosestMatch(b.role, roles);
      r_.Error(Get(n, "role"), JoinField(f, "role"),
               "unknown role \"" + b.role + "\"" +
                   (hint.empty() ? "; expected admin, platform, team-admin, researcher, finance, auditor or viewer"
                                 : "; did you mean \"" + hint + "\"?"));
      return;
    }
    if (!b.team.empty() && !e_.FindTeam(b.team)) {
      r_.Error(Get(n, "team"), JoinField(f, "team"), "unknown team \"" + b.team + "\"");
      return;
    }
    if (!b.group.empty() && !b.role.empty()) e_.access.push_back(std::move(b));
  }

  // A duration field of `n`, if present and positive.
  void DurationField(const YAML::Node& n, const std::string& f, const char* key, Micros& out) {
    YAML::Node v = Get(n, key);
    if (!v.IsDefined()) return;
    auto d = ParseDuration(r_.String(v, JoinField(f, key)).value_or(""));
    if (d.ok() && d->count() > 0) {
      out = *d;
    } else {
      r_.Error(v, JoinField(f, key), d.ok() ? "must be longer than zero" : d.status().message());
    }
  }

  // An http(s) URL field; `f`.`key` names it in errors.
  std::string UrlField(const YAML::Node& n, const std::string& f, const char* key, bool required) {
    std::string url = Str(n, key, f, required);
    if (!url.empty() && url.rfind("https://", 0) != 0 && url.rfind("http://", 0) != 0) {
      r_.Error(Get(n, key), JoinField(f, key), "expected an https:// URL");
    }
    while (!url.empty() && url.back() == '/') url.pop_back();
    return url;
  }

  void ParseIdentity(const YAML::Node& n, const std::string& f) {
    static const KeySet kKeys{{"oidc", "workload", "deprovision", "breakglass"}};
    if (!r_.CheckMap(n, f, kKeys)) return;
    if (YAML::Node o = Get(n, "oidc"); o.IsDefined()) {
      std::string of = JoinField(f, "oidc");
      static const KeySet kOidc{{"issuer", "audience", "audiences", "username_claim", "groups_claim", "leeway",
                                 "require_provisioned"}};
      if (r_.CheckMap(o, of, kOidc)) {
        OidcConfig c;
        c.issuer = UrlField(o, of, "issuer", true);
        std::string one = Str(o, "audience", of, false);
        if (!one.empty()) c.audiences.push_back(one);
        StringList(o, of, "audiences", "[causeway, 0oa1b2c3]", c.audiences);
        if (c.audiences.empty()) r_.Error(o, of, "needs audience: the client id tokens are issued for");
        for (auto [key, out] : {std::pair{"username_claim", &c.username_claim}, std::pair{"groups_claim", &c.groups_claim}}) {
          std::string v = Str(o, key, of, false);
          if (!v.empty()) *out = v;
        }
        DurationField(o, of, "leeway", c.leeway);
        if (c.leeway > Micros(300LL * 1000000)) r_.Error(Get(o, "leeway"), JoinField(of, "leeway"), "at most 5m");
        if (auto v = Get(o, "require_provisioned"); v.IsDefined()) {
          c.require_provisioned = r_.Bool(v, JoinField(of, "require_provisioned")).value_or(false);
        }
        e_.identity.oidc = std::move(c);
      }
    }
    if (YAML::Node w = Get(n, "workload"); w.IsDefined()) {
      std::string wf = JoinField(f, "workload");
      static const KeySet kWorkload{{"issuer", "audiences", "lifetime", "alg"}};
      if (r_.CheckMap(w, wf, kWorkload)) {
        WorkloadIdentityConfig c;
        c.issuer = UrlField(w, wf, "issuer", false);  // default: the server's own address
        StringList(w, wf, "audiences", "[sts.amazonaws.com]", c.audiences);
        if (c.audiences.empty()) r_.Error(w, wf, "needs audiences: who the job tokens are for, e.g. [sts.amazonaws.com]");
        DurationField(w, wf, "lifetime", c.lifetime);
        if (c.lifetime > Micros(24LL * 3600 * 1000000)) {
          r_.Error(Get(w, "lifetime"), JoinField(wf, "lifetime"), "at most 24h: tokens are refreshed, not long-lived");
        }
        std::string alg = Str(w, "alg", wf, false);
        if (!alg.empty()) {
          if (alg != "ES256" && alg != "RS256") r_.Error(Get(w, "alg"), JoinField(wf, "alg"), "expected ES256 or RS256");
          c.alg = alg;
        }
        e_.identity.workload = std::move(c);
      }
    }
    if (YAML::Node b = Get(n, "breakglass"); b.IsDefined()) {
      std::string bf = JoinField(f, "breakglass");
      static const KeySet kBreakglass{{"approvers", "self_approval", "max_duration", "roles", "groups", "webhook"}};
      if (r_.CheckMap(b, bf, kBreakglass)) {
        BreakglassConfig& c = e_.identity.breakglass;
        c.enabled = true;
        if (auto v = Get(b, "self_approval"); v.IsDefined()) {
          c.self_approval = r_.Bool(v, JoinField(bf, "self_approval")).value_or(false);
          if (c.self_approval) c.approvers = 0;
        }
        if (auto v = Get(b, "approvers"); v.IsDefined()) {
          c.approvers = static_cast<int>(r_.Int(v, JoinField(bf, "approvers"), 0, 1).value_or(1));
          if (c.approvers == 0 && !c.self_approval) {
            r_.Error(v, JoinField(bf, "approvers"),
                     "0 lets a requester activate their own grant: say so explicitly with self_approval: true");
          }
          if (c.approvers > 0 && c.self_approval) {
            r_.Error(v, JoinField(bf, "approvers"), "self_approval: true means no approver: remove approvers or set it to 0");
          }
        }
        StringList(b, bf, "groups", "[sre-oncall]", c.groups);
        if (c.groups.empty()) r_.Error(b, bf, "needs groups: the IdP groups whose members may ask, e.g. [sre-oncall]");
        DurationField(b, bf, "max_duration", c.max_duration);
        std::vector<std::string> roles;
        StringList(b, bf, "roles", "[admin, platform]", roles);
        for (const auto& role : roles) {
          if (std::find(std::begin(kRoleNames), std::end(kRoleNames), role) == std::end(kRoleNames)) {
            r_.Error(Get(b, "roles"), JoinField(bf, "roles"), "unknown role \"" + role + "\"");
          }
        }
        c.roles = roles;
        if (c.roles.empty()) r_.Error(b, bf, "needs roles: the roles that may be asked for, e.g. [platform]");
        c.webhook = UrlField(b, bf, "webhook", false);
      }
    }
    if (YAML::Node d = Get(n, "deprovision"); d.IsDefined()) {
      std::string df = JoinField(f, "deprovision");
      static const KeySet kDeprovision{{"queued", "running", "reassign_to"}};
      if (r_.CheckMap(d, df, kDeprovision)) {
        DeprovisionConfig& c = e_.identity.deprovision;
        std::string queued = Str(d, "queued", df, false), running = Str(d, "running", df, false);
        if (!queued.empty()) c.queued = queued;
        if (!running.empty()) c.running = running;
        c.reassign_to = Str(d, "reassign_to", df, false);
        if (c.queued != "cancel" && c.queued != "keep" && c.queued != "reassign") {
          r_.Error(Get(d, "queued"), JoinField(df, "queued"), "expected cancel, keep or reassign");
        }
        if ((c.queued == "reassign") != !c.reassign_to.empty()) {
          r_.Error(d, df, "queued: reassign goes with reassign_to: the userName that takes the jobs over");
        }
        if (c.running != "stop" && c.running != "finish") {
          r_.Error(Get(d, "running"), JoinField(df, "running"), "expected stop or finish");
        }
      }
    }
  }

  // A date (2025-06-01) or an RFC 3339 time, if present.
  std::optional<Timestamp> DateField(const YAML::Node& n, const std::string& f, const char* key, bool required) {
    std::string s = Str(n, key, f, required);
    if (s.empty()) return std::nullopt;
    auto t = ParseRfc3339(s.size() == 10 ? s + "T00:00:00Z" : s);
    if (!t.ok()) {
      r_.Error(Get(n, key), JoinField(f, key), "expected a date (2025-06-01) or an RFC 3339 time");
      return std::nullopt;
    }
    return *t;
  }

  // `provider` of an audit entry: one of the estate's providers.
  std::string AuditProvider(const YAML::Node& n, const std::string& f) {
    std::string p = Str(n, "provider", f);
    if (!p.empty() && !e_.FindProvider(p)) {
      r_.Error(Get(n, "provider"), JoinField(f, "provider"), "unknown provider \"" + p + "\"");
    }
    return p;
  }

  void ParseAudit(const YAML::Node& n, const std::string& f) {
    static const KeySet kKeys{{"retention", "data_logging", "buckets", "log_sources"}};
    if (!r_.CheckMap(n, f, kKeys)) return;
    AuditCoverageConfig& c = e_.audit;
    if (Get(n, "retention").IsDefined()) {
      Micros r{0};
      DurationField(n, f, "retention", r);
      if (r.count() > 0) c.retention = r;
    }
    List(n, "data_logging", [&](const YAML::Node& d, const std::string& df) {
      static const KeySet kOrg{{"provider", "since"}};
      if (!r_.CheckMap(d, JoinField(f, df), kOrg)) return;
      std::string field = JoinField(f, df);
      OrgDataLogging o{AuditProvider(d, field), {}};
      if (auto since = DateField(d, field, "since", true)) o.since = *since;
      c.data_logging.push_back(std::move(o));
    });
    std::set<std::string> buckets;
    List(n, "buckets", [&](const YAML::Node& b, const std::string& bf) {
      static const KeySet kBucket{{"provider", "name", "data_logging", "created", "holds"}};
      std::string field = JoinField(f, bf);
      if (!r_.CheckMap(b, field, kBucket)) return;
      AuditBucket bucket;
      bucket.provider = AuditProvider(b, field);
      bucket.name = Str(b, "name", field);
      if (!bucket.name.empty() && !buckets.insert(bucket.provider + "/" + bucket.name).second) {
        r_.Error(Get(b, "name"), JoinField(field, "name"), "duplicate bucket \"" + bucket.name + "\" at " + bucket.provider);
      }
      if (auto v = Get(b, "data_logging"); v.IsDefined()) bucket.data_logging = r_.Bool(v, JoinField(field, "data_logging"));
      bucket.created = DateField(b, field, "created", false);
      bucket.holds = Str(b, "holds", field, false);
      c.buckets.push_back(std::move(bucket));
    });
    List(n, "log_sources", [&](const YAML::Node& l, const std::string& lf) {
      static const KeySet kSource{{"provider", "source", "max_gap", "retention"}};
      std::string field = JoinField(f, lf);
      if (!r_.CheckMap(l, field, kSource)) return;
      AuditLogSource src;
      src.provider = AuditProvider(l, field);
      src.source = Str(l, "source", field);
      if (!src.source.empty() &&
          std::find(std::begin(kAuditSourceNames), std::end(kAuditSourceNames), src.source) == std::end(kAuditSourceNames)) {
        r_.Error(Get(l, "source"), JoinField(field, "source"),
                 "unknown log source \"" + src.source + "\": expected k8s, cloudtrail, gcp, azure, okta or slurm");
      }
      DurationField(l, field, "max_gap", src.max_gap);
      if (Get(l, "retention").IsDefined()) {
        Micros r{0};
        DurationField(l, field, "retention", r);
        if (r.count() > 0) src.retention = r;
      }
      c.log_sources.push_back(std::move(src));
    });
  }

  void ParseReaper(const YAML::Node& n, const std::string& f) {
    static const KeySet kKeys{
        {"name", "team", "threshold", "window", "grace", "action", "dry_run", "max_gap", "exempt_labels"}};
    if (!r_.CheckMap(n, f, kKeys)) return;
    ReaperConfig c;
    c.name = NameField(n, f, reaper_names_, "reaper policy");
    c.team = Str(n, "team", f, false);
    if (!c.team.empty() && !e_.FindTeam(c.team)) {
      r_.Error(Get(n, "team"), JoinField(f, "team"), "unknown team \"" + c.team + "\"");
    }
    if (auto v = Get(n, "threshold"); v.IsDefined()) {
      c.threshold_percent = static_cast<int>(r_.Int(v, JoinField(f, "threshold"), 1, 100).value_or(20));
    }
    DurationField(n, f, "window", c.window);
    DurationField(n, f, "grace", c.grace);
    DurationField(n, f, "max_gap", c.max_gap);
    c.action = Str(n, "action", f, false);
    if (c.action.empty()) c.action = "cancel";
    if (c.action != "cancel" && c.action != "warn") {
      r_.Error(Get(n, "action"), JoinField(f, "action"), "expected cancel or warn, not \"" + c.action + "\"");
    }
    if (auto v = Get(n, "dry_run"); v.IsDefined()) c.dry_run = r_.Bool(v, JoinField(f, "dry_run")).value_or(false);
    StringList(n, f, "exempt_labels", "[interactive, keep=true]", c.exempt_labels);
    if (!c.name.empty()) e_.reaper.push_back(std::move(c));
  }

  void ParsePolicy(const YAML::Node& n, const std::string& f) {
    static const KeySet kKeys{{"name", "rule", "labels", "teams", "gpu_types", "zone", "max_gpus", "max_duration"}};
    if (!r_.CheckMap(n, f, kKeys)) return;
    PolicyConfig p;
    p.name = NameField(n, f, policy_names_, "policy");
    p.rule = Str(n, "rule", f);
    if (!p.rule.empty() && std::find(std::begin(kPolicyRules), std::end(kPolicyRules), p.rule) == std::end(kPolicyRules)) {
      std::vector<std::string_view> rules(std::begin(kPolicyRules), std::end(kPolicyRules));
      std::string hint = spec::ClosestMatch(p.rule, rules);
      r_.Error(Get(n, "rule"), JoinField(f, "rule"),
               "unknown rule \"" + p.rule + "\"" + (hint.empty() ? "; expected require-labels, pinned-image, allowed-gpu-types, require-residency or max-job-size" : "; did you mean \"" + hint + "\"?"));
      return;
    }
    StringList(n, f, "labels", "[team, cost-center]", p.labels);
    StringList(n, f, "teams", "[nlp, vision]", p.teams);
    StringList(n, f, "gpu_types", "[H100, A100-80GB]", p.gpu_types);
    for (auto& g : p.gpu_types) g = NormalizeGpuType(g).value_or(g);
    for (const auto& t : p.teams) {
      if (!e_.FindTeam(t)) r_.Error(Get(n, "teams"), JoinField(f, "teams"), "unknown team \"" + t + "\"");
    }
    p.zone = Str(n, "zone", f, false);
    if (auto v = Get(n, "max_gpus"); v.IsDefined()) p.max_gpus = static_cast<int>(r_.Int(v, JoinField(f, "max_gpus"), 1, 1'000'000).value_or(1));
    if (auto v = Get(n, "max_duration"); v.IsDefined()) {
      auto d = ParseDuration(r_.String(v, JoinField(f, "max_duration")).value_or(""));
      if (d.ok()) {
        p.max_duration = *d;
      } else {
        r_.Error(v, JoinField(f, "max_duration"), d.status().message());
      }
    }
    auto need = [&](bool ok, const char* what) {
      if (!ok) r_.Error(n, f, "rule " + p.rule + " needs " + what);
    };
    if (p.rule == "require-labels") need(!p.labels.empty(), "labels: [owner, ...]");
    if (p.rule == "allowed-gpu-types") need(!p.gpu_types.empty(), "gpu_types: [...]");
    if (p.rule == "require-residency") need(!p.zone.empty(), "zone: eu (or another residency zone)");
    if (p.rule == "max-job-size") need(p.max_gpus || p.max_duration, "max_gpus and/or max_duration");
    if (!p.name.empty()) e_.policies.push_back(std::move(p));
  }

  YamlReader r_;
  const EstateKinds& kinds_;
  Estate e_;
  std::set<std::string> queue_names_, queue_teams_, policy_names_, reaper_names_;
  std::set<std::string> provider_names_, cluster_names_, reservation_names_, team_names_, dataset_names_;
};

}  // namespace

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

Status CheckJobAgainstEstate(const JobSpec& spec, const Estate& estate, const std::string& file) {
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

  if (spec.accelerators.empty()) {
    fail("resources.accelerators", "every pool in the estate has GPUs: add resources.accelerators, e.g. L4:1");
  }
  for (const auto& alt : spec.accelerators.alternatives) {
    bool offered = false;
    std::vector<std::string_view> types;
    for (const auto& c : estate.clusters) {
      for (const auto& p : c.node_pools) {
        types.push_back(p.gpu_type);
        if (p.gpu_type == alt.type && p.gpus_per_node >= alt.count) offered = true;
      }
    }
    if (!offered) {
      bool any_type = std::find(types.begin(), types.end(), alt.type) != types.end();
      fail("resources.accelerators",
           any_type ? "no cluster has " + std::to_string(alt.count) + " " + alt.type + " GPUs on one node"
                    : "no cluster in the estate offers " + alt.type + hint(alt.type, types));
    }
  }
  const Provider* provider = nullptr;
  if (!spec.cloud.empty()) {
    provider = estate.FindProvider(spec.cloud);
    if (!provider) fail("resources.infra", "unknown provider \"" + spec.cloud + "\"" + hint(spec.cloud, names(estate.providers)));
  }
  if (provider && !spec.region.empty() &&
      std::none_of(provider->regions.begin(), provider->regions.end(),
                   [&](const Region& r) { return r.name == spec.region; })) {
    fail("resources.region", "provider \"" + spec.cloud + "\" has no region \"" + spec.region + "\"" +
                                 hint(spec.region, names(provider->regions)));
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
  if (errors.empty()) return Status::Ok();
  std::string msg = "job cannot run on this estate: " + errors.front().ToString();
  return InvalidArgument(msg, std::move(errors));
}

}  // namespace causeway
