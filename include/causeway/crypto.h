// Small wrappers over OpenSSL 3 used across Causeway.
#pragma once

#include <string>
#include <string_view>

namespace causeway {

// Lower-case hex SHA-256 of `data`.
std::string Sha256Hex(std::string_view data);

// SHA-256 of data given in pieces.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void Update(std::string_view data);
  // Lower-case hex; call once, after the last Update.
  std::string HexDigest();

 private:
  void* ctx_;  // EVP_MD_CTX
};
// `n` bytes from OpenSSL's CSPRNG. Aborts if the generator fails: running on
// without randomness would mint guessable tokens.
std::string RandomBytes(size_t n);
// Compares in time that depends only on the lengths, for secrets and hashes.
bool ConstantTimeEqual(std::string_view a, std::string_view b);
// Lower-case hex of arbitrary bytes.
std::string HexEncode(std::string_view bytes);
// RFC 4648 base32 without padding, lower case (URL- and shell-safe).
std::string Base32Encode(std::string_view bytes);

}  // namespace causeway
