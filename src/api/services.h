// The composition root: every service one server runs, built and wired to
// each other in one place. The API's handlers (api_service.h and the
// *_api.cc areas) only translate requests to calls on these and answers
// back; the rules live in the services.
#pragma once

#include <memory>

#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/store.h"
#include "identity/oidc.h"
#include "identity/token_cache.h"
#include "policy/policy.h"
#include "service/audit_service.h"
#include "service/binding_service.h"
#include "service/breakglass_service.h"
#include "service/checkpoint_service.h"
#include "service/dataset_service.h"
#include "service/job_service.h"
#include "service/people_service.h"
#include "service/plan_service.h"
#include "service/provenance_service.h"
#include "service/acceptance_service.h"
#include "service/feed_readers.h"
#include "service/readiness_service.h"
#include "service/scheduler_service.h"
#include "service/scim_service.h"
#include "service/serving_service.h"
#include "service/token_service.h"
#include "service/workload_service.h"
#include "store/commit_queue.h"

namespace causeway::api {

// What the scheduler learns of the job service's changes: submissions,
// cancellations and checkpoints, once durable. None without a scheduler.
JobHooks HooksFor(SchedulerService* scheduler);

class Services {
 public:
  // `scheduler` and `policies` may be null: jobs are then only recorded
  // (no admission rules, nothing scheduled).
  // `clock` runs jobs (the scheduler's, simulated time may run fast);
  // `wall` runs everything a person or another system reads as a date:
  // tokens and grants and their expiry, the directory, break-glass, audit
  // imports and checkpoints, workload tokens.
  Services(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock, const Clock& wall,
           SchedulerService* scheduler, const policy::Chain* policies);
  ~Services();  // routing stops reading the dataset registry
  Services(const Services&) = delete;
  Services& operator=(const Services&) = delete;

  JobService jobs;
  TokenService tokens;
  ScimService scim;
  BindingService bindings;
  PeopleService people;
  BreakglassService breakglass;
  AuditService audit;
  CheckpointService checkpoints;
  // Jobs' signed provenance records, and the facts jobs add to them.
  ProvenanceService provenance;
  // Who reads the audit feed and how far each has delivered.
  FeedReaders feed_readers;
  // The acceptance tests' verdicts, kept in the audit trail.
  AcceptanceService acceptance;
  // Every control per provider, evaluated from what Causeway knows.
  ReadinessService readiness;
  // When a job would likely start: the scheduler run ahead.
  PlanService plans;
  // The dataset registry: versions, replicas, replication with rclone.
  DatasetService datasets;
  // Refreshes attempts' workload tokens once the server has an issuer
  // (workload.SetIssuer); refuses without one.
  WorkloadService workload;
  // Who a bearer is: API tokens (cached), the directory's people, and,
  // when the estate configures an IdP, people signing in with its tokens
  // (null otherwise).
  identity::TokenCache token_cache;
  identity::PersonDirectory directory;
  std::unique_ptr<identity::OidcVerifier> oidc;
  std::unique_ptr<identity::PeopleAuthenticator> people_tokens;
  // Services (model servers behind HAProxy) and their control loop; made
  // by the server, which knows where their proxies keep their files (null:
  // none are run).
  std::unique_ptr<ServingService> serving;

 private:
  SchedulerService* scheduler_;
};

}  // namespace causeway::api
