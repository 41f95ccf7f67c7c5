#include "providers/kubernetes/kube_api.h"

#include <cctype>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "causeway/json_input.h"
#include "net/request.h"

namespace causeway::kube {
namespace {

using nlohmann::json;

constexpr size_t kMaxCredentialBytes = 64 << 10;

Result<std::string> ReadSmallFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Unavailable("cannot read the " + what + " " + path);
  std::string text;
  text.resize(kMaxCredentialBytes + 1);
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxCredentialBytes) return InvalidArgument("the " + what + " " + path + " is larger than 64 KiB");
  return text;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
}

// A path in a kubeconfig, relative to the file's own directory.
std::string Beside(const std::string& kubeconfig, const std::string& path) {
  if (path.empty() || path.front() == '/') return path;
  size_t slash = kubeconfig.rfind('/');
  return slash == std::string::npos ? path : kubeconfig.substr(0, slash + 1) + path;
}

const YAML::Node Named(const YAML::Node& list, const std::string& name) {
  if (list && list.IsSequence()) {
    for (const auto& item : list) {
      if (item.IsMap() && item["name"] && item["name"].as<std::string>("") == name) return item;
    }
  }
  return YAML::Node();
}

Result<Endpoint> FromKubeconfig(const std::string& file, const std::string& context_name) {
  ASSIGN_OR_RETURN(std::string text, ReadSmallFile(file, "kubeconfig"));
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgument(file + ":" + std::to_string(e.mark.line + 1) + ": not a kubeconfig: " + e.msg);
  }
  if (!root.IsMap()) return InvalidArgument(file + ": not a kubeconfig (expected a mapping)");
  std::string wanted = context_name.empty() ? root["current-context"].as<std::string>("") : context_name;
  YAML::Node context = Named(root["contexts"], wanted)["context"];
  if (!context || !context.IsMap()) return InvalidArgument(file + ": no context \"" + wanted + "\"");
  YAML::Node cluster = Named(root["clusters"], context["cluster"].as<std::string>(""))["cluster"];
  YAML::Node user = Named(root["users"], context["user"].as<std::string>(""))["user"];
  if (!cluster || !cluster.IsMap()) return InvalidArgument(file + ": context \"" + wanted + "\" names no cluster it has");
  Endpoint e;
  e.server = cluster["server"].as<std::string>("");
  if (e.server.rfind("https://", 0) != 0) return InvalidArgument(file + ": the cluster's server is not https://");
  if (cluster["certificate-authority-data"]) {
    return InvalidArgument(file + ": certificate-authority-data is not read; give certificate-authority: FILE");
  }
  e.ca_file = Beside(file, cluster["certificate-authority"].as<std::string>(""));
  if (e.ca_file.empty()) return InvalidArgument(file + ": the cluster has no certificate-authority file");
  if (user && user.IsMap()) {
    e.token_file = Beside(file, user["tokenFile"].as<std::string>(""));
    e.token = user["token"].as<std::string>("");
    e.client_cert = Beside(file, user["client-certificate"].as<std::string>(""));
    e.client_key = Beside(file, user["client-key"].as<std::string>(""));
    if (user["client-certificate-data"] || user["exec"] || user["auth-provider"]) {
      return InvalidArgument(file + ": the user's credential must be a token, a tokenFile or client-certificate and "
                             "client-key files (not -data, exec or auth-provider)");
    }
  }
  if (e.token.empty() && e.token_file.empty() && (e.client_cert.empty() || e.client_key.empty())) {
    return InvalidArgument(file + ": context \"" + wanted + "\" has no credential Causeway can use");
  }
  return e;
}

}  // namespace

Result<Endpoint> EndpointOf(const KubeSettings& s) {
  if (!s.kubeconfig.empty()) return FromKubeconfig(s.kubeconfig, s.context);
  return Endpoint{s.api_server, s.ca_file, s.token_file, "", s.client_cert, s.client_key};
}

Status StatusOf(int http_status, const std::string& body, const std::string& what) {
  std::string message;
  if (auto parsed = ParseUntrustedJson(body, "the API server's answer"); parsed.ok()) {
    message = JsonString(*parsed, "message");
  }
  if (message.empty()) message = "HTTP " + std::to_string(http_status);
  message = what + ": " + message;
  switch (http_status) {
    case 400:
    case 422: return InvalidArgument(message);
    case 401:
    case 403: return PermissionDenied(message);
    case 404: return NotFound(message);
    case 409: return AlreadyExists(message);
    case 410: return FailedPrecondition(message);
    default: return Unavailable(message);
  }
}

