// /v1/audit/...: the trail, its verification, feed, imports, checkpoints,
// keys, coverage, search by person, identity links.
// Built by ApiService with only the services below.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "causeway/clock.h"
#include "causeway/estate.h"
#include "causeway/mutex.h"
#include "causeway/store.h"
#include "service/audit_service.h"
#include "service/binding_service.h"
#include "service/breakglass_service.h"
#include "service/checkpoint_service.h"
#include "service/feed_readers.h"

namespace causeway::api {

class AuditApi final : public Area {
 public:
  AuditApi(Store& store, const Estate& estate, const Clock& wall, BindingService& bindings,
           BreakglassService& breakglass, AuditService& audit, CheckpointService& checkpoints,
           FeedReaders& feed_readers)
      : store_(store), estate_(estate), wall_(wall), bindings_(bindings), breakglass_(breakglass), audit_(audit),
        checkpoints_(checkpoints), feed_readers_(feed_readers) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  // Audit.
  Result<HttpResponse> ListAudit(HttpRequest& req);
  Result<HttpResponse> VerifyAudit(HttpRequest& req);
  Result<HttpResponse> ReadAuditFeed(HttpRequest& req);
  Result<HttpResponse> ImportAuditLog(HttpRequest& req);
  Result<HttpResponse> CreateCheckpoint(HttpRequest& req);
  Result<HttpResponse> AuditKeys(HttpRequest& req);
  Result<HttpResponse> AuditCoverage(HttpRequest& req);
  Result<HttpResponse> SearchAudit(HttpRequest& req);
  Result<HttpResponse> AuditPerson(HttpRequest& req);
  Result<HttpResponse> ListIdentityLinks(HttpRequest& req);
  Result<HttpResponse> CreateIdentityLink(HttpRequest& req);
  Result<HttpResponse> DeleteIdentityLink(HttpRequest& req);

  Store& store_;
  const Estate& estate_;
  const Clock& wall_;
  BindingService& bindings_;
  BreakglassService& breakglass_;
  AuditService& audit_;
  CheckpointService& checkpoints_;
  FeedReaders& feed_readers_;
  // The last verification of the whole trail and when it was made
  // (VerifyAudit). Only verifications take verify_mu_, and they hold it
  // while they read the chain, so that requests arriving meanwhile wait
  // for that one instead of each reading it again.
  Mutex verify_mu_;
  std::optional<std::pair<Timestamp, nlohmann::json>> verified_ GUARDED_BY(verify_mu_);
};

}  // namespace causeway::api
