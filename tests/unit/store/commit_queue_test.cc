#include "store/commit_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <thread>

#include "causeway/ids.h"
#include "unit/temp_db.h"

namespace causeway {
namespace {

class CommitQueueTest : public ::testing::Test {
 protected:
  void SetUp() override { store_ = db_.Open(); }
  void TearDown() override { store_.reset(); }
  WriteFn Unit(const std::string& id) {
    return [id](WriteTx& tx) -> Status {
      JobRecord j;
      j.id = id;
      RETURN_IF_ERROR(tx.InsertJob(j));
      AuditEvent e;
      e.action = "job.submit";
      e.resource = "job/" + id;
      return tx.AppendAudit(e);
    };
  }
  testing::TempDb db_;
  std::unique_ptr<Store> store_;
};

TEST_F(CommitQueueTest, ConcurrentWritersAreGroupCommittedAndAllDurable) {
  constexpr int kThreads = 8, kPerThread = 200;
  {
    CommitQueue queue(*store_, CommitQueue::Options{});
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          if (!queue.Run(Unit("job_" + std::to_string(t) + "_" + std::to_string(i))).ok()) ++failures;
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(queue.units(), static_cast<uint64_t>(kThreads * kPerThread));
    EXPECT_LE(queue.batches(), queue.units());
  }
  JobFilter all;
  all.limit = 100000;
  EXPECT_EQ(store_->ListJobs(all)->size(), static_cast<size_t>(kThreads * kPerThread));
  EXPECT_EQ(store_->GetAuditHead()->seq, kThreads * kPerThread);
}

TEST_F(CommitQueueTest, ShedsLoadWhenFullAndCommitsQueuedWorkOnStop) {
  CommitQueue::Options o;
  o.max_pending = 1;
  CommitQueue queue(*store_, o);
  // Hold the commit thread inside a unit so the queue fills up.
  std::promise<void> entered, release;
  auto release_future = release.get_future().share();
  ASSERT_TRUE(queue.Enqueue(
      [&](WriteTx& tx) -> Status {
        entered.set_value();
        release_future.wait();
        return Unit("job_first")(tx);
      },
      [](Status) {}).ok());
  entered.get_future().wait();
  std::atomic<bool> second_done{false};
  ASSERT_TRUE(queue.Enqueue(Unit("job_second"), [&](Status st) { second_done = st.ok(); }).ok());
  Status shed = queue.Enqueue(Unit("job_third"), [](Status) { ADD_FAILURE() << "a shed unit must not complete"; });
  EXPECT_EQ(shed.code(), Code::kResourceExhausted);
  release.set_value();
  queue.Stop();
  EXPECT_TRUE(second_done.load());
  EXPECT_TRUE(store_->GetJob("job_second")->has_value());
  EXPECT_FALSE(store_->GetJob("job_third")->has_value());
  EXPECT_EQ(queue.Enqueue(Unit("job_late"), [](Status) {}).code(), Code::kUnavailable);
}

}  // namespace
}  // namespace causeway
