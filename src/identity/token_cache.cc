#include "identity/token_cache.h"

#include <algorithm>

namespace causeway::identity {

Result<Principal> TokenCache::Authenticate(const TokenReader& store, std::string_view authorization, Timestamp now) {
  ASSIGN_OR_RETURN(std::string hash, TokenHashOf(authorization));
  auto steady = std::chrono::steady_clock::now();
  {
    MutexLock lock(mu_);
    if (auto it = entries_.find(hash); it != entries_.end()) {
      if (it->second.fresh_until > steady) return CheckToken(it->second.token, hash, now);
      entries_.erase(it);
    }
  }
  ASSIGN_OR_RETURN(auto found, store.FindTokenByHash(hash));
  ASSIGN_OR_RETURN(Principal principal, CheckToken(found, hash, now));
  bool job_credential = std::any_of(principal.scopes.begin(), principal.scopes.end(),
                                    [](const std::string& s) { return s.rfind("job:", 0) == 0; });
  if (!job_credential) {
    MutexLock lock(mu_);
    if (entries_.size() >= capacity_) entries_.clear();  // crude, and rare: a cache, not a store
    entries_[hash] = Entry{*found, steady + ttl_};
  }
  return principal;
}

void TokenCache::Forget(const std::string& token_id) {
  MutexLock lock(mu_);
  for (auto it = entries_.begin(); it != entries_.end();) {
    it = it->second.token.id == token_id ? entries_.erase(it) : std::next(it);
  }
}

}  // namespace causeway::identity
