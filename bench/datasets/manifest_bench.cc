// bench/datasets: a manifest of 1,000,000 objects (the figure)
// built from a listing in rclone's `lsf --csv --format psh` form and
// verified against a second listing, with the time and memory each takes.
// Beside it, the floor: `sha256sum`-style hashing of the same canonical
// text alone. Prints one JSON line.
//   manifest_bench [OBJECTS]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "causeway/crypto.h"
#include "data/manifest.h"
#include "data/rclone.h"

using namespace causeway;
using namespace causeway::data;

namespace {

double Ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
long PeakRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// The listing rclone prints for `objects` objects, in a shuffled order.
std::string Listing(int objects) {
  std::string out;
  out.reserve(static_cast<size_t>(objects) * 80);
  char line[160];
  for (int i = 0; i < objects; ++i) {
    int k = static_cast<int>((static_cast<int64_t>(i) * 7919) % objects);
    std::string md5 = Sha256Hex(std::to_string(k)).substr(0, 32);
    std::snprintf(line, sizeof line, "train/part-%03d/shard-%07d.jsonl.zst,%d,%s\n", k % 512, k, 1000 + k % 100000,
                  md5.c_str());
    out += line;
  }
  return out;
}

Result<Manifest> Build(const std::string& listing) {
  ManifestBuilder b("md5");
  size_t pos = 0;
  while (pos < listing.size()) {
    size_t end = listing.find('\n', pos);
    std::string_view rec(listing.data() + pos, end - pos);
    pos = end + 1;
    auto f = SplitCsvRecord(rec);
    RETURN_IF_ERROR(b.Add(std::move((*f)[0]), std::stoll((*f)[1]), std::move((*f)[2]), "listing"));
  }
  return std::move(b).Finish();
}

}  // namespace

int main(int argc, char** argv) {
  const int objects = argc > 1 ? std::atoi(argv[1]) : 1'000'000;
  std::string listing = Listing(objects);
  long rss0 = PeakRssKb();

  auto t0 = std::chrono::steady_clock::now();
  auto m = Build(listing);
  if (!m.ok()) return std::fprintf(stderr, "%s\n", m.status().ToString().c_str()), 1;
  std::string text = CanonicalText(*m);
  std::string digest = ManifestDigest(text);
  double build_ms = Ms(t0);
  long rss_build = PeakRssKb();

  // Verification: the stored text read back, a fresh listing of the
  // replica built, and the two compared.
  t0 = std::chrono::steady_clock::now();
  auto stored = ParseManifest(text, "stored");
  auto replica = Build(listing);
  if (!stored.ok() || !replica.ok()) return 1;
  bool match = Compare(*stored, *replica).Matches();
  double verify_ms = Ms(t0);
  long rss_verify = PeakRssKb();

  t0 = std::chrono::steady_clock::now();
  std::string floor = Sha256Hex(text);
  double hash_ms = Ms(t0);

  std::printf("{\"bench\": \"dataset_manifest\", \"objects\": %d, \"bytes\": %lld, \"manifest_bytes\": %zu, "
              "\"digest\": \"%s\", \"build_ms\": %.0f, \"verify_ms\": %.0f, \"matches\": %s, "
              "\"rss_mb_with_listing\": %.0f, \"peak_rss_mb_build\": %.0f, \"peak_rss_mb_verify\": %.0f, \"listing_mb\": %.0f, "
              "\"sha256_of_text_ms\": %.0f, \"digest_matches_floor\": %s}\n",
              objects, static_cast<long long>(m->bytes), text.size(), digest.c_str(), build_ms, verify_ms,
              match ? "true" : "false", rss0 / 1024.0, rss_build / 1024.0, rss_verify / 1024.0,
              listing.size() / 1e6, hash_ms, ("sha256:" + floor) == digest ? "true" : "false");
  return match ? 0 : 1;
}
