#include "audit/importers.h"

#include <zlib.h>

#include <cctype>
#include <cstring>
#include <filesystem>
#include <unordered_set>

#include <simdjson.h>

#include "audit/ocsf.h"
#include "causeway/clock.h"

namespace causeway::audit {

namespace dom = simdjson::dom;

namespace {

constexpr size_t kMaxIssues = 1000;

// Writes JSON text straight into a string: the output of a million events
// is built without a DOM.
class Writer {
 public:
  explicit Writer(std::string& out) : out_(out) {}
  Writer& Open(std::string_view key = {}) {
    Key(key);
    out_ += '{';
    first_.push_back(true);
    return *this;
  }
  Writer& OpenArray(std::string_view key) {
    Key(key);
    out_ += '[';
    first_.push_back(true);
    return *this;
  }
  Writer& Close() {
    out_ += '}';
    first_.pop_back();
    return *this;
  }
  Writer& CloseArray() {
    out_ += ']';
    first_.pop_back();
    return *this;
  }
  Writer& Str(std::string_view key, std::string_view value) {
    Key(key);
    Quote(value);
    return *this;
  }
  // Only when `value` is not empty.
  Writer& StrIf(std::string_view key, std::string_view value) { return value.empty() ? *this : Str(key, value); }
  Writer& Int(std::string_view key, int64_t value) {
    Key(key);
    out_ += std::to_string(value);
    return *this;
  }
  Writer& Bool(std::string_view key, bool value) {
    Key(key);
    out_ += value ? "true" : "false";
    return *this;
  }

 private:
  void Key(std::string_view key) {
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
    }
    if (!key.empty()) {
      out_ += '"';
      out_ += key;  // keys are the writer's own, never input
      out_ += "\":";
    }
  }
  // JSON string escaping. Bytes that need none (not control characters,
  // quotes or backslashes) are found eight at a time and copied as runs:
  // raw_data, a whole source record, is most of every event's bytes.
  void Quote(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_.reserve(out_.size() + s.size() + s.size() / 4 + 2);
    out_ += '"';
    const char* p = s.data();
    const char* end = p + s.size();
    const char* run = p;
    while (p < end) {
      if (end - p >= 8) {
        uint64_t v;
        std::memcpy(&v, p, 8);
        if (!NeedsEscape(v)) {
          p += 8;
          continue;
        }
      }
      unsigned char c = static_cast<unsigned char>(*p);
      if (c >= 0x20 && c != '"' && c != '\\') {
        ++p;
        continue;
      }
      out_.append(run, static_cast<size_t>(p - run));
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        default:
          out_ += "\\u00";
          out_ += kHex[c >> 4];
          out_ += kHex[c & 15];
      }
      run = ++p;
    }
    out_.append(run, static_cast<size_t>(end - run));
    out_ += '"';
  }
  // Whether any of the eight bytes of `v` is below 0x20, '"' or '\\'.
  static bool NeedsEscape(uint64_t v) {
    constexpr uint64_t kOnes = 0x0101010101010101ULL, kHighs = 0x8080808080808080ULL;
    auto zero_byte = [](uint64_t x) { return (x - kOnes) & ~x & kHighs; };
    uint64_t below_space = (v - kOnes * 0x20) & ~v & kHighs;
    return (below_space | zero_byte(v ^ (kOnes * '"')) | zero_byte(v ^ (kOnes * '\\'))) != 0;
  }

  std::string& out_;
  std::vector<bool> first_;
};

std::string_view Field(dom::element e, const char* key) {
  std::string_view v;
  if (e[key].get(v)) return {};
  return v;
}

dom::element Child(dom::element e, const char* key, bool& found) {
  dom::element c;
  found = !e[key].get(c) && !c.is_null();
  return c;
}

// "2026-11-30T12:34:56.123456Z" (or with an offset) to milliseconds since
// the epoch; 0 if it is not a time.
int64_t MillisOf(std::string_view text) {
  auto t = ParseRfc3339(text);
  return t.ok() ? ToUnixMicros(*t) / 1000 : 0;
}

bool LooksLikeIp(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == '.' || c == ':')) return false;
  }
  return true;
}

int ActivityOfVerb(std::string_view verb) {
  if (verb == "create") return 1;
  if (verb == "get" || verb == "list" || verb == "watch") return 2;
  if (verb == "update" || verb == "patch") return 3;
  if (verb == "delete" || verb == "deletecollection") return 4;
  return 99;
}

