#include "audit/importers.h"

#include <zlib.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <unordered_map>

#include <nlohmann/json.hpp>
#include <simdjson.h>

#include "audit/importers/importer.h"
#include "audit/ocsf.h"
#include "causeway/clock.h"
#include "causeway/crypto.h"
#include "causeway/text.h"

namespace causeway::audit {

namespace dom = simdjson::dom;

namespace {

using namespace detail;  // the writer, the sink and each source's normalizer (importers/)

constexpr size_t kMaxIssues = 1000;

// Normalizes a parsed record of the import's source.
class Normalizer {
 public:
  explicit Normalizer(const ImportOptions& o) : o_(o) {}
  Status Record(dom::element record, std::string_view raw, Sink& sink) {
    sink.out.clear();
    if (record.type() != dom::element_type::OBJECT) return InvalidArgument("a record must be a JSON object");
    switch (o_.source) {
      case LogSource::kKubernetes: return Kubernetes(inner_, record, raw, o_, sink);
      case LogSource::kCloudTrail: return CloudTrail(record, raw, o_, sink);
      case LogSource::kGcp: return Gcp(record, raw, o_, sink);
      case LogSource::kAzure: return Azure(record, raw, o_, sink);
      case LogSource::kOkta: return Okta(record, raw, o_, sink);
      case LogSource::kSlurm: return Slurm(record, raw, o_, sink);
    }
    return InvalidArgument("unknown source");
  }

 private:
  const ImportOptions& o_;
  dom::parser inner_;  // for events wrapped in a string
};

// A log file read in chunks, gunzipped when it is gzip (zlib reads plain
// files as they are, straight into the caller's buffer). The buffer always
// has SIMDJSON_PADDING bytes past its data: simdjson reads that far.
class Input {
 public:
  Input(size_t chunk, uint64_t max_bytes, uint64_t max_ratio)
      : chunk_(chunk), max_bytes_(max_bytes), max_ratio_(max_ratio) {}
  ~Input() {
    if (f_) gzclose(f_);
  }
  // `name` is what errors call the file.
  Status Open(const std::string& path, const std::string& name) {
    path_ = name;
    f_ = gzopen(path.c_str(), "rb");
    if (!f_) return NotFound("cannot open " + name + ": " + std::strerror(errno));
    return Status::Ok();
  }
  // Reads until the buffer holds at least a chunk or the file ends.
  Status Fill() {
    while (!eof_ && size_ < chunk_) RETURN_IF_ERROR(ReadMore());
    return Status::Ok();
  }
  // Reads the rest of the file in.
  Status FillAll() {
    while (!eof_) RETURN_IF_ERROR(ReadMore());
    return Status::Ok();
  }
  // Reads one more chunk, growing the buffer (for a line longer than it).
  Status ReadMore() {
    if (buf_.size() < size_ + chunk_ + simdjson::SIMDJSON_PADDING) buf_.resize(size_ + chunk_ + simdjson::SIMDJSON_PADDING);
    int n = gzread(f_, buf_.data() + size_, static_cast<unsigned>(chunk_));
    if (n < 0) {
      int err = 0;
      return InvalidArgument(path_ + ": cannot be read: " + gzerror(f_, &err));
    }
    if (n == 0) eof_ = true;
    size_ += static_cast<size_t>(n);
    total_ += static_cast<uint64_t>(n);
    // Checked as it grows, before the next read: never more than a chunk past a bound.
    if (max_bytes_ > 0 && total_ > max_bytes_) {
      return InvalidArgument(path_ + ": expands to more than the limit of " + std::to_string(max_bytes_) + " bytes");
    }
    if (max_ratio_ > 0 && !gzdirect(f_)) {
      // At least 64 KiB are allowed whatever the ratio: small files compress well.
      uint64_t compressed = static_cast<uint64_t>(std::max<z_off_t>(gzoffset(f_), 1));
      if (total_ > 65536 && total_ > compressed * max_ratio_) {
        return InvalidArgument(path_ + ": decompresses to more than " + std::to_string(max_ratio_) +
                               " times its compressed size (a compression bomb?)");
      }
    }
    return Status::Ok();
  }
  // Drops the first `n` bytes (consumed), keeping the rest at the front.
  void Consume(size_t n) {
    std::memmove(buf_.data(), buf_.data() + n, size_ - n);
    size_ -= n;
  }
  const char* data() const { return buf_.data(); }
  size_t size() const { return size_; }
  bool eof() const { return eof_; }

