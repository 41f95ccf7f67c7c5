// Requests through HAProxy managed by Causeway against HAProxy configured by
// hand, with the same replicas, in one run (bench/service/run.sh).
//
// The replicas: one HAProxy process (one thread) with a listener per
// replica answering 200 itself, so the replicas cost little and the proxy
// in front is what is measured. The two proxies in front, one at a time:
//  - managed: the configuration Causeway writes (serving/haproxy.h), every
//    replica added through the runtime API (pointed at, made ready), and
//    Causeway's control pass running beside the load every second: each
//    replica probed, HAProxy's counters read (`show stat`), the controller's
//    decision made;
//  - by hand: the configuration an operator would write for the same
//    replicas (a server line each, the same balance and timeouts).
// Each round runs both, in turns first (managed first in even rounds, by
// hand first in odd ones); each run is measured
// by submit_bench --get (keep-alive clients, 2 s warm-up). Printed: each
// run, each side's median requests/s and latencies, and managed/by-hand:
// the median of the rounds' ratios (each round's two runs back to back),
// and the ratio of the sides' medians beside it.
//
// Then the control pass's own CPU with 100 replicas: the controller's
// decision and parsing `show stat` for 100 servers, per pass (probes are
// network waits, not CPU, and are left out).
//
//   service_bench HAPROXY SUBMIT_BENCH [REPLICAS=4] [SECONDS=8] [ROUNDS=4] [CLIENTS=16]
#include <sys/resource.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/subprocess.h"
#include "serving/controller.h"
#include "serving/haproxy.h"
#include "serving/probe.h"

using namespace causeway;
using nlohmann::json;

