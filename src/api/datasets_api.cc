// The dataset registry over HTTP (docs/datasets.md). Reading the registry
// needs jobs:read (people reference datasets in their jobs); registering,
// verifying and replicating need datasets:write (platform engineers).
//
//   GET  /v1/datasets                      every dataset the estate declares, with its versions
//   GET  /v1/datasets/{ref}                a version (NAME@VERSION, NAME@sha256:…, NAME) and its replicas
//   GET  /v1/datasets/{ref}/versions       the versions of its dataset
//   GET  /v1/datasets/{ref}/manifest       the manifest's canonical text
//   POST /v1/datasets                      register {name, version, from | manifest, hash}
//   POST /v1/datasets/{ref}/verify         {location}
//   POST /v1/datasets/{ref}/replicate      {to, bwlimit, attempts}: 202, the replication running
//   GET  /v1/replications/{id}             a replication's progress and outcome
#include "api/api_helpers.h"
#include "api/datasets_api.h"

namespace causeway::api {

using nlohmann::json;

namespace {

json VersionJson(const DatasetVersion& v) {
  return {{"dataset", v.dataset},     {"version", v.version}, {"digest", v.digest},
          {"source", v.source},       {"hash", v.hash_type},  {"objects", v.objects},
          {"bytes", v.bytes},         {"registered_by", v.registered_by},
          {"registered_at", FormatRfc3339(v.registered_at)}};
}

// `bytes`: the version's, priced at the location's storage price.
json ReplicaJson(const DatasetReplica& r, const Estate& estate, int64_t bytes) {
  json out = {{"location", r.location}, {"path", r.path},     {"state", r.state},
              {"bytes_moved", r.bytes_moved}, {"detail", r.detail},
              {"verified_at", r.verified_at ? json(FormatRfc3339(*r.verified_at)) : json(nullptr)},
              {"updated_at", FormatRfc3339(r.updated_at)}, {"counts", r.state == "verified"}};
  if (const StorageLocation* l = estate.data.FindLocation(r.location)) {
    out["place"] = l->Location();
    out["zone"] = l->zone;
    // How jobs name it (file_mounts), where the location has a url.
    if (!l->url.empty()) out["url"] = l->url + (r.path.empty() ? "" : "/" + r.path);
    // What keeping it costs its owner (a month of 730 hours), charged by the
    // day from its first verification up to storage_charged_until.
    if (auto month = l->StorageCost(bytes, std::chrono::hours(730))) out["storage_per_month"] = month->ToString();
  }
  out["storage_charged_until"] = r.charged_until ? json(FormatRfc3339(*r.charged_until)) : json(nullptr);
  return out;
}

json ReplicationJson(const Replication& r) {
  return {{"id", r.id},
          {"dataset", r.dataset},
          {"version", r.version},
          {"digest", r.digest},
          {"from", r.from},
          {"to", r.to},
          {"state", r.state},
          {"progress",
           {{"bytes", r.progress.bytes},
            {"total_bytes", r.progress.total_bytes},
            {"transfers", r.progress.transfers},
            {"total_transfers", r.progress.total_transfers},
            {"checks", r.progress.checks},
            {"errors", r.progress.errors},
            {"speed", r.progress.speed},
            {"run", r.progress.run}}},
          {"bytes_moved", r.bytes_moved},
          {"runs", r.runs},
          {"errors", r.errors},
          {"detail", r.detail},
          {"started_at", FormatRfc3339(r.started_at)},
          {"finished_at", r.finished_at ? json(FormatRfc3339(*r.finished_at)) : json(nullptr)},
          {"transfer_cost", r.transfer_cost ? json(r.transfer_cost->ToString()) : json(nullptr)}};
}

}  // namespace

void DatasetsApi::AddRoutes(RouteTable& routes) {
  routes.Route("GET", "/v1/datasets", identity::kScopeJobsRead, Bind(this, &DatasetsApi::ListDatasets));
  routes.Route("POST", "/v1/datasets", identity::kScopeDatasetsWrite, Bind(this, &DatasetsApi::RegisterDataset));
  routes.Route("GET", "/v1/datasets/{ref}", identity::kScopeJobsRead, Bind(this, &DatasetsApi::ShowDataset));
  routes.Route("GET", "/v1/datasets/{ref}/versions", identity::kScopeJobsRead, Bind(this, &DatasetsApi::DatasetVersions));
  routes.Route("GET", "/v1/datasets/{ref}/manifest", identity::kScopeJobsRead, Bind(this, &DatasetsApi::DatasetManifest));
  routes.Route("POST", "/v1/datasets/{ref}/verify", identity::kScopeDatasetsWrite, Bind(this, &DatasetsApi::VerifyDataset));
  routes.Route("POST", "/v1/datasets/{ref}/replicate", identity::kScopeDatasetsWrite, Bind(this, &DatasetsApi::ReplicateDataset));
  routes.Route("GET", "/v1/replications/{id}", identity::kScopeJobsRead, Bind(this, &DatasetsApi::GetReplication));
}

Result<HttpResponse> DatasetsApi::ListDatasets(HttpRequest&) {
  ASSIGN_OR_RETURN(auto versions, datasets_.Versions(""));
  ASSIGN_OR_RETURN(auto replicas, datasets_.Replicas(""));
  json out = json::array();
  for (const Dataset& d : estate_.datasets) {
    json item = {{"name", d.name}, {"owner", d.owner}, {"residency", d.residency}, {"versions", 0},
                 {"latest", nullptr}, {"verified_at", json::array()}};
    int count = 0;
    const DatasetVersion* latest = nullptr;
    for (const DatasetVersion& v : versions) {
      if (v.dataset != d.name) continue;
      ++count;
      latest = &v;
    }
    item["versions"] = count;
    if (latest) {
      item["latest"] = VersionJson(*latest);
      for (const DatasetReplica& r : replicas) {
        if (r.digest == latest->digest && r.state == "verified") item["verified_at"].push_back(r.location);
      }
    }
    out.push_back(std::move(item));
  }
  return JsonResponse(200, {{"datasets", out}});
}

Result<HttpResponse> DatasetsApi::DatasetVersions(HttpRequest& req) {
  ASSIGN_OR_RETURN(DatasetRef ref, DatasetService::ParseRef(req.params["ref"]));
  if (!estate_.FindDataset(ref.name)) return NotFound("the estate declares no dataset \"" + ref.name + "\"");
  ASSIGN_OR_RETURN(auto versions, datasets_.Versions(ref.name));
  ASSIGN_OR_RETURN(auto replicas, datasets_.Replicas(""));
  json out = json::array();
  for (const DatasetVersion& v : versions) {
    json item = VersionJson(v);
    int verified = 0;
    for (const DatasetReplica& r : replicas) verified += r.digest == v.digest && r.state == "verified";
    item["verified_replicas"] = verified;
    out.push_back(std::move(item));
  }
  return JsonResponse(200, {{"dataset", ref.name}, {"versions", out}});
}

Result<HttpResponse> DatasetsApi::ShowDataset(HttpRequest& req) {
  ASSIGN_OR_RETURN(DatasetRef ref, DatasetService::ParseRef(req.params["ref"]));
  ASSIGN_OR_RETURN(DatasetVersion v, datasets_.Resolve(ref));
  ASSIGN_OR_RETURN(auto replicas, datasets_.Replicas(v.digest));
  json reps = json::array();
  for (const DatasetReplica& r : replicas) reps.push_back(ReplicaJson(r, estate_, v.bytes));
  json out = VersionJson(v);
  out["replicas"] = reps;
  if (const Dataset* d = estate_.FindDataset(v.dataset)) {
    out["owner"] = d->owner;
    out["residency"] = d->residency;
  }
  return JsonResponse(200, out);
}

Result<HttpResponse> DatasetsApi::DatasetManifest(HttpRequest& req) {
  ASSIGN_OR_RETURN(DatasetRef ref, DatasetService::ParseRef(req.params["ref"]));
  ASSIGN_OR_RETURN(DatasetVersion v, datasets_.Resolve(ref));
  ASSIGN_OR_RETURN(std::string text, datasets_.Manifest(v.digest));
  HttpResponse r;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(text);
  return r;
}

Result<HttpResponse> DatasetsApi::RegisterDataset(HttpRequest& req) {
  ASSIGN_OR_RETURN(JsonBody body, JsonBody::Parse(req));
  causeway::RegisterDataset r;
  ASSIGN_OR_RETURN(r.name, body.RequiredString("name", "a dataset the estate declares"));
  ASSIGN_OR_RETURN(r.version, body.String("version"));
  ASSIGN_OR_RETURN(r.from, body.String("from"));
  ASSIGN_OR_RETURN(r.manifest, body.String("manifest"));
  ASSIGN_OR_RETURN(r.hash_type, body.String("hash", "md5"));
  ASSIGN_OR_RETURN(DatasetVersion v, datasets_.Register(*req.principal, r));
  return JsonResponse(201, VersionJson(v));
}

Result<HttpResponse> DatasetsApi::VerifyDataset(HttpRequest& req) {
  ASSIGN_OR_RETURN(DatasetRef ref, DatasetService::ParseRef(req.params["ref"]));
  ASSIGN_OR_RETURN(JsonBody body, JsonBody::Parse(req));
  ASSIGN_OR_RETURN(std::string location, body.RequiredString("location", "a storage location's name"));
  ASSIGN_OR_RETURN(DatasetReplica r, datasets_.Verify(*req.principal, ref, location));
  ASSIGN_OR_RETURN(DatasetVersion v, datasets_.Resolve(ref));
  return JsonResponse(200, ReplicaJson(r, estate_, v.bytes));
}

Result<HttpResponse> DatasetsApi::ReplicateDataset(HttpRequest& req) {
  ASSIGN_OR_RETURN(DatasetRef ref, DatasetService::ParseRef(req.params["ref"]));
  ASSIGN_OR_RETURN(JsonBody body, JsonBody::Parse(req));
  ASSIGN_OR_RETURN(std::string to, body.RequiredString("to", "a storage location's name"));
  ReplicationOptions o;
  ASSIGN_OR_RETURN(o.bwlimit, body.String("bwlimit"));
  ASSIGN_OR_RETURN(auto attempts, body.Int("attempts", 1, 10));
  if (attempts) o.attempts = static_cast<int>(*attempts);
  ASSIGN_OR_RETURN(auto backoff_ms, body.Int("backoff_ms", 0, 600'000));
  if (backoff_ms) o.backoff = std::chrono::milliseconds(*backoff_ms);
  ASSIGN_OR_RETURN(Replication r, datasets_.Replicate(*req.principal, ref, to, o));
  return JsonResponse(202, ReplicationJson(r));
}

Result<HttpResponse> DatasetsApi::GetReplication(HttpRequest& req) {
  ASSIGN_OR_RETURN(Replication r, datasets_.GetReplication(req.params["id"]));
  return JsonResponse(200, ReplicationJson(r));
}

}  // namespace causeway::api
