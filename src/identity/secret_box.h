// Job secrets at rest: sealed with AES-256-GCM under a key kept outside the
// database (a file of the server's, mode 0600), so neither the database nor
// its backups, replicas or change feed ever hold a secret in clear. Each
// sealed value is bound to a context (the job's id) as associated data: a
// value copied onto another job does not open.
#pragma once

#include <string>
#include <string_view>

#include "causeway/status.h"

namespace causeway::identity {

class SecretBox {
 public:
  // Reads the key from `path` (64 hex digits and a newline), or makes a new
  // random one there (mode 0600, written durably) when the file is absent.
  // Servers sharing a database must share the file.
  static Result<SecretBox> OpenOrCreate(const std::string& path);
  // A box over `key`, which must be 32 bytes (tests, tools).
  static Result<SecretBox> FromKey(std::string key);

  // "v1:KEYID:HEX" where HEX is nonce (12 bytes), ciphertext and tag (16).
  std::string Seal(std::string_view plaintext, std::string_view context) const;
  // The plaintext, or kFailedPrecondition naming why (another key, another
  // context, tampering); the message never holds any of the plaintext.
  Result<std::string> Open(std::string_view sealed, std::string_view context) const;
  // Lower-case hex HMAC-SHA256 of `data` under a key derived from this one:
  // compares secret values (an idempotent retry's) without keeping them.
  std::string Mac(std::string_view data) const;
  // The first 8 hex digits of SHA-256 over the key: which key sealed what.
  const std::string& key_id() const { return key_id_; }

 private:
  SecretBox(std::string key, std::string key_id) : key_(std::move(key)), key_id_(std::move(key_id)) {}
  std::string key_;  // 32 bytes
  std::string key_id_;
};

}  // namespace causeway::identity
