// The job spec's reader: SkyPilot's task format and Causeway's fields, from
// YAML to the typed JobSpec, with file, line, column and field in every
// error. Longer than the other files on purpose: it is one grammar, read top
// to bottom in the order of the format's reference (JobSpecParser), and
// split across files it would be one grammar scattered.
#include "causeway/job_spec.h"

#include "causeway/input.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "causeway/text.h"
#include "spec/software.h"
#include "spec/accelerators.h"
#include "spec/estate_parser.h"
#include "spec/service_spec.h"
#include "spec/yaml_reader.h"

namespace causeway {
namespace {

using spec::JoinField;
using spec::KeySet;
using spec::YamlReader;

const KeySet kTopKeys{
    {"name", "resources", "num_nodes", "envs", "file_mounts", "setup", "run", "workdir",
     "labels", "datasets", "checkpoint", "residency", "priority", "time_limit", "allow_remote_data", "sim",
     "recovery", "secrets", "identities", "failover"},
    {"config", "service", "volumes", "experimental", "event_callback"}};

// SkyPilot's storage object, with its internal keys (`_is_sky_managed`, …)
// and `force_managed` from files written for older releases.
const KeySet kMountKeys{{"source", "name", "store", "mode", "persistent", "config"},
                        {"force_managed", "_is_sky_managed", "_bucket_sub_path", "_force_delete"}};
const std::set<std::string> kStores{"s3", "gcs", "azure", "r2", "ibm", "oci", "nebius", "volume"};

const KeySet kResourceKeys{
    {"accelerators", "infra", "cloud", "region", "zone", "use_spot", "disk_size", "image_id", "labels", "any_of",
     "ordered", "cpus", "memory", "cuda", "driver"},
    {"instance_type", "ports", "disk_tier", "accelerator_args",
     "job_recovery", "spot_recovery", "network_tier", "autostop",
     "priority"}};

// SkyPilot's pattern, r'\$\{?\b([a-zA-Z_][a-zA-Z0-9_]*)\b\}?': a '$', an
// optional '{', a name, an optional '}' (braces need not pair). `on_match`
// gets the name and the whole match and returns what replaces it.
template <typename OnMatch>
std::string ScanVariables(std::string_view text, OnMatch on_match) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  auto start = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (text[i] != '$') {
      out += text[i++];
      continue;
    }
    size_t j = i + 1;
    if (j < text.size() && text[j] == '{') ++j;
    if (j >= text.size() || !start(text[j])) {
      out += text[i++];
      continue;
    }
    size_t k = j;
    while (k < text.size() && word(text[k])) ++k;
    std::string_view name = text.substr(j, k - j);
    if (k < text.size() && text[k] == '}') ++k;
    out += on_match(name, text.substr(i, k - i));
    i = k;
  }
  return out;
}

}  // namespace

std::string FillVariables(std::string_view text, const std::map<std::string, std::string>& vars) {
  if (text.find('$') == std::string_view::npos) return std::string(text);
  return ScanVariables(text, [&](std::string_view name, std::string_view whole) {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::string(whole) : it->second;
  });
}

std::vector<std::string> VariablesIn(std::string_view text) {
  std::vector<std::string> names;
  if (text.find('$') == std::string_view::npos) return names;
  ScanVariables(text, [&](std::string_view name, std::string_view whole) {
    names.emplace_back(name);
    return std::string(whole);
  });
  return names;
}

namespace {

// A provider's name as the estate spells it: lower case, with SkyPilot's
// alias "k8s" for "kubernetes".
std::string CanonicalCloud(std::string_view name) {
  std::string c = AsciiLower(name);
  return c == "k8s" ? "kubernetes" : c;
}

// What is wrong with a storage object's store or mode ("" when nothing);
// checked once variables are filled.
std::string StoreProblem(const std::string& store) {
  return kStores.count(store) ? "" : "expected s3, gcs, azure, r2, ibm, oci, nebius or volume, not \"" + store + "\"";
}
std::string ModeProblem(const std::string& mode) {
  static const std::set<std::string> kModes{"MOUNT", "COPY", "MOUNT_CACHED"};
  return kModes.count(mode) ? "" : "expected MOUNT, COPY or MOUNT_CACHED, not \"" + mode + "\"";
}
std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return std::toupper(ch); });
  return s;
}
// A storage object's fields filled from `vars` (the template as written).
void FillMount(const FileMount& t, const std::map<std::string, std::string>& vars, FileMount& m) {
  m.target = FillVariables(t.target, vars);
  m.source = FillVariables(t.source, vars);
  m.more_sources.clear();
  for (const std::string& more : t.more_sources) m.more_sources.push_back(FillVariables(more, vars));
  m.name = FillVariables(t.name, vars);
  m.store = AsciiLower(FillVariables(t.store, vars));
  m.mode = Upper(FillVariables(t.mode, vars));
}
bool NamesVariables(const FileMount& t) {
  for (const std::string* f : {&t.target, &t.source, &t.name, &t.store, &t.mode}) {
    if (f->find('$') != std::string::npos) return true;
  }
  return std::any_of(t.more_sources.begin(), t.more_sources.end(),
                     [](const std::string& m) { return m.find('$') != std::string::npos; });
}

bool IsLowerIdent(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '-' || c == '_';
  });
}

bool IsEnvName(std::string_view s) {
  if (s.empty() || s.size() > 256 || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](unsigned char c) { return std::isalnum(c) || c == '_'; });
}

bool IsSha256Digest(std::string_view s) {
  if (s.size() != 71 || s.substr(0, 7) != "sha256:") return false;
  return std::all_of(s.begin() + 7, s.end(), [](unsigned char c) {
    return std::isdigit(c) || (c >= 'a' && c <= 'f');
  });
}

class JobSpecParser {
 public:
  explicit JobSpecParser(const std::string& file) : r_(file) {}

  Result<ParsedJobSpec> Parse(std::string_view text) {
    ASSIGN_OR_RETURN(YAML::Node root, spec::LoadYaml(text, r_.file()));
    if (!r_.CheckMap(root, "", kTopKeys)) return r_.Finish("job spec");
    for (auto it = root.begin(); it != root.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      std::string key = it->first.Scalar();
      if (std::find(kTopKeys.ignored.begin(), kTopKeys.ignored.end(), key) != kTopKeys.ignored.end()) {
        spec_.ignored_fields.push_back(key);
      }
    }
    ParseTop(root);
    RETURN_IF_ERROR(r_.Finish("job spec"));
    for (const auto& [name, value] : secret_values_) spec_.secrets.push_back(name);
    for (const auto& [name, at] : unset_secrets_) spec_.secrets.push_back(name);
    for (const auto& [name, ref] : spec_.secret_refs) spec_.secrets.push_back(name);
    std::sort(spec_.secrets.begin(), spec_.secrets.end());
    bool in_file = !secret_values_.empty();
    ParsedJobSpec out{std::move(spec_), r_.warnings(), std::move(secret_values_), in_file, std::move(unset_envs_),
                      std::move(unset_secrets_)};
    if (std::any_of(mount_templates_.begin(), mount_templates_.end(), NamesVariables)) {
      out.file_mount_templates = std::move(mount_templates_);
    }
    if (workdir_template_) out.workdir_template = std::move(workdir_template_);
    return out;
  }

 private:
  YAML::Node Get(const YAML::Node& map, std::string_view key) { return YamlReader::Child(map, key); }

