// The estate's parser, shared by the files that read its sections
// (internal to src/spec): the providers, clusters, prices, teams, datasets
// and queues in estate.cc; telemetry, access, identity, audit, the reaper
// and admission policies in estate_governance.cc. Every error names the
// file, line, column and field.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/estate.h"
#include "causeway/job_spec.h"
#include "causeway/resources.h"
#include "spec/settings_reader.h"
#include "spec/yaml_reader.h"

namespace causeway::estate_detail {

using spec::BlockReader;
using spec::JoinField;
using spec::KeySet;
using spec::YamlReader;

// A name the estate gives a provider, cluster, team, queue...: lower case
// letters, digits, "-", "_" and ".", starting with a letter or digit.
inline bool IsName(std::string_view s) {
  if (s.empty() || s.size() > 63 || !std::isalnum(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '-' || c == '_' || c == '.';
  });
}

class EstateParser {
 public:
  EstateParser(const std::string& file, const EstateKinds& kinds) : r_(file), kinds_(kinds) {}

  // The whole estate, or every error found in it.
  Result<Estate> Parse(std::string_view text);

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
      if (out) blocks_.push_back({block, JoinField(f, k.*key), out});
    }
    return out;
  }
  // Each kind block read, for the cross-references checked once the whole
  // estate is (CheckKindReferences).
  struct Block {
    YAML::Node node;
    std::string field;
    std::shared_ptr<const KindSettings> settings;
  };
  void CheckKindReferences();

  void ParseProvider(const YAML::Node& n, const std::string& f);

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

  void ParseCluster(const YAML::Node& n, const std::string& f);

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

  // One entry of a cluster's node_pools (a CPU-only pool when it has no
  // gpu_type); `seen` holds the cluster's pool names so far.
  NodePool ParseNodePool(const YAML::Node& pn, const std::string& pf, std::set<std::string>& seen);
  // `software:` of a pool: names of kDeclaredSoftware to versions or images.
  void ParseSoftware(const YAML::Node& n, const std::string& f, NodePool& pool);

  void ParsePrice(const YAML::Node& n, const std::string& f);

  void ParseReservation(const YAML::Node& n, const std::string& f);

  void ParseTeam(const YAML::Node& n, const std::string& f);

  void ParseDataset(const YAML::Node& n, const std::string& f);
  // The residency zone of `provider`'s `region` (the `provider` and
  // `region` fields of entry `n` at `f`); "" and reported when either is
  // unknown.
  std::string RegionZone(const YAML::Node& n, const std::string& f, const std::string& provider,
                         const std::string& region);
  // `data:` (estate_data.cc): storage locations and transfer prices.
  void ParseData(const YAML::Node& n, const std::string& f);
  // "provider/region", "provider" or "*" as a transfer price's end.
  bool KnownPlace(const std::string& place) const;
  bool KnownZone(const std::string& zone) const {
    for (const auto& p : e_.providers) {
      for (const auto& r : p.regions) {
        if (r.zone == zone) return true;
      }
    }
    return false;
  }

  // Whether some cluster offers GPU type `type`.
  bool KnownFlavor(const std::string& type) const {
    for (const auto& c : e_.clusters) {
      for (const auto& p : c.node_pools) {
        if (p.gpu_type == type) return true;
      }
    }
    return false;
  }

  void ParseQueue(const YAML::Node& n, const std::string& f);

  void ParseTelemetry(const YAML::Node& n, const std::string& f);

  void ParseAccess(const YAML::Node& n, const std::string& f);

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

  void ParseIdentity(const YAML::Node& n, const std::string& f);
  // One of identity.federations (after identity.workload, whose audiences
  // it must be among).
  void ParseFederation(const YAML::Node& n, const std::string& f, std::set<std::string>& names);
  // One of identity.secret_stores (after identity.federations, one of
  // which it is read through).
  void ParseSecretStore(const YAML::Node& n, const std::string& f, std::set<std::string>& names);

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

  void ParseAudit(const YAML::Node& n, const std::string& f);

  // estate_readiness.cc
  void ParseReadiness(const YAML::Node& n, const std::string& f);
  void ParseControl(const YAML::Node& n, const std::string& f, std::set<std::string>& declared,
                    std::set<std::string>& ids);
  ControlOwner Owner(const YAML::Node& n, const std::string& f);
  std::map<std::string, ControlOwner> OwnerMap(const YAML::Node& n, const std::string& f,
                                               const std::set<std::string>& ids);
  // Reports `id` at `at` unless it is a built-in or added control.
  bool KnownControl(const YAML::Node& at, const std::string& f, const std::string& id, const std::set<std::string>& ids);
  void ParseProviderReadiness(const YAML::Node& n, const std::string& f, const std::set<std::string>& ids,
                              std::set<std::string>& seen);
  // `key` of `n` as a list, each item with its field ("f.key[i]").
  void SubList(const YAML::Node& n, const std::string& f, const char* key, const char* items,
               const std::function<void(const YAML::Node&, const std::string&)>& each);
  // `key` of `n` as a map of control ids to text, each text `valid` (which
  // reports what is wrong with it).
  std::map<std::string, std::string> ControlTexts(
      const YAML::Node& n, const std::string& f, const char* key, const std::set<std::string>& ids,
      const std::function<bool(const YAML::Node&, const std::string&, const std::string&)>& valid);
  std::optional<ProviderDeclaration> Declaration(const YAML::Node& n, const std::string& f,
                                                 const std::set<std::string>& ids);

  void ParseReaper(const YAML::Node& n, const std::string& f);

  void ParsePolicy(const YAML::Node& n, const std::string& f);

  YamlReader r_;
  const EstateKinds& kinds_;
  Estate e_;
  std::set<std::string> queue_names_, queue_teams_, policy_names_, reaper_names_;
  std::vector<Block> blocks_;
  std::set<std::string> provider_names_, cluster_names_, reservation_names_, team_names_, dataset_names_,
      location_names_;
};

}  // namespace causeway::estate_detail