 private:
  const size_t chunk_;
  const uint64_t max_bytes_, max_ratio_;
  uint64_t total_ = 0;  // decompressed bytes read so far
  std::string path_;  // the file's name in errors
  gzFile f_ = nullptr;
  std::vector<char> buf_ = std::vector<char>(simdjson::SIMDJSON_PADDING);
  size_t size_ = 0;
  bool eof_ = false;
};


// The arrays of records a one-document file holds them in: CloudTrail's
// Records, Azure's records and REST page's value, Kubernetes' EventList
// items, Slurm's jobs.
bool Container(dom::element doc, dom::array& records) {
  for (const char* key : {"Records", "records", "value", "items", "jobs"}) {
    if (!doc[key].get(records)) return true;
  }
  return false;
}

// Where the JSON value starting at `p` ends (one past it), or nullptr when
// it does not end before `e` (cut short). Brackets are counted, never
// recursed into, so any depth costs nothing; strings are skipped with their
// escapes. Nothing is checked but the bracketing: the value is parsed apart.
const char* ValueEnd(const char* p, const char* e) {
  auto string_end = [e](const char* q) -> const char* {  // q at the opening quote
    for (++q; q < e; ++q) {
      if (*q == '\\') {
        ++q;
      } else if (*q == '"') {
        return q + 1;
      }
    }
    return nullptr;
  };
  if (p >= e) return nullptr;
  if (*p == '"') return string_end(p);
  if (*p != '{' && *p != '[') {
    while (p < e && !std::strchr(",]}\n\r\t ", *p)) ++p;
    return p;
  }
  int64_t depth = 0;
  for (; p < e; ++p) {
    if (*p == '"') {
      p = string_end(p);
      if (!p) return nullptr;
      --p;
    } else if (*p == '{' || *p == '[') {
      ++depth;
    } else if (*p == '}' || *p == ']') {
      if (--depth == 0) return p + 1;
    }
  }
  return nullptr;
}

const char* SkipSpace(const char* p, const char* e) {
  while (p < e && std::isspace(static_cast<unsigned char>(*p))) ++p;
  return p;
}

// Whether `line` holds exactly one whole JSON object or array (bracketing
// only): a file whose first line does is JSON lines when a second follows.
bool WholeValue(std::string_view line) {
  const char* b = line.data();
  const char* e = b + line.size();
  b = SkipSpace(b, e);
  if (b == e || (*b != '{' && *b != '[')) return false;
  const char* end = ValueEnd(b, e);
  return end && SkipSpace(end, e) == e;
}

// The first two lines that say something (a UTF-8 byte order mark is
// dropped first), read until both are whole or the file ends ("" for a
// line there is not). They point into the buffer until `in` next reads.
Status FirstLines(Input& in, std::string_view& first, std::string_view& second) {
  if (in.size() >= 3 && std::memcmp(in.data(), "\xEF\xBB\xBF", 3) == 0) in.Consume(3);
  for (;;) {
    const char* e = in.data() + in.size();
    const char* p = SkipSpace(in.data(), e);
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(e - p)));
    const char* q = nl ? SkipSpace(nl + 1, e) : e;
    const char* nl2 = static_cast<const char*>(std::memchr(q, '\n', static_cast<size_t>(e - q)));
    if (!in.eof() && (!nl || !nl2)) {
      RETURN_IF_ERROR(in.ReadMore());
      continue;
    }
    first = std::string_view(p, static_cast<size_t>((nl ? nl : e) - p));
    second = std::string_view(q, static_cast<size_t>((nl2 ? nl2 : e) - q));
    return Status::Ok();
  }
}

