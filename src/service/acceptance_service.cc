#include "service/acceptance_service.h"

#include <algorithm>

#include "causeway/text.h"
#include "service/audit_service.h"

namespace causeway {

namespace {

std::string Resource(const std::string& test) { return "acceptance/" + test; }

Details ToDetails(const AcceptanceRun& run) {
  DetailValue::List steps;
  for (const AcceptanceStep& s : run.steps) {
    DetailValue::List seqs;
    for (int64_t q : s.audit_seqs) seqs.emplace_back(q);
    steps.emplace_back(Details{{"step", s.name}, {"result", s.result}, {"detail", s.detail}, {"audit_seqs", seqs}});
  }
  Details d{{"test", run.test},
            {"passed", run.passed},
            {"started", FormatRfc3339(run.started)},
            {"finished", FormatRfc3339(run.finished)},
            {"steps", steps},
            {"report_sha256", run.report_sha256}};
  if (!run.provider.empty()) d.Set("provider", run.provider);
  if (run.recovery_ms) d.Set("recovery_ms", *run.recovery_ms);
  if (run.objective_ms) d.Set("objective_ms", *run.objective_ms);
  return d;
}

AcceptanceRun FromEvent(const AuditEvent& e) {
  const Details& d = e.details;
  AcceptanceRun run;
  run.test = d.String("test");
  run.passed = d.Bool("passed");
  run.started = ParseRfc3339(d.String("started")).value_or(e.time);
  run.finished = ParseRfc3339(d.String("finished")).value_or(e.time);
  run.provider = d.String("provider");
  if (d.Contains("recovery_ms")) run.recovery_ms = d.Int("recovery_ms");
  if (d.Contains("objective_ms")) run.objective_ms = d.Int("objective_ms");
  run.report_sha256 = d.String("report_sha256");
  run.seq = e.seq;
  run.actor = e.actor;
  if (const DetailValue* steps = d.Find("steps"); steps && steps->AsList()) {
    for (const DetailValue& v : *steps->AsList()) {
      const Details* s = v.AsObject();
      if (!s) continue;
      AcceptanceStep step{s->String("step"), s->String("result"), s->String("detail"), {}};
      if (const DetailValue* seqs = s->Find("audit_seqs"); seqs && seqs->AsList()) {
        for (const DetailValue& q : *seqs->AsList()) {
          if (q.AsInt()) step.audit_seqs.push_back(*q.AsInt());
        }
      }
      run.steps.push_back(std::move(step));
    }
  }
  return run;
}

}  // namespace

Result<AcceptanceRun> AcceptanceService::Record(AcceptanceRun run, const std::string& actor) {
  if (std::find(std::begin(kAcceptanceTests), std::end(kAcceptanceTests), run.test) == std::end(kAcceptanceTests)) {
    return InvalidArgument("test: expected identity, recovery, residency, data or failover, not \"" + Utf8Prefix(run.test, 64) + "\"");
  }
  if (run.steps.empty() || run.steps.size() > kMaxSteps) {
    return InvalidArgument("steps: expected 1 to " + std::to_string(kMaxSteps) + " steps");
  }
  if (run.finished < run.started) return InvalidArgument("finished: earlier than started");
  for (AcceptanceStep& s : run.steps) {
    if (s.result != "pass" && s.result != "fail" && s.result != "not_applicable") {
      return InvalidArgument("steps[].result: expected pass, fail or not_applicable");
    }
    if (s.name.empty()) return InvalidArgument("steps[].step: expected what the step checked");
    s.name = Utf8Prefix(s.name, kMaxDetail);
    s.detail = Utf8Prefix(s.detail, kMaxDetail);
    s.audit_seqs.resize(std::min(s.audit_seqs.size(), kMaxSeqs));
  }
  // A run passes only when no step failed, whatever the caller says.
  bool failed = std::any_of(run.steps.begin(), run.steps.end(), [](const AcceptanceStep& s) { return s.result == "fail"; });
  if (run.passed && failed) return InvalidArgument("passed: true, but a step failed");
  AuditEvent e;
  e.time = clock_.Now();
  e.actor = actor;
  e.action = "acceptance.run";
  e.resource = Resource(run.test);
  e.details = ToDetails(run);
  ASSIGN_OR_RETURN(auto seqs, queue_.RunAudited([e](WriteTx& tx) mutable -> Status { return tx.AppendAudit(e); }));
  if (seqs.size() != 1) return Internal("recording an acceptance run committed " + std::to_string(seqs.size()) + " events");
  run.seq = seqs.front();
  run.actor = actor;
  return run;
}

Result<std::map<std::string, AcceptanceRun>> AcceptanceService::Latest() const {
  std::map<std::string, AcceptanceRun> out;
  for (std::string_view test : kAcceptanceTests) {
    ASSIGN_OR_RETURN(auto last, LatestAuditEvent(store_, Resource(std::string(test)), "acceptance.run"));
    if (last) out[std::string(test)] = FromEvent(*last);
  }
  return out;
}

}  // namespace causeway
