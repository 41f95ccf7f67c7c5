#include "secrets/aws.h"

#include <openssl/crypto.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <ctime>

#include <nlohmann/json.hpp>

#include "causeway/crypto.h"
#include "net/http_client.h"

namespace causeway::secrets {

namespace {

std::string Hmac(std::string_view key, std::string_view data) {
  unsigned char md[32];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), md, &len);
  return std::string(reinterpret_cast<const char*>(md), len);
}

// "20150830T123600Z"
std::string AmzDate(Timestamp now) {
  std::time_t t = std::chrono::system_clock::to_time_t(
      std::chrono::system_clock::time_point(std::chrono::duration_cast<std::chrono::system_clock::duration>(now.time_since_epoch())));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[17];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &tm);
  return buf;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// An endpoint's authority (Host) and path.
struct Endpoint {
  std::string url, host, path;
};
Result<Endpoint> SplitEndpoint(const std::string& url) {
  const size_t scheme = url.find("://");
  if (scheme == std::string::npos || (url.compare(0, scheme, "https") != 0 && url.compare(0, scheme, "http") != 0)) {
    return InvalidArgument("\"" + url + "\" is not an http(s) URL");
  }
  Endpoint e;
  e.url = url;
  const size_t slash = url.find('/', scheme + 3);
  e.host = url.substr(scheme + 3, slash == std::string::npos ? std::string::npos : slash - scheme - 3);
  e.path = slash == std::string::npos ? "/" : url.substr(slash);
  if (e.host.empty() || e.path.find_first_of("?#") != std::string::npos) {
    return InvalidArgument("\"" + url + "\" is not an endpoint (scheme://host[:port][/path])");
  }
  if (slash == std::string::npos) e.url += "/";
  return e;
}

// The text of <tag>...</tag> in an AWS XML answer ("" when absent).
std::string XmlText(const std::string& xml, const std::string& tag) {
  const std::string open = "<" + tag + ">", close = "</" + tag + ">";
  const size_t a = xml.find(open);
  if (a == std::string::npos) return "";
  const size_t b = xml.find(close, a + open.size());
  return b == std::string::npos ? "" : xml.substr(a + open.size(), b - a - open.size());
}

std::string Clip(std::string s) {
  if (s.size() > 300) s = s.substr(0, 300) + "…";
  return s;
}

}  // namespace

AwsCredentials::~AwsCredentials() {
  OPENSSL_cleanse(secret_access_key.data(), secret_access_key.size());
  OPENSSL_cleanse(session_token.data(), session_token.size());
}

std::vector<std::pair<std::string, std::string>> SignV4(const AwsRequest& r, const AwsCredentials& creds,
                                                        const std::string& region, const std::string& service,
                                                        Timestamp now) {
  const std::string date = AmzDate(now), day = date.substr(0, 8);
  std::vector<std::pair<std::string, std::string>> signed_headers = {{"host", r.host}, {"x-amz-date", date}};
  if (!creds.session_token.empty()) signed_headers.emplace_back("x-amz-security-token", creds.session_token);
  for (const auto& [name, value] : r.headers) signed_headers.emplace_back(Lower(name), value);
  std::sort(signed_headers.begin(), signed_headers.end());
  std::string canonical_headers, names;
  for (const auto& [name, value] : signed_headers) {
    canonical_headers += name + ":" + value + "\n";
    names += (names.empty() ? "" : ";") + name;
  }
  const std::string canonical = r.method + "\n" + r.path + "\n" + r.query + "\n" + canonical_headers + "\n" + names +
                                "\n" + Sha256Hex(r.body);
  const std::string scope = day + "/" + region + "/" + service + "/aws4_request";
  const std::string to_sign = "AWS4-HMAC-SHA256\n" + date + "\n" + scope + "\n" + Sha256Hex(canonical);
  std::string key = Hmac("AWS4" + creds.secret_access_key, day);
  key = Hmac(key, region);
  key = Hmac(key, service);
  key = Hmac(key, "aws4_request");
  const std::string signature = HexEncode(Hmac(key, to_sign));
  OPENSSL_cleanse(key.data(), key.size());
  std::vector<std::pair<std::string, std::string>> out = {
      {"Host", r.host},
      {"X-Amz-Date", date},
      {"Authorization", "AWS4-HMAC-SHA256 Credential=" + creds.access_key_id + "/" + scope +
                            ", SignedHeaders=" + names + ", Signature=" + signature}};
  if (!creds.session_token.empty()) out.emplace_back("X-Amz-Security-Token", creds.session_token);
  return out;
}

