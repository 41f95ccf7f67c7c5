#include "readiness/key_scan.h"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace causeway::readiness {

namespace {

// Variable names the cloud SDKs read static credentials from (AWS's are
// read by every S3-compatible store too: CoreWeave, Nebius, Lambda).
constexpr std::pair<std::string_view, std::string_view> kKeyNames[] = {
    {"AWS_ACCESS_KEY_ID", "AWS access key"},
    {"AWS_SECRET_ACCESS_KEY", "AWS secret key"},
    {"AWS_SESSION_TOKEN", "AWS session credentials"},
    {"GOOGLE_APPLICATION_CREDENTIALS", "Google service account key file"},
    {"GOOGLE_CREDENTIALS", "Google service account key"},
    {"CLOUDSDK_AUTH_ACCESS_TOKEN", "Google access token"},
    {"AZURE_CLIENT_SECRET", "Azure client secret"},
    {"ARM_CLIENT_SECRET", "Azure client secret"},
    {"AZURE_STORAGE_KEY", "Azure storage account key"},
    {"AZURE_STORAGE_ACCOUNT_KEY", "Azure storage account key"},
    {"AZURE_STORAGE_CONNECTION_STRING", "Azure storage connection string"},
    {"NEBIUS_IAM_TOKEN", "Nebius IAM token"},
    {"LAMBDA_API_KEY", "Lambda Cloud API key"},
    {"CRUSOE_SECRET_KEY", "Crusoe secret key"},
    {"COREWEAVE_API_TOKEN", "CoreWeave API token"},
};

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// An AWS access key id: AKIA (long-lived) or ASIA (temporary) and 16
// upper-case letters or digits, standing alone.
bool HasAwsKeyId(std::string_view v) {
  for (size_t at = 0; at + 20 <= v.size(); ++at) {
    std::string_view head = v.substr(at, 4);
    if (head != "AKIA" && head != "ASIA") continue;
    bool before = at == 0 || !std::isalnum(static_cast<unsigned char>(v[at - 1]));
    bool body = std::all_of(v.begin() + at + 4, v.begin() + at + 20, [](char c) {
      return std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c));
    });
    bool after = at + 20 == v.size() || !std::isalnum(static_cast<unsigned char>(v[at + 20]));
    if (before && body && after) return true;
  }
  return false;
}

// What kind of static key `value` is, or "".
std::string_view ValueKind(std::string_view v) {
  if (HasAwsKeyId(v)) return "AWS access key";
  if (v.find("-----BEGIN") != std::string_view::npos && v.find("PRIVATE KEY-----") != std::string_view::npos) {
    return "private key";
  }
  if (v.find("\"service_account\"") != std::string_view::npos && v.find("private_key") != std::string_view::npos) {
    return "Google service account key";
  }
  if (v.find("AccountKey=") != std::string_view::npos) return "Azure storage connection string";
  return "";
}

std::string_view NameKind(std::string_view name) {
  std::string n = Upper(name);
  for (const auto& [key, kind] : kKeyNames) {
    if (n == key) return kind;
  }
  if (EndsWith(n, "_SECRET_ACCESS_KEY")) return "S3 secret key";
  if (EndsWith(n, "_ACCESS_KEY_ID")) return "S3 access key";
  return "";
}

}  // namespace

std::vector<KeyFinding> ScanForStaticKeys(const std::map<std::string, std::string>& envs,
                                          const std::vector<std::string>& secret_names) {
  std::vector<KeyFinding> out;
  for (const auto& [name, value] : envs) {
    std::string_view kind = NameKind(name);
    if (kind.empty()) kind = ValueKind(value);
    if (!kind.empty()) out.push_back({name, std::string(kind)});
  }
  for (const std::string& name : secret_names) {
    if (std::string_view kind = NameKind(name); !kind.empty()) out.push_back({name, std::string(kind) + " (a secret)"});
  }
  return out;
}

}  // namespace causeway::readiness
