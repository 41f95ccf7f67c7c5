#include "service/reports_json.h"

#include <algorithm>

#include "store/records_json.h"

namespace causeway {

using nlohmann::json;

json ToJson(const TrailReport& r) {
  json j = {{"ok", r.ok()},
            {"events", r.chain.events},
            {"checkpoints", r.checkpoints},
            {"last_signed_seq", r.last_signed_seq},
            {"unsigned_events", r.chain.ok ? std::max<int64_t>(0, r.chain.events - r.last_signed_seq) : 0}};
  if (!r.chain.ok) {
    j["first_bad_seq"] = r.chain.first_bad_seq;
    j["reason"] = r.chain.reason;
  }
  if (!r.checkpoints_ok) j["checkpoint_error"] = r.checkpoint_error;
  j["imported_events"] = r.imported_events;
  if (!r.imports_ok) j["import_error"] = r.import_error;
  return j;
}

json ToJson(const SyncReport& r) {
  json steps = json::array();
  for (const SyncStep& s : r.steps) {
    json j = {{"action", s.action}, {"target", s.target}, {"ok", s.ok}};
    if (!s.detail.empty()) j["detail"] = s.detail;
    if (s.seq > 0) j["seq"] = s.seq;
    steps.push_back(std::move(j));
  }
  return {{"user", r.user}, {"may_work", r.may_work}, {"ok", r.ok}, {"steps", steps}, {"seq", r.seq}};
}

json ToJson(const std::vector<SyncReport>& reports) {
  json out = json::array();
  for (const SyncReport& r : reports) out.push_back(ToJson(r));
  return out;
}

json ToJson(const CredentialReport& r) {
  json out = {{"user", r.user}};
  if (r.directory) {
    out["directory"] = {{"id", r.directory->id}, {"active", r.directory->active}, {"groups", r.groups},
                        {"state", r.directory->active ? "active: may sign in with the identity provider"
                                                      : "deactivated: sign-in refused"}};
  } else {
    out["directory"] = {{"state", "not in the directory"}};
  }
  json tokens = json::array();
  for (const CredentialReport::Token& t : r.api_tokens) {
    json j = ToJson(t.token);
    j["state"] = t.state;
    j["because"] = t.because;
    tokens.push_back(std::move(j));
  }
  out["api_tokens"] = tokens;
  json grants = json::array();
  for (const BreakglassRecord& g : r.breakglass) {
    grants.push_back({{"id", g.id}, {"role", g.role}, {"expires_at", g.expires_at ? FormatRfc3339(*g.expires_at) : ""}});
  }
  out["breakglass"] = grants;
  json workload = json::array();
  for (const CredentialReport::WorkloadToken& w : r.workload_tokens) {
    workload.push_back({{"jti", w.jti}, {"job", w.job}, {"audiences", w.audiences}, {"expires_at", w.expires_at},
                        {"state", w.running ? "live: its attempt runs" : "attempt ended: no refresh; expires by itself"},
                        {"seq", w.seq}});
    if (!w.identity.empty()) workload.back()["identity"] = w.identity;
  }
  out["workload_tokens"] = workload;
  json deliveries = json::array();
  for (const CredentialReport::SecretDelivery& d : r.secret_deliveries) {
    deliveries.push_back({{"job", d.job}, {"attempt", d.attempt}, {"variable", d.variable}, {"store", d.store},
                          {"reference", d.reference}, {"delivery", d.delivery}, {"digest", d.digest},
                          {"ends", d.ends}, {"seq", d.seq}});
  }
  out["secret_deliveries"] = deliveries;
  json accounts = json::array();
  for (const CredentialReport::Account& a : r.provider_accounts) {
    json j = {{"provider", a.provider}, {"cluster", a.cluster}, {"kind", a.kind}, {"account_user", a.account_user}, {"state", a.state}};
    if (a.accounts) j["accounts"] = *a.accounts;
    accounts.push_back(std::move(j));
  }
  out["provider_accounts"] = accounts;
  out["retains_access"] = r.retains_access;
  out["verdict"] = r.verdict;
  return out;
}

}  // namespace causeway
