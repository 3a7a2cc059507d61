// Pool of sandboxes (kobako B-46..B-48, E-46, E-47 translated to RAII).
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "sandbox_test_util.hpp"

namespace corral::sandbox {
namespace {

Pool::Factory factory(std::atomic<int>& built) {
  return [&built] {
    ++built;
    auto sandbox = std::make_unique<Sandbox>(testing::quick(0.2));
    sandbox->bind("codemode.one", [](std::string_view) { return std::string("1"); });
    return sandbox;
  };
}

TEST(Pool, B46_LeasesReuseSandboxesAndBuildLazily) {
  std::atomic<int> built{0};
  Pool pool(2, std::chrono::seconds(5), factory(built));
  EXPECT_EQ(built.load(), 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(pool.checkout()->eval("codemode.one() + 1").value(), "2");
  EXPECT_EQ(built.load(), 1);
}

TEST(Pool, B47_TrappedSandboxIsDiscardedAndReplaced) {
  std::atomic<int> built{0};
  Pool pool(1, std::chrono::seconds(5), factory(built));
  {
    auto lease = pool.checkout();
    EXPECT_THROW(lease->eval("while (true) {}"), TimeoutError);
  }
  EXPECT_EQ(pool.discarded(), 1u);
  EXPECT_EQ(pool.checkout()->eval("2").value(), "2");
  EXPECT_EQ(built.load(), 2);
}

TEST(Pool, E46_CheckoutTimesOutWithBusy) {
  std::atomic<int> built{0};
  Pool pool(1, std::chrono::milliseconds(50), factory(built));
  auto held = pool.checkout();
  try {
    pool.checkout();
    FAIL() << "checkout succeeded";
  } catch (const CapacityError& e) {
    EXPECT_EQ(e.code(), FailureCode::busy);
    EXPECT_TRUE(e.retryable());
    EXPECT_EQ(e.execution(), nullptr);
  }
}

TEST(Pool, E47_InvalidPoolOptions) {
  std::atomic<int> built{0};
  EXPECT_THROW(Pool(0, std::chrono::seconds(1), factory(built)), std::invalid_argument);
  EXPECT_THROW(Pool(1, std::chrono::milliseconds(0), factory(built)), std::invalid_argument);
  EXPECT_THROW(Pool(1, std::chrono::milliseconds(-1), factory(built)), std::invalid_argument);
  EXPECT_THROW(Pool(1, std::chrono::milliseconds::max(), factory(built)), std::invalid_argument);
  EXPECT_NO_THROW(Pool(1, std::nullopt, factory(built)));
}

TEST(Pool, B48_ThreadsShareThePool) {
  std::atomic<int> built{0};
  Pool pool(2, std::nullopt, factory(built));
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        if (pool.checkout()->eval("codemode.one()").value() == "1") ++ok;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), 40);
  EXPECT_LE(built.load(), 2);
}

}  // namespace
}  // namespace corral::sandbox
