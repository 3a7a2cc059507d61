// tests/hostile/guest_js_fuzz.cc: the JS guest fuzzer. Generates hostile
// snippets (js_generator.hpp) and runs each through a real WorkerPool of real
// `corral worker` processes with a short timeout and a small memory limit,
// asserting for every run:
//   - it ends in success or a typed Failure whose code a guest run may end in
//     (compile_error, guest_error, timeout, memory_limit,
//     unserializable_value); a worker crash (connection_broken), internal or
//     any other code is a violation;
//   - it ends within timeout + grace + slack;
//   - this (host) process's peak RSS (VmHWM) stays within --host-rss-mb of
//     where it started;
//   - the worker's RSS, sampled during the run and read as VmHWM after it,
//     stays under --worker-rss-mb;
//   - the next trivial run (`async () => 1`) succeeds.
// Every violation prints the snippet as a reproducer, with the seed and index
// that regenerate it. Exit status: 0 when nothing was violated, 1 otherwise,
// 2 for bad usage.
//
//   guest_js_fuzz --worker build/apps/corral/corral --seed 1 --seconds 30
//   guest_js_fuzz --seed 1 --index 17               # one snippet again
//   guest_js_fuzz --code snippet.js                 # a snippet from a file
//   guest_js_fuzz --include-known-failures          # fuzz/README.md
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "corral/pool.hpp"
#include "tests/hostile/js_generator.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Kilobytes of `field` ("VmRSS", "VmHWM") in /proc/<pid>/status; 0 if gone.
std::uint64_t status_kb(const std::string& pid, const char* field) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  const std::size_t n = std::strlen(field);
  while (std::getline(in, line)) {
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':') {
      return std::strtoull(line.c_str() + n + 1, nullptr, 10);
    }
  }
  return 0;
}

// The pids below `pid` (its children, theirs, ...), from
// /proc/PID/task/TID/children: a worker is a small init in its own pid
// namespace with the V8 process under it.
void descendants(const std::string& pid, std::vector<std::string>& out, int depth = 0) {
  if (depth > 8) return;
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator("/proc/" + pid + "/task", ec)) {
    std::ifstream in(task.path() / "children");
    for (std::string child; in >> child;) {
      out.push_back(child);
      descendants(child, out, depth + 1);
    }
  }
}

// `field` summed over `pid` and its descendants, in kilobytes.
std::uint64_t tree_kb(int pid, const char* field) {
  const std::string root = std::to_string(pid);
  std::vector<std::string> pids{root};
  descendants(root, pids);
  std::uint64_t total = 0;
  for (const auto& p : pids) total += status_kb(p, field);
  return total;
}

struct Config {
  std::string worker = CORRAL_BINARY;
  std::uint64_t seed = 1;
  double seconds = 30;
  std::optional<std::uint64_t> index;
  std::string code_file;
  bool include_known = false;
  std::vector<std::string> only;
  double timeout = 0.5;
  std::uint64_t memory_limit_mb = 32;
  double grace = 1.0;
  double slack = 1.5;
  std::uint64_t host_rss_mb = 192;
  std::uint64_t worker_rss_mb = 320;
  std::uint64_t max_runs = 0;  // 0: until --seconds
  bool verbose = false;
};

[[noreturn]] void usage(const char* message) {
  std::cerr
      << "guest_js_fuzz: " << message
      << "\nusage: guest_js_fuzz [--worker PATH] [--seed N] [--seconds S] [--index I] "
         "[--code FILE] [--family NAME]... [--include-known-failures] [--timeout S] "
         "[--memory-limit-mb N] [--grace S] [--slack S] [--host-rss-mb N] [--worker-rss-mb N] "
         "[--max-runs N] [--verbose] [--list-families]\n";
  std::exit(2);
}

Config parse_args(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(("missing value for " + a).c_str());
      return argv[++i];
    };
    if (a == "--worker") {
      c.worker = value();
    } else if (a == "--seed") {
      c.seed = std::stoull(value());
    } else if (a == "--seconds") {
      c.seconds = std::stod(value());
    } else if (a == "--index") {
      c.index = std::stoull(value());
    } else if (a == "--code") {
      c.code_file = value();
    } else if (a == "--family") {
      c.only.push_back(value());
    } else if (a == "--include-known-failures") {
      c.include_known = true;
    } else if (a == "--timeout") {
      c.timeout = std::stod(value());
    } else if (a == "--memory-limit-mb") {
      c.memory_limit_mb = std::stoull(value());
    } else if (a == "--grace") {
      c.grace = std::stod(value());
    } else if (a == "--slack") {
      c.slack = std::stod(value());
    } else if (a == "--host-rss-mb") {
      c.host_rss_mb = std::stoull(value());
    } else if (a == "--worker-rss-mb") {
      c.worker_rss_mb = std::stoull(value());
    } else if (a == "--max-runs") {
      c.max_runs = std::stoull(value());
    } else if (a == "--verbose") {
      c.verbose = true;
    } else if (a == "--list-families") {
      for (const auto& f : corral::hostile::families()) {
        std::cout << f.name
                  << (f.known_failure ? std::string("  (known failure: ") + f.why + ")" : "")
                  << "\n";
      }
      std::exit(0);
    } else {
      usage(("unknown argument " + a).c_str());
    }
  }
  return c;
}

