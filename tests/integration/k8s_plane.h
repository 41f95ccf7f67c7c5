// The real Kubernetes control plane the Kubernetes tests share (etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, KWOK, Kueue:
// scripts/k8s/plane.sh), started once by ctest's fixture into the folder
// $CAUSEWAY_K8S_PLANE. Run by hand without it, the first test starts one
// for the process, stopped when the process ends, even killed. Each test keeps to names of its own (namespaces, nodes,
// queues, its own GPU product label), so tests can share the plane.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "server_process.h"

namespace causeway::testing {

class K8sPlane {
 public:
  // The plane, or null with the reason in `why` (the start failed: its log).
  static K8sPlane* Get(std::string& why) {
    static std::unique_ptr<K8sPlane> plane;
    static std::string failure;
    if (!plane && failure.empty()) {
      auto p = std::unique_ptr<K8sPlane>(new K8sPlane());
      const char* shared = std::getenv("CAUSEWAY_K8S_PLANE");
      if (shared && *shared) {
        p->dir_ = shared;
      } else {
        failure = p->StartOwn("k8s", "");
      }
      p->ReadEnv();
      if (failure.empty() && !p->env_.count("K8S_API")) failure = "no plane in " + p->dir_ + " (plane.env is missing)";
      if (failure.empty()) plane = std::move(p);
    }
    why = failure;
    return plane.get();
  }
  // An API server of the test's own (etcd and kube-apiserver alone:
  // plane.sh --api-only) that also trusts the JWT issuers `authn_config`
  // names (--authentication-config) and asks the authorizers
  // `authz_config` names (--authorization-config); stopped when destroyed.
  // Null with the reason in `why` when it cannot start.
  static std::unique_ptr<K8sPlane> ApiOnly(const std::string& authn_config, const std::string& authz_config,
                                           std::string& why) {
    auto p = std::unique_ptr<K8sPlane>(new K8sPlane());
    why = p->StartOwn("k8s-api", "--api-only --authentication-config " + authn_config + " --authorization-config " +
                                     authz_config);
    p->ReadEnv();
    if (why.empty() && !p->env_.count("K8S_API")) why = "no API server in " + p->dir_ + " (plane.env is missing)";
    if (!why.empty()) return nullptr;
    return p;
  }
  ~K8sPlane() {
    if (own_) {
      std::string cmd = std::string(CAUSEWAY_SOURCE_DIR) + "/scripts/k8s/plane.sh stop " + dir_ + " >/dev/null 2>&1";
      (void)std::system(cmd.c_str());
    }
  }

  std::string api() const { return env_.at("K8S_API"); }
  std::string bin() const { return env_.at("K8S_BIN"); }
  std::string ca() const { return env_.at("K8S_CA"); }
  std::string token_file() const { return env_.at("K8S_TOKEN_FILE"); }
  std::string audit_log() const { return env_.at("K8S_AUDIT_LOG"); }

  // Runs kubectl against the plane with `input` on its stdin; returns its
  // output (stdout and stderr) and sets `rc`.
  std::string Kubectl(const std::string& args, const std::string& input = "", int* rc = nullptr) const {
    std::string in = dir_ + "/kubectl-input-" + std::to_string(::getpid()) + ".yaml";
    std::ofstream(in) << input;
    std::string cmd = env_.at("K8S_BIN") + "/kubectl --kubeconfig " + env_.at("KUBECONFIG") + " " + args + " < " + in + " 2>&1";
    std::string out;
    int status = -1;
    if (FILE* p = ::popen(cmd.c_str(), "r")) {
      char buf[4096];
      while (size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
      status = ::pclose(p);
    }
    std::remove(in.c_str());
    if (rc) *rc = status;
    return out;
  }
  // `kubectl apply -f -` of `yaml`; fails the test when it fails.
  void Apply(const std::string& yaml) const {
    int rc = 0;
    std::string out = Kubectl("apply -f -", yaml, &rc);
    ASSERT_EQ(rc, 0) << out << "\n" << yaml;
  }

 private:
  K8sPlane() = default;
  // Starts a plane of this process's own in a new folder named after
  // `name`, with plane.sh's `options`; the reason when it cannot ("").
  std::string StartOwn(const char* name, const std::string& options) {
    own_ = std::make_unique<TempDir>(name);
    dir_ = own_->path() + "/plane";
    std::string cmd = std::string(CAUSEWAY_SOURCE_DIR) + "/scripts/k8s/plane.sh start " + dir_ + " " + options + " > " +
                      own_->path() + "/start.log 2>&1";
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream log(own_->path() + "/start.log");
      return "scripts/k8s/plane.sh start failed: " + std::string(std::istreambuf_iterator<char>(log), {});
    }
    // A process killed never runs its destructors: a watcher in a session
    // of its own stops the plane once this process is gone (after a normal
    // exit the folder is gone, and it does nothing).
    std::string watch = "setsid sh -c 'while kill -0 " + std::to_string(::getpid()) +
                        " 2>/dev/null; do sleep 2; done; [ -d " + dir_ + " ] && " + CAUSEWAY_SOURCE_DIR +
                        "/scripts/k8s/plane.sh stop " + dir_ + "' >/dev/null 2>&1 < /dev/null &";
    (void)std::system(watch.c_str());
    return "";
  }
  void ReadEnv() {
    std::ifstream env(dir_ + "/plane.env");
    std::string line;
    while (std::getline(env, line)) {
      auto eq = line.find('=');
      if (eq != std::string::npos) env_[line.substr(0, eq)] = line.substr(eq + 1);
    }
  }
  std::unique_ptr<TempDir> own_;
  std::string dir_;
  std::map<std::string, std::string> env_;
};

}  // namespace causeway::testing
