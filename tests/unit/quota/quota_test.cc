#include "quota/quota.h"

#include <gtest/gtest.h>

namespace causeway::quota {
namespace {

using V = QuotaBook::Verdict;

std::vector<QueueConfig> Queues() {
  return {
      {"a", "ta", "c", 1, false, {{"H100", 16, std::nullopt, 8}}},    // keeps 8, lends 8
      {"b", "tb", "c", 2, false, {{"H100", 16, 8, std::nullopt}}},    // lends all, borrows up to 8
      {"solo", "ts", "", 1, false, {{"L4", 8, std::nullopt, std::nullopt}}},
  };
}

TEST(QuotaTest, WithinNominalFits) {
  QuotaBook book(Queues());
  int a = book.QueueIndex("a"), h = book.FlavorIndex("H100");
  auto c = book.Evaluate(a, h, 16, true);
  EXPECT_EQ(c.verdict, V::kFits);
  EXPECT_EQ(c.borrowed, 0);
  EXPECT_NE(c.reason.find("would use 16 of its nominal 16 H100 GPUs"), std::string::npos) << c.reason;
}

TEST(QuotaTest, BorrowsWhatOthersLendWithinLimits) {
  QuotaBook book(Queues());
  int a = book.QueueIndex("a"), b = book.QueueIndex("b"), h = book.FlavorIndex("H100");
  // b may borrow at most 8 (its borrowing limit).
  auto c = book.Evaluate(b, h, 24);
  EXPECT_EQ(c.verdict, V::kBorrows);
  EXPECT_EQ(c.borrowed, 8);
  EXPECT_EQ(book.Evaluate(b, h, 25).verdict, V::kNoFit);
  EXPECT_NE(book.Evaluate(b, h, 25, true).reason.find("borrowing limit of 8"), std::string::npos);
  // a has no borrowing limit but b lends only what a's lending... a may take b's 16.
  EXPECT_EQ(book.Evaluate(a, h, 32).verdict, V::kBorrows);
  EXPECT_EQ(book.Evaluate(a, h, 33).verdict, V::kNoFit);
  // Once a borrows all of b's quota, b within its nominal must reclaim.
  book.Add(a, h, 32);
  EXPECT_TRUE(book.Borrowing(a, h));
  auto r = book.Evaluate(b, h, 8);
  EXPECT_EQ(r.verdict, V::kNeedsReclaim);
  EXPECT_EQ(r.shortfall, 8);
  book.Remove(a, h, 8);
  EXPECT_EQ(book.Evaluate(b, h, 8).verdict, V::kFits);
}

TEST(QuotaTest, LendingLimitKeepsAGuaranteedShare) {
  QuotaBook book(Queues());
  int a = book.QueueIndex("a"), b = book.QueueIndex("b"), h = book.FlavorIndex("H100");
  // a lends at most 8, so b can borrow 8 even though a uses nothing...
  EXPECT_EQ(book.Evaluate(b, h, 24).verdict, V::kBorrows);
  book.Add(b, h, 24);
  // ...and a's guaranteed 8 stay available to it without reclaiming anything.
  EXPECT_EQ(book.Evaluate(a, h, 8).verdict, V::kFits);
  EXPECT_EQ(book.Evaluate(a, h, 9).verdict, V::kNeedsReclaim);
}

TEST(QuotaTest, QueuesOutsideACohortNeitherBorrowNorLend) {
  QuotaBook book(Queues());
  int s = book.QueueIndex("solo"), l = book.FlavorIndex("L4");
  EXPECT_EQ(book.Evaluate(s, l, 8).verdict, V::kFits);
  auto c = book.Evaluate(s, l, 9, true);
  EXPECT_EQ(c.verdict, V::kNoFit);
  EXPECT_NE(c.reason.find("in no cohort"), std::string::npos);
  EXPECT_EQ(book.Evaluate(s, book.FlavorIndex("H100"), 1).verdict, V::kNoFit);
  EXPECT_EQ(book.Evaluate(s, -1, 1).verdict, V::kNoFit);
}

TEST(QuotaTest, DominantShareIsBorrowedFractionOverWeight) {
  QuotaBook book(Queues());
  int a = book.QueueIndex("a"), b = book.QueueIndex("b"), h = book.FlavorIndex("H100");
  EXPECT_EQ(book.DominantShare(a), 0);
  book.Add(a, h, 20);  // borrows 4 of the cohort's 24 lendable
  EXPECT_EQ(book.DominantShare(a), 4 * 1'000'000 / 24);
  book.Add(b, h, 20);  // weight 2 halves it
  EXPECT_EQ(book.DominantShare(b), 4 * 1'000'000 / 24 / 2);
  EXPECT_EQ(book.CohortMembers(a).size(), 2u);
}

}  // namespace
}  // namespace causeway::quota
