// `causeway acceptance failover SERVICE`: the failover drill against the live
// system. A steady load on the service's endpoint; the preferred place's
// provider taken down (its outage drill); the time until every answer comes
// from the alternate (the recovery time) and the requests that failed on the
// way; then the provider restored, and the time until traffic is back at the
// preferred place after the hold-down, with what failed then. Which place
// answered is read from HAProxy's X-Causeway-Slot header, which each request
// asks for: r-slots are the preferred place's replicas, b-slots the
// alternate's (and degraded ones).
#include <atomic>
#include <mutex>
#include <thread>

#include "causeway/clock.h"
#include "cli/acceptance_kit.h"
#include "net/http_client.h"

namespace causeway::cli::acceptance {
namespace {

using Clock = std::chrono::steady_clock;

// One answer: when, and who gave it ("preferred", "alternate", or "failed:
// WHY" when it was not a 200).
struct Answered {
  Clock::time_point at;
  std::string who;
};

// A steady load at `rate` requests per second on `host:port`, spread over
// four clients.
class Load {
 public:
  Load(const std::string& host, uint16_t port, double rate) {
    const int clients = 4;
    const auto pause = std::chrono::microseconds(static_cast<int64_t>(clients * 1e6 / std::max(1.0, rate)));
    for (int c = 0; c < clients; ++c) {
      threads_.emplace_back([this, host, port, pause] {
        net::HttpClient client(host, port, std::chrono::seconds(10));
        auto next = Clock::now();
        while (!stop_) {
          auto r = client.Send("GET", "/", "", {{"X-Causeway-Slot", "?"}});
          std::string who;
          if (!r.ok()) {
            who = "failed: " + r.status().message();
          } else if (r->status != 200) {
            who = "failed: HTTP " + std::to_string(r->status);
          } else {
            const std::string slot = r->headers.count("x-causeway-slot") ? r->headers["x-causeway-slot"] : "";
            who = slot.rfind('r', 0) == 0 ? "preferred" : slot.rfind('b', 0) == 0 ? "alternate" : "unknown";
          }
          {
            std::lock_guard<std::mutex> lock(mu_);
            if (answers_.size() < kMaxAnswers) answers_.push_back({Clock::now(), who});
          }
          next += pause;
          std::this_thread::sleep_until(next);
        }
      });
    }
  }
  ~Load() { Stop(); }
  void Stop() {
    stop_ = true;
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  std::vector<Answered> Since(Clock::time_point t) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<Answered> out;
    for (const Answered& a : answers_) {
      if (a.at >= t) out.push_back(a);
    }
    return out;
  }

 private:
  static constexpr size_t kMaxAnswers = 1'000'000;
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::vector<Answered> answers_;
};

int64_t Ms(Clock::duration d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); }

// Of the answers since `from`: the time until the last one not given by
// `settled` (0 when every one was), and how many failed.
std::pair<int64_t, int> Settling(const std::vector<Answered>& answers, Clock::time_point from, const std::string& settled) {
  Clock::time_point last = from;
  int failed = 0;
  for (const Answered& a : answers) {
    if (a.who != settled) last = a.at;
    if (a.who.rfind("failed", 0) == 0) ++failed;
  }
  return {Ms(last - from), failed};
}

// Whether the last `n` answers since `from` (at least `n` of them) all came
// from `who`.
bool Settled(Load& load, Clock::time_point from, const std::string& who, size_t n) {
  auto a = load.Since(from);
  if (a.size() < n) return false;
  return std::all_of(a.end() - static_cast<long>(n), a.end(), [&](const Answered& x) { return x.who == who; });
}

}  // namespace

