#include "service/job_service.h"

#include <algorithm>
#include <cctype>
#include <openssl/crypto.h>

#include <memory>
#include <set>
#include <nlohmann/json.hpp>

#include "causeway/crypto.h"
#include "causeway/ids.h"
#include "causeway/job_spec.h"
#include "readiness/residency.h"
#include "service/submission_check.h"
#include "spec/spec_json.h"

namespace causeway {

Status MayRead(const identity::Principal& who, const JobRecord& job) {
  if (who.AllowsTeam(identity::kScopeJobsRead, job.team) || who.IsJob(job.id)) return Status::Ok();
  // Not found rather than denied: whether a job exists is itself the team's.
  return NotFound("job " + job.id + " not found");
}

Status MayCancel(const identity::Principal& who, const JobRecord& job) {
  // jobs:manage cancels any job of the team; jobs:write one's own: a
  // person's own jobs, or for a token those it submitted or can see.
  if (who.AllowsTeam(identity::kScopeJobsManage, job.team)) return Status::Ok();
  bool submitted = !who.IsPerson() && job.submitted_by == who.token_id;
  bool sees = submitted || MayRead(who, job).ok();
  bool own = who.IsPerson() ? job.owner == who.user : sees;
  if (own && who.AllowsTeam(identity::kScopeJobsWrite, job.team)) return Status::Ok();
  // Whether the job exists is the team's business: not found to a caller
  // with no rights over it at all, denied to one who sees it.
  if (!sees && !who.AllowsTeam(identity::kScopeJobsWrite, job.team)) return NotFound("job " + job.id + " not found");
  return PermissionDenied(who.Describe() + " may cancel only their own jobs in team " + job.team + "; job " + job.id +
                          " is " + job.owner + "'s (jobs:manage, e.g. team-admin, may cancel any)");
}

Result<JobService::Step> JobService::PrepareStep(const identity::Principal& who, TaskFile::Step& task,
                                                 const SubmitRequest& request, Timestamp now) const {
  ParsedJobSpec& parsed = task.parsed;
  RETURN_IF_ERROR(ApplySpecInputs(parsed, request.inputs, request.file));
  JobSpec& spec = parsed.spec;
  if (request.amend) request.amend(spec);
  if (!parsed.secret_values.empty() && !secrets_) {
    return FailedPrecondition("this server keeps no secrets (it has no secrets key), so job " +
                              std::string(spec.name.empty() ? "" : "\"" + spec.name + "\" ") +
                              "cannot be given its secrets");
  }
  // A person submits as themselves, to a team whose queue a role of theirs
  // covers; a token's scopes hold for every team.
  if (who.IsPerson()) {
    if (spec.owner.empty()) spec.owner = spec.labels["owner"] = who.user;
    if (spec.owner != who.user) {
      return PermissionDenied(who.user + " cannot submit a job owned by " + spec.owner +
                              ": a person's jobs are their own (leave labels.owner out or set it to " + who.user + ")");
    }
  }
  if (!who.AllowsTeam(identity::kScopeJobsWrite, spec.team)) {
    return PermissionDenied(who.Describe() + " may not submit to team " + (spec.team.empty() ? "(none)" : spec.team) +
                            "'s queue: no role of theirs covers it (causeway access explain)");
  }
  // Datasets first: the digests they resolve to decide where the job may
  // run by its data.
  if (dataset_check_ && !spec.datasets.empty()) RETURN_IF_ERROR(dataset_check_(spec, request.file, parsed.warnings));
  RETURN_IF_ERROR(CheckSubmission(spec, policies_, estate_, router_, request.file, parsed.warnings));

  Step out;
  out.spec = spec;
  out.warnings = parsed.warnings;
  JobRecord& job = out.job;
  job.id = NewId("job", now);
  job.name = spec.name.empty() ? "unnamed" : spec.name;
  job.team = spec.team;
  job.owner = spec.owner;
  job.state = JobState::kPending;
  job.priority = spec.priority;
  job.spec_yaml = task.yaml;
  if (parsed.secrets_in_file) {
    // The file gives secret values itself: they are sealed like any other,
    // and the spec is kept without them.
    job.spec_yaml = WithoutSecretValues(job.spec_yaml);
    out.warnings.push_back(Diagnostic{request.file, 0, 0, "secrets",
                                      "the file gives secret values: they are kept sealed, and the spec is stored "
                                      "without them (re-written, without its comments); prefer --secret NAME",
                                      true});
  }
  job.spec_json = ToJson(spec).dump();
  job.submitted_by = who.token_id;
  job.created_at = job.updated_at = now;
  if (!parsed.secret_values.empty()) {
    std::string plain = nlohmann::json(parsed.secret_values).dump();
    job.sealed_secrets = secrets_->Seal(plain, job.id);
    out.secrets_mac = secrets_->Mac(plain);
    OPENSSL_cleanse(plain.data(), plain.size());
  }
  return out;
}

Result<std::vector<JobService::Step>> JobService::PrepareSteps(const identity::Principal& who, TaskFile& tasks,
                                                               const SubmitRequest& request, Timestamp now) const {
  std::vector<Step> steps;
  Status refused = Status::Ok();
  std::vector<Diagnostic> problems, notes;  // errors, then warnings beside them
  // In a pipeline, what has no line of its own (a policy's, the estate's)
  // names its step.
  auto name_step = [&](std::vector<Diagnostic> diags, size_t i) {
    const std::string& name = tasks.steps[i].parsed.spec.name;
    for (Diagnostic& d : diags) {
      if (tasks.pipeline && d.line == 0) {
        d.message = (tasks.job_group ? "task " : "step ") + std::to_string(i + 1) +
                    (name.empty() ? "" : " (" + name + ")") + ": " + d.message;
      }
    }
    return diags;
  };
  for (size_t i = 0; i < tasks.steps.size(); ++i) {
    auto step = PrepareStep(who, tasks.steps[i], request, now);
    if (step.ok()) {
      step->warnings = name_step(std::move(step->warnings), i);
      steps.push_back(std::move(*step));
      continue;
    }
    Status st = step.status();
    if (refused.ok()) refused = st;
    // A refusal with no diagnostics of its own (a rule's, a permission's)
    // is still one problem of its step, listed.
    std::vector<Diagnostic> own = st.diagnostics();
    if (own.empty()) own.push_back(Diagnostic{request.file, 0, 0, "", st.message()});
    std::vector<Diagnostic> named = name_step(std::move(own), i);
    for (Diagnostic& d : named) (d.warning ? notes : problems).push_back(std::move(d));
  }
  if (!refused.ok()) {
    if (tasks.steps.size() == 1) return refused;
    // The message counts exactly the problems listed, and names the step of
    // the first.
    std::string message = problems.size() == 1
                              ? problems.front().ToString()
                              : std::to_string(problems.size()) + " problems in the " +
                                    (tasks.job_group ? "job group's tasks" : "pipeline's steps") + "; first: " +
                                    problems.front().ToString();
    problems.insert(problems.end(), notes.begin(), notes.end());
    return Status(refused.code(), std::move(message), std::move(problems));
  }
  if (!tasks.pipeline) return steps;
  // One pipeline: each step after the one before it; or one job group: its
  // tasks started together.
  std::string pipeline = NewId(tasks.job_group ? "jg" : "pl", now);
  for (size_t i = 0; i < steps.size(); ++i) {
    JobRecord& job = steps[i].job;
    job.pipeline = pipeline;
    job.pipeline_name = tasks.name;
    job.step = static_cast<int>(i);
    job.steps = static_cast<int>(steps.size());
    job.job_group = tasks.job_group;
    job.auxiliary = tasks.steps[i].auxiliary;
    job.termination_delay_seconds = tasks.steps[i].termination_delay_seconds;
    job.after = i == 0 || tasks.job_group ? "" : steps[i - 1].job.id;
    if (steps[i].spec.name.empty()) {
      job.name = (tasks.name.empty() ? std::string("step") : tasks.name + "-step") + "-" + std::to_string(i + 1);
    }
  }
  return steps;
}

AuditEvent JobService::SubmitEvent(const identity::Principal& who, const Step& step) {
  const JobRecord& job = step.job;
  AuditEvent event;
  event.time = job.created_at;
  event.actor = who.token_id;
  event.action = "job.submit";
  event.resource = "job/" + job.id;
  // What was asked for, never the environment (it may hold secrets).
  event.details = {{"name", job.name},
                   {"team", job.team},
                   {"owner", job.owner},
                   {"accelerators", step.spec.accelerators.ToString()},
                   {"num_nodes", step.spec.num_nodes},
                   {"priority", step.spec.priority}};
  if (!step.spec.secrets.empty()) event.details["secrets"] = step.spec.secrets;  // names only
  if (!job.pipeline.empty()) {
    if (job.job_group) {
      event.details["job_group"] = Details{{"id", job.pipeline},        {"name", job.pipeline_name},
                                           {"task", job.step + 1},      {"tasks", job.steps},
                                           {"auxiliary", job.auxiliary}, {"termination_delay_seconds", job.termination_delay_seconds}};
    } else {
      event.details["pipeline"] = Details{{"id", job.pipeline}, {"name", job.pipeline_name}, {"step", job.step + 1},
                                          {"steps", job.steps}, {"after", job.after}};
    }
  }
  return event;
}

Result<CheckedSubmission> JobService::Check(const identity::Principal& who, SubmitRequest request) const {
  ASSIGN_OR_RETURN(auto tasks, ParseTaskFile(request.spec_yaml, request.file));
  ASSIGN_OR_RETURN(auto steps, PrepareSteps(who, tasks, request, clock_.Now()));
  CheckedSubmission out;
  for (Step& step : steps) {
    out.warnings.insert(out.warnings.end(), step.warnings.begin(), step.warnings.end());
    out.jobs.push_back(std::move(step.job));
    out.specs.push_back(std::move(step.spec));
  }
  return out;
}

void JobService::Submit(const identity::Principal& who, SubmitRequest request,
                        std::function<void(Result<SubmitResult>)> done) {
  auto tasks = ParseTaskFile(request.spec_yaml, request.file);
  if (!tasks.ok()) return done(tasks.status());
  if (request.idempotency_key.size() > 255) {
    return done(InvalidArgument("Idempotency-Key is longer than 255 characters"));
  }
  // Every step is checked before anything is written: a pipeline is
  // accepted whole or not at all, and a refusal names every step's problems.
  auto steps = PrepareSteps(who, *tasks, request, clock_.Now());
  if (!steps.ok()) return done(steps.status());

  auto result = std::make_shared<SubmitResult>();
  std::vector<AuditEvent> events;
  std::string request_text;  // what makes two requests the same
  for (const Step& step : *steps) {
    result->warnings.insert(result->warnings.end(), step.warnings.begin(), step.warnings.end());
    result->steps.push_back(step.job);
    events.push_back(SubmitEvent(who, step));
    // The same request is the same text with the same inputs; secret
    // values are compared by their MAC, never kept.
    request_text += step.job.spec_yaml + "\n" + step.secrets_mac + "\n";
  }
  result->job = result->steps.front();

  std::string key = std::move(request.idempotency_key);
  const Step& first = steps->front();
  bool plain_request = request.inputs.envs.empty() && steps->size() == 1 && first.secrets_mac.empty();
  std::string request_hash = key.empty()      ? ""
                             : plain_request ? Sha256Hex(first.job.spec_yaml)
                                             : Sha256Hex(request_text + nlohmann::json(request.inputs.envs).dump());
  std::string scope = who.token_id;
  // The job an earlier request with the same key made, if any (a
  // pipeline's first step). Set afresh on every run of the unit (a batch
  // may run it twice).
  auto replayed = std::make_shared<std::optional<JobRecord>>();
  WriteFn work = [result, replayed, events, key, request_hash, scope,
                  also = std::move(request.also)](WriteTx& tx) mutable -> Status {
    const JobRecord& first = result->job;
    replayed->reset();
    if (!key.empty()) {
      ASSIGN_OR_RETURN(auto prior,
                       tx.ClaimIdempotency(IdempotencyRecord{scope, key, request_hash, first.id, first.created_at}));
      if (prior) {
        if (prior->request_hash != request_hash) {
          return Conflict("Idempotency-Key \"" + key + "\" was already used for a different job spec");
        }
        ASSIGN_OR_RETURN(*replayed, tx.GetJob(prior->job_id));
        if (!*replayed) return Internal("idempotency key points at missing job " + prior->job_id);
        return Status::Ok();
      }
    }
    for (size_t i = 0; i < result->steps.size(); ++i) {
      const JobRecord& job = result->steps[i];
      RETURN_IF_ERROR(tx.InsertJob(job));
      std::string message = "submitted by " + scope;
      if (!job.after.empty()) message += "; runs once " + job.after + " (the step before it) has succeeded";
      if (job.job_group) {
        message += "; starts together with the other tasks of job group " + job.pipeline_name + " (" + job.pipeline + ")";
      }
      RETURN_IF_ERROR(tx.AddJobEvent(JobEvent{0, job.id, job.created_at, "submitted", message}));
      RETURN_IF_ERROR(tx.AppendAudit(events[i]));
      RETURN_IF_ERROR(tx.AppendChange(Change{0, Change::Kind::kSubmitted, job.id, "", job.created_at}));
    }
    if (also) RETURN_IF_ERROR(also(tx, result->steps));
    return Status::Ok();
  };
  std::vector<JobSpec> specs;
  for (Step& step : *steps) specs.push_back(std::move(step.spec));
  auto finish = [this, result, replayed, specs = std::move(specs), done](Status st) {
    if (!st.ok()) return done(st);
    if (*replayed) {
      result->job = std::move(**replayed);
      result->steps = {result->job};
      result->created = false;
    }
    // In step order: the engine learns of each step after the one it follows.
    for (size_t i = 0; result->created && hooks_.submitted && i < result->steps.size(); ++i) {
      hooks_.submitted(result->steps[i], specs[i]);
    }
    done(std::move(*result));
  };
  if (Status st = queue_.Enqueue(std::move(work), finish); !st.ok()) done(st);
}

WriteFn CancelJobWrite(const std::string& job_id, const std::string& actor, const std::string& reason, Timestamp now,
                       std::shared_ptr<JobRecord> job, Details details) {
  return [job, job_id, actor, reason, now, details](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto found, tx.GetJob(job_id));
    if (!found) return NotFound("job " + job_id + " not found");
    if (IsTerminal(found->state)) {
      return FailedPrecondition("job " + job_id + " is already " + std::string(JobStateName(found->state)));
    }
    RETURN_IF_ERROR(tx.UpdateJobState(job_id, JobState::kCancelled, now));
    std::string message = "cancelled by " + actor + (reason.empty() ? "" : ": " + reason);
    RETURN_IF_ERROR(tx.AddJobEvent(JobEvent{0, job_id, now, "cancelled", message}));
    AuditEvent event;
    event.time = now;
    event.actor = actor;
    event.action = "job.cancel";
    event.resource = "job/" + job_id;
    event.details = details;
    event.details["from_state"] = JobStateName(found->state);
    event.details["reason"] = reason;
    RETURN_IF_ERROR(tx.AppendAudit(event));
    RETURN_IF_ERROR(tx.AppendChange(Change{0, Change::Kind::kCancelled, job_id, "", now}));
    *job = std::move(*found);
    job->state = JobState::kCancelled;
    job->updated_at = now;
    return Status::Ok();
  };
}

