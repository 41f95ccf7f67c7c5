// Exports the audit trail to a SIEM (audit/sinks.h): Causeway's own events
// as OCSF, then the providers' imported ones, in batches, each batch sent
// again until the sink takes it, a cursor file recording how far delivery
// got. The cursor is written (atomically, synced) only after the sink took
// a batch, so a crash or an outage never skips an event: delivery is at
// least once, and a batch is repeated only when its delivery was in doubt.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "audit/sinks.h"
#include "causeway/store.h"

namespace causeway {

// How far export has got: the last Causeway event (chain seq) and the last
// imported event (its id) the sink took.
struct ExportCursor {
  int64_t seq = 0;
  int64_t imported_id = 0;
};

// A missing file is the start (zeros); an unreadable one is kInvalidArgument
// naming the file, so export never silently starts over.
Result<ExportCursor> LoadExportCursor(const std::string& path);
// Written to PATH.tmp, synced, renamed over PATH, the folder synced.
Status SaveExportCursor(const std::string& path, const ExportCursor& cursor);

// Where export reads the trail: the database itself (StoreAuditFeed, what
// the server serves at GET /v1/audit/feed) or the API (the CLI's feed).
class AuditFeed {
 public:
  virtual ~AuditFeed() = default;
  struct Batch {
    std::vector<std::string> events;  // OCSF JSON, one event each, oldest first
    int64_t last = 0;                 // the position of the last event (seq or id); `after` when none
  };
  // Up to `limit` of Causeway's own events after chain position `after`.
  virtual Result<Batch> Own(int64_t after, int limit) = 0;
  // Up to `limit` of the providers' imported events after id `after`.
  virtual Result<Batch> Imported(int64_t after, int limit) = 0;
};

std::unique_ptr<AuditFeed> StoreAuditFeed(const AuditReader& store);

struct ExportOptions {
  int batch = 500;
  int max_attempts = 0;  // per batch; 0: keep trying (with --follow)
  std::chrono::milliseconds retry_min{200}, retry_max{30000};
  bool follow = false;                       // keep exporting new events until stopped
  std::chrono::milliseconds poll{1000};      // with follow: how often to look for new events
};

struct ExportStats {
  int64_t own = 0, imported = 0;  // events delivered
  int64_t batches = 0, retries = 0;
  ExportCursor cursor;
};

// Exports from `feed` to `sink` from the cursor in `cursor_path` until
// everything is delivered (or, with follow, until `stop`). A batch that
// fails max_attempts times ends the run with that error, the cursor where
// it was. `progress` (optional) hears each retry's error.
Result<ExportStats> ExportAudit(AuditFeed& feed, audit::Sink& sink, const std::string& cursor_path,
                                const ExportOptions& options, const std::atomic<bool>& stop,
                                const std::function<void(const Status&)>& on_retry = {});

}  // namespace causeway
