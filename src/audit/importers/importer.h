// What every importer of a provider's log shares (internal to src/audit):
// the JSON writer the OCSF events are built with, the fields common to
// every event, and one normalizing function per source, each in its own
// file beside this one. The writer and helpers are inline: they run for
// every event of a million-event import.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <simdjson.h>

#include "audit/importers.h"
#include "audit/ocsf.h"
#include "causeway/clock.h"
#include "causeway/text.h"

namespace causeway::audit::detail {

namespace dom = simdjson::dom;

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

inline std::string_view Field(dom::element e, const char* key) {
  std::string_view v;
  if (e[key].get(v)) return {};
  return v;
}

// The object under `key`; `found` is false when there is none, or when
// the value is not an object (a string where a record should have an
// object is read as if the object were missing).
inline dom::element Child(dom::element e, const char* key, bool& found) {
  dom::element c;
  found = !e[key].get(c) && c.type() == dom::element_type::OBJECT;
  return c;
}

// "2026-11-30T12:34:56.123456Z" (or with an offset) to milliseconds since
// the epoch; 0 if it is not a time.
inline int64_t MillisOf(std::string_view text) {
  auto t = ParseRfc3339(text);
  return t.ok() ? ToUnixMicros(*t) / 1000 : 0;
}

inline bool LooksLikeIp(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!(std::isxdigit(static_cast<unsigned char>(c)) || c == '.' || c == ':')) return false;
  }
  return true;
}

// src_endpoint: an IP address as ip, anything else (a service's name,
// "private", "gce-internal-ip") as domain. A record that names no source
// says so with OCSF's own "Unknown" endpoint type, never an invented name.
inline void SourceEndpoint(Writer& w, std::string_view address) {
  w.Open("src_endpoint");
  // Logs say "no address" in words too (Okta's "null"): never a domain.
  auto none = [](std::string_view a) {
    for (std::string_view word : {"null", "none", "unknown", "-", "n/a"}) {
      if (a.size() == word.size() && std::equal(a.begin(), a.end(), word.begin(), [](char x, char y) {
            return std::tolower(static_cast<unsigned char>(x)) == y;
          })) {
        return true;
      }
    }
    return false;
  };
  if (address.empty() || none(address)) {
    w.Int("type_id", 0).Str("type", "Unknown");
  } else if (LooksLikeIp(address)) {
    w.Str("ip", address);
  } else {
    w.Str("domain", address);
  }
  w.Close();
}

inline int ActivityOfVerb(std::string_view verb) {
  if (verb == "create") return 1;
  if (verb == "get" || verb == "list" || verb == "watch") return 2;
  if (verb == "update" || verb == "patch") return 3;
  if (verb == "delete" || verb == "deletecollection") return 4;
  return 99;
}

inline void Common(Writer& w, int class_uid, int activity, int64_t time_ms, int status, int severity) {
  w.Int("class_uid", class_uid)
      .Int("category_uid", class_uid / 1000)
      .Int("activity_id", activity)
      .Int("type_uid", int64_t{class_uid} * 100 + activity)
      .Int("severity_id", severity)
      .Int("status_id", status)
      .Int("time", time_ms);
}

inline void Metadata(Writer& w, std::string_view product, std::string_view vendor, std::string_view uid,
                     std::string_view original_time, std::string_view log_name = {}) {
  w.Open("metadata");
  w.Open("product").Str("name", product).Str("vendor_name", vendor).Close();
  w.Str("version", ocsf::kSchemaVersion).Str("uid", uid).StrIf("original_time", original_time).StrIf("log_name", log_name);
  w.Close();
}

// A user the record does not name: OCSF's Unknown type, nothing invented.
inline void UnknownUser(Writer& w, std::string_view key = "user") { w.Open(key).Int("type_id", 0).Str("type", "Unknown").Close(); }

// Whether a location names a zone ("us-central1-a", "europe-west4-b")
// rather than a region: a zone is not written as cloud.region.
inline bool LooksLikeZone(std::string_view location) {
  size_t dash = location.rfind('-');
  return dash != std::string_view::npos && dash + 2 == location.size() &&
         std::islower(static_cast<unsigned char>(location.back())) && dash > 0 &&
         std::isdigit(static_cast<unsigned char>(location[dash - 1]));
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
inline std::string_view LastWord(std::string_view op) {
  size_t cut = op.find_last_of("./");
  return cut == std::string_view::npos ? op : op.substr(cut + 1);
}

// API Activity's activity for an operation's last word ("DeleteAccessKey",
// "insert", "WRITE"): what it starts with, ignoring case; OCSF's Other (99)
// when the word says nothing known (AssumeRole, SignJwt, ConsoleLogin),
// never a guess.
inline int ActivityOfWord(std::string_view word) {
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
              "view", "aggregatedlist", "batchget", "watch", "select", "download", "export", "fetch"})) {
    return 2;
  }
  if (starts({"create", "insert", "run", "put", "start", "add", "attach", "register", "import", "allocate", "request",
              "generate", "issue", "copy", "upload", "clone", "launch"})) {
    return 1;
  }
  if (starts({"update", "patch", "modify", "set", "write", "change", "edit", "replace", "enable", "disable", "reset",
              "rotate", "tag", "untag", "associate", "disassociate", "apply", "move", "rename", "resize", "stop",
              "reboot", "restart", "suspend", "resume"})) {
    return 3;
  }
  if (starts({"delete", "terminate", "remove", "detach", "deregister", "unregister", "revoke", "release", "destroy",
              "purge"})) {
    return 4;
  }
  return 99;
}

// OCSF severity_id for a syslog-style level name (GCP, Azure, Okta all use one).
inline int SeverityOfLevel(std::string_view level) {
  std::string l = AsciiLower(level);
  if (l == "warning" || l == "warn") return ocsf::kSeverityLow;
  if (l == "error") return ocsf::kSeverityMedium;
  if (l == "critical") return 5;
  if (l == "alert" || l == "emergency") return 6;
  return ocsf::kSeverityInformational;
}

// One function per source: writes the record's events into the sink and
// emits each; kInvalidArgument with the reason when the record cannot be
// read, kNotFound when it is fine but not audit-worthy.
Status Kubernetes(dom::parser& inner_parser, dom::element record, std::string_view raw, const ImportOptions& o,
                  Sink& sink);
Status CloudTrail(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink);
Status Gcp(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink);
Status Azure(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink);
Status Okta(dom::element r, std::string_view raw, const ImportOptions& o, Sink& sink);
Status Slurm(dom::element job, std::string_view raw, const ImportOptions& o, Sink& sink);

}  // namespace causeway::audit::detail
