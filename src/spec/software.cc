#include "spec/software.h"

#include <algorithm>
#include <vector>

namespace causeway {

namespace {

std::vector<std::string_view> Parts(std::string_view v) {
  std::vector<std::string_view> out;
  while (true) {
    size_t dot = v.find('.');
    out.push_back(v.substr(0, dot));
    if (dot == std::string_view::npos) return out;
    v.remove_prefix(dot + 1);
  }
}

bool Numeric(std::string_view s) {
  return !s.empty() && s.size() <= 18 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

int ComparePart(std::string_view a, std::string_view b) {
  if (Numeric(a) && Numeric(b)) {
    long long x = std::stoll(std::string(a)), y = std::stoll(std::string(b));
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

}  // namespace

int CompareVersions(std::string_view a, std::string_view b) {
  auto pa = Parts(a), pb = Parts(b);
  for (size_t i = 0; i < std::max(pa.size(), pb.size()); ++i) {
    std::string_view x = i < pa.size() ? pa[i] : "0", y = i < pb.size() ? pb[i] : "0";
    if (int c = ComparePart(x, y); c != 0) return c;
  }
  return 0;
}

bool VersionRequirement::Matches(std::string_view v) const {
  if (v.empty()) return false;
  if (op == "==") {  // the parts given, and any under them
    auto want = Parts(version), have = Parts(v);
    if (have.size() < want.size()) return CompareVersions(v, version) == 0;
    for (size_t i = 0; i < want.size(); ++i) {
      if (ComparePart(want[i], have[i]) != 0) return false;
    }
    return true;
  }
  int c = CompareVersions(v, version);
  if (op == ">=") return c >= 0;
  if (op == ">") return c > 0;
  if (op == "<=") return c <= 0;
  if (op == "<") return c < 0;
  return c != 0;  // "!="
}

Result<VersionRequirement> ParseVersionRequirement(std::string_view text) {
  std::string_view t = text;
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
  VersionRequirement r{"==", ""};
  for (std::string_view op : {">=", "<=", "==", "!=", ">", "<"}) {
    if (t.substr(0, op.size()) == op) {
      r.op = std::string(op);
      t.remove_prefix(op.size());
      break;
    }
  }
  while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
  bool ok = !t.empty() && t.size() <= 64 && (t.front() >= '0' && t.front() <= '9') &&
            std::all_of(t.begin(), t.end(), [](char c) {
              return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '.' ||
                     c == '-' || c == '+';
            }) &&
            t.find("..") == std::string_view::npos && t.back() != '.';
  if (!ok) {
    return InvalidArgument("expected a version or a version requirement such as \"12.4\", \">=12.4\", \"<13\" or "
                           "\"550.54.15\", not \"" + std::string(text.substr(0, 80)) + "\"");
  }
  r.version = std::string(t);
  return r;
}

}  // namespace causeway
