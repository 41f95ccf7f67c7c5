// Moving and listing dataset objects with rclone (Debian's package): a
// listing with content hashes becomes a manifest, a copy moves only what
// is missing or changed at the target. rclone runs as a child with an
// environment Causeway makes (PATH, HOME, RCLONE_CONFIG and nothing else):
// a server's AWS_* or proxy settings never change what it reaches, and the
// remotes' credentials stay in rclone's own config file.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "causeway/status.h"
#include "data/manifest.h"

namespace causeway::data {

struct RcloneSettings {
  std::string binary = "rclone";
  std::string config;  // rclone.conf; "" : rclone's default
  std::string home;    // HOME for rclone (its cache); "" : /tmp
  std::chrono::milliseconds timeout{std::chrono::hours(6)};  // one run of rclone
};

// Progress of a copy, from rclone's stats (every second).
struct CopyProgress {
  int64_t bytes = 0, total_bytes = 0;  // of this run of rclone
  int64_t transfers = 0, total_transfers = 0, checks = 0, errors = 0;
  double speed = 0;  // bytes a second
  int run = 1;       // which run (retries start a new one)
};

struct CopyOptions {
  std::string bwlimit;  // rclone's --bwlimit ("10M", "512k"); "" : none
  // A path at the target holding an earlier version (rclone's
  // --copy-dest): objects found there unchanged are copied within the
  // target's store, not moved across the network.
  std::string copy_dest;
  // An object's size by its path (the manifest's), to tell the bytes that
  // crossed the network from those copied within the target.
  std::function<int64_t(std::string_view object)> object_size;
  int attempts = 3;     // runs of rclone before giving up
  std::chrono::milliseconds backoff{std::chrono::seconds(2)};  // before run 2; doubled after each
  std::function<void(const CopyProgress&)> progress;
  // A failed run is reported here before the next one starts.
  std::function<void(int run, const std::string& error)> retrying;
  const std::atomic<bool>* stop = nullptr;
};

struct CopyResult {
  // Every run's bytes across the network, summed: rclone's count less what
  // was copied within the target's store (server-side).
  int64_t bytes_moved = 0;
  int64_t server_side_bytes = 0;
  int64_t transfers = 0, checks = 0;
  int runs = 0;
  std::vector<std::string> errors;  // one per failed run
};

class Rclone {
 public:
  explicit Rclone(RcloneSettings settings) : s_(std::move(settings)) {}

  // The environment rclone runs with.
  std::map<std::string, std::string> Environment() const;

  // Lists every object under `remote` ("name:bucket/prefix") with its
  // `hash_type` hash (md5, sha1, sha256) into a manifest. An object the
  // remote keeps no such hash for is an error naming it.
  Result<Manifest> List(const std::string& remote, const std::string& hash_type, const ManifestLimits& limits,
                        const std::atomic<bool>* stop = nullptr) const;

  // How many objects, and how many bytes, are under `remote` (an object,
  // or a path that holds objects): none where nothing is there. rclone's
  // `size`, killed past `timeout`.
  struct Size {
    int64_t objects = 0, bytes = 0;
  };
  Result<Size> Count(const std::string& remote, std::chrono::milliseconds timeout) const;

  // Copies what is missing or changed (by checksum) under `from` to `to`.
  // A failed run is retried after a backoff that doubles; the result says
  // every run's error. Fails (with what was moved in `partial`, when given)
  // when no run succeeded.
  Result<CopyResult> Copy(const std::string& from, const std::string& to, const CopyOptions& options,
                          CopyResult* partial = nullptr) const;

 private:
  std::vector<std::string> Base() const;
  RcloneSettings s_;
};

// rclone's name for a hash type: "MD5", "SHA-1", "SHA-256"; "" if unknown.
std::string RcloneHashName(const std::string& hash_type);

// Splits one CSV record (rclone lsf --csv) into fields; nullopt when a
// quote is left open (the record goes on on the next line).
std::optional<std::vector<std::string>> SplitCsvRecord(std::string_view record);

}  // namespace causeway::data
