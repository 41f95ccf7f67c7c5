#include "causeway/json_input.h"

namespace causeway {

Result<nlohmann::json> ParseUntrustedJson(std::string_view text, std::string_view what, int max_depth) {
  RETURN_IF_ERROR(CheckJsonNesting(text, what, max_depth));
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    TextPosition p = PositionOf(text, e.byte > 0 ? e.byte - 1 : 0);
    return InvalidArgument("malformed JSON in " + std::string(what),
                           {Diagnostic{std::string(what), p.line, p.column, "", "JSON syntax error: " + std::string(e.what())}});
  } catch (const nlohmann::json::exception& e) {
    // Not a syntax error but no more readable: a number past a double's
    // range (out_of_range.406), for one.
    return InvalidArgument("unreadable JSON in " + std::string(what) + ": " + e.what(),
                           {Diagnostic{std::string(what), 0, 0, "", e.what()}});
  }
}

const nlohmann::json& JsonMember(const nlohmann::json& j, std::string_view key) {
  static const nlohmann::json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

const nlohmann::json& JsonArray(const nlohmann::json& j, std::string_view key) {
  static const nlohmann::json kEmpty = nlohmann::json::array();
  const nlohmann::json& v = JsonMember(j, key);
  return v.is_array() ? v : kEmpty;
}

std::string JsonString(const nlohmann::json& j, std::string_view key, std::string fallback) {
  const nlohmann::json& v = JsonMember(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}

int64_t JsonInt(const nlohmann::json& j, std::string_view key, int64_t fallback) {
  const nlohmann::json& v = JsonMember(j, key);
  if (v.is_number_unsigned()) {
    return v.get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX) ? static_cast<int64_t>(v.get<uint64_t>()) : fallback;
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    double d = v.get<double>();
    if (d >= -9.2e18 && d <= 9.2e18 && d == static_cast<double>(static_cast<int64_t>(d))) return static_cast<int64_t>(d);
  }
  return fallback;
}

}  // namespace causeway