KubeApi::KubeApi(Endpoint endpoint, std::chrono::milliseconds timeout, const std::atomic<bool>* abandon)
    : endpoint_(std::move(endpoint)), timeout_(timeout), abandon_(abandon) {}

Result<std::string> KubeApi::Bearer() const {
  if (!endpoint_.token_file.empty()) {
    ASSIGN_OR_RETURN(std::string token, ReadSmallFile(endpoint_.token_file, "token file"));
    return Trimmed(std::move(token));
  }
  return endpoint_.token;
}

Result<net::ApiRequest> KubeApi::Prepare(const std::string& method, const std::string& path) const {
  net::ApiRequest r;
  r.method = method;
  r.url = endpoint_.server + path;
  r.timeout = timeout_;
  r.abandon = abandon_;
  ASSIGN_OR_RETURN(std::string token, Bearer());
  if (!token.empty()) r.headers.emplace_back("Authorization", "Bearer " + token);
  return r;
}

net::TlsTrust KubeApi::Trust() const { return {endpoint_.ca_file, endpoint_.client_cert, endpoint_.client_key}; }

Result<json> KubeApi::Call(const std::string& method, const std::string& path, const std::string& body,
                           const std::string& content_type) const {
  ASSIGN_OR_RETURN(net::ApiRequest r, Prepare(method, path));
  r.body = body;
  r.content_type = content_type;
  auto answer = net::SendApi(r, Trust());
  if (!answer.ok()) return answer.status().WithPrefix(method + " " + path);
  if (answer->status < 200 || answer->status > 299) return StatusOf(answer->status, answer->body, method + " " + path);
  if (answer->body.empty()) return json::object();
  return ParseUntrustedJson(answer->body, "the API server's answer to " + method + " " + path);
}

Result<json> KubeApi::Get(const std::string& path) const { return Call("GET", path, "", ""); }

Result<std::string> KubeApi::GetText(const std::string& path, size_t max_bytes) const {
  ASSIGN_OR_RETURN(net::ApiRequest r, Prepare("GET", path));
  r.max_bytes = max_bytes;
  auto answer = net::SendApi(r, Trust());
  if (!answer.ok()) return answer.status().WithPrefix("GET " + path);
  if (answer->status != 200) return StatusOf(answer->status, answer->body, "GET " + path);
  return std::move(answer->body);
}

Result<json> KubeApi::Create(const std::string& path, const json& object) const {
  return Call("POST", path, object.dump(), "application/json");
}

Result<json> KubeApi::MergePatch(const std::string& path, const json& patch) const {
  return Call("PATCH", path, patch.dump(), "application/merge-patch+json");
}

Status KubeApi::Delete(const std::string& path) const {
  json options = {{"kind", "DeleteOptions"}, {"apiVersion", "v1"}, {"propagationPolicy", "Background"}};
  auto r = Call("DELETE", path, options.dump(), "application/json");
  return r.ok() ? Status::Ok() : r.status();
}

Status KubeApi::Watch(const std::string& path, std::chrono::milliseconds limit,
                      const std::function<bool(const std::string&, const json&)>& on_event) const {
  ASSIGN_OR_RETURN(net::ApiRequest r, Prepare("GET", path));
  r.timeout = limit;
  int status = 0;
  std::string error_body, line;
  Status ended;  // why the handler stopped the stream, if it did
  auto on_data = [&](std::string_view piece) {
    // Events are one JSON object per line.
    for (char c : piece) {
      if (c != '\n') {
        if (line.size() >= kMaxEventBytes) {
          ended = ResourceExhausted("a watch event from " + endpoint_.server + " is larger than 4 MiB");
          return false;
        }
        line += c;
        continue;
      }
      auto event = ParseUntrustedJson(line, "a watch event");
      line.clear();
      if (!event.ok()) {
        ended = event.status();
        return false;
      }
      std::string type = JsonString(*event, "type");
      const json& object = JsonMember(*event, "object");
      if (type == "ERROR") {
        int64_t code = JsonInt(object, "code");
        ended = StatusOf(code == 0 ? 500 : static_cast<int>(code), object.dump(), "watch " + path);
        return false;
      }
      if (!on_event(type, object)) return false;
    }
    return true;
  };
  Status st = net::StreamApi(r, Trust(), &status, &error_body, on_data);
  if (!ended.ok()) return ended;
  if (!st.ok()) return st.WithPrefix("watch " + path);
  if (status != 200) return StatusOf(status, error_body, "watch " + path);
  return Status::Ok();
}

}  // namespace causeway::kube
