// /v1/audit/...: providers' logs imported, the trail searched across
// providers, one person's actions and rights, and the identity links that
// line a person's accounts up.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <map>

#include "api/api_helpers.h"
#include "api/audit_api.h"
#include "identity/access.h"
#include "service/export_service.h"
#include "service/reports_json.h"
#include "store/records_json.h"

namespace causeway::api {

using nlohmann::json;

namespace {

// Each token of the store by id: the person it acts for, else its name.
using TokenNames = std::map<std::string, std::string>;

// The OCSF events of `hits`. Causeway's own events name a token actor by
// its id (the trail keeps what was true then); each is also given, as
// actor.user.name, the person the token acts for or the token's name, so a
// reader sees who rather than an id. (Stored events were written by this
// server: nothing to report if one does not parse, it is shown as null.)
json HitsJson(const std::vector<AuditHit>& hits, const TokenNames& names) {
  json out = json::array();
  for (const AuditHit& h : hits) {
    // A stored OCSF event, written by this server and checked when imported: it is returned as
    // stored, with the actor named where it can be.
    json ev = json::parse(h.row.event, nullptr, false);
    if (ev.is_object() && ev.contains("actor") && ev["actor"].is_object() && ev["actor"].contains("user") &&
        ev["actor"]["user"].is_object() && !ev["actor"]["user"].contains("name")) {
      auto it = names.find(ev["actor"]["user"].value("uid", ""));
      if (it != names.end()) ev["actor"]["user"]["name"] = it->second;
    }
    out.push_back(std::move(ev));
  }
  return out;
}

json PersonJson(const PersonTrail& p, const TokenNames& names) {
  json person = {{"userName", p.user_name}};
  if (p.unlinked) person["unlinked"] = true;
  if (p.entry) {
    person["id"] = p.entry->user.id;
    person["active"] = p.entry->user.active;
    person["groups"] = p.entry->groups;
    if (json user = ResourceJson(p.entry->user); user.contains("emails")) person["emails"] = user["emails"];
  }
  json linked = json::array();
  for (const IdentityLink& l : p.links) linked.push_back({{"id", l.id}, {"provider", l.provider}, {"identity", l.identity}});
  json credentials = json::array();
  for (const PersonTrail::Credential& c : p.credentials) {
    credentials.push_back({{"id", c.token.id}, {"name", c.token.name}, {"scopes", c.token.scopes}, {"live", c.live}});
  }
  json by_provider = json::object();
  for (const AuditHit& h : p.events.hits) by_provider[h.row.provider] = by_provider.value(h.row.provider, 0) + 1;
  return {{"person", person},
          {"identities", p.events.identities},
          {"links", linked},
          {"credentials", credentials},
          {"events_by_provider", by_provider},
          {"events", HitsJson(p.events.hits, names)},
          {"next_cursor", p.events.next_cursor}};
}

Result<TokenNames> TokenNamesOf(const Store& store) {
  ASSIGN_OR_RETURN(auto tokens, store.ListTokens());
  TokenNames names;
  for (const TokenRecord& t : tokens) names[t.id] = t.user.empty() ? t.name : t.user;
  return names;
}

json ToJson(const CoverageReport& r) {
  json findings = json::array(), buckets = json::array(), sources = json::array();
  for (const CoverageFinding& f : r.findings) {
    findings.push_back({{"kind", f.kind}, {"provider", f.provider}, {"name", f.name}, {"detail", f.detail}});
  }
  for (const CoverageReport::Bucket& b : r.buckets) {
    buckets.push_back({{"provider", b.provider}, {"name", b.name}, {"state", b.state}, {"why", b.why},
                       {"holds", b.holds.empty() ? json() : json(b.holds)}});
  }
  for (const CoverageReport::Source& s : r.log_sources) {
    json j = {{"provider", s.provider}, {"source", s.source}, {"state", s.state}};
    if (s.max_gap_s) j["max_gap_s"] = *s.max_gap_s;
    if (s.events) j["events"] = *s.events;
    if (s.last_import) j["last_import"] = FormatRfc3339(*s.last_import);
    sources.push_back(std::move(j));
  }
  return {{"findings", findings}, {"buckets", buckets}, {"log_sources", sources}};
}

// order=newest|oldest (the default).
Result<bool> NewestFirst(const HttpRequest& req) {
  std::string order = req.Query("order");
  if (order.empty() || order == "oldest") return false;
  if (order == "newest") return true;
  return InvalidArgument("query parameter \"order\": expected newest or oldest, not \"" + order + "\"");
}

json LinkJson(const IdentityLink& l) {
  return {{"id", l.id}, {"provider", l.provider}, {"identity", l.identity}, {"person", l.person}};
}

}  // namespace

void AuditApi::AddRoutes(RouteTable& routes) {
  using namespace identity;
  routes.Route("GET", "/v1/audit", kScopeAuditRead, Bind(this, &AuditApi::ListAudit));
  routes.Route("GET", "/v1/audit/verify", kScopeAuditRead, Bind(this, &AuditApi::VerifyAudit));
  routes.Route("GET", "/v1/audit/feed", kScopeAuditRead, Bind(this, &AuditApi::ReadAuditFeed));
  routes.Route("POST", "/v1/audit/imports", kScopeAdmin, Bind(this, &AuditApi::ImportAuditLog));
  routes.Route("POST", "/v1/audit/checkpoints", kScopeAdmin, Bind(this, &AuditApi::CreateCheckpoint));
  routes.Route("GET", "/v1/audit/keys", kScopeAuditRead, Bind(this, &AuditApi::AuditKeys));
  routes.Route("GET", "/v1/audit/coverage", kScopeAuditRead, Bind(this, &AuditApi::AuditCoverage));
  routes.Route("GET", "/v1/audit/search", kScopeAuditRead, Bind(this, &AuditApi::SearchAudit));
  routes.Route("GET", "/v1/audit/people/{user}", kScopeAuditRead, Bind(this, &AuditApi::AuditPerson));
  routes.Route("GET", "/v1/audit/links", kScopeAuditRead, Bind(this, &AuditApi::ListIdentityLinks));
  routes.Route("POST", "/v1/audit/links", kScopeAdmin, Bind(this, &AuditApi::CreateIdentityLink));
  routes.Route("DELETE", "/v1/audit/links/{id}", kScopeAdmin, Bind(this, &AuditApi::DeleteIdentityLink));
}

Result<HttpResponse> AuditApi::ImportAuditLog(HttpRequest& req) {
  auto source = audit::ParseLogSource(req.Query("source"));
  if (!source.ok()) return source.status().WithPrefix("query parameter \"source\"");
  std::string provider = req.Query("provider");
  if (provider.empty()) return InvalidArgument("query parameter \"provider\" is required");
  if (req.body.empty()) return InvalidArgument("the request body is empty: expected the log file");
  std::string label = req.Query("name").empty() ? "api-upload" : req.Query("name");
  TempFile file;
  if (Status st = file.Write(req.body); !st.ok()) return st;
  // An upload may expand at most 100-fold and to 256 MiB (gzip bombs).
  audit::ImportOptions options{provider, *source};
  options.name = label;
  options.max_bytes = 256ull << 20;
  options.max_ratio = 100;
  auto report = audit_.Import(file.path(), options, label, req.principal->token_id);
  if (!report.ok()) return report.status();
  json issues = json::array();
  for (const auto& i : report->stats.issues) issues.push_back({{"file", label}, {"line", i.line}, {"reason", i.reason}});
  return JsonResponse(200, {{"records", report->stats.records}, {"events", report->stats.events},
                           {"stored", report->stored}, {"already_stored", report->already},
                           {"duplicates", report->stats.duplicates}, {"conflicts", report->stats.conflicts},
                           {"skipped", report->stats.skipped},
                           {"issues", report->stats.issues_total}, {"first_issues", issues}});
}

Result<HttpResponse> AuditApi::CreateCheckpoint(HttpRequest& req) {
  auto made = checkpoints_.Checkpoint(req.principal->token_id);
  if (!made.ok()) return made.status();
  if (!*made) return JsonResponse(200, {{"checkpoint", nullptr}, {"why", "nothing new since the last checkpoint"}});
  const Details& d = (*made)->details;
  return JsonResponse(201, {{"checkpoint", {{"seq", (*made)->seq}, {"signed_seq", d.Int("seq")}, {"hash", d.String("hash")},
                                           {"kid", d.String("kid")}, {"jws", d.String("jws")}}}});
}

Result<HttpResponse> AuditApi::AuditKeys(HttpRequest&) {
  auto keys = checkpoints_.PublicKeys();
  if (!keys.ok()) return keys.status();
  return JsonResponse(200, *keys);
}

Result<HttpResponse> AuditApi::AuditCoverage(HttpRequest&) {
  auto report = audit_.Coverage(estate_.audit, wall_.Now());
  if (!report.ok()) return report.status();
  for (CoverageFinding& f : breakglass_.CoverageFindings(bindings_.All())) report->findings.push_back(std::move(f));
  return JsonResponse(200, ToJson(*report));
}

Result<HttpResponse> AuditApi::SearchAudit(HttpRequest& req) {
  AuditSearch q;
  q.who = req.Query("actor");
  q.provider = req.Query("provider");
  q.action = req.Query("action");
  q.cursor = req.Query("cursor");
  ASSIGN_OR_RETURN(q.newest_first, NewestFirst(req));
  Timestamp now = wall_.Now();
  auto since = TimeParam(req, "since", now);
  auto until = TimeParam(req, "until", now);
  auto limit = LimitParam(req);
  for (const Status& st : {since.status(), until.status(), limit.status()}) {
    if (!st.ok()) return st;
  }
  if (*since) q.since_ms = ToUnixMicros(**since) / 1000;
  if (*until) q.until_ms = ToUnixMicros(**until) / 1000;
  q.limit = *limit;
  auto page = audit_.Search(q);
  if (!page.ok()) return page.status();
  ASSIGN_OR_RETURN(TokenNames names, TokenNamesOf(store_));
  return JsonResponse(200, {{"events", HitsJson(page->hits, names)},
                           {"identities", page->identities},
                           {"next_cursor", page->next_cursor.empty() ? json() : json(page->next_cursor)}});
}

Result<HttpResponse> AuditApi::AuditPerson(HttpRequest& req) {
  auto since = TimeParam(req, "since", wall_.Now());
  if (!since.ok()) return since.status();
  auto limit = QueryInt(req, "limit", 1, 1000, "an integer from 1 to 1000");
  if (!limit.ok()) return limit.status();
  auto report = audit_.Person(req.params["user"], *since ? ToUnixMicros(**since) / 1000 : 0,
                              static_cast<int>(limit->value_or(1000)));
  if (!report.ok()) return report.status();
  // What they could do: the grants their groups' bindings confer now (none
  // once deactivated).
  std::vector<identity::Grant> grants;
  if (report->entry && report->entry->user.active) grants = identity::GrantsFor(bindings_.Current(), report->entry->groups);
  ASSIGN_OR_RETURN(TokenNames names, TokenNamesOf(store_));
  json out = PersonJson(*report, names);
  out["grants"] = GrantsJson(grants);
  return JsonResponse(200, out);
}

Result<HttpResponse> AuditApi::ListIdentityLinks(HttpRequest&) {
  auto links = audit_.Links();
  if (!links.ok()) return links.status();
  json items = json::array();
  for (const IdentityLink& l : *links) items.push_back(LinkJson(l));
  return JsonResponse(200, {{"links", items}});
}

Result<HttpResponse> AuditApi::CreateIdentityLink(HttpRequest& req) {
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return body.status();
  auto link = [&]() -> Result<IdentityLink> {
    ASSIGN_OR_RETURN(std::string provider, body->String("provider"));
    ASSIGN_OR_RETURN(std::string identity, body->String("identity"));
    ASSIGN_OR_RETURN(std::string person, body->String("person"));
    return audit_.Link(provider, identity, person, *req.principal);
  }();
  if (!link.ok()) return link.status();
  return JsonResponse(201, {{"link", LinkJson(*link)}});
}

Result<HttpResponse> AuditApi::DeleteIdentityLink(HttpRequest& req) {
  auto link = audit_.Unlink(req.params["id"], req.principal->token_id);
  if (!link.ok()) return link.status();
  return JsonResponse(200, {{"deleted", LinkJson(*link)}});
}

Result<HttpResponse> AuditApi::ListAudit(HttpRequest& req) {
  AuditFilter f;
  f.actor = req.Query("actor");
  f.action = req.Query("action");
  f.resource = req.Query("resource");
  auto cursor = QueryInt(req, "cursor", 0, INT64_MAX, "a sequence number");
  if (!cursor.ok()) return cursor.status();
  ASSIGN_OR_RETURN(f.newest_first, NewestFirst(req));
  (f.newest_first ? f.before_seq : f.after_seq) = cursor->value_or(0);
  auto since = TimeParam(req, "since", wall_.Now());
  if (!since.ok()) return since.status();
  f.since = *since;
  auto limit = LimitParam(req);
  if (!limit.ok()) return limit.status();
  f.limit = *limit;
  auto events = store_.ListAudit(f);
  if (!events.ok()) return events.status();
  json items = json::array();
  for (const auto& e : *events) items.push_back(ToJson(e));
  json next = static_cast<int>(events->size()) == *limit ? json(std::to_string(events->back().seq)) : json();
  return JsonResponse(200, {{"events", items}, {"next_cursor", next}});
}

// Verifying reads the whole chain (about a second per million events), and
// a console page asks on every load: a report less than 30 s old is served
// again, with `verified_at` saying when it was made; `fresh=true` reads
// the chain again whatever the age.
Result<HttpResponse> AuditApi::VerifyAudit(HttpRequest& req) {
  const bool fresh = req.Query("fresh") == "true";
  MutexLock lock(verify_mu_);
  const Timestamp now = wall_.Now();
  if (!fresh && verified_ && now - verified_->first < std::chrono::seconds(30)) {
    return JsonResponse(200, verified_->second);
  }
  auto report = VerifyTrail(store_);
  if (!report.ok()) return report.status();
  json body = ToJson(*report);
  body["verified_at"] = FormatRfc3339(now);
  verified_ = {now, body};
  return JsonResponse(200, body);
}

// GET /v1/audit/feed?source=own|imported&after=N&limit=L: the trail as
// OCSF JSON lines, oldest first, for a SIEM forwarder (causeway audit
// export): Causeway's own events after chain position N, or the imported
// ones after id N. X-Causeway-Last says where the page ends (N when empty).
Result<HttpResponse> AuditApi::ReadAuditFeed(HttpRequest& req) {
  const std::string source = req.Query("source");
  if (source != "own" && source != "imported") {
    return InvalidArgument("source: expected own or imported, not \"" + source + "\"");
  }
  ASSIGN_OR_RETURN(auto after, QueryInt(req, "after", 0, INT64_MAX, "a position in the trail"));
  ASSIGN_OR_RETURN(auto limit, QueryInt(req, "limit", 1, 10000, "a page size"));
  auto feed = StoreAuditFeed(store_);
  const int64_t from = after.value_or(0);
  const int size = static_cast<int>(limit.value_or(500));
  ASSIGN_OR_RETURN(AuditFeed::Batch batch, source == "own" ? feed->Own(from, size) : feed->Imported(from, size));
  // An exporter asks for what follows what its sink has taken.
  if (source == "own") feed_readers_.Saw(req.principal->token_id, from, wall_.Now());
  HttpResponse r;
  r.content_type = "application/x-ndjson";
  for (const std::string& e : batch.events) r.body.append(e).append("\n");
  r.headers.emplace_back("X-Causeway-Last", std::to_string(batch.last));
  return r;
}

}  // namespace causeway::api
