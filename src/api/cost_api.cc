// /v1/cost/...: bills imported and listed, showback from the bills or the
// ledger, billed against metered reconciliation, waste, and metered usage
// exported as FOCUS. Reports span every team, so a cost role bound to some
// teams is not enough for them.
#include <sstream>

#include "api/api_helpers.h"
#include "api/cost_api.h"
#include "cost/billing.h"
#include "cost/metering.h"
#include "cost/showback.h"
#include "cost/waste.h"

namespace causeway::api {

using nlohmann::json;

namespace {

Status CheckCostForEveryTeam(const identity::Principal& who) {
  std::vector<std::string> teams = who.TeamsFor(identity::kScopeCostRead);
  if (teams.empty()) return Status::Ok();
  return PermissionDenied("cost reports cover every team; " + who.user + "'s cost role is bound to team " +
                          teams.front() + " only");
}

// ?name=value where value must be true or false (absent: false).
Result<bool> QueryBool(const HttpRequest& req, const char* name) {
  std::string v = req.Query(name);
  if (v.empty() || v == "false") return false;
  if (v == "true") return true;
  return InvalidArgument(std::string(name) + ": expected true or false, not \"" + v + "\"");
}

// A string buffer that takes at most `limit` bytes; past it, writes fail
// (the stream goes bad) and nothing more is kept.
class BoundedBuffer final : public std::stringbuf {
 public:
  explicit BoundedBuffer(size_t limit) : limit_(limit) {}
  bool full() const { return full_; }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    if (full_ || size_ + static_cast<size_t>(n) > limit_) {
      full_ = true;
      return 0;
    }
    size_ += static_cast<size_t>(n);
    return std::stringbuf::xsputn(s, n);
  }
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    if (full_ || size_ + 1 > limit_) {
      full_ = true;
      return traits_type::eof();
    }
    ++size_;
    return std::stringbuf::overflow(c);
  }

 private:
  const size_t limit_;
  size_t size_ = 0;
  bool full_ = false;
};

json ToJson(const std::vector<cost::ReconcileLine>& lines, int threshold) {
  int flagged = 0;
  json days = json::array();
  for (const cost::ReconcileLine& l : lines) {
    flagged += l.flagged;
    days.push_back({{"provider", l.provider}, {"day", l.day}, {"currency", l.currency},
                    {"billed_gpu_hours", cost::PicosText(l.billed_gpu_hours)},
                    {"metered_gpu_hours", cost::PicosText(l.metered_gpu_hours)},
                    {"billed_cost", cost::PicosText(l.billed_cost)}, {"metered_cost", cost::PicosText(l.metered_cost)},
                    {"bill_rows", l.bill_rows}, {"attempts", l.attempts}, {"flagged", l.flagged},
                    {"cause", l.cause}});
  }
  return {{"threshold_percent", threshold}, {"flagged", flagged}, {"days", days}};
}

json ToJson(const cost::WasteReport& report, const std::string& share_unused) {
  using cost::GpuHoursText, cost::MicrosText;
  json teams = json::array();
  for (const auto& t : report.teams) {
    teams.push_back({{"team", t.team}, {"failed_attempts", t.failed_attempts},
                     {"failed_gpu_hours", GpuHoursText(t.failed_gpu_seconds)},
                     {"failed_cost", MicrosText(t.failed_cost_micros)}, {"reaped_jobs", t.reaped_jobs},
                     {"idle_gpu_hours", GpuHoursText(t.idle_gpu_seconds)},
                     {"idle_cost", MicrosText(t.idle_cost_micros)}, {"dry_run_reaps", t.dry_run_reaps},
                     {"unused_reserved_share", MicrosText(t.unused_reserved_share_micros)}});
  }
  json reservations = json::array();
  for (const auto& r : report.reservations) {
    reservations.push_back({{"cluster", r.cluster}, {"gpu_type", r.gpu_type}, {"reservations", r.names},
                            {"reserved_gpu_hours", GpuHoursText(r.reserved_gpu_seconds)},
                            {"used_gpu_hours", GpuHoursText(r.used_gpu_seconds)},
                            {"committed_cost", MicrosText(r.committed_micros)},
                            {"unused_cost", MicrosText(r.unused_micros)},
                            {"unallocated_cost", MicrosText(r.unallocated_micros)}});
  }
  json unused = json::array();
  for (const auto& [currency, amount] : report.unused_commitments) {
    unused.push_back({{"currency", currency}, {"effective_cost", cost::PicosText(amount)}});
  }
  return {{"currency", report.currency}, {"share_unused", share_unused}, {"teams", teams},
          {"reservations", reservations}, {"unused_commitments", unused}};
}

}  // namespace

void CostApi::AddRoutes(RouteTable& routes) {
  using identity::kScopeAdmin, identity::kScopeCostRead;
  // Every cost route answers at once and spans every team.
  auto answer = [this](Result<HttpResponse> (CostApi::*fn)(HttpRequest&)) {
    return Answer([this, fn](HttpRequest& req) -> Result<HttpResponse> {
      RETURN_IF_ERROR(CheckCostForEveryTeam(*req.principal));
      return (this->*fn)(req);
    });
  };
  routes.Route("GET", "/v1/cost/showback", kScopeCostRead, answer(&CostApi::CostShowback));
  routes.Route("GET", "/v1/cost/bills", kScopeCostRead, answer(&CostApi::ListBills));
  routes.Route("POST", "/v1/cost/bills", kScopeAdmin, answer(&CostApi::ImportBill));
  routes.Route("GET", "/v1/cost/reconcile", kScopeCostRead, answer(&CostApi::ReconcileCost));
  routes.Route("GET", "/v1/cost/waste", kScopeCostRead, answer(&CostApi::CostWaste));
  routes.Route("GET", "/v1/cost/export", kScopeCostRead, answer(&CostApi::ExportUsage));
}

