// Tokens recently verified against the store, so a request does not cost a
// database read (on PostgreSQL, a network round trip) each time.
//
// Contract: an entry lives at most `ttl` (500 ms by default) after the read
// that verified it, so a token revoked through another replica stops working
// within that bound; one revoked through this process is forgotten at once
// (Forget). Expiry is checked on every use. Only verified tokens are kept
// (an unknown, revoked or expired one is looked up every time), and a job
// attempt's credential is never kept: it is revoked by the scheduler when
// the attempt ends, and must stop working then.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <unordered_map>

#include "causeway/mutex.h"
#include "identity/tokens.h"

namespace causeway::identity {

class TokenCache {
 public:
  explicit TokenCache(std::chrono::milliseconds ttl = std::chrono::milliseconds(500), size_t capacity = 10000)
      : ttl_(ttl), capacity_(capacity) {}

  // Authenticate(), answered from the cache while the entry is fresh.
  Result<Principal> Authenticate(const TokenReader& store, std::string_view authorization, Timestamp now);

  // Drops the token's entry: call once its revocation has committed.
  void Forget(const std::string& token_id);

 private:
  struct Entry {
    TokenRecord token;  // as read; expiry is checked again on each use
    std::chrono::steady_clock::time_point fresh_until;
  };
  const std::chrono::milliseconds ttl_;
  const size_t capacity_;
  Mutex mu_;
  std::unordered_map<std::string, Entry> entries_ GUARDED_BY(mu_);  // by token hash
};

}  // namespace causeway::identity
