// bench/audit_verify: `audit verify` over a chain of N events (default one
// million) in a SQLite database: every event's canonical JSON rebuilt and
// hashed, every link and the signed checkpoints checked, read from the file
// as `causeway audit verify --db` does. Target: at least 1,000,000 events/s.
// Beside it, in the same run, `sha256sum` over the same canonical bytes: the
// floor any verifier pays for hashing alone. Prints one JSON line.
//   verify_bench [EVENTS] [DIR]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "store/audit_chain.h"
#include "causeway/store.h"
#include "service/checkpoint_service.h"
#include "store/commit_queue.h"

using namespace causeway;

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 1000000;
  std::filesystem::path dir = argc > 2 ? argv[2] : std::filesystem::temp_directory_path() / ("cw-verify-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string db = (dir / "chain.db").string();
  std::filesystem::remove(db);
  auto store = OpenSqliteStore(db);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    return 1;
  }
  // Events like the trail's: job submissions with their details.
  auto t0 = std::chrono::steady_clock::now();
  const int64_t per_unit = 2000;
  Timestamp at = FromUnixMicros(1796000000LL * 1000000);
  int64_t canonical_bytes = 0;
  std::ofstream canonical((dir / "canonical.txt").string(), std::ios::binary);
  for (int64_t done = 0; done < n; done += per_unit) {
    Status st = (*store)->Write([&](WriteTx& tx) -> Status {
      for (int64_t i = done; i < std::min(n, done + per_unit); ++i) {
        AuditEvent e;
        e.time = at + Micros(i * 1000);
        e.actor = "user:researcher" + std::to_string(i % 500) + "@corp.example";
        e.action = i % 10 == 0 ? "job.cancel" : "job.submit";
        e.resource = "job/job_01JD" + std::to_string(1000000000 + i);
        e.details = {{"name", "train-llama-" + std::to_string(i % 97)}, {"team", i % 3 ? "nlp" : "vision"},
                     {"owner", "researcher" + std::to_string(i % 500) + "@corp.example"}, {"gpus", 8 * (1 + i % 4)},
                     {"queue", "nlp-h100"}};
        RETURN_IF_ERROR(tx.AppendAudit(e));
        std::string text = audit::CanonicalJson(e);
        canonical_bytes += static_cast<int64_t>(text.size());
        canonical << text;
      }
      return Status::Ok();
    });
    if (!st.ok()) {
      std::fprintf(stderr, "%s\n", st.ToString().c_str());
      return 1;
    }
  }
  canonical.close();
  double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  store->reset();

  // As `causeway audit verify --db`: a fresh read-only open, then the check.
  auto t1 = std::chrono::steady_clock::now();
  auto reader = OpenSqliteStore(db, SqliteOptions{.read_only = true});
  if (!reader.ok()) return 1;
  auto report = VerifyTrail(**reader);
  double verify_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  if (!report.ok() || !report->ok()) {
    std::fprintf(stderr, "verification failed: %s\n", report.ok() ? report->chain.reason.c_str() : report.status().ToString().c_str());
    return 1;
  }

  // sha256sum over the same canonical bytes, one stream (no per-event cost).
  std::string cmd = "sha256sum " + (dir / "canonical.txt").string() + " > /dev/null";
  auto t2 = std::chrono::steady_clock::now();
  int rc = std::system(cmd.c_str());
  double sha_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t2).count();
  std::printf("{\"bench\": \"audit_verify\", \"events\": %lld, \"build_s\": %.2f, \"verify_s\": %.3f, "
              "\"events_per_s\": %.0f, \"target_events_per_s\": 1000000, \"canonical_mb\": %.1f, "
              "\"sha256sum_s\": %.3f, \"sha256sum_ok\": %s, \"verify_over_sha256sum\": %.2f}\n",
              static_cast<long long>(report->chain.events), build_s, verify_s, report->chain.events / verify_s,
              canonical_bytes / 1e6, sha_s, rc == 0 ? "true" : "false", verify_s / sha_s);
  std::filesystem::remove_all(dir);
  return 0;
}
