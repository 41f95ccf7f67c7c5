#include "policy/policy.h"
#include "provenance/probe.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <set>

#include <nlohmann/json.hpp>

#include "causeway/text.h"

namespace causeway::policy {

bool Rule::Covers(const std::string& team) const {
  return config_.teams.empty() || std::find(config_.teams.begin(), config_.teams.end(), team) != config_.teams.end();
}

Status Rule::Reject(const std::string& field, const std::string& problem, const std::string& fix) const {
  std::string msg = "policy " + config_.name + " (" + config_.rule + "): " + problem + "; " + fix;
  return PolicyViolation(msg, {Diagnostic{"", 0, 0, field, msg}});
}

namespace {

// No owner, no run: the labels that cost attribution depends on.
class RequireLabels final : public Rule {
 public:
  using Rule::Rule;
  Status Apply(JobSpec& spec, std::vector<std::string>&) const override {
    for (const auto& label : config_.labels) {
      auto it = spec.labels.find(label);
      if (it == spec.labels.end() || it->second.empty()) {
        return Reject("resources.labels." + label, "label \"" + label + "\" is required",
                      "add it under resources.labels, e.g. " + label + ": " +
                          (label == "owner" ? "you@example.com (who pays for this job)" : "<value>"));
      }
    }
    return Status::Ok();
  }
};

// Images must be pinned by digest so a run can be reproduced and audited.
class PinnedImage final : public Rule {
 public:
  using Rule::Rule;
  Status Apply(JobSpec& spec, std::vector<std::string>&) const override {
    // The job's own image, and each alternative's (which may override it).
    std::vector<const std::string*> images{&spec.image_id};
    for (const auto& alt : spec.accelerators.alternatives) images.push_back(&alt.image_id);
    for (const std::string* image : images) {
      if (image->empty() || Pinned(*image)) continue;  // empty: the cluster's default image
      return Reject("resources.image_id", "image \"" + *image + "\" is not pinned by digest",
                    "use IMAGE@sha256:<digest> (tags such as latest can change under you)");
    }
    return Status::Ok();
  }

