#include "store/records_json.h"

namespace causeway {

nlohmann::json ToJson(const JobRecord& j) {
  nlohmann::json spec = nlohmann::json::parse(j.spec_json, nullptr, false);
  return {{"id", j.id},
          {"name", j.name},
          {"team", j.team},
          {"owner", j.owner},
          {"state", JobStateName(j.state)},
          {"priority", j.priority},
          {"submitted_by", j.submitted_by},
          {"created_at", FormatRfc3339(j.created_at)},
          {"updated_at", FormatRfc3339(j.updated_at)},
          {"cluster", j.cluster},
          {"attempts", j.attempts},
          {"gpu_hours", static_cast<double>(j.gpu_seconds) / 3600.0},
          {"gpu_seconds", j.gpu_seconds},
          {"cost_micros", j.cost_micros},
          {"reason", j.reason},
          {"spec", spec.is_discarded() ? nlohmann::json() : spec}};
}

nlohmann::json ToJson(const JobEvent& e) {
  return {{"time", FormatRfc3339(e.time)}, {"type", e.type}, {"message", e.message}};
}

nlohmann::json ToJson(const Attempt& a) {
  nlohmann::json placement = nlohmann::json::parse(a.placement, nullptr, false);
  nlohmann::json j = {{"number", a.number},
                      {"cluster", a.cluster},
                      {"pool", a.pool},
                      {"backend_id", a.backend_id},
                      {"resumed_from", a.resumed_from},
                      {"state", a.state},
                      {"started_at", FormatRfc3339(a.started_at)},
                      {"failure_class", a.failure_class},
                      {"flavor", a.flavor},
                      {"gpus", a.gpus},
                      {"reserved", a.reserved},
                      {"borrowed", a.borrowed},
                      {"price_micros", a.price_micros},
                      {"gpu_seconds", a.gpu_seconds},
                      {"cost_micros", a.cost_micros},
                      {"observed_gpu_seconds", a.observed_gpu_seconds},
                      {"work_gpu_seconds", a.work_gpu_seconds},
                      {"placement", placement.is_discarded() ? nlohmann::json::object() : placement}};
  if (a.ended_at) j["ended_at"] = FormatRfc3339(*a.ended_at);
  if (a.exit_code) j["exit_code"] = *a.exit_code;
  return j;
}

nlohmann::json ToJson(const TokenRecord& t) {
  nlohmann::json j = {{"id", t.id},
                      {"name", t.name},
                      {"scopes", t.scopes},
                      {"created_by", t.created_by},
                      {"created_at", FormatRfc3339(t.created_at)},
                      {"expires_at", t.expires_at ? nlohmann::json(FormatRfc3339(*t.expires_at)) : nlohmann::json()},
                      {"revoked_at", t.revoked_at ? nlohmann::json(FormatRfc3339(*t.revoked_at)) : nlohmann::json()}};
  if (!t.user.empty()) j["user"] = t.user;
  if (!t.creator.empty()) j["creator"] = t.creator;
  if (!t.grant.empty()) j["breakglass"] = t.grant;
  return j;
}

nlohmann::json ToJson(const AuditEvent& e) {
  return {{"seq", e.seq},           {"time", FormatRfc3339(e.time)}, {"actor", e.actor},
          {"action", e.action},     {"resource", e.resource},        {"details", e.details},
          {"prev_hash", e.prev_hash}, {"hash", e.hash}};
}

}  // namespace causeway

namespace causeway {

nlohmann::json ToJson(const Checkpoint& c) {
  nlohmann::json j = {{"job", c.job_id}, {"seq", c.seq}, {"attempt", c.attempt}, {"path", c.path},
                      {"created_at", FormatRfc3339(c.created_at)}};
  j["step"] = c.step ? nlohmann::json(*c.step) : nlohmann::json();
  return j;
}

}  // namespace causeway
