#include "cost/metering.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>

#include "cost/billing.h"
#include "cost/focus.h"

namespace causeway::cost {
namespace {

constexpr int64_t kMicrosPerDay = 86400000000;
constexpr int64_t kMicrosPerSecond = 1000000;

// No upper bound: attempts end by themselves, or at `now` while running (a
// simulated estate's clock may run ahead of the wall's).
constexpr int64_t kNoEnd = INT64_MAX / 2;

int64_t FloorDay(int64_t us) { return us - ((us % kMicrosPerDay) + kMicrosPerDay) % kMicrosPerDay; }

Result<int64_t> DayMicros(const std::string& day, int64_t fallback) {
  if (day.empty()) return fallback;
  bool exact = false;
  std::optional<int64_t> t = ParseFocusTime(day, &exact);
  if (!t) return InvalidArgument("day '" + day + "': expected YYYY-MM-DD");
  return *t;
}

std::string CsvCell(const std::string& v) {
  if (v.find_first_of(",\"\n\r") == std::string::npos) return v;
  std::string q = "\"";
  for (char c : v) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string FocusTime(int64_t us) { return DayOf(us) + "T" + FormatRfc3339(FromUnixMicros(us)).substr(11, 8) + "Z"; }

}  // namespace

Result<std::vector<MeteredDay>> MeterByDay(const std::vector<MeteredAttempt>& attempts, const Estate& estate,
                                           Timestamp from, Timestamp to, Timestamp now) {
  std::vector<MeteredDay> out;
  const int64_t lo = ToUnixMicros(from), hi = ToUnixMicros(to), now_us = ToUnixMicros(now);
  for (const MeteredAttempt& m : attempts) {
    const Attempt& a = m.attempt;
    int64_t start = std::max(lo, ToUnixMicros(a.started_at));
    int64_t end = std::min(hi, a.ended_at ? ToUnixMicros(*a.ended_at) : now_us);
    const Cluster* cluster = estate.FindCluster(a.cluster);
    for (int64_t day = FloorDay(start); day < end; day += kMicrosPerDay) {
      int64_t seconds = (std::min(end, day + kMicrosPerDay) - std::max(start, day)) / kMicrosPerSecond;
      if (seconds <= 0) continue;
      MeteredDay d;
      d.day = DayOf(day);
      d.provider = cluster ? cluster->provider : "";
      d.cluster = a.cluster;
      d.source = &m;
      d.seconds = seconds;
      // A CPU-only attempt's count is CPUs: costed by them, no GPU time.
      int64_t unit_seconds = seconds * a.gpus;
      d.gpu_seconds = IsCpuFlavor(a.flavor) ? 0 : unit_seconds;
      ASSIGN_OR_RETURN(Money cost, Money::Scale(Money(a.price_micros, estate.currency), unit_seconds, 3600));
      d.cost_micros = cost.micros();
      out.push_back(std::move(d));
    }
  }
  return out;
}

Result<MeteredPeriod> MeterPeriod(const Store& store, const Estate& estate, const std::string& from_day,
                                  const std::string& to_day, Timestamp now) {
  ASSIGN_OR_RETURN(int64_t from, DayMicros(from_day, 0));
  ASSIGN_OR_RETURN(int64_t to, DayMicros(to_day, kNoEnd));
  MeteredPeriod p;
  p.from = FromUnixMicros(from);
  p.to = FromUnixMicros(to);
  ASSIGN_OR_RETURN(p.attempts, store.ListAttemptsBetween(p.from, p.to));
  ASSIGN_OR_RETURN(p.days, MeterByDay(p.attempts, estate, p.from, p.to, now));
  return p;
}

Result<std::vector<ReconcileLine>> Reconcile(const Store& store, const Estate& estate, const std::string& from_day,
                                             const std::string& to_day, int threshold_percent, Timestamp now) {
  std::map<std::pair<std::string, std::string>, ReconcileLine> lines;  // (provider, day)
  auto line = [&](const std::string& provider, const std::string& day) -> ReconcileLine& {
    ReconcileLine& l = lines[{provider, day}];
    l.provider = provider;
    l.day = day;
    return l;
  };
  ASSIGN_OR_RETURN(auto billed, store.QueryBilling(BillingQuery{{BillingDim::kProvider, BillingDim::kDay},
                                                                from_day, to_day, ""}));
  for (const BillingTotal& t : billed) {
    ReconcileLine& l = line(t.keys[0], t.keys[1]);
    l.currency = t.currency;
    l.billed_gpu_hours += t.gpu_hours;
    l.billed_cost += t.effective;
    l.bill_rows += t.rows;
  }
  ASSIGN_OR_RETURN(MeteredPeriod metered, MeterPeriod(store, estate, from_day, to_day, now));
  for (const MeteredDay& d : metered.days) {
    ReconcileLine& l = line(d.provider.empty() ? "(unknown cluster " + d.cluster + ")" : d.provider, d.day);
    if (l.currency.empty()) l.currency = estate.currency;
    l.metered_gpu_hours += GpuSecondsToPicoHours(d.gpu_seconds);
    l.metered_cost += MicrosToPicos(d.cost_micros);
    ++l.attempts;
  }
  std::vector<ReconcileLine> out;
  for (auto& [key, l] : lines) {
    Picos diff = l.billed_gpu_hours > l.metered_gpu_hours ? l.billed_gpu_hours - l.metered_gpu_hours
                                                          : l.metered_gpu_hours - l.billed_gpu_hours;
    Picos base = std::max(l.billed_gpu_hours, l.metered_gpu_hours);
    l.flagged = base > 0 && diff * 100 > base * threshold_percent;
    if (l.flagged) {
      if (l.bill_rows == 0) {
        l.cause = "no bill for this day: not imported yet, or billed under another provider name";
      } else if (l.metered_gpu_hours == 0) {
        l.cause = "GPU-hours billed while no attempt ran: usage outside Causeway, or nodes left running";
      } else if (l.billed_gpu_hours == 0) {
        l.cause = "the bill has no GPU-hours for this day: rows without a GPU ConsumedUnit, or unmatched rows";
      } else if (l.billed_gpu_hours > l.metered_gpu_hours) {
        l.cause = "more GPU-hours billed than jobs used: idle nodes or untracked usage";
      } else {
        l.cause = "jobs used more GPU-hours than billed: rows attributed elsewhere, a credit, or a partial export";
      }
    }
    out.push_back(std::move(l));
  }
  return out;
}

Status ExportFocus(const Store& store, const Estate& estate, const std::string& from_day, const std::string& to_day,
                   Timestamp now, std::ostream& out) {
  ASSIGN_OR_RETURN(MeteredPeriod metered, MeterPeriod(store, estate, from_day, to_day, now));
  out << "BilledCost,BillingAccountId,BillingAccountName,BillingCurrency,BillingPeriodEnd,BillingPeriodStart,"
         "ChargeCategory,ChargeClass,ChargeDescription,ChargeFrequency,ChargePeriodEnd,ChargePeriodStart,"
         "ConsumedQuantity,ConsumedUnit,ContractedCost,EffectiveCost,InvoiceIssuerName,ListCost,PricingCategory,"
         "PricingQuantity,PricingUnit,ProviderName,PublisherName,RegionId,ResourceId,ResourceName,ServiceCategory,"
         "ServiceName,SkuId,Tags,x_Team,x_Owner,x_JobId,x_Attempt,x_Outcome\n";
  for (const MeteredDay& d : metered.days) {
    const MeteredAttempt& m = *d.source;
    const Attempt& a = m.attempt;
    bool exact = false;
    int64_t day = *ParseFocusTime(d.day, &exact);
    ASSIGN_OR_RETURN(auto month, PeriodDays(d.day.substr(0, 7)));
    int64_t month_start = *ParseFocusTime(month.first, &exact);
    int64_t month_end = *ParseFocusTime(month.second, &exact);
    const Cluster* cluster = estate.FindCluster(a.cluster);
    std::string provider = d.provider.empty() ? "unknown" : d.provider;
    std::string cost = PicosText(MicrosToPicos(d.cost_micros));
    std::string gpu_hours = PicosText(GpuSecondsToPicoHours(d.gpu_seconds));
    std::string category = a.reserved ? "Committed" : (a.flavor.find("-spot") != std::string::npos ? "Dynamic"
                                                                                                    : "Standard");
    std::string outcome = a.ended_at ? a.state : "running";
    nlohmann::json tags = {{"causeway-team", m.team}, {"causeway-owner", m.owner}, {"causeway-job", a.job_id}};
    std::vector<std::string> row = {
        cost, "causeway", "Causeway metered usage", estate.currency, FocusTime(month_end), FocusTime(month_start),
        "Usage", "", "GPU time of " + a.job_id + " attempt " + std::to_string(a.number) + " on " + a.cluster,
        "Usage-Based", FocusTime(day + kMicrosPerDay), FocusTime(day), gpu_hours, "GPU-Hours", cost, cost, provider,
        cost, category, gpu_hours, "GPU-Hours", provider, provider, cluster ? cluster->region : "", a.cluster,
        a.cluster, "Compute", "GPU compute", a.flavor, tags.dump(), m.team, m.owner, a.job_id,
        std::to_string(a.number), outcome};
    std::string line;
    for (size_t i = 0; i < row.size(); ++i) line += (i ? "," : "") + CsvCell(row[i]);
    out << line << "\n";
  }
  return out.good() ? Status::Ok() : Internal("writing the export failed");
}

}  // namespace causeway::cost
