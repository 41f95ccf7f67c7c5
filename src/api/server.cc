#include "api/server.h"
#include "providers/registry.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <thread>

#include <spdlog/spdlog.h>

#include "api/api_service.h"
#include "net/fetch.h"
#include "net/http_client.h"
#include "api/http_server.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "policy/policy.h"
#include "secrets/broker.h"
#include "causeway/ticker.h"
#include "service/reaper_service.h"
#include "service/scheduler_service.h"
#include "store/commit_queue.h"

namespace causeway::api {
namespace {

// Writes `secret` to `path` with mode 0600, durably (temp file, fsync, rename).
Status WriteSecretFile(const std::string& path, const std::string& secret) {
  std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return FailedPrecondition("cannot write " + tmp + ": " + std::strerror(errno));
  std::string line = secret + "\n";
  bool ok = ::fchmod(fd, 0600) == 0 && ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
            ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
    return FailedPrecondition("cannot write " + path + ": " + std::strerror(errno));
  }
  return Status::Ok();
}

// "HOST:PORT" with PORT from 0 (any free port) to 65535.
Result<std::pair<std::string, uint16_t>> ParseListenAddress(const std::string& listen) {
  auto colon = listen.rfind(':');
  int port = -1;
  if (colon != std::string::npos && colon > 0) {
    std::string_view p = std::string_view(listen).substr(colon + 1);
    auto [ptr, err] = std::from_chars(p.data(), p.data() + p.size(), port);
    if (err != std::errc() || ptr != p.data() + p.size()) port = -1;
  }
  if (port < 0 || port > 65535) {
    return InvalidArgument("invalid --listen \"" + listen + "\": expected HOST:PORT such as 127.0.0.1:8080 (port 0 picks a free one)");
  }
  return std::make_pair(listen.substr(0, colon), static_cast<uint16_t>(port));
}

// The newest recorded time, where the clock continues from: simulated time
// may run ahead of the wall clock, and must not jump back on a restart.
Result<Timestamp> LastRecordedTime(const AuditReader& store) {
  ASSIGN_OR_RETURN(auto head, store.GetAuditHead());
  if (head.seq == 0) return Timestamp();
  ASSIGN_OR_RETURN(auto newest, store.ListAudit(AuditFilter{.after_seq = head.seq - 1, .limit = 1}));
  return newest.empty() ? Timestamp() : newest.front().time;
}

Result<HttpServerOptions> ListenerOptions(const ServeOptions& o, const std::pair<std::string, uint16_t>& at) {
  if (o.header_timeout_s < 1 || o.idle_timeout_s < 1) {
    return InvalidArgument("--header-timeout and --idle-timeout must be at least 1 second");
  }
  HttpServerOptions hso;
  hso.host = at.first;
  hso.port = at.second;
  hso.threads = o.threads > 0 ? o.threads : std::max(2u, std::thread::hardware_concurrency());
  hso.body_limit = o.body_limit;
  hso.header_timeout = std::chrono::seconds(o.header_timeout_s);
  hso.idle_timeout = std::chrono::seconds(o.idle_timeout_s);
  hso.max_connections = std::max<size_t>(1, o.max_connections);
  return hso;
}

void PrintBanner(const ServeOptions& o, const std::string& listening, const std::string& db_path, const Estate& estate,
                 size_t policies) {
  std::cout << "causeway listening on http://" << listening << "\n"
            << "  database: " << DescribeDb(db_path) << "\n"
            << "  estate:   " << (o.estate_path.empty() ? "<embedded>" : o.estate_path) << " ("
            << estate.clusters.size() << " clusters, " << estate.queues.size() << " queues, " << policies
            << " policies)\n";
  if (o.sim_speed != 1.0) std::cout << "  simulated time runs " << o.sim_speed << "x real time\n";
  std::cout << std::flush;
}

}  // namespace