void JobService::Cancel(const identity::Principal& who, const std::string& job_id, std::string reason,
                        std::function<void(Result<Cancellation>)> done) {
  Timestamp now = clock_.Now();
  auto job = std::make_shared<JobRecord>();
  // Read first: whether the job may be cancelled by `who` depends on whose
  // and which team's it is, which never change.
  auto found = store_.GetJob(job_id);
  if (!found.ok()) return done(found.status());
  if (!*found) return done(NotFound("job " + job_id + " not found"));
  if (Status st = MayCancel(who, **found); !st.ok()) return done(st);
  WriteFn work = CancelJobWrite(job_id, who.token_id, reason, now, job);
  CommitQueue::DoneAudited finish = [this, job, done](Committed c) {
    if (!c.status.ok()) return done(c.status);
    if (hooks_.cancelled) hooks_.cancelled(job->id);
    // The unit's last event is its job.cancel.
    done(Cancellation{std::move(*job), c.audit_seqs.empty() ? 0 : c.audit_seqs.back()});
  };
  if (Status st = queue_.Enqueue(std::move(work), std::move(finish)); !st.ok()) done(st);
}

namespace {

Status CheckCheckpointFields(const std::string& path, std::optional<int64_t> step, const std::string& digest) {
  if (path.empty() || path.size() > 2048 || path.find('\n') != std::string::npos) {
    return InvalidArgument("field \"path\" must be a checkpoint location of 1 to 2048 characters, such as "
                           "s3://bucket/run/step-1000 or /checkpoints/run/step-1000");
  }
  if (step && *step < 0) return InvalidArgument("field \"step\" cannot be negative");
  bool hex = digest.size() == 71 && digest.rfind("sha256:", 0) == 0 &&
             std::all_of(digest.begin() + 7, digest.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || (c >= 'a' && c <= 'f'); });
  if (!digest.empty() && !hex) return InvalidArgument("field \"digest\" must be sha256: followed by 64 lower-case hex digits");
  return Status::Ok();
}

}  // namespace

