#include "api/area.h"

namespace causeway::api {

void RouteTable::Route(const char* method, const char* pattern, std::string_view scope, Handler handler,
                       bool job_credential) {
  router_.Add(method, pattern, std::move(handler), Access{false, std::string(scope), job_credential, false});
}

void RouteTable::Public(const char* method, const char* pattern, Handler handler) {
  router_.Add(method, pattern, std::move(handler));
}

void RouteTable::Scim(const char* method, const char* pattern, std::string_view scope, Handler handler) {
  router_.Add(method, pattern, std::move(handler), Access{false, std::string(scope), false, true});
}

}  // namespace causeway::api