  // `envs` or `secrets`: NAME: value (a string, number or boolean, as
  // written; "" is a value), or NAME: null for one given at submission.
  // `refs` (secrets only): values that are references to a store's secret
  // (SecretRef), written as such or as {from: REFERENCE, as: env|file}.
  void ReadVariables(const YAML::Node& n, const std::string& field, std::map<std::string, std::string>& values,
                     std::map<std::string, Diagnostic>& unset, std::map<std::string, SecretRef>* refs = nullptr) {
    if (n.IsNull()) return;
    if (!n.IsMap()) {
      r_.Error(n, field, "expected a mapping of variable names to values, such as {EPOCHS: 3, HF_TOKEN: null}");
      return;
    }
    if (n.size() > kMaxSpecInputs) {
      r_.Error(n, field, "has " + std::to_string(n.size()) + " variables; at most " + std::to_string(kMaxSpecInputs));
      return;
    }
    std::set<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (!it->first.IsScalar()) {
        r_.Error(it->first, field, "expected a variable name as the key");
        continue;
      }
      std::string key = it->first.Scalar();
      std::string path = JoinField(field, key);
      if (!seen.insert(key).second) {
        r_.Error(it->first, path, "duplicate key \"" + key + "\"");
        continue;
      }
      if (!IsEnvName(key)) {
        r_.Error(it->first, path,
                 "invalid environment variable name: expected up to 256 letters, digits and '_', not starting with a digit");
        continue;
      }
      YAML::Node v = it->second;  // by value: it-> yields a temporary proxy
      if (v.IsNull()) {
        // A missing value has no position of its own: point at its key.
        std::string flag = field == "envs" ? "--env" : "--secret";
        unset.emplace(key, r_.At(it->first, path,
                                 "is null, so it must be given: pass " + flag + " " + key + "=VALUE, or " + flag + " " +
                                     key + " to take it from your environment"));
        continue;
      }
      if (refs && v.IsMap()) {
        ReadSecretRef(v, path, key, *refs);
        continue;
      }
      auto s = r_.String(v, path);
      if (!s) continue;
      if (refs && LooksLikeSecretRef(*s)) {
        if (auto ref = ParseSecretRef(*s); ref.ok()) {
          (*refs)[key] = std::move(*ref);
        } else {
          r_.Error(v, path, ref.status().message());
        }
        continue;
      }
      values[key] = *s;
    }
  }

  // {from: REFERENCE, as: env|file}
  void ReadSecretRef(const YAML::Node& v, const std::string& path, const std::string& key,
                     std::map<std::string, SecretRef>& refs) {
    static const KeySet kKeys{{"from", "as"}};
    if (!r_.CheckMap(v, path, kKeys)) return;
    YAML::Node from = Get(v, "from");
    if (!from.IsDefined()) {
      r_.Error(v, path, "needs from: the secret's reference, such as aws-sm://prod/db#password");
      return;
    }
    auto text = r_.String(from, JoinField(path, "from"));
    if (!text) return;
    auto ref = ParseSecretRef(*text);
    if (!ref.ok()) {
      r_.Error(from, JoinField(path, "from"), ref.status().message());
      return;
    }
    if (YAML::Node as = Get(v, "as"); as.IsDefined()) {
      auto how = r_.String(as, JoinField(path, "as"));
      if (how && *how != "env" && *how != "file") {
        r_.Error(as, JoinField(path, "as"), "expected env (the value in the variable) or file (its path in the variable)");
      }
      ref->as_file = how && *how == "file";
    }
    refs[key] = std::move(*ref);
  }

  void ParseTop(const YAML::Node& root) {
    if (auto n = Get(root, "name"); n.IsDefined()) {
      if (auto v = r_.String(n, "name")) {
        if (v->empty() || v->size() > 128) {
          r_.Error(n, "name", "expected a name of 1 to 128 characters");
        } else if (Status st = CheckName(*v, "name", 128); !st.ok()) {
          r_.Error(n, "name", st.message());
        } else {
          spec_.name = *v;
        }
      }
    }
    if (auto n = Get(root, "resources"); n.IsDefined() && !n.IsNull()) ParseResources(n);
    if (auto n = Get(root, "num_nodes"); n.IsDefined()) {
      if (auto v = r_.Int(n, "num_nodes", 1, 1024)) spec_.num_nodes = static_cast<int>(*v);
    }
    if (auto n = Get(root, "envs"); n.IsDefined()) ReadVariables(n, "envs", spec_.envs, unset_envs_);
    if (auto n = Get(root, "secrets"); n.IsDefined()) {
      ReadVariables(n, "secrets", secret_values_, unset_secrets_, &spec_.secret_refs);
      auto once = [&](const std::string& name) {
        if (spec_.envs.count(name) || unset_envs_.count(name)) {
          r_.Error(Get(n, name), JoinField("secrets", name), name + " is both an env and a secret: give it once");
        }
      };
      for (const auto& [name, value] : secret_values_) {
        if (value.size() > kMaxSpecInputBytes) {
          r_.Error(Get(n, name), JoinField("secrets", name), "is longer than " + std::to_string(kMaxSpecInputBytes) + " bytes");
        }
        once(name);
      }
      for (const auto& [name, at] : unset_secrets_) once(name);
      for (const auto& [name, ref] : spec_.secret_refs) once(name);
    }
    if (auto n = Get(root, "identities"); n.IsDefined() && !n.IsNull()) ParseIdentities(n);
    if (auto n = Get(root, "file_mounts"); n.IsDefined() && !n.IsNull()) ParseFileMounts(n);
    if (auto n = Get(root, "workdir"); n.IsDefined() && !n.IsNull()) ParseWorkdir(n);
    for (auto [key, dest] : {std::pair{"setup", &spec_.setup}, std::pair{"run", &spec_.run}}) {
      if (auto n = Get(root, key); n.IsDefined() && !n.IsNull()) {
        if (auto v = r_.String(n, key)) *dest = *v;
      }
    }
    if (auto n = Get(root, "labels"); n.IsDefined()) MergeLabels(n, "labels");
    if (auto n = Get(root, "datasets"); n.IsDefined() && !n.IsNull()) ParseDatasets(n);
    if (auto n = Get(root, "checkpoint"); n.IsDefined() && !n.IsNull()) ParseCheckpoint(n);
    if (auto n = Get(root, "residency"); n.IsDefined() && !n.IsNull()) {
      if (auto v = r_.String(n, "residency")) {
        if (!IsLowerIdent(*v)) {
          r_.Error(n, "residency", "expected a residency zone name such as eu or us");
        } else {
          spec_.residency = *v;
        }
      }
    }
    if (auto n = Get(root, "priority"); n.IsDefined() && !n.IsNull()) ParsePriority(n);
    if (auto n = Get(root, "time_limit"); n.IsDefined() && !n.IsNull()) {
      if (auto d = PositiveDuration(n, "time_limit")) spec_.time_limit = *d;
    }
    if (auto n = Get(root, "allow_remote_data"); n.IsDefined()) {
      if (auto v = r_.Bool(n, "allow_remote_data")) spec_.allow_remote_data = *v;
    }
    if (auto n = Get(root, "sim"); n.IsDefined() && !n.IsNull()) ParseSim(n);
    if (auto n = Get(root, "recovery"); n.IsDefined() && !n.IsNull()) ParseRecovery(n);
    if (auto n = Get(root, "service"); n.IsDefined() && !n.IsNull()) CheckService(n);
    if (auto n = Get(root, "failover"); n.IsDefined() && !n.IsNull()) {
      spec::ReadFailover(r_, n);
      if (auto svc = Get(root, "service"); !svc.IsDefined() || svc.IsNull()) {
        r_.Error(n, "failover", "is for services: the file has no `service:` section");
      }
    }
    auto owner = spec_.labels.find("owner");
    if (owner != spec_.labels.end()) spec_.owner = owner->second;
    auto team = spec_.labels.find("team");
    if (team != spec_.labels.end()) spec_.team = team->second;
  }

  // What one resources block asks for: the job's own, or one entry of
  // `any_of` / `ordered`, which starts as a copy of the job's own.
  struct Want {
    std::vector<GpuRequest> gpus;
    bool gpus_ordered = false;  // given as a list
    std::string cloud, region, zone;
    bool use_spot = false;
    std::string image_id;
  };

  void ParseResources(const YAML::Node& res) {
    if (!r_.CheckMap(res, "resources", kResourceKeys)) return;
    for (auto it = res.begin(); it != res.end(); ++it) {
      if (!it->first.IsScalar()) continue;
      std::string key = it->first.Scalar();
      if (std::find(kResourceKeys.ignored.begin(), kResourceKeys.ignored.end(), key) !=
          kResourceKeys.ignored.end()) {
        spec_.ignored_fields.push_back("resources." + key);
      }
    }
    Want base;
    ReadWant(res, "resources", base);
    spec_.cloud = base.cloud;
    spec_.region = base.region;
    spec_.zone = base.zone;
    spec_.use_spot = base.use_spot;
    spec_.image_id = base.image_id;
    // Causeway's own: software the nodes must declare.
    for (auto [key, dest] : {std::pair{"cuda", &spec_.cuda}, std::pair{"driver", &spec_.driver}}) {
      auto n = Get(res, key);
      if (!n.IsDefined() || n.IsNull()) continue;
      std::string field = std::string("resources.") + key;
      auto v = r_.String(n, field);
      if (!v) continue;
      auto req = ParseVersionRequirement(*v);
      if (!req.ok()) {
        r_.Error(n, field, req.status().message());
      } else {
        *dest = req->ToString();
      }
    }
    if (auto n = Get(res, "disk_size"); n.IsDefined() && !n.IsNull()) ParseDiskSize(n);
    if (auto n = Get(res, "cpus"); n.IsDefined() && !n.IsNull()) spec_.cpus = ParseAmount(n, "resources.cpus", false);
    if (auto n = Get(res, "memory"); n.IsDefined() && !n.IsNull()) {
      spec_.memory_gb = ParseAmount(n, "resources.memory", true);
    }
    if (auto n = Get(res, "labels"); n.IsDefined()) MergeLabels(n, "resources.labels");

    YAML::Node any_of = Get(res, "any_of"), ordered = Get(res, "ordered");
    bool has_any = any_of.IsDefined() && !any_of.IsNull(), has_ordered = ordered.IsDefined() && !ordered.IsNull();
    if (has_any && has_ordered) {
      r_.Error(ordered, "resources.ordered", "give either any_of (any will do) or ordered (a preference), not both");
      return;
    }
    std::vector<Want> entries;
    if (has_any || has_ordered) {
      ReadEntries(has_any ? any_of : ordered, has_any ? "resources.any_of" : "resources.ordered", base, entries);
    } else {
      entries.push_back(base);
    }
    spec_.accelerators.ordered = has_ordered || (!has_any && base.gpus_ordered);
    AddAlternatives(res, entries, has_any || has_ordered);
  }

  // The entries of `any_of` / `ordered`: each a mapping of resources fields
  // that override the job's own for that alternative.
  void ReadEntries(const YAML::Node& list, const std::string& field, const Want& base, std::vector<Want>& out) {
    static const KeySet kEntryKeys{
        {"accelerators", "infra", "cloud", "region", "zone", "use_spot", "image_id"},
        {"cpus", "memory", "instance_type", "ports", "disk_tier", "disk_size", "accelerator_args",
         "network_tier", "autostop", "labels", "job_recovery", "spot_recovery"}};
    if (!list.IsSequence() || list.size() == 0) {
      r_.Error(list, field, "expected a list of resource alternatives such as [{infra: aws}, {accelerators: A100:8}]");
      return;
    }
    for (size_t i = 0; i < list.size(); ++i) {
      std::string at = field + "[" + std::to_string(i) + "]";
      YAML::Node item = list[i];
      if (!r_.CheckMap(item, at, kEntryKeys)) continue;
      for (auto it = item.begin(); it != item.end(); ++it) {
        if (!it->first.IsScalar()) continue;
        std::string key = it->first.Scalar();
        if (std::find(kEntryKeys.ignored.begin(), kEntryKeys.ignored.end(), key) != kEntryKeys.ignored.end()) {
          spec_.ignored_fields.push_back(at + "." + key);
        }
      }
      Want w = base;
      ReadWant(item, at, w);
      out.push_back(std::move(w));
    }
  }

  // Reads accelerators, infra (or cloud/region), use_spot and image_id of
  // one resources block into `w`, replacing what it holds for each field
  // the block gives.
  void ReadWant(const YAML::Node& res, const std::string& field, Want& w) {
    if (auto n = Get(res, "accelerators"); n.IsDefined() && !n.IsNull()) {
      w.gpus.clear();
      ParseAccelerators(n, JoinField(field, "accelerators"), w);
    }
    YAML::Node infra = Get(res, "infra"), cloud = Get(res, "cloud"), region = Get(res, "region");
    if (infra.IsDefined() && !infra.IsNull()) {
      if (cloud.IsDefined() || region.IsDefined()) {
        r_.Error(infra, JoinField(field, "infra"), "give either infra (\"provider/region\") or cloud and region, not both");
      }
      if (auto v = r_.String(infra, JoinField(field, "infra"))) ParseInfra(infra, JoinField(field, "infra"), *v, w);
    } else {
      if (cloud.IsDefined() && !cloud.IsNull()) {
        if (auto v = r_.String(cloud, JoinField(field, "cloud"))) {
          w.cloud = CanonicalCloud(*v);
          w.region.clear();  // a new provider: the old one's region means nothing there
          w.zone.clear();
        }
      }
      if (region.IsDefined() && !region.IsNull()) {
        if (auto v = r_.String(region, JoinField(field, "region"))) w.region = *v;
      }
    }
    // A zone given on its own means what infra's third part means.
    if (YAML::Node zone = Get(res, "zone"); zone.IsDefined() && !zone.IsNull()) {
      if (auto v = r_.String(zone, JoinField(field, "zone"))) {
        if (!w.zone.empty() && w.zone != *v && infra.IsDefined() && !infra.IsNull()) {
          r_.Error(zone, JoinField(field, "zone"), "infra names zone " + w.zone + " and zone names " + *v + ": give one");
        } else if (v->empty()) {
          r_.Error(zone, JoinField(field, "zone"), "expected a zone name such as us-east-1a");
        } else {
          w.zone = *v;
        }
      }
    }
    if (auto n = Get(res, "use_spot"); n.IsDefined()) {
      if (auto v = r_.Bool(n, JoinField(field, "use_spot"))) w.use_spot = *v;
    }
    if (auto n = Get(res, "image_id"); n.IsDefined() && !n.IsNull()) {
      if (auto v = r_.String(n, JoinField(field, "image_id"))) {
        if (v->empty()) {
          r_.Error(n, JoinField(field, "image_id"), "expected a container image reference");
        } else {
          w.image_id = *v;
        }
      }
    }
  }

  // One alternative per GPU request of each entry, in order; the same
  // alternative twice is an error (the same type at several counts is not).
  void AddAlternatives(const YAML::Node& res, const std::vector<Want>& entries, bool from_list) {
    bool some_cpu_only = false;
    for (size_t i = 0; i < entries.size(); ++i) {
      const Want& w = entries[i];
      if (w.gpus.empty()) some_cpu_only = true;
      for (const auto& g : w.gpus) {
        Alternative a;
        static_cast<GpuRequest&>(a) = g;
        a.cloud = w.cloud;
        a.region = w.region;
        a.zone = w.zone;
        a.use_spot = w.use_spot;
        a.image_id = w.image_id;
        auto& alts = spec_.accelerators.alternatives;
        if (std::find(alts.begin(), alts.end(), a) != alts.end()) {
          r_.Error(res, from_list ? "resources.any_of" : "resources.accelerators",
                   "alternative " + a.Describe() + " is listed twice");
          continue;
        }
        alts.push_back(std::move(a));
      }
    }
    if (some_cpu_only && !spec_.accelerators.empty()) {
      r_.Error(res, "resources.any_of",
               "some alternatives ask for accelerators and some for none; give every alternative its accelerators "
               "(CPU-only alternatives of a GPU job are not supported)");
    }
    // A CPU-only job has one place to run (JobSpec::Demand): entries that
    // differ only in where would be dropped, so they are refused instead.
    if (some_cpu_only && spec_.accelerators.empty()) {
      for (const Want& w : entries) {
        if (w.cloud != spec_.cloud || w.region != spec_.region || w.zone != spec_.zone ||
            w.use_spot != spec_.use_spot || w.image_id != spec_.image_id) {
          r_.Error(res, from_list ? "resources.any_of" : "resources.ordered",
                   "alternatives of a CPU-only job that differ in infra, use_spot or image_id are not supported: "
                   "give them once under resources");
          break;
        }
      }
    }
  }

  static std::string Lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  }

  void ParseInfra(const YAML::Node& node, const std::string& field, const std::string& value, Want& w) {
    // "provider", "provider/region" or "provider/region/zone"; "*" for any.
    std::vector<std::string> parts;
    std::stringstream ss(value);
    std::string part;
    while (std::getline(ss, part, '/')) parts.push_back(part);
    if (value.empty() || value.back() == '/' || parts.empty() || parts.size() > 3 ||
        std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
      r_.Error(node, field,
               "expected \"provider\", \"provider/region\" or \"provider/region/zone\", got \"" + value + "\"");
      return;
    }
    for (auto& p : parts) {
      if (p == "*") p.clear();
    }
    w.cloud = CanonicalCloud(parts[0]);
    w.region = parts.size() > 1 ? parts[1] : "";
    w.zone = parts.size() > 2 ? parts[2] : "";
  }

  void ParseDiskSize(const YAML::Node& n) {
    const char* field = "resources.disk_size";
    bool plain_number = n.IsScalar() && n.Tag() != "!" && !n.Scalar().empty() &&
                        std::all_of(n.Scalar().begin(), n.Scalar().end(),
                                    [](unsigned char c) { return std::isdigit(c); });
    if (plain_number) {
      if (auto v = r_.Int(n, field, 1, 1 << 20)) spec_.disk_size_gb = static_cast<int>(*v);
      return;
    }
    // Also "256GB" / "2TB", as SkyPilot accepts.
    std::string s = n.IsScalar() ? n.Scalar() : "";
    size_t digits = 0;
    while (digits < s.size() && std::isdigit(static_cast<unsigned char>(s[digits]))) ++digits;
    std::string unit = Lower(s.substr(digits));
    if (digits > 0 && digits < 8 && (unit == "gb" || unit == "tb")) {
      int gb = std::stoi(s.substr(0, digits)) * (unit == "tb" ? 1024 : 1);
      if (gb >= 1 && gb <= (1 << 20)) {
        spec_.disk_size_gb = gb;
        return;
      }
    }
    r_.Error(n, field, "expected a size in GB such as 256, \"256GB\" or \"2TB\"");
  }

  // SkyPilot's cpus and memory: a positive number or "N+"; memory may carry
  // a unit (512MB, 32GB, 1TB, 64Gi: binary, as SkyPilot reads them) and is
  // kept in GB.
  std::optional<NodeAmount> ParseAmount(const YAML::Node& n, const std::string& field, bool memory) {
    const std::string expected = memory ? "expected GB per node such as 32, \"32+\" or \"64GB+\""
                                        : "expected CPUs per node such as 4 or \"4+\"";
    if (!n.IsScalar() || n.Scalar().empty() || n.Scalar().size() > 32) {
      r_.Error(n, field, expected);
      return std::nullopt;
    }
    std::string s = Lower(n.Scalar());
    NodeAmount a;
    if (s.back() == '+') {
      a.or_more = true;
      s.pop_back();
    }
    double scale = 1;
    if (memory) {
      static const std::pair<const char*, double> kUnits[] = {
          {"kb", 1.0 / (1 << 20)}, {"ki", 1.0 / (1 << 20)}, {"mb", 1.0 / 1024}, {"mi", 1.0 / 1024}, {"gb", 1},
          {"gi", 1},           {"tb", 1024},         {"ti", 1024},           {"pb", 1 << 20},   {"pi", 1 << 20}};
      for (const auto& [unit, factor] : kUnits) {
        size_t len = std::strlen(unit);
        if (s.size() > len && s.compare(s.size() - len, len, unit) == 0) {
          s.resize(s.size() - len);
          scale = factor;
          break;
        }
      }
    }
    bool number = !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) || c == '.'; }) &&
                  std::count(s.begin(), s.end(), '.') <= 1 && s != ".";
    double v = number ? std::strtod(s.c_str(), nullptr) * scale : 0;
    if (!number || !(v > 0) || v > 1e9) {
      r_.Error(n, field, expected + (number ? " (it must be positive)" : ""));
      return std::nullopt;
    }
    a.value = v;
    return a;
  }

  void AddGpu(const YAML::Node& at, const std::string& field, Result<GpuRequest> req, Want& w) {
    if (!req.ok()) {
      r_.Error(at, field, req.status().message());
      return;
    }
    if (req->type == kCpuType) {
      r_.Error(at, field, "CPU is not an accelerator: leave resources.accelerators out for a CPU-only job, "
                          "and set resources.cpus (e.g. cpus: 4+)");
      return;
    }
    if (std::find(w.gpus.begin(), w.gpus.end(), *req) != w.gpus.end()) {
      r_.Error(at, field, req->ToString() + " is listed twice");
      return;
    }
    if (std::string_view precise = spec::PreciseAccelerator(req->type); !precise.empty()) {
      r_.Warning(at, field, req->type + " is accepted as SkyPilot accepts it; its catalogue's precise name is " +
                                std::string(precise) + ", which the estate's node pools are more likely to use");
    } else if (!spec::KnownAccelerator(req->type)) {
      // An estate may sell a type of its own, so this is for the estate to
      // decide; offline validation refuses it.
      std::string hint = spec::AcceleratorHint(req->type);
      r_.Warning(at, field, req->type + " is not an accelerator SkyPilot's catalogue names" +
                                (hint.empty() ? std::string(": check the spelling") : "; did you mean " + hint + "?"));
      if (std::find(spec_.unknown_accelerators.begin(), spec_.unknown_accelerators.end(), req->type) ==
          spec_.unknown_accelerators.end()) {
        spec_.unknown_accelerators.push_back(req->type);
      }
    }
    w.gpus.push_back(*req);
  }

  // One mapping entry: {H100: 8} or {"H100:8": null} (SkyPilot's set form).
  void AddMapEntry(const YAML::Node& key, const YAML::Node& value, const std::string& field, Want& w) {
    if (!key.IsScalar()) {
      r_.Error(key, field, "expected a GPU type such as H100");
      return;
    }
    if (value.IsNull()) {
      AddGpu(key, field, ParseGpuRequest(key.Scalar()), w);
      return;
    }
    if (key.Scalar().find(':') != std::string::npos) {
      r_.Error(key, field, "give the count either in the name (\"H100:8\") or as the value ({H100: 8}), not both");
      return;
    }
    if (!value.IsScalar() || value.Tag() == "!") {
      r_.Error(value, field, "expected a whole number of GPUs such as 8");
      return;
    }
    AddGpu(value, field, ParseGpuRequest(key.Scalar() + ":" + value.Scalar()), w);
  }

  void ParseAccelerators(const YAML::Node& n, const std::string& field, Want& w) {
    size_t errors_before = r_.error_count();
    w.gpus_ordered = false;
    if (n.IsScalar()) {
      AddGpu(n, field, ParseGpuRequest(n.Scalar()), w);
    } else if (n.IsMap()) {
      for (auto it = n.begin(); it != n.end(); ++it) AddMapEntry(it->first, it->second, field, w);
    } else if (n.IsSequence()) {
      for (const auto& item : n) {
        if (item.IsScalar()) {
          AddGpu(item, field, ParseGpuRequest(item.Scalar()), w);
        } else if (item.IsMap() && item.size() == 1) {
          AddMapEntry(item.begin()->first, item.begin()->second, field, w);
        } else {
          r_.Error(item, field, "expected each alternative as \"TYPE:COUNT\" or {TYPE: COUNT}");
        }
      }
      w.gpus_ordered = true;
    }
    if (w.gpus.empty() && r_.error_count() == errors_before) {
      r_.Error(n, field,
               "expected \"TYPE:COUNT\" (H200:8), a mapping ({H100: 8}) or a list of alternatives ([H100:8, A100-80GB:8])");
    }
  }

  void MergeLabels(const YAML::Node& n, std::string_view field) {
    auto m = r_.StringMap(n, field);
    if (!m) return;
    for (auto& [k, v] : *m) {
      auto [it, inserted] = spec_.labels.emplace(k, v);
      if (!inserted && it->second != v) {
        r_.Error(YamlReader::Child(n, k), JoinField(field, k),
                 "label \"" + k + "\" is \"" + v + "\" here but \"" + it->second +
                     "\" in the other labels block");
      }
      if ((k == "owner" || k == "team") && v.empty()) {
        r_.Error(YamlReader::Child(n, k), JoinField(field, k), "label \"" + k + "\" is empty");
      } else if (Status st = CheckName(k, "label name"); !st.ok()) {
        r_.Error(YamlReader::Child(n, k), JoinField(field, k), st.message());
      } else if (Status sv = v.empty() ? Status::Ok() : CheckName(v, "label " + k); !sv.ok()) {
        r_.Error(YamlReader::Child(n, k), JoinField(field, k), sv.message());
      }
    }
  }

  // `workdir: PATH` or `workdir: {url: GIT_URL, ref: REF}`.
  void ParseWorkdir(const YAML::Node& n) {
    const std::map<std::string, std::string> vars = Variables();
    Workdir raw;
    auto remember = [&] {
      if (raw.path.find('$') != std::string::npos || raw.git_url.find('$') != std::string::npos ||
          raw.git_ref.find('$') != std::string::npos) {
        workdir_template_ = raw;
      }
    };
    if (n.IsScalar()) {
      if (auto v = r_.String(n, "workdir")) {
        if (v->empty()) {
          r_.Error(n, "workdir", "expected a directory or {url: GIT_URL, ref: REF}");
        } else {
          raw.path = *v;
          spec_.workdir.path = FillVariables(*v, vars);
        }
      }
      remember();
      return;
    }
    static const KeySet kKeys{{"url", "ref"}};
    if (!n.IsMap()) {
      r_.Error(n, "workdir", "expected a directory or {url: GIT_URL, ref: REF}");
      return;
    }
    if (!r_.CheckMap(n, "workdir", kKeys)) return;
    YAML::Node url = Get(n, "url"), ref = Get(n, "ref");
    if (!url.IsDefined() || url.IsNull()) {
      r_.Error(n, "workdir.url", "a git workdir needs its repository's url");
      return;
    }
    if (auto v = r_.String(url, "workdir.url")) {
      raw.git_url = *v;
      std::string filled = FillVariables(*v, vars);
      if (!Pending(*v) && !GitUrl(filled)) {
        r_.Error(url, "workdir.url", GitUrlProblem());
      } else {
        spec_.workdir.git_url = filled;
      }
    }
    if (ref.IsDefined() && !ref.IsNull()) {
      if (auto v = r_.String(ref, "workdir.ref")) {
        raw.git_ref = *v;
        std::string filled = FillVariables(*v, vars);
        if (!Pending(*v) && !GitRef(filled)) {
          r_.Error(ref, "workdir.ref", GitRefProblem());
        } else {
          spec_.workdir.git_ref = filled;
        }
      }
    }
    remember();
  }

 public:
  // Handed to git as an argument: never an option, never a shell word.
  static bool GitRef(const std::string& v) {
    return !v.empty() && v.front() != '-' && v.size() <= 255 && std::all_of(v.begin(), v.end(), [](unsigned char c) {
             return std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-' || c == '+';
           });
  }
  static std::string GitRefProblem() { return "expected a branch, tag or commit (letters, digits and / . _ - +)"; }
  static std::string GitUrlProblem() {
    return "expected a git repository URL (https://…, ssh://…, git://…, file://… or user@host:path)";
  }

  static bool GitUrl(const std::string& v) {
    if (v.empty() || v.size() > 2048 || v.front() == '-') return false;
    if (std::any_of(v.begin(), v.end(), [](unsigned char c) { return c <= ' ' || c == '\'' || c == '"' || c == '`' || c == '$' || c == '\\'; })) {
      return false;
    }
    for (const char* scheme : {"https://", "http://", "ssh://", "git://", "file://"}) {
      if (v.rfind(scheme, 0) == 0) return v.size() > std::strlen(scheme);
    }
    // scp-like: user@host:path
    auto at = v.find('@'), colon = v.find(':');
    return at != std::string::npos && colon != std::string::npos && at < colon && colon + 1 < v.size();
  }

 private:
  // A storage object: {source (one or a list), name, store, mode,
  // persistent, config}, as written (variables not filled). False when `v`
  // is not one at all.
  bool ReadStorageObject(const YAML::Node& v, const std::string& field, FileMount& m) {
    if (!r_.CheckMap(v, field, kMountKeys)) return false;
    for (auto k = v.begin(); k != v.end(); ++k) {
      std::string key = k->first.IsScalar() ? k->first.Scalar() : "";
      if (std::find(kMountKeys.ignored.begin(), kMountKeys.ignored.end(), key) != kMountKeys.ignored.end()) {
        spec_.ignored_fields.push_back(JoinField(field, key));
      }
    }
    if (auto c = Get(v, "source"); c.IsDefined() && !c.IsNull()) {
      if (c.IsSequence() && c.size() > 0) {
        for (size_t i = 0; i < c.size(); ++i) {
          auto s = r_.String(c[i], JoinField(field, "source"));
          if (!s) continue;
          (m.source.empty() ? m.source : m.more_sources.emplace_back()) = *s;
        }
      } else if (auto s = r_.String(c, JoinField(field, "source"))) {
        m.source = *s;
      }
    }
    if (auto c = Get(v, "name"); c.IsDefined() && !c.IsNull()) {
      if (auto s = r_.String(c, JoinField(field, "name"))) m.name = *s;
    }
    // store and mode are checked by the caller once variables are filled.
    if (auto c = Get(v, "store"); c.IsDefined() && !c.IsNull()) {
      if (auto s = r_.String(c, JoinField(field, "store"))) m.store = *s;
    }
    if (auto c = Get(v, "mode"); c.IsDefined() && !c.IsNull()) {
      if (auto s = r_.String(c, JoinField(field, "mode"))) m.mode = *s;
    }
    if (auto c = Get(v, "persistent"); c.IsDefined() && !c.IsNull()) {
      if (auto b = r_.Bool(c, JoinField(field, "persistent"))) m.persistent = *b;
    }
    if (auto c = Get(v, "config"); c.IsDefined() && !c.IsNull() && !c.IsMap()) {
      r_.Error(c, JoinField(field, "config"), "expected a mapping of storage settings");
    }
    if (m.source.empty() && m.name.empty()) r_.Error(v, field, "expected a source or a name");
    return true;
  }

  void ParseFileMounts(const YAML::Node& n) {
    if (!n.IsMap()) {
      r_.Error(n, "file_mounts", "expected a mapping of target paths to sources");
      return;
    }
    std::set<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (!it->first.IsScalar() || it->first.Scalar().empty()) {
        r_.Error(it->first, "file_mounts", "expected a target path as the key");
        continue;
      }
      // Variables are filled as SkyPilot fills them (targets, sources,
      // bucket names, store, mode); `raw` keeps what was written.
      const std::map<std::string, std::string> vars = Variables();
      FileMount raw, m;
      raw.target = it->first.Scalar();
      m.target = FillVariables(raw.target, vars);
      std::string field = JoinField("file_mounts", m.target);
      if (!seen.insert(m.target).second) {
        r_.Error(it->first, field, "duplicate key \"" + m.target + "\"");
        continue;
      }
      YAML::Node v = it->second;  // by value: it-> yields a temporary proxy
      if (v.IsScalar()) {
        raw.source = v.Scalar();
        m.source = FillVariables(raw.source, vars);
        if (m.source.empty()) r_.Error(v, field, "expected a source path or bucket URL");
      } else if (v.IsMap()) {
        m.object = raw.object = true;
        if (!ReadStorageObject(v, field, raw)) continue;
        FillMount(raw, vars, m);
        m.persistent = raw.persistent;
        if (auto c = Get(v, "store"); !m.store.empty() && !Pending(raw.store)) {
          if (std::string why = StoreProblem(m.store); !why.empty()) r_.Error(c, JoinField(field, "store"), why);
        }
        if (auto c = Get(v, "mode"); !m.mode.empty() && !Pending(raw.mode)) {
          if (std::string why = ModeProblem(m.mode); !why.empty()) r_.Error(c, JoinField(field, "mode"), why);
        }
      } else {
        r_.Error(v, field, "expected a source path, a bucket URL or a mapping with source/name/store/mode");
        continue;
      }
      spec_.file_mounts.push_back(std::move(m));
      mount_templates_.push_back(std::move(raw));
    }
  }

  void ParseDatasets(const YAML::Node& n) {
    if (!n.IsSequence()) {
      r_.Error(n, "datasets", "expected a list of datasets such as [{name: c4, version: \"2024-05\"}]");
      return;
    }
    static const KeySet kDatasetKeys{{"name", "version", "digest", "replicate"}};
    std::set<std::string> seen;
    int i = 0;
    for (const auto& item : n) {
      std::string field = "datasets[" + std::to_string(i++) + "]";
      DatasetRef d;
      if (item.IsScalar()) {
        // Shorthand: "c4@2024-05" or "c4@sha256:…".
        std::string s = item.Scalar();
        auto at = s.find('@');
        if (at == std::string::npos || at == 0 || at + 1 == s.size()) {
          r_.Error(item, field, "expected NAME@VERSION, NAME@sha256:DIGEST or {name:, version:|digest:}");
          continue;
        }
        d.name = s.substr(0, at);
        std::string ref = s.substr(at + 1);
        (ref.rfind("sha256:", 0) == 0 ? d.digest : d.version) = ref;
      } else if (item.IsMap()) {
        if (!r_.CheckMap(item, field, kDatasetKeys)) continue;
        for (auto [key, dest] : {std::pair{"name", &d.name}, std::pair{"version", &d.version},
                                 std::pair{"digest", &d.digest}}) {
          if (auto c = Get(item, key); c.IsDefined()) {
            if (auto s = r_.String(c, JoinField(field, key))) *dest = *s;
          }
        }
        if (auto c = Get(item, "replicate"); c.IsDefined()) {
          if (auto s = r_.String(c, JoinField(field, "replicate")); s && *s != "on-demand") {
            r_.Error(c, JoinField(field, "replicate"),
                     "expected on-demand (a copy is made where the job is placed, and it waits for it)");
          } else if (s) {
            d.replicate = *s;
          }
        }
        if (d.name.empty()) {
          r_.Error(item, JoinField(field, "name"), "each dataset needs a name");
          continue;
        }
        if (d.version.empty() && d.digest.empty()) {
          r_.Error(item, field, "dataset \"" + d.name + "\" needs a version or a digest, so the run is reproducible");
          continue;
        }
      } else {
        r_.Error(item, field, "expected a dataset mapping or NAME@VERSION");
        continue;
      }
      if (!d.digest.empty() && !IsSha256Digest(d.digest)) {
        r_.Error(item, JoinField(field, "digest"), "expected sha256: followed by 64 lowercase hex digits");
        continue;
      }
      if (!seen.insert(d.name).second) {
        r_.Error(item, field, "dataset \"" + d.name + "\" is listed twice");
        continue;
      }
      spec_.datasets.push_back(std::move(d));
    }
  }

  void ParseCheckpoint(const YAML::Node& n) {
    static const KeySet kKeys{{"path", "interval"}};
    if (!r_.CheckMap(n, "checkpoint", kKeys)) return;
    CheckpointSpec c;
    if (auto p = Get(n, "path"); p.IsDefined()) {
      if (auto s = r_.String(p, "checkpoint.path")) c.path = *s;
    }
    if (c.path.empty()) {
      r_.Error(n, "checkpoint.path", "a checkpoint needs a path where the job writes it");
      return;
    }
    if (auto iv = Get(n, "interval"); iv.IsDefined() && !iv.IsNull()) {
      if (auto d = PositiveDuration(iv, "checkpoint.interval")) c.interval = *d;
    }
    spec_.checkpoint = std::move(c);
  }

  // A duration such as 30m given as a string or a number of seconds.
  std::optional<Micros> PositiveDuration(const YAML::Node& n, const std::string& field) {
    auto s = r_.String(n, field);
    if (!s) return std::nullopt;
    auto d = ParseDuration(*s);
    if (!d.ok()) {
      r_.Error(n, field, d.status().message());
      return std::nullopt;
    }
    if (d->count() == 0) {
      r_.Error(n, field, "expected a positive duration such as 30m");
      return std::nullopt;
    }
    return *d;
  }

  // `identities: [aws-training-data]`: the estate's federated identities
  // by name (checked against the estate on submission).
  void ParseIdentities(const YAML::Node& n) {
    if (!n.IsSequence() || n.size() > 8) {
      r_.Error(n, "identities", "expected a list of at most 8 identity names such as [aws-training-data]");
      return;
    }
    for (size_t i = 0; i < n.size(); ++i) {
      auto name = r_.String(n[i], "identities");
      if (!name) continue;
      if (!estate_detail::IsName(*name)) {  // as the estate names a federation
        r_.Error(n[i], "identities", "expected an identity's name: lower-case letters, digits, '-', '_' and '.'");
      } else if (std::find(spec_.identities.begin(), spec_.identities.end(), *name) != spec_.identities.end()) {
        r_.Error(n[i], "identities", "\"" + *name + "\" is named twice");
      } else {
        spec_.identities.push_back(*name);
      }
    }
  }

  void ParseRecovery(const YAML::Node& n) {
    static const KeySet kKeys{{"max_restarts", "on", "backoff"}};
    if (!r_.CheckMap(n, "recovery", kKeys)) return;
    if (auto m = Get(n, "max_restarts"); m.IsDefined()) {
      if (auto v = r_.Int(m, "recovery.max_restarts", 0, 100)) spec_.recovery.max_restarts = static_cast<int>(*v);
    }
    if (auto b = Get(n, "backoff"); b.IsDefined()) {
      if (auto d = PositiveDuration(b, "recovery.backoff")) spec_.recovery.backoff = *d;
    }
    if (auto on = Get(n, "on"); on.IsDefined()) {
      if (!on.IsSequence()) {
        r_.Error(on, "recovery.on", "expected a list of failure classes such as [preemption, node_fault]");
        return;
      }
      std::vector<std::string> classes;
      std::vector<std::string_view> known(std::begin(kFailureClassNames), std::end(kFailureClassNames));
      for (const auto& c : on) {
        auto name = r_.String(c, "recovery.on");
        if (!name) continue;
        if (std::find(known.begin(), known.end(), *name) == known.end()) {
          std::string hint = spec::ClosestMatch(*name, known);
          std::string all;
          for (auto k : known) all += (all.empty() ? "" : ", ") + std::string(k);
          r_.Error(c, "recovery.on",
                   "unknown failure class \"" + *name + "\"" + (hint.empty() ? "; expected one of: " + all : "; did you mean \"" + hint + "\"?"));
          continue;
        }
        classes.push_back(*name);
      }
      spec_.recovery.on = std::move(classes);
    }
  }

  // `service:` (SkyPilot Serve) is read whole (spec/service_spec.h), so a
  // task file is refused here for what `service up` would refuse it.
  void CheckService(const YAML::Node& n) { spec::ReadService(r_, n); }

  void ParseSim(const YAML::Node& n) {
    static const KeySet kKeys{{"duration", "utilization", "exit_code"}};
    if (!r_.CheckMap(n, "sim", kKeys)) return;
    if (auto d = Get(n, "duration"); d.IsDefined()) {
      if (auto v = PositiveDuration(d, "sim.duration")) spec_.sim.duration = *v;
    }
    if (auto u = Get(n, "utilization"); u.IsDefined()) {
      if (auto v = r_.Int(u, "sim.utilization", 0, 100)) spec_.sim.utilization_percent = static_cast<int>(*v);
    }
    if (auto e = Get(n, "exit_code"); e.IsDefined()) {
      if (auto v = r_.Int(e, "sim.exit_code", 0, 255)) spec_.sim.exit_code = static_cast<int>(*v);
    }
  }

  void ParsePriority(const YAML::Node& n) {
    if (n.IsScalar() && n.Tag() != "!" && !n.Scalar().empty() &&
        std::isdigit(static_cast<unsigned char>(n.Scalar()[0]))) {
      if (auto v = r_.Int(n, "priority", 0, 1000)) spec_.priority = static_cast<int>(*v);
      return;
    }
    std::string names;
    if (n.IsScalar()) {
      for (const auto& pc : kPriorityClasses) {
        if (n.Scalar() == pc.name) {
          spec_.priority_class = std::string(pc.name);
          spec_.priority = pc.value;
          return;
        }
      }
    }
    for (const auto& pc : kPriorityClasses) names += std::string(names.empty() ? "" : ", ") + std::string(pc.name);
    r_.Error(n, "priority", "expected one of " + names + " or an integer from 0 to 1000");
  }

  YamlReader r_;
  JobSpec spec_;
  std::map<std::string, std::string> secret_values_;
  std::map<std::string, Diagnostic> unset_envs_, unset_secrets_;
  std::vector<FileMount> mount_templates_;  // file_mounts as written, one per spec_.file_mounts
  std::optional<Workdir> workdir_template_;   // workdir as written, when it names variables

  // The values variables in file_mounts and workdir are filled with: the
  // file's envs and secrets, as SkyPilot fills them.
  std::map<std::string, std::string> Variables() const {
    std::map<std::string, std::string> vars = spec_.envs;
    for (const auto& [name, value] : secret_values_) vars[name] = value;
    return vars;
  }
  // Whether `raw` names a variable left to be given at submission: it is
  // checked once filled (ApplySpecInputs).
  bool Pending(std::string_view raw) const {
    for (const std::string& name : VariablesIn(raw)) {
      if (unset_envs_.count(name) || unset_secrets_.count(name)) return true;
    }
    return false;
  }
};

}  // namespace

