// Routes (method, path pattern) to handlers. Patterns are literal segments
// and "{name}" placeholders: "/v1/jobs/{id}/cancel". Lookup compares segment
// by segment among routes with the same number of segments.
#pragma once

#include <string>
#include <vector>

#include "api/http_types.h"

namespace causeway::api {

class Router {
 public:
  void Add(std::string method, const std::string& pattern, Handler handler);

  enum class Outcome { kFound, kNoSuchPath, kMethodNotAllowed };
  struct Match {
    Outcome outcome = Outcome::kNoSuchPath;
    const Handler* handler = nullptr;
    std::string pattern;  // the route's pattern, a bounded label for metrics
    std::string allowed;  // for kMethodNotAllowed: "GET, POST"
  };

  // Finds the route for req.method and req.path and fills req.params.
  Match Find(HttpRequest& req) const;

 private:
  struct Route {
    std::string method;
    std::string pattern;
    std::vector<std::string> segments;  // "{x}" for a placeholder
    Handler handler;
  };
  std::vector<Route> routes_;
};

std::vector<std::string> SplitPath(std::string_view path);

}  // namespace causeway::api
