// What a scheduler cycle records, off the scheduler's lock: the launches it
// made, with the credentials each attempt carries, and every transition as
// the job's state, its event and its audit record (scheduler_service.h).
#include <openssl/crypto.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <memory>
#include <thread>

#include "identity/tokens.h"
#include "policy/policy.h"
#include "service/dataset_service.h"
#include "service/job_service.h"
#include "service/scheduler_service.h"
#include "provenance/facts.h"
#include "scheduler/explain_json.h"
#include "spec/spec_json.h"

namespace causeway {
namespace {

using scheduler::Transition;

std::string EventType(const Transition& t) {
  switch (t.kind) {
    case Transition::Kind::kDispatched: return "dispatched";
    case Transition::Kind::kStarted: return "started";
    case Transition::Kind::kBudgetWarning: return "budget_warning";
    case Transition::Kind::kBudgetExhausted: return "budget_exhausted";
    case Transition::Kind::kHandedOver: return "handed_over";
    case Transition::Kind::kAbandoned: return "cancelled";
    case Transition::Kind::kAttemptEnded: break;
  }
  if (t.new_state == JobState::kPending) return "requeued";
  return std::string(AttemptOutcomeName(t.outcome));
}

std::string AuditAction(const Transition& t) {
  switch (t.kind) {
    case Transition::Kind::kDispatched: return "job.dispatch";
    case Transition::Kind::kStarted: return "job.start";
    case Transition::Kind::kBudgetWarning: return "budget.warning";
    case Transition::Kind::kBudgetExhausted: return "budget.exhausted";
    case Transition::Kind::kHandedOver: return "job.handover";
    case Transition::Kind::kAbandoned: return "job.cancel";
    case Transition::Kind::kAttemptEnded: break;
  }
  if (t.new_state == JobState::kPending) return "job.requeue";
  if (t.new_state == JobState::kCancelled) return "job.attempt_cancel";
  return "job.finish";
}

Attempt AttemptOf(const Transition& t) {
  Attempt a;
  a.job_id = t.job_id;
  a.number = t.attempt;
  a.cluster = t.cluster;
  a.pool = t.pool;
  a.backend_id = t.backend_id;
  a.resumed_from = t.resumed_from;
  a.started_at = t.started;
  a.flavor = t.flavor;
  a.gpus = t.gpus;
  a.reserved = t.reserved;
  a.borrowed = t.borrowed;
  a.price_micros = t.price_micros;
  a.placement = t.placement.empty() ? "{}" : scheduler::ToJson(t.placement).dump();
  if (t.kind == Transition::Kind::kDispatched || t.kind == Transition::Kind::kStarted ||
      t.kind == Transition::Kind::kHandedOver) {
    a.state = "running";
  } else {
    a.state = std::string(AttemptOutcomeName(t.outcome));
    a.failure_class = t.failure_class;
    a.ended_at = t.time;
    a.exit_code = t.exit_code;
    a.gpu_seconds = t.gpu_seconds;
    a.cost_micros = t.cost_micros;
  }
  return a;
}

// What is known of where the attempt ran (provenance/facts.h): the
// estate's word from its placement and, once it ended, what the backend's
// probe found on its nodes.
std::string FactsOf(const Estate& estate, const Transition& t) {
  int per_node = static_cast<int>(t.nodes > 0 ? t.gpus / t.nodes : t.gpus);
  provenance::AttemptFacts facts = provenance::FactsAtPlacement(estate, t.cluster, t.pool, per_node, t.nodes);
  if (t.kind == Transition::Kind::kAttemptEnded) {
    const Cluster* c = estate.FindCluster(t.cluster);
    bool simulated = c && c->honours.everything;
    std::string backend = simulated ? "the simulated estate" : c && !c->honours.backend.empty() ? c->honours.backend
                                                                                                : "its backend";
    provenance::AddProbe(facts, t.node_facts, !simulated, backend);
    if (!simulated && t.node_facts.empty() && t.outcome == AttemptOutcome::kCancelled) {
      // Stopped by Causeway (a person, a policy or a preemption), not seen
      // to end by the backend: what the probe wrote is not read back.
      std::string why = t.preempted_by.empty() ? "cancelled it" : "preempted it for job " + t.preempted_by;
      facts.probe_not_detected = "Causeway " + why + ": the facts its probe wrote are read back only when " + backend +
                                 " reports an attempt's end";
    }
  }
  return provenance::ToJson(facts).dump();
}

}  // namespace

Result<SchedulerService::Launches> SchedulerService::PrepareLaunches(const std::vector<Transition>& transitions,
                                                                     identity::WorkloadIssuer* workload,
                                                                     const std::string& server_url) {
  // Each attempt on a real backend gets its own credential, so a job never
  // needs a person's token to register checkpoints, and (with workload
  // identity) a signed token clouds can trust instead of static keys.
  // Simulated attempts run nothing and get neither.
  std::vector<std::pair<const Transition*, bool>> held;  // each held launch, and whether it runs something real
  std::vector<std::string> real_jobs;
  for (const Transition& t : transitions) {
    if (!t.launch) continue;
    const Cluster* cluster = estate_.FindCluster(t.cluster);
    held.emplace_back(&t, cluster && Real(*cluster));
    if (held.back().second) real_jobs.push_back(t.job_id);
  }
  std::vector<JobRecord> jobs;
  if (!real_jobs.empty()) {
    ASSIGN_OR_RETURN(jobs, store_.GetJobs(real_jobs));
  }
  std::map<std::string, const JobRecord*> by_id;
  for (const JobRecord& j : jobs) by_id[j.id] = &j;
  Timestamp now = clock_.Now();
  std::vector<std::optional<Result<LaunchCargo>>> cargos(held.size());
  auto carry = [&](size_t i) {
    const Transition& t = *held[i].first;
    if (!held[i].second) {
      cargos[i] = LaunchCargo{};
      return;
    }
    auto found = by_id.find(t.job_id);
    cargos[i] = found == by_id.end() ? Result<LaunchCargo>(NotFound("job " + t.job_id + " not found"))
                                     : Carried(*found->second, t.attempt, t.cluster, workload, server_url, now);
  };
  // With a broker, a cargo may wait on a store (each request has its
  // deadline): attempts are carried side by side, so that one slow store
  // does not hold the others' launches for the sum of its waits.
  const size_t workers = broker_ ? std::min<size_t>(real_jobs.size(), kCarriers) : 0;
  if (workers <= 1) {
    for (size_t i = 0; i < held.size(); ++i) carry(i);
  } else {
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    pool.reserve(workers);
    for (size_t w = 0; w < workers; ++w) {
      pool.emplace_back([&] {
        for (size_t i = next.fetch_add(1); i < held.size(); i = next.fetch_add(1)) carry(i);
      });
    }
    for (std::thread& th : pool) th.join();
  }
  Launches out;
  for (size_t i = 0; i < held.size(); ++i) {
    const Transition& t = *held[i].first;
    if (!cargos[i]->ok()) return cargos[i]->status();
    out[{t.job_id, t.attempt}] = std::make_shared<const LaunchRecord>(*t.launch, std::move(**cargos[i]));
  }
  return out;
}

Result<LaunchCargo> SchedulerService::Carried(const JobRecord& job, int attempt, const std::string& cluster,
                                              identity::WorkloadIssuer* workload, const std::string& server_url,
                                              Timestamp now) const {
  LaunchCargo c;
  c.real = true;
  c.owner = job.owner;
  c.submitted_by = job.submitted_by;
  if (!job.sealed_secrets.empty()) {
    // First, so that Causeway's own variables below can never be hidden.
    if (Status st = OpenSecrets(job, c.env); !st.ok()) {
      c.refused = "its secrets cannot be given to it: " + st.message();
      spdlog::error("job {}: {}", job.id, c.refused);
      return c;
    }
  }
  std::optional<JobSpec> spec;
  if (!estate_.identity.federations.empty()) {
    ASSIGN_OR_RETURN(spec, StoredSpec(job));
  }
  if (spec && !spec->secret_refs.empty()) {
    // Read with the attempt's own identity, before anything else is minted:
    // an attempt whose secrets cannot be read never runs.
    if (!broker_ || !workload) {
      c.refused = "its secrets are read from the company's secret store, and this server reads none "
                  "(it needs identity.workload and identity.secret_stores)";
      return c;
    }
    secrets::Fetched fetched = broker_->Fetch(
        *spec, job.id, attempt,
        [&](const std::string& audience) -> Result<std::string> {
          ASSIGN_OR_RETURN(identity::WorkloadToken t, workload->Mint(job, attempt, cluster, audience, now));
          return std::move(t.token);
        },
        now);
    c.secret_reads = std::move(fetched.reads);
    if (!fetched.status.ok()) {
      c.refused = "its secrets cannot be given to it: " + fetched.status.message();
      spdlog::error("job {}: {}", job.id, c.refused);
      return c;
    }
    for (auto& [var, value] : fetched.values) c.env[var] = std::move(value);
  }
  // A team that may use none of the audiences (each is for other teams'
  // federations) gets no workload token at all.
  if (workload && !workload->AudiencesFor(job.team).empty()) {
    ASSIGN_OR_RETURN(c.workload, workload->Mint(job, attempt, cluster, "", now));
    c.env["CAUSEWAY_WORKLOAD_TOKEN"] = c.workload->token;
    // One token per federated identity, for the audience its cloud
    // expects; the workspace script writes each to its file.
    for (const CloudFederation* f : spec ? policy::FederationsFor(*spec, estate_.identity)
                                         : std::vector<const CloudFederation*>{}) {
      ASSIGN_OR_RETURN(identity::WorkloadToken t, workload->Mint(job, attempt, cluster, f->audience, now));
      c.env[policy::FederatedTokenVar(*f)] = t.token;
      c.federated.emplace_back(f->name, std::move(t));
    }
  }
  // Its own credential (CAUSEWAY_TOKEN) is minted by the launch's record,
  // once the launch is written (LaunchRecord::WriteIn).
  if (!server_url.empty()) c.env["CAUSEWAY_SERVER"] = server_url;
  return c;
}

Status SchedulerService::OpenSecrets(const JobRecord& job, std::map<std::string, std::string>& env) const {
  if (!secrets_) return FailedPrecondition("this server has no secrets key");
  ASSIGN_OR_RETURN(std::string plain, secrets_->Open(job.sealed_secrets, job.id));
  auto values = nlohmann::json::parse(plain, nullptr, false);
  OPENSSL_cleanse(plain.data(), plain.size());
  if (!values.is_object()) return FailedPrecondition("its sealed secrets are not a set of variables");
  for (const auto& [name, value] : values.items()) {
    if (value.is_string()) env[name] = value.get<std::string>();
  }
  return Status::Ok();
}

void SchedulerService::CancelRefused(const Launches& launches) {
  for (const auto& [key, l] : launches) {
    const std::string& refused = l->cargo().refused;
    if (refused.empty()) continue;
    std::string job_id = key.first;
    auto job = std::make_shared<JobRecord>();
    Status queued = queue_.Enqueue(CancelJobWrite(job_id, kActor, refused, clock_.Now(), job),
                                   [this, job_id](Status st) {
                                     if (st.ok()) OnCancelled(job_id);
                                   });
    if (!queued.ok()) spdlog::warn("job {}: cancelling it: {}", job_id, queued.ToString());
  }
}

std::vector<WriteFn> SchedulerService::Persist(const std::vector<Transition>& transitions, const Fence& fence,
                                               const Launches& launches) {
  std::vector<WriteFn> out;
  out.reserve(transitions.size());
  for (const Transition& t : transitions) {
    // Fencing: a replica that lost the lease records nothing more.
    out.push_back([fence, write = WriteOf(t, launches)](WriteTx& tx) -> Status {
      RETURN_IF_ERROR(tx.CheckLease(kLease, fence.replica, fence.epoch));
      return write(tx);
    });
  }
  return out;
}

WriteFn SchedulerService::WriteOf(const Transition& t, const Launches& launches) {
  switch (t.kind) {
    case Transition::Kind::kAbandoned:
      // A pipeline step that will never run: cancelled as a person's
      // cancellation is, by the scheduler, with the reason.
      return [t](WriteTx& tx) -> Status {
        Status st = CancelJobWrite(t.job_id, kActor, t.message, t.time, std::make_shared<JobRecord>())(tx);
        // Cancelled or gone meanwhile: nothing more to record.
        return st.code() == Code::kFailedPrecondition || st.code() == Code::kNotFound ? Status::Ok() : st;
      };
    case Transition::Kind::kBudgetWarning:
    case Transition::Kind::kBudgetExhausted:
      return [t](WriteTx& tx) -> Status {
        AuditEvent e = SchedulerEvent(t, "team/" + t.team, {{"message", t.message}, {"spent_micros", t.total_cost_micros}});
        return tx.AppendAudit(e);
      };
    case Transition::Kind::kDispatched:
    case Transition::Kind::kStarted:
    case Transition::Kind::kHandedOver:
    case Transition::Kind::kAttemptEnded:
      break;
  }
  std::shared_ptr<const LaunchRecord> launch;
  if (auto it = t.launch ? launches.find({t.job_id, t.attempt}) : launches.end(); it != launches.end()) launch = it->second;
  const placement::DataPlaces* places = t.kind == Transition::Kind::kDispatched ? data_places_.load() : nullptr;
  return [this, t, attempt = Measured(t), launch, places](WriteTx& tx) -> Status {
    // A launch is recorded before its backend receives it (it is released
    // once this commits), so a successor never launches this number again.
    if (launch) RETURN_IF_ERROR(launch->WriteIn(tx, t.time, kActor));
    ASSIGN_OR_RETURN(auto job, tx.GetJob(t.job_id));
    if (!job) return Status::Ok();  // nothing to record against
    RETURN_IF_ERROR(tx.PutAttempt(attempt));
    // The backend's id for an attempt already dispatched: the job itself
    // is unchanged.
    if (t.kind == Transition::Kind::kHandedOver) {
      RETURN_IF_ERROR(tx.AddJobEvent(JobEvent{0, t.job_id, t.time, EventType(t), t.message}));
      AuditEvent e = SchedulerEvent(t, "job/" + t.job_id,
                                    {{"attempt", t.attempt}, {"cluster", t.cluster}, {"backend_id", t.backend_id}});
      return tx.AppendAudit(e);
    }
    return RecordProgress(tx, t, *job, attempt, launch.get(), places);
  };
}

Attempt SchedulerService::Measured(const Transition& t) const {
  Attempt attempt = AttemptOf(t);
  if (!t.cluster.empty()) attempt.facts = FactsOf(estate_, t);
  if (t.kind != Transition::Kind::kAttemptEnded || !utilization_) return attempt;
  telemetry::Utilization u = utilization_(t.job_id, t.attempt);
  int64_t observed = u.observed_gpu_seconds(), work = u.work_gpu_seconds();
  // A sample stands for the interval since the one before it, so the last
  // ones can reach a little past the attempt's end: what was seen is never
  // more than what was allocated (work scaled with it).
  if (attempt.gpu_seconds > 0 && observed > attempt.gpu_seconds) {
    work = work * attempt.gpu_seconds / observed;
    observed = attempt.gpu_seconds;
  }
  attempt.observed_gpu_seconds = observed;
  attempt.work_gpu_seconds = work;
  return attempt;
}

Status SchedulerService::RecordProgress(WriteTx& tx, const Transition& t, JobRecord job, const Attempt& attempt,
                                        const LaunchRecord* launch, const placement::DataPlaces* places) const {
  // A job cancelled meanwhile stays cancelled; its totals still count.
  if (!IsTerminal(job.state)) job.state = t.new_state;
  job.cluster = t.cluster;
  job.attempts = t.attempts;
  job.gpu_seconds = t.total_gpu_seconds;
  job.cost_micros = t.total_cost_micros;
  job.reason = t.kind == Transition::Kind::kDispatched || t.kind == Transition::Kind::kStarted ? "" : t.message;
  job.updated_at = t.time;
  RETURN_IF_ERROR(tx.UpdateJobProgress(job));
  RETURN_IF_ERROR(tx.AddJobEvent(JobEvent{0, t.job_id, t.time, EventType(t), t.message}));
  AuditEvent e = SchedulerEvent(t, "job/" + t.job_id,
                                {{"attempt", t.attempt}, {"cluster", t.cluster}, {"flavor", t.flavor},
                                 {"gpus", t.gpus}, {"reserved", t.reserved}, {"borrowed", t.borrowed},
                                 {"state", JobStateName(job.state)}, {"message", t.message}});
  // A job placed away from its data pays for reading it across.
  if (places) {
    std::vector<std::string> charged;
    for (const DataCharge& c : RemoteReadCharges(estate_, *places, job, t.cluster, t.time,
                                                 "dch_" + t.job_id + "_" + std::to_string(t.attempt))) {
      RETURN_IF_ERROR(tx.InsertDataCharge(c));
      charged.push_back(c.id);
    }
    if (!charged.empty()) e.details["data_charges"] = charged;
  }
  // The attempt's credential, minted and written with its launch.
  if (launch && !launch->credential_id().empty()) e.details["credential"] = launch->credential_id();
  if (t.kind == Transition::Kind::kAttemptEnded) RETURN_IF_ERROR(RecordEnd(tx, t, attempt, e.details));
  return tx.AppendAudit(e);
}

Status SchedulerService::RecordEnd(WriteTx& tx, const Transition& t, const Attempt& attempt, Details& details) {
  // The attempt's credential ends with it.
  Status revoked = tx.RevokeToken(identity::JobCredentialId(t.job_id, t.attempt), t.time);
  if (revoked.ok()) details["credential_revoked"] = identity::JobCredentialId(t.job_id, t.attempt);
  if (!revoked.ok() && revoked.code() != Code::kNotFound) return revoked;
  details["outcome"] = AttemptOutcomeName(t.outcome);
  if (!t.failure_class.empty()) {
    details["failure_class"] = t.failure_class;
    details["next_action_owner"] = t.owner;
  }
  details["gpu_seconds"] = t.gpu_seconds;
  details["cost_micros"] = t.cost_micros;
  if (attempt.observed_gpu_seconds > 0) {
    details["observed_gpu_seconds"] = attempt.observed_gpu_seconds;
    details["work_gpu_seconds"] = attempt.work_gpu_seconds;
  }
  return Status::Ok();
}

AuditEvent SchedulerService::SchedulerEvent(const Transition& t, std::string resource, Details details) {
  AuditEvent e;
  e.time = t.time;
  e.actor = kActor;
  e.action = AuditAction(t);
  e.resource = std::move(resource);
  e.details = std::move(details);
  return e;
}

}  // namespace causeway
