#include "service/serving_service.h"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "causeway/ids.h"
#include "causeway/text.h"
#include "serving/probe.h"
#include "spec/service_spec.h"

namespace causeway {
namespace {

using nlohmann::json;
using serving::Mode;
using serving::Role;

constexpr size_t kMaxTransitions = 50;

Status CheckServiceName(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 40 && name[0] >= 'a' && name[0] <= 'z' && name.back() != '-';
  for (char c : name) ok = ok && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-');
  if (!ok) {
    return InvalidArgument("invalid service name " +
                           json(Utf8Prefix(name, 60)).dump(-1, ' ', false, json::error_handler_t::replace) +
                           ": expected 1-40 characters of a-z, 0-9 and '-', starting with a letter and not "
                           "ending with '-' (the task's `name`, or --name)");
  }
  return Status::Ok();
}

Mode ModeNamed(const std::string& s) {
  for (Mode m : {Mode::kStarting, Mode::kNormal, Mode::kFailedOver, Mode::kDegraded}) {
    if (serving::ToString(m) == s) return m;
  }
  return Mode::kStarting;
}

Role RoleNamed(const std::string& s) {
  if (s == "alternate") return Role::kAlternate;
  if (s == "degraded") return Role::kDegraded;
  return Role::kPreferred;
}

// Where a role's replicas run, and on what: the spec amended so that the
// router sends them only there.
struct Where {
  std::string place;  // a provider or cluster ("" : wherever the task says)
  std::string accelerator;
  int count = 0;
};

Where WhereFor(const spec::ServiceSpec& s, Role role) {
  if (!s.failover) return {};
  const spec::Failover& f = *s.failover;
  const spec::Placement* p = &f.preferred;
  if (role == Role::kAlternate) p = &f.alternate;
  if (role == Role::kDegraded && f.degraded.replica) p = &*f.degraded.replica;
  return Where{p->place, p->accelerator, p->accelerator_count};
}

void Pin(JobSpec& spec, const Estate& estate, const Where& w) {
  if (!w.accelerator.empty()) {
    Alternative a;
    a.type = w.accelerator;
    a.count = std::max(1, w.count);
    spec.accelerators = Accelerators{{a}, false};
  }
  if (w.place.empty()) return;
  std::string cloud = w.place, region;
  if (const Cluster* c = estate.FindCluster(w.place)) {
    cloud = c->provider;
    region = c->region;
  }
  spec.cloud = cloud;
  spec.region = region;
  spec.zone.clear();
  for (Alternative& a : spec.accelerators.alternatives) {
    a.cloud = cloud;
    a.region = region;
    a.zone.clear();
  }
}

// Whether every cluster of `place` (a provider or a cluster) runs on the
// local executor: its replicas then listen on this host.
std::string ProviderKind(const Estate& estate, const std::string& cluster) {
  const Cluster* c = estate.FindCluster(cluster);
  const Provider* p = c ? estate.FindProvider(c->provider) : nullptr;
  return p ? p->kind : "";
}

}  // namespace

DirectoryEntry ToEntry(const ServiceRecord& r) {
  json replicas = json::array();
  for (const ReplicaRef& x : r.replicas) {
    replicas.push_back({{"job", x.job}, {"role", serving::ToString(x.role)}, {"port", x.port}, {"revision", x.revision}});
  }
  json resource = {{"team", r.team},           {"owner", r.owner},
                   {"created_by", r.created_by}, {"file", r.file},
                   {"spec_yaml", r.spec_yaml},   {"endpoint_host", r.endpoint_host},
                   {"endpoint_port", r.endpoint_port}, {"up", r.up},
                   {"revision", r.revision}, {"update_mode", r.update_mode},
                   {"replicas", replicas}};
  DirectoryEntry d;
  d.kind = std::string(kServiceKind);
  d.id = r.id;
  d.name = r.name;
  d.active = r.up;
  d.resource = resource.dump(-1, ' ', false, json::error_handler_t::replace);
  d.version = r.version;
  d.created_at = r.created_at;
  d.updated_at = r.updated_at;
  return d;
}

Result<ServiceRecord> FromEntry(const DirectoryEntry& e) {
  json j = json::parse(e.resource, nullptr, false);
  if (!j.is_object()) return Internal("service " + e.name + ": its stored record is not a JSON object");
  ServiceRecord r;
  r.id = e.id;
  r.name = e.name;
  r.version = e.version;
  r.created_at = e.created_at;
  r.updated_at = e.updated_at;
  r.team = j.value("team", "");
  r.owner = j.value("owner", "");
  r.created_by = j.value("created_by", "");
  r.file = j.value("file", "service.yaml");
  r.spec_yaml = j.value("spec_yaml", "");
  r.endpoint_host = j.value("endpoint_host", "127.0.0.1");
  r.endpoint_port = j.value("endpoint_port", 0);
  r.up = j.value("up", true);
  r.revision = j.value("revision", int64_t{1});
  r.update_mode = j.value("update_mode", "rolling");
  if (auto it = j.find("replicas"); it != j.end() && it->is_array()) {
    for (const json& x : *it) {
      if (!x.is_object()) continue;
      r.replicas.push_back(ReplicaRef{x.value("job", ""), RoleNamed(x.value("role", "")), x.value("port", 0),
                                      x.value("revision", int64_t{1})});
    }
  }
  return r;
}

namespace {

// Reads service `id` inside a unit, changes it with `fn`, and writes it back
// (version raised). kNotFound when it is gone.
Status UpdateRecord(WriteTx& tx, const std::string& id, Timestamp now,
                    const std::function<Status(ServiceRecord&)>& fn) {
  ASSIGN_OR_RETURN(auto found, tx.GetDirectoryEntry(std::string(kServiceKind), id));
  if (!found) return NotFound("service " + id + " not found");
  ASSIGN_OR_RETURN(ServiceRecord r, FromEntry(*found));
  RETURN_IF_ERROR(fn(r));
  r.version += 1;
  r.updated_at = now;
  return tx.PutDirectoryEntry(ToEntry(r));
}

AuditEvent ServiceEvent(std::string action, const std::string& actor, const ServiceRecord& r, Timestamp now,
                        Details details) {
  AuditEvent e;
  e.time = now;
  e.actor = actor;
  e.action = std::move(action);
  e.resource = "service/" + r.name;
  details["team"] = r.team;
  details["owner"] = r.owner;
  e.details = std::move(details);
  return e;
}

}  // namespace

ServingService::ServingService(const Store& store, CommitQueue& queue, JobService& jobs, const Estate& estate,
                               const Clock& clock, Options options)
    : store_(store), queue_(queue), jobs_(jobs), estate_(estate), clock_(clock), options_(std::move(options)) {}

ServingService::~ServingService() {
  // The proxies are left serving, as the replicas are left running: the
  // next server to lead takes them over (EnsureProxy).
  MutexLock lock(pass_mu_);
  for (auto& [id, rt] : runtimes_) {
    if (rt.proxy) rt.proxy->Release();
  }
}

identity::Principal ServingService::Actor(const ServiceRecord& record) const {
  identity::Principal p;
  p.token_id = "service/" + record.name;
  p.name = "service " + record.name;
  p.scopes = {std::string(identity::kScopeJobsWrite), std::string(identity::kScopeJobsRead)};
  p.creator = record.owner;
  return p;
}

Result<std::vector<ServiceRecord>> ServingService::Records() const {
  ASSIGN_OR_RETURN(auto entries, store_.ListDirectory(std::string(kServiceKind)));
  std::vector<ServiceRecord> out;
  for (const DirectoryEntry& e : entries) {
    auto r = FromEntry(e);
    if (!r.ok()) {
      spdlog::warn("{}", r.status().ToString());
      continue;
    }
    out.push_back(std::move(*r));
  }
  return out;
}

Result<ServingService::Checked> ServingService::Check(const identity::Principal& who, const std::string& spec_yaml,
                                                      const std::string& file) const {
  ASSIGN_OR_RETURN(auto section, spec::ParseServiceSection(spec_yaml, file));
  if (!section) {
    return InvalidArgument(file + ": the task has no `service:` section (a batch job is `causeway submit`)");
  }
  const spec::ServiceSpec& s = *section;
  if (s.pool) {
    return InvalidArgument(file + ": service.pool is a pool of batch workers, not a service: submit its tasks as jobs");
  }
  if (s.tls_keyfile || s.tls_certfile) {
    return InvalidArgument(file + ": service.tls is not served yet: the endpoint is plain HTTP (see docs/services.md)");
  }
  // What one service may ask for: its replicas are this server's work.
  const spec::ReplicaPolicy& p = s.replicas;
  const int64_t most = int64_t{std::max(p.min_replicas, p.max_replicas.value_or(0))} + p.num_overprovision.value_or(0) +
                       (s.failover ? int64_t{s.failover->alternate.warm} + s.failover->degraded.replicas : 0);
  if (p.min_replicas < 0 || most > static_cast<int64_t>(kMaxReplicas / 2)) {
    return InvalidArgument(file + ": the service asks for up to " + std::to_string(most) +
                           " replicas at once (replicas, max_replicas, num_overprovision, warm and degraded "
                           "together); a service has at most " + std::to_string(kMaxReplicas / 2) +
                           " (each may be replaced while its successor starts)");
  }
  // Each place its replicas may run is checked as a job of `who` there:
  // permission, quota rules, policies, and a place that could run it.
  std::vector<Role> roles = {Role::kPreferred};
  if (s.failover) roles.push_back(Role::kAlternate);
  if (s.failover && s.failover->degraded.replica) roles.push_back(Role::kDegraded);
  Checked checked{s, {}};
  for (Role role : roles) {
    SubmitRequest sr;
    sr.spec_yaml = spec_yaml;
    sr.file = file;
    Where w = WhereFor(s, role);
    sr.amend = [this, w](JobSpec& spec) { Pin(spec, estate_, w); };
    auto c = jobs_.Check(who, std::move(sr));
    if (!c.ok()) {
      return Status(c.status().code(),
                    "the service's " + std::string(serving::ToString(role)) + " replicas" +
                        (w.place.empty() ? "" : " (on " + w.place + ")") + ": " + c.status().message(),
                    c.status().diagnostics());
    }
    if (c->jobs.size() != 1) return InvalidArgument(file + ": a service is one task, not a pipeline");
    if (role == Role::kPreferred) checked.submission = std::move(*c);
  }
  return checked;
}

Result<ServiceRecord> ServingService::Up(const identity::Principal& who, const UpRequest& request) {
  ASSIGN_OR_RETURN(Checked c, Check(who, request.spec_yaml, request.file));
  const spec::ServiceSpec& s = c.spec;
  const CheckedSubmission& checked = c.submission;
  const JobRecord& job = checked.jobs.front();
  ServiceRecord r;
  r.name = request.name.empty() ? (checked.specs.front().name.empty() ? "" : checked.specs.front().name) : request.name;
  if (r.name.empty()) return InvalidArgument(request.file + ": the service needs a name: the task's `name`, or --name");
  RETURN_IF_ERROR(CheckServiceName(r.name));
  if (request.port < 0 || request.port > 65535) return InvalidArgument("the endpoint's port must be 0-65535");
  r.team = job.team;
  r.owner = job.owner;
  r.created_by = who.token_id;
  r.file = request.file;
  r.spec_yaml = request.spec_yaml;
  r.endpoint_host = options_.endpoint_host;
  if (request.port > 0) {
    r.endpoint_port = request.port;
  } else {
    ASSIGN_OR_RETURN(uint16_t port, serving::FreePort(options_.endpoint_host));
    r.endpoint_port = port;
  }
  Timestamp now = clock_.Now();
  r.id = NewId("svc", now);
  r.version = 1;
  r.created_at = r.updated_at = now;
  ASSIGN_OR_RETURN(auto all, store_.ListDirectory(std::string(kServiceKind)));
  if (all.size() >= kMaxServices) {
    return ResourceExhausted("this server runs at most " + std::to_string(kMaxServices) + " services");
  }
  Details d{{"endpoint", r.endpoint_host + ":" + std::to_string(r.endpoint_port)},
            {"min_replicas", s.replicas.min_replicas}};
  if (s.failover) {
    d["preferred"] = s.failover->preferred.place;
    d["alternate"] = s.failover->alternate.place;
    d["warm"] = s.failover->alternate.warm;
  }
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    if (Status st = tx.PutDirectoryEntry(ToEntry(r)); st.code() == Code::kAlreadyExists) {
      return AlreadyExists("service " + r.name + " is up already (causeway service down " + r.name + " first)");
    } else if (!st.ok()) {
      return st;
    }
    AuditEvent e = ServiceEvent("service.up", who.token_id, r, now, d);
    return tx.AppendAudit(e);
  }));
  return r;
}

