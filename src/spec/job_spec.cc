#include "causeway/job_spec.h"

#include "causeway/input.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "spec/yaml_reader.h"

namespace causeway {
namespace {

using spec::JoinField;
using spec::KeySet;
using spec::YamlReader;

const KeySet kTopKeys{
    {"name", "resources", "num_nodes", "envs", "file_mounts", "setup", "run", "workdir",
     "labels", "datasets", "checkpoint", "residency", "priority", "time_limit", "allow_remote_data", "sim",
     "recovery"},
    {"secrets", "config", "service", "volumes", "experimental", "event_callback"}};

const KeySet kResourceKeys{
    {"accelerators", "infra", "cloud", "region", "use_spot", "disk_size", "image_id", "labels"},
    {"zone", "cpus", "memory", "instance_type", "ports", "disk_tier", "accelerator_args",
     "job_recovery", "spot_recovery", "any_of", "ordered", "network_tier", "autostop",
     "priority"}};

bool IsLowerIdent(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](unsigned char c) {
    return std::islower(c) || std::isdigit(c) || c == '-' || c == '_';
  });
}

bool IsEnvName(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
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
    return ParsedJobSpec{std::move(spec_), r_.warnings()};
  }

 private:
  YAML::Node Get(const YAML::Node& map, std::string_view key) { return YamlReader::Child(map, key); }

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
    if (auto n = Get(root, "envs"); n.IsDefined()) {
      if (auto m = r_.StringMap(n, "envs")) {
        for (auto it = n.begin(); it != n.end(); ++it) {
          std::string key = it->first.Scalar();
          if (!IsEnvName(key)) {
            r_.Error(it->first, JoinField("envs", key),
                     "invalid environment variable name: expected letters, digits and '_', not starting with a digit");
          }
        }
        spec_.envs = std::move(*m);
      }
    }
    if (auto n = Get(root, "file_mounts"); n.IsDefined() && !n.IsNull()) ParseFileMounts(n);
    for (auto [key, dest] : {std::pair{"setup", &spec_.setup}, std::pair{"run", &spec_.run},
                             std::pair{"workdir", &spec_.workdir}}) {
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
    auto owner = spec_.labels.find("owner");
    if (owner != spec_.labels.end()) spec_.owner = owner->second;
    auto team = spec_.labels.find("team");
    if (team != spec_.labels.end()) spec_.team = team->second;
  }

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
    if (auto n = Get(res, "accelerators"); n.IsDefined() && !n.IsNull()) ParseAccelerators(n);
    YAML::Node infra = Get(res, "infra"), cloud = Get(res, "cloud"), region = Get(res, "region");
    if (infra.IsDefined() && !infra.IsNull()) {
      if (cloud.IsDefined() || region.IsDefined()) {
        r_.Error(infra, "resources.infra",
                 "give either infra (\"provider/region\") or cloud and region, not both");
      }
      if (auto v = r_.String(infra, "resources.infra")) ParseInfra(infra, *v);
    } else {
      if (cloud.IsDefined() && !cloud.IsNull()) {
        if (auto v = r_.String(cloud, "resources.cloud")) spec_.cloud = Lower(*v);
      }
      if (region.IsDefined() && !region.IsNull()) {
        if (auto v = r_.String(region, "resources.region")) spec_.region = *v;
      }
    }
    if (auto n = Get(res, "use_spot"); n.IsDefined()) {
      if (auto v = r_.Bool(n, "resources.use_spot")) spec_.use_spot = *v;
    }
    if (auto n = Get(res, "disk_size"); n.IsDefined() && !n.IsNull()) ParseDiskSize(n);
    if (auto n = Get(res, "image_id"); n.IsDefined() && !n.IsNull()) {
      if (auto v = r_.String(n, "resources.image_id")) {
        if (v->empty()) {
          r_.Error(n, "resources.image_id", "expected a container image reference");
        } else {
          spec_.image_id = *v;
        }
      }
    }
    if (auto n = Get(res, "labels"); n.IsDefined()) MergeLabels(n, "resources.labels");
  }

  static std::string Lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  }

  void ParseInfra(const YAML::Node& node, const std::string& value) {
    // "provider", "provider/region" or "provider/region/zone".
    std::vector<std::string> parts;
    std::stringstream ss(value);
    std::string part;
    while (std::getline(ss, part, '/')) parts.push_back(part);
    if (value.empty() || value.back() == '/' || parts.empty() || parts.size() > 3 ||
        std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
      r_.Error(node, "resources.infra",
               "expected \"provider\", \"provider/region\" or \"provider/region/zone\", got \"" + value + "\"");
      return;
    }
    spec_.cloud = Lower(parts[0]);
    if (parts.size() > 1) spec_.region = parts[1];
    if (parts.size() > 2) spec_.zone = parts[2];
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

  void AddAlternative(const YAML::Node& at, Result<GpuRequest> req, std::set<std::string>& seen) {
    const char* field = "resources.accelerators";
    if (!req.ok()) {
      r_.Error(at, field, req.status().message());
      return;
    }
    if (!seen.insert(req->type).second) {
      r_.Error(at, field, "GPU type " + req->type + " is listed twice");
      return;
    }
    spec_.accelerators.alternatives.push_back(*req);
  }

  // One mapping entry: {H100: 8} or {"H100:8": null} (SkyPilot's set form).
  void AddMapEntry(const YAML::Node& key, const YAML::Node& value, std::set<std::string>& seen) {
    const char* field = "resources.accelerators";
    if (!key.IsScalar()) {
      r_.Error(key, field, "expected a GPU type such as H100");
      return;
    }
    if (value.IsNull()) {
      AddAlternative(key, ParseGpuRequest(key.Scalar()), seen);
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
    AddAlternative(value, ParseGpuRequest(key.Scalar() + ":" + value.Scalar()), seen);
  }

  void ParseAccelerators(const YAML::Node& n) {
    const char* field = "resources.accelerators";
    std::set<std::string> seen;
    size_t errors_before = r_.error_count();
    if (n.IsScalar()) {
      AddAlternative(n, ParseGpuRequest(n.Scalar()), seen);
    } else if (n.IsMap()) {
      for (auto it = n.begin(); it != n.end(); ++it) AddMapEntry(it->first, it->second, seen);
      spec_.accelerators.ordered = false;
    } else if (n.IsSequence()) {
      for (const auto& item : n) {
        if (item.IsScalar()) {
          AddAlternative(item, ParseGpuRequest(item.Scalar()), seen);
        } else if (item.IsMap() && item.size() == 1) {
          AddMapEntry(item.begin()->first, item.begin()->second, seen);
        } else {
          r_.Error(item, field, "expected each alternative as \"TYPE:COUNT\" or {TYPE: COUNT}");
        }
      }
      spec_.accelerators.ordered = true;
    }
    if (spec_.accelerators.empty() && r_.error_count() == errors_before) {
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

  void ParseFileMounts(const YAML::Node& n) {
    if (!n.IsMap()) {
      r_.Error(n, "file_mounts", "expected a mapping of target paths to sources");
      return;
    }
    static const KeySet kMountKeys{{"source", "name", "store", "mode"}, {"persistent", "config"}};
    std::set<std::string> seen;
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (!it->first.IsScalar()) {
        r_.Error(it->first, "file_mounts", "expected a target path as the key");
        continue;
      }
      FileMount m;
      m.target = it->first.Scalar();
      std::string field = JoinField("file_mounts", m.target);
      if (!seen.insert(m.target).second) {
        r_.Error(it->first, field, "duplicate key \"" + m.target + "\"");
        continue;
      }
      YAML::Node v = it->second;  // by value: it-> yields a temporary proxy
      if (v.IsScalar()) {
        m.source = v.Scalar();
      } else if (v.IsMap()) {
        if (!r_.CheckMap(v, field, kMountKeys)) continue;
        for (auto [key, dest] : {std::pair{"source", &m.source}, std::pair{"name", &m.source},
                                 std::pair{"mode", &m.mode}}) {
          if (auto c = Get(v, key); c.IsDefined()) {
            if (auto s = r_.String(c, JoinField(field, key))) *dest = *s;
          }
        }
        static const std::set<std::string> kModes{"MOUNT", "COPY", "MOUNT_CACHED"};
        if (!m.mode.empty() && !kModes.count(m.mode)) {
          r_.Error(Get(v, "mode"), JoinField(field, "mode"), "expected MOUNT, COPY or MOUNT_CACHED");
        }
        if (m.source.empty()) r_.Error(v, field, "expected a source or a name");
      } else {
        r_.Error(v, field, "expected a source path or a mapping with source/name/mode");
        continue;
      }
      spec_.file_mounts.push_back(std::move(m));
    }
  }

  void ParseDatasets(const YAML::Node& n) {
    if (!n.IsSequence()) {
      r_.Error(n, "datasets", "expected a list of datasets such as [{name: c4, version: \"2024-05\"}]");
      return;
    }
    static const KeySet kDatasetKeys{{"name", "version", "digest"}};
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
};

}  // namespace

Result<ParsedJobSpec> ParseJobSpec(std::string_view yaml_text, const std::string& file) {
  JobSpecParser parser(file);
  return parser.Parse(yaml_text);
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
