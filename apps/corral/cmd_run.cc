// `corral run FILE|-`: run a script in the sandbox (JavaScript; TypeScript for
// `.ts` files and `--language typescript`; Ruby for `.rb` files and
// `--language ruby`).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "core/envelope.hpp"
#include "core/json.hpp"
#include "core/units.hpp"
#include "corral/sandbox.hpp"
#include "engine.hpp"
#include "sandbox/engine.hpp"

namespace corral::app {
namespace {

struct RunFlags {
  std::string file;
  std::string timeout = "60s";
  std::string memory_limit = "64MiB";
  std::string stdout_limit = "1MiB";
  std::string stderr_limit = "1MiB";
  std::string profile = "hermetic";
  std::string language;  // empty: by the file's extension (.rb ruby, .ts typescript)
  bool json = false;
  bool code_mode = false;
};

void write_through(const Execution& execution) {
  std::fwrite(execution.stdout_text().data(), 1, execution.stdout_text().size(), stdout);
  std::fwrite(execution.stderr_text().data(), 1, execution.stderr_text().size(), stderr);
  if (execution.stdout_truncated())
    std::fputs("corral: stdout was truncated at its limit\n", stderr);
  if (execution.stderr_truncated())
    std::fputs("corral: stderr was truncated at its limit\n", stderr);
  if (execution.stdout_replaced() || execution.stderr_replaced())
    std::fputs("corral: output bytes that are not UTF-8 were replaced with U+FFFD\n", stderr);
}

int run_script(const RunFlags& flags) {
  sandbox::Options options;
  try {
    if (auto t = core::parse_duration(flags.timeout, "--timeout")) {
      options.timeout = *t;
    } else {
      options.timeout.reset();
    }
    options.memory_limit = core::parse_size(flags.memory_limit, "--memory-limit");
    options.stdout_limit = core::parse_size(flags.stdout_limit, "--stdout-limit");
    options.stderr_limit = core::parse_size(flags.stderr_limit, "--stderr-limit");
    options.profile = sandbox::parse_profile(flags.profile);
    options.language = language_of(flags.language, flags.file);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "corral: invalid_request: %s\n", e.what());
    return 2;
  }
  std::string source;
  try {
    source = read_source(flags.file);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "corral: invalid_request: %s\n", e.what());
    return 2;
  }

  try {
    // One run, then exit: V8's built-in snapshot starts sooner than a
    // snapshot of this process's own would repay.
    sandbox::skip_private_snapshot();
    sandbox::Sandbox sandbox(options);
    Execution execution = flags.code_mode ? sandbox.execute(source) : sandbox.eval(source);
    if (flags.json) {
      std::cout << core::envelope_text(execution) << '\n';
    } else {
      write_through(execution);
      std::cout << execution.value() << '\n';
    }
    return 0;
  } catch (const Error& e) {
    if (flags.json) {
      std::cout << core::envelope_text(e.to_failure()) << '\n';
    } else if (e.execution()) {
      write_through(*e.execution());
    }
    std::fprintf(stderr, "corral: %s: %s\n", std::string(to_string(e.code())).c_str(), e.what());
    return 1;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "corral: invalid_request: %s\n", e.what());
    return 2;
  }
}

}  // namespace

void add_run_command(CLI::App& app, Action& action) {
  auto flags = std::make_shared<RunFlags>();
  CLI::App* run = app.add_subcommand("run", engine_command_description("run"));
  run->add_option("file", flags->file, "Script to run, or - to read it from stdin")
      ->required()
      ->type_name("FILE");
  run->add_option("--timeout", flags->timeout, "Wall-clock limit per run (e.g. 5s, 250ms, none)")
      ->type_name("DURATION")
      ->capture_default_str();
  run->add_option("--memory-limit", flags->memory_limit,
                  "Heap + ArrayBuffer limit (e.g. 64MiB, none)")
      ->type_name("SIZE")
      ->capture_default_str();
  run->add_option("--stdout-limit", flags->stdout_limit, "Bytes of stdout kept (or none)")
      ->type_name("SIZE")
      ->capture_default_str();
  run->add_option("--stderr-limit", flags->stderr_limit, "Bytes of stderr kept (or none)")
      ->type_name("SIZE")
      ->capture_default_str();
  run->add_option("--profile", flags->profile,
                  "hermetic (frozen clock, fixed random) or permissive")
      ->type_name("hermetic|permissive")
      ->capture_default_str();
  run->add_option("--language", flags->language,
                  "javascript, typescript or ruby (default: by the extension: .rb ruby, .ts "
                  "typescript, else javascript)")
      ->type_name("javascript|typescript|ruby");
  run->add_flag("--json", flags->json,
                "Print the result envelope (the Execution or the failure) as JSON");
  run->add_flag("--code-mode", flags->code_mode,
                "Accept code-mode shapes (async () => {...}, a function body) and await them");
  run->callback([&action, flags] { action = [flags] { return run_script(*flags); }; });
}

}  // namespace corral::app