namespace {
Status MayChange(const identity::Principal& who, const ServiceRecord& r, const char* what) {
  if (who.AllowsTeam(identity::kScopeJobsManage, r.team)) return Status::Ok();
  bool own = who.IsPerson() ? r.owner == who.user : r.created_by == who.token_id;
  if (own && who.AllowsTeam(identity::kScopeJobsWrite, r.team)) return Status::Ok();
  if (!who.AllowsTeam(identity::kScopeJobsRead, r.team)) return NotFound("service " + r.name + " not found");
  return PermissionDenied(who.Describe() + " may " + what + " only their own services in team " + r.team +
                          "; service " + r.name + " is " + r.owner + "'s (jobs:manage, e.g. team-admin, may)");
}
}  // namespace

Result<ServiceRecord> ServingService::Update(const identity::Principal& who, const std::string& name,
                                             const UpdateRequest& request) {
  ASSIGN_OR_RETURN(auto found, store_.FindDirectoryEntryByName(std::string(kServiceKind), name));
  if (!found) return NotFound("service " + name + " not found");
  ASSIGN_OR_RETURN(ServiceRecord r, FromEntry(*found));
  RETURN_IF_ERROR(MayChange(who, r, "update"));
  if (!r.up) return FailedPrecondition("service " + name + " is being taken down");
  if (request.mode != "rolling" && request.mode != "blue_green") {
    return InvalidArgument("update mode " + json(Utf8Prefix(request.mode, 40)).dump(-1, ' ', false, json::error_handler_t::replace) +
                           ": expected rolling or blue_green");
  }
  ASSIGN_OR_RETURN(Checked c, Check(who, request.spec_yaml, request.file));
  const JobRecord& job = c.submission.jobs.front();
  if (job.team != r.team || job.owner != r.owner) {
    return InvalidArgument(request.file + ": the new revision runs as team " + job.team + ", owner " + job.owner +
                           "; service " + name + " is team " + r.team + "'s, owner " + r.owner +
                           " (a service keeps its team and owner: take it down and bring it up anew)");
  }
  // The proxy keeps serving through an update: what it was started with
  // must not change.
  auto old_spec = spec::ParseServiceSection(r.spec_yaml, r.file);
  if (old_spec.ok() && *old_spec) {
    ASSIGN_OR_RETURN(std::string before, serving::RenderConfig(ProxyFor(r, **old_spec)));
    ASSIGN_OR_RETURN(std::string after, serving::RenderConfig(ProxyFor(r, c.spec)));
    if (before != after) {
      return InvalidArgument(request.file + ": the new revision changes the endpoint's proxy (load_balancing_policy, "
                             "the stream timeout or the degraded answer), which an update cannot do without cutting "
                             "what it answers: take the service down and bring it up anew");
    }
  }
  const Timestamp now = clock_.Now();
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    int64_t from = 0;
    RETURN_IF_ERROR(UpdateRecord(tx, r.id, now, [&](ServiceRecord& x) {
      if (!x.up) return FailedPrecondition("service " + name + " is being taken down");
      from = x.revision;
      x.spec_yaml = request.spec_yaml;
      x.file = request.file;
      x.revision += 1;
      x.update_mode = request.mode;
      r = x;
      return Status::Ok();
    }));
    AuditEvent e = ServiceEvent("service.update", who.token_id, r, now,
                                {{"from_revision", from}, {"revision", r.revision}, {"mode", r.update_mode},
                                 {"replicas_to_replace", r.replicas.size()}});
    return tx.AppendAudit(e);
  }));
  return r;
}

