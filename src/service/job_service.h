// The job application service: validates submissions, writes them with their
// audit events through the commit queue, and answers reads. The HTTP layer
// calls it; it knows nothing about HTTP.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/job_spec.h"
#include "causeway/records.h"
#include "causeway/store.h"
#include "identity/secret_box.h"
#include "identity/tokens.h"
#include "placement/router.h"
#include "policy/policy.h"
#include "store/commit_queue.h"

namespace causeway {

struct SubmitRequest {
  std::string spec_yaml;
  std::string file = "spec.yaml";  // names the spec in diagnostics
  std::string idempotency_key;     // optional; scoped to the submitting token
  SpecInputs inputs;               // --env / --secret values, over the file's
  // For a caller that makes jobs itself (a service's replicas): `amend`
  // changes each step's spec once the file is read and before it is
  // checked (where it runs, its environment, its labels); `also` writes in
  // the same unit as the jobs, so that what records them (the service's
  // list of replicas) is never without them, nor they without it.
  std::function<void(JobSpec&)> amend;
  std::function<Status(WriteTx&, const std::vector<JobRecord>&)> also;
};

struct SubmitResult {
  JobRecord job;  // a pipeline's first step
  // Every job made, in step order: the job alone, or a pipeline's steps (on
  // a replay, only the first).
  std::vector<JobRecord> steps;
  bool created = true;  // false when an earlier request with the same key made it
  std::vector<Diagnostic> warnings;
};

// What a submission would make, checked and not written (JobService::Check).
struct CheckedSubmission {
  std::vector<JobRecord> jobs;  // in step order
  std::vector<JobSpec> specs;   // one per job, as the scheduler would get it
  std::vector<Diagnostic> warnings;
};

// A job cancelled, and the number of the `job.cancel` event that says so.
struct Cancellation {
  JobRecord job;
  int64_t audit_seq = 0;
};

struct JobDetail {
  JobRecord job;
  std::vector<Attempt> attempts;
  std::vector<JobEvent> events;
};

// Called once a submission or cancellation is durable, from the commit
// thread: must not block or wait for a commit.
struct JobHooks {
  std::function<void(const JobRecord&, const JobSpec&)> submitted;
  std::function<void(const std::string& job_id)> cancelled;
  std::function<void(const std::string& job_id, const std::string& path)> checkpointed;
};

// The writes of cancelling a job that has not finished, by `actor`: its
// state, a job event and a `job.cancel` audit event (with `details` added).
// kNotFound, or kFailedPrecondition for a finished job. On success `*job`
// holds the job as cancelled.
WriteFn CancelJobWrite(const std::string& job_id, const std::string& actor, const std::string& reason, Timestamp now,
                       std::shared_ptr<JobRecord> job, Details details = {});

// Whether `who` may see `job` (kNotFound when not: another team's jobs are
// not even confirmed to exist), and cancel it: their own with jobs:write,
// anyone's in a team where they hold jobs:manage.
Status MayRead(const identity::Principal& who, const JobRecord& job);
Status MayCancel(const identity::Principal& who, const JobRecord& job);

class JobService {
 public:
  // `policies` may be null (no admission rules).
  JobService(const JobReader& store, CommitQueue& queue, const Estate& estate, const Clock& clock,
             const policy::Chain* policies = nullptr, JobHooks hooks = {})
      : store_(store),
        queue_(queue),
        estate_(estate),
        clock_(clock),
        policies_(policies),
        hooks_(std::move(hooks)),
        router_(estate) {}

  // Validates the spec, checks it against the estate and the admission
  // policies (which may amend it), and queues the job; a pipeline's steps
  // are checked and written together, each to run after the one before. `done` is called exactly once:
  // inline for a validation error, else from the commit thread once the job
  // is durable. Reusing an idempotency key with a different spec is kConflict.
  void Submit(const identity::Principal& who, SubmitRequest request,
              std::function<void(Result<SubmitResult>)> done);

  // Checks `request` exactly as Submit does, as `who`, and writes nothing:
  // the jobs it would make (`causeway plan job`).
  Result<CheckedSubmission> Check(const identity::Principal& who, SubmitRequest request) const;

  // Where jobs' secrets are sealed. Without one (unset, or null) a job with
  // secrets is refused. Set before the first submission.
  void SetSecretBox(const identity::SecretBox* box) { secrets_ = box; }

  // Checks a job's datasets against the registry (DatasetService::CheckJob)
  // and records the digest each reference resolves to; without one, only
  // the estate's names are checked. Set before the first submission.
  using DatasetCheck = std::function<Status(JobSpec& spec, const std::string& file, std::vector<Diagnostic>& warnings)>;
  void SetDatasetCheck(DatasetCheck check) { dataset_check_ = std::move(check); }
  // Where registered dataset versions are verified, so that a job that
  // must run by its data is refused when no cluster is near it.
  void SetDataPlaces(const placement::DataPlaces* places) { router_.SetDataPlaces(places); }

  // Cancels a job that has not finished. kNotFound, or kFailedPrecondition
  // for a finished job. `done` is called exactly once.
  void Cancel(const identity::Principal& who, const std::string& job_id, std::string reason,
              std::function<void(Result<Cancellation>)> done);

  // Records a checkpoint of a job that has not finished; its next attempt
  // resumes from the latest one. `digest` ("sha256:<64 hex>", or "") makes
  // it an output of the job's provenance record. `done` is called exactly
  // once.
  void RegisterCheckpoint(const identity::Principal& who, const std::string& job_id, std::string path,
                          std::optional<int64_t> step, std::function<void(Result<Checkpoint>)> done,
                          std::string digest = "");
  Result<std::vector<Checkpoint>> Checkpoints(const std::string& job_id) const;

  Result<JobDetail> Get(const std::string& job_id) const;
  Result<std::vector<JobRecord>> List(const JobFilter& filter) const { return store_.ListJobs(filter); }

 private:
  // One job of a submission, checked and ready to write.
  struct Step {
    JobRecord job;
    JobSpec spec;
    std::vector<Diagnostic> warnings;
    std::string secrets_mac;  // of its secret values, for idempotency; "" when none
  };
  // Applies the request's inputs to one step and checks it as `who` may
  // submit it: the job made of it, or why not.
  Result<Step> PrepareStep(const identity::Principal& who, TaskFile::Step& task, const SubmitRequest& request,
                           Timestamp now) const;
  // Every step of `tasks` prepared, linked into a pipeline when it is one;
  // or every step's problems at once.
  Result<std::vector<Step>> PrepareSteps(const identity::Principal& who, TaskFile& tasks, const SubmitRequest& request,
                                         Timestamp now) const;
  // The `job.submit` event of one step: what was asked for, secrets by name.
  static AuditEvent SubmitEvent(const identity::Principal& who, const Step& step);

  const JobReader& store_;
  CommitQueue& queue_;
  const Estate& estate_;
  const Clock& clock_;
  const policy::Chain* policies_;
  JobHooks hooks_;
  placement::Router router_;  // to refuse jobs no cluster could ever run
  DatasetCheck dataset_check_;
  const identity::SecretBox* secrets_ = nullptr;
};

}  // namespace causeway