bool LooksLikeSecretRef(std::string_view value) {
  return value.rfind("aws-sm://", 0) == 0 || value.rfind("k8s://", 0) == 0;
}

Result<SecretRef> ParseSecretRef(std::string_view text) {
  if (text.size() > 2048) return InvalidArgument("a secret reference is at most 2048 characters");
  SecretRef ref;
  ref.reference = std::string(text);
  const size_t hash = text.find('#');
  std::string_view path = text.substr(0, hash);
  if (hash != std::string_view::npos) ref.key = std::string(text.substr(hash + 1));
  auto printable = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](unsigned char c) { return c > 0x20 && c < 0x7f; });
  };
  if (!printable(text)) return InvalidArgument("a secret reference has no spaces or control characters");
  if (hash != std::string_view::npos && ref.key.empty()) return InvalidArgument("\"#\" must be followed by the key to read");
  if (path.rfind("aws-sm://", 0) == 0) {
    ref.scheme = "aws-sm";
    ref.name = std::string(path.substr(9));
    // Secrets Manager's names: 1-512 of letters, digits and /_+=.@- (or an ARN).
    if (ref.name.empty() || ref.name.size() > 512 ||
        !std::all_of(ref.name.begin(), ref.name.end(), [](unsigned char c) {
          return std::isalnum(c) || std::string_view("/_+=.@-:").find(static_cast<char>(c)) != std::string_view::npos;
        })) {
      return InvalidArgument("expected aws-sm://NAME[#KEY], NAME a Secrets Manager secret's name or ARN");
    }
    return ref;
  }
  if (path.rfind("k8s://", 0) == 0) {
    ref.scheme = "k8s";
    std::vector<std::string> parts;
    std::string_view rest = path.substr(6);
    for (size_t at = 0; at <= rest.size();) {
      size_t slash = std::min(rest.find('/', at), rest.size());
      parts.emplace_back(rest.substr(at, slash - at));
      at = slash + 1;
    }
    if (parts.size() != 3 || ref.key.empty() ||
        std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty() || p.size() > 253; })) {
      return InvalidArgument("expected k8s://CLUSTER/NAMESPACE/NAME#KEY");
    }
    ref.cluster = parts[0];
    ref.ns = parts[1];
    ref.name = parts[2];
    return ref;
  }
  return InvalidArgument("expected a reference aws-sm://NAME[#KEY] or k8s://CLUSTER/NAMESPACE/NAME#KEY");
}