int ActivityOfEventName(std::string_view name, bool read_only) {
  auto starts = [&](std::initializer_list<std::string_view> prefixes) {
    for (std::string_view p : prefixes) {
      if (name.substr(0, p.size()) == p) return true;
    }
    return false;
  };
  if (read_only || starts({"Get", "List", "Describe", "Lookup", "Head", "Search", "Scan", "Query"})) return 2;
  if (starts({"Create", "Run", "Put", "Start", "Add", "Attach", "Register", "Import", "Allocate", "Request"})) return 1;
  if (starts({"Delete", "Terminate", "Remove", "Detach", "Deregister", "Revoke", "Release"})) return 4;
  return 3;
}

void Common(Writer& w, int class_uid, int activity, int64_t time_ms, int status, int severity) {
  w.Int("class_uid", class_uid)
      .Int("category_uid", class_uid / 1000)
      .Int("activity_id", activity)
      .Int("type_uid", int64_t{class_uid} * 100 + activity)
      .Int("severity_id", severity)
      .Int("status_id", status)
      .Int("time", time_ms);
}

void Metadata(Writer& w, std::string_view product, std::string_view vendor, std::string_view uid,
              std::string_view original_time) {
  w.Open("metadata");
  w.Open("product").Str("name", product).Str("vendor_name", vendor).Close();
  w.Str("version", ocsf::kSchemaVersion).Str("uid", uid).StrIf("original_time", original_time);
  w.Close();
}

// A Kubernetes audit event, or the AKS envelope around one.
Status Kubernetes(dom::parser& inner_parser, dom::element record, std::string_view raw, const ImportOptions& o,
                  std::string& out, std::string& id) {
  dom::element ev = record;
  std::string_view kind = Field(record, "kind");
  simdjson::padded_string inner_text;
  if (kind != "Event") {
    // AKS diagnostic logs: {"category": "kube-audit", "properties": {"log": "<event JSON>"}}.
    bool has_props = false;
    dom::element props = Child(record, "properties", has_props);
    std::string_view log = has_props ? Field(props, "log") : Field(record, "log");
    if (log.empty()) return InvalidArgument("not a Kubernetes audit event: expected kind \"Event\" (or an AKS record with properties.log)");
    inner_text = simdjson::padded_string(log);
    if (inner_parser.parse(inner_text).get(ev)) return InvalidArgument("the wrapped event in properties.log is not JSON");
    if (Field(ev, "kind") != "Event") return InvalidArgument("the wrapped record is not a Kubernetes audit event");
  }
  std::string_view audit_id = Field(ev, "auditID");
  std::string_view verb = Field(ev, "verb");
  if (audit_id.empty() || verb.empty()) return InvalidArgument("a Kubernetes audit event needs auditID and verb");
  std::string_view stage = Field(ev, "stage");
  if (stage == "RequestReceived" || stage == "ResponseStarted") return NotFound("an earlier stage of the request");
  std::string_view ts = Field(ev, "stageTimestamp");
  if (ts.empty()) ts = Field(ev, "requestReceivedTimestamp");
  int64_t time_ms = MillisOf(ts);
  if (time_ms <= 0) return InvalidArgument("stageTimestamp is missing or not an RFC 3339 time");
  id.assign(audit_id);

  bool found = false;
  int64_t code = 0;
  dom::element status = Child(ev, "responseStatus", found);
  if (found && status["code"].get(code)) code = 0;
  int status_id = code == 0 ? ocsf::kStatusUnknown : code < 400 ? ocsf::kStatusSuccess : ocsf::kStatusFailure;
  int activity = ActivityOfVerb(verb);

  Writer w(out);
  w.Open();
  Common(w, ocsf::kApiActivity, activity, time_ms, status_id, ocsf::kSeverityInformational);
  if (stage == "Panic") w.Str("status_detail", "Panic");
  Metadata(w, "Kubernetes", "Kubernetes", audit_id, ts);
  w.Open("cloud").Str("provider", o.provider).Close();
  w.Open("actor").Open("user");
  dom::element user = Child(ev, "user", found);
  if (found) {
    w.StrIf("name", Field(user, "username")).StrIf("uid", Field(user, "uid"));
    dom::array groups;
    if (!user["groups"].get(groups)) {
      w.OpenArray("groups");
      for (dom::element g : groups) {
        std::string_view name;
        if (!g.get(name)) w.Open().Str("name", name).Close();
      }
      w.CloseArray();
    }
  }
  w.Close().Close();
  w.Open("src_endpoint");
  dom::array ips;
  std::string_view ip;
  if (!ev["sourceIPs"].get(ips) && ips.size() > 0 && !ips.at(0).get(ip)) w.Str("ip", ip);
  w.StrIf("svc_name", Field(ev, "userAgent").empty() ? "kube-apiserver" : "");
  w.Close();
  w.Open("http_request").StrIf("user_agent", Field(ev, "userAgent")).Open("url").Str("path", Field(ev, "requestURI")).Close().Close();
  dom::element ref = Child(ev, "objectRef", found);
  std::string_view group = found ? Field(ref, "apiGroup") : std::string_view();
  w.Open("api").Str("operation", verb);
  w.Open("service").Str("name", group.empty() ? "kubernetes" : group).Close();
  w.Open("request").Str("uid", audit_id).Close().Close();
  if (found) {
    w.OpenArray("resources").Open();
    w.StrIf("type", Field(ref, "resource")).StrIf("name", Field(ref, "name")).StrIf("namespace", Field(ref, "namespace"));
    w.Close().CloseArray();
  }
  w.Str("raw_data", raw);
  w.Close();
  return Status::Ok();
}

