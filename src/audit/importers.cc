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

#include <simdjson.h>

#include "audit/importers/importer.h"
#include "audit/ocsf.h"
#include "causeway/clock.h"
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

// JSON lines unless the file is one document: a JSON array, an object
// holding the records, or a pretty-printed object. Judged by the first
// lines that say something (a UTF-8 byte order mark is dropped first); a
// first line that is not JSON at all (garbage, a truncated record, a NUL)
// does not decide it, so it costs that line only. `first_line` is left
// pointing at it, in the buffer, until `in` next reads.
Result<bool> LooksLikeOneDocument(Input& in, dom::parser& parser, std::string_view& first_line) {
  if (in.size() >= 3 && std::memcmp(in.data(), "\xEF\xBB\xBF", 3) == 0) in.Consume(3);
  // The n-th non-blank line, once whole (false until then).
  auto nth_line = [&](int n, std::string_view& out) {
    const char* p = in.data();
    const char* e = p + in.size();
    for (;;) {
      while (p < e && std::isspace(static_cast<unsigned char>(*p))) ++p;
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(e - p)));
      if (!nl && !in.eof()) return false;
      out = std::string_view(p, static_cast<size_t>((nl ? nl : e) - p));
      if (--n == 0 || !nl) return n == 0;
      p = nl + 1;
    }
  };
  std::string_view second_line;
  for (;;) {
    bool whole = nth_line(1, first_line) && (nth_line(2, second_line) || in.eof());
    if (whole || in.eof()) break;
    RETURN_IF_ERROR(in.ReadMore());
  }
  if (!nth_line(2, second_line)) second_line = {};
  auto parses = [&](std::string_view text, dom::element& out) {
    return !text.empty() && !parser.parse(text.data(), text.size(), true).get(out);
  };
  dom::element probe;
  dom::array records;
  if (!first_line.empty() && first_line.front() == '[') return true;
  if (parses(first_line, probe)) return probe.type() == dom::element_type::OBJECT && Container(probe, records);
  // Not a whole record: the start of a pretty-printed document, unless the
  // next line is a record of its own.
  dom::element next;
  return !(parses(second_line, next) && next.type() == dom::element_type::OBJECT);
}
}  // namespace

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
    case ocsf::kScheduledJobActivity:
    case ocsf::kUserManagement: {
      static constexpr std::string_view names[] = {"other", "create", "update", "delete", "enable", "disable", "start"};
      return a >= 1 && a <= (class_uid == ocsf::kScheduledJobActivity ? 6 : 5) ? names[a] : "other";
    }
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
  }
  return Status::Ok();
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
                  issue(current_line, "event " + std::string(id) + " was already read (line " +
                                          std::to_string(it->second.line) +
                                          ") with different content; the first is kept: check which is right");
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

  std::string_view first_line;
  ASSIGN_OR_RETURN(bool one_document, LooksLikeOneDocument(in, parser, first_line));
  // Decided before reading on: the buffer `first_line` points into moves.
  const bool unmistakable = first_line == "{" || (!first_line.empty() && first_line.front() == '[');
  if (one_document) {
    // One document is parsed whole (a CloudTrail file is tens of MB).
    RETURN_IF_ERROR(in.FillAll());
    dom::element doc;
    auto err = parser.parse(in.data(), in.size(), false).get(doc);
    if (!err) {
      dom::array records;
      if (doc.type() == dom::element_type::ARRAY) {
        records = doc.get_array().value_unsafe();
      } else if (!Container(doc, records)) {
        std::string raw = simdjson::minify(doc);
        handle(doc, raw, 1);
        return stats;
      }
      int64_t n = 0;
      for (dom::element record : records) {
        std::string raw = simdjson::minify(record);
        handle(record, raw, ++n);
      }
      return stats;
    }
    if (unmistakable) {  // one document, and a broken one
      issue(1, std::string("the file is neither JSON lines nor one JSON document: ") + simdjson::error_message(err));
      return stats;
    }
    // Not one document after all: read as JSON lines below, so that a
    // damaged line costs that line only.
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
      handle(record, raw, line);
    }
    if (in.eof()) break;
    bool stuck = p == begin;  // one line longer than the buffer holds
    in.Consume(static_cast<size_t>(p - begin));
    RETURN_IF_ERROR(stuck ? in.ReadMore() : in.Fill());
  }
  return stats;
}

}  // namespace causeway::audit
