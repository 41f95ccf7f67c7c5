// /v1/tokens, /v1/whoami, /v1/bindings, /v1/access: tokens and who may do what.
// Built by ApiService with only the services below.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "api/area.h"
#include "causeway/store.h"
#include "identity/token_cache.h"
#include "service/binding_service.h"
#include "service/people_service.h"
#include "service/token_service.h"

namespace causeway::api {

class AccessApi final : public Area {
 public:
  AccessApi(Store& store, TokenService& tokens, BindingService& bindings, PeopleService& people_svc,
            identity::TokenCache& token_cache)
      : store_(store), tokens_(tokens), bindings_(bindings), people_svc_(people_svc), token_cache_(token_cache) {}
  void AddRoutes(RouteTable& routes) override;

 private:
  // Tokens and access.
  Result<HttpResponse> CreateToken(HttpRequest& req);
  Result<HttpResponse> ListTokens(HttpRequest& req);
  Result<HttpResponse> RevokeToken(HttpRequest& req);
  Result<HttpResponse> RotateToken(HttpRequest& req);
  Result<HttpResponse> ReassignToken(HttpRequest& req);
  Result<HttpResponse> WhoAmI(HttpRequest& req);
  Result<HttpResponse> ExplainAccess(HttpRequest& req);
  Result<HttpResponse> ListBindings(HttpRequest& req);
  Result<HttpResponse> CreateBinding(HttpRequest& req);
  Result<HttpResponse> DeleteBinding(HttpRequest& req);
  Result<HttpResponse> ConfirmBinding(HttpRequest& req);

  Store& store_;
  TokenService& tokens_;
  BindingService& bindings_;
  PeopleService& people_svc_;
  identity::TokenCache& token_cache_;
};

}  // namespace causeway::api
