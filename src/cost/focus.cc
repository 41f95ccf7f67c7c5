#include "cost/focus.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <mutex>
#include <thread>
#include <cctype>
#include <cstdio>
#include <unordered_map>
#include <utility>

#include "cost/csv.h"
#include "cost/focus_schema.h"

namespace causeway::cost {
namespace {

using focus_schema::ColumnPlan;
using focus_schema::EqualsIgnoreCase;
using focus_schema::Field;
using focus_schema::Schema;

// Tags' keys that carry attribution, in order of preference.
constexpr std::string_view kTeamKeys[] = {"causeway-team", "team"};
constexpr std::string_view kOwnerKeys[] = {"causeway-owner", "owner"};
constexpr std::string_view kJobKeys[] = {"causeway-job"};
constexpr std::string_view kProjectKeys[] = {"causeway-project", "project"};

// A small reader for the flat JSON objects of Tags: string keys, and values
// that are strings, numbers, booleans or null; nested values are skipped.
class TagScanner {
 public:
  // `doubled`: every quote of the JSON text appears twice (as inside a
  // quoted CSV field). `key` and `value` are scratch space, reused.
  TagScanner(std::string_view s, bool doubled, std::string& key, std::string& value)
      : s_(s), quote_(doubled ? 2 : 1), key_(key), value_(value) {}

  // Calls on(key, value) for every string-valued entry; false if the text
  // is not one JSON object.
  template <typename F>
  bool Scan(F&& on) {
    Ws();
    if (!Eat('{')) return false;
    Ws();
    if (Eat('}')) return Rest();
    while (true) {
      Ws();
      if (!String(key_)) return false;
      Ws();
      if (!Eat(':')) return false;
      Ws();
      if (Peek() == '"') {
        if (!String(value_)) return false;
        on(std::string_view(key_), std::string_view(value_));
      } else if (!SkipValue()) {
        return false;
      }
      Ws();
      if (Eat(',')) continue;
      if (Eat('}')) return Rest();
      return false;
    }
  }

 private:
  char Peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  bool Eat(char c) {
    if (Peek() != c) return false;
    i_ += c == '"' ? quote_ : 1;
    return true;
  }
  void Ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  bool Rest() {
    Ws();
    return i_ == s_.size();
  }
  bool String(std::string& out) {
    out.clear();
    if (!Eat('"')) return false;
    while (i_ < s_.size()) {
      // The plain run up to the next quote or backslash, in one append.
      size_t run = i_;
      while (run < s_.size() && s_[run] != '"' && s_[run] != '\\') ++run;
      out.append(s_.data() + i_, run - i_);
      i_ = run;
      if (i_ >= s_.size()) return false;
      char c = s_[i_++];
      if (c == '"') {
        i_ += quote_ - 1;
        return true;
      }
      if (i_ >= s_.size()) return false;
      char e = s_[i_++];
      if (e == '"') i_ += quote_ - 1;
      switch (e) {
        case '"': case '\\': case '/': out += e; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          if (i_ + 4 > s_.size()) return false;
          unsigned cp = 0;
          for (int k = 0; k < 4; ++k) {
            char h = s_[i_++];
            cp <<= 4;
            if (h >= '0' && h <= '9') cp |= static_cast<unsigned>(h - '0');
            else if (h >= 'a' && h <= 'f') cp |= static_cast<unsigned>(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') cp |= static_cast<unsigned>(h - 'A' + 10);
            else return false;
          }
          // Tags are attribution keys, not text to display: code points
          // are kept as UTF-8, surrogate pairs as two units.
          if (cp < 0x80) {
            out += static_cast<char>(cp);
          } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: return false;
      }
    }
    return false;
  }
  bool SkipValue() {
    char c = Peek();
    if (c == '{' || c == '[') {
      int depth = 0;
      while (i_ < s_.size()) {
        char x = s_[i_];
        if (x == '"') {
          if (!String(value_)) return false;
          continue;
        }
        ++i_;
        if (x == '{' || x == '[') ++depth;
        if (x == '}' || x == ']') {
          if (--depth == 0) return true;
        }
      }
      return false;
    }
    size_t start = i_;
    while (i_ < s_.size() && s_[i_] != ',' && s_[i_] != '}' && s_[i_] != ' ' && s_[i_] != '\t' && s_[i_] != '\n' &&
           s_[i_] != '\r') {
      ++i_;
    }
    std::string_view lit = s_.substr(start, i_ - start);
    if (lit == "true" || lit == "false" || lit == "null") return true;
    return !lit.empty() && ParsePicos(lit).has_value();
  }

  std::string_view s_;
  size_t i_ = 0;
  size_t quote_;
  std::string& key_;
  std::string& value_;
};

bool IsCurrencyCode(std::string_view s) {
  return s.size() == 3 && std::all_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}


// Turns records into FocusRows for one parsing thread, noting departures.
//
// Bills repeat themselves: the same account, currency, category, hour and
// price on thousands of rows. Each column remembers its last few texts
// (a small table indexed by a hash of the text) and what reading them gave;
// the same text again, if it raised no issue, is not read again. Only a
// text that raised an issue is checked every time, so every row's
// departures are still reported.
class RowReader {
 public:
  RowReader(const Schema& schema, uint64_t watched)
      : schema_(schema),
        watched_(watched),
        memo_(schema.plan.size() * kMemoWays),
        last_slot_(schema.plan.size(), kNoSlot),
        last_text_(schema.plan.size()) {}

