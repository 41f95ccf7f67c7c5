#include "store/records_json.h"

#include "store/rows.h"

#include "causeway/input.h"

namespace causeway {

namespace {

constexpr int kMaxDetailsDepth = 32;

Result<DetailValue> ValueFromJson(const nlohmann::json& j, int depth);

Result<Details> ObjectFromJson(const nlohmann::json& j, int depth) {
  if (depth > kMaxDetailsDepth) return InvalidArgument("details nest deeper than 32");
  if (!j.is_object()) return InvalidArgument("details: expected a JSON object");
  Details out;
  for (const auto& [key, value] : j.items()) {
    ASSIGN_OR_RETURN(DetailValue v, ValueFromJson(value, depth + 1));
    out.Set(key, std::move(v));
  }
  return out;
}

Result<DetailValue> ValueFromJson(const nlohmann::json& j, int depth) {
  if (depth > kMaxDetailsDepth) return InvalidArgument("details nest deeper than 32");
  switch (j.type()) {
    case nlohmann::json::value_t::null: return DetailValue();
    case nlohmann::json::value_t::boolean: return DetailValue(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return DetailValue(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      if (j.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) return InvalidArgument("details: integer out of range");
      return DetailValue(j.get<int64_t>());
    case nlohmann::json::value_t::string: return DetailValue(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      DetailValue::List list;
      for (const nlohmann::json& item : j) {
        ASSIGN_OR_RETURN(DetailValue v, ValueFromJson(item, depth + 1));
        list.push_back(std::move(v));
      }
      return DetailValue(std::move(list));
    }
    case nlohmann::json::value_t::object: {
      ASSIGN_OR_RETURN(Details object, ObjectFromJson(j, depth));
      return DetailValue(std::move(object));
    }
    default: return InvalidArgument("details: floating point numbers are not allowed");
  }
}

}  // namespace

void to_json(nlohmann::json& j, const Details& details) {
  j = nlohmann::json::object();
  for (const auto& [key, value] : details) j[key] = value;
}

void to_json(nlohmann::json& j, const DetailValue& v) {
  if (const bool* b = v.AsBool()) {
    j = *b;
  } else if (const int64_t* n = v.AsInt()) {
    j = *n;
  } else if (const std::string* s = v.AsString()) {
    j = *s;
  } else if (const DetailValue::List* list = v.AsList()) {
    j = nlohmann::json::array();
    for (const DetailValue& item : *list) j.push_back(item);
  } else if (const Details* object = v.AsObject()) {
    j = *object;
  } else {
    j = nullptr;
  }
}

Result<Details> DetailsFromJson(const nlohmann::json& j) { return ObjectFromJson(j, 0); }

namespace {

// Stored text parsed, bounded as any outside text is (a database can be
// edited by hand): discarded when it nests too deep or is not JSON.
nlohmann::json ParseStored(std::string_view text) {
  if (!CheckJsonNesting(text, "stored text").ok()) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, false);
}

}  // namespace

Details StoredDetails(std::string_view text) {
  Result<Details> d = DetailsFromJson(ParseStored(text));
  return d.ok() ? *std::move(d) : Details{{"stored_text", text}};
}

nlohmann::json ResourceJson(const DirectoryEntry& entry) {
  nlohmann::json j = ParseStored(entry.resource);
  return j.is_object() ? j : nlohmann::json::object();
}

std::string ResourceText(const nlohmann::json& resource) {
  return resource.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<std::string> GroupMemberIds(const DirectoryEntry& group) {
  std::vector<std::string> ids;
  const nlohmann::json resource = ResourceJson(group);
  auto members = resource.find("members");
  if (members == resource.end() || !members->is_array()) return ids;
  for (const nlohmann::json& m : *members) {
    auto value = m.is_object() ? m.find("value") : m.end();
    if (value != m.end() && value->is_string()) ids.push_back(value->get<std::string>());
  }
  return ids;
}

nlohmann::json ToJson(const JobRecord& j) {
  // The stored form, passed through as the API shows it (spec/spec_json.h reads it typed); null if
  // it were unreadable.
  nlohmann::json spec = nlohmann::json::parse(j.spec_json, nullptr, false);
  nlohmann::json out = {{"id", j.id},
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
  if (!j.pipeline.empty()) out["pipeline"] = PipelineJson(j);
  return out;
}

nlohmann::json PipelineJson(const JobRecord& j) {
  // Steps are numbered from 1 where people read them. A job group's tasks
  // run together (execution: parallel, as in its file), a pipeline's steps
  // one after another (serial).
  nlohmann::json out = {{"id", j.pipeline},
                        {"name", j.pipeline_name},
                        {"execution", j.job_group ? "parallel" : "serial"},
                        {"step", j.step + 1},
                        {"steps", j.steps},
                        {"after", j.after.empty() ? nlohmann::json() : nlohmann::json(j.after)}};
  if (j.job_group) {
    out["auxiliary"] = j.auxiliary;
    if (j.auxiliary) out["termination_delay_seconds"] = j.termination_delay_seconds;
  }
  return out;
}

nlohmann::json ToJson(const JobEvent& e) {
  return {{"time", FormatRfc3339(e.time)}, {"type", e.type}, {"message", e.message}};
}

nlohmann::json ToJson(const Attempt& a) {
  // Written by the scheduler as JSON (explain_json.h); an older row without one shows none.
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
  // Written by the scheduler as JSON (provenance/facts.h); an older row without facts shows an
  // empty object.
  nlohmann::json facts = nlohmann::json::parse(a.facts, nullptr, false);
  j["facts"] = facts.is_object() ? facts : nlohmann::json::object();
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
  if (!c.digest.empty()) j["digest"] = c.digest;
  return j;
}

namespace rows {

std::string ScopesText(const std::vector<std::string>& scopes) { return nlohmann::json(scopes).dump(); }

std::vector<std::string> ScopesFromText(std::string_view text) {
  std::vector<std::string> out;
  // Scopes are written by ToJson as an array of strings; anything else grants no scope (fail
  // closed).
  auto scopes = nlohmann::json::parse(text, nullptr, false);
  if (!scopes.is_array()) return out;
  for (const auto& v : scopes) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

}  // namespace rows

}  // namespace causeway