// A one-document file that does not parse (cut short, or damaged past some
// point): the records of its array (the document itself, or the array under
// a container key such as CloudTrail's "Records") are read one by one up to
// the damage, each parsed apart, so what came before it is kept. `handle`
// gets each record and its line; `issue` the damage. False when the file
// has no such array (nothing salvaged: it is read as JSON lines instead).
template <typename Handle, typename Issue>
bool Salvage(const char* b, const char* e, dom::parser& parser, Handle handle, Issue report) {
  // Issues are reported only once something is salvaged: otherwise the file
  // is read again as JSON lines, which reports its own.
  std::vector<std::pair<int64_t, std::string>> pending;
  auto issue = [&pending](int64_t line, std::string why) { pending.emplace_back(line, std::move(why)); };
  auto done = [&](bool salvaged) {
    if (salvaged) {
      for (auto& [line, why] : pending) report(line, std::move(why));
    }
    return salvaged;
  };
  const char* p = SkipSpace(b, e);
  if (p == e) return false;
  if (*p == '{') {
    // Find the container key at the top level.
    p = SkipSpace(p + 1, e);
    bool found = false;
    while (p < e && *p == '"') {
      const char* key_end = ValueEnd(p, e);
      if (!key_end) return false;
      std::string_view key(p + 1, static_cast<size_t>(key_end - p - 2));
      p = SkipSpace(key_end, e);
      if (p == e || *p != ':') return false;
      p = SkipSpace(p + 1, e);
      bool container = key == "Records" || key == "records" || key == "value" || key == "items" || key == "jobs";
      if (container && p < e && *p == '[') {
        found = true;
        break;
      }
      const char* v = ValueEnd(p, e);
      if (!v) return false;
      p = SkipSpace(v, e);
      if (p < e && *p == ',') p = SkipSpace(p + 1, e);
    }
    if (!found) return false;
  } else if (*p != '[') {
    return false;
  }
  // p at the array's '['.
  int64_t line = 1 + std::count(b, p, '\n');
  const char* counted = p;
  int64_t kept = 0;
  p = SkipSpace(p + 1, e);
  while (p < e && *p != ']') {
    line += std::count(counted, p, '\n');
    counted = p;
    const char* end = ValueEnd(p, e);
    if (!end) {
      issue(line, "the document is cut short or damaged in the record that starts here: the " + std::to_string(kept) +
                      " records before it were kept");
      return done(kept > 0);
    }
    dom::element record;
    std::string_view raw(p, static_cast<size_t>(end - p));
    // Parsed from a padded copy: simdjson reads past the end of its input.
    simdjson::padded_string padded(raw);
    if (auto err = parser.parse(padded).get(record)) {
      issue(line, std::string("malformed JSON: ") + simdjson::error_message(err));
    } else {
      std::string minified = simdjson::minify(record);
      handle(record, minified, line);
      ++kept;
    }
    p = SkipSpace(end, e);
    if (p < e && *p == ',') p = SkipSpace(p + 1, e);
  }
  if (p == e) {
    issue(line, "the document is cut short after its last whole record: the " + std::to_string(kept) +
                    " records before it were kept");
  } else {
    issue(line, "the document is damaged after its records: the " + std::to_string(kept) + " records were kept");
  }
  return done(true);
}

}  // namespace

std::string ConflictId(std::string_view source_id, std::string_view ocsf_json) {
  return std::string(source_id) + "~" + Sha256Hex(ocsf_json).substr(0, 12);
}

Result<LogSource> ParseLogSource(std::string_view name) {
  if (name == "k8s" || name == "kubernetes") return LogSource::kKubernetes;
  if (name == "cloudtrail") return LogSource::kCloudTrail;
  if (name == "gcp") return LogSource::kGcp;
  if (name == "azure") return LogSource::kAzure;
  if (name == "okta") return LogSource::kOkta;
  if (name == "slurm") return LogSource::kSlurm;
  return InvalidArgument("unknown log source \"" + std::string(name) + "\": expected k8s, cloudtrail, gcp, azure, okta or slurm");
}