Result<ParsedJobSpec> ParseJobSpec(std::string_view yaml_text, const std::string& file) {
  JobSpecParser parser(file);
  return parser.Parse(yaml_text);
}

std::string WithoutSecretValues(std::string_view yaml_text) {
  auto root = spec::LoadYaml(yaml_text, "spec");
  if (!root.ok() || !root->IsMap()) return "";  // never the text: it may hold the values
  YAML::Node secrets = (*root)["secrets"];
  if (secrets.IsMap()) {
    std::vector<std::string> names;
    for (auto it = secrets.begin(); it != secrets.end(); ++it) names.push_back(it->first.Scalar());
    for (const auto& name : names) {
      // A reference is no secret: it stays, so that the stored spec still
      // says what to read.
      YAML::Node v = secrets[name];
      if (v.IsMap() || (v.IsScalar() && LooksLikeSecretRef(v.Scalar()))) continue;
      secrets[name] = YAML::Node(YAML::NodeType::Null);
    }
  }
  YAML::Emitter out;
  out << *root;
  return std::string(out.c_str()) + "\n";
}

Accelerators JobSpec::Demand() const {
  if (!accelerators.empty()) return accelerators;
  Alternative cpu;
  cpu.type = std::string(kCpuType);
  cpu.count = kDefaultCpusPerNode;
  if (cpus) cpu.count = static_cast<int>(std::min<double>(std::ceil(cpus->value), kMaxCpusPerNode + 1));
  cpu.cloud = cloud;
  cpu.region = region;
  cpu.zone = zone;
  cpu.use_spot = use_spot;
  cpu.image_id = image_id;
  Accelerators out;
  out.alternatives.push_back(std::move(cpu));
  return out;
}

