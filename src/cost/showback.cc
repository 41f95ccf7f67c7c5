#include "cost/showback.h"

#include "cost/allocation.h"

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

}  // namespace causeway::cost
