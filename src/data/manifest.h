// A dataset version's content manifest: every object's path, size and
// content hash, in one canonical text whose SHA-256 names the version.
//
//   causeway-manifest 1 md5
//   9e107d9d372bb6826bd81d3542a419d6 43 train/shard-00000.jsonl
//   e4d909c290d0fb1ca068ffaddf22cbd0 51 train/shard-00001.jsonl
//
// The header names the hash; then one line per object, sorted by path
// (bytewise), each "<hash> <size> <path>" with the path's bytes below 0x21,
// 0x7f and '%' written %XX. The same objects give the same text, whatever
// order they were listed in, so the digest is the content's.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "causeway/status.h"

namespace causeway::data {

struct ObjectEntry {
  std::string path;  // relative, '/'-separated, no "." or ".." segment
  int64_t size = 0;
  std::string hash;  // lower-case hex
};

struct Manifest {
  std::string hash_type;             // "md5", "sha1" or "sha256"
  std::vector<ObjectEntry> objects;  // sorted by path, each path once
  int64_t bytes = 0;                 // sizes summed
};

// Bounds on a manifest read from outside (a file, a listing).
struct ManifestLimits {
  size_t max_objects = 20'000'000;
  size_t max_path = 1024;  // bytes of one object's path
};

// The hash types a manifest may name, with their hex lengths.
bool KnownHashType(std::string_view type);

std::string CanonicalText(const Manifest& m);
// "sha256:<64 hex>" of the canonical text.
std::string ManifestDigest(std::string_view canonical_text);
// Whether `s` is written "sha256:<64 lower-case hex>".
bool IsDigest(std::string_view s);

// Reads a manifest in the canonical form (a file people bring, or the
// stored text). Errors name `file`, the line and what was expected; a path
// twice, a bad hash or a size that is not a number is an error, and so is
// anything past `limits`. The objects need not be sorted.
Result<Manifest> ParseManifest(std::string_view text, const std::string& file, const ManifestLimits& limits = {});

// Builds a manifest from a listing, one object at a time. Add checks each
// entry (its path, its hash's form) and the limits; Finish sorts, refuses a
// path listed twice and sums the sizes.
class ManifestBuilder {
 public:
  ManifestBuilder(std::string hash_type, ManifestLimits limits = {});
  // `where` names the entry in errors ("line 12").
  Status Add(std::string path, int64_t size, std::string hash, const std::string& where);
  Result<Manifest> Finish() &&;
  size_t size() const { return m_.objects.size(); }

 private:
  Manifest m_;
  ManifestLimits limits_;
};

// What a listing of a replica has against the manifest it should hold.
struct ManifestDiff {
  std::vector<std::string> missing;  // in the manifest, not in the replica
  std::vector<std::string> changed;  // in both, with another size or hash
  int64_t extra = 0;                 // in the replica only (not a mismatch)
  int64_t missing_bytes = 0, changed_bytes = 0;
  bool Matches() const { return missing.empty() && changed.empty(); }
  // "2 objects missing (train/a, train/b), 1 changed (val/c)": up to 5 named.
  std::string Describe() const;
};
// Both sorted by path (as every Manifest is). An object the replica lists
// without a hash (a store that keeps none for it) counts as changed: what
// cannot be checked is not verified.
ManifestDiff Compare(const Manifest& want, const Manifest& have);

}  // namespace causeway::data