Result<AwsCredentials> AssumeRoleWithWebIdentity(net::Fetcher& net, const std::string& sts_endpoint,
                                                 const std::string& role_arn, const std::string& session_name,
                                                 const std::string& token, std::chrono::milliseconds timeout) {
  ASSIGN_OR_RETURN(Endpoint e, SplitEndpoint(sts_endpoint.empty() ? "https://sts.amazonaws.com" : sts_endpoint));
  net::OutboundRequest req;
  req.method = net::OutboundRequest::Method::kPost;
  req.url = e.url;
  req.content_type = "application/x-www-form-urlencoded";
  req.headers = {{"Accept", "text/xml"}, {"Host", e.host}};
  req.body = "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&DurationSeconds=900&RoleArn=" +
             net::UrlEncode(role_arn) + "&RoleSessionName=" + net::UrlEncode(session_name) +
             "&WebIdentityToken=" + net::UrlEncode(token);
  req.timeout = timeout;
  auto answer = net.Send(req);
  OPENSSL_cleanse(req.body.data(), req.body.size());
  const std::string what = "assuming " + role_arn + " at " + e.host;
  if (!answer.ok()) return Status(answer.status().code(), what + ": " + answer.status().message());
  if (answer->status != 200) {
    std::string code = XmlText(answer->body, "Code"), message = XmlText(answer->body, "Message");
    return FailedPrecondition(what + ": HTTP " + std::to_string(answer->status) +
                              (code.empty() ? "" : " " + code) + (message.empty() ? "" : ": " + Clip(message)));
  }
  AwsCredentials c;
  c.access_key_id = XmlText(answer->body, "AccessKeyId");
  c.secret_access_key = XmlText(answer->body, "SecretAccessKey");
  c.session_token = XmlText(answer->body, "SessionToken");
  OPENSSL_cleanse(answer->body.data(), answer->body.size());
  if (c.access_key_id.empty() || c.secret_access_key.empty()) return Unavailable(what + ": the answer holds no credentials");
  return c;
}

Result<std::string> GetSecretString(net::Fetcher& net, const std::string& endpoint, const std::string& region,
                                    const AwsCredentials& creds, const std::string& secret_id, Timestamp now,
                                    std::chrono::milliseconds timeout) {
  ASSIGN_OR_RETURN(Endpoint e, SplitEndpoint(endpoint));
  AwsRequest r;
  r.host = e.host;
  r.path = e.path;
  r.headers = {{"content-type", "application/x-amz-json-1.1"}, {"x-amz-target", "secretsmanager.GetSecretValue"}};
  r.body = nlohmann::json{{"SecretId", secret_id}}.dump();
  net::OutboundRequest req;
  req.method = net::OutboundRequest::Method::kPost;
  req.url = e.url;
  req.content_type = "application/x-amz-json-1.1";
  req.body = r.body;
  req.headers = SignV4(r, creds, region, "secretsmanager", now);
  req.headers.emplace_back("X-Amz-Target", "secretsmanager.GetSecretValue");
  req.timeout = timeout;
  req.max_bytes = 128 * 1024;  // Secrets Manager's values are at most 64 KiB
  auto answer = net.Send(req);
  for (auto& [name, value] : req.headers) OPENSSL_cleanse(value.data(), value.size());
  const std::string what = "reading " + secret_id + " from " + e.host;
  if (!answer.ok()) return Status(answer.status().code(), what + ": " + answer.status().message());
  auto body = nlohmann::json::parse(answer->body, nullptr, false);
  OPENSSL_cleanse(answer->body.data(), answer->body.size());
  if (answer->status != 200) {
    std::string type, message;
    if (body.is_object()) {
      type = body.value("__type", "");
      if (size_t hash = type.rfind('#'); hash != std::string::npos) type = type.substr(hash + 1);
      message = body.contains("message") ? body.value("message", "") : body.value("Message", "");
    }
    return FailedPrecondition(what + ": HTTP " + std::to_string(answer->status) + (type.empty() ? "" : " " + type) +
                              (message.empty() ? "" : ": " + Clip(message)));
  }
  if (!body.is_object()) return Unavailable(what + ": the answer is not JSON");
  if (!body.contains("SecretString") || !body["SecretString"].is_string()) {
    return FailedPrecondition(what + ": it holds binary data; Causeway delivers a secret's string");
  }
  std::string value = body["SecretString"].get<std::string>();
  std::string& held = body["SecretString"].get_ref<std::string&>();
  OPENSSL_cleanse(held.data(), held.size());
  return value;
}

}  // namespace causeway::secrets
