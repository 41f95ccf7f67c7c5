#include "secrets/broker.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <memory>

#include <nlohmann/json.hpp>

#include "net/http_client.h"
#include "secrets/aws.h"

namespace causeway::secrets {

namespace {

void Wipe(std::string& s) { OPENSSL_cleanse(s.data(), s.size()); }

// KEY of a secret whose string is a JSON object (how Secrets Manager keeps
// key/value secrets); a number or boolean is given as written.
Result<std::string> KeyOf(const std::string& secret, const std::string& key) {
  auto j = nlohmann::json::parse(secret, nullptr, false);
  if (!j.is_object()) return FailedPrecondition("the secret is not a JSON object, so it has no key \"" + key + "\"");
  auto it = j.find(key);
  if (it == j.end()) return FailedPrecondition("the secret has no key \"" + key + "\"");
  std::string out = it->is_string() ? it->get<std::string>() : it->dump();
  for (auto& [k, v] : j.items()) {
    if (v.is_string()) Wipe(v.get_ref<std::string&>());
  }
  return out;
}

// Standard base64 (a Secret's data), or nullopt.
std::optional<std::string> Base64Decode(const std::string& in) {
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out(in.size() / 4 * 3, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(in.data()), static_cast<int>(in.size()));
  if (n < 0) return std::nullopt;
  size_t pad = 0;
  while (pad < 2 && pad < in.size() && in[in.size() - 1 - pad] == '=') ++pad;
  out.resize(static_cast<size_t>(n) - pad);
  return out;
}

// What an API server's Status answer says, for an error.
std::string KubeMessage(const std::string& body) {
  auto j = nlohmann::json::parse(body, nullptr, false);
  std::string m = j.is_object() ? j.value("message", "") : "";
  return m.size() > 300 ? m.substr(0, 300) + "…" : m;
}

}  // namespace

Result<std::map<std::string, std::string>> Broker::KubeSecret(const CloudFederation& fed, const SecretRef& ref,
                                                              const std::string& token) const {
  net::ApiRequest req;
  req.url = fed.api_server + "/api/v1/namespaces/" + net::UrlEncode(ref.ns) + "/secrets/" + net::UrlEncode(ref.name);
  req.headers = {{"Authorization", "Bearer " + token}, {"Accept", "application/json"}};
  req.timeout = timeout_;
  req.max_bytes = 2 << 20;  // a Secret holds at most 1 MiB
  auto answer = api_(req, net::TlsTrust{fed.ca_file, "", ""});
  Wipe(req.headers[0].second);
  const std::string what = "reading Secret " + ref.ns + "/" + ref.name + " from " + fed.api_server;
  if (!answer.ok()) return Status(answer.status().code(), what + ": " + answer.status().message());
  if (answer->status != 200) {
    std::string message = KubeMessage(answer->body);
    return FailedPrecondition(what + ": HTTP " + std::to_string(answer->status) + (message.empty() ? "" : ": " + message));
  }
  auto j = nlohmann::json::parse(answer->body, nullptr, false);
  Wipe(answer->body);
  if (!j.is_object()) return Unavailable(what + ": the answer is not JSON");
  std::map<std::string, std::string> data;
  if (j.contains("data") && j["data"].is_object()) {
    for (auto& [k, v] : j["data"].items()) {
      if (!v.is_string()) continue;
      auto decoded = Base64Decode(v.get<std::string>());
      Wipe(v.get_ref<std::string&>());
      if (!decoded) return Unavailable(what + ": key \"" + k + "\" is not base64");
      data[k] = std::move(*decoded);
    }
  }
  return data;
}

Fetched Broker::Fetch(const JobSpec& spec, const std::string& job_id, int attempt, const Mint& mint,
                      Timestamp now) const {
  Fetched out;
  std::map<std::string, std::string> tokens;                           // by store: Kubernetes's bearer
  std::map<std::string, std::unique_ptr<AwsCredentials>> sessions;     // by store: AWS's role session
  std::map<std::pair<std::string, std::string>, std::string> secrets;  // (store, name): a Secrets Manager string
  std::map<std::pair<std::string, std::string>, std::map<std::string, std::string>> kube;  // (store, ns/name): a Secret
  const std::string session_name = ("causeway-" + job_id + "-" + std::to_string(attempt)).substr(0, 64);
  for (const auto& [var, ref] : spec.secret_refs) {
    SecretRead read{var, "", ref.reference, ref.as_file ? "file" : "env", false, "", ""};
    auto fail = [&](const Status& st) {
      read.outcome = st.message();
      if (out.status.ok()) {
        out.status = Status(st.code(), "secret " + var + " (" + ref.reference + "): " + st.message());
      }
      out.reads.push_back(read);
    };
    // A later read after a failure is not tried: the attempt will not run.
    if (!out.status.ok()) {
      read.outcome = "not read: an earlier secret of the attempt could not be";
      out.reads.push_back(read);
      continue;
    }
    const SecretStore* store = identity_.StoreFor(ref.scheme, ref.cluster, spec.team, ref.Path());
    if (!store) {
      fail(PermissionDenied("no secret store lets team \"" + spec.team + "\" read it"));
      continue;
    }
    read.store = store->name;
    const CloudFederation* fed = identity_.FindFederation(store->identity);
    if (!fed) {
      fail(FailedPrecondition("store " + store->name + " names no known identity"));
      continue;
    }
    // The attempt's token for the store's identity: once per store.
    auto& token = tokens[store->name];
    if (token.empty()) {
      auto minted = mint(fed->audience);
      if (!minted.ok()) {
        fail(minted.status());
        continue;
      }
      token = std::move(*minted);
    }
    std::string value;
    if (store->kind == "kubernetes") {
      auto& secret = kube[{store->name, ref.Path()}];
      if (secret.empty()) {
        auto got = KubeSecret(*fed, ref, token);
        if (!got.ok()) {
          fail(got.status());
          continue;
        }
        secret = std::move(*got);
      }
      auto it = secret.find(ref.key);
      if (it == secret.end()) {
        fail(FailedPrecondition("the Secret has no key \"" + ref.key + "\""));
        continue;
      }
      value = it->second;
    } else {
      auto& session = sessions[store->name];
      if (!session) {
        auto creds = AssumeRoleWithWebIdentity(net_, fed->sts_endpoint, fed->role_arn, session_name, token, timeout_);
        if (!creds.ok()) {
          fail(creds.status());
          continue;
        }
        session = std::make_unique<AwsCredentials>(std::move(*creds));
      }
      auto& whole = secrets[{store->name, ref.name}];
      if (whole.empty()) {
        auto got = GetSecretString(net_, store->Endpoint(), store->region, *session, ref.name, now, timeout_);
        if (!got.ok()) {
          fail(got.status());
          continue;
        }
        whole = std::move(*got);
      }
      value = whole;
      if (!ref.key.empty()) {
        auto part = KeyOf(whole, ref.key);
        if (!part.ok()) {
          fail(part.status());
          continue;
        }
        value = std::move(*part);
      }
    }
    if (value.find('\0') != std::string::npos) {
      fail(FailedPrecondition("the value holds a NUL byte, which no variable can carry"));
      continue;
    }
    read.ok = true;
    read.outcome = "delivered";
    if (digest_) read.digest = "hmac-sha256:" + digest_(value);
    out.values[var] = std::move(value);
    out.reads.push_back(read);
  }
  for (auto& [store, token] : tokens) Wipe(token);
  for (auto& [key, value] : secrets) Wipe(value);
  for (auto& [key, secret] : kube) {
    for (auto& [k, value] : secret) Wipe(value);
  }
  if (!out.status.ok()) {
    for (auto& [var, value] : out.values) Wipe(value);
    out.values.clear();
  }
  return out;
}

}  // namespace causeway::secrets
