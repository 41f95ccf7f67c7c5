#include "console/sessions.h"

#include <algorithm>

#include "causeway/crypto.h"
#include "identity/jwt.h"

namespace causeway::console {

SessionStore::SessionStore(SessionLimits limits) : limits_(limits) {}

NewSession SessionStore::Create(std::string bearer, std::string name, Timestamp now,
                                std::optional<Timestamp> credential_expires) {
  NewSession made;
  made.cookie = identity::jwt::Base64UrlEncode(RandomBytes(32));
  Session& s = made.session;
  s.bearer = std::move(bearer);
  s.csrf = identity::jwt::Base64UrlEncode(RandomBytes(32));
  s.name = std::move(name);
  s.created = s.last_used = now;
  s.expires = now + limits_.absolute;
  if (credential_expires) s.expires = std::min(s.expires, *credential_expires);
  std::string key = Sha256Hex(made.cookie);
  MutexLock lock(mu_);
  if (sessions_.size() >= limits_.capacity) {
    // Ended ones first; if none has, the one closest to its end.
    std::erase_if(sessions_, [&](const auto& kv) { return !Live(kv.second, now); });
    if (sessions_.size() >= limits_.capacity) {
      auto soonest = std::min_element(sessions_.begin(), sessions_.end(), [this](const auto& a, const auto& b) {
        return EndOf(a.second) < EndOf(b.second);
      });
      sessions_.erase(soonest);
    }
  }
  sessions_[key] = s;
  return made;
}

std::optional<Session> SessionStore::Find(std::string_view cookie, Timestamp now) {
  if (cookie.empty() || cookie.size() > 128) return std::nullopt;
  std::string key = Sha256Hex(cookie);
  MutexLock lock(mu_);
  auto it = sessions_.find(key);
  if (it == sessions_.end()) return std::nullopt;
  if (!Live(it->second, now)) {
    sessions_.erase(it);
    return std::nullopt;
  }
  it->second.last_used = std::max(it->second.last_used, now);
  return it->second;
}

bool SessionStore::Remove(std::string_view cookie) {
  if (cookie.empty() || cookie.size() > 128) return false;
  std::string key = Sha256Hex(cookie);
  MutexLock lock(mu_);
  return sessions_.erase(key) > 0;
}

size_t SessionStore::size() const {
  MutexLock lock(mu_);
  return sessions_.size();
}

std::string CookieValue(std::string_view header, std::string_view name) {
  size_t pos = 0;
  while (pos < header.size()) {
    size_t end = header.find(';', pos);
    if (end == std::string_view::npos) end = header.size();
    std::string_view pair = header.substr(pos, end - pos);
    while (!pair.empty() && (pair.front() == ' ' || pair.front() == '\t')) pair.remove_prefix(1);
    size_t eq = pair.find('=');
    if (eq != std::string_view::npos && pair.substr(0, eq) == name) {
      std::string_view value = pair.substr(eq + 1);
      while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') value = value.substr(1, value.size() - 2);
      return std::string(value);
    }
    pos = end + 1;
  }
  return "";
}

std::string SessionCookie(std::string_view value, std::chrono::seconds max_age, bool secure) {
  std::string c = std::string(kSessionCookie) + "=" + std::string(value) + "; Path=/; HttpOnly; SameSite=Strict; Max-Age=" +
                  std::to_string(std::max<int64_t>(0, max_age.count()));
  if (secure) c += "; Secure";
  return c;
}

}  // namespace causeway::console