std::string_view LogSourceName(LogSource source) {
  switch (source) {
    case LogSource::kKubernetes: return "k8s";
    case LogSource::kCloudTrail: return "cloudtrail";
    case LogSource::kGcp: return "gcp";
    case LogSource::kAzure: return "azure";
    case LogSource::kOkta: return "okta";
    case LogSource::kSlurm: return "slurm";
  }
  return "unknown";
}

std::string_view ActivityName(int class_uid, int a) {
  switch (class_uid) {
    case ocsf::kApiActivity: {
      static constexpr std::string_view names[] = {"other", "create", "read", "update", "delete"};
      return a >= 1 && a <= 4 ? names[a] : "other";
    }
    case ocsf::kScheduledJobActivity: {
      static constexpr std::string_view names[] = {"other", "create", "update", "delete", "enable", "disable", "start"};
      return a >= 1 && a <= 6 ? names[a] : "other";
    }
    case ocsf::kAccountChange: {
      static constexpr std::string_view names[] = {"other",   "create", "enable", "password-change", "password-reset",
                                                   "disable", "delete", "attach-policy", "detach-policy", "lock",
                                                   "mfa-enable", "mfa-disable"};
      return a >= 1 && a <= 11 ? names[a] : "other";
    }
    case ocsf::kGroupManagement: {
      static constexpr std::string_view names[] = {"other",       "assign-privileges", "revoke-privileges",
                                                   "add-user",    "remove-user",       "delete", "create"};
      return a >= 1 && a <= 6 ? names[a] : "other";
    }
    case ocsf::kUserAccess: return a == 1 ? "assign-privileges" : a == 2 ? "revoke-privileges" : "other";
    case ocsf::kAuthentication: return a == 1 ? "logon" : a == 2 ? "logoff" : "other";
    default: return "other";
  }
}

Status IndexEvent(std::string_view text, ImportedAuditEvent& row) {
  thread_local dom::parser parser;
  dom::element ev;
  if (auto err = parser.parse(text.data(), text.size()).get(ev)) {
    return InvalidArgument(std::string("not an OCSF event: ") + simdjson::error_message(err));
  }
  int64_t class_uid = 0, activity = 0, time = 0, status = 0;
  if (ev["class_uid"].get(class_uid) || ev["activity_id"].get(activity) || ev["time"].get(time)) {
    return InvalidArgument("an OCSF event needs class_uid, activity_id and time");
  }
  if (ev["status_id"].get(status)) status = 0;
  row.class_uid = static_cast<int>(class_uid);
  row.time_ms = time;
  row.status_id = static_cast<int>(status);
  row.activity = std::string(ActivityName(row.class_uid, static_cast<int>(activity)));
  dom::element api;
  row.operation.clear();
  if (!ev["api"].get(api)) row.operation = std::string(Field(api, "operation"));
  if (row.operation.empty()) row.operation = row.activity;
  dom::element user;
  std::string actor;
  if (!ev["actor"]["user"].get(user)) {
    std::string_view uid = Field(user, "uid");
    // arn:aws:sts::<account>:assumed-role/<role>/<session>
    if (uid.find(":assumed-role/") != std::string_view::npos) {
      size_t slash = uid.rfind('/');
      actor = uid.substr(slash + 1);
    }
    if (actor.empty()) actor = Field(user, "email_addr");
    if (actor.empty()) actor = Field(user, "name");
    if (actor.empty()) actor = uid;
  }
  row.actor = AsciiLower(actor);
  dom::element subject;
  row.subject = ev["user"].get(subject) ? std::string() : AsciiLower(Field(subject, "name"));
  dom::array resources;
  row.resource.clear();
  if (!ev["resources"].get(resources) && resources.size() > 0) {
    dom::element first = resources.at(0).value_unsafe();
    row.resource = Field(first, "uid");
    if (row.resource.empty()) row.resource = Field(first, "name");
    // Whom the resource is for, when no user is the event's subject.
    dom::element owner;
    if (row.subject.empty() && !first["owner"].get(owner)) row.subject = AsciiLower(Field(owner, "name"));
  }
  // A group change is found by the group's name.
  dom::element group;
  if (!ev["group"].get(group)) {
    std::string_view name = Field(group, "name");
    row.resource = std::string(name.empty() ? Field(group, "uid") : name);
  }
  return Status::Ok();
}

