// Bearer tokens as a caller presents them (JWS compact form), checked
// against a JWKS; and JWKS documents as an identity provider serves them.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "causeway/json_input.h"
#include "identity/jwt.h"

namespace jwt = causeway::identity::jwt;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const jwt::KeySet kKeys = [] {
    auto key = jwt::SigningKey::Generate(jwt::Alg::kES256, "k1");
    auto set = jwt::KeySet::FromJwks({{"keys", {key->PublicJwk()}}});
    return *set;
  }();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  jwt::Expectations expect{"https://idp.example", {"causeway"}, causeway::Timestamp(), std::chrono::seconds(60)};
  auto claims = jwt::Verify(text, kKeys, expect);
  (void)claims;  // only crashes and hangs matter here
  auto header = jwt::PeekHeader(text);
  (void)header;
  if (auto doc = causeway::ParseUntrustedJson(text, "JWKS"); doc.ok()) {
    auto set = jwt::KeySet::FromJwks(*doc);
    (void)set;
  }
  return 0;
}
