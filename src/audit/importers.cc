#include "audit/importers.h"

#include <zlib.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <unordered_set>

#include <simdjson.h>

#include "audit/ocsf.h"
#include "causeway/clock.h"
#include "causeway/text.h"

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
  // JSON string escaping, sized first and then written in place: raw_data,
  // a whole source record dense with quotes, is most of every event's
  // bytes. Sixteen bytes are classified at a time (SSE2) where available.
  void Quote(std::string_view s) {
    size_t at = out_.size();
    out_.resize(at + s.size() + EscapedExtra(s) + 2);
    char* o = out_.data() + at;
    *o++ = '"';
    o = WriteEscaped(s, o);
    *o = '"';
  }

  // The escape written for byte `c`, which needs one.
  static char* Escape(unsigned char c, char* o) {
    static constexpr char kHex[] = "0123456789abcdef";
    *o++ = '\\';
    switch (c) {
      case '"': *o++ = '"'; break;
      case '\\': *o++ = '\\'; break;
      case '\n': *o++ = 'n'; break;
      case '\r': *o++ = 'r'; break;
      case '\t': *o++ = 't'; break;
      default:
        std::memcpy(o, "u00", 3);
        o[3] = kHex[c >> 4];
        o[4] = kHex[c & 15];
        o += 5;
    }
    return o;
  }
  static bool Plain(unsigned char c) { return c >= 0x20 && c != '"' && c != '\\'; }
  // Bytes escaping adds beyond the byte itself.
  static size_t ExtraFor(unsigned char c) {
    if (Plain(c)) return 0;
    return (c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t') ? 1 : 5;
  }

#if defined(__SSE2__)
  // Bit i set: byte i of the 16 at `p` needs escaping; `control` the same
  // for control characters alone.
  static unsigned Mask(const char* p, unsigned* control) {
    __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    __m128i ctl = _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8(0x1F)), _mm_set1_epi8(0x1F));
    __m128i quote = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    __m128i slash = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    *control = static_cast<unsigned>(_mm_movemask_epi8(ctl));
    return static_cast<unsigned>(_mm_movemask_epi8(_mm_or_si128(ctl, _mm_or_si128(quote, slash))));
  }
