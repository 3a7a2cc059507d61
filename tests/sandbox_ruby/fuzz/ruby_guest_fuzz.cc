// tests/sandbox_ruby/fuzz/ruby_guest_fuzz.cc: random hostile method calls on
// Ruby's core classes, in batches, through one in-process Ruby Sandbox.
//
//   ruby_guest_fuzz --seed 1 --seed 2 --seconds 30 [--batch 30] [--findings DIR]
//   ruby_guest_fuzz [--findings DIR] --sweep
//   ruby_guest_fuzz --replay FILE.rb
//
// Asserts that every batch ends in a success or a typed failure of the
// guest's own making (guest_error, timeout, memory_limit, ...), never one
// that says the helper process died or broke its protocol (internal,
// connection_broken, unavailable); that the next run after any failure
// succeeds; and that the host holds as many descriptors at the end as after
// its first run. A batch that crashed is narrowed to the one statement that
// crashes alone (when there is one) and written to DIR as a .rb file. Exits
// 1 when anything crashed, 0 otherwise; prints batches, statements,
// outcomes and the host's peak RSS.
#include <dirent.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "corral/sandbox.hpp"
#include "sandbox_ruby/fuzz/ruby_generator.hpp"

namespace {

using corral::FailureCode;
using corral::sandbox::Language;
using corral::sandbox::Options;
using corral::sandbox::Sandbox;
using Clock = std::chrono::steady_clock;

int open_fds() {
  int n = 0;
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return -1;
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++n;
  }
  ::closedir(dir);
  return n - 1;  // the directory's own descriptor
}

std::string status_field(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field + ":", 0) == 0) return line.substr(field.size() + 1);
  }
  return "?";
}

// What a run ended in: "ok" or the failure code's wire name.
struct Outcome {
  std::string code = "ok";
  std::string message;
  bool crashed() const {
    return code == "internal" || code == "connection_broken" || code == "unavailable";
  }
};

Outcome run(Sandbox& sandbox, const std::string& code) {
  Outcome outcome;
  try {
    sandbox.eval(code);
  } catch (const corral::Error& e) {
    outcome.code = std::string(corral::to_string(e.code()));
    outcome.message = e.what();
  } catch (const std::exception& e) {
    outcome.code = "exception";
    outcome.message = e.what();
  }
  return outcome;
}

std::string program(const std::vector<std::string>& statements) {
  std::string code = corral::sandbox::fuzz::kRubyFuzzPrelude;
  for (const std::string& s : statements) code += s + "\n";
  return code + ":done\n";
}

Options fuzz_options() {
  Options options;
  options.language = Language::ruby;
  options.timeout = std::chrono::seconds(3);
  options.memory_limit = std::uint64_t{64} << 20;
  options.stdout_limit = 4096;
  options.stderr_limit = 4096;
  return options;
}

struct Stats {
  std::size_t batches = 0;
  std::size_t statements = 0;
  std::size_t crashes = 0;
  std::size_t unhealthy = 0;
  std::map<std::string, std::size_t> outcomes;
};

// The next run after anything must succeed.
bool healthy(Sandbox& sandbox) {
  const Outcome after = run(sandbox, "1 + 1");
  if (after.code == "ok") return true;
  std::cout << "UNHEALTHY: the run after failed with " << after.code << ": " << after.message
            << "\n";
  return false;
}

void record(const std::string& dir, const std::string& name, const std::string& code,
            const Outcome& outcome) {
  std::cout << "CRASH " << name << ": " << outcome.code << ": " << outcome.message << "\n";
  if (dir.empty()) return;
  std::ofstream file(dir + "/" + name + ".rb");
  file << "# " << outcome.code << ": " << outcome.message << "\n" << code;
}

void fuzz_seed(Sandbox& sandbox, std::uint64_t seed, Clock::time_point until, std::size_t size,
               const std::string& findings, Stats& stats) {
  corral::sandbox::fuzz::RubyGenerator generator(seed);
  for (std::size_t index = 0; Clock::now() < until; ++index) {
    const std::vector<std::string> statements = generator.batch(size);
    const Outcome outcome = run(sandbox, program(statements));
    ++stats.batches;
    stats.statements += statements.size();
    ++stats.outcomes[outcome.code];
    if (outcome.code == "ok") continue;
    if (!healthy(sandbox)) ++stats.unhealthy;
    if (!outcome.crashed()) continue;
    ++stats.crashes;
    const std::string name = "seed" + std::to_string(seed) + "-batch" + std::to_string(index);
    // Narrow it down: the first statement that crashes on its own.
    bool narrowed = false;
    for (const std::string& statement : statements) {
      const Outcome alone = run(sandbox, program({statement}));
      if (!alone.crashed()) continue;
      if (!healthy(sandbox)) ++stats.unhealthy;
      record(findings, name, program({statement}), alone);
      std::cout << "  statement: " << statement << "\n";
      narrowed = true;
      break;
    }
    if (!narrowed) record(findings, name, program(statements), outcome);
  }
}

// Arguments every method of the sweep is called with, one set at a time.
constexpr const char* kSweepArgs[] = {
    "",         "nil",        "0",        "-1",
    "2**64",    "-2**63",     "\"s\"",    "[]",
    "{}",       "Object",     ":a",       "Float::NAN",
    "nil, nil", "1, 1",       "\"s\", 1", "proc { |*a| a }",
    "1, 2, 3",  "Object.new",
};

