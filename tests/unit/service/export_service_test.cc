// ExportAudit over the store's feed into a sink kept in memory: own events
// (as OCSF) and imported ones, batch by batch, each batch sent until taken,
// the cursor moved only after the sink took it, and a second run sending
// nothing.
#include "service/export_service.h"

#include <atomic>

#include <nlohmann/json.hpp>

#include "unit/service/service_fixture.h"

namespace causeway::testing {
namespace {

using nlohmann::json;

// Takes batches into `got`; refuses the first `fail` sends with `failure`.
class MemorySink final : public audit::Sink {
 public:
  Status Send(const std::vector<std::string>& events) override {
    ++calls;
    if (fail > 0) {
      --fail;
      return failure;
    }
    got.insert(got.end(), events.begin(), events.end());
    return Status::Ok();
  }
  std::string Describe() const override { return "memory"; }

  std::vector<std::string> got;
  int fail = 0;
  int calls = 0;
  Status failure = Unavailable("the collector is restarting");
};

class ExportServiceTest : public ServiceTest {
 protected:
  void SetUp() override {
    ServiceTest::SetUp();
    cursor_ = db_.path() + ".cursor";
    for (int i = 0; i < 5; ++i) {
      AuditEvent e;
      e.time = clock_.Now();
      e.actor = "tok_admin";
      e.action = "test.event";
      e.resource = "test/" + std::to_string(i);
      ASSERT_TRUE(queue_->Run([e](WriteTx& tx) mutable { return tx.AppendAudit(e); }).ok());
    }
    // Three events of a provider's log, imported in one unit with its own
    // audit event (every write is audited): six events of Causeway's own.
    Status stored = queue_->Run([this](WriteTx& tx) -> Status {
      for (int i = 0; i < 3; ++i) {
        ImportedAuditEvent e;
        e.provider = "aws";
        e.source = "cloudtrail";
        e.source_id = "ct-" + std::to_string(i);
        e.event = json{{"metadata", {{"uid", "ct-" + std::to_string(i)}}}}.dump();
        auto inserted = tx.InsertImportedAudit(e);
        if (!inserted.ok()) return inserted.status();
      }
      AuditEvent e;
      e.time = clock_.Now();
      e.actor = "tok_admin";
      e.action = "audit.import";
      e.resource = "audit-log/cloudtrail";
      return tx.AppendAudit(e);
    });
    ASSERT_TRUE(stored.ok()) << stored.ToString();
    options_.batch = 2;
    options_.retry_min = std::chrono::milliseconds(2);
    options_.retry_max = std::chrono::milliseconds(4);
  }
  void TearDown() override {
    std::remove(cursor_.c_str());
    ServiceTest::TearDown();
  }

  std::string cursor_;
  ExportOptions options_;
  std::atomic<bool> stop_{false};
};

TEST_F(ExportServiceTest, SendsOwnThenImportedEventsOnceAndRemembersWhereItGot) {
  auto feed = StoreAuditFeed(*store_);
  MemorySink sink;
  auto stats = ExportAudit(*feed, sink, cursor_, options_, stop_);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->own, 6);
  EXPECT_EQ(stats->imported, 3);
  ASSERT_EQ(sink.got.size(), 9u);
  EXPECT_EQ(json::parse(sink.got[0])["metadata"]["product"]["name"], "Causeway") << "own events as OCSF";
  std::vector<std::string> imported;
  for (const std::string& e : sink.got) {
    std::string uid = json::parse(e)["metadata"]["uid"];
    if (uid.rfind("ct-", 0) == 0) imported.push_back(uid);
  }
  EXPECT_EQ(imported, (std::vector<std::string>{"ct-0", "ct-1", "ct-2"})) << "imported ones in their order";
  auto cursor = LoadExportCursor(cursor_);
  ASSERT_TRUE(cursor.ok());
  EXPECT_EQ(cursor->seq, 6);
  EXPECT_GT(cursor->imported_id, 0);

  MemorySink again;
  auto second = ExportAudit(*feed, again, cursor_, options_, stop_);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(again.got.empty()) << "nothing new, nothing sent";
}

TEST_F(ExportServiceTest, AFlakySinkIsRetriedAndLosesNothing) {
  auto feed = StoreAuditFeed(*store_);
  MemorySink sink;
  sink.fail = 2;
  auto stats = ExportAudit(*feed, sink, cursor_, options_, stop_);
  ASSERT_TRUE(stats.ok()) << stats.status().ToString();
  EXPECT_EQ(stats->retries, 2);
  EXPECT_EQ(sink.got.size(), 9u) << "every event once";
}

TEST_F(ExportServiceTest, ARefusalStopsTheRunAndTheCursorStaysWhereItWas) {
  auto feed = StoreAuditFeed(*store_);
  MemorySink sink;
  sink.fail = 1;
  sink.failure = PermissionDenied("the collector refuses this token");
  auto stats = ExportAudit(*feed, sink, cursor_, options_, stop_);
  ASSERT_FALSE(stats.ok());
  EXPECT_EQ(stats.status().code(), Code::kPermissionDenied);
  EXPECT_EQ(sink.calls, 1) << "not retried";
  auto cursor = LoadExportCursor(cursor_);
  ASSERT_TRUE(cursor.ok());
  EXPECT_EQ(cursor->seq, 0);
  EXPECT_EQ(cursor->imported_id, 0);
}

// The feed pages by position and says where a page ends, also when empty.
TEST_F(ExportServiceTest, TheFeedPagesByPosition) {
  auto feed = StoreAuditFeed(*store_);
  auto first = feed->Own(0, 2);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->events.size(), 2u);
  EXPECT_EQ(first->last, 2);
  auto rest = feed->Own(first->last, 100);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(rest->events.size(), 4u);
  EXPECT_EQ(rest->last, 6);
  auto none = feed->Imported(1000, 10);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->events.empty());
  EXPECT_EQ(none->last, 1000);
}

}  // namespace
}  // namespace causeway::testing
