// Pieces every group of API handlers uses: JSON replies, the request body
// as JSON, and query parameters read with one error shape.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "api/http_types.h"
#include "causeway/clock.h"
#include "causeway/status.h"
#include "identity/tokens.h"

namespace causeway::api {

HttpResponse JsonResponse(int status, const nlohmann::json& body);
// The body as a JSON object; kInvalidArgument with the line and column of
// a syntax error.
Result<nlohmann::json> ParseJsonBody(const HttpRequest& req);
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

}  // namespace causeway::api
