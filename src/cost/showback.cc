#include "cost/showback.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

#include "cost/allocation.h"
#include "cost/focus.h"
#include "cost/metering.h"

namespace causeway::cost {

Result<Showback> RunShowback(const Store& store, const ShowbackRequest& request, const Estate& estate, Timestamp now) {
  ASSIGN_OR_RETURN(std::vector<BillingDim> dims, ParseBillingDims(request.by));
  ASSIGN_OR_RETURN(auto days, PeriodDays(request.period));
  ASSIGN_OR_RETURN(ShareRule rule, ParseShareRule(request.share));
  BillingQuery query{dims, days.first, days.second, request.provider};
  ASSIGN_OR_RETURN(std::vector<BillingTotal> totals,
                   request.allocate ? AllocateUntagged(store, estate, query, now) : store.QueryBilling(query));
  Showback out;
  for (BillingDim d : dims) {
    for (const auto& [dim, name] : kBillingDims) {
      if (dim == d) out.by.emplace_back(name);
    }
  }
  out.from_day = days.first;
  out.to_day = days.second;
  out.rule = rule;
  out.allocated = request.allocate;
  ASSIGN_OR_RETURN(out.lines, ShareUntagged(std::move(totals), dims, rule));
  return out;
}

nlohmann::json ToJson(const Showback& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ShowbackLine& line : s.lines) {
    const BillingTotal& t = line.total;
    nlohmann::json r = nlohmann::json::object();
    for (size_t i = 0; i < s.by.size(); ++i) r[s.by[i]] = t.keys[i];
    r["currency"] = t.currency;
    r["rows"] = t.rows;
    r["billed_cost"] = PicosText(t.billed);
    r["effective_cost"] = PicosText(t.effective);
    r["list_cost"] = PicosText(t.list);
    r["contracted_cost"] = PicosText(t.contracted);
    r["gpu_hours"] = PicosText(t.gpu_hours);
    if (s.rule != ShareRule::kNone) {
      r["shared_cost"] = PicosText(line.shared);
      r["total_effective_cost"] = PicosText(t.effective + line.shared);
    }
    rows.push_back(std::move(r));
  }
  static constexpr const char* kRules[] = {"none", "proportional", "even"};
  return {{"by", s.by},
          {"from_day", s.from_day},
          {"to_day", s.to_day},
          {"share", kRules[static_cast<int>(s.rule)]},
          {"allocated", s.allocated},
          {"rows", rows}};
}

Result<MeteredShowback> RunMeteredShowback(const Store& store, const Estate& estate, const ShowbackRequest& request,
                                           Timestamp now) {
  enum class Dim { kTeam, kOwner, kJob, kProvider, kCluster, kGpu, kMonth, kDay };
  static const std::pair<std::string_view, Dim> kDims[] = {
      {"team", Dim::kTeam},         {"owner", Dim::kOwner}, {"job", Dim::kJob},     {"provider", Dim::kProvider},
      {"cluster", Dim::kCluster},   {"gpu", Dim::kGpu},     {"month", Dim::kMonth}, {"day", Dim::kDay}};
  MeteredShowback out;
  std::vector<Dim> dims;
  for (std::string_view rest = request.by; !rest.empty();) {
    size_t comma = rest.find(',');
    std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    auto it = std::find_if(std::begin(kDims), std::end(kDims), [&](const auto& d) { return d.first == name; });
    if (it == std::end(kDims)) {
      return InvalidArgument("by: the ledger groups by team, owner, job, provider, cluster, gpu, month or day, not \"" +
                             std::string(name) + "\"");
    }
    dims.push_back(it->second);
    out.by.emplace_back(name);
  }
  if (dims.empty()) return InvalidArgument("by: expected at least one dimension");
  ASSIGN_OR_RETURN(auto days, PeriodDays(request.period));
  out.from_day = days.first;
  out.to_day = days.second;
  out.currency = estate.currency;
  ASSIGN_OR_RETURN(MeteredPeriod metered, MeterPeriod(store, estate, days.first, days.second, now));

  std::map<std::vector<std::string>, MeteredLine> lines;
  std::set<std::pair<const MeteredAttempt*, const MeteredLine*>> counted;
  for (const MeteredDay& d : metered.days) {
    const MeteredAttempt& m = *d.source;
    const Attempt& a = m.attempt;
    if (!request.provider.empty() && d.provider != request.provider) continue;
    std::vector<std::string> keys;
    for (Dim dim : dims) {
      switch (dim) {
        case Dim::kTeam: keys.push_back(m.team); break;
        case Dim::kOwner: keys.push_back(m.owner); break;
        case Dim::kJob: keys.push_back(a.job_id); break;
        case Dim::kProvider: keys.push_back(d.provider); break;
        case Dim::kCluster: keys.push_back(d.cluster); break;
        case Dim::kGpu: keys.push_back(a.flavor); break;
        case Dim::kMonth: keys.push_back(d.day.substr(0, 7)); break;
        case Dim::kDay: keys.push_back(d.day); break;
      }
    }
    MeteredLine& line = lines[keys];
    line.keys = keys;
    if (counted.insert({&m, &line}).second) ++line.attempts;
    line.gpu_seconds += d.gpu_seconds;
    line.cost_micros += d.cost_micros;
    if (a.ended_at && !AttemptFinishedTheWork(a.state)) line.wasted_micros += d.cost_micros;
    // A completed job counts once, on the day its succeeding attempt ended.
    if (a.state == "succeeded" && a.ended_at && DayOf(ToUnixMicros(*a.ended_at - Micros(1))) == d.day) {
      ++line.completed_jobs;
    }
  }
  // What moving and keeping data cost in the period, on the same lines (a
  // dimension a charge has no value for, such as its GPU, is "").
  auto bound = [](const std::string& day, int64_t none) {
    auto t = ParseRfc3339(day + "T00:00:00Z");
    return day.empty() || !t.ok() ? FromUnixMicros(none) : *t;
  };
  ASSIGN_OR_RETURN(auto charges, store.ListDataCharges("", bound(days.first, 0),
                                                        bound(days.second, std::numeric_limits<int64_t>::max())));
  for (const DataCharge& c : charges) {
    std::string provider = c.to_place.substr(0, c.to_place.find('/'));
    if (!request.provider.empty() && provider != request.provider) continue;
    std::string day = DayOf(ToUnixMicros(c.at));
    std::vector<std::string> keys;
    for (Dim dim : dims) {
      switch (dim) {
        case Dim::kTeam: keys.push_back(c.team); break;
        case Dim::kJob: keys.push_back(c.job_id); break;
        case Dim::kProvider: keys.push_back(provider); break;
        case Dim::kMonth: keys.push_back(day.substr(0, 7)); break;
        case Dim::kDay: keys.push_back(day); break;
        case Dim::kOwner: case Dim::kCluster: case Dim::kGpu: keys.push_back(""); break;
      }
    }
    MeteredLine& line = lines[keys];
    line.keys = keys;
    if (c.kind == "storage") {
      line.storage_micros += c.amount_micros;
    } else {
      line.data_bytes += c.bytes;
      line.data_micros += c.amount_micros;
    }
  }
  for (auto& [keys, line] : lines) out.lines.push_back(std::move(line));
  return out;
}

