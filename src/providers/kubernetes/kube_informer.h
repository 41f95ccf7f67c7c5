// One kind of object of one cluster kept in memory by list, then watch, as
// Kubernetes' own informers do: a list gives every object and a
// resourceVersion; a watch from that version gives each change (and
// bookmarks, which only move the version on); a watch the server ends is
// started again from the last version; 410 Gone (the version is too old)
// lists again. Only what `keep` projects of each object is held, and at
// most `max_objects` of them, so memory stays bounded however large the
// cluster. Runs on a thread of its own: nothing here waits on the caller's
// lock, and the caller never waits on the network.
//
// A cluster that does not answer is asked again after a backoff (0.5 s,
// doubling, at most 30 s). `synced()` says whether the last list or watch
// succeeded and when the informer last heard from the server.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "providers/kubernetes/kube_api.h"

namespace causeway::kube {

class Informer {
 public:
  struct Options {
    std::string path;  // the collection, e.g. /apis/batch/v1/jobs
    std::string label_selector;
    // What is kept of each object (its metadata.namespace and name are
    // the key); unset: the whole object.
    std::function<nlohmann::json(const nlohmann::json&)> keep;
    size_t max_objects = 50'000;
    int watch_seconds = 3;  // each watch is ended by the server after this long, then started again
  };

  Informer(Endpoint endpoint, Options options);
  // Stops the thread: a call to the server in progress is abandoned
  // (net::ApiRequest::abandon), so this returns within a tenth of a second.
  ~Informer();
  Informer(const Informer&) = delete;
  Informer& operator=(const Informer&) = delete;

  // A copy of the objects by "namespace/name" ("name" for cluster objects).
  std::map<std::string, nlohmann::json> Snapshot() const;
  // Calls `fn` with each object, under the informer's lock: `fn` must be
  // quick and call nothing that could take a lock of the caller's.
  void Visit(const std::function<void(const std::string& key, const nlohmann::json& object)>& fn) const;
  // One object, or null.
  nlohmann::json Find(const std::string& key) const;
  // Whether the objects are a true picture: listed once, and the last call
  // to the server answered.
  bool synced() const;
  // When the server last answered (the epoch when never).
  std::chrono::steady_clock::time_point last_heard() const;
  // What went wrong last ("" when the last call answered).
  std::string last_error() const;
  // Lists made so far (a watch that lost its version lists again).
  int lists() const;

  static std::string KeyOf(const nlohmann::json& object);

 private:
  struct State;
  std::unique_ptr<State> s_;
  std::thread thread_;
};

}  // namespace causeway::kube