Result<ServiceRecord> ServingService::Down(const identity::Principal& who, const std::string& name) {
  ASSIGN_OR_RETURN(auto found, store_.FindDirectoryEntryByName(std::string(kServiceKind), name));
  if (!found) return NotFound("service " + name + " not found");
  ASSIGN_OR_RETURN(ServiceRecord r, FromEntry(*found));
  RETURN_IF_ERROR(MayChange(who, r, "take down"));
  if (!r.up) return FailedPrecondition("service " + name + " is being taken down already");
  Timestamp now = clock_.Now();
  RETURN_IF_ERROR(queue_.Run([&](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(UpdateRecord(tx, r.id, now, [&](ServiceRecord& x) {
      if (!x.up) return FailedPrecondition("service " + name + " is being taken down already");
      x.up = false;
      r = x;
      return Status::Ok();
    }));
    AuditEvent e = ServiceEvent("service.down", who.token_id, r, now, {{"replicas", r.replicas.size()}});
    return tx.AppendAudit(e);
  }));
  r.up = false;
  return r;
}

Result<std::vector<ServiceStatus>> ServingService::List(const identity::Principal& who) {
  ASSIGN_OR_RETURN(auto records, Records());
  std::vector<ServiceStatus> out;
  MutexLock lock(view_mu_);
  for (ServiceRecord& r : records) {
    if (!who.AllowsTeam(identity::kScopeJobsRead, r.team)) continue;
    ServiceStatus s;
    if (auto it = published_.find(r.id); it != published_.end()) s = it->second;
    s.record = std::move(r);
    if (s.proxy.empty()) s.proxy = "not started yet";
    out.push_back(std::move(s));
  }
  return out;
}