// One CloudTrail record.
Status CloudTrail(dom::element r, std::string_view raw, const ImportOptions& o, std::string& out, std::string& id) {
  std::string_view event_id = Field(r, "eventID");
  std::string_view name = Field(r, "eventName");
  std::string_view when = Field(r, "eventTime");
  if (event_id.empty() || name.empty()) return InvalidArgument("a CloudTrail record needs eventID and eventName");
  int64_t time_ms = MillisOf(when);
  if (time_ms <= 0) return InvalidArgument("eventTime is missing or not an RFC 3339 time");
  id.assign(event_id);
  bool read_only = false;
  if (r["readOnly"].get(read_only)) read_only = false;
  std::string_view error = Field(r, "errorCode");
  int status_id = error.empty() ? ocsf::kStatusSuccess : ocsf::kStatusFailure;

  Writer w(out);
  w.Open();
  Common(w, ocsf::kApiActivity, ActivityOfEventName(name, read_only), time_ms, status_id, ocsf::kSeverityInformational);
  if (!error.empty()) w.Str("status_code", error).StrIf("status_detail", Field(r, "errorMessage"));
  Metadata(w, "CloudTrail", "AWS", event_id, when);
  w.Open("cloud").Str("provider", o.provider).StrIf("region", Field(r, "awsRegion"));
  std::string_view account = Field(r, "recipientAccountId");
  if (!account.empty()) w.Open("account").Str("uid", account).Close();
  w.Close();
  bool found = false;
  dom::element who = Child(r, "userIdentity", found);
  w.Open("actor").Open("user");
  if (found) {
    std::string_view user_name = Field(who, "userName");
    if (user_name.empty()) {
      dom::element issuer;
      if (!who["sessionContext"]["sessionIssuer"].get(issuer)) user_name = Field(issuer, "userName");
    }
    std::string_view arn = Field(who, "arn");
    w.StrIf("name", user_name.empty() ? arn : user_name)
        .StrIf("uid", arn.empty() ? Field(who, "principalId") : arn)
        .StrIf("type", Field(who, "type"));
    std::string_view owner = Field(who, "accountId");
    if (!owner.empty()) w.Open("account").Str("uid", owner).Close();
  }
  w.Close().Close();
  std::string_view source = Field(r, "sourceIPAddress");
  w.Open("src_endpoint");
  if (LooksLikeIp(source)) {
    w.Str("ip", source);
  } else {
    w.Str("domain", source.empty() ? "unknown" : source);
  }
  w.Close();
  w.Open("http_request").StrIf("user_agent", Field(r, "userAgent")).Close();
  w.Open("api").Str("operation", name).Open("service").Str("name", Field(r, "eventSource")).Close();
  w.Open("request").Str("uid", Field(r, "requestID")).Close().Close();
  dom::array resources;
  if (!r["resources"].get(resources) && resources.size() > 0) {
    w.OpenArray("resources");
    for (dom::element res : resources) {
      w.Open().StrIf("uid", Field(res, "ARN")).StrIf("type", Field(res, "type")).Close();
    }
    w.CloseArray();
  }
  w.Str("raw_data", raw);
  w.Close();
  return Status::Ok();
}

// Normalizes a parsed record of the import's source.
class Normalizer {
 public:
  explicit Normalizer(const ImportOptions& o) : o_(o) {}
  Status Record(dom::element record, std::string_view raw, std::string& out, std::string& id) {
    out.clear();
    if (record.type() != dom::element_type::OBJECT) return InvalidArgument("a record must be a JSON object");
    return o_.source == LogSource::kKubernetes ? Kubernetes(inner_, record, raw, o_, out, id)
                                               : CloudTrail(record, raw, o_, out, id);
  }

 private:
  const ImportOptions& o_;
  dom::parser inner_;  // for events wrapped in a string
};

