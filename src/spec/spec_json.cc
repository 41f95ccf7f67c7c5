#include "spec/spec_json.h"

#include <cstdlib>

namespace causeway {

nlohmann::json ToJson(const Diagnostic& d) {
  nlohmann::json j = {{"message", d.message}};
  if (!d.file.empty()) j["file"] = d.file;
  if (d.line > 0) j["line"] = d.line;
  if (d.column > 0) j["column"] = d.column;
  if (!d.field.empty()) j["field"] = d.field;
  if (d.warning) j["severity"] = "warning";
  return j;
}

nlohmann::json ToJson(const JobSpec& s) {
  nlohmann::json accels = nlohmann::json::array();
  for (const auto& a : s.accelerators.alternatives) {
    nlohmann::json aj = {{"type", a.type}, {"count", a.count}, {"use_spot", a.use_spot}};
    if (!a.cloud.empty()) aj["cloud"] = a.cloud;
    if (!a.region.empty()) aj["region"] = a.region;
    if (!a.zone.empty()) aj["zone"] = a.zone;
    if (!a.image_id.empty()) aj["image_id"] = a.image_id;
    accels.push_back(std::move(aj));
  }
  nlohmann::json mounts = nlohmann::json::array();
  for (const auto& m : s.file_mounts) {
    nlohmann::json mj = {{"target", m.target}, {"source", m.source}};
    if (!m.more_sources.empty()) mj["more_sources"] = m.more_sources;
    if (!m.name.empty()) mj["name"] = m.name;
    if (!m.store.empty()) mj["store"] = m.store;
    if (!m.mode.empty()) mj["mode"] = m.mode;
    if (m.persistent) mj["persistent"] = *m.persistent;
    if (m.object) mj["object"] = true;
    mounts.push_back(mj);
  }
  nlohmann::json datasets = nlohmann::json::array();
  for (const auto& d : s.datasets) {
    nlohmann::json dj = {{"name", d.name}};
    if (!d.version.empty()) dj["version"] = d.version;
    if (!d.digest.empty()) dj["digest"] = d.digest;
    if (!d.replicate.empty()) dj["replicate"] = d.replicate;
    datasets.push_back(dj);
  }
  nlohmann::json j = {
      {"name", s.name},
      {"accelerators", accels},
      {"accelerators_ordered", s.accelerators.ordered},
      {"cloud", s.cloud},
      {"region", s.region},
      {"use_spot", s.use_spot},
      {"image_id", s.image_id},
      {"labels", s.labels},
      {"owner", s.owner},
      {"team", s.team},
      {"num_nodes", s.num_nodes},
      {"envs", s.envs},
      {"secrets", s.secrets},  // names only: values are sealed apart
      {"file_mounts", mounts},
      {"workdir", s.workdir.path},
      {"setup", s.setup},
      {"run", s.run},
      {"datasets", datasets},
      {"residency", s.residency},
      {"priority", s.priority},
      {"ignored_fields", s.ignored_fields},
  };
  if (!s.identities.empty()) j["identities"] = s.identities;
  // References are not secrets: kept as written, with how each is delivered.
  if (!s.secret_refs.empty()) {
    nlohmann::json refs = nlohmann::json::object();
    for (const auto& [var, ref] : s.secret_refs) refs[var] = {{"from", ref.reference}, {"as", ref.as_file ? "file" : "env"}};
    j["secret_refs"] = std::move(refs);
  }
  if (!s.workdir.git_url.empty()) j["workdir_git"] = {{"url", s.workdir.git_url}, {"ref", s.workdir.git_ref}};
  if (!s.zone.empty()) j["zone"] = s.zone;
  if (!s.priority_class.empty()) j["priority_class"] = s.priority_class;
  if (s.disk_size_gb) j["disk_size_gb"] = *s.disk_size_gb;
  if (!s.cuda.empty()) j["cuda"] = s.cuda;
  if (!s.driver.empty()) j["driver"] = s.driver;
  if (s.cpus) j["cpus"] = s.cpus->ToString();
  if (s.memory_gb) j["memory_gb"] = s.memory_gb->ToString();
  if (s.time_limit) j["time_limit_seconds"] = s.time_limit->count() / 1'000'000;
  j["allow_remote_data"] = s.allow_remote_data;
  nlohmann::json rec = nlohmann::json::object();
  if (s.recovery.max_restarts) rec["max_restarts"] = *s.recovery.max_restarts;
  if (s.recovery.on) rec["on"] = *s.recovery.on;
  if (s.recovery.backoff) rec["backoff_seconds"] = s.recovery.backoff->count() / 1'000'000;
  j["recovery"] = rec;
  j["sim"] = {{"duration_seconds", s.sim.duration.count() / 1'000'000},
              {"utilization_percent", s.sim.utilization_percent},
              {"exit_code", s.sim.exit_code}};
  if (s.checkpoint) {
    j["checkpoint"] = {{"path", s.checkpoint->path},
                       {"interval_seconds", s.checkpoint->interval.count() / 1'000'000}};
  }
  return j;
}

nlohmann::json ToJson(const Cluster& c, const Estate& e) {
  nlohmann::json pools = nlohmann::json::array();
  for (const auto& p : c.node_pools) {
    nlohmann::json pj = {{"name", p.name}, {"nodes", p.nodes}, {"interconnect", p.interconnect}};
    if (p.cpu_only()) {
      pj["cpu_only"] = true;
    } else {
      pj["gpu_type"] = p.gpu_type;
      pj["gpus_per_node"] = p.gpus_per_node;
    }
    if (p.cpus) pj["cpus"] = *p.cpus;
    if (p.memory_gb) pj["memory_gb"] = *p.memory_gb;
    if (const Price* price = e.FindPrice(c.name, p.gpu_type)) {
      // A CPU-only pool is priced per CPU-hour.
      const char* key = p.cpu_only() ? "price_per_cpu_hour" : "price_per_gpu_hour";
      pj[key] = {{"on_demand", price->on_demand.AmountString()}, {"currency", price->on_demand.currency()}};
      if (price->spot) pj[key]["spot"] = price->spot->AmountString();
    }
    pools.push_back(pj);
  }
  const Provider* provider = e.FindProvider(c.provider);
  nlohmann::json out = {{"name", c.name},
                        {"provider", c.provider},
                        {"kind", provider ? provider->kind : ""},
                        {"region", c.region},
                        {"zone", c.zone},
                        {"total_gpus", c.TotalGpus()},
                        {"node_pools", pools}};
  if (c.storage) out["storage"] = *c.storage;
  return out;
}

}  // namespace causeway

