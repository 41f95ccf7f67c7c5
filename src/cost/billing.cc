#include "cost/billing.h"

#include <algorithm>
#include <unordered_map>

#include "causeway/text.h"

namespace causeway::cost {
namespace {

// The rollup key: every attribute of BillingRollup that is not a sum,
// joined with a separator that cannot appear in CSV text we keep.
constexpr char kSep = '\x1f';
constexpr int kKeyParts = 16;

struct Sums {
  int64_t rows = 0;
  __int128 billed = 0, effective = 0, list = 0, contracted = 0, consumed = 0;
};

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Stored amounts are 64-bit nano-units (about ±9.2 billion).
Status CheckFits(const BillingRollup& r) {
  for (Picos v : {r.billed, r.effective, r.list, r.contracted, r.consumed}) {
    if (!PicosToNanos(v)) return InvalidArgument("an amount on " + r.day + " is beyond ±9.2e9 (64 bits of nano-units)");
  }
  return Status::Ok();
}

}  // namespace

std::string PicosToDecimal(Picos v) {
  bool negative = v < 0;
  unsigned __int128 mag = negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  constexpr unsigned __int128 kUnit = 1000000000000ULL;
  auto digits = [](unsigned __int128 x) {
    std::string out;
    do {
      out.insert(out.begin(), static_cast<char>('0' + static_cast<int>(x % 10)));
      x /= 10;
    } while (x != 0);
    return out;
  };
  std::string frac = digits(mag % kUnit);
  frac.insert(0, 12 - frac.size(), '0');
  while (frac.size() > 2 && frac.back() == '0') frac.pop_back();
  return (negative ? "-" : "") + digits(mag / kUnit) + "." + frac;
}

Result<std::pair<std::string, std::string>> PeriodDays(std::string_view period) {
  if (period.empty()) return std::pair<std::string, std::string>();
  auto day = [](std::string_view d) -> std::optional<int64_t> {
    bool exact = false;
    if (d.size() != 10) return std::nullopt;
    return ParseFocusTime(d, &exact);
  };
  auto bad = [&] {
    return InvalidArgument("period '" + std::string(period) +
                           "': expected YYYY-MM, YYYY-MM-DD or YYYY-MM-DD..YYYY-MM-DD (end exclusive)");
  };
  if (size_t dots = period.find(".."); dots != std::string_view::npos) {
    auto a = day(period.substr(0, dots)), b = day(period.substr(dots + 2));
    if (!a || !b || *b <= *a) return bad();
    return std::pair(DayOf(*a), DayOf(*b));
  }
  if (period.size() == 7) {
    auto a = day(std::string(period) + "-01");
    if (!a) return bad();
    int year = std::stoi(std::string(period.substr(0, 4))), month = std::stoi(std::string(period.substr(5, 2)));
    char next[32];
    std::snprintf(next, sizeof next, "%04d-%02d-01", month == 12 ? year + 1 : year, month == 12 ? 1 : month + 1);
    return std::pair(DayOf(*a), std::string(next));
  }
  auto a = day(period);
  if (!a) return bad();
  return std::pair(DayOf(*a), DayOf(*a + 86400000000));
}

Result<std::vector<BillingDim>> ParseBillingDims(std::string_view list) {
  std::vector<BillingDim> out;
  for (const std::string& name : Split(list, ',')) {
    std::string n = Trim(name);
    auto it = std::find_if(std::begin(kBillingDims), std::end(kBillingDims),
                           [&](const auto& d) { return d.second == n; });
    if (it == std::end(kBillingDims)) {
      std::string known;
      for (const auto& d : kBillingDims) known += (known.empty() ? "" : ", ") + std::string(d.second);
      return InvalidArgument("cannot group by '" + n + "'; expected one of: " + known);
    }
    if (std::find(out.begin(), out.end(), it->first) == out.end()) out.push_back(it->first);
  }
  return out;
}

Result<ReadBill> ReadFocusBill(const std::string& path, const ImportOptions& options) {
  FocusOptions fo;
  fo.version = options.version;
  ASSIGN_OR_RETURN(std::unique_ptr<FocusReader> reader, FocusReader::Open(path, fo));

  std::unordered_map<std::string, Sums, StringHash, std::equal_to<>> sums;
  std::string key;
  FocusRow row;
  // Rows of one export come ordered by time: the day's text is computed
  // once per day, not per row.
  int64_t last_day_us = INT64_MIN, last_month_us = INT64_MIN;
  std::string day, month;
  std::string first_day, last_day;
  while (true) {
    ASSIGN_OR_RETURN(bool more, reader->Next(row));
    if (!more) break;
    int64_t day_us = row.charge_start_us - ((row.charge_start_us % 86400000000 + 86400000000) % 86400000000);
    if (day_us != last_day_us) {
      day = DayOf(day_us);
      last_day_us = day_us;
    }
    int64_t month_src = row.billing_period_start_us != 0 ? row.billing_period_start_us : row.charge_start_us;
    if (month_src != last_month_us) {
      month = DayOf(month_src).substr(0, 7);
      last_month_us = month_src;
    }
    if (first_day.empty() || day < first_day) first_day = day;
    if (last_day.empty() || day > last_day) last_day = day;
    key.clear();
    for (std::string_view part : {std::string_view(day), std::string_view(month), row.provider_name,
                                  row.sub_account_id, row.region_id, row.resource_id, row.service_category,
                                  row.charge_category, row.pricing_category, row.commitment_discount_status,
                                  row.consumed_unit, row.currency, row.team, row.owner, row.job, row.project}) {
      key.append(part);
      key += kSep;
    }
    auto it = sums.find(std::string_view(key));
    if (it == sums.end()) it = sums.emplace(key, Sums{}).first;
    Sums& s = it->second;
    ++s.rows;
    s.billed += row.billed;
    s.effective += row.effective;
    s.list += row.list;
    s.contracted += row.contracted;
    s.consumed += row.consumed;
  }

  ReadBill out;
  out.import.provider = options.provider;
  out.import.file = path;
  out.import.sha256 = reader->sha256();
  out.import.id = "bill_" + out.import.sha256.substr(0, 20);
  out.import.focus_version = FocusVersionName(reader->version());
  out.import.rows = reader->rows();
  out.import.skipped = reader->skipped();
  out.import.issues = reader->issues().total();
  out.import.first_day = first_day;
  out.import.last_day = last_day;
  out.rollups.reserve(sums.size());
  for (auto& [k, s] : sums) {
    BillingRollup r;
    std::string* parts[kKeyParts] = {&r.day, &r.month, &r.provider_name, &r.sub_account, &r.region,
                                     &r.resource_id, &r.service_category, &r.charge_category, &r.pricing_category,
                                     &r.commitment_status, &r.consumed_unit, &r.currency, &r.team, &r.owner,
                                     &r.job_id, &r.project};
    size_t start = 0;
    for (std::string* part : parts) {
      size_t end = k.find(kSep, start);
      *part = k.substr(start, end - start);
      start = end + 1;
    }
    if (r.currency.empty()) r.currency = "USD";  // FOCUS files without BillingCurrency (spec examples) are in USD
    r.rows = s.rows;
    r.billed = s.billed, r.effective = s.effective, r.list = s.list, r.contracted = s.contracted;
    r.consumed = s.consumed;
    RETURN_IF_ERROR(CheckFits(r));
    out.rollups.push_back(std::move(r));
  }
  // Stored in a stable order, so the same file gives the same rows.
  std::sort(out.rollups.begin(), out.rollups.end(), [](const BillingRollup& a, const BillingRollup& b) {
    return std::tie(a.day, a.team, a.owner, a.job_id, a.resource_id, a.charge_category, a.currency, a.provider_name,
                    a.sub_account, a.region, a.service_category, a.pricing_category, a.commitment_status,
                    a.consumed_unit, a.project, a.month) <
           std::tie(b.day, b.team, b.owner, b.job_id, b.resource_id, b.charge_category, b.currency, b.provider_name,
                    b.sub_account, b.region, b.service_category, b.pricing_category, b.commitment_status,
                    b.consumed_unit, b.project, b.month);
  });
  out.issues = reader->issues();
  return out;
}

Result<ImportReport> ImportFocusBill(Store& store, const std::string& path, const ImportOptions& options,
                                     const Clock& clock) {
  if (options.provider.empty()) return InvalidArgument("a bill needs the provider it is for (--provider)");
  ASSIGN_OR_RETURN(ReadBill bill, ReadFocusBill(path, options));
  ImportReport report;
  report.issues = bill.issues;
  report.rollups = bill.rollups.size();
  if (options.strict && bill.issues.total() > 0) {
    std::vector<Diagnostic> diagnostics;
    for (const Issue& i : bill.issues.kept()) {
      diagnostics.push_back(Diagnostic{path, static_cast<int>(i.line), 0, i.column, i.message + " [" + i.rule + "]"});
    }
    return Status(Code::kInvalidArgument,
                  path + ": " + std::to_string(bill.issues.total()) +
                      " departures from FOCUS " + bill.import.focus_version + " (strict: nothing imported)",
                  std::move(diagnostics));
  }
  ASSIGN_OR_RETURN(std::optional<BillingImport> existing, store.FindBillingImport(options.provider, bill.import.sha256));
  if (existing) {
    report.import = *existing;
    report.already_imported = true;
    return report;
  }
  bill.import.imported_at = clock.Now();
  bill.import.imported_by = options.actor;
  Status st = store.Write([&](WriteTx& tx) -> Status {
    RETURN_IF_ERROR(tx.InsertBillingImport(bill.import, bill.rollups));
    AuditEvent e;
    e.time = bill.import.imported_at;
    e.actor = options.actor;
    e.action = "cost.import";
    e.resource = "bill/" + bill.import.id;
    e.details = {{"provider", bill.import.provider},       {"sha256", bill.import.sha256},
                 {"focus_version", bill.import.focus_version}, {"rows", bill.import.rows},
                 {"skipped", bill.import.skipped},         {"issues", bill.import.issues},
                 {"first_day", bill.import.first_day},     {"last_day", bill.import.last_day},
                 {"rollups", static_cast<int64_t>(bill.rollups.size())}};
    return tx.AppendAudit(e);
  });
  if (st.code() == Code::kAlreadyExists) {
    // Imported by someone else in the meantime.
    ASSIGN_OR_RETURN(existing, store.FindBillingImport(options.provider, bill.import.sha256));
    if (existing) {
      report.import = *existing;
      report.already_imported = true;
      return report;
    }
  }
  RETURN_IF_ERROR(st);
  report.import = std::move(bill.import);
  return report;
}

}  // namespace causeway::cost
