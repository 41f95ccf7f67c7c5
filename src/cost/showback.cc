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

namespace {

// Which service made each metered job as a replica (its submitter is
// "service/NAME"); jobs of no service are absent.
using ServiceOf = std::map<std::string, std::string>;
Result<ServiceOf> ServicesOf(const Store& store, const MeteredPeriod& metered) {
  std::set<std::string> ids;
  for (const MeteredAttempt& m : metered.attempts) ids.insert(m.attempt.job_id);
  ASSIGN_OR_RETURN(auto jobs, store.GetJobs(std::vector<std::string>(ids.begin(), ids.end())));
  ServiceOf out;
  constexpr std::string_view kPrefix = "service/";
  for (const JobRecord& j : jobs) {
    if (j.submitted_by.rfind(kPrefix, 0) == 0) out[j.id] = j.submitted_by.substr(kPrefix.size());
  }
  return out;
}

// The part of a day an attempt ran, in Unix microseconds.
std::pair<int64_t, int64_t> DayShare(const MeteredDay& d, const Attempt& a, Timestamp now) {
  const int64_t day_start = ToUnixMicros(ParseRfc3339(d.day + "T00:00:00Z").value_or(Timestamp{}));
  const int64_t day_end = day_start + 86'400'000'000LL;
  const int64_t start = std::max(day_start, ToUnixMicros(a.started_at));
  const int64_t end = std::min(day_end, ToUnixMicros(a.ended_at.value_or(now)));
  return {start, std::max(start, end)};
}

// The seconds covered by the union of `spans`.
int64_t CoveredSeconds(std::vector<std::pair<int64_t, int64_t>> spans) {
  std::sort(spans.begin(), spans.end());
  int64_t covered = 0, until = std::numeric_limits<int64_t>::min();
  for (auto [from, to] : spans) {
    from = std::max(from, until);
    if (to > from) covered += to - from;
    until = std::max(until, to);
  }
  return covered / 1'000'000;
}

// The `service.usage` events of [from, to): requests each service's
// endpoint answered, recorded by the server as it goes.
Result<std::vector<AuditEvent>> UsageIn(const Store& store, Timestamp from, Timestamp to) {
  std::vector<AuditEvent> out;
  AuditFilter f;
  f.action = "service.usage";
  f.since = from;
  f.limit = 1000;
  for (;;) {
    ASSIGN_OR_RETURN(auto page, store.ListAudit(f));
    for (AuditEvent& e : page) {
      if (e.time < to) out.push_back(std::move(e));
    }
    if (page.size() < static_cast<size_t>(f.limit)) break;
    f.after_seq = page.back().seq;
  }
  return out;
}

}  // namespace

Result<MeteredShowback> RunMeteredShowback(const Store& store, const Estate& estate, const ShowbackRequest& request,
                                           Timestamp now) {
  enum class Dim { kTeam, kOwner, kJob, kService, kProvider, kCluster, kGpu, kMonth, kDay };
  static const std::pair<std::string_view, Dim> kDims[] = {
      {"team", Dim::kTeam},       {"owner", Dim::kOwner},       {"job", Dim::kJob},
      {"service", Dim::kService}, {"provider", Dim::kProvider}, {"cluster", Dim::kCluster},
      {"gpu", Dim::kGpu},         {"month", Dim::kMonth},       {"day", Dim::kDay}};
  MeteredShowback out;
  std::vector<Dim> dims;
  for (std::string_view rest = request.by; !rest.empty();) {
    size_t comma = rest.find(',');
    std::string_view name = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    auto it = std::find_if(std::begin(kDims), std::end(kDims), [&](const auto& d) { return d.first == name; });
    if (it == std::end(kDims)) {
      return InvalidArgument("by: the ledger groups by team, owner, job, service, provider, cluster, gpu, month or day, not \"" +
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
  const bool by_service = std::find(dims.begin(), dims.end(), Dim::kService) != dims.end();
  ASSIGN_OR_RETURN(ServiceOf service_of, by_service ? ServicesOf(store, metered) : Result<ServiceOf>(ServiceOf{}));

  std::map<std::vector<std::string>, MeteredLine> lines;
  std::map<std::vector<std::string>, std::vector<std::pair<int64_t, int64_t>>> running;  // by service line
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
        case Dim::kService: keys.push_back(service_of[a.job_id]); break;
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
    if (by_service) running[keys].push_back(DayShare(d, a, now));
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
        case Dim::kService: keys.push_back(service_of[c.job_id]); break;
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
  if (by_service) {
    for (auto& [keys, spans] : running) lines[keys].service_seconds = CoveredSeconds(std::move(spans));
    // Requests split only along what a usage event names.
    const bool splits = std::all_of(dims.begin(), dims.end(), [](Dim d) {
      return d == Dim::kService || d == Dim::kTeam || d == Dim::kOwner || d == Dim::kMonth || d == Dim::kDay;
    });
    if (splits) {
      ASSIGN_OR_RETURN(auto usage, UsageIn(store, metered.from, metered.to));
      for (const AuditEvent& e : usage) {
        const std::string day = DayOf(ToUnixMicros(e.time));
        std::vector<std::string> keys;
        for (Dim dim : dims) {
          switch (dim) {
            case Dim::kService: keys.push_back(e.resource.substr(std::string_view("service/").size())); break;
            case Dim::kTeam: keys.push_back(e.details.String("team")); break;
            case Dim::kOwner: keys.push_back(e.details.String("owner")); break;
            case Dim::kMonth: keys.push_back(day.substr(0, 7)); break;
            default: keys.push_back(day); break;
          }
        }
        MeteredLine& line = lines[keys];
        line.keys = keys;
        line.requests = line.requests.value_or(0) + e.details.Int("requests");
      }
      for (auto& [keys, line] : lines) {
        const size_t at = static_cast<size_t>(std::find(dims.begin(), dims.end(), Dim::kService) - dims.begin());
        if (!keys[at].empty() && !line.requests) line.requests = 0;
      }
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
    if (std::find(s.by.begin(), s.by.end(), "service") != s.by.end()) {
      r["requests"] = line.requests ? nlohmann::json(*line.requests) : nlohmann::json();
      r["hours"] = GpuHoursText(line.service_seconds);
      r["cost_per_hour"] = line.service_seconds > 0
                               ? nlohmann::json(MicrosText(total * 3600 / line.service_seconds))
                               : nlohmann::json();
      r["cost_per_1000_requests"] = line.requests && *line.requests > 0
                                        ? nlohmann::json(MicrosText(total * 1000 / *line.requests))
                                        : nlohmann::json();
    }
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
