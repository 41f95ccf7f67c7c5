// Pieces every group of API handlers uses: JSON replies, the request body
// as JSON, and query parameters read with one error shape.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "causeway/clock.h"
#include "causeway/status.h"
#include "identity/tokens.h"

namespace causeway::api {

// The JSON error response for `status`:
//   {"error": {"code": "not_found", "message": "...", "details": {...}}}
HttpResponse ErrorResponse(const Status& status);
// The same in SCIM's error shape (RFC 7644 section 3.12), for /scim/v2.
HttpResponse ScimErrorResponse(const Status& status);
HttpResponse JsonResponse(int status, const nlohmann::json& body);
// The body as a JSON object; kInvalidArgument with the line and column of
// a syntax error, or naming the nesting limit.
Result<nlohmann::json> ParseJsonBody(const HttpRequest& req);

// A request body read field by field, every field through the same typed
// accessors, so a wrong type is a 400 naming the field (never an
// exception): kInvalidArgument "field \"f\" must be ...", with a
// diagnostic whose field is `f`. Absent and null fields take the fallback.
class JsonBody {
 public:
  static Result<JsonBody> Parse(const HttpRequest& req);
  explicit JsonBody(nlohmann::json j) : j_(std::move(j)) {}

  Result<std::string> String(std::string_view field, std::string fallback = "") const;
  // A string that must be there and not empty.
  Result<std::string> RequiredString(std::string_view field, std::string_view what) const;
  Result<std::vector<std::string>> Strings(std::string_view field) const;
  Result<std::optional<int64_t>> Int(std::string_view field, int64_t min, int64_t max) const;
  Result<std::optional<bool>> Bool(std::string_view field) const;
  // The field as JSON, whatever its type (null when absent).
  const nlohmann::json& Raw(std::string_view field) const;
  // The error for a field that is not what it must be (for fields read
  // through Raw).
  Status Wrong(std::string_view field, std::string_view expected) const;

 private:
  nlohmann::json j_;
};
// The integer query parameter `name`, nullopt when absent; kInvalidArgument
// outside [min, max], saying what `it` is.
Result<std::optional<int64_t>> QueryInt(const HttpRequest& req, const char* name, int64_t min, int64_t max,
                                        const char* it);
// ?limit=, 1-1000, default 100.
Result<int> LimitParam(const HttpRequest& req);
// A time parameter: a duration back from `now` (30d) or an RFC 3339 time.
Result<std::optional<Timestamp>> TimeParam(const HttpRequest& req, const char* name, Timestamp now);
// The media type of the request, without parameters.
std::string ContentType(const HttpRequest& req);
// A person's grants: [{"role", "team" (null: every team), "group", "source", "scopes"}].
nlohmann::json GrantsJson(const std::vector<identity::Grant>& grants);

// A handler that answers at once with a response or an error: the error
// becomes the one JSON error shape (ErrorResponse).
Handler Answer(std::function<Result<HttpResponse>(HttpRequest&)> handler);

// An uploaded body written to a private temporary file, for readers that
// take a path (the importers); the file is removed with this object.
class TempFile {
 public:
  TempFile() = default;
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile();
  // Writes `data` to a new file in a private folder of its own, named
  // `name` (a plain file name; "" for a generated one) so that readers'
  // diagnostics name the file the caller sent.
  Status Write(std::string_view data, std::string_view name = "");
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
};

}  // namespace causeway::api