std::string NodeAmount::ToString() const {
  std::ostringstream out;
  out << value;  // shortest form: 4, 0.5, 1024
  return out.str() + (or_more ? "+" : "");
}

Status ApplySpecInputs(ParsedJobSpec& parsed, const SpecInputs& inputs, const std::string& file) {
  std::vector<Diagnostic> problems;
  auto problem = [&](const std::string& field, std::string message) {
    problems.push_back(Diagnostic{file, 0, 0, field, std::move(message)});
  };
  JobSpec& spec = parsed.spec;
  auto is_secret = [&](const std::string& name) {
    return std::binary_search(spec.secrets.begin(), spec.secrets.end(), name) || inputs.secrets.count(name);
  };
  for (auto [kind, given] : {std::pair{"envs", &inputs.envs}, std::pair{"secrets", &inputs.secrets}}) {
    std::string flag = std::string(kind) == "envs" ? "--env" : "--secret";
    if (given->size() > kMaxSpecInputs) {
      problem(kind, flag + " is given " + std::to_string(given->size()) + " times; at most " + std::to_string(kMaxSpecInputs));
      continue;
    }
    for (const auto& [name, value] : *given) {
      if (!IsEnvName(name)) {
        std::string shown = name.size() > 64 ? name.substr(0, 64) + "…" : name;
        problem(JoinField(kind, shown), flag + " " + shown +
                                            ": invalid variable name: expected up to 256 letters, digits and '_', "
                                            "not starting with a digit");
        continue;
      }
      if (value.size() > kMaxSpecInputBytes || value.find('\0') != std::string::npos) {
        problem(JoinField(kind, name), flag + " " + name + ": the value must be text of at most " + std::to_string(kMaxSpecInputBytes) + " bytes");
      }
    }
  }
  for (const auto& [name, value] : inputs.envs) {
    if (is_secret(name)) {
      problem(JoinField("envs", name), name + " is a secret of this job: give it with --secret, not --env");
      continue;
    }
    spec.envs[name] = value;
    parsed.unset_envs.erase(name);
  }
  for (const auto& [name, value] : inputs.secrets) {
    if (spec.envs.count(name) || parsed.unset_envs.count(name)) {
      problem(JoinField("secrets", name), name + " is an env of this job: give it once, as an env or as a secret");
      continue;
    }
    if (auto ref = spec.secret_refs.find(name); ref != spec.secret_refs.end()) {
      problem(JoinField("secrets", name), name + " is read from " + ref->second.reference +
                                              " by the spec: give it once, by reference or by value");
      continue;
    }
    parsed.secret_values[name] = value;
    parsed.unset_secrets.erase(name);
    if (!std::binary_search(spec.secrets.begin(), spec.secrets.end(), name)) {
      spec.secrets.insert(std::upper_bound(spec.secrets.begin(), spec.secrets.end(), name), name);
    }
  }
  // Causeway's and SkyPilot's own variables are set at launch and would
  // hide a secret of the same name (the file's or one given).
  for (const auto& name : spec.secrets) {
    if (name.rfind("CAUSEWAY_", 0) == 0 || name.rfind("SKYPILOT_", 0) == 0) {
      problem(JoinField("secrets", name), "names starting CAUSEWAY_ or SKYPILOT_ are set at launch");
    }
  }
  size_t secret_bytes = 0;
  for (const auto& [name, value] : parsed.secret_values) secret_bytes += name.size() + value.size();
  if (secret_bytes > kMaxSecretBytes) {
    problem("secrets", "the job's secrets come to " + std::to_string(secret_bytes) + " bytes; at most " +
                           std::to_string(kMaxSecretBytes) + " in all");
  }
  if (spec.secrets.size() > kMaxSpecInputs) {
    problem("secrets", "the job has " + std::to_string(spec.secrets.size()) + " secrets; at most " + std::to_string(kMaxSpecInputs));
  }
  for (const auto* unset : {&parsed.unset_envs, &parsed.unset_secrets}) {
    for (const auto& [name, d] : *unset) problems.push_back(d);
  }
  // file_mounts and workdir filled again, with the values given here, as
  // SkyPilot fills them after applying --env and --secret.
  if (parsed.file_mount_templates || parsed.workdir_template) {
    std::map<std::string, std::string> vars = spec.envs;
    for (const auto& [name, value] : parsed.secret_values) vars[name] = value;
    if (parsed.file_mount_templates && parsed.file_mount_templates->size() == spec.file_mounts.size()) {
      for (size_t i = 0; i < spec.file_mounts.size(); ++i) {
        const FileMount& t = (*parsed.file_mount_templates)[i];
        FileMount& m = spec.file_mounts[i];
        FillMount(t, vars, m);
        const std::string field = JoinField("file_mounts", m.target);
        if (!m.store.empty()) {
          if (std::string why = StoreProblem(m.store); !why.empty()) problem(JoinField(field, "store"), why);
        }
        if (!m.mode.empty()) {
          if (std::string why = ModeProblem(m.mode); !why.empty()) problem(JoinField(field, "mode"), why);
        }
      }
    }
    if (parsed.workdir_template) {
      const Workdir& t = *parsed.workdir_template;
      spec.workdir.path = FillVariables(t.path, vars);
      spec.workdir.git_url = FillVariables(t.git_url, vars);
      spec.workdir.git_ref = FillVariables(t.git_ref, vars);
      if (!t.git_url.empty() && !JobSpecParser::GitUrl(spec.workdir.git_url)) {
        problem("workdir.url", JobSpecParser::GitUrlProblem());
      }
      if (!t.git_ref.empty() && !JobSpecParser::GitRef(spec.workdir.git_ref)) {
        problem("workdir.ref", JobSpecParser::GitRefProblem());
      }
    }
  }
  if (problems.empty()) return Status::Ok();
  std::string message = problems.size() == 1 ? problems.front().ToString()
                                             : std::to_string(problems.size()) + " problems with the job's variables; first: " +
                                                   problems.front().ToString();
  return InvalidArgument(std::move(message), std::move(problems));
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::string why = std::strerror(errno);  // "No such file or directory"
    if (!why.empty()) why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
    return NotFound("cannot read " + path + ": " + why);
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result<ParsedJobSpec> LoadJobSpecFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return ParseJobSpec(text, path);
}

}  // namespace causeway