// Every method of every core class and module, called on the class itself
// and on an allocate()d instance, with each argument set, with and without
// a block. Deterministic; the exhaustive half of the hunt.
int sweep(const std::string& findings) {
  Sandbox sandbox(fuzz_options());
  const std::string listing =
      sandbox.eval(std::string(corral::sandbox::fuzz::kRubyFuzzPrelude) + "__fz_mods.size").value();
  const int modules = std::stoi(listing);
  const int fds_before = open_fds();
  Stats stats;
  for (int i = 0; i < modules; ++i) {
    for (const char* target :
         {"m", "(m.allocate rescue nil)", "(Class.new(m).allocate rescue nil)"}) {
      // Methods of the receiver, by index, so that the statement stands alone.
      const std::string count_code = std::string(corral::sandbox::fuzz::kRubyFuzzPrelude) +
                                     "m = __fz_mod(" + std::to_string(i) + "); r = " + target +
                                     "; (r.methods + r.private_methods).uniq.size rescue 0";
      int methods = 0;
      try {
        methods = std::stoi(sandbox.eval(count_code).value());
      } catch (...) {
        continue;
      }
      for (int j = 0; j < methods; ++j) {
        std::vector<std::string> statements;
        for (const char* args : kSweepArgs) {
          for (const char* block : {"", " { |*a| a }"}) {
            statements.push_back("begin; m = __fz_mod(" + std::to_string(i) + "); r = " + target +
                                 "; r.__send__(__fz_m(r, " + std::to_string(j) + ")" +
                                 (args[0] ? std::string(", ") + args : "") + ")" + block +
                                 "; rescue Exception; end");
          }
        }
        const Outcome outcome = run(sandbox, program(statements));
        ++stats.batches;
        stats.statements += statements.size();
        ++stats.outcomes[outcome.code];
        if (outcome.code == "ok") continue;
        if (!healthy(sandbox)) ++stats.unhealthy;
        if (!outcome.crashed()) continue;
        ++stats.crashes;
        const std::string name = "sweep-" + std::to_string(i) + "-" + std::to_string(j);
        bool narrowed = false;
        for (const std::string& statement : statements) {
          const Outcome alone = run(sandbox, program({statement}));
          if (!alone.crashed()) continue;
          record(findings, name, program({statement}), alone);
          std::cout << "  statement: " << statement << "\n";
          narrowed = true;
          break;
        }
        if (!narrowed) record(findings, name, program(statements), outcome);
      }
    }
  }
  const int fds_after = open_fds();
  std::cout << "sweep: modules " << modules << ", batches " << stats.batches << ", statements "
            << stats.statements << ", crashes " << stats.crashes << ", unhealthy "
            << stats.unhealthy << ", fds " << fds_before << " -> " << fds_after << "\n";
  return stats.crashes == 0 && stats.unhealthy == 0 && fds_before == fds_after ? 0 : 1;
}

int replay(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  Sandbox sandbox(fuzz_options());
  const Outcome outcome = run(sandbox, text.str());
  std::cout << outcome.code << ": " << outcome.message << "\n";
  return outcome.crashed() ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::uint64_t> seeds;
  double seconds = 10;
  std::size_t batch = 30;
  std::string findings;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* next = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--seed" && next) {
      seeds.push_back(std::strtoull(next, nullptr, 10));
      ++i;
    } else if (arg == "--seconds" && next) {
      seconds = std::strtod(next, nullptr);
      ++i;
    } else if (arg == "--batch" && next) {
      batch = std::strtoul(next, nullptr, 10);
      ++i;
    } else if (arg == "--findings" && next) {
      findings = next;
      ++i;
    } else if (arg == "--sweep") {
      return sweep(findings);
    } else if (arg == "--replay" && next) {
      return replay(next);
    } else {
      std::cerr << "usage: ruby_guest_fuzz [--seed N]... [--seconds S] [--batch N] "
                   "[--findings DIR] | [--findings DIR] --sweep | --replay FILE.rb\n";
      return 2;
    }
  }
  if (seeds.empty()) seeds.push_back(1);
  if (batch == 0) batch = 1;

  Sandbox sandbox(fuzz_options());
  if (!healthy(sandbox)) return 1;
  const int fds_before = open_fds();
  Stats stats;
  const auto start = Clock::now();
  const auto per_seed = std::chrono::duration<double>(seconds / static_cast<double>(seeds.size()));
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    const auto until =
        start + std::chrono::duration_cast<Clock::duration>(per_seed * static_cast<double>(i + 1));
    fuzz_seed(sandbox, seeds[i], until, batch, findings, stats);
  }
  const bool last_ok = healthy(sandbox);
  const int fds_after = open_fds();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();

  std::cout << "batches " << stats.batches << ", statements " << stats.statements << ", " << elapsed
            << " s; outcomes:";
  for (const auto& [code, n] : stats.outcomes) std::cout << " " << code << "=" << n;
  std::cout << "\ncrashes " << stats.crashes << ", unhealthy after " << stats.unhealthy << ", fds "
            << fds_before << " -> " << fds_after << ", host VmHWM" << status_field("VmHWM") << "\n";
  const bool ok = stats.crashes == 0 && stats.unhealthy == 0 && last_ok && fds_before == fds_after;
  return ok ? 0 : 1;
}
