// DSSE envelopes (Dead Simple Signing Envelope, v1): what a provenance
// record is signed in, so that anyone can check it with the published key
// and no Causeway code. The signature covers the pre-authentication
// encoding of the payload's type and bytes (PAE), never the JSON around
// them, so re-serializing the envelope cannot break or forge it.
//
// Envelope (JSON):
//   {"payloadType": TYPE, "payload": base64(BODY),
//    "signatures": [{"keyid": KID, "sig": base64(SIGNATURE)}]}
// An ES256 signature is the ASN.1 DER ECDSA signature over PAE with
// SHA-256, the form DSSE's other implementations (sigstore, in-toto) use.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "causeway/status.h"
#include "identity/jwt.h"

namespace causeway::provenance {

// in-toto's payload type for a Statement.
inline constexpr std::string_view kInTotoPayloadType = "application/vnd.in-toto+json";
// The largest payload an envelope may carry, checked before decoding.
inline constexpr size_t kMaxPayloadBytes = 8 << 20;

// PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body,
// each LEN the byte length in ASCII decimal.
std::string Pae(std::string_view type, std::string_view body);

// `payload` of `payload_type`, signed with `key`.
Result<nlohmann::json> Sign(std::string_view payload_type, std::string_view payload,
                            const identity::jwt::SigningKey& key);

// The same envelope as JSON text (what Sign(...).dump() writes, keys
// sorted), written without building it: what bulk export streams.
Result<std::string> SignToText(std::string_view payload_type, std::string_view payload,
                               const identity::jwt::SigningKey& key);

// The payload of `envelope` when at least one of its signatures verifies
// with a key of `keys` (matched by keyid, or the only key when it names
// none). kInvalidArgument for a malformed envelope (the field named),
// kPermissionDenied when no signature verifies; `payload_type` must match.
Result<std::string> Verify(const nlohmann::json& envelope, std::string_view payload_type,
                           const identity::jwt::KeySet& keys);

// The payload of `envelope` decoded, checking no signature: for reading a
// record already verified, or one compared but not trusted.
// kInvalidArgument for a malformed envelope.
Result<std::string> UnverifiedPayload(const nlohmann::json& envelope);

}  // namespace causeway::provenance
