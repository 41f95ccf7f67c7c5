// The CLI's connection to the API: the global options (--server, --token,
// --token-file, --json) and a client that applies them and turns HTTP
// errors into the documented exit codes.
#pragma once

#include <chrono>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "causeway/job_spec.h"
#include "cli/commands.h"
#include "cli/errors.h"
#include "net/http_client.h"

namespace causeway::cli {

// `j[key]` as text: a string as it is, anything else as JSON, null as "".
inline std::string Str(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || j[key].is_null()) return "";
  return j[key].is_string() ? j[key].get<std::string>() : j[key].dump();
}

// "?k=v&..." of the parameters that are not empty, URL-encoded.
inline std::string QueryString(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string q;
  for (const auto& [k, v] : params) {
    if (v.empty()) continue;
    q += (q.empty() ? "?" : "&") + k + "=" + net::UrlEncode(v);
  }
  return q;
}

// A token kept in a file: its text without the trailing newline or spaces.
inline Result<std::string> ReadTokenFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string token, ReadFile(path));
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r' || token.back() == ' ')) token.pop_back();
  return token;
}

struct Globals {
  std::string server = "http://127.0.0.1:8080";
  std::string token;
  std::string token_file;
  bool json_output = false;
};

// A client of the API with the global options applied.
class Api {
 public:
  explicit Api(const Globals& g) : g_(g) {}

  // While the server answers 503 (a retryable refusal, such as a
  // checkpoint its cached mount has not flushed yet), ask again every 2 s
  // for up to `d`.
  void RetryUnavailableFor(std::chrono::milliseconds d) { retry_unavailable_ = d; }

  // Sends a request; on an HTTP error prints the server's message and
  // diagnostics and returns the exit code in `exit_code`.
  std::optional<net::HttpResult> Raw(const std::string& method, const std::string& target, const std::string& body,
                                     int& exit_code, std::vector<std::pair<std::string, std::string>> headers = {}) {
    auto hp = net::ParseServerUrl(g_.server);
    if (!hp.ok()) {
      exit_code = Fail(hp.status());
      return std::nullopt;
    }
    std::string token = g_.token;
    if (token.empty() && !g_.token_file.empty()) {
      auto t = ReadTokenFile(g_.token_file);
      if (!t.ok()) {
        exit_code = Fail(t.status());
        return std::nullopt;
      }
      token = *t;
    }
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
    if (!client_) client_.emplace(hp->first, hp->second);
    auto until = std::chrono::steady_clock::now() + retry_unavailable_;
    auto res = client_->Send(method, target, body, headers);
    while (res.ok() && res->status == 503 && std::chrono::steady_clock::now() + kRetryEvery <= until) {
      std::this_thread::sleep_for(kRetryEvery);
      res = client_->Send(method, target, body, headers);
    }
    if (!res.ok()) {
      exit_code = Fail(res.status());
      return std::nullopt;
    }
    if (res->status >= 400) {
      // An error body that is not JSON (a proxy's page) is reported by its status below.
      nlohmann::json j = nlohmann::json::parse(res->body, nullptr, false);
      exit_code = ExitForHttp(res->status);
      if (g_.json_output && !j.is_discarded()) {
        std::cout << j.dump(2) << "\n";
        return std::nullopt;
      }
      std::string message = j.is_discarded() ? res->body : j["error"].value("message", res->body);
      std::vector<Diagnostic> diags;
      if (!j.is_discarded() && j["error"]["details"].contains("diagnostics")) {
        for (const auto& d : j["error"]["details"]["diagnostics"]) {
          diags.push_back(Diagnostic{d.value("file", ""), d.value("line", 0), d.value("column", 0), d.value("field", ""),
                                     d.value("message", ""), d.value("severity", "") == "warning"});
        }
      }
      PrintError(message, diags);
      return std::nullopt;
    }
    exit_code = kExitOk;
    return std::move(*res);
  }

  // Raw, and the answer parsed as JSON.
  std::optional<nlohmann::json> Call(const std::string& method, const std::string& target, const std::string& body,
                           int& exit_code, std::vector<std::pair<std::string, std::string>> headers = {}) {
    auto res = Raw(method, target, body, exit_code, std::move(headers));
    if (!res) return std::nullopt;
    nlohmann::json j = nlohmann::json::parse(res->body, nullptr, false);
    if (j.is_discarded()) {
      exit_code = kExitFailure;
      std::cerr << "error: the server answered with something that is not JSON\n";
      return std::nullopt;
    }
    return j;
  }

 private:
  const Globals& g_;
  std::optional<net::HttpClient> client_;  // one keep-alive connection per command
  static constexpr std::chrono::seconds kRetryEvery{2};
  std::chrono::milliseconds retry_unavailable_{0};
};

}  // namespace causeway::cli