Result<ServiceStatus> ServingService::Get(const identity::Principal& who, const std::string& name) {
  ASSIGN_OR_RETURN(auto found, store_.FindDirectoryEntryByName(std::string(kServiceKind), name));
  if (!found) return NotFound("service " + name + " not found");
  ASSIGN_OR_RETURN(ServiceRecord r, FromEntry(*found));
  if (!who.AllowsTeam(identity::kScopeJobsRead, r.team)) return NotFound("service " + name + " not found");
  ServiceStatus s;
  {
    MutexLock lock(view_mu_);
    if (auto it = published_.find(r.id); it != published_.end()) s = it->second;
  }
  s.record = std::move(r);
  if (s.proxy.empty()) s.proxy = "not started yet";
  return s;
}

void ServingService::Pass(bool lead) {
  MutexLock lock(pass_mu_);
  if (!lead) {
    for (auto& [id, rt] : runtimes_) {
      if (rt.proxy) rt.proxy->Stop();
    }
    runtimes_.clear();
    MutexLock view(view_mu_);
    published_.clear();
    return;
  }
  auto records = Records();
  if (!records.ok()) {
    spdlog::warn("services: reading them failed: {}", records.status().ToString());
    return;
  }
  const std::map<std::string, Timestamp> down = options_.outages ? options_.outages() : std::map<std::string, Timestamp>{};
  std::map<std::string, ServiceStatus> seen;
  for (const ServiceRecord& r : *records) {
    Runtime& rt = runtimes_[r.id];
    seen[r.id] = PassOne(r, rt, down);
  }
  for (auto it = runtimes_.begin(); it != runtimes_.end();) {
    if (seen.count(it->first)) {
      ++it;
      continue;
    }
    if (it->second.proxy) it->second.proxy->Stop();
    it = runtimes_.erase(it);
  }
  MutexLock view(view_mu_);
  published_ = std::move(seen);
}

serving::ProxyConfig ServingService::ProxyFor(const ServiceRecord& record, const spec::ServiceSpec& s) const {
  serving::ProxyConfig c;
  c.name = record.name;
  c.bind = record.endpoint_host + ":" + std::to_string(record.endpoint_port);
  c.slots = options_.slots;
  c.backup_slots = options_.backup_slots;
  c.balance = s.load_balancing_policy == "round_robin" ? "roundrobin" : "leastconn";
  c.server_timeout = std::chrono::seconds(static_cast<int64_t>(std::clamp(s.stream_timeout_seconds, 1.0, 7.0 * 86400)));
  if (!s.failover || !s.failover->degraded.replica) {
    c.degraded_answer = s.failover && s.failover->degraded.answer ? *s.failover->degraded.answer : spec::FixedAnswer{};
  }
  const std::string dir = options_.runtime_dir + "/" + record.name;
  c.socket_path = dir + "/admin.sock";
  c.pid_file = dir + "/haproxy.pid";
  return c;
}

