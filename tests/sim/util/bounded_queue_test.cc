#include "sim/util/bounded_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace clustersim {
namespace {

TEST(BoundedQueue, PopsInPushOrderAndTryPopDoesNotWait) {
  BoundedQueue<int> queue(3);
  int item = -1;
  EXPECT_FALSE(queue.TryPop(&item));
  for (int i : {5, 7, 9}) ASSERT_TRUE(queue.Push(i));
  ASSERT_TRUE(queue.TryPop(&item));
  EXPECT_EQ(item, 5);
  ASSERT_TRUE(queue.Pop(&item));
  EXPECT_EQ(item, 7);
  ASSERT_TRUE(queue.Pop(&item));
  EXPECT_EQ(item, 9);
  EXPECT_FALSE(queue.TryPop(&item));
}

TEST(BoundedQueue, PushWaitsWhileFullUntilAnItemIsPopped) {
  BoundedQueue<int> queue(2);
  ASSERT_TRUE(queue.Push(1));
  ASSERT_TRUE(queue.Push(2));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    queue.Push(3);
    pushed.store(true);
  });
  // A Push that did not wait would be done long before this.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(pushed.load()) << "Push did not wait for room in a full queue";
  int item = 0;
  ASSERT_TRUE(queue.Pop(&item));
  EXPECT_EQ(item, 1);
  producer.join();
  EXPECT_TRUE(pushed.load());
  ASSERT_TRUE(queue.Pop(&item));
  EXPECT_EQ(item, 2);
  ASSERT_TRUE(queue.Pop(&item));
  EXPECT_EQ(item, 3);
}

TEST(BoundedQueue, CloseLetsPopDrainThenFailsAndRefusesPushes) {
  BoundedQueue<int> queue(4);
  ASSERT_TRUE(queue.Push(1));
  ASSERT_TRUE(queue.Push(2));
  queue.Close();
  EXPECT_FALSE(queue.Push(3));
  int item = 0;
  ASSERT_TRUE(queue.Pop(&item));
  EXPECT_EQ(item, 1);
  ASSERT_TRUE(queue.Pop(&item));
  EXPECT_EQ(item, 2);
  EXPECT_FALSE(queue.Pop(&item));
}

TEST(BoundedQueue, CloseWakesAWaitingPop) {
  BoundedQueue<int> queue(1);
  std::atomic<int> result{-1};
  std::thread consumer([&] {
    int item = 0;
    result.store(queue.Pop(&item) ? 1 : 0);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  queue.Close();
  consumer.join();
  EXPECT_EQ(result.load(), 0);
}

TEST(BoundedQueue, ManyItemsCrossThreadsInOrderThroughASmallQueue) {
  constexpr int kItems = 100000;
  BoundedQueue<std::vector<int>> queue(4);
  std::thread producer([&] {
    for (int i = 0; i < kItems; ++i) queue.Push(std::vector<int>{i, -i});
    queue.Close();
  });
  std::vector<int> item;
  int expected = 0;
  while (queue.Pop(&item)) {
    ASSERT_EQ(item, (std::vector<int>{expected, -expected}));
    ++expected;
  }
  producer.join();
  EXPECT_EQ(expected, kItems);
}

}  // namespace
}  // namespace clustersim