  // False when the row cannot be used (noted in issues).
  bool Read(std::vector<CsvField>& fields, int64_t line, FocusRow& row);

  IssueLog issues;
  int64_t rows = 0, skipped = 0;

 private:
  // What reading one column's text gave.
  struct Memo {
    bool valid = false;  // holds a clean reading of `text`
    std::string text;
    bool quoted = false;
    bool null = false;
    int64_t time_us = 0;
    Picos amount = 0;
    bool parsed = false;           // time_us / amount hold a value
    std::string_view canonical;    // an enumeration's spelling (static)
    std::string team, owner, job, project;  // Tags
  };
  struct Flags {
    bool usable = true, has_start = false, has_cost = false;
  };

  // Reads field i into `m` (issues noted), as if new.
  void ReadColumn(const ColumnPlan& p, CsvField& f, int64_t line, Memo& m);
  // Copies what `m` says into the row.
  void Apply(const ColumnPlan& p, std::string_view text, const Memo& m, FocusRow& row, Flags& flags);
  // Sets the row's view of a text column.
  static void SetText(Field field, std::string_view text, FocusRow& row);
  // Whether the field (its text `v`) is null: empty unquoted or NULL; an
  // empty quoted string is null too, and noted, as is a null where the
  // column allows none.
  bool IsNull(const ColumnPlan& p, const CsvField& f, std::string_view v, int64_t line);
  // A plain column: null checks, then the text as it is.
  void ReadPlain(size_t i, const ColumnPlan& p, CsvField& f, int64_t line, FocusRow& row);

  static constexpr size_t kMemoWays = 8;
  static size_t Slot(std::string_view t) {
    if (t.empty()) return 0;
    return (t.size() * 7 + static_cast<unsigned char>(t.back()) * 3 + static_cast<unsigned char>(t[t.size() / 2])) %
           kMemoWays;
  }

