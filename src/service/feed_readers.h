// Who reads the audit feed (GET /v1/audit/feed, what `causeway audit
// export` delivers to a SIEM from) and how far each has delivered: an
// exporter asks for the events after its cursor, and its cursor moves only
// once its sink took a batch, so `after` is what it has delivered. Kept in
// memory since the server started (readiness reads it as the forwarding
// lag); at most kMaxReaders, the longest silent forgotten first.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "causeway/clock.h"
#include "causeway/mutex.h"

namespace causeway {

class FeedReaders {
 public:
  static constexpr size_t kMaxReaders = 64;

  struct Reader {
    std::string reader;         // the token it reads with (its id, never the secret)
    int64_t delivered_seq = 0;  // the chain position it has delivered through
    Timestamp at;               // when it last asked
  };

  void Saw(const std::string& reader, int64_t after, Timestamp at) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (!readers_.count(reader) && readers_.size() >= kMaxReaders) {
      auto oldest = std::min_element(readers_.begin(), readers_.end(),
                                     [](const auto& a, const auto& b) { return a.second.at < b.second.at; });
      readers_.erase(oldest);
    }
    Reader& r = readers_[reader];
    r.reader = reader;
    r.delivered_seq = std::max(r.delivered_seq, after);
    r.at = at;
  }

  std::vector<Reader> All() const EXCLUDES(mu_) {
    MutexLock lock(mu_);
    std::vector<Reader> out;
    for (const auto& [name, r] : readers_) out.push_back(r);
    return out;
  }

 private:
  mutable Mutex mu_;
  std::map<std::string, Reader> readers_ GUARDED_BY(mu_);
};

}  // namespace causeway
