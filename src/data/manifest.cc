#include "data/manifest.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <optional>

#include "causeway/crypto.h"

namespace causeway::data {
namespace {

constexpr std::string_view kHeader = "causeway-manifest 1 ";

size_t HexLength(std::string_view type) {
  if (type == "md5") return 32;
  if (type == "sha1") return 40;
  if (type == "sha256") return 64;
  return 0;
}

bool IsHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

bool Escaped(unsigned char c) { return c < 0x21 || c == 0x7f || c == '%'; }

void AppendPath(std::string& out, std::string_view path) {
  static const char kHex[] = "0123456789ABCDEF";
  for (unsigned char c : path) {
    if (Escaped(c)) {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// The path as written in a manifest line, unescaped; nullopt when a '%' is
// not followed by two hex digits or a byte that must be escaped is not.
std::optional<std::string> UnescapePath(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      int hi = HexValue(s[i + 1]), lo = HexValue(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else if (Escaped(c)) {
      return std::nullopt;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

// Why `path` cannot name an object in a dataset, or "".
std::string PathProblem(std::string_view path, size_t max_path) {
  if (path.empty()) return "an empty path";
  if (path.size() > max_path) return "a path longer than " + std::to_string(max_path) + " bytes";
  if (path.front() == '/') return "an absolute path (paths are relative to the dataset's root)";
  if (path.find('\0') != std::string_view::npos) return "a path with a NUL byte";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view seg = path.substr(start, end - start);
    if (seg.empty() || seg == "." || seg == "..") return "a path with an empty, \".\" or \"..\" segment";
    start = end + 1;
  }
  return "";
}

}  // namespace

bool KnownHashType(std::string_view type) { return HexLength(type) != 0; }

std::string CanonicalText(const Manifest& m) {
  std::string out;
  out.reserve(kHeader.size() + 8 + m.objects.size() * 96);
  out += kHeader;
  out += m.hash_type;
  out += '\n';
  char num[24];
  for (const ObjectEntry& o : m.objects) {
    out += o.hash;
    out += ' ';
    auto r = std::to_chars(num, num + sizeof num, o.size);
    out.append(num, r.ptr);
    out += ' ';
    AppendPath(out, o.path);
    out += '\n';
  }
  return out;
}

std::string ManifestDigest(std::string_view canonical_text) { return "sha256:" + Sha256Hex(canonical_text); }

bool IsDigest(std::string_view s) {
  return s.size() == 71 && s.substr(0, 7) == "sha256:" && IsHex(s.substr(7));
}

ManifestBuilder::ManifestBuilder(std::string hash_type, ManifestLimits limits) : limits_(limits) {
  m_.hash_type = std::move(hash_type);
}

Status ManifestBuilder::Add(std::string path, int64_t size, std::string hash, const std::string& where) {
  if (m_.objects.size() >= limits_.max_objects) {
    return Status(Code::kPayloadTooLarge, where + ": more than " + std::to_string(limits_.max_objects) +
                                              " objects (the most a dataset version may hold)");
  }
  if (std::string why = PathProblem(path, limits_.max_path); !why.empty()) {
    return InvalidArgument(where + ": " + why);
  }
  if (size < 0) return InvalidArgument(where + ": a negative size");
  std::transform(hash.begin(), hash.end(), hash.begin(), [](unsigned char c) { return std::tolower(c); });
  if (hash.size() != HexLength(m_.hash_type) || !IsHex(hash)) {
    return InvalidArgument(where + ": object " + path + " has no " + m_.hash_type + " hash" +
                           (hash.empty() ? "" : " (\"" + hash.substr(0, 80) + "\" is not one)"));
  }
  m_.objects.push_back(ObjectEntry{std::move(path), size, std::move(hash)});
  return Status::Ok();
}

Result<Manifest> ManifestBuilder::Finish() && {
  std::sort(m_.objects.begin(), m_.objects.end(),
            [](const ObjectEntry& a, const ObjectEntry& b) { return a.path < b.path; });
  m_.bytes = 0;
  for (size_t i = 0; i < m_.objects.size(); ++i) {
    if (i > 0 && m_.objects[i].path == m_.objects[i - 1].path) {
      return InvalidArgument("object " + m_.objects[i].path + " is listed twice");
    }
    m_.bytes += m_.objects[i].size;
  }
  return std::move(m_);
}

Result<Manifest> ParseManifest(std::string_view text, const std::string& file, const ManifestLimits& limits) {
  size_t eol = text.find('\n');
  std::string_view header = text.substr(0, eol);
  if (header.substr(0, kHeader.size()) != kHeader || !KnownHashType(header.substr(kHeader.size()))) {
    return InvalidArgument(file + ":1: expected the header \"causeway-manifest 1 md5\" (or sha1, sha256)");
  }
  ManifestBuilder b(std::string(header.substr(kHeader.size())), limits);
  size_t line_no = 1;
  size_t pos = eol == std::string_view::npos ? text.size() : eol + 1;
  while (pos < text.size()) {
    ++line_no;
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    std::string where = file + ":" + std::to_string(line_no);
    size_t s1 = line.find(' ');
    size_t s2 = s1 == std::string_view::npos ? s1 : line.find(' ', s1 + 1);
    if (s2 == std::string_view::npos) return InvalidArgument(where + ": expected \"<hash> <size> <path>\"");
    std::string_view size_text = line.substr(s1 + 1, s2 - s1 - 1);
    int64_t size = 0;
    auto r = std::from_chars(size_text.data(), size_text.data() + size_text.size(), size);
    if (r.ec != std::errc() || r.ptr != size_text.data() + size_text.size()) {
      return InvalidArgument(where + ": expected a size in bytes, not \"" + std::string(size_text.substr(0, 40)) + "\"");
    }
    std::string_view raw_path = line.substr(s2 + 1);
    if (raw_path.size() > limits.max_path * 3) {
      return InvalidArgument(where + ": a path longer than " + std::to_string(limits.max_path) + " bytes");
    }
    auto path = UnescapePath(raw_path);
    if (!path) return InvalidArgument(where + ": a path with a bad %-escape or an unescaped space or control byte");
    if (Status st = b.Add(std::move(*path), size, std::string(line.substr(0, s1)), where); !st.ok()) return st;
  }
  auto m = std::move(b).Finish();
  if (!m.ok()) return InvalidArgument(file + ": " + m.status().message());
  return m;
}

ManifestDiff Compare(const Manifest& want, const Manifest& have) {
  ManifestDiff d;
  size_t i = 0, j = 0;
  while (i < want.objects.size() || j < have.objects.size()) {
    if (j == have.objects.size() || (i < want.objects.size() && want.objects[i].path < have.objects[j].path)) {
      d.missing.push_back(want.objects[i].path);
      d.missing_bytes += want.objects[i].size;
      ++i;
    } else if (i == want.objects.size() || have.objects[j].path < want.objects[i].path) {
      ++d.extra;
      ++j;
    } else {
      const ObjectEntry &w = want.objects[i], &h = have.objects[j];
      if (w.size != h.size || h.hash.empty() || w.hash != h.hash) {
        d.changed.push_back(w.path);
        d.changed_bytes += w.size;
      }
      ++i;
      ++j;
    }
  }
  return d;
}

std::string ManifestDiff::Describe() const {
  auto list = [](const std::vector<std::string>& v) {
    std::string out;
    for (size_t i = 0; i < v.size() && i < 5; ++i) out += (i ? ", " : "") + v[i];
    if (v.size() > 5) out += ", …";
    return out;
  };
  std::string out;
  if (!missing.empty()) {
    out += std::to_string(missing.size()) + " object" + (missing.size() == 1 ? "" : "s") + " missing (" +
           list(missing) + ")";
  }
  if (!changed.empty()) {
    out += (out.empty() ? "" : ", ") + std::to_string(changed.size()) + " changed (" + list(changed) + ")";
  }
  return out.empty() ? "every object matches" : out;
}

}  // namespace causeway::data