Status ServingService::EnsureProxy(const ServiceRecord& record, Runtime& rt) {
  if (rt.proxy) return Status::Ok();
  serving::ProxyConfig c = ProxyFor(record, *rt.spec);
  std::string dir = options_.runtime_dir + "/" + record.name;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return FailedPrecondition("cannot create " + dir + ": " + ec.message());
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all, ec);
  const std::string config_path = dir + "/haproxy.cfg";
  // The proxy an earlier server left serving this very configuration (it
  // was killed, or it stopped leading) is taken over with the replicas it
  // holds: traffic never stops. Any other is replaced.
  ASSIGN_OR_RETURN(std::string text, serving::RenderConfig(c));
  if (auto on_disk = ReadFile(config_path); on_disk.ok() && *on_disk == text) {
    if (auto adopted = serving::ProxyProcess::Adopt(c.socket_path); adopted.ok()) {
      auto proxy = std::make_unique<serving::ProxyProcess>(std::move(*adopted));
      auto traffic = std::make_unique<serving::Traffic>(proxy->api(), record.name, c.slots, c.backup_slots);
      std::map<std::string, std::pair<std::string, Role>> at;
      for (const ReplicaRef& x : record.replicas) {
        if (std::string host = HostOf(x.job); !host.empty() && host != "sim") {
          at[host + ":" + std::to_string(x.port)] = {x.job, x.role};
        }
      }
      if (Status st = traffic->Adopt(at); st.ok()) {
        spdlog::info("service {}: took over the HAProxy already serving it (pid {})", record.name, proxy->pid());
        rt.proxy = std::move(proxy);
        rt.traffic = std::move(traffic);
        return Status::Ok();
      } else {
        spdlog::warn("service {}: taking over its HAProxy: {}; starting a new one", record.name, st.ToString());
      }
    }
  }
  ASSIGN_OR_RETURN(serving::ProxyProcess p, serving::ProxyProcess::Start(options_.haproxy, c, config_path));
  rt.proxy = std::make_unique<serving::ProxyProcess>(std::move(p));
  rt.traffic = std::make_unique<serving::Traffic>(rt.proxy->api(), record.name, c.slots, c.backup_slots);
  return Status::Ok();
}

std::string ServingService::HostOf(const std::string& job, std::string* cluster, Timestamp* started) const {
  auto attempts = store_.ListAttempts(job);
  if (!attempts.ok() || attempts->empty()) return "";
  const Attempt& a = attempts->back();
  if (cluster) *cluster = a.cluster;
  if (started) *started = a.started_at;
  const std::string kind = ProviderKind(estate_, a.cluster);
  if (kind == "local") return "127.0.0.1";
  if (kind == "sim") return "sim";
  return "";
}

serving::PlaceView ServingService::PlaceHealth(const std::string& place, const std::map<std::string, Timestamp>& down,
                                               const serving::PlaceView& last, Timestamp now) const {
  std::string provider = place;
  if (const Cluster* c = estate_.FindCluster(place)) provider = c->provider;
  auto it = place.empty() ? down.end() : down.find(provider);
  if (it != down.end()) {
    // Dated on this loop's clock (the provider's may be simulated time).
    return serving::PlaceView{false, last.healthy ? now : last.since, "provider " + provider + " is down"};
  }
  // Healthy since it last came back (or since the service began).
  return serving::PlaceView{true, last.healthy ? last.since : now, ""};
}

void ServingService::Resume(const ServiceRecord& record, Runtime& rt) const {
  if (rt.resumed) return;
  // The mode it was last in, as the trail recorded it: a restart is not a
  // transition.
  rt.resumed = true;
  AuditFilter f;
  f.action = "service.transition";
  f.resource = "service/" + record.name;
  f.newest_first = true;
  f.limit = 1;
  if (auto last = store_.ListAudit(f); last.ok() && !last->empty()) rt.mode = ModeNamed(last->front().details.String("to"));
}

void ServingService::DescribePlaces(const spec::ServiceSpec& spec, ServiceStatus& out) const {
  if (!spec.failover) return;
  auto provider_of = [this](const std::string& place) {
    const Cluster* c = estate_.FindCluster(place);
    return c ? c->provider : place;
  };
  out.preferred = spec.failover->preferred.place;
  out.alternate = spec.failover->alternate.place;
  out.preferred_provider = provider_of(out.preferred);
  out.alternate_provider = provider_of(out.alternate);
  out.warm = spec.failover->alternate.warm;
  out.hold_down_s = spec.failover->hold_down.count() / 1'000'000;
}

void ServingService::Record(AuditEvent event, const std::string& service, const char* what) {
  auto log = [service, what](const Status& st) {
    if (!st.ok()) spdlog::warn("service {}: recording {}: {}", service, what, st.ToString());
  };
  log(queue_.Enqueue([e = std::move(event)](WriteTx& tx) mutable { return tx.AppendAudit(e); }, log));
}

