// examples/pool.cc: run code-mode JavaScript in hardened worker processes.
//
//   build/release/examples/pool_example build/release/apps/corral/corral
//
// The worker command is the `corral` binary; an embedder that links corral
// into its own executable can leave worker_command empty and add a
// `worker` subcommand of its own that calls corral::pool::run_worker.
#include <cstdio>
#include <string>

#include "corral/pool.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PATH_TO_CORRAL\n", argv[0]);
    return 2;
  }
  corral::pool::WorkerPool pool({.worker_command = {argv[1], "worker"}, .max_workers = 2});

  corral::pool::Request request;
  request.code = R"(async () => {
    const {sum} = await codemode.math.add({a: 1, b: 2});
    console.log('1 + 2 =', sum);
    return sum * 10;
  })";
  request.tools = {"math.add"};
  request.limits.timeout = std::chrono::seconds(5);
  request.dispatcher = [](const std::string& name, std::string args,
                          corral::pool::ToolAnswer answer) {
    // name == "math.add", args == {"a":1,"b":2}; answer now or later, from any thread.
    answer.resolve(R"({"sum":3})");
  };

  corral::pool::Outcome outcome = pool.execute(std::move(request));
  if (!outcome.ok()) {
    std::printf("failed: %s: %s\n", std::string(corral::to_string(outcome.failure().code)).c_str(),
                outcome.failure().message.c_str());
    return 1;
  }
  std::printf("value: %s\nstdout: %s", outcome.execution().value().c_str(),
              outcome.execution().stdout_text().c_str());
  pool.shutdown(std::chrono::seconds(5));
  return 0;
}
