// Console sessions: what a browser's session cookie stands for.
//
// A session holds the credential the console signed in with (an API token,
// or the ID token the company's IdP issued) and nothing more: every request
// is authenticated with it afresh, exactly as if the browser had sent it as
// a bearer, so the console has the person's rights and loses them the
// moment the token is revoked, the grant ends or the directory deactivates
// them. Sessions live in this server's memory only, keyed by the SHA-256 of
// the cookie's value: the value itself is never stored, logged or audited.
//
// Bounds: at most `capacity` sessions (full: the one closest to expiring
// goes); each ends `idle` after its last use and `absolute` after sign-in
// at the latest, or when its credential does (an ID token's exp).
#pragma once

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "causeway/clock.h"
#include "causeway/mutex.h"

namespace causeway::console {

struct SessionLimits {
  size_t capacity = 10'000;
  Micros idle = std::chrono::hours(1);
  Micros absolute = std::chrono::hours(12);
};

struct Session {
  std::string bearer;  // the Authorization header's value each request is checked with
  std::string csrf;    // what writes must carry as X-CSRF-Token
  std::string name;    // who, for display and logs
  Timestamp created;
  Timestamp last_used;
  Timestamp expires;   // the absolute end (sign-in + absolute, or the credential's end)
};

// What a new session gives the browser: the cookie's value (shown once,
// never kept) and the session.
struct NewSession {
  std::string cookie;
  Session session;
};

class SessionStore {
 public:
  explicit SessionStore(SessionLimits limits = {});

  // A session for `bearer`; `credential_expires`, when known, bounds it.
  NewSession Create(std::string bearer, std::string name, Timestamp now,
                    std::optional<Timestamp> credential_expires = std::nullopt) EXCLUDES(mu_);
  // The live session the cookie value names (its use recorded), or nullopt
  // when unknown, idle too long or past its end (then removed).
  std::optional<Session> Find(std::string_view cookie, Timestamp now) EXCLUDES(mu_);
  // Ends the session; false when there was none.
  bool Remove(std::string_view cookie) EXCLUDES(mu_);
  size_t size() const EXCLUDES(mu_);
  const SessionLimits& limits() const { return limits_; }

 private:
  // When `s` ends unless used again: its absolute end or the idle bound.
  Timestamp EndOf(const Session& s) const { return std::min(s.expires, s.last_used + limits_.idle); }
  bool Live(const Session& s, Timestamp now) const { return now < EndOf(s); }

  const SessionLimits limits_;
  mutable Mutex mu_;
  std::unordered_map<std::string, Session> sessions_ GUARDED_BY(mu_);  // by SHA-256 of the cookie
};

// The session cookie's name.
inline constexpr std::string_view kSessionCookie = "causeway_session";

// The value of cookie `name` in a Cookie header, or "" (RFC 6265 §5.4:
// "a=1; b=2"; the first pair of that name wins).
std::string CookieValue(std::string_view header, std::string_view name);

// The Set-Cookie value for a session: HttpOnly, SameSite=Strict, Path=/,
// Max-Age, and Secure when the console is served over TLS. A `max_age` of
// zero clears the cookie.
std::string SessionCookie(std::string_view value, std::chrono::seconds max_age, bool secure);

}  // namespace causeway::console
