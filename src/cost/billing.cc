#include "cost/billing.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <thread>
#include <unordered_map>

#include "causeway/crypto.h"
#include "causeway/text.h"

namespace causeway::cost {
namespace {

// The rollup key: BillingRollup::KeyFields, joined with a separator (one
// inside a value is replaced).
constexpr char kSep = '\x1f';

struct Sums {
  int64_t rows = 0;
  Picos billed = 0, effective = 0, list = 0, contracted = 0, gpu_hours = 0;

  Sums& operator+=(const Sums& o) {
    rows += o.rows;
    billed += o.billed, effective += o.effective, list += o.list, contracted += o.contracted;
    gpu_hours += o.gpu_hours;
    return *this;
  }
};

// Whether a ConsumedUnit counts GPU hours ("GPU-Hours", "GPU Hour",
// "gpu_hours", ...).
bool CountsGpuHours(std::string_view unit) {
  auto has = [&](std::string_view word) {
    return std::search(unit.begin(), unit.end(), word.begin(), word.end(), [](char a, char b) {
             return std::tolower(static_cast<unsigned char>(a)) == b;
           }) != unit.end();
  };
  return has("gpu") && has("hour");
}

struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

// Stored amounts are 64-bit nano-units (about ±9.2 billion).
Status CheckFits(const BillingRollup& r) {
  for (Picos v : r.Amounts()) {
    if (!PicosToNanos(v)) return InvalidArgument("an amount on " + r.day + " is beyond ±9.2e9 (64 bits of nano-units)");
  }
  return Status::Ok();
}

}  // namespace

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

namespace {

// The FOCUS columns a rollup's key is made of.
const uint64_t kKeyColumns = [] {
  uint64_t bits = 0;
  for (const char* c : {"ChargePeriodStart", "BillingPeriodStart", "ProviderName", "SubAccountId", "RegionId",
                        "ResourceId", "ServiceCategory", "ChargeCategory", "PricingCategory",
                        "CommitmentDiscountStatus", "BillingCurrency", "Tags"}) {
    bits |= FocusColumnBit(c);
  }
  return bits;
}();

// Sums the rows of one parsing thread.
class Aggregator final : public RowSink {
 public:
  void Add(const FocusRow& row) override {
    if ((row.changed & kKeyColumns) == 0 && last_) {
      Accumulate(row, *last_);  // every column of the key as in the previous row
      return;
    }
    int64_t day_us = row.charge_start_us - ((row.charge_start_us % kMicrosPerDay + kMicrosPerDay) % kMicrosPerDay);
    if (day_us != last_day_us_) {
      day_ = DayOf(day_us);
      last_day_us_ = day_us;
    }
    int64_t month_src = row.billing_period_start_us != 0 ? row.billing_period_start_us : row.charge_start_us;
    if (month_src != last_month_us_) {
      month_ = DayOf(month_src).substr(0, 7);
      last_month_us_ = month_src;
    }
    if (first_day.empty() || day_ < first_day) first_day = day_;
    if (last_day.empty() || day_ > last_day) last_day = day_;
    key_.clear();
    for (std::string_view part : {std::string_view(day_), std::string_view(month_), row.provider_name,
                                  row.sub_account_id, row.region_id, row.resource_id, row.service_category,
                                  row.charge_category, row.pricing_category, row.commitment_discount_status,
                                  row.currency, row.team, row.owner, row.job, row.project}) {
      // The separator inside a value would shift every later part: such a
      // byte (a control character no bill means) becomes a space.
      size_t at = key_.size();
      key_.append(part);
      if (part.find(kSep) != std::string_view::npos) std::replace(key_.begin() + at, key_.end(), kSep, ' ');
      key_ += kSep;
    }
    // Neighbouring rows often share a key: no hashing then.
    if (!last_ || key_ != last_key_) {
      auto it = sums.find(std::string_view(key_));
      if (it == sums.end()) it = sums.emplace(key_, Sums{}).first;
      last_ = &it->second;  // elements stay put when the table grows
      std::swap(key_, last_key_);
    }
    Accumulate(row, *last_);
  }