std::vector<serving::ReplicaView> ServingService::Observe(const ServiceRecord& record, Runtime& rt,
                                                          const std::map<std::string, JobRecord>& jobs, Timestamp now,
                                                          std::map<std::string, ReplicaStatus>& shown) {
  const spec::ServiceSpec& spec = *rt.spec;
  std::vector<serving::ReplicaView> views;
  for (const ReplicaRef& x : record.replicas) {
    ReplicaStatus& rs = shown[x.job];
    rs.job = x.job;
    rs.role = x.role;
    rs.revision = x.revision;
    auto it = jobs.find(x.job);
    const JobRecord* job = it == jobs.end() ? nullptr : &it->second;
    if (!job || IsTerminal(job->state)) {
      // Gone: out of traffic, and off the record once.
      rs.state = "ended";
      if (rt.traffic && rt.traffic->Has(x.job)) (void)rt.traffic->Remove(x.job);
      rt.probes.erase(x.job);
      if (!Ending(rt, x.job, now)) EndReplica(record, x.job, "its job ended", rt);
      continue;
    }
    serving::ReplicaView v;
    v.id = x.job;
    v.role = x.role;
    v.outdated = x.revision < record.revision;
    v.running = job->state == JobState::kRunning;
    rs.state = v.running ? "starting" : "pending";
    std::string host;
    if (v.running) {
      host = HostOf(x.job, &rs.cluster, &v.started_at);
      if (rs.cluster.empty()) v.running = false;
    }
    Probed& p = rt.probes[x.job];
    if (v.running && host == "sim") {
      // A simulated replica answers once its simulated attempt runs.
      if (!p.passing_since) p.passing_since = now;
      p.answer = "simulated";
    } else if (v.running && !host.empty()) {
      rs.address = host + ":" + std::to_string(x.port);
      if (rt.traffic && !rt.traffic->Has(x.job)) {
        if (Status st = rt.traffic->Place(x.job, x.role, host, static_cast<uint16_t>(x.port)); !st.ok()) {
          spdlog::warn("service {}: placing replica {}: {}", record.name, x.job, st.ToString());
        }
      }
      // On the spec's schedule, from the replica's start.
      const auto interval = Micros(static_cast<int64_t>(std::clamp(spec.readiness.interval_seconds, 0.0, 86400.0) * 1e6));
      if (p.last == Timestamp{} || now - p.last >= interval) {
        serving::ProbeResult pr = serving::Probe(host, static_cast<uint16_t>(x.port), spec.readiness);
        p.last = now;
        p.answer = pr.ok ? "200 in " + std::to_string(pr.took.count() / 1000) + " ms" : pr.error;
        if (pr.ok && !p.passing_since) p.passing_since = now;
        if (!pr.ok && !p.failing_since) p.failing_since = now;
        (pr.ok ? p.failing_since : p.passing_since).reset();
      }
    } else if (v.running) {
      p.answer = "no address: replicas are reached on the local executor only (docs/services.md)";
    }
    v.passing_since = p.passing_since;
    v.failing_since = p.failing_since;
    rs.probe = p.answer;
    if (v.running) rs.state = p.passing_since ? "ready" : p.failing_since ? "failing" : "starting";
    views.push_back(v);
  }
  return views;
}

void ServingService::Count(const ServiceRecord& record, Runtime& rt, std::vector<serving::ReplicaView>& views,
                           std::map<std::string, ReplicaStatus>& shown, Timestamp now) const {
  if (!rt.traffic) return;
  std::map<std::string, serving::ServerStats> counters;
  auto total = rt.traffic->Observe(views, &counters);
  if (!total.ok()) {
    spdlog::warn("service {}: reading HAProxy's counters: {}", record.name, total.status().ToString());
    return;
  }
  const int64_t errors = counters.count("") ? counters[""].responses_5xx : 0;
  if (rt.last_total >= 0 && now > rt.last_at && *total >= rt.last_total) {
    rt.qps = static_cast<double>(*total - rt.last_total) / std::chrono::duration<double>(now - rt.last_at).count();
    rt.history.push_back(ServiceSample{now, *total - rt.last_total, std::max<int64_t>(0, errors - rt.errors)});
    if (rt.history.size() > kHistory) rt.history.erase(rt.history.begin());
  }
  rt.last_total = rt.total = *total;
  rt.last_at = now;
  rt.errors = errors;
  for (const serving::ReplicaView& v : views) {
    ReplicaStatus& rs = shown[v.id];
    rs.in_traffic = v.in_traffic;
    if (v.draining) rs.state = "draining";
    if (auto c = counters.find(v.id); c != counters.end()) {
      rs.requests = c->second.requests;
      rs.errors = c->second.responses_5xx;
    }
  }
}

void ServingService::TakeDown(const ServiceRecord& record, Runtime& rt, const std::vector<serving::ReplicaView>& views,
                              Timestamp now) {
  // Every replica ended, then the proxy and the record.
  for (const serving::ReplicaView& v : views) {
    if (!Ending(rt, v.id, now)) EndReplica(record, v.id, "the service was taken down", rt);
  }
  if (!record.replicas.empty()) return;
  if (rt.proxy) rt.proxy->Stop();
  rt.proxy.reset();
  rt.traffic.reset();
  std::optional<AuditEvent> usage = Usage(record, rt, now);
  Status st = queue_.Run([&](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.DeleteDirectoryEntry(std::string(kServiceKind), record.id));
    if (usage) RETURN_IF_ERROR(tx.AppendAudit(*usage));
    AuditEvent e = ServiceEvent("service.removed", "causeway", record, now, {});
    return tx.AppendAudit(e);
  });
  if (!st.ok()) spdlog::warn("service {}: removing it: {}", record.name, st.ToString());
}