bool NeedsOwnerFromEarlier(const ImportedAuditEvent& row) {
  return row.source == LogSourceName(LogSource::kKubernetes) && row.activity == "delete" && row.subject.empty() &&
         !row.resource.empty();
}

bool TakeOwnerFromEarlier(ImportedAuditEvent& row, const std::vector<std::string>& earlier) {
  using nlohmann::json;
  json ev = json::parse(row.event, nullptr, false);
  if (!ev.is_object() || !ev["resources"].is_array() || ev["resources"].empty() || !ev["resources"][0].is_object()) {
    return false;
  }
  json& resource = ev["resources"][0];
  const std::string type = resource.value("type", ""), ns = resource.value("namespace", "");
  for (const std::string& text : earlier) {
    json other = json::parse(text, nullptr, false);
    if (!other.is_object() || !other["resources"].is_array() || other["resources"].empty()) continue;
    const json& r = other["resources"][0];
    if (!r.is_object() || r.value("type", "") != type || r.value("namespace", "") != ns) continue;
    const std::string op = other["api"].is_object() ? other["api"].value("operation", "") : "";
    if (op != "create" && op != "update" && op != "patch") continue;
    std::string owner = r.contains("owner") && r["owner"].is_object() ? r["owner"].value("name", "") : "";
    if (owner.empty()) continue;
    const std::string from = other["metadata"].is_object() ? other["metadata"].value("uid", "") : "";
    resource["owner"] = {{"name", owner}};
    // OCSF's unmapped: where the owner came from, for whoever reads the event.
    ev["unmapped"]["owner_from"] = from;
    row.subject = AsciiLower(owner);
    row.event = ev.dump(-1, ' ', false, json::error_handler_t::replace);
    return true;
  }
  return false;
}

Result<std::vector<NormalizedEvent>> NormalizeRecord(std::string_view record, const ImportOptions& options) {
  dom::parser parser;
  dom::element doc;
  simdjson::padded_string padded(record);
  if (auto err = parser.parse(padded).get(doc)) {
    return InvalidArgument(std::string("malformed JSON: ") + simdjson::error_message(err));
  }
  Normalizer n(options);
  std::vector<NormalizedEvent> events;
  Sink sink{{}, [&](std::string_view id, std::string_view json) {
              events.push_back(NormalizedEvent{std::string(id), std::string(json)});
            }};
  RETURN_IF_ERROR(n.Record(doc, record, sink));
  return events;
}