nlohmann::json ToJson(const MeteredShowback& s) {
  nlohmann::json rows = nlohmann::json::array();
  for (const MeteredLine& line : s.lines) {
    nlohmann::json r = nlohmann::json::object();
    for (size_t i = 0; i < s.by.size(); ++i) r[s.by[i]] = line.keys[i];
    r["attempts"] = line.attempts;
    r["gpu_hours"] = GpuHoursText(line.gpu_seconds);
    r["cost"] = MicrosText(line.cost_micros);
    r["data_cost"] = MicrosText(line.data_micros);
    r["data_bytes"] = line.data_bytes;
    r["storage_cost"] = MicrosText(line.storage_micros);
    int64_t total = line.cost_micros + line.data_micros + line.storage_micros;
    r["total_cost"] = MicrosText(total);
    r["completed_jobs"] = line.completed_jobs;
    r["cost_per_completed_job"] =
        line.completed_jobs > 0 ? nlohmann::json(MicrosText(total / line.completed_jobs)) : nlohmann::json();
    r["wasted_cost"] = MicrosText(line.wasted_micros);
    rows.push_back(std::move(r));
  }
  return {{"source", "metered"}, {"by", s.by},           {"from_day", s.from_day},
          {"to_day", s.to_day},  {"currency", s.currency}, {"rows", rows}};
}

nlohmann::json ToJson(const BillingImport& b) {
  return {{"id", b.id},
          {"provider", b.provider},
          {"file", b.file},
          {"digest", b.digest},
          {"focus_version", b.focus_version},
          {"rows", b.rows},
          {"skipped", b.skipped},
          {"issues", b.issues},
          {"first_day", b.first_day},
          {"last_day", b.last_day},
          {"imported_by", b.imported_by},
          {"imported_at", FormatRfc3339(b.imported_at)}};
}

nlohmann::json ToJson(const ImportReport& report) {
  nlohmann::json by_rule = nlohmann::json::object();
  for (const auto& [rule, s] : report.issues.by_rule()) {
    by_rule[rule] = {{"count", s.count}, {"first_line", s.first.line}, {"column", s.first.column},
                     {"message", s.first.message}};
  }
  nlohmann::json list = nlohmann::json::array();
  for (const Issue& x : report.issues.kept()) {
    list.push_back({{"line", x.line}, {"column", x.column}, {"rule", x.rule}, {"message", x.message}});
  }
  nlohmann::json j = ToJson(report.import);
  j["already_imported"] = report.already_imported;
  j["rollups"] = report.rollups;
  j["issue_log"] = {{"total", report.issues.total()}, {"by_rule", by_rule}, {"issues", list}};
  return j;
}

}  // namespace causeway::cost
