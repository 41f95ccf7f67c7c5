#include "api/router.h"

#include <algorithm>

#include "causeway/text.h"

namespace causeway::api {

std::optional<std::string> PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      auto hex = [](char h) -> int {
        if (h >= '0' && h <= '9') return h - '0';
        if (h >= 'a' && h <= 'f') return h - 'a' + 10;
        if (h >= 'A' && h <= 'F') return h - 'A' + 10;
        return -1;
      };
      int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

bool FramingAccepted(const std::vector<std::string_view>& transfer_encodings, bool has_content_length) {
  if (transfer_encodings.empty()) return true;
  if (transfer_encodings.size() != 1 || has_content_length) return false;
  return AsciiLower(Trim(transfer_encodings.front())) == "chunked";
}

bool FoldsHeaderLines(std::string_view head) {
  for (size_t nl = head.find("\r\n"); nl != std::string_view::npos; nl = head.find("\r\n", nl + 2)) {
    if (nl + 2 < head.size() && (head[nl + 2] == ' ' || head[nl + 2] == '\t')) return true;
  }
  return false;
}

std::map<std::string, std::string> ParseQuery(std::string_view query) {
  std::map<std::string, std::string> out;
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    auto eq = pair.find('=');
    auto key = PercentDecode(pair.substr(0, eq), true);
    auto value = PercentDecode(eq == std::string_view::npos ? "" : pair.substr(eq + 1), true);
    if (key && value) out[*key] = *value;
  }
  return out;
}

std::vector<std::string> SplitPath(std::string_view path) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < path.size()) {
    if (path[pos] == '/') {
      ++pos;
      continue;
    }
    size_t end = path.find('/', pos);
    if (end == std::string_view::npos) end = path.size();
    out.emplace_back(path.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

void Router::Add(std::string method, const std::string& pattern, Handler handler, Access access) {
  routes_.push_back(Route{std::move(method), pattern, SplitPath(pattern), std::move(handler), std::move(access)});
}

Router::Match Router::Find(HttpRequest& req) const {
  std::vector<std::string> segs = SplitPath(req.path);
  Match match;
  std::vector<std::string> allowed;
  for (const Route& r : routes_) {
    if (r.segments.size() != segs.size()) continue;
    std::map<std::string, std::string> params;
    bool ok = true;
    for (size_t i = 0; i < segs.size() && ok; ++i) {
      const std::string& want = r.segments[i];
      if (want.size() > 2 && want.front() == '{' && want.back() == '}') {
        auto decoded = PercentDecode(segs[i], false);
        if (!decoded) {
          ok = false;
        } else {
          params[want.substr(1, want.size() - 2)] = *decoded;
        }
      } else {
        ok = want == segs[i];
      }
    }
    if (!ok) continue;
    if (r.method != req.method) {
      match.outcome = Outcome::kMethodNotAllowed;
      match.pattern = r.pattern;
      allowed.push_back(r.method);
      continue;
    }
    req.params = std::move(params);
    return Match{Outcome::kFound, &r.handler, &r.access, r.pattern, ""};
  }
  std::sort(allowed.begin(), allowed.end());
  for (const auto& m : allowed) match.allowed += (match.allowed.empty() ? "" : ", ") + m;
  return match;
}

}  // namespace causeway::api