Result<ImportStats> ImportLog(const std::string& path, const ImportOptions& options, const EmitFn& emit) {
  const std::string& name = options.name.empty() ? path : options.name;
  Input in(options.chunk_bytes, options.max_bytes, options.max_ratio);
  RETURN_IF_ERROR(in.Open(path, name));
  RETURN_IF_ERROR(in.Fill());
  ImportStats stats;
  Normalizer normalizer(options);
  dom::parser parser;
  // Each source id with a hash of its event and the line it came from: the
  // same id again with other content is a conflict, not a duplicate.
  struct Seen {
    size_t hash;
    int64_t line;
  };
  std::unordered_map<std::string, Seen> seen;
  seen.reserve(in.size() / 512 + 16);  // records are rarely smaller
  int64_t current_line = 0;
  auto issue = [&](int64_t line, std::string reason) {
    ++stats.issues_total;
    if (stats.issues.size() < kMaxIssues) stats.issues.push_back(ImportIssue{name, line, std::move(reason)});
  };
  Sink sink{{}, [&](std::string_view id, std::string_view json) {
              size_t hash = std::hash<std::string_view>{}(json);
              auto [it, fresh] = seen.emplace(id, Seen{hash, current_line});
              if (!fresh) {
                if (it->second.hash == hash) {
                  ++stats.duplicates;
                } else {
                  ++stats.conflicts;
                  std::string kept = ConflictId(id, json);
                  issue(current_line, "event " + std::string(id) + " was already read (line " +
                                          std::to_string(it->second.line) + ") with different content; both are kept, " +
                                          "this one as " + kept + ": check which is right");
                  ++stats.events;
                  emit(kept, json);
                }
                return;
              }
              ++stats.events;
              emit(id, json);
            }};
  sink.out.reserve(1 << 14);
  auto handle = [&](dom::element record, std::string_view raw, int64_t line) {
    ++stats.records;
    current_line = line;
    Status st = normalizer.Record(record, raw, sink);
    if (st.code() == Code::kNotFound) {
      ++stats.skipped;
    } else if (!st.ok()) {
      issue(line, st.message());
    }
  };

  // Records of a parsed value: an array's elements, a container's records
  // (CloudTrail's Records, an EventList's items, …), or the value itself.
  auto records_of = [&](dom::element doc, int64_t line, bool numbered) {
    dom::array records;
    if (doc.type() == dom::element_type::ARRAY) {
      records = doc.get_array().value_unsafe();
    } else if (!Container(doc, records)) {
      std::string raw = simdjson::minify(doc);
      handle(doc, raw, line);
      return;
    }
    int64_t n = 0;
    for (dom::element record : records) {
      std::string raw = simdjson::minify(record);
      handle(record, raw, numbered ? ++n : line);
    }
  };

  // JSON lines when the first line that says something is a whole object
  // or array and another follows; else one document (a JSON array, an
  // object holding the records, a pretty-printed object). A document that
  // does not parse keeps the records before its damage; one with no array of
  // records to salvage is read as JSON lines, so a bad line costs that line.
  std::string_view first_line, second_line;
  RETURN_IF_ERROR(FirstLines(in, first_line, second_line));
  // A first line that is not JSON at all (garbage, a NUL) defers to the
  // second; one that opens a document without closing it is a document's.
  const bool opens = !first_line.empty() && (first_line.front() == '{' || first_line.front() == '[');
  const bool json_lines = !second_line.empty() && (WholeValue(first_line) || (!opens && WholeValue(second_line)));
  if (!json_lines) {
    // One document is parsed whole (a CloudTrail file is tens of MB).
    RETURN_IF_ERROR(in.FillAll());
    dom::element doc;
    auto err = parser.parse(in.data(), in.size(), false).get(doc);
    if (!err) {
      records_of(doc, 1, true);
      return stats;
    }
    if (Salvage(in.data(), in.data() + in.size(), parser, handle, issue)) return stats;
    // Not one document after all: read as JSON lines below.
  }
  // JSON lines, a chunk at a time: memory stays bounded by the chunk (and a
  // line longer than it) whatever the file's size.
  int64_t line = 0;
  for (;;) {
    const char* begin = in.data();
    const char* end = begin + in.size();
    const char* p = begin;
    while (p < end) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
      if (!nl && !in.eof()) break;  // an incomplete line: read on
      const char* stop = nl ? nl : end;
      ++line;
      std::string_view raw(p, static_cast<size_t>(stop - p));
      while (!raw.empty() && (raw.back() == '\r' || raw.back() == ' ')) raw.remove_suffix(1);
      p = nl ? nl + 1 : end;
      if (raw.find_first_not_of(" \t") == std::string_view::npos) continue;
      dom::element record;
      if (auto err = parser.parse(raw.data(), raw.size(), false).get(record)) {
        ++stats.records;
        issue(line, std::string("malformed JSON: ") + simdjson::error_message(err));
        continue;
      }
      // A line may hold an array of records, or a container of them.
      dom::array inner;
      if (record.type() == dom::element_type::ARRAY ||
          (record.type() == dom::element_type::OBJECT && Container(record, inner))) {
        records_of(record, line, false);
      } else {
        handle(record, raw, line);
      }
    }
    if (in.eof()) break;
    bool stuck = p == begin;  // one line longer than the buffer holds
    in.Consume(static_cast<size_t>(p - begin));
    RETURN_IF_ERROR(stuck ? in.ReadMore() : in.Fill());
  }
  return stats;
}

}  // namespace causeway::audit
