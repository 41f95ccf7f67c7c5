// /v1/jobs/...: submission, listing, cancellation, explanation, logs and
// checkpoints; a job is visible to whoever may read its team.
#include <algorithm>

#include <limits>

#include "api/api_helpers.h"
#include "api/jobs_api.h"
#include "api/plan_api.h"
#include "causeway/money.h"
#include "scheduler/explain_json.h"
#include "spec/spec_json.h"
#include "store/records_json.h"

namespace causeway::api {

using nlohmann::json;

namespace {
json WarningsJson(const std::vector<Diagnostic>& warnings) {
  json out = json::array();
  for (const auto& w : warnings) out.push_back(ToJson(w));
  return out;
}
// `envs` / `secrets` of a submission: an object of names to strings (the
// values of --env / --secret). Absent or null: none. Errors never echo a value.
Status VariablesField(const json& v, const char* field, std::map<std::string, std::string>& out) {
  if (v.is_null()) return Status::Ok();
  if (!v.is_object()) {
    return InvalidArgument(std::string("field \"") + field + "\" must be an object of variable names to strings",
                           {Diagnostic{"request body", 0, 0, field, "expected an object of names to strings"}});
  }
  if (v.size() > kMaxSpecInputs) {
    return InvalidArgument(std::string("field \"") + field + "\" has more than " + std::to_string(kMaxSpecInputs) +
                           " variables");
  }
  for (const auto& [name, value] : v.items()) {
    if (!value.is_string()) {
      std::string at = std::string(field) + "." + name;
      return InvalidArgument("field \"" + at + "\" must be a string",
                             {Diagnostic{"request body", 0, 0, at, std::string("expected a string, not ") + value.type_name()}});
    }
    out[name] = value.get<std::string>();
  }
  return Status::Ok();
}

}  // namespace

void JobsApi::AddRoutes(RouteTable& routes) {
  using namespace identity;
  routes.Route("POST", "/v1/jobs", kScopeJobsWrite, Bind(this, &JobsApi::SubmitJob));
  routes.Route("GET", "/v1/jobs", kScopeJobsRead, Bind(this, &JobsApi::ListJobs));
  routes.Route("GET", "/v1/jobs/{id}", kScopeJobsRead, Bind(this, &JobsApi::GetJob), true);
  routes.Route("POST", "/v1/jobs/{id}/cancel", kScopeJobsWrite, Bind(this, &JobsApi::CancelJob));
  routes.Route("GET", "/v1/jobs/{id}/explain", kScopeJobsRead, Bind(this, &JobsApi::ExplainJob));
  routes.Route("POST", "/v1/jobs/{id}/checkpoints", kScopeJobsWrite, Bind(this, &JobsApi::RegisterCheckpoint), true);
  routes.Route("GET", "/v1/jobs/{id}/logs", kScopeJobsRead, Bind(this, &JobsApi::JobLogs));
  routes.Route("GET", "/v1/jobs/{id}/checkpoints", kScopeJobsRead, Bind(this, &JobsApi::ListCheckpoints), true);
}

Result<SubmitRequest> ReadSubmission(HttpRequest& req) {
  SubmitRequest sr;
  sr.idempotency_key = req.Header("idempotency-key");
  std::string ct = ContentType(req);
  if (ct == "application/yaml" || ct == "application/x-yaml" || ct == "text/yaml" || ct == "text/x-yaml") {
    sr.spec_yaml = std::move(req.body);
    if (std::string f = req.Query("file"); !f.empty()) sr.file = f;
    return sr;
  }
  if (!ct.empty() && ct != "application/json") {
    return InvalidArgument("unsupported Content-Type \"" + ct + "\": expected application/json or application/yaml");
  }
  ASSIGN_OR_RETURN(auto body, JsonBody::Parse(req));
  ASSIGN_OR_RETURN(auto file, body.String("file"));
  const json& spec = body.Raw("spec");
  if (spec.is_string()) {
    sr.spec_yaml = spec.get<std::string>();
  } else if (spec.is_object()) {
    sr.spec_yaml = spec.dump();  // JSON is YAML: the same parser reports positions
  } else if (spec.is_null()) {
    return InvalidArgument("field \"spec\" is missing: expected the job spec as a YAML string or a JSON object",
                           {Diagnostic{"request body", 0, 0, "spec", "missing: expected a string or an object"}});
  } else {
    // There, with the wrong type: say which (a number is not "missing").
    std::string got = spec.type_name();
    return InvalidArgument("field \"spec\" is " + got + ": expected the job spec as a YAML string or a JSON object",
                           {Diagnostic{"request body", 0, 0, "spec", "expected a string or an object, not " + got}});
  }
  if (!file.empty()) sr.file = file;
  for (auto [field, into] : {std::pair{"envs", &sr.inputs.envs}, std::pair{"secrets", &sr.inputs.secrets}}) {
    RETURN_IF_ERROR(VariablesField(body.Raw(field), field, *into));
  }
  return sr;
}

void JobsApi::SubmitJob(HttpRequest& req, Reply reply) {
  auto read = ReadSubmission(req);
  if (!read.ok()) return reply(ErrorResponse(read.status()));
  SubmitRequest sr = std::move(*read);
  jobs_.Submit(*req.principal, std::move(sr), [this, reply](Result<SubmitResult> r) {
    if (!r.ok()) return reply(ErrorResponse(r.status()));
    if (r->created) jobs_submitted_.fetch_add(1);
    json body = {{"job", ToJson(r->job)}, {"created", r->created}, {"warnings", WarningsJson(r->warnings)}};
    if (!r->job.pipeline.empty()) {
      // A pipeline: every step made, in order (on a replay, the first).
      json steps = json::array();
      for (const JobRecord& step : r->steps) steps.push_back(ToJson(step));
      body["jobs"] = std::move(steps);
    }
    HttpResponse resp = JsonResponse(r->created ? 201 : 200, body);
    resp.headers.emplace_back("Location", "/v1/jobs/" + r->job.id);
    if (!r->created) resp.headers.emplace_back("Idempotent-Replayed", "true");
    reply(std::move(resp));
  });
}

Result<HttpResponse> JobsApi::ListJobs(HttpRequest& req) {
  JobFilter f;
  if (std::string s = req.Query("state"); !s.empty()) {
    f.state = ParseJobState(s);
    if (!f.state) {
      return InvalidArgument(
          "unknown state \"" + s + "\": expected pending, admitted, running, succeeded, failed or cancelled");
    }
  }
  f.team = req.Query("team");
  f.owner = req.Query("owner");
  // provider=P: jobs with an attempt on one of P's clusters.
  if (std::string provider = req.Query("provider"); !provider.empty()) {
    for (const Cluster& c : estate_.clusters) {
      if (c.provider == provider) f.clusters.push_back(c.name);
    }
    if (f.clusters.empty()) return InvalidArgument("provider \"" + provider + "\": no cluster in the estate is at it");
  }
  // Someone who may read only some teams' jobs lists one of those teams.
  if (std::vector<std::string> teams = req.principal->TeamsFor(identity::kScopeJobsRead); !teams.empty()) {
    std::string list;
    for (const auto& t : teams) list += (list.empty() ? "" : ", ") + t;
    if (f.team.empty() && teams.size() == 1) f.team = teams[0];
    if (f.team.empty()) return InvalidArgument("name a team (team=...): you may list " + list);
    if (std::find(teams.begin(), teams.end(), f.team) == teams.end()) {
      return PermissionDenied("you may list the jobs of " + list + ", not " + f.team);
    }
  }
  f.before_id = req.Query("cursor");
  auto limit = LimitParam(req);
  if (!limit.ok()) return limit.status();
  f.limit = *limit + 1;  // one more, to know whether there is a next page
  auto jobs = jobs_.List(f);
  if (!jobs.ok()) return jobs.status();
  json items = json::array();
  json next = nullptr;
  for (size_t i = 0; i < jobs->size(); ++i) {
    if (static_cast<int>(i) == *limit) {
      next = (*jobs)[i - 1].id;
      break;
    }
    json item = ToJson((*jobs)[i]);
    if ((*jobs)[i].state == JobState::kRunning) {
      ASSIGN_OR_RETURN(auto attempts, store_.ListAttempts((*jobs)[i].id));
      RETURN_IF_ERROR(AddRunningCost(attempts, item));
    }
    items.push_back(std::move(item));
  }
  return JsonResponse(200, {{"jobs", items}, {"next_cursor", next}, {"currency", estate_.currency}});
}

Status JobsApi::AddRunningCost(const std::vector<Attempt>& attempts, json& job) const {
  if (attempts.empty() || attempts.back().state != "running") return Status::Ok();
  // What its running attempt has cost so far, as the queues' spend counts it:
  // the job's list row and its own page show the same figure.
  const Attempt& a = attempts.back();
  int64_t seconds = std::max<int64_t>(0, (ToUnixMicros(clock_.Now()) - ToUnixMicros(a.started_at)) / 1'000'000);
  ASSIGN_OR_RETURN(Money accrued, Money::Scale(Money(a.price_micros, estate_.currency), a.gpus * seconds, 3600));
  job["running_cost_micros"] = accrued.micros();
  job["cost_micros"] = job.value("cost_micros", int64_t{0}) + accrued.micros();
  if (job.contains("attempts") && job["attempts"].is_array() && !job["attempts"].empty()) {
    json& last = job["attempts"].back();
    last["cost_micros"] = last.value("cost_micros", int64_t{0}) + accrued.micros();
  }
  return Status::Ok();
}

Result<JobDetail> VisibleJob(JobService& jobs, HttpRequest& req) {
  ASSIGN_OR_RETURN(JobDetail detail, jobs.Get(req.params["id"]));
  RETURN_IF_ERROR(MayRead(*req.principal, detail.job));
  return detail;
}

Result<json> JobsApi::PipelineOf(const identity::Principal& who, const JobRecord& job) const {
  JobFilter f;
  f.pipeline = job.pipeline;
  f.limit = static_cast<int>(kMaxPipelineSteps);
  ASSIGN_OR_RETURN(auto steps, jobs_.List(f));
  std::sort(steps.begin(), steps.end(), [](const JobRecord& a, const JobRecord& b) { return a.step < b.step; });
  json out = PipelineJson(job);
  out["jobs"] = json::array();
  for (const JobRecord& s : steps) {
    if (!MayRead(who, s).ok()) continue;
    out["jobs"].push_back({{"id", s.id}, {"name", s.name}, {"step", s.step + 1}, {"state", JobStateName(s.state)},
                           {"reason", s.reason}});
    if (s.job_group) out["jobs"].back()["auxiliary"] = s.auxiliary;
  }
  return out;
}

Result<HttpResponse> JobsApi::GetJob(HttpRequest& req) {
  auto detail = VisibleJob(jobs_, req);
  if (!detail.ok()) return detail.status();
  json j = ToJson(detail->job);
  j["spec_yaml"] = detail->job.spec_yaml;
  if (!detail->job.pipeline.empty()) {
    ASSIGN_OR_RETURN(j["pipeline"], PipelineOf(*req.principal, detail->job));
  }
  j["attempts"] = json::array();
  for (const auto& a : detail->attempts) j["attempts"].push_back(ToJson(a));
  RETURN_IF_ERROR(AddRunningCost(detail->attempts, j));
  j["currency"] = estate_.currency;
  j["events"] = json::array();
  for (const auto& e : detail->events) j["events"].push_back(ToJson(e));
  // What moving its data cost (docs/datasets.md): its own lines in `cost job`.
  ASSIGN_OR_RETURN(auto charges, store_.ListDataCharges(detail->job.id, FromUnixMicros(0),
                                                        FromUnixMicros(std::numeric_limits<int64_t>::max())));
  j["data_charges"] = json::array();
  for (const DataCharge& c : charges) {
    j["data_charges"].push_back({{"id", c.id}, {"kind", c.kind}, {"dataset", c.dataset}, {"digest", c.digest},
                                 {"from", c.from_place}, {"to", c.to_place}, {"bytes", c.bytes},
                                 {"amount_micros", c.amount_micros}, {"at", FormatRfc3339(c.at)}});
  }
  return JsonResponse(200, j);
}

void JobsApi::CancelJob(HttpRequest& req, Reply reply) {
  std::string reason;
  if (!req.body.empty()) {
    auto read = JsonBody::Parse(req);
    auto body = read.ok() ? read->String("reason") : Result<std::string>(read.status());
    if (!body.ok()) return reply(ErrorResponse(body.status()));
    reason = std::move(*body);
  }
  jobs_.Cancel(*req.principal, req.params["id"], reason, [reply](Result<Cancellation> r) {
    if (!r.ok()) return reply(ErrorResponse(r.status()));
    reply(JsonResponse(200, {{"job", ToJson(r->job)}}));
  });
}

Result<HttpResponse> JobsApi::ExplainJob(HttpRequest& req) {
  auto detail = VisibleJob(jobs_, req);
  if (!detail.ok()) return detail.status();
  auto live = scheduler_ ? scheduler_->Explain(detail->job.id) : std::nullopt;
  json out = {{"job", detail->job.id},
              {"name", detail->job.name},
              {"team", detail->job.team},
              {"state", JobStateName(detail->job.state)},
              {"reason", detail->job.reason}};
  if (live) out["scheduler"] = scheduler::ToJson(*live);
  // The forecast runs the scheduler ahead (up to 300 ms); ?forecast=false
  // leaves it out for callers that ask /v1/plan/jobs/{id} separately.
  if (live && live->state == "pending" && req.Query("forecast") != "false") {
    out["expected"] = ExpectedStart(plans_, estate_, detail->job.id);
  }
  if (!detail->job.pipeline.empty()) {
    ASSIGN_OR_RETURN(out["pipeline"], PipelineOf(*req.principal, detail->job));
  }
  json attempts = json::array();
  for (const auto& a : detail->attempts) attempts.push_back(ToJson(a));
  out["attempts"] = attempts;
  return JsonResponse(200, out);
}

void JobsApi::RegisterCheckpoint(HttpRequest& req, Reply reply) {
  auto visible = VisibleJob(jobs_, req);
  if (!visible.ok()) return reply(ErrorResponse(visible.status()));
  if (!req.principal->IsJob(visible->job.id) &&
      !req.principal->AllowsTeam(identity::kScopeJobsWrite, visible->job.team)) {
    return reply(ErrorResponse(PermissionDenied(req.principal->Describe() + " may not write to team " +
                                                visible->job.team + "'s jobs")));
  }
  auto body = JsonBody::Parse(req);
  if (!body.ok()) return reply(ErrorResponse(body.status()));
  auto path = body->RequiredString("path", "where the checkpoint was written");
  if (!path.ok()) return reply(ErrorResponse(path.status()));
  auto step = body->Int("step", 0, INT64_MAX);
  if (!step.ok()) return reply(ErrorResponse(step.status()));
  auto digest = body->String("digest");
  if (!digest.ok()) return reply(ErrorResponse(digest.status()));
  // Written through a cached bucket mount, it counts once it is in the
  // bucket (rclone lists it here, off every lock).
  if (auto spec = StoredSpec(visible->job); spec.ok()) {
    if (Status st = datasets_.CheckFlushed(*spec, *path); !st.ok()) return reply(ErrorResponse(st));
  }
  jobs_.RegisterCheckpoint(
      *req.principal, req.params["id"], *path, *step,
      [reply](Result<Checkpoint> r) {
        if (!r.ok()) return reply(ErrorResponse(r.status()));
        reply(JsonResponse(201, {{"checkpoint", ToJson(*r)}}));
      },
      *digest);
}

Result<HttpResponse> JobsApi::JobLogs(HttpRequest& req) {
  if (!scheduler_) return FailedPrecondition("this server runs no scheduler");
  auto detail = VisibleJob(jobs_, req);
  if (!detail.ok()) return detail.status();
  if (detail->attempts.empty()) return NotFound("job " + detail->job.id + " has not started yet");
  auto number = QueryInt(req, "attempt", 1, INT32_MAX, "an attempt number (1, 2, ...)");
  auto offset = QueryInt(req, "offset", 0, INT64_MAX, "a byte offset");
  if (!number.ok()) return number.status();
  if (!offset.ok()) return offset.status();
  const Attempt* attempt = &detail->attempts.back();
  if (*number) {
    auto it = std::find_if(detail->attempts.begin(), detail->attempts.end(),
                           [&](const Attempt& a) { return a.number == **number; });
    if (it == detail->attempts.end()) {
      return NotFound("job " + detail->job.id + " has no attempt " + std::to_string(**number));
    }
    attempt = &*it;
  }
  constexpr int64_t kMax = 1 << 20;
  int64_t from = offset->value_or(0);
  auto text = scheduler_->ReadLog(attempt->cluster, detail->job.id, attempt->number, from, kMax);
  if (!text.ok() && text.status().code() == Code::kNotFound && req.Query("missing") == "empty") {
    // A backend that keeps no output (the simulated estate): with
    // ?missing=empty, no content and the reason in a header, so a page that
    // follows logs does not count a failed request.
    HttpResponse none;
    none.status = 204;
    none.headers.emplace_back("X-Causeway-Logs-Missing", text.status().message());
    return none;
  }
  if (!text.ok()) return text.status();
  HttpResponse r;
  r.content_type = "text/plain; charset=utf-8";
  r.headers.emplace_back("X-Causeway-Attempt", std::to_string(attempt->number));
  r.headers.emplace_back("X-Causeway-Attempt-State", attempt->state);
  r.headers.emplace_back("X-Causeway-Next-Offset", std::to_string(from + static_cast<int64_t>(text->size())));
  r.body = std::move(*text);
  return r;
}

Result<HttpResponse> JobsApi::ListCheckpoints(HttpRequest& req) {
  if (auto visible = VisibleJob(jobs_, req); !visible.ok()) return visible.status();
  auto list = jobs_.Checkpoints(req.params["id"]);
  if (!list.ok()) return list.status();
  json items = json::array();
  for (const auto& c : *list) items.push_back(ToJson(c));
  return JsonResponse(200, {{"checkpoints", items}});
}

}  // namespace causeway::api