 private:
  static bool Pinned(const std::string& image) {
    auto at = image.find("@sha256:");
    return at != std::string::npos && image.size() == at + 8 + 64 &&
           std::all_of(image.begin() + static_cast<long>(at) + 8, image.end(),
                       [](unsigned char c) { return std::isdigit(c) || (c >= 'a' && c <= 'f'); });
  }
};

// The GPU types a team may use. Alternatives of other types are left out
// (with a note); the job is rejected only when none is left.
class AllowedGpuTypes final : public Rule {
 public:
  using Rule::Rule;
  Status Apply(JobSpec& spec, std::vector<std::string>& changes) const override {
    if (!Covers(spec.team)) return Status::Ok();
    auto allowed = [&](const Alternative& alt) {
      return std::find(config_.gpu_types.begin(), config_.gpu_types.end(), alt.type) != config_.gpu_types.end();
    };
    auto& alts = spec.accelerators.alternatives;
    if (alts.empty() || std::all_of(alts.begin(), alts.end(), allowed)) return Status::Ok();
    std::string kinds;
    for (const auto& g : config_.gpu_types) kinds += (kinds.empty() ? "" : ", ") + g;
    if (std::none_of(alts.begin(), alts.end(), allowed)) {
      std::string asked;
      for (const auto& a : alts) asked += (asked.empty() ? "" : ", ") + a.type;
      return Reject("resources.accelerators", "team \"" + spec.team + "\" may not use " + asked, "use one of " + kinds);
    }
    for (const auto& a : alts) {
      if (!allowed(a)) {
        changes.push_back("policy " + config_.name + " left out alternative " + a.Describe() + ": team \"" + spec.team +
                          "\" may use only " + kinds);
      }
    }
    alts.erase(std::remove_if(alts.begin(), alts.end(), [&](const Alternative& a) { return !allowed(a); }), alts.end());
    return Status::Ok();
  }
};

// Jobs of the covered teams stay in one residency zone; a job that names no
// zone is given this one.
class RequireResidency final : public Rule {
 public:
  using Rule::Rule;
  Status Apply(JobSpec& spec, std::vector<std::string>& changes) const override {
    if (!Covers(spec.team)) return Status::Ok();
    if (spec.residency.empty()) {
      spec.residency = config_.zone;
      changes.push_back("policy " + config_.name + " set residency to " + config_.zone);
      return Status::Ok();
    }
    if (spec.residency != config_.zone) {
      return Reject("residency", "team \"" + spec.team + "\" must keep its data in " + config_.zone,
                    "set residency: " + config_.zone + " or remove it");
    }
    return Status::Ok();
  }
};

class MaxJobSize final : public Rule {
 public:
  using Rule::Rule;
  Status Apply(JobSpec& spec, std::vector<std::string>& changes) const override {
    if (config_.max_gpus) {
      // Alternatives over the limit are left out; rejected when all are.
      auto& alts = spec.accelerators.alternatives;
      auto over = [&](const Alternative& a) { return a.count * spec.num_nodes > *config_.max_gpus; };
      if (!alts.empty() && std::all_of(alts.begin(), alts.end(), over)) {
        const Alternative& alt = alts.front();
        return Reject("resources.accelerators",
                      "the job asks for " + std::to_string(alt.count * spec.num_nodes) + " GPUs (" +
                          std::to_string(spec.num_nodes) + " nodes x " + alt.ToString() + "), more than the limit of " +
                          std::to_string(*config_.max_gpus),
                      "use fewer nodes or GPUs, or ask a platform engineer for an exception");
      }
      for (const auto& a : alts) {
        if (over(a)) {
          changes.push_back("policy " + config_.name + " left out alternative " + a.Describe() + ": " +
                            std::to_string(a.count * spec.num_nodes) + " GPUs, more than the limit of " +
                            std::to_string(*config_.max_gpus));
        }
      }
      alts.erase(std::remove_if(alts.begin(), alts.end(), over), alts.end());
    }
    if (config_.max_duration) {
      if (!spec.time_limit) {
        spec.time_limit = *config_.max_duration;
        changes.push_back("policy " + config_.name + " set time_limit to " + FormatDuration(*config_.max_duration));
      } else if (*spec.time_limit > *config_.max_duration) {
        return Reject("time_limit", "time_limit " + FormatDuration(*spec.time_limit) + " is over the limit of " +
                                        FormatDuration(*config_.max_duration),
                      "set time_limit to " + FormatDuration(*config_.max_duration) + " or less and checkpoint");
      }
    }
    return Status::Ok();
  }
};

}  // namespace

std::unique_ptr<Chain> Chain::FromEstate(const Estate& estate) {
  auto chain = std::make_unique<Chain>();
  for (const auto& p : estate.policies) {
    if (p.rule == "require-labels") chain->rules_.push_back(std::make_unique<RequireLabels>(p));
    if (p.rule == "pinned-image") chain->rules_.push_back(std::make_unique<PinnedImage>(p));
    if (p.rule == "allowed-gpu-types") chain->rules_.push_back(std::make_unique<AllowedGpuTypes>(p));
    if (p.rule == "require-residency") chain->rules_.push_back(std::make_unique<RequireResidency>(p));
    if (p.rule == "max-job-size") chain->rules_.push_back(std::make_unique<MaxJobSize>(p));
  }
  return chain;
}

Status Chain::Apply(JobSpec& spec, std::vector<std::string>& changes) const {
  // Every rule runs, so a file with several problems needs one round trip.
  std::vector<Diagnostic> problems;
  std::string first;
  for (const auto& rule : rules_) {
    Status st = rule->Apply(spec, changes);
    if (st.ok()) continue;
    if (first.empty()) first = st.message();
    for (const auto& d : st.diagnostics()) problems.push_back(d);
  }
  if (problems.empty()) return Status::Ok();
  if (problems.size() == 1) return PolicyViolation(first, std::move(problems));
  std::string message = std::to_string(problems.size()) + " policies reject the job; first: " + first;
  return PolicyViolation(std::move(message), std::move(problems));
}

namespace {
// A target path as bash should expand it: "~/x" under $HOME.
std::string TargetPath(const std::string& t) {
  if (t == "~") return "\"$HOME\"";
  if (t.rfind("~/", 0) == 0) return "\"$HOME\"/" + ShellQuote(t.substr(2));
  return ShellQuote(t);
}
}  // namespace

// Unmounts a MOUNT_CACHED mount ($2, its cache $1) once rclone has written
// every file back, waiting at most an hour; a cache still dirty then is
// kept, and said so. A file is pending until its metadata in rclone's
// cache (vfsMeta) says in full that it is clean ("Dirty": false) and is no
// older than its data (vfs). Missing metadata is pending: the kernel hands
// rclone a file's close after the writer has moved on. Empty or partial
// metadata is pending too: rclone rewrites that file in place, truncating
// it first, and the close of the last file written usually does so just as
// the job ends.
constexpr const char* kUnmountCached =
    "causeway_cache_dirty() {\n"
    "  local f m\n"
    "  while IFS= read -r -d '' f; do\n"
    "    m=\"$1/vfsMeta/${f#\"$1/vfs/\"}\"\n"
    "    if [ ! -f \"$m\" ] || [ \"$f\" -nt \"$m\" ] || ! grep -qs '\"Dirty\": false' \"$m\"; then return 0; fi\n"
    "  done < <(find \"$1/vfs\" -type f -print0 2>/dev/null)\n"
    "  return 1\n"
    "}\n"
    "causeway_unmount_cached() {\n"
    "  local i=0\n"
    "  while causeway_cache_dirty \"$1\" && [ \"$i\" -lt 3600 ]; do sleep 1; i=$((i + 1)); done\n"
    "  fusermount3 -u -- \"$2\" 2>/dev/null || true\n"
    "  if causeway_cache_dirty \"$1\"; then\n"
    "    echo \"causeway: files under $2 were not written back within an hour; rclone's cache is kept at $1\" >&2\n"
    "  else rm -rf -- \"$1\"; fi\n"
    "}\n";

std::vector<const CloudFederation*> FederationsFor(const JobSpec& spec, const IdentityConfig& identity) {
  std::vector<const CloudFederation*> out;
  for (const std::string& name : spec.identities) {
    const CloudFederation* f = identity.FindFederation(name);
    if (f && f->AllowsTeam(spec.team)) out.push_back(f);
  }
  if (!spec.identities.empty()) return out;
  std::set<std::string> kinds;  // one per cloud: the first default of each
  for (const CloudFederation& f : identity.federations) {
    if (f.by_default && f.AllowsTeam(spec.team) && kinds.insert(f.kind).second) out.push_back(&f);
  }
  return out;
}

std::string FederatedTokenVar(const CloudFederation& f) {
  std::string kind = f.kind;
  for (char& c : kind) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return "CAUSEWAY_FEDERATED_TOKEN_" + kind;
}

namespace {

// The identity part of the workspace script (WorkspaceScript's contract);
// defines causeway_identity_end, which the EXIT trap runs.
std::string IdentityScript(const std::vector<const CloudFederation*>& federations, const std::string& job_id,
                           int attempt, Micros refresh_every) {
  std::string out =
      "causeway_identity=$(umask 077 && mktemp -d \"${TMPDIR:-/tmp}/causeway-identity.XXXXXX\")\n";
  std::string refresh;
  for (const CloudFederation* f : federations) {
    const std::string var = FederatedTokenVar(*f);
    const std::string file = "\"$causeway_identity/" + f->kind + ".token\"";
    out += "(umask 077 && printf '%s' \"${" + var + "}\" > " + file + ")\nunset " + var + "\n";
    if (f->kind == "aws") {
      out += "export AWS_ROLE_ARN=" + ShellQuote(f->role_arn) + " AWS_WEB_IDENTITY_TOKEN_FILE=" + file +
             " AWS_ROLE_SESSION_NAME=" + ShellQuote("causeway-" + job_id + "-" + std::to_string(attempt)) + "\n";
      if (!f->sts_endpoint.empty()) out += "export AWS_ENDPOINT_URL_STS=" + ShellQuote(f->sts_endpoint) + "\n";
    } else if (f->kind == "gcp") {
      // Google's external_account configuration, its token read from the file.
      nlohmann::json config = {{"type", "external_account"},
                               {"audience", f->audience},
                               {"subject_token_type", "urn:ietf:params:oauth:token-type:jwt"},
                               {"token_url", f->token_url},
                               {"credential_source", {{"file", "@FILE@"}}}};
      if (!f->service_account.empty()) {
        config["service_account_impersonation_url"] =
            "https://iamcredentials.googleapis.com/v1/projects/-/serviceAccounts/" + f->service_account +
            ":generateAccessToken";
      }
      std::string text = config.dump();
      const size_t at = text.find("@FILE@");
      out += "(umask 077 && printf '%s%s%s' " + ShellQuote(text.substr(0, at)) + " \"$causeway_identity/gcp.token\" " +
             ShellQuote(text.substr(at + 6)) + " > \"$causeway_identity/gcp.json\")\n";
      out += "export GOOGLE_APPLICATION_CREDENTIALS=\"$causeway_identity/gcp.json\"\n";
    } else if (f->kind == "azure") {
      out += "export AZURE_FEDERATED_TOKEN_FILE=" + file + " AZURE_CLIENT_ID=" + ShellQuote(f->client_id) +
             " AZURE_TENANT_ID=" + ShellQuote(f->tenant_id) + "\n";
      if (!f->authority_host.empty()) out += "export AZURE_AUTHORITY_HOST=" + ShellQuote(f->authority_host) + "\n";
    } else if (f->kind == "kubernetes") {
      // A kubeconfig (JSON is YAML) whose user reads the token from its
      // file, as client-go and kubectl do again and again: refreshes land.
      nlohmann::json cluster = {{"server", f->api_server}};
      if (!f->ca_file.empty()) cluster["certificate-authority"] = f->ca_file;
      nlohmann::json config = {{"apiVersion", "v1"},
                               {"kind", "Config"},
                               {"clusters", {{{"name", f->name}, {"cluster", cluster}}}},
                               {"users", {{{"name", f->name}, {"user", {{"tokenFile", "@FILE@"}}}}}},
                               {"contexts", {{{"name", f->name}, {"context", {{"cluster", f->name}, {"user", f->name}}}}}},
                               {"current-context", f->name}};
      std::string text = config.dump();
      const size_t at = text.find("@FILE@");
      out += "(umask 077 && printf '%s%s%s' " + ShellQuote(text.substr(0, at)) + " \"$causeway_identity/kubernetes.token\" " +
             ShellQuote(text.substr(at + 6)) + " > \"$causeway_identity/kubeconfig\")\n";
      out += "export KUBECONFIG=\"$causeway_identity/kubeconfig\"\n";
    }
    refresh += "causeway_identity_refresh " + ShellQuote(nlohmann::json{{"audience", f->audience}}.dump()) + " " +
               file + " || true; ";
  }
  const int64_t every = std::max<int64_t>(1, std::chrono::duration_cast<std::chrono::seconds>(refresh_every).count());
  // A fresh token replaces the file whole (written aside, then renamed),
  // so an SDK never reads half of one.
  out += "causeway_identity_refresh() (\n"
         "  umask 077\n"
         "  curl -fsS --max-time 30 -X POST -H \"Authorization: Bearer $CAUSEWAY_TOKEN\" -H 'Accept: application/jwt' "
         "-H 'Content-Type: application/json' -d \"$1\" \"$CAUSEWAY_SERVER/v1/jobs/$CAUSEWAY_JOB_ID/workload-token\" "
         "> \"$2.new\" && [ -s \"$2.new\" ] && mv -f -- \"$2.new\" \"$2\"\n"
         ")\n"
         // Nothing of the job's output held open: a backend that waits for
         // it to close must not wait on the loop.
         "(while sleep " + std::to_string(every) + "; do " + refresh + "done) </dev/null >/dev/null 2>&1 &\n"
         "causeway_identity_refresher=$!\n"
         "causeway_identity_end() { kill \"$causeway_identity_refresher\" 2>/dev/null || true; rm -rf -- \"$causeway_identity\"; }\n";
  return out;
}

}  // namespace

std::string WorkspaceScript(const JobSpec& spec, const std::string& job_id, int attempt, const DataConfig* data,
                            const std::vector<const CloudFederation*>& federations, Micros refresh_every) {
  std::string out, unmount;
  // What the EXIT trap runs: what was set up last is undone first.
  std::string ends;
  auto at_exit = [&](const std::string& fn) {
    ends = ends.empty() ? fn : fn + "; " + ends;
    out += "trap '" + ends + "' EXIT\n";
  };
  if (!federations.empty()) {
    out += IdentityScript(federations, job_id, attempt, refresh_every);
    at_exit("causeway_identity_end");
  }
  // Secrets the spec asks for as files: the broker's value arrives in the
  // variable, goes to a file only the job's user can read, and the
  // variable then holds the file's path. Removed when the script ends.
  bool files = false;
  for (const auto& [var, ref] : spec.secret_refs) {
    if (!ref.as_file) continue;
    if (!files) {
      out += "causeway_secrets=$(umask 077 && mktemp -d \"${TMPDIR:-/tmp}/causeway-secrets.XXXXXX\")\n"
             "causeway_secrets_end() { rm -rf -- \"$causeway_secrets\"; }\n";
      at_exit("causeway_secrets_end");
      files = true;
    }
    out += "(umask 077 && printf '%s' \"${" + var + "}\" > \"$causeway_secrets/" + var + "\")\nexport " + var +
           "=\"$causeway_secrets/" + var + "\"\n";
  }
  int cached = 0;
  for (const FileMount& m : spec.file_mounts) {
    std::string target = TargetPath(m.target);
    const StorageLocation* bucket =
        data && !data->node_rclone_config.empty() && !m.FromPath() ? data->LocationOfUrl(m.source) : nullptr;
    if (!bucket) {
      out += "mkdir -p -- \"$(dirname -- " + target + ")\" && ln -sfn -- " + ShellQuote(m.source) + " " + target + "\n";
      continue;
    }
    std::string remote = bucket->RemoteOf(m.source);  // under the location's rclone remote
    std::string rclone = "rclone --config " + ShellQuote(data->node_rclone_config);
    if (m.Mode() == "COPY") {
      out += "mkdir -p -- " + target + " && " + rclone + " copy --checksum -- " + ShellQuote(remote) + " " + target +
             "\n";
      continue;
    }
    // Mounted for the attempt's life, unmounted when the script ends.
    if (m.Mode() != "MOUNT_CACHED") {
      out += "mkdir -p -- " + target + " && " + rclone + " mount --daemon -- " + ShellQuote(remote) + " " + target +
             "\n";
      unmount += "fusermount3 -u -- " + target + " 2>/dev/null || true; ";
      continue;
    }
    // MOUNT_CACHED: writes land in a local cache, and rclone writes each
    // file back to the bucket seconds after it is closed; unmounting before
    // then loses it. The cache is the attempt's own, so the end of the
    // script waits until nothing in it is dirty (rclone's own marks).
    std::string var = "causeway_cache_" + std::to_string(cached++), cache = "\"$" + var + "\"";
    out += var + "=$(mktemp -d) && mkdir -p -- " + target + " && " + rclone +
           " mount --daemon --vfs-cache-mode full --cache-dir " + cache + " -- " + ShellQuote(remote) + " " + target +
           "\n";
    unmount += "causeway_unmount_cached " + cache + " " + target + "; ";
  }
  if (cached > 0) out += kUnmountCached;
  if (!unmount.empty()) {
    out += "causeway_unmount() { " + unmount + "}\n";
    at_exit("causeway_unmount");
  }
  if (!spec.workdir.git_url.empty()) {
    std::string dir = "\"$PWD\"/" + ShellQuote("workdir-" + job_id + "-" + std::to_string(attempt));
    out += "git clone --quiet -- " + ShellQuote(spec.workdir.git_url) + " " + dir + "\n";
    if (!spec.workdir.git_ref.empty()) out += "git -C " + dir + " checkout --quiet " + ShellQuote(spec.workdir.git_ref) + " --\n";
    out += "cd -- " + dir + "\n";
  } else if (!spec.workdir.path.empty()) {
    out += "cd -- " + TargetPath(spec.workdir.path) + "\n";
  }
  // The code's revision, for the attempt's provenance.
  if (!spec.workdir.empty()) out += provenance::CodeRevisionScript();
  return out;
}

std::optional<MountedPath> MountedBucketPath(const JobSpec& spec, const DataConfig& data, const std::string& path,
                                             std::string_view mode) {
  // The rest of `path` under `prefix` ("" or "/..."), or nullopt.
  auto under = [&path](std::string prefix) -> std::optional<std::string> {
    while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
    if (prefix.empty() || path.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
    if (path.size() > prefix.size() && path[prefix.size()] != '/') return std::nullopt;
    return path.substr(prefix.size());
  };
  if (data.node_rclone_config.empty()) return std::nullopt;  // buckets are not delivered
  for (const FileMount& m : spec.file_mounts) {
    if (m.FromPath() || m.Mode() != mode) continue;
    const StorageLocation* l = data.LocationOfUrl(m.source);
    if (!l) continue;
    std::optional<std::string> rest = under(m.target);
    if (!rest) rest = under(m.source);
    if (!rest) continue;
    std::string url = m.source;
    while (url.size() > 1 && url.back() == '/') url.pop_back();
    url += *rest;
    return MountedPath{l, url, l->RemoteOf(url)};
  }
  return std::nullopt;
}

std::map<std::string, std::string> LaunchEnv(const JobSpec& spec, const Cluster& cluster, const std::string& job_id,
                                             int attempt, int gpus_per_node) {
  std::map<std::string, std::string> env = cluster.inject_envs;
  for (const auto& [k, v] : spec.envs) env[k] = v;
  env["CAUSEWAY_JOB_ID"] = job_id;
  env["CAUSEWAY_ATTEMPT"] = std::to_string(attempt);
  env["CAUSEWAY_CLUSTER"] = cluster.name;
  if (spec.checkpoint) env["CAUSEWAY_CHECKPOINT_DIR"] = spec.checkpoint->path;
  env["SKYPILOT_NUM_NODES"] = std::to_string(spec.num_nodes);
  env["SKYPILOT_NUM_GPUS_PER_NODE"] = std::to_string(gpus_per_node);
  env["SKYPILOT_TASK_ID"] = "causeway-" + job_id + "-" + std::to_string(attempt);
  env["SKYPILOT_NODE_RANK"] = "0";
  env["SKYPILOT_NODE_IPS"] = "127.0.0.1";
  return env;
}

}  // namespace causeway::policy