  std::unordered_map<std::string, Sums, StringHash, std::equal_to<>> sums;
  std::string first_day, last_day;

 private:
  static void Accumulate(const FocusRow& row, Sums& s) {
    ++s.rows;
    s.billed += row.billed;
    s.effective += row.effective;
    s.list += row.list;
    s.contracted += row.contracted;
    if (row.has_consumed && CountsGpuHours(row.consumed_unit)) s.gpu_hours += row.consumed;
  }

  static constexpr int64_t kMicrosPerDay = 86400000000;
  // Rows come ordered by time within a chunk: the day's text is made once
  // per day, not per row.
  int64_t last_day_us_ = INT64_MIN, last_month_us_ = INT64_MIN;
  std::string day_, month_, key_, last_key_;
  Sums* last_ = nullptr;
};

}  // namespace

Result<ShareRule> ParseShareRule(std::string_view text) {
  if (text == "none") return ShareRule::kNone;
  if (text == "proportional") return ShareRule::kProportional;
  if (text == "even") return ShareRule::kEven;
  return InvalidArgument("share rule '" + std::string(text) + "': expected none, proportional or even");
}

Result<std::vector<ShowbackLine>> ShareUntagged(std::vector<BillingTotal> totals, const std::vector<BillingDim>& by,
                                               ShareRule rule) {
  std::vector<ShowbackLine> out;
  if (rule == ShareRule::kNone) {
    for (auto& t : totals) out.push_back(ShowbackLine{std::move(t), 0});
    return out;
  }
  const bool attribution = by.size() == 1 && (by[0] == BillingDim::kTeam || by[0] == BillingDim::kOwner ||
                                               by[0] == BillingDim::kProject || by[0] == BillingDim::kJob);
  if (!attribution) return InvalidArgument("sharing untagged cost needs one of --by team, owner, project or job alone");
  std::map<std::string, Picos> untagged;  // currency -> effective cost
  for (auto& t : totals) {
    if (t.keys[0].empty()) untagged[t.currency] += t.effective;
    else out.push_back(ShowbackLine{std::move(t), 0});
  }
  for (const auto& [currency, pool] : untagged) {
    std::vector<ShowbackLine*> groups;
    std::vector<Picos> weights;
    for (auto& line : out) {
      if (line.total.currency != currency) continue;
      groups.push_back(&line);
      // In nanos, as stored: the products SplitExact forms fit in 128 bits.
      weights.push_back(rule == ShareRule::kEven ? 1 : std::max<Picos>(line.total.effective / 1000, 0));
    }
    if (groups.empty()) continue;  // nobody to share with: the cost stays unattributed
    std::vector<Picos> shares = SplitExact(pool, weights);
    for (size_t i = 0; i < groups.size(); ++i) groups[i]->shared = shares[i];
  }
  return out;
}

std::vector<Picos> SplitExact(Picos total, const std::vector<Picos>& weights) {
  std::vector<Picos> out(weights.size(), 0);
  if (weights.empty()) return out;
  std::vector<Picos> w;
  Picos sum = 0;
  for (Picos x : weights) {
    w.push_back(std::max<Picos>(x, 0));
    sum += w.back();
  }
  if (sum == 0) {
    std::fill(w.begin(), w.end(), 1);
    sum = static_cast<Picos>(w.size());
  }
  const Picos sign = total < 0 ? -1 : 1;
  const Picos magnitude = total * sign;
  const Picos nanos = magnitude / 1000;
  Picos given = 0;
  std::vector<std::pair<Picos, size_t>> remainders;
  for (size_t i = 0; i < w.size(); ++i) {
    out[i] = nanos * w[i] / sum;
    remainders.emplace_back(nanos * w[i] % sum, i);
    given += out[i];
  }
  std::stable_sort(remainders.begin(), remainders.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t k = 0; given < nanos; ++k, ++given) ++out[remainders[k % remainders.size()].second];
  for (Picos& share : out) share = share * 1000 * sign;
  out[0] += (magnitude - nanos * 1000) * sign;
  return out;
}

Result<ReadBill> ReadFocusBill(const std::string& path, const ImportOptions& options) {
  FocusOptions fo;
  fo.version = options.version;
  fo.threads = options.threads;
  fo.watched = kKeyColumns;
  std::vector<Aggregator> aggregators(static_cast<size_t>(FocusThreads(fo)));
  std::vector<RowSink*> sinks;
  for (auto& a : aggregators) sinks.push_back(&a);
  ASSIGN_OR_RETURN(FocusScan scan, ScanFocusFile(path, fo, sinks));
  // The threads' sums, ordered by key and folded where keys meet. The key
  // starts with the day, so rollups are stored by day.
  using Entry = std::pair<const std::string*, const Sums*>;
  auto by_key = [](const Entry& a, const Entry& b) { return *a.first < *b.first; };
  // The threads' tables folded into the first (most keys are in every
  // table), then its entries sorted: halves on two threads, then merged.
  Aggregator& all = aggregators[0];
  for (size_t a = 1; a < aggregators.size(); ++a) {
    for (auto& [k, s] : aggregators[a].sums) {
      auto [it, added] = all.sums.try_emplace(k, s);
      if (!added) it->second += s;
    }
    aggregators[a].sums.clear();
  }
  std::vector<Entry> entries;
  entries.reserve(all.sums.size());
  for (const auto& [k, s] : all.sums) entries.emplace_back(&k, &s);
  const auto middle = entries.begin() + static_cast<std::ptrdiff_t>(entries.size() / 2);
  std::thread lower([&] { std::sort(entries.begin(), middle, by_key); });
  std::sort(middle, entries.end(), by_key);
  lower.join();
  std::inplace_merge(entries.begin(), middle, entries.end(), by_key);
  std::string first_day, last_day;
  for (const Aggregator& a : aggregators) {
    if (!a.first_day.empty() && (first_day.empty() || a.first_day < first_day)) first_day = a.first_day;
    if (a.last_day > last_day) last_day = a.last_day;
  }

  ReadBill out;
  out.import.provider = options.provider;
  out.import.file = path;
  out.import.focus_version = FocusVersionName(scan.version);
  out.import.rows = scan.rows;
  out.import.skipped = scan.skipped;
  out.import.issues = scan.issues.total();
  out.import.first_day = first_day;
  out.import.last_day = last_day;
  out.rollups.reserve(entries.size());
  // The bill's identity: SHA-256 over every rollup's key and sums, in order
  // (gathered into large pieces: a hash update per field costs more than
  // the hashing).
  Sha256 digest;
  std::string piece;
  for (const auto& [k, s] : entries) {
    piece += *k;
    for (Picos v : {static_cast<Picos>(s->rows), s->billed, s->effective, s->list, s->contracted, s->gpu_hours}) {
      piece.append(reinterpret_cast<const char*>(&v), sizeof v);
    }
    if (piece.size() >= (1 << 20)) {
      digest.Update(piece);
      piece.clear();
    }
  }
  digest.Update(piece);
  // Rollups from keys, on every thread.
  out.rollups.resize(entries.size());
  std::vector<Status> built(aggregators.size());
  {
    const size_t per = (entries.size() + built.size() - 1) / built.size();
    std::vector<std::thread> builders;
    for (size_t t = 0; t < built.size(); ++t) {
      builders.emplace_back([&, t] {
        for (size_t i = t * per; i < std::min(entries.size(), (t + 1) * per); ++i) {
          const std::string& k = *entries[i].first;
          const Sums& s = *entries[i].second;
          BillingRollup& r = out.rollups[i];
          size_t start = 0;
          for (std::string* part : r.KeyFields()) {
            size_t end = k.find(kSep, start);
            part->assign(k, start, end - start);
            start = end + 1;
          }
          // FOCUS files without BillingCurrency (the specification's
          // examples) are in USD.
          if (r.currency.empty()) r.currency = "USD";
          r.rows = s.rows;
          r.billed = s.billed, r.effective = s.effective, r.list = s.list, r.contracted = s.contracted;
          r.gpu_hours = s.gpu_hours;
          if (Status st = CheckFits(r); !st.ok() && built[t].ok()) built[t] = st;
        }
      });
    }
    for (auto& b : builders) b.join();
  }
  for (const Status& st : built) RETURN_IF_ERROR(st);
  out.import.digest = digest.HexDigest();
  out.import.id = "bill_" + Sha256Hex(options.provider + "\n" + out.import.digest).substr(0, 20);
  out.issues = std::move(scan.issues);
  return out;
}

namespace {

// `st` with the file called `name` wherever it says `path`.
Status Renamed(const Status& st, const std::string& path, const std::string& name) {
  if (path == name) return st;
  auto rename = [&](std::string text) {
    for (size_t at = text.find(path); at != std::string::npos; at = text.find(path, at + name.size())) {
      text.replace(at, path.size(), name);
    }
    return text;
  };
  std::vector<Diagnostic> diagnostics = st.diagnostics();
  for (Diagnostic& d : diagnostics) d.file = rename(d.file);
  return Status(st.code(), rename(st.message()), std::move(diagnostics));
}

}  // namespace

Result<ImportReport> ImportFocusBill(Store& store, const std::string& path, const ImportOptions& options,
                                     const Clock& clock) {
  if (options.provider.empty()) return InvalidArgument("a bill needs the provider it is for (--provider)");
  const auto& known = options.known_providers;
  if (!known.empty() && std::find(known.begin(), known.end(), options.provider) == known.end()) {
    std::string list;
    for (const auto& p : known) list += (list.empty() ? "" : ", ") + p;
    return InvalidArgument("unknown provider \"" + options.provider + "\": the estate's providers are " + list);
  }
  const std::string& name = options.name.empty() ? path : options.name;
  Result<ReadBill> read = ReadFocusBill(path, options);
  if (!read.ok()) return Renamed(read.status(), path, name);
  ReadBill bill = std::move(*read);
  bill.import.file = name;
  if (options.strict && bill.issues.total() > 0) {
    std::vector<Diagnostic> diagnostics;
    for (const Issue& i : bill.issues.kept()) {
      diagnostics.push_back(Diagnostic{name, static_cast<int>(i.line), 0, i.column, i.message + " [" + i.rule + "]"});
    }
    return Status(Code::kInvalidArgument,
                  name + ": " + std::to_string(bill.issues.total()) +
                      " departures from FOCUS " + bill.import.focus_version + " (strict: nothing imported)",
                  std::move(diagnostics));
  }
  ImportReport report;
  report.issues = std::move(bill.issues);
  report.rollups = bill.rollups.size();
  ASSIGN_OR_RETURN(std::optional<BillingImport> existing, store.FindBillingImport(bill.import.digest));
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
    e.details = {{"provider", bill.import.provider},       {"digest", bill.import.digest},
                 {"focus_version", bill.import.focus_version}, {"rows", bill.import.rows},
                 {"skipped", bill.import.skipped},         {"issues", bill.import.issues},
                 {"first_day", bill.import.first_day},     {"last_day", bill.import.last_day},
                 {"rollups", static_cast<int64_t>(bill.rollups.size())}};
    return tx.AppendAudit(e);
  });
  if (st.code() == Code::kAlreadyExists) {
    // Imported by someone else in the meantime.
    ASSIGN_OR_RETURN(existing, store.FindBillingImport(bill.import.digest));
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