  const Schema& schema_;
  const uint64_t watched_;  // FocusOptions::watched
  std::vector<Memo> memo_;  // kMemoWays per column
  static constexpr size_t kNoSlot = SIZE_MAX;
  std::vector<size_t> last_slot_;  // per column: the memo slot the previous row hit, or kNoSlot
  std::vector<std::string> last_text_;  // per plain column: the previous row's text
  std::string tag_key_, tag_value_;  // scratch for TagScanner
  Memo scratch_;                     // a direct column's reading
  bool after_skip_ = false;          // the last row read was skipped
};

bool RowReader::IsNull(const ColumnPlan& p, const CsvField& f, std::string_view v, int64_t line) {
  if (v.empty() && f.quoted) {
    issues.Add(line, p.name, "empty-string", [] { return "an empty string; FOCUS uses null for no value"; });
  }
  bool null = v.empty() || (!f.quoted && v == "NULL");
  if (null && !p.spec->nullable) issues.Add(line, p.name, "not-nullable", [&] { return p.name + " must have a value"; });
  return null;
}

void RowReader::ReadColumn(const ColumnPlan& p, CsvField& f, int64_t line, Memo& m) {
  m.parsed = false;
  m.canonical = {};
  // Tags are read with their CSV quotes still doubled (TagScanner knows).
  std::string_view v = p.field == Field::kTags ? f.text : Unescape(f);
  m.null = IsNull(p, f, v, line);
  if (m.null) return;
  switch (p.field) {
    case Field::kChargeStart: case Field::kChargeEnd: case Field::kBillingStart: case Field::kBillingEnd:
    case Field::kOtherTime: {
      bool exact = false;
      std::optional<int64_t> t = ParseFocusTime(v, &exact);
      if (!t) {
        issues.Add(line, p.name, "datetime-format", [&] {
          return "'" + std::string(v) + "' is not a date-time (FOCUS: YYYY-MM-DDTHH:mm:ssZ, UTC)";
        });
        break;
      }
      if (!exact) {
        issues.Add(line, p.name, "datetime-format", [&] {
          return "'" + std::string(v) + "' read as " + std::string(v.size() >= 10 ? "UTC" : "a date") +
                 "; FOCUS requires YYYY-MM-DDTHH:mm:ssZ";
        });
      }
      m.time_us = *t;
      m.parsed = true;
      break;
    }
    case Field::kBilled: case Field::kEffective: case Field::kList: case Field::kContracted:
    case Field::kConsumed: case Field::kOtherDecimal: {
      bool rounded = false;
      std::optional<Picos> n = ParsePicos(v, &rounded);
      if (n && rounded) {
        // Amounts are kept to the pico (12 decimals): say so where that drops digits.
        issues.Add(line, p.name, "decimal-precision", [&] {
          return "'" + std::string(v) + "' has more precision than 12 decimals; read as " + PicosText(*n) +
                 " (rounded half to even)";
        });
      }
      if (!n) {
        // Spreadsheet money ("$10,000.00 ", "(5.00)"): read, and noted.
        n = ParseSpreadsheetMoney(v);
        issues.Add(line, p.name, "decimal-format", [&] {
          return "'" + std::string(v) + "' " + (n ? "read as " + PicosText(*n) : std::string("is not a number")) +
                 "; FOCUS decimals have no currency symbols, separators or spaces";
        });
        if (!n) break;
      }
      m.amount = *n;
      m.parsed = true;
      break;
    }
    case Field::kCurrency: case Field::kPricingCurrency:
      if (!IsCurrencyCode(v)) {
        issues.Add(line, p.name, "currency-code",
                   [&] { return "'" + std::string(v) + "' is not an ISO 4217 code (three capital letters)"; });
      }
      break;
    case Field::kTags: {
      m.team.clear(), m.owner.clear(), m.job.clear(), m.project.clear();
      int team_rank = 99, owner_rank = 99, job_rank = 99, project_rank = 99;
      auto take = [](std::string_view key, std::string_view value, const auto& keys, std::string& out, int& rank) {
        for (int k = 0; k < static_cast<int>(std::size(keys)); ++k) {
          if (key == keys[k] && k < rank) out.assign(value), rank = k;
        }
      };
      bool ok = TagScanner(v, f.escaped, tag_key_, tag_value_).Scan([&](std::string_view key, std::string_view value) {
        take(key, value, kTeamKeys, m.team, team_rank);
        take(key, value, kOwnerKeys, m.owner, owner_rank);
        take(key, value, kJobKeys, m.job, job_rank);
        take(key, value, kProjectKeys, m.project, project_rank);
      });
      if (!ok) {
        issues.Add(line, p.name, "json-format",
                   [] { return "Tags is not a JSON object of key-value pairs (tags ignored)"; });
        m.team.clear(), m.owner.clear(), m.job.clear(), m.project.clear();
      }
      break;
    }
    case Field::kOtherJson:
      if (!nlohmann::json::accept(v)) issues.Add(line, p.name, "json-format", [&] { return p.name + " is not valid JSON"; });
      break;
    default:
      break;
  }
  if (p.enumeration) {
    for (std::string_view allowed : p.enumeration->values) {
      if (v == allowed) {
        m.canonical = allowed;
        break;
      }
    }
    if (m.canonical.empty()) {
      for (std::string_view allowed : p.enumeration->values) {
        if (EqualsIgnoreCase(v, allowed)) m.canonical = allowed;
      }
      if (!m.canonical.empty()) {
        issues.Add(line, p.name, "enum-case", [&] {
          return "'" + std::string(v) + "' is spelled '" + std::string(m.canonical) + "' in FOCUS";
        });
      } else {
        issues.Add(line, p.name, "enum-value",
                   [&] { return "'" + std::string(v) + "' is not an allowed value of " + p.name; });
      }
    }
  }
}

void RowReader::Apply(const ColumnPlan& p, std::string_view text, const Memo& m, FocusRow& row, Flags& flags) {
  if (m.null) return;
  if (p.enumeration) {
    std::string_view v = m.canonical.empty() ? text : m.canonical;
    switch (p.field) {
      case Field::kServiceCategory: row.service_category = v; break;
      case Field::kChargeCategory: row.charge_category = v; break;
      case Field::kChargeClass: row.charge_class = v; break;
      case Field::kPricingCategory: row.pricing_category = v; break;
      case Field::kCommitmentStatus: row.commitment_discount_status = v; break;
      default: break;
    }
    return;
  }
  SetText(p.field, text, row);
  switch (p.field) {
    case Field::kChargeStart:
      if (m.parsed) row.charge_start_us = m.time_us, flags.has_start = true;
      else flags.usable = false;
      break;
    case Field::kChargeEnd: if (m.parsed) row.charge_end_us = m.time_us; break;
    case Field::kBillingStart: if (m.parsed) row.billing_period_start_us = m.time_us; break;
    case Field::kBilled: if (m.parsed) row.billed = m.amount, flags.has_cost = true; break;
    case Field::kEffective: if (m.parsed) row.effective = m.amount, flags.has_cost = true; break;
    case Field::kList: if (m.parsed) row.list = m.amount; break;
    case Field::kContracted: if (m.parsed) row.contracted = m.amount; break;
    case Field::kConsumed: if (m.parsed) row.consumed = m.amount, row.has_consumed = true; break;
    case Field::kCurrency: row.currency = text; break;
    case Field::kTags: row.team = m.team, row.owner = m.owner, row.job = m.job, row.project = m.project; break;
    default: break;
  }
}

void RowReader::SetText(Field field, std::string_view text, FocusRow& row) {
  switch (field) {
    case Field::kProviderName: row.provider_name = text; break;
    case Field::kBillingAccountId: row.billing_account_id = text; break;
    case Field::kSubAccountId: row.sub_account_id = text; break;
    case Field::kRegionId: row.region_id = text; break;
    case Field::kResourceId: row.resource_id = text; break;
    case Field::kResourceType: row.resource_type = text; break;
    case Field::kServiceName: row.service_name = text; break;
    case Field::kSkuId: row.sku_id = text; break;
    case Field::kCommitmentDiscountId: row.commitment_discount_id = text; break;
    case Field::kConsumedUnit: row.consumed_unit = text; break;
    case Field::kPricingUnit: row.pricing_unit = text; break;
    default: break;
  }
}

void RowReader::ReadPlain(size_t i, const ColumnPlan& p, CsvField& f, int64_t line, FocusRow& row) {
  std::string_view v = Unescape(f);
  bool null = IsNull(p, f, v, line);
  std::string_view text = null ? std::string_view() : v;
  if ((p.bit & watched_) && text != last_text_[i]) {
    row.changed |= p.bit;
    last_text_[i].assign(text);
  }
  if (!null) SetText(p.field, text, row);
}

bool RowReader::Read(std::vector<CsvField>& fields, int64_t line, FocusRow& row) {
  if (fields.size() != schema_.plan.size()) {
    issues.Add(line, "", "field-count", [&] {
      return "row has " + std::to_string(fields.size()) + " fields; the header has " +
             std::to_string(schema_.plan.size()) + " (row skipped)";
    });
    ++skipped;
    return false;
  }
  row = FocusRow{};
  // `changed` is against the previous row a sink received: after a row
  // read but skipped, everything counts as changed.
  row.changed = std::exchange(after_skip_, false) ? ~uint64_t{0} : 0;
  Flags flags;
  for (size_t i = 0; i < fields.size(); ++i) {
    const ColumnPlan& p = schema_.plan[i];
    if (p.field == Field::kCustom) continue;
    CsvField& f = fields[i];
    if (p.plain) {
      ReadPlain(i, p, f, line, row);
      continue;
    }
    if (p.direct) {
      row.changed |= p.bit;
      ReadColumn(p, f, line, scratch_);
      Apply(p, f.text, scratch_, row, flags);
      continue;
    }
    const size_t slot = i * kMemoWays + Slot(f.text);
    Memo& m = memo_[slot];
    bool hit = m.valid && f.quoted == m.quoted && f.text == m.text;
    if (!hit || last_slot_[i] != slot) row.changed |= p.bit;
    last_slot_[i] = hit ? slot : kNoSlot;
    if (!hit) {
      int64_t before = issues.total();
      m.text.assign(f.text);  // as in the file, before any unescaping
      m.quoted = f.quoted;
      ReadColumn(p, f, line, m);
      m.valid = issues.total() == before;
    } else if (p.field != Field::kTags) {
      Unescape(f);
    }
    Apply(p, f.text, m, row, flags);
  }
  if (flags.has_start && row.charge_end_us != 0 && row.charge_end_us <= row.charge_start_us) {
    issues.Add(line, "ChargePeriodEnd", "charge-period-order",
               [] { return "ChargePeriodEnd is not after ChargePeriodStart (the end is exclusive)"; });
  }
  if (!flags.usable || !flags.has_start || !flags.has_cost) {
    issues.Add(line, "", "unusable-row", [&] {
      return std::string(!flags.has_start || !flags.usable
                             ? "no usable ChargePeriodStart (row skipped)"
                             : "neither BilledCost nor EffectiveCost has a value (row skipped)");
    });
    ++skipped;
    after_skip_ = true;
    return false;
  }
  ++rows;
  return true;
}

}  // namespace

void IssueLog::Merge(const IssueLog& other) {
  total_ += other.total_;
  for (const auto& [rule, s] : other.by_rule_) {
    auto [it, added] = by_rule_.emplace(rule, s);
    if (added) continue;
    it->second.count += s.count;
    if (s.first.line < it->second.first.line) it->second.first = s.first;
  }
  kept_.insert(kept_.end(), other.kept_.begin(), other.kept_.end());
  std::stable_sort(kept_.begin(), kept_.end(), [](const Issue& a, const Issue& b) { return a.line < b.line; });
  if (kept_.size() > kKept) kept_.resize(kKept);
}

int FocusThreads(const FocusOptions& options) {
  if (options.threads > 0) return options.threads;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

Result<FocusScan> ScanFocusFile(const std::string& path, const FocusOptions& options,
                                const std::vector<RowSink*>& sinks) {
  if (sinks.empty()) return InvalidArgument("no row sink");
  ASSIGN_OR_RETURN(std::unique_ptr<CsvChunker> chunker, CsvChunker::Open(path));
  FocusScan scan;
  // The header is the first record of the first chunk; the rest of that
  // chunk is rows like any other.
  ASSIGN_OR_RETURN(std::optional<CsvChunk> first, chunker->Next());
  if (!first) return InvalidArgument(path + ": the file is empty; a FOCUS file starts with a header row");
  std::vector<CsvField> header;
  CsvRecords records(path, *first);
  ASSIGN_OR_RETURN(bool any, records.Next(header));
  if (!any) return InvalidArgument(path + ": the file is empty; a FOCUS file starts with a header row");
  for (CsvField& f : header) Unescape(f);
  ASSIGN_OR_RETURN(Schema schema, focus_schema::ReadHeader(path, header, options, scan.issues));
  scan.version = schema.version;

  struct Worker {
    RowReader reader;
    Status status;
  };
  std::vector<std::unique_ptr<Worker>> workers;
  for (size_t i = 0; i < sinks.size(); ++i) workers.push_back(std::make_unique<Worker>(Worker{RowReader(schema, options.watched), {}}));
  std::mutex first_mu;
  std::optional<CsvRecords> rest(std::move(records));  // the first chunk after its header
  std::atomic<bool> failed{false};
  auto run = [&](size_t w) {
    Worker& worker = *workers[w];
    std::vector<CsvField> fields;
    FocusRow row;
    auto drain = [&](CsvRecords& recs) -> Status {
      while (true) {
        ASSIGN_OR_RETURN(bool more, recs.Next(fields));
        if (!more) return Status::Ok();
        if (worker.reader.Read(fields, recs.line(), row)) sinks[w]->Add(row);
      }
    };
    {
      std::unique_lock lock(first_mu);
      if (rest) {
        CsvRecords mine = std::move(*rest);
        rest.reset();
        lock.unlock();
        if (Status st = drain(mine); !st.ok()) {
          worker.status = st;
          failed = true;
          return;
        }
      }
    }
    while (!failed) {
      auto chunk = chunker->Next();
      if (!chunk.ok()) {
        worker.status = chunk.status();
        failed = true;
        return;
      }
      if (!*chunk) return;
      CsvRecords recs(path, **chunk);
      if (Status st = drain(recs); !st.ok()) {
        worker.status = st;
        failed = true;
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (size_t w = 1; w < sinks.size(); ++w) threads.emplace_back(run, w);
  run(0);
  for (auto& t : threads) t.join();
  for (auto& w : workers) {
    RETURN_IF_ERROR(w->status);
    scan.issues.Merge(w->reader.issues);
    scan.rows += w->reader.rows;
    scan.skipped += w->reader.skipped;
  }
  return scan;
}

}  // namespace causeway::cost
