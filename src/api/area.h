// An area of the API: a group of routes and the handlers behind them. Each
// is built by ApiService (the API's composition) with only the services it
// uses, so that its header shows at a glance what it may touch; it declares
// its routes, each with who may call it, and ApiService authenticates and
// authorizes every request before a handler sees it.
#pragma once

#include <string_view>
#include <utility>

#include "api/api_helpers.h"
#include "api/http_types.h"
#include "api/router.h"

namespace causeway::api {

// Where an area declares its routes.
class RouteTable {
 public:
  explicit RouteTable(Router& router) : router_(router) {}
  // Authenticated, needing `scope` ("" for any valid credential); with
  // `job_credential`, the credential of an attempt of job {id} is enough too.
  void Route(const char* method, const char* pattern, std::string_view scope, Handler handler,
             bool job_credential = false);
  // No credential needed (health, discovery, signing in).
  void Public(const char* method, const char* pattern, Handler handler);
  // Authenticated with `scope`, refused in SCIM's error shape.
  void Scim(const char* method, const char* pattern, std::string_view scope, Handler handler);

 private:
  Router& router_;
};

class Area {
 public:
  virtual ~Area() = default;
  virtual void AddRoutes(RouteTable& routes) = 0;
};

// A member of `area` as a route's handler: one that answers at once, or one
// that answers later (once the commit it waits for is done).
template <typename A>
Handler Bind(A* area, Result<HttpResponse> (A::*fn)(HttpRequest&)) {
  return Answer([area, fn](HttpRequest& req) { return (area->*fn)(req); });
}
template <typename A>
Handler Bind(A* area, void (A::*fn)(HttpRequest&, Reply)) {
  return [area, fn](HttpRequest& req, Reply reply) { (area->*fn)(req, std::move(reply)); };
}

}  // namespace causeway::api
