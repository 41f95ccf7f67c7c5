#include "provenance/dsse.h"

#include <cstdint>

namespace causeway::provenance {
namespace {

using nlohmann::json;

// Standard base64 with padding, as DSSE writes it (written directly: a
// record's payload is kilobytes, and bulk export encodes one per job).
std::string Base64(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out((bytes.size() + 2) / 3 * 4, '=');
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  size_t i = 0, o = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t v = (uint32_t{in[i]} << 16) | (uint32_t{in[i + 1]} << 8) | in[i + 2];
    out[o++] = kAlphabet[v >> 18];
    out[o++] = kAlphabet[(v >> 12) & 63];
    out[o++] = kAlphabet[(v >> 6) & 63];
    out[o++] = kAlphabet[v & 63];
  }
  if (size_t rest = bytes.size() - i; rest > 0) {
    uint32_t v = uint32_t{in[i]} << 16 | (rest == 2 ? uint32_t{in[i + 1]} << 8 : 0);
    out[o++] = kAlphabet[v >> 18];
    out[o++] = kAlphabet[(v >> 12) & 63];
    if (rest == 2) out[o] = kAlphabet[(v >> 6) & 63];
  }
  return out;
}

// Standard or URL-safe base64, padded or not: DSSE readers take both.
std::optional<std::string> FromBase64(std::string_view text) {
  std::string s(text);
  while (!s.empty() && s.back() == '=') s.pop_back();
  for (char& c : s) {
    if (c == '+') c = '-';
    else if (c == '/') c = '_';
  }
  return identity::jwt::Base64UrlDecode(s);
}

// The string field `name` of `j`, or an error naming it.
Result<std::string> Field(const json& j, const char* name, const std::string& where) {
  auto it = j.find(name);
  if (it == j.end() || !it->is_string()) {
    return InvalidArgument("DSSE envelope: " + where + name + " must be a string");
  }
  return it->get<std::string>();
}

}  // namespace

std::string Pae(std::string_view type, std::string_view body) {
  std::string out = "DSSEv1 " + std::to_string(type.size()) + " ";
  out.append(type);
  out += " " + std::to_string(body.size()) + " ";
  out.append(body);
  return out;
}

Result<json> Sign(std::string_view payload_type, std::string_view payload, const identity::jwt::SigningKey& key) {
  ASSIGN_OR_RETURN(std::string sig, key.SignDer(Pae(payload_type, payload)));
  return json{{"payloadType", payload_type},
              {"payload", Base64(payload)},
              {"signatures", json::array({{{"keyid", key.kid()}, {"sig", Base64(sig)}}})}};
}

Result<std::string> SignToText(std::string_view payload_type, std::string_view payload,
                               const identity::jwt::SigningKey& key) {
  ASSIGN_OR_RETURN(std::string sig, key.SignDer(Pae(payload_type, payload)));
  // Base64 needs no escaping; the type and key id are escaped as JSON.
  std::string out = "{\"payload\":\"";
  out += Base64(payload);
  out += "\",\"payloadType\":" + json(payload_type).dump() + ",\"signatures\":[{\"keyid\":" + json(key.kid()).dump() +
         ",\"sig\":\"" + Base64(sig) + "\"}]}";
  return out;
}

Result<std::string> Verify(const json& envelope, std::string_view payload_type, const identity::jwt::KeySet& keys) {
  if (!envelope.is_object()) return InvalidArgument("DSSE envelope: expected a JSON object");
  ASSIGN_OR_RETURN(std::string type, Field(envelope, "payloadType", ""));
  ASSIGN_OR_RETURN(std::string encoded, Field(envelope, "payload", ""));
  if (encoded.size() > kMaxPayloadBytes / 3 * 4 + 4) {
    return InvalidArgument("DSSE envelope: payload is larger than " + std::to_string(kMaxPayloadBytes) + " bytes");
  }
  auto payload = FromBase64(encoded);
  if (!payload) return InvalidArgument("DSSE envelope: payload is not base64");
  if (type != payload_type) {
    return InvalidArgument("DSSE envelope: payloadType is \"" + type + "\", expected \"" + std::string(payload_type) + "\"");
  }
  auto sigs = envelope.find("signatures");
  if (sigs == envelope.end() || !sigs->is_array() || sigs->empty()) {
    return InvalidArgument("DSSE envelope: signatures must be a non-empty array");
  }
  const std::string pae = Pae(type, *payload);
  for (const json& s : *sigs) {
    if (!s.is_object()) return InvalidArgument("DSSE envelope: each signature must be an object");
    std::string keyid = s.contains("keyid") && s["keyid"].is_string() ? s["keyid"].get<std::string>() : "";
    ASSIGN_OR_RETURN(std::string sig_text, Field(s, "sig", "signatures[]."));
    auto sig = FromBase64(sig_text);
    const identity::jwt::PublicKey* key = keys.Find(keyid);
    if (sig && key && key->VerifyDer(pae, *sig)) return std::move(*payload);
  }
  return PermissionDenied("DSSE envelope: no signature verifies with the given keys");
}

Result<std::string> UnverifiedPayload(const json& envelope) {
  if (!envelope.is_object()) return InvalidArgument("DSSE envelope: expected a JSON object");
  ASSIGN_OR_RETURN(std::string payload, Field(envelope, "payload", ""));
  if (payload.size() > kMaxPayloadBytes / 3 * 4 + 4) return InvalidArgument("DSSE envelope: payload too large");
  auto bytes = FromBase64(payload);
  if (!bytes) return InvalidArgument("DSSE envelope: payload is not base64");
  return *bytes;
}

}  // namespace causeway::provenance
