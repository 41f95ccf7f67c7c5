#include "providers/kubernetes/kube_informer.h"

#include <atomic>
#include <thread>

#include <spdlog/spdlog.h>

#include "causeway/json_input.h"
#include "causeway/mutex.h"
#include "net/http_client.h"

namespace causeway::kube {

using nlohmann::json;

// What the informer's thread works on.
struct Informer::State {
  State(Endpoint endpoint, Options o)
      : api(std::move(endpoint), std::chrono::seconds(10), &stop), options(std::move(o)) {}

  void Run();
  Status List(std::string* version) EXCLUDES(mu);
  Status WatchFrom(std::string* version) EXCLUDES(mu);
  void Apply(const std::string& type, const json& object) EXCLUDES(mu);
  std::string Query(bool watch, const std::string& version) const;

  std::atomic<bool> stop{false};  // before api, which is given it
  const KubeApi api;
  const Options options;
  mutable Mutex mu;
  std::map<std::string, json> objects GUARDED_BY(mu);
  bool listed GUARDED_BY(mu) = false;
  bool answering GUARDED_BY(mu) = false;
  std::chrono::steady_clock::time_point last_heard GUARDED_BY(mu);
  std::string last_error GUARDED_BY(mu);
  int lists GUARDED_BY(mu) = 0;
};

Informer::Informer(Endpoint endpoint, Options options)
    : s_(std::make_unique<State>(std::move(endpoint), std::move(options))) {
  thread_ = std::thread([s = s_.get()] { s->Run(); });
}

Informer::~Informer() {
  s_->stop = true;
  thread_.join();
}

std::string Informer::KeyOf(const json& object) {
  const json& meta = JsonMember(object, "metadata");
  std::string ns = JsonString(meta, "namespace");
  return ns.empty() ? JsonString(meta, "name") : ns + "/" + JsonString(meta, "name");
}

std::map<std::string, json> Informer::Snapshot() const {
  MutexLock lock(s_->mu);
  return s_->objects;
}

void Informer::Visit(const std::function<void(const std::string&, const json&)>& fn) const {
  MutexLock lock(s_->mu);
  for (const auto& [key, object] : s_->objects) fn(key, object);
}

json Informer::Find(const std::string& key) const {
  MutexLock lock(s_->mu);
  auto it = s_->objects.find(key);
  return it == s_->objects.end() ? json() : it->second;
}

bool Informer::synced() const {
  MutexLock lock(s_->mu);
  return s_->listed && s_->answering;
}

std::chrono::steady_clock::time_point Informer::last_heard() const {
  MutexLock lock(s_->mu);
  return s_->last_heard;
}

std::string Informer::last_error() const {
  MutexLock lock(s_->mu);
  return s_->last_error;
}

int Informer::lists() const {
  MutexLock lock(s_->mu);
  return s_->lists;
}

std::string Informer::State::Query(bool watch, const std::string& version) const {
  std::string q = options.path + "?";
  if (!options.label_selector.empty()) q += "labelSelector=" + net::UrlEncode(options.label_selector) + "&";
  if (watch) {
    q += "watch=1&allowWatchBookmarks=true&timeoutSeconds=" + std::to_string(options.watch_seconds) +
         "&resourceVersion=" + net::UrlEncode(version);
  } else {
    q += "limit=500";
  }
  return q;
}

Status Informer::State::List(std::string* version) {
  std::map<std::string, json> fresh;
  std::string continue_token;
  do {
    std::string path = Query(false, "");
    if (!continue_token.empty()) path += "&continue=" + net::UrlEncode(continue_token);
    ASSIGN_OR_RETURN(json page, api.Get(path));
    const json& meta = JsonMember(page, "metadata");
    *version = JsonString(meta, "resourceVersion");
    continue_token = JsonString(meta, "continue");
    for (const json& item : JsonArray(page, "items")) {
      if (fresh.size() >= options.max_objects) {
        return ResourceExhausted(options.path + ": more than " + std::to_string(options.max_objects) +
                                 " objects; only so many are kept");
      }
      fresh[KeyOf(item)] = options.keep ? options.keep(item) : item;
    }
  } while (!continue_token.empty() && !stop);
  MutexLock lock(mu);
  objects = std::move(fresh);
  listed = true;
  ++lists;
  return Status::Ok();
}

void Informer::State::Apply(const std::string& type, const json& object) {
  std::string key = KeyOf(object);
  MutexLock lock(mu);
  if (type == "DELETED") {
    objects.erase(key);
  } else if (type == "ADDED" || type == "MODIFIED") {
    if (objects.size() >= options.max_objects && !objects.count(key)) {
      last_error = options.path + ": more than " + std::to_string(options.max_objects) + " objects; " + key +
                   " is not kept";
      return;
    }
    objects[key] = options.keep ? options.keep(object) : object;
  }
}

Status Informer::State::WatchFrom(std::string* version) {
  auto limit = std::chrono::seconds(options.watch_seconds + 10);
  return api.Watch(Query(true, *version), limit, [&](const std::string& type, const json& object) {
    std::string v = JsonString(JsonMember(object, "metadata"), "resourceVersion");
    if (!v.empty()) *version = v;
    if (type != "BOOKMARK") Apply(type, object);
    return !stop.load();
  });
}

void Informer::State::Run() {
  std::string version;
  bool need_list = true;
  auto wait = std::chrono::milliseconds(500);
  while (!stop) {
    Status st = need_list ? List(&version) : WatchFrom(&version);
    if (stop) break;
    {
      MutexLock lock(mu);
      answering = st.ok() || st.code() == Code::kFailedPrecondition;
      if (answering) last_heard = std::chrono::steady_clock::now();
      last_error = st.ok() ? "" : st.message();
    }
    if (st.ok()) {
      need_list = false;
      wait = std::chrono::milliseconds(500);
      continue;
    }
    // 410 Gone: the version is too old; list again at once.
    need_list = true;
    if (st.code() == Code::kFailedPrecondition) continue;
    spdlog::warn("kubernetes {}: {}", options.path, st.message());
    for (auto slept = std::chrono::milliseconds(0); slept < wait && !stop; slept += std::chrono::milliseconds(100)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    wait = std::min<std::chrono::milliseconds>(wait * 2, std::chrono::seconds(30));
  }
}

}  // namespace causeway::kube
