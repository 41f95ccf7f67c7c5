// Calls to a Kubernetes API server: JSON in and out, the credential read
// from its file at each call, every call under a deadline, answers bounded
// in size and nesting. Errors as Kubernetes gives them, as Status:
// 404 kNotFound, 409 kAlreadyExists, 410 kFailedPrecondition (a watch's
// version is gone: list again), 401/403 kPermissionDenied, 400/422 kInvalidArgument,
// 429 and 5xx kUnavailable; the message is the server's own.
// Not thread-safe: one per thread (the provider's worker, its watcher).
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "causeway/status.h"
#include "net/request.h"
#include "providers/kubernetes/kube_settings.h"

namespace causeway::kube {

// Where the API server is and who Causeway is there: from the cluster's
// block, or from the kubeconfig it names (its context, or the current one).
struct Endpoint {
  std::string server;  // https://host:port
  std::string ca_file;
  std::string token_file;  // read at each call
  std::string token;       // a kubeconfig's inline token (kept in memory only)
  std::string client_cert, client_key;
};
Result<Endpoint> EndpointOf(const KubeSettings& settings);

class KubeApi {
 public:
  // With `abandon`, every call is given up once it turns true (within a
  // tenth of a second; net::ApiRequest::abandon).
  explicit KubeApi(Endpoint endpoint, std::chrono::milliseconds timeout = std::chrono::seconds(10),
                   const std::atomic<bool>* abandon = nullptr);

  Result<nlohmann::json> Get(const std::string& path) const;
  // An answer that is not JSON (a pod's log), up to `max_bytes`.
  Result<std::string> GetText(const std::string& path, size_t max_bytes) const;
  Result<nlohmann::json> Create(const std::string& path, const nlohmann::json& object) const;
  // A JSON merge patch (RFC 7386).
  Result<nlohmann::json> MergePatch(const std::string& path, const nlohmann::json& patch) const;
  // Deletes with background propagation: what the object owns (pods,
  // Secrets, Services with it as owner) is collected after it.
  Status Delete(const std::string& path) const;

  // One watch (`path` with ?watch=1 and the rest of its query): `on_event`
  // gets each event's type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) and
  // object, until the server ends the watch (its timeoutSeconds), `on_event`
  // returns false, or `limit` passes. An ERROR event with code 410 ends it
  // with kFailedPrecondition: the version is gone, list again. An event larger than
  // kMaxEventBytes ends it with kResourceExhausted.
  static constexpr size_t kMaxEventBytes = 4 << 20;
  Status Watch(const std::string& path, std::chrono::milliseconds limit,
               const std::function<bool(const std::string& type, const nlohmann::json& object)>& on_event) const;

  const std::string& server() const { return endpoint_.server; }

 private:
  Result<nlohmann::json> Call(const std::string& method, const std::string& path, const std::string& body,
                              const std::string& content_type) const;
  Result<std::string> Bearer() const;
  // A request to `path` with the credential; the caller adds the rest.
  Result<net::ApiRequest> Prepare(const std::string& method, const std::string& path) const;
  net::TlsTrust Trust() const;

  Endpoint endpoint_;
  std::chrono::milliseconds timeout_;
  const std::atomic<bool>* abandon_;
};

// The Status of a Kubernetes error answer (its `message`, its `code`).
Status StatusOf(int http_status, const std::string& body, const std::string& what);

}  // namespace causeway::kube
