// Reading untrusted JSON within the bounds of causeway/input.h, and reading
// members of another program's JSON without exceptions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "causeway/input.h"

namespace causeway {

// Parses untrusted JSON text: the nesting bound first, then the parser
// (which does not throw). kInvalidArgument naming `what`, with the line and
// column of a syntax error.
Result<nlohmann::json> ParseUntrustedJson(std::string_view text, std::string_view what,
                                          int max_depth = kMaxNesting);

// Reading another program's JSON without exceptions or undefined behaviour
// (nlohmann's value() throws on a wrong type, its const operator[] on a
// missing key is undefined): the member `key` of `j` when `j` is an object
// holding it with the wanted type, else the fallback (null for JsonMember).
const nlohmann::json& JsonMember(const nlohmann::json& j, std::string_view key);
std::string JsonString(const nlohmann::json& j, std::string_view key, std::string fallback = "");
// An array member, or an empty array.
const nlohmann::json& JsonArray(const nlohmann::json& j, std::string_view key);
// An integer member (a float that is a whole number in range counts).
int64_t JsonInt(const nlohmann::json& j, std::string_view key, int64_t fallback = 0);

}  // namespace causeway