namespace causeway {

Result<JobSpec> StoredSpec(const JobRecord& job) {
  nlohmann::json stored = nlohmann::json::parse(job.spec_json, nullptr, false);
  if (stored.is_discarded()) return DataLoss("job " + job.id + ": its stored spec is not JSON");
  Result<JobSpec> spec = JobSpecFromJson(stored);
  if (!spec.ok()) return spec.status().WithPrefix("job " + job.id);
  return spec;
}

Result<JobSpec> JobSpecFromJson(const nlohmann::json& j) {
  try {
    JobSpec s;
    s.name = j.at("name").get<std::string>();
    s.accelerators.ordered = j.at("accelerators_ordered").get<bool>();
    s.cloud = j.at("cloud").get<std::string>();
    s.region = j.at("region").get<std::string>();
    s.zone = j.value("zone", "");
    s.use_spot = j.at("use_spot").get<bool>();
    s.image_id = j.at("image_id").get<std::string>();
    for (const auto& a : j.at("accelerators")) {
      // Specs stored before alternatives carried their own placement
      // (no "use_spot" per alternative) take the job's.
      bool own = a.contains("use_spot");
      Alternative alt;
      alt.type = a.at("type").get<std::string>();
      alt.count = a.at("count").get<int>();
      alt.cloud = own ? a.value("cloud", "") : s.cloud;
      alt.region = own ? a.value("region", "") : s.region;
      alt.zone = own ? a.value("zone", "") : s.zone;
      alt.use_spot = own ? a.at("use_spot").get<bool>() : s.use_spot;
      alt.image_id = own ? a.value("image_id", "") : s.image_id;
      s.accelerators.alternatives.push_back(std::move(alt));
    }
    s.labels = j.at("labels").get<std::map<std::string, std::string>>();
    s.owner = j.at("owner").get<std::string>();
    s.team = j.at("team").get<std::string>();
    s.num_nodes = j.at("num_nodes").get<int>();
    s.envs = j.at("envs").get<std::map<std::string, std::string>>();
    s.secrets = j.value("secrets", std::vector<std::string>{});
    s.identities = j.value("identities", std::vector<std::string>{});
    if (auto refs = j.find("secret_refs"); refs != j.end()) {
      for (const auto& [var, r] : refs->items()) {
        ASSIGN_OR_RETURN(SecretRef ref, ParseSecretRef(r.at("from").get<std::string>()));
        ref.as_file = r.value("as", "env") == "file";
        s.secret_refs[var] = std::move(ref);
      }
    }
    for (const auto& m : j.at("file_mounts")) {
      FileMount fm;
      fm.target = m.at("target").get<std::string>();
      fm.source = m.at("source").get<std::string>();
      fm.more_sources = m.value("more_sources", std::vector<std::string>{});
      fm.name = m.value("name", "");
      fm.store = m.value("store", "");
      fm.mode = m.value("mode", "");
      if (m.contains("persistent")) fm.persistent = m["persistent"].get<bool>();
      fm.object = m.value("object", false);
      s.file_mounts.push_back(std::move(fm));
    }
    s.workdir.path = j.at("workdir").get<std::string>();
    if (j.contains("workdir_git")) {
      s.workdir.git_url = j["workdir_git"].at("url").get<std::string>();
      s.workdir.git_ref = j["workdir_git"].value("ref", "");
    }
    s.setup = j.at("setup").get<std::string>();
    s.run = j.at("run").get<std::string>();
    for (const auto& d : j.at("datasets")) {
      s.datasets.push_back(DatasetRef{d.at("name").get<std::string>(), d.value("version", ""), d.value("digest", ""),
                                      d.value("replicate", "")});
    }
    s.residency = j.at("residency").get<std::string>();
    s.priority = j.at("priority").get<int>();
    s.priority_class = j.value("priority_class", "");
    s.ignored_fields = j.at("ignored_fields").get<std::vector<std::string>>();
    if (j.contains("disk_size_gb")) s.disk_size_gb = j["disk_size_gb"].get<int>();
    s.cuda = j.value("cuda", "");
    s.driver = j.value("driver", "");
    auto amount = [](const std::string& text) {
      NodeAmount a;
      a.or_more = !text.empty() && text.back() == '+';
      a.value = std::strtod(text.c_str(), nullptr);
      return a;
    };
    if (j.contains("cpus")) s.cpus = amount(j["cpus"].get<std::string>());
    if (j.contains("memory_gb")) s.memory_gb = amount(j["memory_gb"].get<std::string>());
    if (j.contains("time_limit_seconds")) s.time_limit = Micros(j["time_limit_seconds"].get<int64_t>() * 1'000'000);
    s.allow_remote_data = j.value("allow_remote_data", false);
    if (j.contains("recovery")) {
      const auto& rec = j["recovery"];
      if (rec.contains("max_restarts")) s.recovery.max_restarts = rec["max_restarts"].get<int>();
      if (rec.contains("on")) s.recovery.on = rec["on"].get<std::vector<std::string>>();
      if (rec.contains("backoff_seconds")) s.recovery.backoff = Micros(rec["backoff_seconds"].get<int64_t>() * 1'000'000);
    }
    if (j.contains("sim")) {
      const auto& sim = j["sim"];
      s.sim.duration = Micros(sim.at("duration_seconds").get<int64_t>() * 1'000'000);
      s.sim.utilization_percent = sim.at("utilization_percent").get<int>();
      s.sim.exit_code = sim.at("exit_code").get<int>();
    }
    if (j.contains("checkpoint")) {
      s.checkpoint = CheckpointSpec{j["checkpoint"].at("path").get<std::string>(),
                                    Micros(j["checkpoint"].at("interval_seconds").get<int64_t>() * 1'000'000)};
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    return DataLoss(std::string("stored job spec is malformed: ") + e.what());
  }
}

}  // namespace causeway