// WorkerWatch: which pid each of the pool's workers has.
class WorkerWatch {
 public:
  void attach(corral::pool::WorkerPool& pool) {
    pool.subscribe([this](const corral::pool::Event& e) {
      std::lock_guard lock(mutex_);
      if (e.kind == corral::pool::Event::Kind::worker_started) {
        pids_[e.worker] = e.pid;
      } else if (e.kind == corral::pool::Event::Kind::execution_started) {
        running_ = e.worker;
      } else if (e.kind == corral::pool::Event::Kind::worker_exited) {
        exits_[e.worker] = e.exit;
      }
    });
  }
  // The pid of the worker that took the latest run; 0 if none yet.
  int running_pid() const {
    std::lock_guard lock(mutex_);
    auto it = pids_.find(running_);
    return it == pids_.end() ? 0 : it->second;
  }

 private:
  mutable std::mutex mutex_;
  std::map<std::uint64_t, int> pids_;
  std::map<std::uint64_t, std::optional<corral::pool::WorkerExit>> exits_;
  std::uint64_t running_ = 0;
};

// RssSampler: the highest VmRSS of the running worker while a run is in
// flight (a worker killed mid-run can no longer be asked for its VmHWM).
class RssSampler {
 public:
  explicit RssSampler(const WorkerWatch& watch) : watch_(watch), thread_([this] { loop(); }) {}
  ~RssSampler() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  void begin() {
    std::lock_guard lock(mutex_);
    peak_kb_ = 0;
    active_ = true;
    wake_.notify_all();
  }
  std::uint64_t end() {
    std::lock_guard lock(mutex_);
    active_ = false;
    return peak_kb_;
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      if (!active_) {
        wake_.wait(lock, [&] { return stop_ || active_; });
        continue;
      }
      lock.unlock();
      const int pid = watch_.running_pid();
      const std::uint64_t kb = pid ? tree_kb(pid, "VmRSS") : 0;
      lock.lock();
      peak_kb_ = std::max(peak_kb_, kb);
      // A sampling period, not synchronisation: how often RSS is read.
      wake_.wait_for(lock, 5ms, [&] { return stop_ || !active_; });
    }
  }

  const WorkerWatch& watch_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool active_ = false;
  std::uint64_t peak_kb_ = 0;
  std::thread thread_;
};

bool allowed(corral::FailureCode code) {
  using corral::FailureCode;
  return code == FailureCode::compile_error || code == FailureCode::guest_error ||
         code == FailureCode::timeout || code == FailureCode::memory_limit ||
         code == FailureCode::unserializable_value;
}

std::string describe(const corral::pool::Outcome& o) {
  if (o.ok()) {
    std::string v = o.execution().value();
    if (v.size() > 120) v = v.substr(0, 120) + "... (" + std::to_string(v.size()) + " bytes)";
    return "ok " + v;
  }
  std::string m = o.failure().message;
  if (m.size() > 160) m = m.substr(0, 160) + "...";
  return std::string(corral::to_string(o.failure().code)) + ": " + m;
}

struct Totals {
  std::uint64_t runs = 0;
  std::uint64_t violations = 0;
  std::map<std::string, std::uint64_t> outcomes;
  std::map<std::string, std::uint64_t> families;
  std::uint64_t worker_peak_kb = 0;
  double slowest = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const Config config = parse_args(argc, argv);

  corral::pool::Options options;
  options.worker_command = {config.worker, "worker"};
  options.max_workers = 1;
  options.grace = std::chrono::milliseconds(std::llround(config.grace * 1000));
  // The pool's own retirement bound must sit under ours, so that a worker
  // that grew is replaced rather than measured again.
  options.worker_memory_bound = (config.worker_rss_mb << 20) / 2;
  corral::pool::WorkerPool pool(options);
  WorkerWatch watch;
  watch.attach(pool);
  RssSampler sampler(watch);

  auto request = [&](std::string code) {
    corral::pool::Request r;
    r.code = std::move(code);
    r.limits.timeout = std::chrono::milliseconds(std::llround(config.timeout * 1000));
    r.limits.memory_limit = config.memory_limit_mb << 20;
    r.limits.stdout_limit = 64 << 10;
    r.limits.stderr_limit = 64 << 10;
    // eval and Function from strings are refused in the hermetic profile;
    // the fuzzer wants them.
    r.limits.profile = corral::sandbox::Profile::permissive;
    return r;
  };
  auto trivial = [&]() {
    corral::pool::Request r = request("async () => 1");
    r.limits.timeout = 10s;
    return pool.execute(std::move(r));
  };

