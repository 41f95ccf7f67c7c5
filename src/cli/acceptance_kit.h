// What the acceptance tests share (`causeway acceptance ...`): a session
// with the server under one token, a step of a test with its verdict and
// the audit events that prove it, and the end of every test: the report
// written as JSON and text, and its verdict recorded on the server.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/api_client.h"

namespace causeway::cli::acceptance {

using nlohmann::json;

// A raw exchange with the server: status and parsed body, never exiting.
struct Answer {
  int status = 0;
  json body;
};

class Session {
 public:
  Session(const Globals& g, std::string token) : g_(g) {
    g_.token = std::move(token);
    g_.token_file.clear();
  }
  Answer Do(const std::string& method, const std::string& target, const json& body = nullptr,
            const std::string& content_type = "application/json") {
    auto hp = net::ParseServerUrl(g_.server);
    if (!hp.ok()) return Answer{0, json{{"error", hp.status().message()}}};
    if (!client_) client_.emplace(hp->first, hp->second);
    auto r = client_->Send(method, target, body.is_null() ? "" : body.dump(),
                           {{"Authorization", "Bearer " + g_.token}, {"Content-Type", content_type}});
    if (!r.ok()) return Answer{0, json{{"error", r.status().message()}}};
    // A body that is not JSON is kept as discarded: each step checks the answer it needs and fails,
    // naming the status.
    return Answer{r->status, json::parse(r->body, nullptr, false)};
  }
  // A GET whose answer is text (a job's logs): status and body.
  std::pair<int, std::string> Text(const std::string& target) {
    auto hp = net::ParseServerUrl(g_.server);
    if (!hp.ok()) return {0, ""};
    if (!client_) client_.emplace(hp->first, hp->second);
    auto r = client_->Send("GET", target, "", {{"Authorization", "Bearer " + g_.token}});
    if (!r.ok()) return {0, ""};
    return {r->status, r->body};
  }

 private:
  Globals g_;
  std::optional<net::HttpClient> client_;
};

struct Step {
  std::string name;
  bool ok = false;
  // Nothing to check on this estate (no cluster keeps accounts, no other
  // team): said so, never counted as a pass. Such a step has ok true.
  bool not_applicable = false;
  std::string detail;
  std::vector<int64_t> evidence;  // audit event seqs
  std::optional<int64_t> ms;      // how long it took to apply, where measured
};

inline std::string ErrorOf(const Answer& a) {
  if (a.body.is_object() && a.body.contains("error")) {
    const json& e = a.body["error"];
    return "HTTP " + std::to_string(a.status) + ": " + (e.is_object() ? e.value("message", e.dump()) : e.dump());
  }
  if (a.body.is_object() && a.body.contains("detail")) return "HTTP " + std::to_string(a.status) + ": " + a.body.value("detail", "");
  return "HTTP " + std::to_string(a.status);
}

// The seqs of events on `resource` whose action starts with `action` (and,
// with `user`, whose details name that user).
inline std::vector<int64_t> Evidence(Session& admin, const std::string& resource, const std::string& action,
                              const std::string& user = "") {
  std::vector<int64_t> seqs;
  auto r = admin.Do("GET", "/v1/audit?limit=1000&resource=" + net::UrlEncode(resource) +
                               (action.empty() ? "" : "&action=" + net::UrlEncode(action)));
  if (r.status != 200) return seqs;
  for (const json& e : r.body["events"]) {
    if (!user.empty() && !(e["details"].is_object() && e["details"].value("user", "") == user)) continue;
    seqs.push_back(e["seq"].get<int64_t>());
  }
  return seqs;
}

// Polls `done` until it holds or `limit` passes; the milliseconds it took.
template <typename F>
std::optional<int64_t> TimeUntil(F done, std::chrono::milliseconds limit) {
  auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (done()) {
      return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
    }
    if (std::chrono::steady_clock::now() - start > limit) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

struct Options {
  std::string team;
  std::string out_dir = ".";
  int job_timeout_s = 120;
  // recovery and residency
  std::string checkpoint_path;  // where the test's job checkpoints ("" : chosen from the estate)
  std::string zone;             // residency: the zone to bind the job to ("" : the first with clusters)
  int recovery_timeout_s = 0;   // recovery: how long to wait for the job to resume (0: the objective)
  int hold_s = 10;              // residency: how long the job must stay in its zone while its provider is down
  // data
  std::string dataset;       // NAME@VERSION
  std::string cluster;       // where the loading pattern runs
  std::string read_command;  // the job's own read ("" : every object read once, in full)
  // failover
  std::string service;
  double rate = 20;             // requests per second on its endpoint
  int objective_s = 5;          // the recovery objective: every request served elsewhere within it
  int fallback_timeout_s = 120; // how long past the hold-down traffic may take to go back
};

// The admin token the command runs with (--token or --token-file).
inline std::string AdminToken(const Globals& g) {
  if (!g.token.empty() || g.token_file.empty()) return g.token;
  auto t = ReadFile(g.token_file);
  std::string token = t.ok() ? *t : "";
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
  return token;
}


struct ClusterInfo {
  std::string provider, region, zone;
  std::vector<std::string> storage;
  std::string first_type;  // its first pool's GPU type ("CPU" for a CPU-only pool)
};

// The estate's clusters by name, and one GPU of each type it has as
// `{H100: 1, L4: 1}` (a team's policies leave out what it may not use).
struct EstateView {
  std::map<std::string, ClusterInfo> clusters;
  std::string any_gpu = "{}";
};
EstateView ReadEstate(Session& admin);

// A short random tag naming what one run of a test makes.
std::string Tag();

// Steps are kept in a deque: each is filled in while later ones are added.
using Steps = std::deque<Step>;

inline Step& AddStep(Steps& steps, std::string name) {
  steps.push_back(Step{std::move(name)});
  return steps.back();
}

// Ends a test: writes the report (`subject` merged into it) as
// OUT/acceptance-TEST-TIME.json and .txt, records the verdict on the server
// (POST /v1/acceptance/runs), prints the report, and returns the exit code.
int Conclude(const Globals& g, const Options& o, const std::string& test, const std::string& started,
             const Steps& steps, json subject);

// The test runners (acceptance_recovery.cc).
json RunRecovery(const Globals& g, const Options& o, Steps& steps);
json RunResidency(const Globals& g, const Options& o, Steps& steps);
// acceptance_data.cc
json RunData(const Globals& g, const Options& o, Steps& steps);
// acceptance_failover.cc
json RunFailover(const Globals& g, const Options& o, Steps& steps);

}  // namespace causeway::cli::acceptance