#endif

  static size_t EscapedExtra(std::string_view s) {
    size_t extra = 0, i = 0;
#if defined(__SSE2__)
    for (; i + 16 <= s.size(); i += 16) {
      unsigned control = 0;
      unsigned mask = Mask(s.data() + i, &control);
      extra += static_cast<size_t>(__builtin_popcount(mask));
      for (; control; control &= control - 1) {
        extra += ExtraFor(static_cast<unsigned char>(s[i + static_cast<size_t>(__builtin_ctz(control))])) - 1;
      }
    }
#endif
    for (; i < s.size(); ++i) extra += ExtraFor(static_cast<unsigned char>(s[i]));
    return extra;
  }

  static char* WriteEscaped(std::string_view s, char* o) {
    const char* p = s.data();
    size_t i = 0;
#if defined(__SSE2__)
    for (; i + 16 <= s.size(); i += 16) {
      unsigned control = 0;
      unsigned mask = Mask(p + i, &control);
      if (mask == 0) {
        std::memcpy(o, p + i, 16);
        o += 16;
        continue;
      }
      size_t done = 0;
      for (; mask; mask &= mask - 1) {
        size_t at = static_cast<size_t>(__builtin_ctz(mask));
        std::memcpy(o, p + i + done, at - done);
        o += at - done;
        o = Escape(static_cast<unsigned char>(p[i + at]), o);
        done = at + 1;
      }
      std::memcpy(o, p + i + done, 16 - done);
      o += 16 - done;
    }
#endif
    for (; i < s.size(); ++i) {
      unsigned char c = static_cast<unsigned char>(p[i]);
      if (Plain(c)) {
        *o++ = static_cast<char>(c);
      } else {
        o = Escape(c, o);
      }
    }
    return o;
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

// src_endpoint: an IP address as ip, anything else (a service's name,
// "private", "gce-internal-ip") as domain, "unknown" when there is none.
void SourceEndpoint(Writer& w, std::string_view address) {
  w.Open("src_endpoint");
  if (LooksLikeIp(address)) {
    w.Str("ip", address);
  } else {
    w.Str("domain", address.empty() ? "unknown" : address);
  }
  w.Close();
}

int ActivityOfVerb(std::string_view verb) {
  if (verb == "create") return 1;
  if (verb == "get" || verb == "list" || verb == "watch") return 2;
  if (verb == "update" || verb == "patch") return 3;
  if (verb == "delete" || verb == "deletecollection") return 4;
  return 99;
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

// Where a record's events go: each is written into `out`, then handed on
// with its source id by Emit (a Slurm job record is up to three events).
struct Sink {
  std::string out;
  std::function<void(std::string_view id, std::string_view json)> emit;
  void Emit(std::string_view id) {
    emit(id, out);
    out.clear();
  }
};

// The last dot- or slash-separated word of an operation name:
// "storage.buckets.delete" -> "delete", "MICROSOFT.COMPUTE/VIRTUALMACHINES/WRITE" -> "WRITE".
std::string_view LastWord(std::string_view op) {
  size_t cut = op.find_last_of("./");
  return cut == std::string_view::npos ? op : op.substr(cut + 1);
}

// API Activity's activity for an operation's last word ("DeleteAccessKey",
// "insert", "WRITE"): what it starts with, ignoring case.
int ActivityOfWord(std::string_view word) {
  auto starts = [&](std::initializer_list<std::string_view> prefixes) {
    for (std::string_view p : prefixes) {
      if (word.size() >= p.size() &&
          std::equal(p.begin(), p.end(), word.begin(), [](char a, char b) { return a == (b | 0x20); })) {
        return true;
      }
    }
    return false;
  };
  if (starts({"get", "list", "read", "search", "describe", "lookup", "head", "scan", "query", "testiampermissions",
              "view"})) {
    return 2;
  }
  if (starts({"create", "insert", "run", "put", "start", "add", "attach", "register", "import", "allocate", "request",
              "generate", "issue"})) {
    return 1;
  }
  if (starts({"delete", "terminate", "remove", "detach", "deregister", "unregister", "revoke", "release", "destroy",
              "purge"})) {
    return 4;
  }
  return 3;
}

// OCSF severity_id for a syslog-style level name (GCP, Azure, Okta all use one).
int SeverityOfLevel(std::string_view level) {
  std::string l = AsciiLower(level);
  if (l == "warning" || l == "warn") return ocsf::kSeverityLow;
  if (l == "error") return ocsf::kSeverityMedium;
  if (l == "critical") return 5;
  if (l == "alert" || l == "emergency") return 6;
  return ocsf::kSeverityInformational;
}

// A Kubernetes audit event, or the AKS envelope around one.
Status Kubernetes(dom::parser& inner_parser, dom::element record, std::string_view raw, const ImportOptions& o,
                  Sink& sink) {
  std::string& out = sink.out;
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
  sink.Emit(audit_id);
  return Status::Ok();
}

// One CloudTrail record.
Status CloudTrail(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink) {
  std::string& out = sink.out;
  std::string_view event_id = Field(r, "eventID");
  std::string_view name = Field(r, "eventName");
  std::string_view when = Field(r, "eventTime");
  if (event_id.empty() || name.empty()) return InvalidArgument("a CloudTrail record needs eventID and eventName");
  int64_t time_ms = MillisOf(when);
  if (time_ms <= 0) return InvalidArgument("eventTime is missing or not an RFC 3339 time");
  bool read_only = false;
  if (r["readOnly"].get(read_only)) read_only = false;
  std::string_view error = Field(r, "errorCode");
  int status_id = error.empty() ? ocsf::kStatusSuccess : ocsf::kStatusFailure;

  Writer w(out);
  w.Open();
  Common(w, ocsf::kApiActivity, read_only ? 2 : ActivityOfWord(name), time_ms, status_id,
         ocsf::kSeverityInformational);
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
  SourceEndpoint(w, source);
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
  sink.Emit(event_id);
  return Status::Ok();
}

// One GCP Cloud Audit Logs LogEntry (protoPayload is an AuditLog), as
// `gcloud logging read --format=json` or a log sink writes them; GKE's
// Kubernetes audit logs arrive this way too (serviceName k8s.io).
Status Gcp(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink) {
  bool found = false;
  dom::element p = Child(r, "protoPayload", found);
  if (!found) return InvalidArgument("not a Cloud Audit Logs entry: expected protoPayload");
  std::string_view insert_id = Field(r, "insertId");
  std::string_view method = Field(p, "methodName");
  if (insert_id.empty() || method.empty()) return InvalidArgument("a Cloud Audit Logs entry needs insertId and protoPayload.methodName");
  std::string_view when = Field(r, "timestamp");
  int64_t time_ms = MillisOf(when);
  if (time_ms <= 0) return InvalidArgument("timestamp is missing or not an RFC 3339 time");
  int64_t code = 0;
  bool has_status = false;
  dom::element status = Child(p, "status", has_status);
  if (has_status && status["code"].get(code)) code = 0;
  std::string_view message = has_status ? Field(status, "message") : std::string_view();
  // google.rpc.Status: an empty status or code 0 is OK.
  int status_id = code == 0 ? ocsf::kStatusSuccess : ocsf::kStatusFailure;

  Writer w(sink.out);
  w.Open();
  Common(w, ocsf::kApiActivity, ActivityOfWord(LastWord(method)), time_ms, status_id, SeverityOfLevel(Field(r, "severity")));
  if (code != 0) w.Str("status_code", std::to_string(code)).StrIf("status_detail", message);
  Metadata(w, "Cloud Audit Logs", "Google", insert_id, when);
  w.StrIf("log_name", Field(r, "logName"));
  bool has_res = false;
  dom::element res = Child(r, "resource", has_res);
  dom::element labels;
  bool has_labels = has_res && !res["labels"].get(labels);
  w.Open("cloud").Str("provider", o.provider);
  if (has_labels) {
    std::string_view region = Field(labels, "location");
    if (region.empty()) region = Field(labels, "zone");
    if (region.empty()) region = Field(labels, "region");
    w.StrIf("region", region);
    w.StrIf("project_uid", Field(labels, "project_id"));
  }
  w.Close();
  dom::element auth = Child(p, "authenticationInfo", found);
  w.Open("actor").Open("user");
  if (found) {
    std::string_view email = Field(auth, "principalEmail");
    w.StrIf("name", email).StrIf("email_addr", email).StrIf("uid", Field(auth, "principalSubject"));
  }
  w.Close().Close();
  dom::element meta = Child(p, "requestMetadata", found);
  std::string_view ip = found ? Field(meta, "callerIp") : std::string_view();
  SourceEndpoint(w, ip);
  if (found) w.Open("http_request").StrIf("user_agent", Field(meta, "callerSuppliedUserAgent")).Close();
  w.Open("api").Str("operation", method).Open("service").Str("name", Field(p, "serviceName")).Close().Close();
  std::string_view resource_name = Field(p, "resourceName");
  if (!resource_name.empty()) {
    w.OpenArray("resources").Open().Str("uid", resource_name);
    if (has_res) w.StrIf("type", Field(res, "type"));
    w.Close().CloseArray();
  }
  w.Str("raw_data", raw);
  w.Close();
  sink.Emit(insert_id);
  return Status::Ok();
}

// One Azure Activity Log record: the diagnostic-settings form (a storage
// account's PT1H.json lines, or an Event Hubs {"records": [...]} batch) or the
// REST form (`az monitor activity-log list`, operationName.value, eventDataId).
Status Azure(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink) {
  bool found = false;
  std::string_view operation = Field(r, "operationName");
  dom::element op_obj = Child(r, "operationName", found);
  if (operation.empty() && found) operation = Field(op_obj, "value");
  std::string_view when = Field(r, "time");
  if (when.empty()) when = Field(r, "eventTimestamp");
  std::string_view result = Field(r, "resultType");
  dom::element status_obj = Child(r, "status", found);
  if (result.empty() && found) result = Field(status_obj, "value");
  std::string_view resource_id = Field(r, "resourceId");
  if (operation.empty() || when.empty()) return InvalidArgument("an Azure Activity Log record needs operationName and time");
  int64_t time_ms = MillisOf(when);
  if (time_ms <= 0) return InvalidArgument("time is not an RFC 3339 time");
  // The REST form has a unique eventDataId; diagnostic records are keyed by
  // their operation, correlation, result and time (the same write's Start and
  // Success are two records).
  std::string id(Field(r, "eventDataId"));
  if (id.empty()) {
    std::string_view correlation = Field(r, "correlationId");
    if (correlation.empty()) return InvalidArgument("an Azure Activity Log record needs eventDataId or correlationId");
    id.append(correlation).append("/").append(operation).append("/").append(result).append("/").append(when);
  }
  std::string lower_result = AsciiLower(LastWord(result));
  int status_id = lower_result == "success" || lower_result == "succeeded" ? ocsf::kStatusSuccess
                  : lower_result == "failure" || lower_result == "failed" ? ocsf::kStatusFailure
                                                                          : ocsf::kStatusUnknown;
  std::string_view level = Field(r, "level");

  Writer w(sink.out);
  w.Open();
  Common(w, ocsf::kApiActivity, ActivityOfWord(LastWord(operation)), time_ms, status_id, SeverityOfLevel(level));
  w.StrIf("status_detail", result);
  Metadata(w, "Activity Log", "Microsoft", id, when);
  w.Open("cloud").Str("provider", o.provider).StrIf("region", Field(r, "location"));
  std::string_view subscription = Field(r, "subscriptionId");
  if (!subscription.empty()) w.Open("account").Str("uid", subscription).Close();
  w.Close();
  // Who: the caller (REST), else the token's upn / name claims.
  std::string_view caller = Field(r, "caller");
  dom::element identity = Child(r, "identity", found);
  dom::element claims;
  bool has_claims = found ? !identity["claims"].get(claims) : !r["claims"].get(claims);
  std::string_view upn, oid;
  if (has_claims && claims.type() == dom::element_type::OBJECT) {
    upn = Field(claims, "http://schemas.xmlsoap.org/ws/2005/05/identity/claims/upn");
    if (upn.empty()) upn = Field(claims, "name");
    oid = Field(claims, "http://schemas.microsoft.com/identity/claims/objectidentifier");
  }
  w.Open("actor").Open("user").StrIf("name", caller.empty() ? upn : caller).StrIf("uid", oid).Close().Close();
  std::string_view ip = Field(r, "callerIpAddress");
  dom::element http = Child(r, "httpRequest", found);
  if (ip.empty() && found) ip = Field(http, "clientIpAddress");
  SourceEndpoint(w, ip);
  std::string_view provider_ns = operation.substr(0, operation.find('/'));
  w.Open("api").Str("operation", operation).Open("service").Str("name", provider_ns).Close();
  w.Open("request").StrIf("uid", Field(r, "correlationId")).Close().Close();
  if (!resource_id.empty()) w.OpenArray("resources").Open().Str("uid", resource_id).Close().CloseArray();
  w.Str("raw_data", raw);
  w.Close();
  sink.Emit(id);
  return Status::Ok();
}

// One Okta System Log event (the /api/v1/logs array or JSON lines). Sign-ins
// are Authentication, user lifecycle User Management, the rest API Activity.
Status Okta(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink) {
  std::string_view uuid = Field(r, "uuid");
  std::string_view type = Field(r, "eventType");
  std::string_view when = Field(r, "published");
  if (uuid.empty() || type.empty()) return InvalidArgument("an Okta System Log event needs uuid and eventType");
  int64_t time_ms = MillisOf(when);
  if (time_ms <= 0) return InvalidArgument("published is missing or not an RFC 3339 time");
  bool found = false;
  dom::element outcome = Child(r, "outcome", found);
  std::string_view result = found ? Field(outcome, "result") : std::string_view();
  std::string_view reason = found ? Field(outcome, "reason") : std::string_view();
  int status_id = result == "SUCCESS" || result == "ALLOW" ? ocsf::kStatusSuccess
                  : result == "FAILURE" || result == "DENY" ? ocsf::kStatusFailure
                                                           : ocsf::kStatusUnknown;
  auto starts = [&](std::string_view prefix) { return type.substr(0, prefix.size()) == prefix; };
  int class_uid = ocsf::kApiActivity;
  int activity = 0;
  if (starts("user.session.") || starts("user.authentication.") || starts("policy.evaluate_sign_on")) {
    class_uid = ocsf::kAuthentication;
    activity = type == "user.session.end" ? 2 : 1;  // Logoff : Logon
  } else if (starts("user.lifecycle.") || starts("user.account.")) {
    class_uid = ocsf::kUserManagement;
    std::string_view verb = type.substr(type.rfind('.') + 1);
    activity = verb == "create"                                                     ? 1
               : (starts("user.lifecycle.delete") || verb == "delete")              ? 3
               : (verb == "activate" || verb == "reactivate" || verb == "unsuspend") ? 4
               : (verb == "deactivate" || verb == "suspend")                        ? 5
                                                                                    : 2;
  } else {
    activity = ActivityOfWord(type.substr(type.rfind('.') + 1));
  }

  Writer w(sink.out);
  w.Open();
  Common(w, class_uid, activity, time_ms, status_id, SeverityOfLevel(Field(r, "severity")));
  w.StrIf("message", Field(r, "displayMessage")).StrIf("status_detail", reason);
  Metadata(w, "System Log", "Okta", uuid, when);
  w.Open("cloud").Str("provider", o.provider).Close();
  dom::element actor = Child(r, "actor", found);
  std::string_view actor_name = found ? Field(actor, "alternateId") : std::string_view();
  w.Open("actor").Open("user");
  if (found) w.StrIf("name", actor_name).StrIf("uid", Field(actor, "id")).StrIf("full_name", Field(actor, "displayName"));
  w.Close().Close();
  dom::element client = Child(r, "client", found);
  std::string_view ip = found ? Field(client, "ipAddress") : std::string_view();
  SourceEndpoint(w, ip);
  // The first target that is a user is the account acted on; sign-ins are
  // the actor's own.
  dom::array targets;
  bool has_targets = !r["target"].get(targets);
  std::string_view target_user, target_id;
  if (has_targets) {
    for (dom::element t : targets) {
      if (Field(t, "type") == "User") {
        target_user = Field(t, "alternateId");
        target_id = Field(t, "id");
        break;
      }
    }
  }
  if (class_uid == ocsf::kAuthentication) {
    w.Open("user").Str("name", actor_name.empty() ? "unknown" : actor_name).Close();
    w.Open("service").Str("name", "okta").Close();
    w.Open("dst_endpoint").Str("svc_name", "okta").Close();
  } else if (class_uid == ocsf::kUserManagement) {
    w.Open("user").Str("name", target_user.empty() ? (actor_name.empty() ? "unknown" : actor_name) : target_user).StrIf("uid", target_id).Close();
  }
  w.Open("api").Str("operation", type).Open("service").Str("name", "okta").Close();
  dom::element transaction = Child(r, "transaction", found);
  if (found) w.Open("request").StrIf("uid", Field(transaction, "id")).Close();
  w.Close();
  if (has_targets && targets.size() > 0) {
    w.OpenArray("resources");
    for (dom::element t : targets) {
      w.Open().StrIf("uid", Field(t, "id")).StrIf("name", Field(t, "alternateId")).StrIf("type", Field(t, "type")).Close();
    }
    w.CloseArray();
  }
  w.Str("raw_data", raw);
  w.Close();
  sink.Emit(uuid);
  return Status::Ok();
}

// A Slurm number: an integer (slurmdb v0.0.37, sacct of 21.08) or the
// {"set", "infinite", "number"} object of later versions; nullopt when
// absent, null or unset.
std::optional<int64_t> SlurmNumber(dom::element parent, const char* key) {
  dom::element e;
  if (parent[key].get(e)) return std::nullopt;
  int64_t v = 0;
  if (!e.get(v)) return v;
  bool set = true;
  if (e.type() != dom::element_type::OBJECT || (!e["set"].get(set) && !set) || e["number"].get(v)) return std::nullopt;
  return v;
}

// A job's state: "state": "X", or {"current": "X"} (older), or
// {"current": ["X", ...]} (later versions, the first is the base state).
std::string_view SlurmState(dom::element job) {
  dom::element state;
  if (job["state"].get(state)) return {};
  dom::element current;
  if (state.type() == dom::element_type::OBJECT && !state["current"].get(current)) state = current;
  if (state.type() == dom::element_type::ARRAY) {
    dom::array states = state.get_array().value_unsafe();
    if (states.size() == 0) return {};
    state = states.at(0).value_unsafe();
  }
  std::string_view name;
  return state.get(name) ? std::string_view() : name;
}

// One job of a `sacct --json` document or slurmdbd's REST jobs listing: its
// submission, start and end, each a Scheduled Job Activity event (times are
// Unix seconds in UTC).
Status Slurm(dom::element job, std::string_view raw, const ImportOptions& o, Sink& sink) {
  int64_t job_id = 0;
  if (job["job_id"].get(job_id) || job_id <= 0) return InvalidArgument("a Slurm job needs a positive job_id");
  std::string_view user = Field(job, "user");
  if (user.empty()) return InvalidArgument("a Slurm job needs user");
  dom::element time;
  if (job["time"].get(time) || time.type() != dom::element_type::OBJECT) return InvalidArgument("a Slurm job needs a time object");
  int64_t submitted = SlurmNumber(time, "submission").value_or(0);
  if (submitted <= 0) return InvalidArgument("time.submission is missing or not a Unix time");
  std::string_view cluster = Field(job, "cluster");
  std::string_view name = Field(job, "name");
  std::string_view account = Field(job, "account");
  // An array task is its own job: "<array job>_<task>" as sacct shows it.
  std::string job_name = std::to_string(job_id);
  dom::element array;
  if (!job["array"].get(array) && array.type() == dom::element_type::OBJECT) {
    std::optional<int64_t> array_job = SlurmNumber(array, "job_id"), task = SlurmNumber(array, "task_id");
    if (array_job.value_or(0) > 0 && task) job_name = std::to_string(*array_job) + "_" + std::to_string(*task);
  }
  std::string_view state = SlurmState(job);
  int64_t started = SlurmNumber(time, "start").value_or(0);
  int64_t ended = SlurmNumber(time, "end").value_or(0);
  bool failed = state == "FAILED" || state == "NODE_FAIL" || state == "BOOT_FAIL" || state == "OUT_OF_MEMORY" ||
                state == "TIMEOUT" || state == "DEADLINE" || state == "PREEMPTED";
  std::string id_prefix = std::string("slurm:").append(cluster).append(":").append(job_name).append(":");
  auto event = [&](const char* what, int activity, int64_t seconds, int status_id, std::string_view detail) {
    Writer w(sink.out);
    w.Open();
    Common(w, ocsf::kScheduledJobActivity, activity, seconds * 1000, status_id,
           status_id == ocsf::kStatusFailure ? ocsf::kSeverityLow : ocsf::kSeverityInformational);
    w.StrIf("status_detail", detail);
    std::string id = id_prefix + what;
    Metadata(w, "Slurm", "SchedMD", id, {});
    w.Open("cloud").Str("provider", o.provider).StrIf("region", cluster).Close();
    w.Open("actor").Open("user").Str("name", user).Close().Close();
    w.Open("job").Str("name", job_name).StrIf("desc", name).Open("file").Str("name", name.empty() ? job_name : name).Int("type_id", 1).Close();
    w.Open("user").Str("name", user).Close();
    w.Close();
    w.OpenArray("resources").Open().Str("uid", "slurm/" + std::string(cluster) + "/" + job_name).Str("type", "job").StrIf("group", account).Close().CloseArray();
    w.Str("raw_data", raw);
    w.Close();
    sink.Emit(id);
  };
  event("submit", 1, submitted, ocsf::kStatusSuccess, {});
  if (started > 0) event("start", 6, started, ocsf::kStatusSuccess, {});
  if (ended > 0) {
    int activity = state == "CANCELLED" ? 3 : 2;
    event("end", activity, ended, failed ? ocsf::kStatusFailure : ocsf::kStatusSuccess, state);
  }
  return Status::Ok();
}

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
  Status Open(const std::string& path) {
    path_ = path;
    f_ = gzopen(path.c_str(), "rb");
    if (!f_) return NotFound("cannot open " + path + ": " + std::strerror(errno));
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
  std::string path_;
  gzFile f_ = nullptr;
  std::vector<char> buf_ = std::vector<char>(simdjson::SIMDJSON_PADDING);
  size_t size_ = 0;
  bool eof_ = false;
};

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
  Input in(options.chunk_bytes, options.max_bytes, options.max_ratio);
  RETURN_IF_ERROR(in.Open(path));
  RETURN_IF_ERROR(in.Fill());
  ImportStats stats;
  Normalizer normalizer(options);
  dom::parser parser;
  std::unordered_set<std::string> seen;
  seen.reserve(in.size() / 512 + 16);  // records are rarely smaller
  Sink sink{{}, [&](std::string_view id, std::string_view json) {
              if (!seen.emplace(id).second) {
                ++stats.duplicates;
                return;
              }
              ++stats.events;
              emit(id, json);
            }};
  sink.out.reserve(1 << 14);
  auto issue = [&](int64_t line, std::string reason) {
    ++stats.issues_total;
    if (stats.issues.size() < kMaxIssues) stats.issues.push_back(ImportIssue{path, line, std::move(reason)});
  };
  auto handle = [&](dom::element record, std::string_view raw, int64_t line) {
    ++stats.records;
    Status st = normalizer.Record(record, raw, sink);
    if (st.code() == Code::kNotFound) {
      ++stats.skipped;
    } else if (!st.ok()) {
      issue(line, st.message());
    }
  };

  // JSON lines unless the file is one document: a JSON array, an object
  // holding the records (CloudTrail's Records, Azure's records, Slurm's
  // jobs), or a pretty-printed object. Judged by its first line.
  auto container = [](dom::element doc, dom::array& records) {
    for (const char* key : {"Records", "records", "jobs"}) {
      if (!doc[key].get(records)) return true;
    }
    return false;
  };
  // The first line must be whole to be judged.
  for (;;) {
    const char* b = in.data();
    const char* e = b + in.size();
    while (b < e && std::isspace(static_cast<unsigned char>(*b))) ++b;
    if (in.eof() || (b < e && std::memchr(b, '\n', static_cast<size_t>(e - b)))) break;
    RETURN_IF_ERROR(in.ReadMore());
  }
  {
    dom::array probe_records;
    const char* begin = in.data();
    const char* end = begin + in.size();
    const char* first = begin;
    while (first < end && std::isspace(static_cast<unsigned char>(*first))) ++first;
    const char* first_nl = static_cast<const char*>(std::memchr(first, '\n', static_cast<size_t>(end - first)));
    dom::element probe;
    bool one_document = first < end && (*first == '[' ||
                                        parser.parse(first, static_cast<size_t>((first_nl ? first_nl : end) - first), false).get(probe) ||
                                        (probe.type() == dom::element_type::OBJECT && container(probe, probe_records)));
    if (one_document) {
      // One document is parsed whole (a CloudTrail file is tens of MB).
      RETURN_IF_ERROR(in.FillAll());
      dom::element doc;
      if (auto err = parser.parse(in.data(), in.size(), false).get(doc)) {
        issue(1, std::string("the file is neither JSON lines nor one JSON document: ") + simdjson::error_message(err));
        return stats;
      }
      dom::array records;
      if (doc.type() == dom::element_type::ARRAY) {
        records = doc.get_array().value_unsafe();
      } else if (!container(doc, records)) {
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