void ServingService::Steer(const ServiceRecord& record, Runtime& rt, const std::vector<serving::ReplicaView>& views,
                           const std::map<std::string, Timestamp>& down, Timestamp now, ServiceStatus& out) {
  const spec::ServiceSpec& spec = *rt.spec;
  // A place is lost when its provider is down; its replicas failing their
  // probes the controller reads for itself.
  if (!rt.seen_places) {
    rt.preferred = rt.alternate = serving::PlaceView{true, record.created_at, ""};
    rt.seen_places = true;
  }
  rt.preferred = PlaceHealth(WhereFor(spec, Role::kPreferred).place, down, rt.preferred, now);
  rt.alternate = PlaceHealth(WhereFor(spec, Role::kAlternate).place, down, rt.alternate, now);
  serving::ServiceView view;
  view.spec = &spec;
  view.now = now;
  view.mode = rt.mode;
  view.replicas = views;
  view.preferred = rt.preferred;
  view.alternate = rt.alternate;
  view.qps = rt.qps;
  view.target = rt.target;
  view.asked_target = rt.asked_target;
  view.asked_since = rt.asked_since;
  view.blue_green = record.update_mode == "blue_green";
  const serving::Decision d = serving::Decide(view);
  rt.target = d.target;
  rt.asked_target = d.asked_target;
  rt.asked_since = d.asked_since;
  if (!d.transition.empty()) {
    rt.transitions.push_back(ServiceStatus::Transition{now, d.mode, d.transition, d.owner});
    if (rt.transitions.size() > kMaxTransitions) rt.transitions.erase(rt.transitions.begin());
    Record(ServiceEvent("service.transition", "causeway", record, now,
                        {{"from", serving::ToString(rt.mode)},
                         {"to", serving::ToString(d.mode)},
                         {"reason", d.transition},
                         {"next_action_owner", d.owner}}),
           record.name, "a transition");
  }
  rt.mode = d.mode;
  if (!rt.recorded_at) rt.recorded_at = now;
  if (now - *rt.recorded_at >= options_.usage_period) {
    if (std::optional<AuditEvent> usage = Usage(record, rt, now)) Record(std::move(*usage), record.name, "its usage");
  }

  int pending = 0;
  {
    MutexLock l(rt.starts->mu);
    pending = rt.starts->pending;
    out.refused = rt.starts->refused;
  }
  size_t started = 0;
  for (const serving::Action& a : d.actions) {
    Status st = Status::Ok();
    const bool held = rt.traffic && rt.traffic->Has(a.replica);
    switch (a.kind) {
      case serving::ActionKind::kStart:
        // One pass's submissions are seen before the next decides.
        if (pending > 0 || record.replicas.size() + started >= kMaxReplicas) break;
        ++started;
        StartReplica(record, spec, a.role, rt);
        break;
      case serving::ActionKind::kStop:
        if (held) st = rt.traffic->Remove(a.replica);
        if (!Ending(rt, a.replica, now)) EndReplica(record, a.replica, a.reason, rt);
        break;
      case serving::ActionKind::kAdmit:
        if (held) st = rt.traffic->Admit(a.replica);
        break;
      case serving::ActionKind::kDrain:
        if (held) st = rt.traffic->Drain(a.replica);
        break;
    }
    if (!st.ok()) spdlog::warn("service {}: {} {}: {}", record.name, a.replica, a.reason, st.ToString());
  }
}

ServiceStatus ServingService::PassOne(const ServiceRecord& record, Runtime& rt,
                                      const std::map<std::string, Timestamp>& down) {
  ServiceStatus out;
  out.record = record;
  const Timestamp now = clock_.Now();
  Resume(record, rt);
  if (!rt.spec || rt.spec_yaml != record.spec_yaml) {
    auto s = spec::ParseServiceSection(record.spec_yaml, record.file);
    if (!s.ok() || !*s) {
      out.proxy = "its task no longer reads: " + (s.ok() ? std::string("no service section") : s.status().message());
      return out;
    }
    rt.spec = **s;
    rt.spec_yaml = record.spec_yaml;
  }
  DescribePlaces(*rt.spec, out);

  // Its replicas' jobs.
  std::vector<std::string> ids;
  for (const ReplicaRef& x : record.replicas) ids.push_back(x.job);
  std::map<std::string, JobRecord> jobs;
  auto got = store_.GetJobs(ids);
  if (!got.ok()) {
    out.proxy = "reading its replicas failed: " + got.status().message();
    return out;
  }
  for (JobRecord& j : *got) jobs[j.id] = std::move(j);

  if (record.up) {
    if (Status st = EnsureProxy(record, rt); !st.ok()) {
      if (rt.proxy_error != st.message()) spdlog::warn("service {}: no proxy: {}", record.name, st.ToString());
      rt.proxy_error = st.message();
    } else {
      rt.proxy_error.clear();
    }
  }
  std::map<std::string, ReplicaStatus> shown;
  std::vector<serving::ReplicaView> views = Observe(record, rt, jobs, now, shown);
  Count(record, rt, views, shown, now);
  if (record.up) {
    Steer(record, rt, views, down, now, out);
    out.proxy = rt.proxy ? "running" : "not running: " + rt.proxy_error;
  } else {
    TakeDown(record, rt, views, now);
    out.proxy = "taken down";
  }
  // Forget the ends that left the record.
  std::erase_if(rt.ending, [&](const auto& e) {
    return std::none_of(record.replicas.begin(), record.replicas.end(), [&](const ReplicaRef& x) { return x.job == e.first; });
  });
  out.mode = rt.mode;
  out.target = rt.target;
  out.qps = rt.qps;
  out.requests = rt.total;
  out.errors = rt.errors;
  out.history = rt.history;
  out.transitions = rt.transitions;
  for (const ReplicaRef& x : record.replicas) out.replicas.push_back(shown[x.job]);
  return out;
}

