// Routes (method, path pattern) to handlers. Patterns are literal segments
// and "{name}" placeholders: "/v1/jobs/{id}/cancel". Lookup compares segment
// by segment among routes with the same number of segments.
#pragma once

#include <string>
#include <vector>

#include "api/http_types.h"

namespace causeway::api {

// Who may call a route. Decided before the request's body is read, so an
// unauthenticated caller cannot hold a connection by sending a body slowly.
struct Access {
  bool open = true;          // no credential needed (health, discovery, sign-in)
  std::string scope;         // the scope needed ("" for any valid credential)
  bool job_credential = false;  // an attempt of job {id}'s own credential is enough too
  bool scim = false;         // refusals in SCIM's error shape (RFC 7644 section 3.12)
};

class Router {
 public:
  void Add(std::string method, const std::string& pattern, Handler handler, Access access = {});

  enum class Outcome { kFound, kNoSuchPath, kMethodNotAllowed };
  struct Match {
    Outcome outcome = Outcome::kNoSuchPath;
    const Handler* handler = nullptr;
    const Access* access = nullptr;
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
    Access access;
  };
  std::vector<Route> routes_;
};

std::vector<std::string> SplitPath(std::string_view path);

}  // namespace causeway::api
