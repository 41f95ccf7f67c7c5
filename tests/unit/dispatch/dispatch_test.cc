// The per-backend worker and the shared backoff (src/dispatch/worker.h).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "dispatch/worker.h"
#include "fakes/gated_adapter.h"

namespace causeway::dispatch {
namespace {

using testing::Gate;  // a task that holds the worker until opened: a backend call that hangs

TEST(WorkerTest, RunsTasksInOrderAndRefusesPastItsBound) {
  Gate gate;
  std::mutex mu;
  std::vector<int> ran;
  std::atomic<int64_t> now_us{3'600'000'000};
  Worker w("test", 2, [&] { return std::chrono::steady_clock::time_point(std::chrono::microseconds(now_us.load())); });
  EXPECT_EQ(w.BusyFor().count(), 0) << "idle";
  ASSERT_TRUE(w.Post([&] { gate.Wait(); }));
  gate.WaitEntered();
  now_us += 7'000'000;
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::seconds>(w.BusyFor()).count(), 7) << "the hung task shows as busy";
  ASSERT_TRUE(w.Post([&] { std::lock_guard<std::mutex> l(mu); ran.push_back(1); }));
  ASSERT_TRUE(w.Post([&] { std::lock_guard<std::mutex> l(mu); ran.push_back(2); }));
  EXPECT_EQ(w.waiting(), 2u);
  EXPECT_FALSE(w.Post([&] { ran.push_back(99); })) << "a third waiting task is refused";
  // ...but what must not be dropped is queued anyway.
  ASSERT_TRUE(w.PostAlways([&] {
    std::lock_guard<std::mutex> l(mu);
    ran.push_back(3);
  }));
  gate.Open();
  w.WaitIdle();
  EXPECT_EQ(w.BusyFor().count(), 0);
  std::lock_guard<std::mutex> l(mu);
  EXPECT_EQ(ran, (std::vector<int>{1, 2, 3}));
}

TEST(WorkerTest, StopFinishesTheRunningTaskDropsTheRestAndRefusesMore) {
  Gate gate;
  std::atomic<int> ran{0};
  auto w = std::make_unique<Worker>("test", 8);
  ASSERT_TRUE(w->Post([&] { gate.Wait(); ran++; }));
  gate.WaitEntered();
  ASSERT_TRUE(w->Post([&] { ran += 10; }));
  std::thread stopper([&] { w->Stop(); });
  // Stop waits for the running task; the waiting one is dropped.
  while (w->waiting() != 0) std::this_thread::yield();
  gate.Open();
  stopper.join();
  EXPECT_EQ(ran, 1);
  EXPECT_FALSE(w->Post([] {}));
  EXPECT_FALSE(w->PostAlways([] {}));
}

TEST(WorkerTest, ATaskThatThrowsDoesNotStopTheWorker) {
  Worker w("test", 4);
  std::atomic<bool> after{false};
  ASSERT_TRUE(w.Post([] { throw std::runtime_error("bug"); }));
  ASSERT_TRUE(w.Post([&] { after = true; }));
  w.WaitIdle();
  EXPECT_TRUE(after);
}

TEST(BackoffTest, DoublesFromTheFirstWaitUpToTheCapAndResetsOnAnAnswer) {
  using namespace std::chrono;
  Backoff b(seconds(1), seconds(60));
  auto t0 = steady_clock::time_point{} + hours(1);
  EXPECT_FALSE(b.failing());
  EXPECT_TRUE(b.Ready(t0));
  std::vector<seconds> waits;
  for (int i = 0; i < 9; ++i) {
    b.Failed(t0);
    waits.push_back(duration_cast<seconds>(b.next() - t0));
  }
  EXPECT_EQ(waits, (std::vector<seconds>{seconds(1), seconds(2), seconds(4), seconds(8), seconds(16), seconds(32),
                                         seconds(60), seconds(60), seconds(60)}));
  EXPECT_FALSE(b.Ready(t0 + seconds(59)));
  EXPECT_TRUE(b.Ready(t0 + seconds(60)));
  EXPECT_EQ(b.failures(), 9);
  b.Answered();
  EXPECT_FALSE(b.failing());
  EXPECT_TRUE(b.Ready(t0));
  // Many failures in a row do not overflow the schedule.
  for (int i = 0; i < 100; ++i) b.Failed(t0);
  EXPECT_EQ(duration_cast<seconds>(b.next() - t0), seconds(60));
}

}  // namespace
}  // namespace causeway::dispatch
