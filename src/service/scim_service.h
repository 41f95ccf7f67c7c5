// The SCIM 2.0 service provider (RFC 7643/7644) over Causeway's directory:
// users and groups that Okta, Microsoft Entra or any SCIM client provisions.
// Every change is one unit of work with its audit event (scim.user.create,
// scim.user.deactivate, scim.group.update with the members added and
// removed, ...). Errors are SCIM errors (identity/scim/scim_schema.h).
#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "causeway/clock.h"
#include "causeway/store.h"
#include "identity/scim/scim_schema.h"
#include "store/commit_queue.h"

namespace causeway {

// A list request: GET /Users?filter=...&startIndex=1&count=100.
struct ScimListQuery {
  std::string filter;
  int64_t start_index = 1;  // 1-based; below 1 means 1
  int64_t count = 100;      // at most 1000; 0 returns only totalResults
  std::string attributes;   // comma-separated, as in the request
  std::string excluded_attributes;
};

// Who changes the directory and the base URL resources are located under
// (e.g. "https://causeway.example/scim/v2"), for meta.location.
struct ScimCaller {
  std::string actor;
  std::string base;
  // Whether OnPeopleChanged hears of the change (false when the caller
  // carries it through itself).
  bool notify = true;
};

class ScimService {
 public:
  ScimService(const DirectoryReader& store, CommitQueue& queue, const Clock& clock) : store_(store), queue_(queue), clock_(clock) {}

  // Called after each committed change with the userNames of the people
  // whose access it may change (a user changed, joined or left a group).
  using PeopleChanged = std::function<void(const std::vector<std::string>& users, const std::string& actor)>;
  void OnPeopleChanged(PeopleChanged fn) { people_changed_ = std::move(fn); }

  using Json = nlohmann::json;
  using Type = identity::scim::ResourceType;

  // The created resource as a client reads it. 409 uniqueness when the
  // userName (or a group's displayName) is taken, ignoring case.
  Result<Json> Create(const Type& type, const Json& body, const ScimCaller& caller);
  Result<Json> Get(const Type& type, const std::string& id, const std::string& base, const ScimListQuery& projection);
  // `if_match`: an ETag the resource must still have ("" or "*" for any);
  // otherwise kFailedPrecondition (412).
  Result<Json> Replace(const Type& type, const std::string& id, const Json& body, const std::string& if_match,
                       const ScimCaller& caller);
  Result<Json> Patch(const Type& type, const std::string& id, const Json& body, const std::string& if_match,
                     const ScimCaller& caller);
  // Sets the user named `user_name` (any case) inactive, as the IdP does
  // when someone leaves; kNotFound when the directory has no such user.
  Status Deactivate(const std::string& user_name, const ScimCaller& caller);
  // Deleting a user also takes it out of every group.
  Status Delete(const Type& type, const std::string& id, const std::string& if_match, const ScimCaller& caller);
  // A ListResponse: filtered, ordered by creation, paged, projected.
  Result<Json> List(const Type& type, const ScimListQuery& query, const std::string& base);

 private:
  // How a stored resource changes under a request.
  using Change = std::function<Result<Json>(const Json& stored)>;
  Result<Json> Update(const Type& type, const std::string& id, const std::string& if_match, const ScimCaller& caller,
                      const Change& change);

  // The userNames of users `ids` (those still in the directory).
  std::vector<std::string> NamesOf(const std::set<std::string>& ids) const;
  void Changed(std::vector<std::string> users, const std::string& actor) const;

  const DirectoryReader& store_;
  CommitQueue& queue_;
  const Clock& clock_;
  PeopleChanged people_changed_;
};

}  // namespace causeway