Status Serve(const ServeOptions& o) {
  ASSIGN_OR_RETURN(auto host_port, ParseListenAddress(o.listen));

  std::error_code ec;
  std::filesystem::create_directories(o.data_dir, ec);
  if (ec) return FailedPrecondition("cannot create data directory " + o.data_dir + ": " + ec.message());
  ::chmod(o.data_dir.c_str(), 0700);
  std::string db_path = o.db_path.empty() ? o.data_dir + "/causeway.db" : o.db_path;

  Result<Estate> estate = o.estate_path.empty() ? providers::ParseEstate(DefaultEstateYaml(), "<embedded estate>")
                                                : providers::LoadEstateFile(o.estate_path);
  if (!estate.ok()) return estate.status();

  // Stop signals are taken by sigwait below, so block them before any thread
  // starts (threads inherit the mask).
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);  // a client that hangs up must not kill the server
  RaiseOpenFileLimit();         // one descriptor per connection: the cap is derived from it
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%fZ %l %v", spdlog::pattern_time_type::utc);

  if (o.sim_speed <= 0 || o.sim_speed > 1e6) return InvalidArgument("--sim-speed must be between 0 and 1000000");
  ASSIGN_OR_RETURN(auto store, OpenStore(db_path));
  ASSIGN_OR_RETURN(Timestamp last_event, LastRecordedTime(*store));
  // The scheduler and the simulated estate run on `clock`, which runs
  // --sim-speed times faster than real time; credentials, the directory and
  // the audit trail's own dates follow the real one.
  ScaledClock clock(o.sim_speed, last_event);
  RealClock wall;
  CommitQueue queue(*store, CommitQueue::Options{});
  auto policies = policy::Chain::FromEstate(*estate);
  // Jobs' secrets are sealed under a key kept outside the database.
  ASSIGN_OR_RETURN(identity::SecretBox secrets,
                   identity::SecretBox::OpenOrCreate(o.secrets_key.empty() ? o.data_dir + "/secrets.key" : o.secrets_key));
  SchedulerService scheduler(*store, queue, *estate, clock, o.sim_seed,
                             SchedulerService::Options{o.replica, std::chrono::milliseconds(o.lease_ttl_ms)});
  scheduler.SetSecretBox(&secrets);
  // Workload identity: the first signing key is made on the first start.
  std::unique_ptr<identity::WorkloadIssuer> workload;
  if (estate->identity.workload) {
    workload = std::make_unique<identity::WorkloadIssuer>(*store, *estate->identity.workload,
                                                           estate->identity.federations);
    ASSIGN_OR_RETURN(auto first, workload->FirstKeyWrite(wall.Now()));
    if (first) RETURN_IF_ERROR(queue.Run(*first).WithPrefix("making the workload signing key"));
    // Known before the first cycle when the address is; else once bound
    // (launches wait for it).
    if (!o.advertise_url.empty()) workload->SetDefaultIssuer(o.advertise_url);
    scheduler.SetWorkloadIssuer(workload.get());
  }
  // The secret broker: jobs' secret references, read for each attempt with
  // its own federated identity; digests keyed like the sealed secrets' MACs.
  std::unique_ptr<secrets::Broker> broker;
  if (!estate->identity.secret_stores.empty()) {
    broker = std::make_unique<secrets::Broker>(estate->identity, net::Network(),
                                               [&secrets](std::string_view value) { return secrets.Mac(value); });
    scheduler.SetSecretBroker(broker.get());
  }

  // The first cycle now: a lone server leads (and recovers its jobs) before
  // it takes requests. Failing is not fatal: the loop keeps trying.
  if (Status st = scheduler.TickOnce(); !st.ok()) spdlog::warn("first scheduler cycle: {}", st.ToString());
  Services services(*store, queue, *estate, clock, wall, &scheduler, policies.get());
  ApiService api(services, *store, queue, *estate, clock, wall, &scheduler);
  services.workload.SetIssuer(workload.get());
  services.jobs.SetSecretBox(&secrets);
  services.serving = std::make_unique<ServingService>(
      *store, queue, services.jobs, *estate, wall,
      ServingService::Options{.haproxy = o.haproxy,
                              .runtime_dir = o.data_dir + "/services",
                              .endpoint_host = o.service_host,
                              .outages = [&scheduler] { return scheduler.Outages(); }});
  // GPU telemetry and the idle reaper, when the estate has a telemetry
  // section or reaper policies; it acts only on the replica that leads, and
  // keeps the samples pushed to this one. Ended attempts record what it saw.
  std::unique_ptr<ReaperService> reaper;
  if (!estate->reaper.empty() || estate->telemetry) {
    TelemetryLimits limits;
    ASSIGN_OR_RETURN(limits.max_age, ParseDuration(o.telemetry_max_age));
    ASSIGN_OR_RETURN(limits.max_ahead, ParseDuration(o.telemetry_max_ahead));
    if (o.telemetry_max_points == 0) return InvalidArgument("--telemetry-max-points must be at least 1");
    limits.max_points = o.telemetry_max_points;
    reaper = std::make_unique<ReaperService>(scheduler, queue, *estate, limits);
    api.SetReaper(reaper.get());
    scheduler.SetUtilizationSource([r = reaper.get()](const std::string& job_id, int attempt) {
      return r->AttemptUtilization(job_id, attempt);
    });
  }

  TokenService bootstrap(*store, queue, wall);
  std::string token_file = o.data_dir + "/admin.token";
  ASSIGN_OR_RETURN(auto admin, bootstrap.Bootstrap([&](const std::string& secret) {
                     return WriteSecretFile(token_file, secret);
                   }));

  ASSIGN_OR_RETURN(HttpServerOptions hso, ListenerOptions(o, host_port));
  HttpServer http(
      hso, [&api](HttpRequest& req, Reply reply) { api.Dispatch(req, std::move(reply)); },
      [&api](HttpRequest& req) { return api.AdmitHead(req); });
  api.connection_stats = [&http] { return http.stats(); };
  ASSIGN_OR_RETURN(uint16_t bound, http.Start());
  std::string own_url = o.advertise_url.empty() ? "http://" + hso.host + ":" + std::to_string(bound) : o.advertise_url;
  scheduler.SetServerUrl(own_url);
  api.SetPublicUrl(own_url);
  if (workload) workload->SetDefaultIssuer(own_url);
  services.provenance.SetBuilderId(own_url);  // who provenance records name as their builder
  scheduler.Start(std::chrono::milliseconds(std::max(10, o.tick_ms)));
  if (reaper) reaper->Start(std::chrono::milliseconds(std::max(10, o.tick_ms)));
  // Finished jobs' provenance records signed once and stored, a batch at a
  // time (one that lags or fails is sealed on a later tick: the store knows
  // which are left).
  Ticker sealer;
  sealer.Start(std::chrono::milliseconds(500), [&services] {
    if (auto sealed = services.provenance.SealFinished(kSealBatch); !sealed.ok()) {
      spdlog::warn("sealing provenance records: {}", sealed.status().ToString());
    }
  });
  Ticker checkpoints;
  if (o.audit_checkpoint_s > 0) {
    // The chain's head signed now and then (see CheckpointService).
    checkpoints.Start(std::chrono::seconds(o.audit_checkpoint_s), [&services] {
      if (auto made = services.checkpoints.Checkpoint("causeway"); !made.ok()) {
        spdlog::warn("signing an audit checkpoint: {}", made.status().ToString());
      }
    });
  }
  // Services' control loop: each pass probes on the specs' own schedules,
  // so once a second is as often as any needs. The replica that leads the
  // scheduler runs it (and the proxies), as it runs the replicas' jobs.
  Ticker serving;
  serving.Start(std::chrono::seconds(1), [&services, &scheduler] { services.serving->Pass(scheduler.leader()); });
  Ticker readiness;
  if (o.readiness_check_s > 0) {
    // Every control whose state changed is an audit event (see
    // ReadinessService::RecordChanges); the first pass records them all.
    readiness.Start(std::chrono::seconds(o.readiness_check_s), [&services] {
      if (auto changed = services.readiness.RecordChanges("causeway"); !changed.ok()) {
        spdlog::warn("recording readiness changes: {}", changed.status().ToString());
      }
    });
  }

  // The secret goes to the file only: standard output is often shipped to
  // central logging by a service manager.
  if (admin) {
    std::cout << "admin token created: its secret is in " << token_file << " (mode 0600)\n";
    if (o.print_admin_token) std::cout << "admin token: " << admin->secret << "\n";
  }
  PrintBanner(o, hso.host + ":" + std::to_string(bound), db_path, *estate, policies->size());

  int sig = 0;
  sigwait(&signals, &sig);
  spdlog::info("stopping on {}: draining queued commits", sig == SIGINT ? "SIGINT" : "SIGTERM");
  // Order matters: stop taking requests, then commit what was acknowledged
  // for commit, then let the HTTP machinery go.
  http.Stop();
  serving.Stop();
  readiness.Stop();
  checkpoints.Stop();
  sealer.Stop();
  if (reaper) reaper->Stop();
  scheduler.Stop();
  queue.Stop();
  spdlog::info("stopped");
  return Status::Ok();
}

}  // namespace causeway::api