// GET /v1/cost/showback?by=team,month&period=2026-11&provider=P&share=none
// [&allocate=true] [&source=metered]
Result<HttpResponse> CostApi::CostShowback(HttpRequest& req) {
  cost::ShowbackRequest r;
  if (!req.Query("by").empty()) r.by = req.Query("by");
  r.period = req.Query("period");
  r.provider = req.Query("provider");
  if (!req.Query("share").empty()) r.share = req.Query("share");
  std::string source = req.Query("source");
  if (source == "metered") {
    ASSIGN_OR_RETURN(auto metered, cost::RunMeteredShowback(store_, estate_, r, clock_.Now()));
    return JsonResponse(200, cost::ToJson(metered));
  }
  if (source != "" && source != "bills") {
    return InvalidArgument("source: expected bills or metered, not \"" + source + "\"");
  }
  ASSIGN_OR_RETURN(r.allocate, QueryBool(req, "allocate"));
  ASSIGN_OR_RETURN(auto showback, cost::RunShowback(store_, r, estate_, clock_.Now()));
  return JsonResponse(200, cost::ToJson(showback));
}

Result<HttpResponse> CostApi::ListBills(HttpRequest&) {
  ASSIGN_OR_RETURN(auto bills, store_.ListBillingImports());
  json items = json::array();
  for (const auto& b : bills) items.push_back(cost::ToJson(b));
  return JsonResponse(200, {{"bills", items}});
}

// POST /v1/cost/bills?provider=P[&strict=true][&focus_version=1.2][&name=F]
// with the FOCUS export (CSV, plain or gzip) as the body. `name` is the
// file's name, used in diagnostics and the import's record.
Result<HttpResponse> CostApi::ImportBill(HttpRequest& req) {
  cost::ImportOptions options;
  options.provider = req.Query("provider");
  if (options.provider.empty()) return InvalidArgument("query parameter \"provider\" is required");
  for (const auto& p : estate_.providers) options.known_providers.push_back(p.name);
  ASSIGN_OR_RETURN(options.strict, QueryBool(req, "strict"));
  if (std::string v = req.Query("focus_version"); !v.empty()) {
    options.version = cost::ParseFocusVersion(v);
    if (!options.version) return InvalidArgument("focus_version: expected 1.0, 1.1 or 1.2, not \"" + v + "\"");
  }
  if (req.body.empty()) return InvalidArgument("the request body is empty: expected the FOCUS export");
  options.actor = req.principal->token_id;
  options.name = req.Query("name").empty() ? "upload.csv" : req.Query("name");
  TempFile file;
  RETURN_IF_ERROR(file.Write(req.body, options.name));
  ASSIGN_OR_RETURN(auto report, cost::ImportFocusBill(store_, file.path(), options, clock_));
  return JsonResponse(report.already_imported ? 200 : 201, cost::ToJson(report));
}

// GET /v1/cost/reconcile?period=2026-11&threshold=5
Result<HttpResponse> CostApi::ReconcileCost(HttpRequest& req) {
  ASSIGN_OR_RETURN(auto days, cost::PeriodDays(req.Query("period")));
  ASSIGN_OR_RETURN(auto threshold, QueryInt(req, "threshold", 0, 1000, "a percentage"));
  const int percent = static_cast<int>(threshold.value_or(5));
  ASSIGN_OR_RETURN(auto lines, cost::Reconcile(store_, estate_, days.first, days.second, percent, clock_.Now()));
  return JsonResponse(200, ToJson(lines, percent));
}

// GET /v1/cost/waste?period=2026-11&share_unused=none|proportional|even
Result<HttpResponse> CostApi::CostWaste(HttpRequest& req) {
  ASSIGN_OR_RETURN(auto days, cost::PeriodDays(req.Query("period")));
  std::string share = req.Query("share_unused").empty() ? "none" : req.Query("share_unused");
  auto rule = cost::ParseShareRule(share);
  if (!rule.ok()) return rule.status().WithPrefix("share_unused");
  ASSIGN_OR_RETURN(auto report,
                   cost::Waste(store_, estate_, days.first, days.second, clock_.Now(), cost::WasteOptions{*rule}));
  return JsonResponse(200, ToJson(report, share));
}

// GET /v1/cost/export?period=2026-11: FOCUS 1.2 CSV, one row per attempt
// and day, with x_Team, x_Owner and x_JobId. An answer is held whole before
// it is sent, so it is bounded: a period whose export is larger is refused
// with a hint to ask for a shorter one.
Result<HttpResponse> CostApi::ExportUsage(HttpRequest& req) {
  constexpr size_t kMaxExport = 256u << 20;
  ASSIGN_OR_RETURN(auto days, cost::PeriodDays(req.Query("period")));
  BoundedBuffer buffer(kMaxExport);
  std::ostream out(&buffer);
  Status st = cost::ExportFocus(store_, estate_, days.first, days.second, clock_.Now(), out);
  if (buffer.full()) {
    return InvalidArgument("the export of this period is larger than " + std::to_string(kMaxExport >> 20) +
                             " MiB: ask for a shorter period (period=2026-11-01..2026-11-15)");
  }
  RETURN_IF_ERROR(st);
  HttpResponse r;
  r.content_type = "text/csv; charset=utf-8";
  r.body = std::move(buffer).str();
  return r;
}

}  // namespace causeway::api