// The whole file, gunzipped when it is gzip (zlib reads plain files as they are).
Result<std::string> ReadAll(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) return NotFound("cannot open " + path + ": " + std::strerror(errno));
  gzbuffer(f, 1 << 20);
  std::string data;
  // Sized up front: growing a buffer of gigabytes by doubling costs copies
  // and page faults (a compressed file is read into about five times its size).
  std::error_code ec;
  uintmax_t on_disk = std::filesystem::file_size(path, ec);
  if (!ec) data.reserve(static_cast<size_t>(on_disk) * (gzdirect(f) ? 1 : 5) + simdjson::SIMDJSON_PADDING);
  std::vector<char> buf(1 << 20);
  for (;;) {
    int n = gzread(f, buf.data(), static_cast<unsigned>(buf.size()));
    if (n < 0) {
      int err = 0;
      std::string what = gzerror(f, &err);
      gzclose(f);
      return InvalidArgument(path + ": cannot be read: " + what);
    }
    if (n == 0) break;
    data.append(buf.data(), static_cast<size_t>(n));
  }
  gzclose(f);
  return data;
}

}  // namespace

Result<LogSource> ParseLogSource(std::string_view name) {
  if (name == "k8s" || name == "kubernetes") return LogSource::kKubernetes;
  if (name == "cloudtrail") return LogSource::kCloudTrail;
  return InvalidArgument("unknown log source \"" + std::string(name) + "\": expected k8s or cloudtrail");
}

Result<std::string> NormalizeRecord(std::string_view record, const ImportOptions& options, std::string* source_id) {
  dom::parser parser;
  dom::element doc;
  simdjson::padded_string padded(record);
  if (auto err = parser.parse(padded).get(doc)) {
    return InvalidArgument(std::string("malformed JSON: ") + simdjson::error_message(err));
  }
  Normalizer n(options);
  std::string out, id;
  RETURN_IF_ERROR(n.Record(doc, record, out, id));
  if (source_id) *source_id = id;
  return out;
}

Result<ImportStats> ImportLog(const std::string& path, const ImportOptions& options, const EmitFn& emit) {
  ASSIGN_OR_RETURN(std::string data, ReadAll(path));
  size_t size = data.size();
  // simdjson reads up to SIMDJSON_PADDING bytes past what it parses.
  data.append(simdjson::SIMDJSON_PADDING, '\0');
  ImportStats stats;
  Normalizer normalizer(options);
  dom::parser parser;
  std::unordered_set<std::string> seen;
  seen.reserve(size / 512 + 16);  // records are rarely smaller
  std::string out, id;
  out.reserve(1 << 14);
  auto issue = [&](int64_t line, std::string reason) {
    ++stats.issues_total;
    if (stats.issues.size() < kMaxIssues) stats.issues.push_back(ImportIssue{path, line, std::move(reason)});
  };
  auto handle = [&](dom::element record, std::string_view raw, int64_t line) {
    ++stats.records;
    Status st = normalizer.Record(record, raw, out, id);
    if (st.code() == Code::kNotFound) {
      ++stats.skipped;
    } else if (!st.ok()) {
      issue(line, st.message());
    } else if (!seen.insert(id).second) {
      ++stats.duplicates;
    } else {
      ++stats.events;
      emit(id, out);
    }
  };

  // JSON lines unless the file is one document (a Records array, a JSON
  // array, or a pretty-printed object).
  const char* begin = data.data();
  const char* end = begin + size;
  const char* first = begin;
  while (first < end && std::isspace(static_cast<unsigned char>(*first))) ++first;
  const char* first_nl = static_cast<const char*>(std::memchr(first, '\n', static_cast<size_t>(end - first)));
  dom::element probe;
  bool one_document = first < end && (*first == '[' ||
                                      parser.parse(first, static_cast<size_t>((first_nl ? first_nl : end) - first), false).get(probe) ||
                                      (probe.type() == dom::element_type::OBJECT && !probe["Records"].error()));
  if (one_document) {
    dom::element doc;
    if (auto err = parser.parse(begin, size, false).get(doc)) {
      issue(1, std::string("the file is neither JSON lines nor one JSON document: ") + simdjson::error_message(err));
      return stats;
    }
    dom::array records;
    if (doc.type() == dom::element_type::ARRAY) {
      records = doc.get_array().value_unsafe();
    } else if (doc["Records"].get(records)) {
      int64_t line = 1;
      std::string raw = simdjson::minify(doc);
      handle(doc, raw, line);
      return stats;
    }
    int64_t n = 0;
    for (dom::element record : records) {
      std::string raw = simdjson::minify(record);
      handle(record, raw, ++n);
    }
    return stats;
  }
  int64_t line = 0;
  for (const char* p = begin; p < end;) {
    const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
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
  return stats;
}

}  // namespace causeway::audit