void ServingService::StartReplica(const ServiceRecord& record, const spec::ServiceSpec& spec, Role role, Runtime& rt) {
  auto port = serving::FreePort(options_.endpoint_host);
  if (!port.ok()) {
    spdlog::warn("service {}: no port for a replica: {}", record.name, port.status().ToString());
    return;
  }
  Where w = WhereFor(spec, role);
  SubmitRequest sr;
  sr.spec_yaml = record.spec_yaml;
  sr.file = record.file;
  const int replica_port = *port;
  const std::string name = record.name, team = record.team, owner = record.owner, id = record.id;
  const int64_t revision = record.revision;
  sr.amend = [this, w, role, replica_port, name, team, owner](JobSpec& s) {
    Pin(s, estate_, w);
    s.name = name + "-" + std::string(serving::ToString(role));
    s.team = s.labels["team"] = team;
    s.owner = s.labels["owner"] = owner;
    s.labels["service"] = name;
    s.labels["service-role"] = std::string(serving::ToString(role));
    s.envs["CAUSEWAY_SERVICE"] = name;
    s.envs["CAUSEWAY_REPLICA_ROLE"] = std::string(serving::ToString(role));
    s.envs["CAUSEWAY_REPLICA_PORT"] = std::to_string(replica_port);
  };
  const Timestamp now = clock_.Now();
  sr.also = [id, role, replica_port, revision, now](WriteTx& tx, const std::vector<JobRecord>& made) -> Status {
    return UpdateRecord(tx, id, now, [&](ServiceRecord& r) {
      // Taken down meanwhile: the replica is not made at all.
      if (!r.up) return FailedPrecondition("service " + r.name + " was taken down");
      // Started on `revision`: an update committed meanwhile replaces it.
      for (const JobRecord& j : made) r.replicas.push_back(ReplicaRef{j.id, role, replica_port, revision});
      return Status::Ok();
    });
  };
  {
    MutexLock l(rt.starts->mu);
    ++rt.starts->pending;
  }
  jobs_.Submit(Actor(record), std::move(sr), [starts = rt.starts, name](Result<SubmitResult> r) {
    MutexLock l(starts->mu);
    --starts->pending;
    std::string why = r.ok() ? "" : r.status().message();
    if (!why.empty() && why != starts->refused) spdlog::warn("service {}: starting a replica: {}", name, why);
    starts->refused = why;
  });
}

std::optional<AuditEvent> ServingService::Usage(const ServiceRecord& record, Runtime& rt, Timestamp now) const {
  // A proxy started afresh counts from 0 again.
  if (rt.total < rt.recorded) rt.recorded = rt.recorded_errors = 0;
  const int64_t requests = rt.total - rt.recorded, errors = std::max<int64_t>(0, rt.errors - rt.recorded_errors);
  const Timestamp from = rt.recorded_at.value_or(record.created_at);
  rt.recorded = rt.total;
  rt.recorded_errors = rt.errors;
  rt.recorded_at = now;
  if (requests <= 0) return std::nullopt;
  return ServiceEvent("service.usage", "causeway", record, now,
                      {{"requests", requests}, {"errors", errors}, {"from", FormatRfc3339(from)}, {"to", FormatRfc3339(now)}});
}

bool ServingService::Ending(const Runtime& rt, const std::string& job, Timestamp now) const {
  auto it = rt.ending.find(job);
  return it != rt.ending.end() && now - it->second < kRetryEnd;
}

void ServingService::EndReplica(const ServiceRecord& record, const std::string& job, const std::string& reason,
                                Runtime& rt) {
  const Timestamp now = clock_.Now();
  rt.ending[job] = now;
  const std::string actor = "service/" + record.name;
  WriteFn cancel = CancelJobWrite(job, actor, reason, now, std::make_shared<JobRecord>(),
                                  Details{{"service", record.name}});
  WriteFn w = [cancel, job, reason, actor, id = record.id, now](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto found, tx.GetJob(job));
    const bool running = found && !IsTerminal(found->state);
    if (running) RETURN_IF_ERROR(cancel(tx));
    ServiceRecord after;
    std::string role;
    RETURN_IF_ERROR(UpdateRecord(tx, id, now, [&](ServiceRecord& r) {
      for (const ReplicaRef& x : r.replicas) {
        if (x.job == job) role = serving::ToString(x.role);
      }
      std::erase_if(r.replicas, [&](const ReplicaRef& x) { return x.job == job; });
      after = r;
      return Status::Ok();
    }));
    AuditEvent e = ServiceEvent("service.replica_end", actor, after, now,
                                {{"job", job},
                                 {"role", role},
                                 {"reason", reason},
                                 {"job_state", found ? std::string(JobStateName(found->state)) : "unknown"},
                                 {"cancelled", running}});
    return tx.AppendAudit(e);
  };
  if (Status st = queue_.Enqueue(std::move(w),
                                 [name = record.name, job](Status st) {
                                   if (!st.ok()) spdlog::warn("service {}: ending replica {}: {}", name, job, st.ToString());
                                 });
      !st.ok()) {
    rt.ending.erase(job);
  }
}

}  // namespace causeway
