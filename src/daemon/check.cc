#include "daemon/check.hpp"

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "corral/pool.hpp"

namespace corral::daemon {

CheckResult run_check(const Settings& settings) {
  CheckResult result;
  const auto start = std::chrono::steady_clock::now();
  try {
    pool::Options options;
    options.max_workers = 1;
    options.max_queue = 1;
    options.grace = settings.grace;
    if (!settings.worker.empty()) options.worker_command = {settings.worker, "worker"};
    pool::WorkerPool pool(options);
    pool::Request request;
    request.code = "async () => { const {value} = await codemode.later({ms: 5}); return value; }";
    request.tools = {"later"};
    request.limits.timeout =
        std::min<std::chrono::milliseconds>(settings.default_timeout, std::chrono::seconds(30));
    request.limits.memory_limit = settings.memory_limit;
    std::vector<std::thread> timers;
    std::mutex timers_mutex;
    request.dispatcher = [&](const std::string&, std::string, pool::ToolAnswer answer) {
      // Answered by a host timer, after the guest has yielded to await it.
      std::lock_guard lock(timers_mutex);
      timers.emplace_back([answer] {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        answer.resolve(R"({"value":42})");
      });
    };
    pool::Outcome outcome = pool.execute(std::move(request));
    pool.shutdown(std::chrono::seconds(1));
    for (auto& t : timers) t.join();
    if (!outcome.ok()) {
      result.failure =
          std::string(to_string(outcome.failure().code)) + ": " + outcome.failure().message;
    } else {
      result.value = outcome.execution().value();
      result.ok = result.value == "42";
      if (!result.ok) result.failure = "the check returned " + result.value + ", not 42";
    }
  } catch (const std::exception& e) {
    result.failure = e.what();
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace corral::daemon
