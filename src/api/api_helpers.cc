#include "api/api_helpers.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>

#include <cstdio>
#include <filesystem>

#include "causeway/file_io.h"
#include "causeway/json_input.h"
#include "spec/spec_json.h"

namespace causeway::api {

using nlohmann::json;

HttpResponse ErrorResponse(const Status& status) {
  json details = json::object();
  if (!status.diagnostics().empty()) {
    json diags = json::array();
    for (const auto& d : status.diagnostics()) diags.push_back(ToJson(d));
    details["diagnostics"] = diags;
  }
  details["retryable"] = IsRetryable(status.code());
  json body = {{"error", {{"code", CodeName(status.code())}, {"message", status.message()}, {"details", details}}}};
  HttpResponse r;
  r.status = HttpStatus(status.code());
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  if (IsRetryable(status.code())) r.headers.emplace_back("Retry-After", "1");
  return r;
}

HttpResponse JsonResponse(int status, const json& body) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

Result<json> ParseJsonBody(const HttpRequest& req) {
  if (req.body.empty()) return InvalidArgument("the request body is empty: expected a JSON object");
  ASSIGN_OR_RETURN(json j, ParseUntrustedJson(req.body, "request body"));
  if (!j.is_object()) return InvalidArgument("the request body must be a JSON object");
  return j;
}

Result<JsonBody> JsonBody::Parse(const HttpRequest& req) {
  ASSIGN_OR_RETURN(json j, ParseJsonBody(req));
  return JsonBody(std::move(j));
}

const json& JsonBody::Raw(std::string_view field) const {
  static const json kNull;
  auto it = j_.find(field);
  return it == j_.end() ? kNull : *it;
}

Status JsonBody::Wrong(std::string_view field, std::string_view expected) const {
  std::string f(field);
  return InvalidArgument("field \"" + f + "\" must be " + std::string(expected),
                         {Diagnostic{"request body", 0, 0, f, "expected " + std::string(expected)}});
}

Result<std::string> JsonBody::String(std::string_view field, std::string fallback) const {
  const json& v = Raw(field);
  if (v.is_null()) return fallback;
  if (!v.is_string()) return Wrong(field, "a string");
  return v.get<std::string>();
}

Result<std::string> JsonBody::RequiredString(std::string_view field, std::string_view what) const {
  ASSIGN_OR_RETURN(std::string v, String(field));
  if (v.empty()) return Wrong(field, what);
  return v;
}

Result<std::vector<std::string>> JsonBody::Strings(std::string_view field) const {
  const json& v = Raw(field);
  std::vector<std::string> out;
  if (v.is_null()) return out;
  if (!v.is_array()) return Wrong(field, "a list of strings");
  for (const json& e : v) {
    if (!e.is_string()) return Wrong(field, "a list of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

Result<std::optional<int64_t>> JsonBody::Int(std::string_view field, int64_t min, int64_t max) const {
  const json& v = Raw(field);
  if (v.is_null()) return std::optional<int64_t>();
  std::string range = "an integer from " + std::to_string(min) + " to " + std::to_string(max);
  if (!v.is_number_integer()) return Wrong(field, range);
  // Unsigned values past INT64_MAX are out of range, not wrapped.
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(max)) return Wrong(field, range);
  int64_t n = v.get<int64_t>();
  if (n < min || n > max) return Wrong(field, range);
  return std::optional<int64_t>(n);
}

Result<std::optional<bool>> JsonBody::Bool(std::string_view field) const {
  const json& v = Raw(field);
  if (v.is_null()) return std::optional<bool>();
  if (!v.is_boolean()) return Wrong(field, "true or false");
  return std::optional<bool>(v.get<bool>());
}

// The integer query parameter `name`, nullopt when absent; kInvalidArgument
// outside [min, max], saying what `it` is.
Result<std::optional<int64_t>> QueryInt(const HttpRequest& req, const char* name, int64_t min, int64_t max,
                                        const char* it) {
  std::string s = req.Query(name);
  if (s.empty()) return std::optional<int64_t>();
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < min || v > max) {
    return InvalidArgument(std::string("invalid ") + name + " \"" + s + "\": expected " + it);
  }
  return std::optional<int64_t>(v);
}

Result<int> LimitParam(const HttpRequest& req) {
  ASSIGN_OR_RETURN(auto v, QueryInt(req, "limit", 1, 1000, "an integer from 1 to 1000"));
  return static_cast<int>(v.value_or(100));
}

Result<std::optional<Timestamp>> TimeParam(const HttpRequest& req, const char* name, Timestamp now) {
  std::string s = req.Query(name);
  if (s.empty()) return std::optional<Timestamp>();
  if (auto d = ParseDuration(s); d.ok()) return std::optional<Timestamp>(now - *d);
  if (auto t = ParseRfc3339(s); t.ok()) return std::optional<Timestamp>(*t);
  return InvalidArgument(std::string("invalid ") + name + " \"" + s + "\": expected a duration such as 30d or a timestamp");
}

std::string ContentType(const HttpRequest& req) {
  std::string ct = req.Header("content-type");
  auto semi = ct.find(';');
  if (semi != std::string::npos) ct.resize(semi);
  while (!ct.empty() && ct.back() == ' ') ct.pop_back();
  return ct;
}

json GrantsJson(const std::vector<identity::Grant>& grants) {
  json out = json::array();
  for (const identity::Grant& g : grants) {
    out.push_back({{"role", g.role}, {"team", g.team.empty() ? json() : json(g.team)}, {"group", g.group},
                   {"source", g.source}, {"scopes", g.scopes}});
  }
  return out;
}

Status TempFile::Write(std::string_view data, std::string_view name) {
  if (name.empty()) name = "upload";
  if (name.size() > 200 || name == "." || name == ".." || name.find('/') != std::string_view::npos ||
      std::any_of(name.begin(), name.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
    return InvalidArgument("name: expected a plain file name (no '/', no control characters, at most 200 bytes)");
  }
  std::string pattern = (std::filesystem::temp_directory_path() / "causeway-upload-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) return Unavailable("cannot make a temporary folder for the upload");
  dir_ = pattern;
  path_ = dir_ + "/" + std::string(name);
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("cannot make a temporary file for the upload");
  Status written = WriteAll(fd, data, "the upload's temporary file");
  if (::close(fd) != 0 && written.ok()) return Unavailable("cannot write the upload's temporary file");
  return written;
}

TempFile::~TempFile() {
  if (!path_.empty()) std::remove(path_.c_str());
  if (!dir_.empty()) ::rmdir(dir_.c_str());
}

Handler Answer(std::function<Result<HttpResponse>(HttpRequest&)> handler) {
  return [handler = std::move(handler)](HttpRequest& req, Reply reply) {
    Result<HttpResponse> r = handler(req);
    reply(r.ok() ? std::move(*r) : ErrorResponse(r.status()));
  };
}

}  // namespace causeway::api
