// /v1/audit/...: providers' logs imported, the trail searched across
// providers, one person's actions and rights, and the identity links that
// line a person's accounts up.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "api/api_helpers.h"
#include "api/api_service.h"
#include "identity/access.h"

namespace causeway::api {

using nlohmann::json;

namespace {

json HitsJson(const std::vector<AuditHit>& hits) {
  json out = json::array();
  for (const AuditHit& h : hits) out.push_back(h.event);
  return out;
}

json LinkJson(const IdentityLink& l) {
  return {{"id", l.id}, {"provider", l.provider}, {"identity", l.identity}, {"person", l.person}};
}

// A file that is removed when it goes out of scope.
class TempFile {
 public:
  Status Write(std::string_view data) {
    std::string pattern = (std::filesystem::temp_directory_path() / "causeway-import-XXXXXX").string();
    int fd = ::mkstemp(pattern.data());
    if (fd < 0) return Unavailable("cannot make a temporary file for the import");
    path_ = pattern;
    size_t done = 0;
    while (done < data.size()) {
      ssize_t n = ::write(fd, data.data() + done, data.size() - done);
      if (n <= 0) {
        ::close(fd);
        return Unavailable("cannot write a temporary file for the import");
      }
      done += static_cast<size_t>(n);
    }
    ::close(fd);
    return Status::Ok();
  }
  const std::string& path() const { return path_; }
  ~TempFile() {
    if (!path_.empty()) std::remove(path_.c_str());
  }

