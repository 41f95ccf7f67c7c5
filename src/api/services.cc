#include "api/services.h"

#include <spdlog/spdlog.h>

namespace causeway::api {

JobHooks HooksFor(SchedulerService* scheduler) {
  if (!scheduler) return {};
  return JobHooks{[scheduler](const JobRecord& job, const JobSpec& spec) { scheduler->OnSubmitted(job, spec); },
                  [scheduler](const std::string& id) { scheduler->OnCancelled(id); },
                  [scheduler](const std::string& id, const std::string& path) { scheduler->OnCheckpoint(id, path); }};
}

Services::Services(Store& store, CommitQueue& queue, const Estate& estate, const Clock& clock, const Clock& wall,
                   SchedulerService* scheduler, const policy::Chain* policies)
    : jobs(store, queue, estate, clock, policies, HooksFor(scheduler)),
      tokens(store, queue, wall),
      scim(store, queue, wall),
      bindings(store, queue, estate, wall, [this](const std::string& grant) { return breakglass.IsActive(grant); }),
      people(store, queue, estate, wall, jobs, [this] { return bindings.Current(); },
             [this](const std::string& id) { token_cache.Forget(id); }),
      breakglass(store, queue, estate, wall, [this](const std::string& id) { token_cache.Forget(id); }),
      audit(store, queue, wall),
      checkpoints(store, queue, wall),
      provenance(store, queue, estate, wall, provenance::Builder{"causeway", CAUSEWAY_VERSION_STRING}),
      acceptance(store, queue, wall),
      readiness(store, queue, estate, wall, audit, acceptance, feed_readers),
      plans(estate, scheduler, jobs, clock),
      datasets(store, queue, estate, wall),
      workload(store, queue, wall),
      scheduler_(scheduler) {
  jobs.SetDataPlaces(&datasets);
  if (scheduler) scheduler->SetDataPlaces(&datasets);
  jobs.SetDatasetCheck([this](JobSpec& spec, const std::string& file, std::vector<Diagnostic>& warnings) {
    return datasets.CheckJob(spec, file, warnings);
  });
  audit.SetClusterNames([this](const std::string& user) { return people.ClusterNames(user); });
  // A directory change that may change someone's access is carried through
  // at once: provider accounts follow, a deactivated person is deprovisioned.
  scim.OnPeopleChanged([this](const std::vector<std::string>& users, const std::string& actor) {
    for (const std::string& user : users) {
      auto report = people.Sync(user, actor);
      if (!report.ok()) {
        spdlog::error("carrying a directory change through for {} failed: {}", user, report.status().ToString());
      } else if (!report->ok) {
        spdlog::warn("carrying a directory change through for {}: some steps failed (audit seq {})", user, report->seq);
      }
    }
  });
  if (estate.identity.oidc) {
    oidc = std::make_unique<identity::OidcVerifier>(*estate.identity.oidc);
    people_tokens =
        std::make_unique<identity::PeopleAuthenticator>(*oidc, directory, [this] { return bindings.Current(); });
  }
}

Services::~Services() {
  if (scheduler_) scheduler_->SetDataPlaces(nullptr);
}

}  // namespace causeway::api