  // Warm up: one worker started, the host's footprint after it.
  const corral::pool::Outcome warm = trivial();
  if (!warm.ok() || warm.execution().value() != "1") {
    std::cerr << "guest_js_fuzz: the first trivial run failed: " << describe(warm) << "\n";
    return 1;
  }
  const std::uint64_t host_start_kb = status_kb("self", "VmHWM");

  corral::hostile::JsGenerator generator(config.seed, config.include_known, config.only);
  Totals totals;
  const auto deadline = Clock::now() + std::chrono::duration<double>(config.seconds);
  const double bound = config.timeout + config.grace + config.slack;

  auto run_one = [&](const corral::hostile::Snippet& snippet, const std::string& where) {
    sampler.begin();
    const auto start = Clock::now();
    const corral::pool::Outcome outcome = pool.execute(request(snippet.code));
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    std::uint64_t worker_kb = sampler.end();
    if (const int pid = watch.running_pid()) {
      worker_kb = std::max(worker_kb, tree_kb(pid, "VmHWM"));
    }
    const std::uint64_t host_kb = status_kb("self", "VmHWM");
    const corral::pool::Outcome next = trivial();

    ++totals.runs;
    ++totals.families[snippet.family];
    ++totals.outcomes[outcome.ok() ? "ok" : std::string(corral::to_string(outcome.failure().code))];
    totals.worker_peak_kb = std::max(totals.worker_peak_kb, worker_kb);
    totals.slowest = std::max(totals.slowest, elapsed);

    std::vector<std::string> problems;
    if (!outcome.ok() && !allowed(outcome.failure().code)) {
      problems.push_back("failure code " + std::string(corral::to_string(outcome.failure().code)) +
                         " is not one a guest run may end in");
    }
    if (elapsed > bound) {
      problems.push_back("ran " + std::to_string(elapsed) + " s, past timeout + grace + slack (" +
                         std::to_string(bound) + " s)");
    }
    if (host_kb > host_start_kb + (config.host_rss_mb << 10)) {
      problems.push_back("host VmHWM " + std::to_string(host_kb >> 10) + " MiB, started at " +
                         std::to_string(host_start_kb >> 10) + " MiB");
    }
    if (worker_kb > (config.worker_rss_mb << 10)) {
      problems.push_back("worker RSS peaked at " + std::to_string(worker_kb >> 10) + " MiB");
    }
    if (!next.ok() || next.execution().value() != "1") {
      problems.push_back("the next trivial run failed: " + describe(next));
    }
    if (config.verbose || !problems.empty()) {
      std::cout << (problems.empty() ? "run " : "VIOLATION ") << where << " family "
                << snippet.family << ": " << describe(outcome) << " in " << elapsed << " s, worker "
                << (worker_kb >> 10) << " MiB, host " << (host_kb >> 10) << " MiB\n";
    }
    if (!problems.empty()) {
      ++totals.violations;
      for (const auto& p : problems) std::cout << "  - " << p << "\n";
      std::cout << "  reproducer:\n" << snippet.code << "\n" << std::endl;
    }
  };

  if (!config.code_file.empty()) {
    std::ifstream in(config.code_file);
    if (!in) usage(("cannot read " + config.code_file).c_str());
    std::stringstream s;
    s << in.rdbuf();
    run_one({"file", s.str()}, config.code_file);
  } else if (config.index) {
    run_one(generator.generate(*config.index),
            "--seed " + std::to_string(config.seed) + " --index " + std::to_string(*config.index));
  } else {
    for (std::uint64_t i = 0; Clock::now() < deadline; ++i) {
      if (config.max_runs && i >= config.max_runs) break;
      run_one(generator.generate(i),
              "--seed " + std::to_string(config.seed) + " --index " + std::to_string(i));
    }
  }
  pool.shutdown(5s);

  std::cout << "guest_js_fuzz: seed " << config.seed << ", " << totals.runs << " runs, "
            << totals.violations << " with violations; slowest " << totals.slowest
            << " s; worker peak " << (totals.worker_peak_kb >> 10) << " MiB; host VmHWM "
            << (status_kb("self", "VmHWM") >> 10) << " MiB (started " << (host_start_kb >> 10)
            << " MiB)\n  outcomes:";
  for (const auto& [k, v] : totals.outcomes) std::cout << " " << k << "=" << v;
  std::cout << "\n  families:";
  for (const auto& [k, v] : totals.families) std::cout << " " << k << "=" << v;
  std::cout << std::endl;
  return totals.violations == 0 ? 0 : 1;
}
