// support::parallel_for: every index exactly once whatever the thread count,
// and the first exception reaches the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

#include "support/parallel_for.h"

namespace axon {
namespace {

TEST(parallel_for, RunsEveryIndexOnce) {
  for (int threads : {0, 1, 2, 7}) {
    for (size_t n : {size_t{0}, size_t{1}, size_t{3}, size_t{1000}}) {
      std::vector<std::atomic<int>> seen(n);
      support::parallel_for(n, threads, [&](size_t i) { ++seen[i]; });
      for (size_t i = 0; i < n; ++i) EXPECT_EQ(seen[i].load(), 1) << "index " << i << " of " << n << ", threads " << threads;
    }
  }
}

TEST(parallel_for, RethrowsTheFirstFailure) {
  std::atomic<int> ran{0};
  EXPECT_THROW(support::parallel_for(100, 2,
                                     [&](size_t i) {
                                       ++ran;
                                       if (i == 5) throw std::runtime_error("index 5");
                                     }),
               std::runtime_error);
  EXPECT_GE(ran.load(), 6);
}

}  // namespace
}  // namespace axon