namespace {

int FreePort() {
  auto r = RunProcess({"python3", "-c", "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"},
                      {{"PATH", "/usr/bin:/bin"}}, "", std::chrono::seconds(10));
  return r.ok() ? std::stoi(r->out) : 0;
}


std::string ReplicasConfig(const std::vector<int>& ports, const std::string& dir) {
  std::ostringstream o;
  o << "global\n  nbthread 1\n  maxconn 4000\n  stats socket " << dir << "/replicas.sock mode 600 level admin\n"
    << "defaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  timeout server 60s\n";
  for (size_t i = 0; i < ports.size(); ++i) {
    o << "frontend replica" << i + 1 << "\n  bind 127.0.0.1:" << ports[i] << "\n"
      << "  http-request return status 200 content-type text/plain string replica" << i + 1 << "\n";
  }
  return o.str();
}

// What an operator writes by hand for the same replicas.
std::string HandConfig(int port, const std::vector<int>& replicas, const std::string& dir) {
  std::ostringstream o;
  o << "global\n  maxconn 2000\n  stats socket " << dir << "/hand.sock mode 600 level admin\n"
    << "defaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  timeout server 120s\n"
    << "frontend chat\n  bind 127.0.0.1:" << port << "\n  default_backend chat\n"
    << "backend chat\n  balance leastconn\n";
  for (size_t i = 0; i < replicas.size(); ++i) o << "  server s" << i + 1 << " 127.0.0.1:" << replicas[i] << "\n";
  return o.str();
}

// A process from a hand-written configuration, started and stopped by pid.
pid_t StartPlain(const std::string& haproxy, const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(haproxy.c_str(), haproxy.c_str(), "-db", "-q", "-f", path.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  return pid;
}
void Stop(pid_t pid) {
  ::kill(pid, SIGTERM);
  ::waitpid(pid, nullptr, 0);
}

json Load(const std::string& submit_bench, int port, int seconds, int clients) {
  auto r = RunProcess({submit_bench, "--port", std::to_string(port), "--get", "/v1/completions", "--clients",
                       std::to_string(clients), "--seconds", std::to_string(seconds), "--warmup", "2"},
                      {{"PATH", "/usr/bin:/bin"}}, "", std::chrono::seconds(seconds + 60));
  if (!r.ok()) return json{{"error", r.status().ToString()}};
  json j = json::parse(r->out, nullptr, false);
  return j.is_object() ? j : json{{"error", r->out + r->err}};
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  if (v.empty()) return 0;
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double CpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_THREAD, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: service_bench HAPROXY SUBMIT_BENCH [REPLICAS=4] [SECONDS=8] [ROUNDS=4] [CLIENTS=16]\n");
    return 2;
  }
  const std::string haproxy = argv[1], submit_bench = argv[2];
  const int replicas = argc > 3 ? std::atoi(argv[3]) : 4;
  const int seconds = argc > 4 ? std::atoi(argv[4]) : 8;
  const int rounds = argc > 5 ? std::atoi(argv[5]) : 4;
  const int clients = argc > 6 ? std::atoi(argv[6]) : 16;
  char tmpl[] = "/tmp/service-bench-XXXXXX";
  const std::string dir = ::mkdtemp(tmpl);

  std::vector<int> ports;
  for (int i = 0; i < replicas; ++i) ports.push_back(FreePort());
  const pid_t backends = StartPlain(haproxy, dir + "/replicas.cfg", ReplicasConfig(ports, dir));

  std::vector<double> managed_rps, hand_rps, managed_p50, hand_p50, managed_p99, hand_p99;
  json runs = json::array();
  // Each round runs both sides, in turns first (a machine's later runs can
  // be faster: the order must not favour either side).
  auto run_managed = [&]() -> bool {
    // Managed: Causeway's configuration and runtime API, with its control
    // pass running every second beside the load.
    {
      const int port = FreePort();
      serving::ProxyConfig c;
      c.name = "chat";
      c.bind = "127.0.0.1:" + std::to_string(port);
      c.slots = replicas;
      c.backup_slots = 1;
      c.balance = serving::BalanceFor("least_load");
      c.socket_path = dir + "/managed.sock";
      c.pid_file = dir + "/managed.pid";
      auto proxy = serving::ProxyProcess::Start(haproxy, c, dir + "/managed.cfg");
      if (!proxy.ok()) {
        std::fprintf(stderr, "%s\n", proxy.status().ToString().c_str());
        return false;
      }
      for (int i = 0; i < replicas; ++i) {
        const std::string server = serving::SlotName(i + 1);
        if (!proxy->api().SetServer("chat", server, "127.0.0.1", static_cast<uint16_t>(ports[i]), 100).ok() ||
            !proxy->api().SetState("chat", server, serving::ServerState::kReady).ok()) {
          std::fprintf(stderr, "the runtime API refused replica %d\n", i + 1);
          return false;
        }
      }
      spec::ServiceSpec spec;
      spec.replicas.min_replicas = replicas;
      spec.readiness.path = "/health";
      spec.readiness.timeout_seconds = 1;
      std::atomic<bool> stop{false};
      std::atomic<int> passes{0};
      std::thread control([&] {
        while (!stop) {
          serving::ServiceView view;
          view.spec = &spec;
          view.now = std::chrono::time_point_cast<Micros>(std::chrono::system_clock::now());
          view.mode = serving::Mode::kNormal;
          for (int i = 0; i < replicas; ++i) {
            serving::ReplicaView r;
            r.id = "r" + std::to_string(i + 1);
            r.running = true;
            r.in_traffic = true;
            if (serving::Probe("127.0.0.1", static_cast<uint16_t>(ports[i]), spec.readiness).ok) r.passing_since = view.now;
            view.replicas.push_back(r);
          }
          auto stats = proxy->api().Stats("chat");
          if (stats.ok()) serving::Decide(view);
          ++passes;
          for (int i = 0; i < 10 && !stop; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
      });
      json m = Load(submit_bench, port, seconds, clients);
      stop = true;
      control.join();
      m["side"] = "managed";
      m["control_passes"] = passes.load();
      runs.push_back(m);
      managed_rps.push_back(m.value("submits_per_s", 0.0));
      managed_p50.push_back(m.value("p50_ms", 0.0));
      managed_p99.push_back(m.value("p99_ms", 0.0));
    }
    return true;
  };
  auto run_hand = [&] {
    // By hand: the same replicas in a configuration an operator writes.
    {
      const int port = FreePort();
      const pid_t hand = StartPlain(haproxy, dir + "/hand.cfg", HandConfig(port, ports, dir));
      json h = Load(submit_bench, port, seconds, clients);
      Stop(hand);
      h["side"] = "by hand";
      runs.push_back(h);
      hand_rps.push_back(h.value("submits_per_s", 0.0));
      hand_p50.push_back(h.value("p50_ms", 0.0));
      hand_p99.push_back(h.value("p99_ms", 0.0));
    }
  };
  for (int round = 0; round < rounds; ++round) {
    if (round % 2 == 1) run_hand();
    if (!run_managed()) return 1;
    if (round % 2 == 0) run_hand();
  }
  Stop(backends);

  // The control pass's CPU with 100 replicas: the decision and the parse
  // of `show stat` for 100 servers.
  spec::ServiceSpec spec;
  spec.replicas.min_replicas = 100;
  spec.readiness.initial_delay_seconds = 60;
  spec.failover = spec::Failover{spec::Placement{"nebius"}, spec::AlternatePlacement{{"coreweave"}, 5}};
  serving::ServiceView view;
  view.spec = &spec;
  view.now = std::chrono::time_point_cast<Micros>(std::chrono::system_clock::now());
  view.mode = serving::Mode::kNormal;
  std::string csv = "# pxname,svname,qcur,qmax,scur,smax,slim,stot,bin,bout,dreq,dresp,ereq,econ,eresp,wretr,wredis,status,"
                    "weight,act,bck,chkfail,chkdown,lastchg,downtime,qlimit,pid,iid,sid,throttle,lbtot,tracked,type,"
                    "rate,rate_lim,rate_max,check_status,check_code,check_duration,hrsp_1xx,hrsp_2xx,hrsp_3xx,"
                    "hrsp_4xx,hrsp_5xx,hrsp_other,hanafail,req_rate,req_rate_max,req_tot,cli_abrt,srv_abrt,addr\n";
  for (int i = 0; i < 105; ++i) {
    serving::ReplicaView r;
    r.id = "job_" + std::to_string(i);
    r.role = i < 100 ? serving::Role::kPreferred : serving::Role::kAlternate;
    r.running = true;
    r.started_at = view.now - Micros(600'000'000);
    r.passing_since = view.now - Micros(500'000'000);
    r.in_traffic = true;
    r.in_flight = i % 3;
    view.replicas.push_back(r);
    csv += "chat,r" + std::to_string(i + 1) + ",0,0,2,5,,12345,1,1,,0,,0,0,0,0,UP,100,1,0,,,,,,1,2," +
           std::to_string(i + 1) + ",,12345,,2,10,,20,,,,0,12345,0,0,0,0,,10,20,12345,0,0,127.0.0.1:9" +
           std::to_string(100 + i) + "\n";
  }
  const int passes = 2000;
  const double cpu0 = CpuSeconds();
  size_t sink = 0;
  for (int i = 0; i < passes; ++i) {
    sink += serving::Decide(view).actions.size();
    auto parsed = serving::ParseStats(csv, "chat");
    sink += parsed.ok() ? parsed->size() : 0;
  }
  const double per_pass_us = (CpuSeconds() - cpu0) / passes * 1e6;

  // The ratio of each round's two runs (run back to back, so a machine's
  // drift over the whole run cancels), and its median over the rounds; the
  // ratio of the two sides' medians beside it.
  std::vector<double> paired;
  for (size_t i = 0; i < std::min(managed_rps.size(), hand_rps.size()); ++i) {
    if (hand_rps[i] > 0) paired.push_back(managed_rps[i] / hand_rps[i]);
  }
  const double ratio = Median(paired);
  const double ratio_of_medians = Median(hand_rps) > 0 ? Median(managed_rps) / Median(hand_rps) : 0;
  json out = {{"bench", "service"},
              {"replicas", replicas},
              {"clients", clients},
              {"seconds", seconds},
              {"runs", runs},
              {"managed", {{"requests_per_s", Median(managed_rps)}, {"p50_ms", Median(managed_p50)}, {"p99_ms", Median(managed_p99)}}},
              {"by_hand", {{"requests_per_s", Median(hand_rps)}, {"p50_ms", Median(hand_p50)}, {"p99_ms", Median(hand_p99)}}},
              {"ratio", ratio},
              {"round_ratios", paired},
              {"ratio_of_medians", ratio_of_medians},
              {"control_pass_cpu_us_per_100_replicas", per_pass_us},
              {"sink", sink % 2}};
  std::printf("%s\n", out.dump().c_str());  // one line: bench/record.sh reads it
  std::fprintf(stderr, "managed %.0f req/s (p50 %.2f ms, p99 %.2f ms), by hand %.0f req/s (p50 %.2f ms, p99 %.2f ms): "
                       "ratio %.3f, the median of the rounds' (target >= 0.95; of the medians %.3f); a control pass over 100 replicas: %.0f us of CPU\n",
               Median(managed_rps), Median(managed_p50), Median(managed_p99), Median(hand_rps), Median(hand_p50),
               Median(hand_p99), ratio, ratio_of_medians, per_pass_us);
  std::filesystem::remove_all(dir);
  return 0;  // the ratio is reported, not enforced: one run on a shared machine varies
}