void JobService::RegisterCheckpoint(const identity::Principal& who, const std::string& job_id, std::string path,
                                    std::optional<int64_t> step, std::function<void(Result<Checkpoint>)> done,
                                    std::string digest) {
  if (Status st = CheckCheckpointFields(path, step, digest); !st.ok()) return done(st);
  auto cp = std::make_shared<Checkpoint>();
  cp->job_id = job_id;
  cp->path = std::move(path);
  cp->step = step;
  cp->digest = std::move(digest);
  cp->created_at = clock_.Now();
  std::string actor = who.token_id;
  const Estate& estate = estate_;
  WriteFn work = [cp, actor, &estate](WriteTx& tx) -> Status {
    ASSIGN_OR_RETURN(auto job, tx.GetJob(cp->job_id));
    if (!job) return NotFound("job " + cp->job_id + " not found");
    if (IsTerminal(job->state)) {
      return FailedPrecondition("job " + cp->job_id + " is already " + std::string(JobStateName(job->state)));
    }
    if (std::string why = readiness::ResidencyBreach(estate, *job, cp->path); !why.empty()) {
      return FailedPrecondition(why);
    }
    cp->attempt = job->attempts;
    RETURN_IF_ERROR(tx.AddCheckpoint(*cp));
    AuditEvent e;
    e.time = cp->created_at;
    e.actor = actor;
    e.action = "checkpoint.register";
    e.resource = "job/" + cp->job_id;
    e.details = {{"seq", cp->seq}, {"attempt", cp->attempt}, {"path", cp->path}};
    if (cp->step) e.details["step"] = *cp->step;
    if (!cp->digest.empty()) e.details["digest"] = cp->digest;
    RETURN_IF_ERROR(tx.AppendAudit(e));
    return tx.AppendChange(Change{0, Change::Kind::kCheckpoint, cp->job_id, cp->path, cp->created_at});
  };
  auto finish = [this, cp, done](Status st) {
    if (!st.ok()) return done(st);
    if (hooks_.checkpointed) hooks_.checkpointed(cp->job_id, cp->path);
    done(*cp);
  };
  if (Status st = queue_.Enqueue(std::move(work), finish); !st.ok()) done(st);
}

Result<std::vector<Checkpoint>> JobService::Checkpoints(const std::string& job_id) const {
  ASSIGN_OR_RETURN(auto job, store_.GetJob(job_id));
  if (!job) return NotFound("job " + job_id + " not found");
  return store_.ListCheckpoints(job_id);
}

Result<JobDetail> JobService::Get(const std::string& job_id) const {
  ASSIGN_OR_RETURN(auto job, store_.GetJob(job_id));
  if (!job) return NotFound("job " + job_id + " not found");
  JobDetail detail{std::move(*job), {}, {}};
  ASSIGN_OR_RETURN(detail.attempts, store_.ListAttempts(job_id));
  ASSIGN_OR_RETURN(detail.events, store_.ListJobEvents(job_id));
  return detail;
}

}  // namespace causeway
