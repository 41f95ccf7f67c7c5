#include "causeway/ids.h"

#include <openssl/rand.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "causeway/mutex.h"

namespace causeway {
namespace {

constexpr char kCrockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

struct UlidState {
  Mutex mu;
  uint64_t last_ms GUARDED_BY(mu) = 0;
  std::array<uint8_t, 10> random GUARDED_BY(mu){};
};

UlidState& State() {
  static UlidState state;
  return state;
}

// Adds one to the 80-bit big-endian random part; returns false on overflow.
bool Increment(std::array<uint8_t, 10>& r) {
  for (int i = 9; i >= 0; --i) {
    if (++r[i] != 0) return true;
  }
  return false;
}

}  // namespace

std::string NewId(std::string_view prefix, Timestamp now) {
  uint64_t ms = static_cast<uint64_t>(ToUnixMicros(now) / 1000) & ((1ULL << 48) - 1);
  std::array<uint8_t, 16> bytes{};
  {
    UlidState& s = State();
    MutexLock lock(s.mu);
    // Monotonic: within the same (or an earlier) millisecond, count up from
    // the last random value instead of drawing a new one.
    if (ms <= s.last_ms && s.last_ms != 0 && Increment(s.random)) {
      ms = s.last_ms;
    } else {
      RAND_bytes(s.random.data(), static_cast<int>(s.random.size()));
      s.random[0] &= 0x7f;  // leaves room to count up
      s.last_ms = ms;
    }
    for (int i = 0; i < 6; ++i) bytes[i] = static_cast<uint8_t>(ms >> (8 * (5 - i)));
    std::memcpy(bytes.data() + 6, s.random.data(), 10);
  }
  // 128 bits -> 26 base32 characters (the first carries 3 bits).
  std::string out(prefix);
  out += '_';
  unsigned __int128 v = 0;
  for (uint8_t b : bytes) v = (v << 8) | b;
  char enc[26];
  for (int i = 25; i >= 0; --i) {
    enc[i] = kCrockford[static_cast<unsigned>(v & 31)];
    v >>= 5;
  }
  out.append(enc, 26);
  return out;
}

bool IsValidId(std::string_view id, std::string_view prefix) {
  if (id.size() != prefix.size() + 27 || id.substr(0, prefix.size()) != prefix ||
      id[prefix.size()] != '_') {
    return false;
  }
  for (char c : id.substr(prefix.size() + 1)) {
    if (std::strchr(kCrockford, c) == nullptr || c == '\0') return false;
  }
  return true;
}

}  // namespace causeway