 private:
  std::string path_;
};

}  // namespace

void ApiService::AddAuditRoutes() {
  using namespace identity;
  auto bind = [this](void (ApiService::*fn)(HttpRequest&, Reply)) {
    return [this, fn](HttpRequest& req, Reply reply) { (this->*fn)(req, std::move(reply)); };
  };
  Route("POST", "/v1/audit/imports", kScopeAdmin, bind(&ApiService::ImportAuditLog));
  Route("POST", "/v1/audit/checkpoints", kScopeAdmin, bind(&ApiService::CreateCheckpoint));
  Route("GET", "/v1/audit/keys", kScopeAuditRead, bind(&ApiService::AuditKeys));
  Route("GET", "/v1/audit/coverage", kScopeAuditRead, bind(&ApiService::AuditCoverage));
  Route("GET", "/v1/audit/search", kScopeAuditRead, bind(&ApiService::SearchAudit));
  Route("GET", "/v1/audit/people/{user}", kScopeAuditRead, bind(&ApiService::AuditPerson));
  Route("GET", "/v1/audit/links", kScopeAuditRead, bind(&ApiService::ListIdentityLinks));
  Route("POST", "/v1/audit/links", kScopeAdmin, bind(&ApiService::CreateIdentityLink));
  Route("DELETE", "/v1/audit/links/{id}", kScopeAdmin, bind(&ApiService::DeleteIdentityLink));
}

void ApiService::ImportAuditLog(HttpRequest& req, Reply reply) {
  auto source = audit::ParseLogSource(req.Query("source"));
  if (!source.ok()) return reply(ErrorResponse(source.status().WithPrefix("query parameter \"source\"")));
  std::string provider = req.Query("provider");
  if (provider.empty()) return reply(ErrorResponse(InvalidArgument("query parameter \"provider\" is required")));
  if (req.body.empty()) return reply(ErrorResponse(InvalidArgument("the request body is empty: expected the log file")));
  std::string label = req.Query("name").empty() ? "api-upload" : req.Query("name");
  TempFile file;
  if (Status st = file.Write(req.body); !st.ok()) return reply(ErrorResponse(st));
  // An upload may expand at most 100-fold and to 256 MiB (gzip bombs).
  audit::ImportOptions options{provider, *source};
  options.max_bytes = 256ull << 20;
  options.max_ratio = 100;
  auto report = audit_.Import(file.path(), options, label, req.principal->token_id);
  if (!report.ok()) return reply(ErrorResponse(report.status()));
  json issues = json::array();
  for (const auto& i : report->stats.issues) issues.push_back({{"file", label}, {"line", i.line}, {"reason", i.reason}});
  reply(JsonResponse(200, {{"records", report->stats.records}, {"events", report->stats.events},
                           {"stored", report->stored}, {"already_stored", report->already},
                           {"duplicates", report->stats.duplicates}, {"skipped", report->stats.skipped},
                           {"issues", report->stats.issues_total}, {"first_issues", issues}}));
}

void ApiService::CreateCheckpoint(HttpRequest& req, Reply reply) {
  auto made = checkpoints_.Checkpoint(req.principal->token_id);
  if (!made.ok()) return reply(ErrorResponse(made.status()));
  if (!*made) return reply(JsonResponse(200, {{"checkpoint", nullptr}, {"why", "nothing new since the last checkpoint"}}));
  reply(JsonResponse(201, {{"checkpoint", {{"seq", (*made)->seq}, {"signed_seq", (*made)->details["seq"]},
                                           {"hash", (*made)->details["hash"]}, {"kid", (*made)->details["kid"]},
                                           {"jws", (*made)->details["jws"]}}}}));
}

void ApiService::AuditKeys(HttpRequest&, Reply reply) {
  auto keys = checkpoints_.PublicKeys();
  if (!keys.ok()) return reply(ErrorResponse(keys.status()));
  reply(JsonResponse(200, *keys));
}

void ApiService::AuditCoverage(HttpRequest&, Reply reply) {
  auto report = audit_.Coverage(estate_.audit, clock_.Now());
  if (!report.ok()) return reply(ErrorResponse(report.status()));
  for (json& f : breakglass_.CoverageFindings(bindings_.All())) (*report)["findings"].push_back(std::move(f));
  reply(JsonResponse(200, *report));
}

void ApiService::SearchAudit(HttpRequest& req, Reply reply) {
  AuditSearch q;
  q.who = req.Query("actor");
  q.provider = req.Query("provider");
  q.action = req.Query("action");
  q.cursor = req.Query("cursor");
  Timestamp now = clock_.Now();
  auto since = TimeParam(req, "since", now);
  auto until = TimeParam(req, "until", now);
  auto limit = LimitParam(req);
  for (const Status& st : {since.status(), until.status(), limit.status()}) {
    if (!st.ok()) return reply(ErrorResponse(st));
  }
  if (*since) q.since_ms = ToUnixMicros(**since) / 1000;
  if (*until) q.until_ms = ToUnixMicros(**until) / 1000;
  q.limit = *limit;
  auto page = audit_.Search(q);
  if (!page.ok()) return reply(ErrorResponse(page.status()));
  reply(JsonResponse(200, {{"events", HitsJson(page->hits)},
                           {"identities", page->identities},
                           {"next_cursor", page->next_cursor.empty() ? json() : json(page->next_cursor)}}));
}

void ApiService::AuditPerson(HttpRequest& req, Reply reply) {
  auto since = TimeParam(req, "since", clock_.Now());
  if (!since.ok()) return reply(ErrorResponse(since.status()));
  auto limit = QueryInt(req, "limit", 1, 1000, "an integer from 1 to 1000");
  if (!limit.ok()) return reply(ErrorResponse(limit.status()));
  auto report = audit_.Person(req.params["user"], *since ? ToUnixMicros(**since) / 1000 : 0,
                              static_cast<int>(limit->value_or(1000)));
  if (!report.ok()) return reply(ErrorResponse(report.status()));
  // What they could do: the grants their groups' bindings confer now (none
  // once deactivated).
  const json& person = (*report)["person"];
  std::vector<identity::Grant> grants;
  if (person.value("active", false)) {
    grants = identity::GrantsFor(bindings_.Current(), person.value("groups", std::vector<std::string>{}));
  }
  (*report)["grants"] = GrantsJson(grants);
  reply(JsonResponse(200, *report));
}

void ApiService::ListIdentityLinks(HttpRequest&, Reply reply) {
  auto links = audit_.Links();
  if (!links.ok()) return reply(ErrorResponse(links.status()));
  json items = json::array();
  for (const IdentityLink& l : *links) items.push_back(LinkJson(l));
  reply(JsonResponse(200, {{"links", items}}));
}

void ApiService::CreateIdentityLink(HttpRequest& req, Reply reply) {
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return reply(ErrorResponse(body.status()));
  auto link = [&]() -> Result<IdentityLink> {
    ASSIGN_OR_RETURN(std::string provider, body->String("provider"));
    ASSIGN_OR_RETURN(std::string identity, body->String("identity"));
    ASSIGN_OR_RETURN(std::string person, body->String("person"));
    return audit_.Link(provider, identity, person, *req.principal);
  }();
  if (!link.ok()) return reply(ErrorResponse(link.status()));
  reply(JsonResponse(201, {{"link", LinkJson(*link)}}));
}

void ApiService::DeleteIdentityLink(HttpRequest& req, Reply reply) {
  auto link = audit_.Unlink(req.params["id"], req.principal->token_id);
  if (!link.ok()) return reply(ErrorResponse(link.status()));
  reply(JsonResponse(200, {{"deleted", LinkJson(*link)}}));
}

}  // namespace causeway::api