json RunFailover(const Globals& g, const Options& o, Steps& steps) {
  Session admin(g, AdminToken(g));
  const std::string path = "/v1/services/" + net::UrlEncode(o.service);
  json subject = {{"service", o.service}, {"rate", o.rate}, {"objective_ms", o.objective_s * 1000}};

  Step& s1 = AddStep(steps, "service " + o.service + " serves from its preferred place");
  auto svc = admin.Do("GET", path);
  if (svc.status != 200) {
    s1.detail = ErrorOf(svc);
    return subject;
  }
  const json failover = svc.body.value("failover", json::object());
  const std::string provider = failover.value("preferred_provider", "");
  const std::string alternate = failover.value("alternate", "");
  const int64_t hold_down_s = failover.value("hold_down_seconds", int64_t{0});
  subject["provider"] = provider;
  subject["alternate"] = alternate;
  if (provider.empty() || alternate.empty()) {
    s1.detail = "the service has no failover: section (a preferred place and an alternate) to drill";
    return subject;
  }
  auto endpoint = net::ParseServerUrl(svc.body.value("endpoint", ""));
  if (!endpoint.ok()) {
    s1.detail = "its endpoint: " + endpoint.status().message();
    return subject;
  }
  auto normal = [&] {
    auto s = admin.Do("GET", path);
    return s.status == 200 && s.body.value("mode", "") == "normal";
  };
  s1.ok = normal();
  s1.detail = s1.ok ? "mode normal at " + failover.value("preferred", "") + " (" + provider + "), alternate " + alternate +
                          " with " + std::to_string(failover.value("warm", 0)) + " warm"
                    : "its mode is " + admin.Do("GET", path).body.value("mode", "?") + ", not normal";
  if (!s1.ok) return subject;

  Step& s2 = AddStep(steps, "a steady load of " + std::to_string(static_cast<int>(o.rate)) + " requests/s is served");
  Load load(endpoint->first, endpoint->second, o.rate);
  const auto began = Clock::now();
  s2.ok = TimeUntil([&] { return Settled(load, began, "preferred", 20); }, std::chrono::seconds(30)).has_value();
  s2.detail = s2.ok ? "answered by the preferred place's replicas" : "the preferred replicas did not answer 20 requests in a row in 30 s";
  if (!s2.ok) return subject;

  // From here on the provider is restored whatever happens.
  struct Restore {
    Session& admin;
    std::string provider;
    bool down = false;
    ~Restore() {
      if (down) admin.Do("POST", "/v1/providers/" + net::UrlEncode(provider) + "/outage", json{{"down", false}});
    }
  } restore{admin, provider};
  Step& s3 = AddStep(steps, "provider " + provider + " taken down (its outage drill)");
  const auto down_at = Clock::now();
  auto drill = admin.Do("POST", "/v1/providers/" + net::UrlEncode(provider) + "/outage", json{{"down", true}});
  s3.ok = drill.status == 200;
  restore.down = s3.ok;
  s3.detail = s3.ok ? "outage drill started" : ErrorOf(drill);
  s3.evidence = Evidence(admin, "provider/" + provider, "provider.outage_start");
  if (!s3.ok) return subject;

  Step& s4 = AddStep(steps, "every request served by " + alternate + " within " + std::to_string(o.objective_s) + " s");
  bool moved = TimeUntil([&] { return Settled(load, down_at, "alternate", 50); },
                         std::chrono::seconds(std::max(30, o.objective_s * 4))).has_value();
  auto [recovery_ms, failed_during] = Settling(load.Since(down_at), down_at, "alternate");
  const size_t during = load.Since(down_at).size();
  subject["recovery_ms"] = recovery_ms;
  subject["failed_during_failover"] = failed_during;
  s4.ok = moved && recovery_ms <= o.objective_s * 1000 && failed_during == 0;
  s4.ms = recovery_ms;
  s4.detail = (moved ? "recovery " + std::to_string(recovery_ms) + " ms" : "traffic did not settle on the alternate") +
              ", " + std::to_string(failed_during) + " of " + std::to_string(during) + " requests failed";
  s4.evidence = Evidence(admin, "service/" + o.service, "service.transition");

  Step& s5 = AddStep(steps, "provider " + provider + " restored: traffic back at the preferred place after the " +
                                std::to_string(hold_down_s) + " s hold-down");
  const auto up_at = Clock::now();
  auto ended = admin.Do("POST", "/v1/providers/" + net::UrlEncode(provider) + "/outage", json{{"down", false}});
  restore.down = ended.status != 200;
  auto back = TimeUntil([&] { return normal() && Settled(load, up_at, "preferred", 20); },
                        std::chrono::seconds(hold_down_s + o.fallback_timeout_s));
  load.Stop();
  auto after = load.Since(up_at);
  int failed_after = 0;
  for (const Answered& a : after) failed_after += a.who.rfind("failed", 0) == 0 ? 1 : 0;
  subject["fallback_ms"] = back ? json(*back) : json(nullptr);
  subject["failed_during_fallback"] = failed_after;
  subject["requests"] = load.Since(began).size();
  s5.ok = ended.status == 200 && back.has_value() && failed_after == 0;
  s5.ms = back;
  s5.detail = ended.status != 200 ? ErrorOf(ended)
              : back ? "back after " + std::to_string(*back / 1000) + " s, " + std::to_string(failed_after) + " of " +
                           std::to_string(after.size()) + " requests failed"
                     : "traffic was not back at the preferred place within " +
                           std::to_string(hold_down_s + o.fallback_timeout_s) + " s";
  s5.evidence = Evidence(admin, "provider/" + provider, "provider.outage_end");
  subject["summary"] = "failover of " + o.service + " from " + provider + " to " + alternate + ": recovery " +
                       std::to_string(recovery_ms) + " ms, " + std::to_string(failed_during) +
                       " requests failed during it, " + std::to_string(failed_after) + " during the fall-back";
  return subject;
}

}  // namespace causeway::cli::acceptance
