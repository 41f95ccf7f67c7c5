#include "identity/secret_box.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "causeway/crypto.h"
#include "causeway/file_io.h"

namespace causeway::identity {
namespace {

constexpr size_t kKeyBytes = 32, kNonceBytes = 12, kTagBytes = 16;

std::string HexDecode(std::string_view hex, bool& ok) {
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  ok = hex.size() % 2 == 0;
  for (size_t i = 0; ok && i < hex.size(); i += 2) {
    int hi = digit(hex[i]), lo = digit(hex[i + 1]);
    if (hi < 0 || lo < 0) ok = false;
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return ok ? out : std::string();
}

struct CipherCtx {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  ~CipherCtx() { EVP_CIPHER_CTX_free(ctx); }
};

const unsigned char* Bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

Result<std::string> ReadKeyFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NotFound("cannot read " + path + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && (st.st_mode & 077) != 0) {
    ::close(fd);
    return FailedPrecondition("the secrets key " + path + " may be read by others than its owner: chmod 600 it");
  }
  char buf[256];
  ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n < 0) return FailedPrecondition("cannot read " + path + ": " + std::strerror(errno));
  std::string_view text(buf, static_cast<size_t>(n));
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  bool ok = false;
  std::string key = HexDecode(text, ok);
  if (!ok || key.size() != kKeyBytes) {
    return FailedPrecondition(path + " is not a secrets key: expected 64 hex digits (32 bytes)");
  }
  return key;
}

}  // namespace

Result<SecretBox> SecretBox::FromKey(std::string key) {
  if (key.size() != kKeyBytes) return InvalidArgument("a secrets key is 32 bytes");
  std::string id = Sha256Hex(key).substr(0, 8);
  return SecretBox(std::move(key), std::move(id));
}

Result<SecretBox> SecretBox::OpenOrCreate(const std::string& path) {
  auto existing = ReadKeyFile(path);
  if (existing.ok()) return FromKey(std::move(*existing));
  if (existing.status().code() != Code::kNotFound) return existing.status();
  // Made under a temporary name and linked into place: a server starting
  // beside this one either finds no file or a whole one, and the first
  // link wins.
  std::string key = RandomBytes(kKeyBytes);
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return FailedPrecondition("cannot write " + tmp + ": " + std::strerror(errno));
  Status written = WriteAll(fd, HexEncode(key) + "\n", tmp);
  if (written.ok() && ::fsync(fd) != 0) written = FailedPrecondition("cannot sync " + tmp + ": " + std::strerror(errno));
  ::close(fd);
  if (written.ok() && ::link(tmp.c_str(), path.c_str()) != 0 && errno != EEXIST) {
    written = FailedPrecondition("cannot write " + path + ": " + std::strerror(errno));
  }
  ::unlink(tmp.c_str());
  RETURN_IF_ERROR(written);
  ASSIGN_OR_RETURN(std::string kept, ReadKeyFile(path));  // another server's, if it won
  return FromKey(std::move(kept));
}

std::string SecretBox::Seal(std::string_view plaintext, std::string_view context) const {
  std::string nonce = RandomBytes(kNonceBytes);
  std::string out(plaintext.size(), '\0');
  unsigned char tag[kTagBytes];
  CipherCtx c;
  int len = 0, fin = 0;
  bool ok = c.ctx && EVP_EncryptInit_ex(c.ctx, EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
            EVP_EncryptInit_ex(c.ctx, nullptr, nullptr, Bytes(key_), Bytes(nonce)) == 1 &&
            EVP_EncryptUpdate(c.ctx, nullptr, &len, Bytes(context), static_cast<int>(context.size())) == 1 &&
            EVP_EncryptUpdate(c.ctx, reinterpret_cast<unsigned char*>(out.data()), &len, Bytes(plaintext),
                              static_cast<int>(plaintext.size())) == 1 &&
            EVP_EncryptFinal_ex(c.ctx, reinterpret_cast<unsigned char*>(out.data()) + len, &fin) == 1 &&
            EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_GET_TAG, kTagBytes, tag) == 1;
  if (!ok) std::abort();  // OpenSSL without AES-GCM: nothing can be kept safely
  return "v1:" + key_id_ + ":" + HexEncode(nonce + out + std::string(reinterpret_cast<char*>(tag), kTagBytes));
}

Result<std::string> SecretBox::Open(std::string_view sealed, std::string_view context) const {
  if (sealed.substr(0, 3) != "v1:" || sealed.size() < 12 || sealed[11] != ':') {
    return FailedPrecondition("not a sealed value this server understands");
  }
  std::string_view id = sealed.substr(3, 8);
  if (id != key_id_) {
    return FailedPrecondition("sealed under secrets key " + std::string(id) + ", but this server's key is " + key_id_);
  }
  bool ok = false;
  std::string raw = HexDecode(sealed.substr(12), ok);
  if (!ok || raw.size() < kNonceBytes + kTagBytes) return FailedPrecondition("a sealed value is damaged");
  std::string_view nonce = std::string_view(raw).substr(0, kNonceBytes);
  std::string_view body = std::string_view(raw).substr(kNonceBytes, raw.size() - kNonceBytes - kTagBytes);
  std::string tag = raw.substr(raw.size() - kTagBytes);
  std::string out(body.size(), '\0');
  CipherCtx c;
  int len = 0, fin = 0;
  ok = c.ctx && EVP_DecryptInit_ex(c.ctx, EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
       EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_IVLEN, kNonceBytes, nullptr) == 1 &&
       EVP_DecryptInit_ex(c.ctx, nullptr, nullptr, Bytes(key_), Bytes(nonce)) == 1 &&
       EVP_DecryptUpdate(c.ctx, nullptr, &len, Bytes(context), static_cast<int>(context.size())) == 1 &&
       EVP_DecryptUpdate(c.ctx, reinterpret_cast<unsigned char*>(out.data()), &len, Bytes(body),
                         static_cast<int>(body.size())) == 1 &&
       EVP_CIPHER_CTX_ctrl(c.ctx, EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) == 1 &&
       EVP_DecryptFinal_ex(c.ctx, reinterpret_cast<unsigned char*>(out.data()) + len, &fin) == 1;
  if (!ok) {
    OPENSSL_cleanse(out.data(), out.size());
    return FailedPrecondition("a sealed value does not open: it was sealed for something else, or altered");
  }
  return out;
}

std::string SecretBox::Mac(std::string_view data) const {
  // A key of its own for MACs, derived so the sealing key is never used twice over.
  unsigned char derived[32], md[32];
  unsigned int len = 0;
  static constexpr std::string_view kLabel = "causeway secrets mac v1";
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()), Bytes(kLabel), kLabel.size(), derived, &len);
  HMAC(EVP_sha256(), derived, sizeof derived, Bytes(data), data.size(), md, &len);
  return HexEncode(std::string_view(reinterpret_cast<char*>(md), len));
}

}  // namespace causeway::identity
