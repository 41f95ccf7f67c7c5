// A real single-node Slurm cluster for a test, brought up with
// scripts/slurm/up.sh and stopped by pid with scripts/slurm/down.sh.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "server_process.h"

namespace causeway::testing {

class SlurmCluster {
 public:
  // Null, with the reason in `why`, when Slurm cannot run here (not root, or
  // not installed: scripts/install-deps.sh test installs it).
  // `settings` are environment settings for up.sh (SLURM_MIN_JOB_AGE).
  static std::unique_ptr<SlurmCluster> Start(std::string& why, const std::string& settings = "") {
    if (::geteuid() != 0) {
      why = "Slurm tests need root (slurmctld and slurmd run as root here)";
      return nullptr;
    }
    if (std::system("command -v slurmctld >/dev/null && command -v slurmrestd >/dev/null && command -v munged >/dev/null") != 0) {
      why = "Slurm is not installed: run scripts/install-deps.sh test";
      return nullptr;
    }
    auto c = std::unique_ptr<SlurmCluster>(new SlurmCluster());
    std::string cmd = settings + " " + std::string(CAUSEWAY_SOURCE_DIR) + "/scripts/slurm/up.sh " + c->dir_.path() + " > " +
                      c->dir_.path() + "/up.log 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream log(c->dir_.path() + "/up.log");
      why = "scripts/slurm/up.sh failed: " + std::string(std::istreambuf_iterator<char>(log), {});
      return nullptr;
    }
    std::ifstream env(c->dir_.path() + "/env");
    std::string line;
    while (std::getline(env, line)) {
      auto eq = line.find('=');
      if (line.rfind("export ", 0) == 0 && eq != std::string::npos) c->env_[line.substr(7, eq - 7)] = line.substr(eq + 1);
    }
    return c;
  }
  ~SlurmCluster() {
    std::string cmd = std::string(CAUSEWAY_SOURCE_DIR) + "/scripts/slurm/down.sh " + dir_.path() + " >/dev/null 2>&1";
    (void)std::system(cmd.c_str());
  }

  const std::string& base() const { return dir_.path(); }
  std::string Get(const std::string& key) const { return env_.at(key); }
  std::string OutputDir() const { return dir_.path() + "/out"; }
  // Runs a Slurm CLI command against this cluster; returns its stdout.
  std::string Run(const std::string& command) const {
    std::string full = "SLURM_CONF=" + Get("SLURM_CONF") + " " + command + " 2>&1";
    std::string out;
    if (FILE* p = ::popen(full.c_str(), "r")) {
      char buf[4096];
      while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
      ::pclose(p);
    }
    return out;
  }
  // An estate with one slurm provider whose one cluster is this one.
  // `access` replaces how Causeway reaches it (interfaces, credentials).
  std::string Estate(const std::string& provider = "lab", const std::string& zone = "eu",
                     std::string access = "") const {
    if (access.empty()) {
      access = "url: \"" + Get("CAUSEWAY_SLURM_URL") + "\", user: root, token_file: " + Get("CAUSEWAY_SLURM_TOKEN_FILE");
    }
    return "providers: [{name: " + provider + ", kind: slurm, regions: [{name: r1, zone: " + zone + "}]}]\n"
           "clusters:\n  - name: " + provider + "-slurm\n    provider: " + provider + "\n    region: r1\n"
           "    node_pools:\n"
           "      - {name: h200, gpu_type: H200, gpus_per_node: 8, nodes: 1, cpus: 16, memory_gb: 62}\n"
           "      - {name: cpu, cpus: 4, memory_gb: 8, nodes: 1}\n"
           "    inject_envs: {NCCL_IB_HCA: mlx5}\n"
           "    slurm: {" + access + ", accounting: true, partition: gpu, gres_type: h200, output_dir: " + OutputDir() + "}\n"
           "prices: [{cluster: " + provider + "-slurm, gpu_type: H200, on_demand: \"3.00\"}]\n";
  }

 private:
  SlurmCluster() : dir_("slurm") {}
  TempDir dir_;
  std::map<std::string, std::string> env_;
};

}  // namespace causeway::testing
