// `causeway acceptance recovery` and `causeway acceptance residency`: run a
// real job through the live system and take its provider down (the outage
// drill, POST /v1/providers/P/outage), then prove what must hold:
//   recovery: the job resumes on another provider from its latest
//     checkpoint within the estate's recovery objective, and the owner of
//     the next action is named;
//   residency: a job bound to a zone runs, keeps its logs and checkpoints
//     only there, a checkpoint outside the zone is refused, and with its
//     provider down it is never resumed outside the zone.
// Whatever step a test stops at, the outage is ended and the job cancelled.
#include <map>
#include <set>

#include "causeway/crypto.h"
#include "causeway/text.h"
#include "cli/acceptance_kit.h"
#include "net/http_client.h"

namespace causeway::cli::acceptance {

namespace {

// What the test made, taken away at the end whatever happened.
struct Made {
  Session& admin;
  std::string job, down;
  ~Made() {
    if (!down.empty()) admin.Do("POST", "/v1/providers/" + down + "/outage", {{"down", false}});
    if (!job.empty()) admin.Do("POST", "/v1/jobs/" + job + "/cancel", {{"reason", "acceptance test cleanup"}});
  }
};

// Submits `spec` and waits for its first attempt to run; the job's id and
// that attempt (empty on failure, with `step` failed and why).
std::pair<std::string, json> SubmitAndRun(Session& admin, const std::string& spec, int timeout_s, Step& step) {
  auto job = admin.Do("POST", "/v1/jobs", {{"spec", spec}});
  if (job.status != 201) {
    step.detail = ErrorOf(job);
    return {};
  }
  std::string id = job.body["job"]["id"];
  json attempt;
  std::string state;
  auto ran = TimeUntil(
      [&] {
        auto j = admin.Do("GET", "/v1/jobs/" + id);
        state = j.body.value("state", "");
        if (state == "running" && j.body.contains("attempts") && !j.body["attempts"].empty()) {
          attempt = j.body["attempts"].back();
          return true;
        }
        return false;
      },
      std::chrono::seconds(timeout_s));
  if (!ran) {
    step.detail = "job " + id + " is still " + state + " after " + std::to_string(timeout_s) + " s";
    return {id, json()};
  }
  step.ok = true;
  step.evidence = Evidence(admin, "job/" + id, "job.");
  return {id, attempt};
}

// Why a job is not running where it should: the scheduler's own words.
std::string WhyPending(Session& admin, const std::string& job) {
  auto e = admin.Do("GET", "/v1/jobs/" + job + "/explain");
  if (e.status != 200) return ErrorOf(e);
  std::string out = e.body.value("waiting", "");
  for (const json& c : e.body["candidates"]) {
    if (!c.value("eligible", true) && out.size() < 600) {
      out += (out.empty() ? "" : "; ") + c.value("cluster", "") + ": " + c.value("reason", "");
    }
  }
  return out.empty() ? "the job is " + e.body.value("state", "unknown") : out;
}

// A long-running job of the test in `team` that asks for one GPU of any
// type the estate has, with `extra` spec lines (residency, checkpoint).
std::string TestJobSpec(const std::string& name, const EstateView& estate, const std::string& team,
                        const std::string& extra) {
  return "name: acceptance-" + name + "\nresources: {accelerators: " + estate.any_gpu + "}\nlabels: {team: " + team +
         ", owner: causeway-acceptance}\n" + extra + "run: sleep 3600\nsim: {duration: 2h}\n";
}

// Where the recovery test's job checkpoints: under storage the estate
// declares (clusters[].storage) in the zone the job would be bound to (the
// server's plan of `spec` says which, policies applied), preferring an
// object store that clusters of more than one provider reach, so the job can
// resume on another provider. A job bound to no zone in an estate that
// declares no storage checkpoints to an object store of the test's own.
// kFailedPrecondition when the zone has no storage: nothing there could
// hold a checkpoint the job may keep.
Result<std::string> CheckpointStorage(Session& admin, const EstateView& estate, const std::string& spec,
                                      const std::string& tag) {
  auto plan = admin.Do("POST", "/v1/plan/job", {{"spec", spec}});
  if (plan.status != 200) return FailedPrecondition("planning the test's job: " + ErrorOf(plan));
  std::string zone;
  if (plan.body.contains("jobs") && !plan.body["jobs"].empty() && plan.body["jobs"][0]["residency"].is_string()) {
    zone = plan.body["jobs"][0]["residency"].get<std::string>();
  }
  // Each declared prefix, with the providers whose clusters reach it.
  std::map<std::string, std::set<std::string>> reach;
  for (const auto& [name, c] : estate.clusters) {
    if (!zone.empty() && c.zone != zone) continue;
    for (const std::string& prefix : c.storage) reach[prefix].insert(c.provider);
  }
  std::string best;
  int best_score = -1;
  for (const auto& [prefix, providers] : reach) {
    int score = (prefix.find("://") != std::string::npos ? 2 : 0) + (providers.size() > 1 ? 1 : 0);
    if (score > best_score) {
      best = prefix;
      best_score = score;
    }
  }
  if (!best.empty()) return best + (best.back() == '/' ? "" : "/") + "acceptance-" + tag + "/";
  if (!zone.empty()) {
    return FailedPrecondition("this estate declares no storage in zone " + zone + ", where the test's job is bound: declare the storage its clusters reach " +
                              "(clusters[].storage), or give --checkpoint-path");
  }
  return "s3://causeway-acceptance/" + tag + "/";
}

// Declares `provider` down (the outage drill), to be ended by `made`.
bool TakeDown(Session& admin, const std::string& provider, Made& made, Step& step) {
  auto down = admin.Do("POST", "/v1/providers/" + provider + "/outage", {{"down", true}});
  if (down.status != 200) {
    step.detail = ErrorOf(down);
    return false;
  }
  made.down = provider;
  step.detail = "outage declared";
  return true;
}

// Waits up to `timeout_s` for a later attempt of `job` running on a cluster
// of another provider than `lost`; that attempt (null when none came).
json WaitResumedElsewhere(Session& admin, EstateView& estate, const std::string& job, const std::string& lost,
                          int timeout_s, Step& step) {
  json resumed;
  step.ms = TimeUntil(
      [&] {
        auto j = admin.Do("GET", "/v1/jobs/" + job);
        if (j.status != 200 || !j.body.contains("attempts")) return false;
        for (const json& a : j.body["attempts"]) {
          bool elsewhere = estate.clusters[a.value("cluster", "")].provider != lost;
          if (a.value("number", 0) > 1 && a.value("state", "") == "running" && elsewhere) {
            resumed = a;
            return true;
          }
        }
        return false;
      },
      std::chrono::seconds(timeout_s));
  step.evidence = Evidence(admin, "job/" + job, "job.");
  return resumed;
}

// Who acts next when `provider` is lost: the owner of restore-rehearsal
// there, as the readiness report names it (null when no one is named).
json NextActionOwner(Session& admin, const std::string& provider, Step& step) {
  auto r = admin.Do("GET", "/v1/readiness?provider=" + net::UrlEncode(provider));
  json owner;
  if (r.status == 200) {
    for (const json& f : r.body["findings"]) {
      if (f.value("control", "") == "restore-rehearsal") owner = f["owner"];
    }
  }
  step.ok = owner.is_object();
  step.detail = step.ok ? "restore-rehearsal is owned by " + (owner.contains("group") ? "group " + owner.value("group", "")
                                                                                       : owner.value("user", ""))
                : r.status == 200 ? "no one owns restore-rehearsal at " + provider + " (readiness.owners)"
                                  : ErrorOf(r);
  return owner;
}

}  // namespace

// Like the identity test, each runner reads top to bottom as its report
// does, each step using what the ones before made.
json RunRecovery(const Globals& g, const Options& o, Steps& steps) {
  Session admin(g, AdminToken(g));
  EstateView estate = ReadEstate(admin);
  std::string tag = Tag();
  Step& s1 = AddStep(steps, "run a checkpointing job in team " + o.team);
  std::string path = o.checkpoint_path;
  if (path.empty()) {
    auto where = CheckpointStorage(admin, estate, TestJobSpec("recovery-" + tag, estate, o.team, ""), tag);
    if (!where.ok()) {
      s1.detail = where.status().message();
      return json{{"team", o.team}};
    }
    path = *where;
  }
  if (path.back() != '/') path += '/';
  std::string checkpoint = path + "step-100";
  auto runs = admin.Do("GET", "/v1/acceptance/runs");
  std::optional<int64_t> objective_ms;
  if (runs.status == 200 && runs.body["recovery_objective_ms"].is_number_integer()) {
    objective_ms = runs.body["recovery_objective_ms"].get<int64_t>();
  }
  json subject = {{"team", o.team}, {"checkpoint", checkpoint}};
  if (objective_ms) subject["objective_ms"] = *objective_ms;
  Made made{admin, "", ""};

  std::string spec = TestJobSpec("recovery-" + tag, estate, o.team, "checkpoint: {path: " + path + "}\n");
  auto [job, attempt] = SubmitAndRun(admin, spec, o.job_timeout_s, s1);
  made.job = job;
  subject["job"] = job;
  if (!s1.ok) return subject;
  std::string cluster = attempt.value("cluster", "");
  std::string provider = estate.clusters[cluster].provider;
  subject["provider"] = provider;
  s1.detail = "job " + job + " runs on " + cluster + " (" + provider + ")";

  Step& s2 = AddStep(steps, "register its latest checkpoint");
  auto cp = admin.Do("POST", "/v1/jobs/" + job + "/checkpoints", {{"path", checkpoint}, {"step", 100}});
  s2.ok = cp.status == 201;
  s2.detail = s2.ok ? checkpoint : ErrorOf(cp);
  s2.evidence = Evidence(admin, "job/" + job, "checkpoint.register");
  if (!s2.ok) return subject;

  Step& s3 = AddStep(steps, "take " + provider + " down");
  s3.ok = TakeDown(admin, provider, made, s3);
  if (!s3.ok) return subject;

  std::string objective = objective_ms ? std::to_string(*objective_ms / 1000) + " s" : "no objective";
  Step& s4 = AddStep(steps, "it resumes on another provider from " + checkpoint + " within the objective (" +
                                objective + ")");
  int timeout_s = o.recovery_timeout_s > 0 ? o.recovery_timeout_s
                  : objective_ms          ? static_cast<int>(*objective_ms / 1000) + 1
                                          : 120;
  json resumed = WaitResumedElsewhere(admin, estate, job, provider, timeout_s, s4);
  if (!s4.ms) {
    s4.detail = "not resumed after " + std::to_string(timeout_s) + " s: " + WhyPending(admin, job);
    return subject;
  }
  subject["recovery_ms"] = *s4.ms;
  std::string from = resumed.value("resumed_from", "");
  bool within = !objective_ms || *s4.ms <= *objective_ms;
  s4.ok = from == checkpoint && within && objective_ms.has_value();
  s4.detail = "attempt " + std::to_string(resumed.value("number", 0)) + " on " + resumed.value("cluster", "") +
              " after " + std::to_string(*s4.ms) + " ms, from " + (from.empty() ? "no checkpoint" : from);
  if (!objective_ms) s4.detail += "; the estate declares no recovery objective (readiness.recovery_objective)";
  if (!within) s4.detail += "; over the objective";

  Step& s5 = AddStep(steps, "the owner of the next action at " + provider + " is named");
  json owner = NextActionOwner(admin, provider, s5);
  if (s5.ok) subject["owner"] = owner;
  subject["summary"] = "job " + job + " in team " + o.team + ", " + provider + " taken down, objective " + objective;
  return subject;
}

json RunResidency(const Globals& g, const Options& o, Steps& steps) {
  Session admin(g, AdminToken(g));
  EstateView estate = ReadEstate(admin);
  std::string zone = o.zone;
  for (const auto& [name, c] : estate.clusters) {
    if (zone.empty()) zone = c.zone;
  }
  std::string tag = Tag();
  // Inside: storage a cluster of the zone declares, else a path local to
  // the cluster the job runs on. Outside: storage of a cluster of another
  // zone, else an object store no cluster declares.
  std::string inside, outside;
  for (const auto& [name, c] : estate.clusters) {
    for (const std::string& s : c.storage) {
      std::string& pick = c.zone == zone ? inside : outside;
      if (pick.empty()) pick = s + (s.back() == '/' ? "" : "/") + "acceptance-" + tag + "/";
    }
  }
  if (inside.empty()) inside = "/checkpoints/acceptance-" + tag + "/";
  if (outside.empty()) outside = "s3://causeway-acceptance-outside-" + tag + "/";
  json subject = {{"team", o.team}, {"zone", zone}};
  Made made{admin, "", ""};
  auto in_zone = [&](const json& a) { return estate.clusters[a.value("cluster", "")].zone == zone; };

  Step& s1 = AddStep(steps, "run a job bound to zone " + zone);
  std::string spec = TestJobSpec("residency-" + tag, estate, o.team,
                                 "residency: " + zone + "\ncheckpoint: {path: " + inside + "}\n");
  auto [job, attempt] = SubmitAndRun(admin, spec, o.job_timeout_s, s1);
  made.job = job;
  subject["job"] = job;
  if (!s1.ok) return subject;
  std::string cluster = attempt.value("cluster", "");
  s1.ok = in_zone(attempt);
  s1.detail = "runs on " + cluster + " in zone " + estate.clusters[cluster].zone;
  subject["summary"] = "job " + job + " in team " + o.team + ", bound to zone " + zone;

  Step& s2 = AddStep(steps, "its logs are kept in " + zone);
  auto logs = admin.Do("GET", "/v1/jobs/" + job + "/logs");
  // Causeway reads an attempt's output from the backend of the cluster it
  // ran on and ships it nowhere else; a backend may keep none (404).
  s2.ok = (logs.status == 200 || logs.status == 404) && in_zone(attempt);
  s2.detail = "output is kept by " + cluster + ", where the attempt runs, in zone " + estate.clusters[cluster].zone +
              (logs.status == 200 ? " (read back)" : logs.status == 404 ? " (its backend keeps none)" : ": " + ErrorOf(logs));

  Step& s3 = AddStep(steps, "a checkpoint in " + zone + " is accepted");
  auto ok = admin.Do("POST", "/v1/jobs/" + job + "/checkpoints", {{"path", inside + "step-1"}, {"step", 1}});
  s3.ok = ok.status == 201;
  s3.detail = inside + "step-1: " + (s3.ok ? "registered" : ErrorOf(ok));
  s3.evidence = Evidence(admin, "job/" + job, "checkpoint.register");

  Step& s4 = AddStep(steps, "a checkpoint outside " + zone + " is refused");
  auto refused = admin.Do("POST", "/v1/jobs/" + job + "/checkpoints", {{"path", outside + "step-2"}, {"step", 2}});
  s4.ok = refused.status >= 400 && refused.status < 500;
  s4.detail = outside + "step-2: " + (refused.status == 201 ? "ACCEPTED" : ErrorOf(refused));

  std::string provider = estate.clusters[cluster].provider;
  Step& s5 = AddStep(steps, "with " + provider + " down it is never resumed outside " + zone + " (" +
                                std::to_string(o.hold_s) + " s)");
  if (TakeDown(admin, provider, made, s5)) {
    std::string breach;
    TimeUntil(
        [&] {
          auto j = admin.Do("GET", "/v1/jobs/" + job);
          for (const json& a : j.body.value("attempts", json::array())) {
            if (!in_zone(a)) breach = "attempt " + std::to_string(a.value("number", 0)) + " ran on " + a.value("cluster", "");
          }
          return !breach.empty();
        },
        std::chrono::seconds(o.hold_s));
    s5.ok = breach.empty();
    s5.detail = s5.ok ? "every attempt stayed in " + zone + "; " + Utf8Prefix(WhyPending(admin, job), 300) : breach;
    s5.evidence = Evidence(admin, "job/" + job, "job.");
  }

  Step& s6 = AddStep(steps, "every checkpoint it registered is in " + zone);
  auto list = admin.Do("GET", "/v1/jobs/" + job + "/checkpoints");
  std::string stray;
  for (const json& c : list.body.value("checkpoints", json::array())) {
    if (c.value("path", "").rfind(inside, 0) != 0) stray += (stray.empty() ? "" : ", ") + c.value("path", "");
  }
  s6.ok = list.status == 200 && stray.empty();
  s6.detail = list.status != 200 ? ErrorOf(list) : stray.empty() ? "all under " + inside : "outside: " + stray;
  return subject;
}

}  // namespace causeway::cli::acceptance
