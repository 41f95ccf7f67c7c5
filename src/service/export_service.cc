#include "service/export_service.h"

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include <nlohmann/json.hpp>

#include "audit/ocsf.h"
#include "causeway/job_spec.h"

namespace causeway {

using nlohmann::json;

Result<ExportCursor> LoadExportCursor(const std::string& path) {
  if (!std::filesystem::exists(path)) return ExportCursor{};
  ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  json j = json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("seq") || !j["seq"].is_number_integer() || !j.contains("imported_id") ||
      !j["imported_id"].is_number_integer()) {
    return InvalidArgument(path + ": not an export cursor (expected {\"seq\": N, \"imported_id\": N}); "
                           "remove it to export everything again");
  }
  return ExportCursor{j["seq"].get<int64_t>(), j["imported_id"].get<int64_t>()};
}

Status SaveExportCursor(const std::string& path, const ExportCursor& c) {
  std::string tmp = path + ".tmp";
  std::string text = json{{"seq", c.seq}, {"imported_id", c.imported_id}}.dump() + "\n";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Unavailable("cannot write " + tmp + ": " + std::strerror(errno));
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ::close(fd);
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) return Unavailable("cannot write " + path);
  std::string dir = std::filesystem::path(path).parent_path().string();
  int dfd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return Status::Ok();
}

namespace {

class StoreFeed final : public AuditFeed {
 public:
  explicit StoreFeed(const AuditReader& store) : store_(store) {}
  Result<Batch> Own(int64_t after, int limit) override {
    AuditFilter f;
    f.after_seq = after;
    f.limit = limit;
    ASSIGN_OR_RETURN(auto own, store_.ListAudit(f));
    Batch b{{}, after};
    for (const AuditEvent& e : own) {
      b.events.push_back(audit::ocsf::FromCauseway(e).dump(-1, ' ', false, json::error_handler_t::replace));
      b.last = e.seq;
    }
    return b;
  }
  Result<Batch> Imported(int64_t after, int limit) override {
    ASSIGN_OR_RETURN(auto imported, store_.ListImportedAuditSince(after, limit));
    Batch b{{}, after};
    for (ImportedAuditEvent& e : imported) {
      b.events.push_back(std::move(e.event));
      b.last = e.id;
    }
    return b;
  }

 private:
  const AuditReader& store_;
};

}  // namespace

std::unique_ptr<AuditFeed> StoreAuditFeed(const AuditReader& store) { return std::make_unique<StoreFeed>(store); }

Result<ExportStats> ExportAudit(AuditFeed& feed, audit::Sink& sink, const std::string& cursor_path,
                                const ExportOptions& o, const std::atomic<bool>& stop,
                                const std::function<void(const Status&)>& on_retry) {
  if (o.batch < 1 || o.batch > 10000) return InvalidArgument("the batch size must be 1 to 10000");
  ExportStats stats;
  ASSIGN_OR_RETURN(stats.cursor, LoadExportCursor(cursor_path));
  std::mt19937_64 jitter(std::random_device{}());
  // Sends one batch until the sink takes it; then the cursor moves.
  auto deliver = [&](const std::vector<std::string>& events, const ExportCursor& next) -> Status {
    auto wait = o.retry_min;
    for (int attempt = 1;; ++attempt) {
      Status st = sink.Send(events);
      if (st.ok()) break;
      bool retryable = st.code() == Code::kUnavailable || st.code() == Code::kDeadlineExceeded;
      if (!retryable || (o.max_attempts > 0 && attempt >= o.max_attempts) || stop) return st;
      ++stats.retries;
      if (on_retry) on_retry(st);
      // Exponential backoff with jitter, so a collector coming back is not
      // met by every exporter at once.
      std::this_thread::sleep_for(wait / 2 + std::chrono::milliseconds(jitter() % (wait.count() / 2 + 1)));
      wait = std::min(o.retry_max, wait * 2);
    }
    RETURN_IF_ERROR(SaveExportCursor(cursor_path, next));
    stats.cursor = next;
    ++stats.batches;
    return Status::Ok();
  };
  for (;;) {
    bool moved = false;
    ASSIGN_OR_RETURN(AuditFeed::Batch own, feed.Own(stats.cursor.seq, o.batch));
    if (!own.events.empty()) {
      ExportCursor next = stats.cursor;
      next.seq = own.last;
      RETURN_IF_ERROR(deliver(own.events, next));
      stats.own += static_cast<int64_t>(own.events.size());
      moved = true;
    }
    ASSIGN_OR_RETURN(AuditFeed::Batch imported, feed.Imported(stats.cursor.imported_id, o.batch));
    if (!imported.events.empty()) {
      ExportCursor next = stats.cursor;
      next.imported_id = imported.last;
      RETURN_IF_ERROR(deliver(imported.events, next));
      stats.imported += static_cast<int64_t>(imported.events.size());
      moved = true;
    }
    if (stop) break;
    if (!moved) {
      if (!o.follow) break;
      std::this_thread::sleep_for(o.poll);
    }
  }
  return stats;
}

}  // namespace causeway
